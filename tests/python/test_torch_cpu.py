"""torch CPU tensors launch through DLPack on the host backends (interpreter, eager), with the same checks as numpy
arrays: dtype, contiguity, and memory that is not the host's."""

import numpy as np
import pytest

import tessera

torch = pytest.importorskip("torch")

HOST_BACKENDS = ["interpreter", "eager"]
N = 300  # not a multiple of the block: the last program is masked


def _add(x, y, out, n=N, backend=None):
    kwargs = {} if backend is None else {"backend": backend}
    tessera.kernels.vector_add[(tessera.cdiv(n, 128),)](x, y, out, n, BLOCK=128, **kwargs)


@pytest.mark.parametrize("backend", [None] + HOST_BACKENDS)
def test_vector_add_writes_into_a_cpu_tensor(backend):
    x, y = torch.randn(N), torch.randn(N)
    out = torch.full((N,), float("nan"))
    _add(x, y, out, backend=backend)  # None: CPU tensors are not GPU arrays, so the interpreter runs
    assert torch.equal(out, x + y)


def test_tensors_with_a_storage_offset_and_mixed_with_numpy():
    base = torch.arange(N + 8, dtype=torch.float32)
    x = base[8:]  # contiguous, 32 bytes into its storage
    y = np.ones(N, np.float32)
    out = torch.zeros(N)
    _add(x, y, out)
    assert torch.equal(out, x + 1)


def test_softmax_over_rows_of_a_2d_tensor():
    rows, cols = 4, 100
    x = torch.randn(rows, cols) * 3
    out = torch.empty_like(x)
    tessera.kernels.softmax[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=128)
    torch.testing.assert_close(out, torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-6)


def test_f16_matmul_inputs():
    m, n, k = 32, 32, 16
    a, b = torch.randn(m, k).half(), torch.randn(k, n).half()
    c = torch.zeros(m, n)
    grid = (tessera.cdiv(m, 16) * tessera.cdiv(n, 16),)
    tessera.kernels.matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                                 c.stride(1), BM=16, BN=16, BK=16, GROUP_M=1)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_a_tensor_of_the_wrong_dtype_is_a_type_error(backend):
    x = torch.randn(N, dtype=torch.float64)
    with pytest.raises(TypeError, match=r"argument 'x' must be a float32 tensor \(parameter type ptr<f32>\), "
                                        r"got float64"):
        _add(x, torch.randn(N), torch.zeros(N), backend=backend)
    with pytest.raises(TypeError, match="argument 'out' must be a float32 tensor .*got int32"):
        _add(torch.randn(N), torch.randn(N), torch.zeros(N, dtype=torch.int32), backend=backend)


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_a_strided_tensor_is_a_value_error(backend):
    strided = torch.randn(2 * N)[::2]
    with pytest.raises(ValueError, match=r"argument 'y' must be C-contiguous \(e.g. tensor.contiguous\(\)\)"):
        _add(torch.randn(N), strided, torch.zeros(N), backend=backend)
    transposed = torch.randn(N, 4).t()
    with pytest.raises(ValueError, match="argument 'in' must be C-contiguous"):
        tessera.kernels.softmax[(4,)](torch.zeros(4, N), transposed, N, N, N, BLOCK=512, backend=backend)
    _add(torch.randn(N), strided.contiguous(), torch.zeros(N), backend=backend)  # the fix the message names


class FakeDevice:
    """A DLPack producer that says its memory is on some device (and must never be read)."""

    def __init__(self, device_type):
        self.device_type = device_type

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None):
        raise AssertionError("the launch must refuse the device before exporting")


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_memory_off_the_host_is_a_type_error(backend):
    with pytest.raises(TypeError, match=r"argument 'x' is a GPU array \(DLPack device cuda:0\).*backend='cuda'"):
        _add(FakeDevice(2), torch.randn(N), torch.zeros(N), backend=backend)
    with pytest.raises(TypeError, match="argument 'out' is on DLPack device type 14, not in host memory"):
        _add(torch.randn(N), torch.randn(N), FakeDevice(14), backend=backend)


def test_a_tensor_that_cannot_be_exported_names_the_argument():
    x = torch.randn(N, requires_grad=True)  # torch refuses to export it (DLPack has no autograd)
    with pytest.raises(TypeError, match="argument 'x' could not be exported through DLPack: .*detach"):
        _add(x, torch.randn(N), torch.zeros(N))


def test_the_ir_interpreter_takes_tensors_too():
    module = tessera.kernels.vector_add.trace(BLOCK=128)
    x, y, out = torch.randn(N), torch.randn(N), torch.zeros(N)
    module.interpret((3,), [x, y, out, N])
    assert torch.equal(out, x + y)
