"""Argument validation: every mismatch is a clear Python exception, never a crash or a silent wrong result."""

import re

import numpy as np
import pytest
import torch

import tessera

add = tessera.kernels.vector_add
matmul = tessera.kernels.matmul


def _inputs(n=64):
    return np.ones(n, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)


@pytest.mark.parametrize("backend", ["interpreter", "eager"])
def test_wrong_dtype_names_the_argument_and_the_dtype(backend):
    x, y, out = _inputs()
    with pytest.raises(TypeError, match=r"argument 'y' must be a float32 array \(parameter type ptr<f32>\), "
                                        r"got dtype float64"):
        add[1](x, y.astype(np.float64), out, 64, BLOCK=64, backend=backend)


def test_f16_parameter_rejects_f32_arrays():
    a = np.zeros((16, 16), np.float32)
    b = np.zeros((16, 16), np.float16)
    c = np.zeros((16, 16), np.float32)
    with pytest.raises(TypeError, match="argument 'a' must be a float16 array"):
        matmul[1](a, b, c, 16, 16, 16, 16, 1, 16, 1, 16, 1, BM=16, BN=16, BK=16, GROUP_M=1)


def test_int_dtype_of_the_same_width_is_rejected():
    x, y, out = _inputs()
    with pytest.raises(TypeError, match="argument 'x' must be a float32 array.*got dtype int32"):
        add[1](x.view(np.int32), y, out, 64, BLOCK=64)


@pytest.mark.parametrize("backend", ["interpreter", "eager"])
def test_non_contiguous_array_is_a_value_error(backend):
    x, y, out = _inputs(128)
    with pytest.raises(ValueError, match="argument 'x' must be C-contiguous"):
        add[1](x[::2], y[:64], out[:64], 64, BLOCK=64, backend=backend)
    with pytest.raises(ValueError, match="argument 'out' must be C-contiguous"):
        add[1](x[:64], y[:64], np.zeros((8, 16), np.float32).T, 64, BLOCK=64, backend=backend)


def test_read_only_array_is_a_value_error():
    x, y, out = _inputs()
    out.flags.writeable = False
    with pytest.raises(ValueError, match="argument 'out' is read-only"):
        add[1](x, y, out, 64, BLOCK=64)


def test_non_array_for_a_pointer_is_a_type_error():
    _, y, out = _inputs()
    with pytest.raises(TypeError, match="argument 'x' must be a numpy array or a CPU tensor for ptr<f32>, got list"):
        add[1]([1.0] * 64, y, out, 64, BLOCK=64)


class FakeCudaArray:
    """Looks like a CuPy/torch GPU tensor to the launcher."""
    __cuda_array_interface__ = {"shape": (64,), "typestr": "<f4", "data": (0, False), "version": 3}


def test_gpu_array_on_the_interpreter_path_is_a_type_error():
    x, y, out = _inputs()
    with pytest.raises(TypeError, match="argument 'out' is a GPU array.*interpreter"):
        add[1](x, y, FakeCudaArray(), 64, BLOCK=64, backend="interpreter")


@pytest.mark.parametrize("bad, error, pattern", [
    (2.5, TypeError, "argument 'n' must be an int \\(i32\\), got float"),
    ("64", TypeError, "argument 'n' must be an int \\(i32\\), got str"),
    (None, TypeError, "argument 'n' must be an int \\(i32\\), got NoneType"),
    (np.zeros(1, np.int32), TypeError, "argument 'n' must be an int"),
    (2**31, ValueError, "argument 'n' = 2147483648 does not fit in i32"),
    (-2**31 - 1, ValueError, "does not fit in i32"),
    (2**70, ValueError, "does not fit in i32"),
])
def test_bad_scalar_arguments(bad, error, pattern):
    x, y, out = _inputs()
    with pytest.raises(error, match=pattern):
        add[1](x, y, out, bad, BLOCK=64)


