"""The tile IR from Python: types, parsing (with located errors), printing, building, passes, interpreting."""

import numpy as np
import pytest

import tessera
from tessera import ir

SCALE = """\
func @scale(%x: ptr<f32>, %out: ptr<f32>, %n: i32, %alpha: f32) {
  %pid = program_id {axis = 0} : i32
  %c16 = constant {value = 16} : i32
  %base = mul %pid, %c16 : i32
  %r = arange {end = 16, start = 0} : tile<16xi32>
  %offs = add %r, %base_t : tile<16xi32>
  return
}
"""

GOOD = """\
func @scale(%x: ptr<f32>, %out: ptr<f32>, %n: i32, %alpha: f32) {
  %pid = program_id {axis = 0} : i32
  %c16 = constant {value = 16} : i32
  %base = mul %pid, %c16 : i32
  %r = arange {end = 16, start = 0} : tile<16xi32>
  %base_t = splat %base : tile<16xi32>
  %offs = add %r, %base_t : tile<16xi32>
  %n_t = splat %n : tile<16xi32>
  %mask = cmp %offs, %n_t {pred = "lt"} : tile<16xi1>
  %xs = splat %x : tile<16xptr<f32>>
  %xp = addptr %xs, %offs : tile<16xptr<f32>>
  %v = load %xp, %mask : tile<16xf32>
  %a = splat %alpha : tile<16xf32>
  %s = mul %v, %a : tile<16xf32>
  %os = splat %out : tile<16xptr<f32>>
  %op = addptr %os, %offs : tile<16xptr<f32>>
  store %op, %s, %mask
  return
}
"""


def test_parse_print_round_trip():
    module = ir.parse(GOOD)
    assert str(module) == GOOD
    assert str(ir.parse(str(module))) == GOOD
    assert [f.name for f in module.functions] == ["scale"]
    module.verify()


def test_parse_error_has_line_and_column():
    with pytest.raises(tessera.Error, match=r"kernel\.tir:6:\d+: .*base_t"):
        ir.parse(SCALE, "kernel.tir")


def test_parse_error_on_garbage_names_the_position():
    with pytest.raises(tessera.Error, match=r"<python>:1:1"):
        ir.parse("fnuc @f() {\n  return\n}\n")


def test_interpret_on_numpy_arrays():
    module = ir.parse(GOOD)
    n = 40  # 3 programs of 16, the last one partly masked
    x = np.arange(n, dtype=np.float32)
    out = np.full(n, -1.0, dtype=np.float32)
    module.interpret((3,), [x, out, n, 2.5])
    np.testing.assert_array_equal(out, x * 2.5)


def test_interpret_validates_arguments_by_their_ir_names():
    module = ir.parse(GOOD)
    x = np.zeros(16, np.float32)
    with pytest.raises(TypeError, match="argument 'out' must be a float32 array"):
        module.interpret((1,), [x, np.zeros(16, np.int32), 16, 1.0])
    with pytest.raises(TypeError, match="expected 4 arguments, got 3"):
        module.interpret((1,), [x, x, 16])
    with pytest.raises(ValueError, match="no function named 'nope'"):
        module.interpret((1,), [x, x, 16, 1.0], function="nope")


def test_interpret_out_of_bounds_is_a_tessera_error():
    module = ir.parse(GOOD)
    x = np.zeros(8, np.float32)
    with pytest.raises(tessera.Error, match="load"):
        module.interpret((1,), [x, np.zeros(16, np.float32), 16, 1.0])  # x has 8 elements, n says 16


def test_types():
    t = ir.Type("tile<128x64xf16>")
    assert t.shape == [128, 64]
    assert str(t.element) == "f16"
    assert t.is_tile() and not t.is_ptr()
    assert ir.Type("ptr<f32>").is_ptr()
    assert ir.Type("i32").shape == []
    assert t == ir.Type("tile<128x64xf16>") and t != ir.Type("tile<128x64xf32>")
    assert len({t, ir.Type("tile<128x64xf16>"), ir.Type("f32")}) == 2
    assert repr(t) == "Type('tile<128x64xf16>')"


def test_bad_type_is_a_tessera_error():
    with pytest.raises(tessera.Error):
        ir.Type("tile<3xf33>")


def build_axpy():
    """out[i] = alpha * x[i] + out[i] for 32 elements, built op by op."""
    b = ir.Builder()
    T = ir.Type
    x, out, alpha = b.function("axpy", [T("ptr<f32>"), T("ptr<f32>"), T("f32")])
    offs = b.op("arange", [], [T("tile<32xi32>")], {"start": 0, "end": 32}).result()
    xp = b.op("addptr", [b.op("splat", [x], [T("tile<32xptr<f32>>")]).result(), offs], [T("tile<32xptr<f32>>")])
    op_ = b.op("addptr", [b.op("splat", [out], [T("tile<32xptr<f32>>")]).result(), offs], [T("tile<32xptr<f32>>")])
    xv = b.op("load", [xp.result()], [T("tile<32xf32>")]).result()
    ov = b.op("load", [op_.result()], [T("tile<32xf32>")]).result()
    a = b.op("splat", [alpha], [T("tile<32xf32>")]).result()
    r = b.op("fma", [a, xv, ov], [T("tile<32xf32>")]).result()
    b.op("store", [op_.result(), r])
    b.op("return")
    return b.finish()


