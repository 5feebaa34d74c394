"""AMD GPUs from Python without one: kernel.compile(target="amdgpu") gives HSA code objects, and launches with
backend="hip" check their arguments and report a missing HIP runtime by name. No machine this runs on has an AMD
GPU, so no HIP launch is executed here."""

import numpy as np
import pytest

import tessera

K = tessera.kernels
HIP_PRESENT = tessera._C.hip_available()


def test_compile_for_amdgpu_gives_a_code_object():
    k = K.vector_add.compile(target="amdgpu", arch="gfx942", BLOCK=1024)
    assert (k.target, k.arch, k.format, k.warp_size) == ("amdgpu", "gfx942", "hsaco", 64)
    assert k.binary[:4] == b"\x7fELF"
    assert "amdgpu_kernel void @vector_add" in k.llvm_ir
    with pytest.raises(AttributeError, match="has no PTX"):
        k.ptx


@pytest.mark.skipif(HIP_PRESENT, reason="checks the message given where HIP is missing")
def test_backend_hip_reports_the_missing_runtime_and_leaves_arrays_alone():
    reason = tessera._C.hip_unavailable_reason()
    assert reason
    x, out = np.ones(64, np.float32), np.full(64, 7, np.float32)
    with pytest.raises(tessera.Error, match=r"cannot launch kernel 'vector_add': .*HIP") as e:
        K.vector_add[1](x, x, out, 64, BLOCK=64, backend="hip")
    assert reason in str(e.value)
    np.testing.assert_array_equal(out, 7.0)


def test_backend_hip_checks_arguments_before_touching_a_device():
    x = np.ones(64, np.float32)
    with pytest.raises(TypeError, match=r"argument 'y' must be a numpy array .* got list"):
        K.vector_add[1](x, [1.0] * 64, np.zeros_like(x), 64, BLOCK=64, backend="hip")
    with pytest.raises(TypeError, match=r"argument 'x' must be a float32 array"):
        K.vector_add[1](x.astype(np.float16), x, np.zeros_like(x), 64, BLOCK=64, backend="hip")
    with pytest.raises(TypeError, match="takes 4 runtime arguments"):
        K.vector_add._jit_kernel().launch_staged(1, [x, x], {"BLOCK": 64}, 4, "amdgpu", "", True)


def test_unknown_backend_lists_hip():
    x = np.ones(64, np.float32)
    with pytest.raises(ValueError, match="interpreter, eager, cuda, hip"):
        K.vector_add[1](x, x, np.zeros_like(x), 64, BLOCK=64, backend="rocm")