def test_bad_float_argument():
    x = np.ones((1, 8), np.float32)
    y, mean, rstd = np.zeros_like(x), np.zeros(1, np.float32), np.zeros(1, np.float32)
    w, b = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"argument 'eps' must be a number \(f32\), got str"):
        tessera.kernels.layernorm_fwd[1](x, y, w, b, mean, rstd, 8, 8, "1e-5", BLOCK=8)


def test_missing_argument():
    x, y, out = _inputs()
    with pytest.raises(TypeError, match="kernel 'vector_add' is missing argument 'n'"):
        add[1](x, y, out, BLOCK=64)


def test_duplicate_argument():
    x, y, out = _inputs()
    with pytest.raises(TypeError, match="kernel 'vector_add' got multiple values for argument 'x'"):
        add[1](x, y, out, x=x, n=64, BLOCK=64)


def test_too_many_positional_arguments():
    x, y, out = _inputs()
    with pytest.raises(TypeError, match=r"kernel 'vector_add' takes 4 positional arguments \(x, y, out, n\), got 5"):
        add[1](x, y, out, 64, 64)


def test_extra_keyword_argument():
    x, y, out = _inputs()
    with pytest.raises(TypeError, match="unexpected keyword argument 'stream'"):
        add[1](x, y, out, 64, BLOCK=64, stream=0)


def test_unknown_const():
    x, y, out = _inputs()
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'BLOCK_SIZE' \(its Const parameters: BLOCK\)"):
        add[1](x, y, out, 64, BLOCK_SIZE=64)


def test_missing_const():
    x, y, out = _inputs()
    with pytest.raises(TypeError, match="needs Const parameter 'BLOCK' as a keyword argument"):
        add[1](x, y, out, 64)
    with pytest.raises(TypeError, match="needs Const parameter 'GROUP_M'"):
        matmul.trace(BM=16, BN=16, BK=16)


def test_const_of_the_wrong_type():
    x, y, out = _inputs()
    with pytest.raises(TypeError, match="Const parameter 'BLOCK' of kernel 'vector_add' must be an int, bool or float"):
        add[1](x, y, out, 64, BLOCK="64")


@pytest.mark.parametrize("grid, error, pattern", [
    ((), ValueError, "1 to 3 dimensions, got 0"),
    ((1, 1, 1, 1), ValueError, "1 to 3 dimensions, got 4"),
    ((0,), ValueError, r"grid dimension 0 must be in \[1, 2\^31 - 1\], got 0"),
    ((1, -2), ValueError, "grid dimension 1 must be in"),
    (2**31, ValueError, "grid dimension 0 must be in"),
    (0, ValueError, "got 0"),
    ((1.5,), TypeError, "grid dimensions must be ints, got float"),
    (None, TypeError, "the grid must be an int or a tuple of 1 to 3 ints, got NoneType"),
    ("1", TypeError, "got str"),
    (lambda meta: (0,), ValueError, "grid dimension 0 must be in"),
    (lambda meta: None, TypeError, "got NoneType"),
])
@pytest.mark.parametrize("backend", ["interpreter", "eager"])
def test_bad_grid(grid, error, pattern, backend):
    x, y, out = _inputs()
    with pytest.raises(error, match=pattern):
        add[grid](x, y, out, 64, BLOCK=64, backend=backend)


@pytest.mark.parametrize("num_warps", [0, 3, -4, 4.0, "4", None, 64])
def test_bad_num_warps(num_warps):
    x, y, out = _inputs()
    # The interpreter runs any number of warps, but is held to what every GPU backend takes (the JIT's own bound).
    with pytest.raises(ValueError, match="num_warps must be a power of two from 1 to 32"):
        add[1](x, y, out, 64, BLOCK=64, num_warps=num_warps)


def test_unknown_backend():
    x, y, out = _inputs()
    with pytest.raises(ValueError, match="unknown backend 'opencl'; available here: interpreter, eager, cuda"):
        add[1](x, y, out, 64, BLOCK=64, backend="opencl")


def test_nothing_is_written_when_validation_fails():
    x, y, out = _inputs()
    with pytest.raises(TypeError):
        add[1](x, y, out, "64", BLOCK=64)
    np.testing.assert_array_equal(out, 0)


