"""The Triton-style launch syntax: grid forms, positional and keyword arguments, Const values, caching."""

import numpy as np
import pytest

import tessera

add = tessera.kernels.vector_add


def _inputs(n=300):
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 0.5, dtype=np.float32)
    return x, y, np.zeros(n, dtype=np.float32)


@pytest.mark.parametrize("grid", [(3,), 3, [3], (3, 1, 1), np.int64(3), (np.int32(3),)],
                         ids=["tuple", "int", "list", "3d", "numpy-int", "numpy-int-in-tuple"])
def test_grid_forms(grid):
    x, y, out = _inputs()
    add[grid](x, y, out, 300, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)


def test_grid_callable_gets_the_meta_parameters():
    x, y, out = _inputs()
    seen = []

    def grid(meta):
        seen.append(dict(meta))
        return (tessera.cdiv(300, meta["BLOCK"]),)

    add[grid](x, y, out, 300, BLOCK=64, num_warps=8)
    assert seen == [{"BLOCK": 64, "num_warps": 8, "num_stages": 3}]
    np.testing.assert_array_equal(out, x + y)


def test_grid_callable_may_return_an_int():
    x, y, out = _inputs()
    add[lambda meta: tessera.cdiv(300, meta["BLOCK"])](x, y, out, 300, BLOCK=32)
    np.testing.assert_array_equal(out, x + y)


def test_too_small_grid_leaves_the_tail_untouched():
    x, y, out = _inputs()
    add[(1,)](x, y, out, 300, BLOCK=128)
    np.testing.assert_array_equal(out[:128], x[:128] + y[:128])
    np.testing.assert_array_equal(out[128:], 0)


def test_keyword_and_mixed_arguments():
    x, y, out = _inputs()
    add[3](y=y, x=x, n=300, out=out, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)
    out[:] = 0
    add[3](x, y, n=300, out=out, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)


def test_scalar_arguments_accept_numpy_scalars():
    rows, cols = 2, 40
    x = np.ones((rows, cols), dtype=np.float32)
    y, mean, rstd = np.zeros_like(x), np.zeros(rows, np.float32), np.zeros(rows, np.float32)
    w, b = np.ones(cols, np.float32), np.zeros(cols, np.float32)
    tessera.kernels.layernorm_fwd[rows](x, y, w, b, mean, rstd, np.int64(cols), np.int32(cols), np.float32(1e-5),
                                        BLOCK=64)
    np.testing.assert_allclose(mean, 1.0)
    np.testing.assert_allclose(rstd, 1 / np.sqrt(1e-5), rtol=1e-5)


def test_float_parameter_takes_a_python_int():
    rows, cols = 1, 8
    x = np.arange(cols, dtype=np.float32)
    y, mean, rstd = np.zeros_like(x), np.zeros(rows, np.float32), np.zeros(rows, np.float32)
    w, b = np.ones(cols, np.float32), np.zeros(cols, np.float32)
    tessera.kernels.layernorm_fwd[1](x, y, w, b, mean, rstd, cols, cols, 1, BLOCK=8)  # eps = 1
    np.testing.assert_allclose(rstd, 1 / np.sqrt(x.var() + 1), rtol=1e-6)


def test_const_values_specialize_and_are_cached():
    x, y, out = _inputs()
    add._specializations.clear()
    add[3](x, y, out, 300, BLOCK=128)
    add[3](x, y, out, 300, BLOCK=128)
    add[5](x, y, out, 300, BLOCK=64)
    assert len(add._specializations) == 2
    spec = add.specialization(BLOCK=128)
    assert spec is add.specialization(BLOCK=128)
    assert "tile<128xi32>" in spec.ir and "tile<64xi32>" in add.specialization(BLOCK=64).ir
    assert len(add._specializations) == 2  # specialization() reused the launches' traces


def test_specialization_runs_and_its_module_is_a_copy():
    x, y, out = _inputs(128)
    spec = add.specialization(BLOCK=128)
    spec.run((1,), [x, y, out, 128])
    np.testing.assert_array_equal(out, x + y)
    text_before = spec.ir
    module = spec.module()
    module.run_passes(["coalesce", "assign-layouts"])
    assert str(module) != text_before  # layouts were added to the copy ...
    assert spec.ir == text_before      # ... not to the cached specialization
    out[:] = 0
    spec.run(1, [x, y, out, 128])
    np.testing.assert_array_equal(out, x + y)


def test_trace_gives_the_ir_for_the_constants():
    module = add.trace(BLOCK=64)
    text = str(module)
    assert text.startswith("func @vector_add(%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32)")
    assert "attributes {BLOCK = 64}" in text
    assert "arange {end = 64, start = 0} : tile<64xi32>" in text
    assert [f.name for f in module.functions] == ["vector_add"]
    assert module.print(locations=True).count("vector_add.h") > 0  # ops carry the kernel header's lines


def test_kernel_introspection():
    assert add.name == "vector_add"
    assert add.arg_names == ["x", "y", "out", "n"]
    assert add.const_names == ["BLOCK"]
    assert add.params[0] == ("x", "pointer", "ptr<f32>")
    assert add.params[3] == ("n", "scalar", "i32")
    assert add.params[4][:2] == ("BLOCK", "constant")
    assert repr(add) == "<tessera kernel vector_add(x: ptr<f32>, y: ptr<f32>, out: ptr<f32>, n: i32, BLOCK=<const>)>"
    bound = {n for n in dir(tessera.kernels) if not n.startswith("_")}
    assert {"vector_add", "softmax", "layernorm_fwd", "matmul"} <= bound
    assert all(isinstance(getattr(tessera.kernels, n), tessera.Kernel) for n in bound)


def test_num_warps_is_accepted_for_every_power_of_two():
    x, y, out = _inputs()
    for w in (1, 2, 4, 8, 16, 32):
        out[:] = 0
        add[3](x, y, out, 300, BLOCK=128, num_warps=w)
        np.testing.assert_array_equal(out, x + y)


def test_launch_errors_from_the_interpreter_are_tessera_errors():
    # n larger than the arrays: the bounds-checked interpreter refuses instead of reading past them.
    x, y, out = _inputs(100)
    with pytest.raises(tessera.Error, match=r"vector_add\.h:\d+:\d+: error: 'load': out-of-bounds access"):
        add[1](x, y, out, 128, BLOCK=128)
    assert issubclass(tessera.Error, RuntimeError)