def test_builder_builds_prints_and_runs():
    module = build_axpy()
    text = str(module)
    assert text.startswith("func @axpy(%0: ptr<f32>, %1: ptr<f32>, %2: f32)") or text.startswith("func @axpy(")
    assert "fma" in text
    assert str(ir.parse(text)) == text  # what the builder made prints in the parseable format
    x = np.arange(32, dtype=np.float32)
    out = np.ones(32, dtype=np.float32)
    module.interpret(1, [x, out, 3.0])
    np.testing.assert_array_equal(out, 3 * x + 1)


def test_builder_regions():
    """A for loop summing 0..9 into out[0], built with enter_region/exit_region."""
    b = ir.Builder()
    T = ir.Type
    (out,) = b.function("loop", [T("ptr<i32>")])
    c = {v: b.op("constant", [], [T("i32")], {"value": v}).result() for v in (0, 1, 10)}
    loop = b.op("for", [c[0], c[10], c[1], c[0]], [T("i32")])
    iv, acc = b.enter_region(loop, 0, [T("i32"), T("i32")])
    b.op("yield", [b.op("add", [acc, iv], [T("i32")]).result()])
    b.exit_region()
    b.op("store", [out, loop.result()])
    b.op("return")
    module = b.finish()
    assert "for " in str(module)
    result = np.zeros(1, np.int32)
    module.interpret((1,), [result])
    assert result[0] == 45


def test_builder_errors():
    b = ir.Builder()
    with pytest.raises(ValueError, match="call function\\(\\) first"):
        b.op("return")
    (x,) = b.function("f", [ir.Type("i32")])
    with pytest.raises(ValueError, match="unknown op 'frobnicate'"):
        b.op("frobnicate", [x])
    with pytest.raises(TypeError, match="operands must be Values, got None"):
        b.op("neg", [None], [ir.Type("i32")])
    add = b.op("add", [x, x], [ir.Type("i32")])
    with pytest.raises(ValueError, match="has 0 regions"):
        b.enter_region(add, 0)
    with pytest.raises(ValueError, match="not inside a region"):
        b.exit_region()
    b.op("add", [x], [ir.Type("i32")])  # one operand short: the verifier rejects it at finish()
    b.op("return")
    with pytest.raises(tessera.Error, match="add"):
        b.finish()


FOLDABLE = """\
func @f(%out: ptr<i32>) {
  %a = constant {value = 2} : i32
  %b = constant {value = 3} : i32
  %c = add %a, %b : i32
  %d = add %a, %b : i32
  %unused = mul %c, %d : i32
  store %out, %c
  return
}
"""


def test_run_passes_gives_the_ir_after_each_pass():
    module = ir.parse(FOLDABLE)
    stages = module.run_passes(["cse", "dce", "canonicalize"])
    assert [name for name, _ in stages] == ["cse", "dce", "canonicalize"]
    assert "%d = add" not in stages[0][1] and "%unused = mul %c, %c : i32" in stages[0][1]  # %d merged into %c
    assert "mul" not in stages[1][1] and "%c = add %a, %b : i32" in stages[1][1]  # the unused product is gone
    assert "constant {value = 5} : i32" in stages[2][1] and "add" not in stages[2][1]  # 2 + 3 folded
    assert stages[-1][1] == str(module)  # the module was transformed in place
    out = np.zeros(1, np.int32)
    module.interpret(1, [out])
    assert out[0] == 5


def test_layout_passes_on_a_traced_kernel():
    module = tessera.kernels.vector_add.trace(BLOCK=256)
    stages = module.run_passes(["coalesce", "assign-layouts", "remove-layout-conversions"], num_warps=2)
    assert [name for name, _ in stages] == ["coalesce", "assign-layouts", "remove-layout-conversions"]
    assert "#blocked" in stages[1][1]
    assert "warps_per_cta = [2]" in stages[1][1] or "[2]" in stages[1][1]
    # The transformed kernel still computes the same thing.
    n = 300
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    module.interpret(2, [x, y, out, n])
    np.testing.assert_array_equal(out, x + y)


def test_run_passes_default_is_the_jit_pipeline():
    module = tessera.kernels.vector_add.trace(BLOCK=256)
    stages = module.run_passes("default", num_warps=2)
    assert [name for name, _ in stages] == [
        "expand-descriptor-loads", "canonicalize-pointers", "transpose-loads", "canonicalize", "cse", "dce", "coalesce",
        "assign-layouts",
        "remove-layout-conversions", "canonicalize", "cse", "dce", "async-copy-dot-operands", "pipeline-loops",
        "stage-copies-in-registers", "dce", "sink-to-uses", "ping-pong-consumers", "order-consumer-groups",
        "allocate-shared-memory",
        "insert-barriers"]
    assert "wpc = [2]" in stages[-1][1] and "smem_bytes = " in stages[-1][1]
    n = 300
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    module.interpret(2, [x, y, out, n])
    np.testing.assert_array_equal(out, x + y)
    # A string is a comma-separated list, as for `tessera-opt -p`.
    assert [name for name, _ in ir.parse(FOLDABLE).run_passes("cse,dce")] == ["cse", "dce"]


def test_unknown_pass_lists_the_known_ones():
    module = ir.parse(FOLDABLE)
    with pytest.raises(tessera.Error, match="canonicalize"):
        module.run_passes(["canonicalise"])
    with pytest.raises(tessera.Error, match="pipelines: default"):
        module.run_passes("defualt")
    assert "cse" in ir.pass_names() and "dce" in ir.pass_names()


def test_clone_is_independent():
    module = ir.parse(FOLDABLE)
    copy = module.clone()
    module.run_passes(["canonicalize", "dce"])
    assert str(copy) == FOLDABLE
