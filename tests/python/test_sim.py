"""The emulator from Python: kernel[grid](..., backend="sim") and kernel.compile(..., backend="sim") on numpy
arrays and CPU tensors, the arch and checks options, tessera.sim.last_report() and the errors a failed check or a
bad argument gives."""

import textwrap

import numpy as np
import pytest

import tessera

pytestmark = pytest.mark.sim
K = tessera.kernels
N = 300  # not a multiple of the block: the last program is masked


def _add(x, y, out, n=N, **options):
    K.vector_add[(tessera.cdiv(n, 128),)](x, y, out, n, BLOCK=128, backend="sim", **options)


def test_pipelined_matmul_matches_numpy_for_every_num_stages():
    # M, N and K ragged against the 32x32x32 blocks: masked cp.async copies, and a K loop of 3 iterations, no longer
    # than the copies issued ahead with 4 stages. Rows start 16-byte aligned (N and K multiples of 16), as 16-byte
    # copies need; otherwise the copies fall back to loads and stores.
    M, N, Kd = 70, 48, 80
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (M, Kd)).astype(np.float16)
    b = rng.uniform(-1, 1, (Kd, N)).astype(np.float16)
    expected = a.astype(np.float32) @ b.astype(np.float32)
    for stages in (1, 2, 3, 4):
        c = np.zeros((M, N), np.float32)
        grid = (tessera.cdiv(M, 32) * tessera.cdiv(N, 32),)
        K.matmul[grid](a, b, c, M, N, Kd, Kd, 1, N, 1, N, 1, BM=32, BN=32, BK=32, GROUP_M=2, num_stages=stages,
                       backend="sim", arch="sm_80")
        np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-3, err_msg=f"num_stages={stages}")
        report = tessera.sim.last_report()
        assert report["findings"] == [], stages  # racecheck and the cp.async checks included
        assert report["warp_instructions"].get("cp.async", 0) > 0, stages


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a", "gfx942"])
@pytest.mark.parametrize("BN, rounds", [(64, 2), (128, 3)])
def test_matmul_with_rows_of_no_alignment_matches_numpy(arch, BN, rounds):
    # K and N odd: rows of A and B start only 2-byte aligned, so every copy into shared memory is an element wide.
    # At 128xBNx64 with 4 warps, a thread still holds runs of 8 elements of a row (8 rows of A, BN / 16 of B, where
    # one element each would be 64 and 32 rows: a pointer per row, and the 999-sized kernels spilled), loads them an
    # element at a time and stores each run into shared memory as one 16-byte store. It does so in rounds of at
    # most 64 loaded registers, each ended by a warp sync (at BN = 128, one per operand: 128 loads in flight
    # beside the 128 accumulators spilled).
    M, N, Kd = 131, 75, 99
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (M, Kd)).astype(np.float16)
    b = rng.uniform(-1, 1, (Kd, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    config = dict(BM=128, BN=BN, BK=64, GROUP_M=2, num_warps=4, num_stages=3)
    K.matmul[(tessera.cdiv(M, 128) * tessera.cdiv(N, BN),)](a, b, c, M, N, Kd, Kd, 1, N, 1, N, 1, backend="sim",
                                                            arch=arch, **config)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    report = tessera.sim.last_report()
    assert report["findings"] == []  # racecheck included
    if arch != "gfx942":
        assert report["warp_instructions"]["warp sync"] > 0
        ptx = K.matmul.compile(arch=arch, specialization=dict(stride_ak=1, stride_bn=1, stride_cn=1), **config).ptx
        assert "cp.async" not in ptx.replace("cp.async.commit_group", "").replace("cp.async.wait_group", "")
        # No copy is asynchronous, so num_stages=3 gives 2 stages: the prologue copies one, the loop the next.
        b_runs = BN // 16
        assert ptx.count("st.shared.v4.b32") == 2 * (8 + b_runs)
        assert ptx.count("ld.global.b16") == 2 * 8 * (8 + b_runs)
        assert ptx.count("bar.warp.sync") == rounds


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a", "gfx942"])
def test_persistent_matmul_loops_over_the_tiles_and_matches_numpy(arch):
    # 7 x 8 = 56 tiles of 32x32 on an emulated GPU of one multiprocessor, which holds 16 programs at most (its
    # threads; fewer by its shared memory): each program runs several tiles in a loop, the K loop pipelined inside.
    M, N, Kd = 200, 240, 80
    rng = np.random.default_rng(6)
    a = rng.uniform(-1, 1, (M, Kd)).astype(np.float16)
    b = rng.uniform(-1, 1, (Kd, N)).astype(np.float16)
    expected = a.astype(np.float32) @ b.astype(np.float32)
    runtime = tessera.sim.runtime(arch=arch)
    runtime.multiprocessors = 1
    try:
        c = np.zeros((M, N), np.float32)
        grid = (tessera.cdiv(M, 32) * tessera.cdiv(N, 32),)
        K.matmul[grid](a, b, c, M, N, Kd, Kd, 1, N, 1, N, 1, BM=32, BN=32, BK=32, GROUP_M=2, persistent=True,
                       backend="sim", arch=arch)
    finally:
        runtime.multiprocessors = 0
    np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-3)
    report = tessera.sim.last_report()
    assert report["findings"] == []  # racecheck included: the tile loop reuses the buffers
    programs = report["grid"][0]
    assert report["grid"][1:] == (1, 1) and 1 <= programs <= 16, report["grid"]
    compiled = K.matmul.compile(arch=arch, backend="sim", BM=32, BN=32, BK=32, GROUP_M=2, persistent=True)
    assert compiled.persistent
    assert not K.matmul.compile(arch=arch, backend="sim", BM=32, BN=32, BK=32, GROUP_M=2).persistent
    with pytest.raises(TypeError, match="persistent must be True or False"):
        K.matmul[grid](a, b, c, M, N, Kd, Kd, 1, N, 1, N, 1, BM=32, BN=32, BK=32, GROUP_M=2, persistent=1,
                       backend="sim", arch=arch)


@pytest.mark.parametrize("options, arch", [({}, "sm_90a"), ({"arch": "sm_80"}, "sm_80"),
                                           ({"arch": "gfx942"}, "gfx942"), ({"target": "nvptx"}, "sm_90a"),
                                           ({"target": "amdgpu"}, "gfx90a")])
def test_vector_add_runs_on_the_emulated_arch(rng, options, arch):
    x, y = rng.standard_normal(N, dtype=np.float32), rng.standard_normal(N, dtype=np.float32)
    out = np.full(N, np.nan, np.float32)
    _add(x, y, out, **options)
    np.testing.assert_array_equal(out, x + y)
    report = tessera.sim.last_report()
    assert (report["kernel"], report["arch"], report["grid"]) == ("vector_add", arch, (3, 1, 1))
    assert report["target"] == ("amdgpu" if arch.startswith("gfx") else "nvptx")


def test_the_report_has_the_counters_per_launch_and_per_op(rng):
    x = rng.standard_normal(N, dtype=np.float32)
    _add(x, x, np.zeros(N, np.float32))
    r = tessera.sim.last_report()
    assert isinstance(r, dict) and r["checks"] == dict.fromkeys(tessera.sim.CHECKS, True)
    # Contiguous f32 lanes: every transferred sector is requested, except at the masked end of the last program.
    assert 0.9 < r["global_load_efficiency"] <= 1.0 and 0.9 < r["global_store_efficiency"] <= 1.0
    assert (r["shared_bank_conflicts"], r["barriers"]) == (0, 0)
    loads = r["global_loads"]
    assert loads["requested_bytes"] == 2 * N * 4  # x and y, each element once
    assert loads["efficiency"] == r["global_load_efficiency"] == loads["requested_bytes"] / (loads["sectors"] * 32)
    assert r["global_stores"]["requested_bytes"] == N * 4
    assert r["warp_instructions"]["global load"] == loads["requests"]
    assert sum(r["global_access_widths"].values()) > 0
    ops = {(o["op"], o["location"].rsplit("/", 1)[-1].split(":")[0]) for o in r["ops"]}
    assert ("store", "vector_add.h") in ops and ("load", "vector_add.h") in ops
    store = next(o for o in r["ops"] if o["op"] == "store")
    assert store["global_stores"]["requested_bytes"] == N * 4 and store["global_loads"]["requests"] == 0
    assert (r["findings"], r["finding_counts"], r["output"]) == ([], {}, "")
    assert "sim counters for vector_add, grid (3, 1, 1)" in r.table()
    assert "ld.eff" in r.table() and str(r).startswith(r.table())


def test_shared_memory_counters_of_a_softmax_row(rng):
    cols = 1000
    x = rng.standard_normal((2, cols), dtype=np.float32)
    out = np.zeros_like(x)
    K.softmax[(2,)](out, x, cols, cols, cols, BLOCK=1024, num_warps=4, backend="sim")
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    r = tessera.sim.last_report()
    # Two reductions across 4 warps go through shared memory, behind barriers.
    assert r["barriers"] > 0
    assert r["shared_loads"]["requests"] > 0 and r["shared_stores"]["requests"] > 0
    assert r["shared_bank_conflicts"] == r["shared_loads"]["bank_conflicts"] + r["shared_stores"]["bank_conflicts"]


def test_cpu_torch_tensors_are_copied_in_and_back():
    torch = pytest.importorskip("torch")
    base = torch.arange(N + 8, dtype=torch.float32)
    x = base[8:]  # contiguous, with a storage offset
    out = torch.full((N,), float("nan"))
    _add(x, torch.ones(N), out, arch="gfx942")
    assert torch.equal(out, x + 1)
    assert tessera.sim.last_report()["arch"] == "gfx942"


def test_argument_errors_name_the_argument_before_anything_runs():
    torch = pytest.importorskip("torch")
    tessera.sim.last_report()  # whatever an earlier test left
    with pytest.raises(TypeError, match=r"argument 'y' must be a float32 array \(parameter type ptr<f32>\), "
                                        r"got dtype float64"):
        _add(np.ones(N, np.float32), np.ones(N), np.zeros(N, np.float32))
    assert tessera.sim.last_report() is None  # the launch never ran
    with pytest.raises(TypeError, match=r"argument 'out' must be a float32 tensor .*got int32"):
        _add(torch.ones(N), torch.ones(N), torch.zeros(N, dtype=torch.int32))
    with pytest.raises(ValueError, match=r"argument 'y' must be C-contiguous"):
        _add(torch.ones(N), torch.ones(2 * N)[::2], torch.zeros(N))
    with pytest.raises(ValueError, match=r"argument 'x' must be C-contiguous \(use numpy.ascontiguousarray\)"):
        _add(np.ones(2 * N, np.float32)[::2], np.ones(N, np.float32), np.zeros(N, np.float32))
    with pytest.raises(TypeError, match=r"argument 'y' must be a numpy array or a CPU tensor .*got list"):
        _add(np.ones(N, np.float32), [1.0] * N, np.zeros(N, np.float32))
    with pytest.raises(ValueError, match=r"argument 'n' = 4294967296 does not fit in i32"):
        _add(np.ones(N, np.float32), np.ones(N, np.float32), np.zeros(N, np.float32), n=1 << 32)


class FakeCudaArray:
    """Says it lives on a GPU; the emulator must refuse it without reading it."""

    __cuda_array_interface__ = {"shape": (N,), "typestr": "<f4", "data": (0, False), "version": 3}


def test_gpu_arrays_are_refused():
    with pytest.raises(TypeError, match=r"argument 'x' is a GPU array; launches on the emulator take host arrays"):
        _add(FakeCudaArray(), np.ones(N, np.float32), np.zeros(N, np.float32))


@pytest.mark.parametrize("options, message", [
    ({"arch": "sm_75"}, r"cannot emulate arch 'sm_75': expected sm_90a \(nvptx\), sm_80 \(nvptx\), gfx90a "
                        r"\(amdgpu\), gfx942 \(amdgpu\)"),
    ({"target": "x86"}, r"unknown target 'x86': expected 'nvptx' or 'amdgpu'"),
    ({"target": "nvptx", "arch": "gfx942"}, r"arch 'gfx942' is an amdgpu arch, not one of target 'nvptx'"),
])
def test_bad_archs_and_targets_are_errors(options, message):
    out = np.full(N, 7.0, np.float32)
    with pytest.raises(tessera.Error, match=message):
        _add(np.ones(N, np.float32), np.ones(N, np.float32), out, **options)
    with pytest.raises(tessera.Error, match=message):
        K.vector_add.compile(backend="sim", BLOCK=128, **options)
    np.testing.assert_array_equal(out, 7.0)


def test_bad_option_values_and_options_of_other_backends():
    x = np.ones(N, np.float32)
    with pytest.raises(TypeError, match=r"arch must be a string, got int"):
        _add(x, x, np.zeros_like(x), arch=80)
    with pytest.raises(ValueError, match=r"unknown check 'leakcheck': expected one of memcheck, racecheck, initcheck"):
        _add(x, x, np.zeros_like(x), checks={"leakcheck"})
    with pytest.raises(ValueError, match=r"unknown check 'leakcheck'"):
        _add(x, x, np.zeros_like(x), checks={"leakcheck": False})
    with pytest.raises(TypeError, match=r"checks\['racecheck'\] must be True or False, got 0"):
        _add(x, x, np.zeros_like(x), checks={"racecheck": 0})
    with pytest.raises(TypeError, match=r"checks must be True, False, a dict of check names .* got 'memcheck'"):
        _add(x, x, np.zeros_like(x), checks="memcheck")
    with pytest.raises(ValueError, match=r"arch, checks apply to backend='sim' \(the emulator\), not 'interpreter'"):
        K.vector_add[3](x, x, np.zeros_like(x), N, BLOCK=128, backend="interpreter", arch="sm_80", checks=False)
    with pytest.raises(ValueError, match=r"compile\(\) takes backend='sim' or None"):
        K.vector_add.compile(backend="cuda", BLOCK=128)
    with pytest.raises(ValueError, match=r"checks apply to backend='sim'"):
        K.vector_add.compile(checks=False, BLOCK=128)
    assert "sim" in tessera.kernel.BACKENDS


def test_compile_for_the_emulator_loads_the_kernel_there():
    k = K.vector_add.compile(backend="sim", arch="gfx942", BLOCK=128)
    assert (k.target, k.arch, k.format, k.warp_size) == ("amdgpu", "gfx942", "hsaco", 64)
    assert K.vector_add.compile(backend="sim", target="nvptx", BLOCK=128).arch == "sm_90a"
    jit = K.vector_add._jit_kernel()
    loaded = jit.loaded_variants
    # Not compiled nor loaded before; n: the fact a launch with n = 64 finds (divisible by 16).
    K.vector_add.compile(backend="sim", arch="sm_80", checks=False, specialization={"n": 16}, BLOCK=64)
    assert jit.loaded_variants == loaded + 1
    # The launch reuses what compile() loaded.
    x = np.ones(64, np.float32)
    out = np.zeros_like(x)
    K.vector_add[1](x, x, out, 64, BLOCK=64, backend="sim", arch="sm_80", checks=False)
    assert jit.loaded_variants == loaded + 1
    np.testing.assert_array_equal(out, 2.0)


def test_collect_gathers_every_launch_and_summary_merges_them_per_kernel(rng, monkeypatch):
    x = rng.standard_normal(N, dtype=np.float32)
    monkeypatch.setenv("TESSERA_SIM_ARCH", "gfx942")  # the arch of launches that name none
    with tessera.sim.collect() as reports:
        _add(x, x, np.zeros(N, np.float32))
        _add(x, x, np.zeros(N, np.float32), arch="sm_80")
        with pytest.raises(TypeError):
            _add(x, x, [0.0] * N)  # never ran: nothing collected
        _add(x, x, np.zeros(N, np.float32))
    _add(x, x, np.zeros(N, np.float32))  # after the block: not collected
    assert [r["arch"] for r in reports] == ["gfx942", "sm_80", "gfx942"]
    lines = tessera.sim.summary(reports).splitlines()
    assert lines[0].split() == ["kernel", "arch", "launches", "ld.eff", "st.eff", "bank", "conflicts", "barriers"]
    rows = [line.split() for line in lines[1:]]
    assert [row[:3] for row in rows] == [["vector_add", "gfx942", "2"], ["vector_add", "sm_80", "1"]]
    loads = [r["global_loads"] for r in reports if r["arch"] == "gfx942"]
    merged = sum(l["requested_bytes"] for l in loads) / (32 * sum(l["sectors"] for l in loads))
    assert float(rows[0][3]) == pytest.approx(merged, abs=5e-4)
    assert rows[0][5:] == ["0", "0"]


@pytest.mark.parametrize("arch, conflicts", [
    # The MFMA dot reads its operands from LDS buffers swizzled in 8-byte chunks: its ds_read_b64 phases have no
    # conflict (unpadded staging had 51840 extra wavefronts). The copies into them (stage-copies-in-registers) store
    # B, transposed in LDS, 4 rows of a column per 8-byte store: no conflict either (element by element, to rows 8
    # apart, they had 960 in the prologue's async_copy and 1440 in the loop's local_store). sm_90a's mma.sync dot
    # reads no shared memory here. The accumulator's conversion is conflict-free on both: its exchange rows are
    # padded for its two layouts (transforms/analysis/ExchangeConflicts.h; the one-bank pad had 960 and 1440 extra
    # wavefronts).
    ("gfx942", {}),
    ("sm_90a", {}),
])
def test_bank_conflicts_of_the_tutorial_matmul_by_op(arch, conflicts):
    M, N_, K_ = 131, 75, 90
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((M, K_)).astype(np.float16), rng.standard_normal((K_, N_)).astype(np.float16)
    c = np.zeros((M, N_), np.float32)
    K.matmul[(tessera.cdiv(M, 32) * tessera.cdiv(N_, 32),)](a, b, c, M, N_, K_, K_, 1, N_, 1, N_, 1, BM=32, BN=32,
                                                            BK=32, GROUP_M=4, backend="sim", arch=arch)
    r = tessera.sim.last_report()
    assert {op["op"]: op["shared_bank_conflicts"] for op in r["ops"] if op["shared_bank_conflicts"]} == conflicts
    assert r["shared_bank_conflicts"] == sum(conflicts.values())


def test_archs_lists_what_the_emulator_models():
    assert tessera.sim.ARCHS == ("sm_90a", "sm_80", "gfx90a", "gfx942")
    assert repr(tessera.sim.runtime(arch="gfx90a", checks=False)) == "<tessera emulator amdgpu gfx90a, checks none>"
    assert repr(tessera.sim.runtime(arch="gfx90a")) == "<tessera emulator amdgpu gfx90a, checks all>"


@pytest.mark.parametrize("checks, selected, on", [
    ({"racecheck": False}, "memcheck,initcheck,synccheck", {"memcheck", "initcheck", "synccheck"}),
    ({"memcheck": False, "synccheck": True}, "racecheck,initcheck,synccheck", {"racecheck", "initcheck", "synccheck"}),
    (("initcheck", "memcheck"), "memcheck,initcheck", {"memcheck", "initcheck"}),
    (set(), "none", set()),
    (dict.fromkeys(("memcheck", "racecheck", "initcheck", "synccheck"), True), "all",
     {"memcheck", "racecheck", "initcheck", "synccheck"}),
])
def test_checks_select_named_checks_like_compute_sanitizer_tools(rng, checks, selected, on):
    assert repr(tessera.sim.runtime(arch="sm_80", checks=checks)) == f"<tessera emulator nvptx sm_80, checks {selected}>"
    x = rng.standard_normal(N, dtype=np.float32)
    _add(x, x, np.zeros(N, np.float32), arch="sm_80", checks=checks)
    assert tessera.sim.last_report()["checks"] == {name: name in on for name in tessera.sim.CHECKS}


PLANTED = """\
#pragma once
#include "tessera/tessera.h"
using namespace tessera;

// A copy that forgets the store's mask: the last program writes past the end of out.
inline void unmasked_store(Ptr<f32> x, Ptr<f32> out, Int n, Const<int> BLOCK) {
  Tensor offs = program_id(0) * BLOCK + arange(0, BLOCK);
  store(out + offs, load(x + offs, offs < n));
}
TESSERA_PY_KERNEL(unmasked_store, x, out, n, BLOCK);
"""


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TESSERA_CACHE_DIR", str(tmp_path_factory.mktemp("tessera-cache")))
        header = tmp_path_factory.mktemp("kernels") / "planted.h"
        header.write_text(PLANTED)
        yield tessera.load(header), header


def test_out_of_bounds_store_in_a_loaded_header_names_the_authors_line(planted):
    module, header = planted
    n = 100  # two programs of 64: 28 lanes of the second store past the end
    x, out = np.ones(n, np.float32), np.zeros(n, np.float32)
    with pytest.raises(tessera.Error) as e:
        module.unmasked_store[(2,)](x, out, n, BLOCK=64, backend="sim", arch="sm_80")
    text = str(e.value)
    assert text.startswith(f"{header}:8:8: error: sim: kernel 'unmasked_store' failed its checks (28 finding(s))")
    assert f"out-of-bounds global access in unmasked_store, program (1, 0, 0), warp 1 lane 4 at {header}:8:8 " \
           "(store): write of 4 bytes" in text
    r = tessera.sim.last_report()
    assert r["finding_counts"] == {"out-of-bounds global access": 28}
    first = r["findings"][0]
    assert {k: first[k] for k in ("kind", "kernel", "program", "warp", "lane", "op", "line", "column")} == {
        "kind": "out-of-bounds global access", "kernel": "unmasked_store", "program": (1, 0, 0), "warp": 1,
        "lane": 4, "op": "store", "line": 8, "column": 8}
    assert first["location"] == f"{header}:8:8" and first["file"] == str(header)
    assert first["access"]["write"] is True and first["access"]["bytes"] == 4 and first["access"]["space"] == "global"
    assert first["text"] in text and first["text"] in str(r)
    assert len(r["findings"]) == 10  # the first 10 of a kind are kept, all are counted
    assert "18 more out-of-bounds global access finding(s) not shown (28 in all)" in text


def test_checks_off_runs_on_an_unchecked_emulator_that_still_checks_bounds(planted):
    module, _ = planted
    x, out = np.ones(100, np.float32), np.zeros(100, np.float32)
    with pytest.raises(tessera.Error, match="out-of-bounds global access"):
        module.unmasked_store[(2,)](x, out, 100, BLOCK=64, backend="sim", checks=False)
    assert tessera.sim.last_report()["checks"] == dict.fromkeys(tessera.sim.CHECKS, False)
    with pytest.raises(tessera.Error, match="out-of-bounds global access"):  # memcheck off alone: bounds stay
        module.unmasked_store[(2,)](x, out, 100, BLOCK=64, backend="sim", checks={"memcheck": False})
    x, out = np.ones(128, np.float32), np.zeros(128, np.float32)
    module.unmasked_store[(2,)](x, out, 128, BLOCK=64, backend="sim", checks=False)
    np.testing.assert_array_equal(out, 1.0)
    assert tessera.sim.last_report()["findings"] == []