@pytest.mark.parametrize("backend", ["interpreter", "eager"])
def test_dsl_misuse_is_a_tessera_error_at_the_kernel_header_line(backend):
    # arange needs a power-of-two length: BLOCK=100 is a misuse inside the kernel body.
    x, y, out = _inputs(100)
    with pytest.raises(tessera.Error) as info:
        add[1](x, y, out, 100, BLOCK=100, backend=backend)
    message = str(info.value)
    assert re.search(r"tessera/kernels/vector_add\.h:\d+", message), message
    assert "power of two" in message


# Found by tests/python/fuzz_boundary.py.
@pytest.mark.parametrize("backend", ["interpreter", "eager"])
def test_non_native_byte_order_is_rejected_not_misread(backend):
    x, y, out = _inputs(8)
    with pytest.raises(TypeError, match=r"argument 'x' must be a float32 array in native byte order, got dtype >f4"):
        add[1](x.astype(">f4"), y, out, 8, BLOCK=8, backend=backend)
    assert not out.any()


def test_masked_arrays_are_rejected():
    x, y, out = _inputs(8)
    with pytest.raises(ValueError, match="argument 'out' is a masked array"):
        add[1](x, y, np.ma.masked_array(out, mask=[True] * 8), 8, BLOCK=8)


@pytest.mark.parametrize("block, message", [
    (2**32 + 8, r"Const parameter 'BLOCK' is i32: 4294967304 is out of its range"),
    (8.5, r"Const parameter 'BLOCK' is i32: got the float 8.5"),
    (np.float32(8), r"Const parameter 'BLOCK' is i32: got the float 8"),
])
def test_const_values_an_int_const_cannot_hold_are_errors(block, message):
    x, y, out = _inputs(8)
    with pytest.raises(tessera.Error, match=message):
        add[1](x, y, out, 8, BLOCK=block)
    with pytest.raises(tessera.Error, match=message):
        add.compile(BLOCK=block)
    assert not out.any()


@pytest.mark.parametrize("call, error, message", [
    (lambda x, y, out: add[1](x, y, out, 8, BLOCK=np.array([8])), TypeError,
     r"Const parameter 'BLOCK' of kernel 'vector_add' must be an int, got ndarray"),
    (lambda x, y, out: add[1](x, y, out, torch.tensor(2.5), BLOCK=8), TypeError,
     r"argument 'n' must be an int, got Tensor"),
    (lambda x, y, out: add[np.array([1.0])](x, y, out, 8, BLOCK=8), TypeError,
     r"grid dimensions must be ints, got float64"),
    (lambda x, y, out: add[np.array(1.0)](x, y, out, 8, BLOCK=8), TypeError,
     r"the grid must be an int or a tuple of 1 to 3 ints, got ndarray"),
    (lambda x, y, out: tessera.kernels.layernorm_fwd[1](x, out, x, x, x, x, 8, 8, 10**400, BLOCK=8), ValueError,
     r"argument 'eps' = 1000.* does not fit in a double"),
])
def test_values_that_refuse_index_or_float_name_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call(*_inputs(8))


def test_a_numpy_array_of_grid_sizes_is_a_grid():
    x, y, out = _inputs(8)
    add[np.array([2])](x, y, out, 8, BLOCK=4)
    np.testing.assert_array_equal(out, 2.0)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"specialization": {"n": 2**70}}, ValueError, r"specialization of 'n' must be 16, 8, 1 or None, got 1180591620717411303424"),
    ({"specialization": [1]}, TypeError, r"specialization must be a dict"),
    ({"target": 5}, TypeError, r"target must be a str"),
    ({"target": ""}, ValueError, r"target must be 'nvptx' or 'amdgpu' \(None for nvptx\), got ''"),
    ({"arch": 90}, TypeError, r"arch must be a str"),
])
def test_compile_options_of_the_wrong_kind_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        add.compile(BLOCK=8, **kwargs)
