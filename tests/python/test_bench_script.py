"""benchmarks/bench_tutorials.py without a GPU: its pure parts (sweeps, work and rate math, the table, CSV, targets,
argument parsing) and its clear exit without torch. The GPU part only runs on a GPU machine."""

import csv
import pathlib
import subprocess
import sys
import time
import types

import pytest

from benchmark_modules import BENCH_DIR, CpuTorch, Event, load

bench = load("bench_tutorials")


def test_importing_the_script_imports_no_gpu_library():
    # A fresh interpreter: this test process may already have imported tessera (conftest) or torch.
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import bench_tutorials; "
            "print(*sorted(m for m in ('torch', 'triton', 'tessera', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(BENCH_DIR)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("benchmark", bench.BENCHMARKS)
def test_sweeps(benchmark):
    full, quick = bench.sweep(benchmark), bench.sweep(benchmark, quick=True)
    assert len(quick) == 2 and len(full) > len(quick)
    assert set(quick) <= set(full)
    assert full == sorted(full)
    bench.sweep(benchmark).clear()  # callers get a copy: the table of sweeps stays intact
    assert bench.sweep(benchmark) == full


def test_sweeps_cover_the_targets():
    for quick in (False, True):
        assert (4096, 4096, 4096) in bench.sweep("matmul", quick)
        for b in ("softmax", "layernorm_fwd"):
            assert max(cols for _, cols in bench.sweep(b, quick)) >= 8192  # "large rows"


def test_attention_sizes_and_flops():
    assert bench.size_label("attention", (1024, 64)) == "N=1024 (16x16 heads)"
    assert bench.size_label("attention", (16384, 128)) == "N=16384 (1x16 heads)"
    assert bench.attention_batch(32768) == 1  # never an empty batch
    # Two matmuls per head: 4 * batch * heads * N^2 * d; causal computes half the scores.
    assert bench.attention_flops(1024, 64) == 4 * 16 * 16 * 1024 * 1024 * 64
    assert bench.work("attention", (1024, 64), causal=True) == bench.attention_flops(1024, 64) // 2
    assert bench.unit_of("attention") == "TFLOP/s"
    assert bench.plot_x("attention", (2048, 128)) == 2048
    assert bench.plot_name("attention", "bf16 d=128 causal") == "attention-bf16-d128-causal"
    assert bench.parse_attention_config("128,64,8") == (128, 64, 8)
    for bad, pattern in [("128,64", "expected BM,BN,num_warps"), ("128,x,8", "three integers"),
                         ("128,48,8", "powers of two")]:
        with pytest.raises(ValueError, match=pattern):
            bench.parse_attention_config(bad)


def test_attention_target_is_judged_on_the_worst_row():
    R = bench.Row
    rows = [R("attention", "N=1024 (16x16 heads)", "f16 d=64", "TFLOP/s",
              {"tessera": 300.0, "torch": 400.0, "triton": 250.0}, 250.0, "Triton"),
            R("attention", "N=4096 (4x16 heads)", "f16 d=64 causal", "TFLOP/s",
              {"tessera": 150.0, "torch": 400.0, "triton": 200.0}, 200.0, "Triton")]
    assert bench.target_lines(rows) == [
        "* attention at every size >= 100% of Triton (worst: N=4096 (4x16 heads) f16 d=64 causal): missed (75%)"]
    rows[1].values["tessera"] = bench.FAIL
    assert bench.target_lines(rows) == [
        "* attention at every size >= 100% of Triton (first unjudged: N=4096 (4x16 heads) f16 d=64 causal): "
        "not judged (Tessera: FAIL)"]


def test_attention_through_descriptors_is_judged_on_its_own_rows():
    R = bench.Row
    rows = [R("attention", "N=1024 (16x16 heads)", "f16 d=64", "TFLOP/s",
              {"tessera": 300.0, "torch": 400.0, "triton": 250.0}, 250.0, "Triton"),
            R("attention", "N=1024 (16x16 heads)", "f16 d=64 descriptors", "TFLOP/s",
              {"tessera": 200.0, "torch": 400.0, "triton": 250.0}, 250.0, "Triton"),
            R("attention", "N=1024 (16x16 heads)", "f16 d=64 causal descriptors warp-specialized", "TFLOP/s",
              {"tessera": 275.0, "torch": 400.0, "triton": 250.0}, 250.0, "Triton"),
            R("attention", "N=1024 (16x16 heads)", "f16 d=64 causal descriptors warp-specialized without turns",
              "TFLOP/s", {"tessera": 225.0, "torch": 400.0, "triton": 250.0}, 250.0, "Triton"),
            R("attention", "N=1024 (16x16 heads)", "f16 d=64 causal descriptors warp-specialized persistent",
              "TFLOP/s", {"tessera": 300.0, "torch": 400.0, "triton": 250.0}, 250.0, "Triton"),
            R("attention", "N=1024 (16x16 heads)", "f16 d=64 causal descriptors overlapped", "TFLOP/s",
              {"tessera": 240.0, "torch": 400.0, "triton": 250.0}, 250.0, "Triton"),
            R("attention", "N=1024 (16x16 heads)", "f16 d=64 causal descriptors overlapped warp-specialized",
              "TFLOP/s", {"tessera": 325.0, "torch": 400.0, "triton": 250.0}, 250.0, "Triton")]
    assert bench.target_lines(rows) == [
        "* attention at every size >= 100% of Triton (worst: N=1024 (16x16 heads) f16 d=64): met (120%)",
        "* attention through descriptors at every size >= 100% of Triton (worst: N=1024 (16x16 heads) f16 d=64 "
        "descriptors): missed (80%)",
        "* attention through descriptors, warp-specialized at every size >= 100% of Triton (worst: N=1024 (16x16 "
        "heads) f16 d=64 causal descriptors warp-specialized): met (110%)",
        "* attention through descriptors, warp-specialized, consumer warpgroups not taking turns at every size >= "
        "100% of Triton (worst: N=1024 (16x16 heads) f16 d=64 causal descriptors warp-specialized without turns): "
        "missed (90%)",
        "* attention through descriptors, warp-specialized and persistent at every size >= 100% of Triton (worst: "
        "N=1024 (16x16 heads) f16 d=64 causal descriptors warp-specialized persistent): met (120%)",
        "* attention through descriptors, softmax overlapped with the next Q K^T at every size >= 100% of Triton "
        "(worst: N=1024 (16x16 heads) f16 d=64 causal descriptors overlapped): missed (96%)",
        "* attention through descriptors, softmax overlapped with the next Q K^T, warp-specialized at every size >= "
        "100% of Triton (worst: N=1024 (16x16 heads) f16 d=64 causal descriptors overlapped warp-specialized): "
        "met (130%)"]


def test_attention_backward_sizes_and_flops():
    assert bench.sweep("attention_bwd") == bench.sweep("attention")  # the forward's problems
    assert bench.size_label("attention_bwd", (1024, 64)) == "N=1024 (16x16 heads)"
    # Five matmuls against the forward's two; causal computes half the scores.
    assert bench.attention_bwd_flops(1024, 64) == 10 * 16 * 16 * 1024 * 1024 * 64
    assert bench.work("attention_bwd", (1024, 64), causal=True) == bench.attention_bwd_flops(1024, 64) // 2
    assert bench.unit_of("attention_bwd") == "TFLOP/s"
    assert bench.plot_name("attention_bwd", "f16 d=64 causal") == "attention_bwd-f16-d64-causal"
    assert set(bench.ATTENTION_BWD_BLOCKS) == {d for _, d in bench.sweep("attention_bwd")}
    assert bench.RUN_ORDER.index("attention_bwd") > bench.RUN_ORDER.index("attention")


def test_attention_backward_rows_are_judged_against_torch(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    notes = []
    ctx = types.SimpleNamespace(torch=torch, do_bench=lambda fn, device: 2.0, launch_timeout=0,
                                note=lambda *args: notes.append(args))
    expected = [torch.ones(3)]
    row = bench._run_row(ctx, "attention_bwd", (1024, 64), "f16 d=64",
                         {"tessera": lambda: [torch.ones(3)], "torch": lambda: [torch.ones(3)], "triton": None},
                         expected, [(1e-3, 0.0)])
    flops = bench.attention_bwd_flops(1024, 64)
    assert row.values == {"tessera": flops / 2e9, "torch": flops / 2e9, "triton": bench.NA}
    assert (row.reference_name, row.reference) == ("torch", flops / 2e9) and row.fraction("tessera") == 1.0
    # A wrong gradient is a FAIL cell, and the note says which output.
    row = bench._run_row(ctx, "attention_bwd", (1024, 64), "f16 d=64",
                         {"tessera": lambda: [torch.zeros(3)], "torch": lambda: [torch.ones(3)]}, expected,
                         [(1e-3, 0.0)])
    assert row.values["tessera"] == bench.FAIL and "output 0" in notes[-1][2]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_the_attention_backward_reference_is_autograd(causal):
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(5)
    q, k, v, d_o = (torch.randn(2, 2, 37, 16, generator=gen, dtype=torch.float64) for _ in range(4))
    got = bench.attention_bwd_reference(torch, q, k, v, d_o, causal)
    leaves = [x.clone().requires_grad_() for x in (q, k, v)]
    s = leaves[0] @ leaves[1].transpose(-1, -2) / 4
    if causal:
        s = s.masked_fill(~torch.ones(37, 37, dtype=torch.bool).tril(), float("-inf"))
    (torch.softmax(s, dim=-1) @ leaves[2]).backward(d_o)
    for g, leaf in zip(got, leaves):
        assert g.dtype == torch.float32
        torch.testing.assert_close(g.double(), leaf.grad, atol=1e-5, rtol=1e-4)


@pytest.mark.sim
@pytest.mark.parametrize("head_dim", [64, 128])
def test_the_attention_backward_launcher_computes_the_gradients(head_dim, tmp_path, monkeypatch):
    # On the emulator (sm_90a: wgmma, asynchronous copies), with CPU tensors, at the benchmark's blocks for this
    # head dim; 70 rows: ragged for every block. Causal at head dim 128 only, to keep the emulator's time down.
    torch = pytest.importorskip("torch")
    import tessera
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path))
    ctx = types.SimpleNamespace(torch=torch, tessera=tessera,
                                options=types.SimpleNamespace(tessera_backend="sim", tessera_attention=(64, 64, 4)))
    gen = torch.Generator().manual_seed(11)
    q, k, v, d_o = (torch.randn(1, 1, 70, head_dim, generator=gen).to(torch.float16) for _ in range(4))
    causal = head_dim == 128
    fn = bench.attention_bwd_launcher(ctx, q, k, v, d_o, causal, bench.ATTENTION_BWD_BLOCKS[head_dim])
    want = bench.attention_bwd_reference(torch, q, k, v, d_o, causal)
    for _ in range(2):  # the first call also runs the forward; the second reuses its statistics
        got = fn()
        report = tessera.sim.last_report()
        assert (report["kernel"], report["arch"], report["findings"]) == ("attention_bwd_dq", "sm_90a", [])
        for g, w in zip(got, want):
            torch.testing.assert_close(g.float(), w, atol=4e-3 * float(w.abs().max()), rtol=0)


def _emulator_ctx(monkeypatch, tmp_path, notes, options=None, **fields):
    """A benchmark context over CPU tensors whose Tessera launches run on the emulator: do_bench says 0.5 ms, notes
    go to `notes`, options (tessera_backend "sim" and `options`) and any other `fields` as given."""
    torch = pytest.importorskip("torch")
    import tessera
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path))
    return types.SimpleNamespace(torch=CpuTorch(torch), tessera=tessera, do_bench=lambda fn, device: 0.5,
                                 note=lambda *args: notes.append(args), launch_timeout=60,
                                 options=types.SimpleNamespace(tessera_backend="sim", **(options or {})), **fields)


@pytest.mark.sim
def test_the_attention_backward_benchmark_runs_end_to_end_on_the_emulator(tmp_path, monkeypatch):
    # bench_attention_bwd itself (inputs, reference, check, timing, rows, notes) at one small size: one head of 70
    # rows, f16 and bf16, causal and not. torch 1.13 has no scaled_dot_product_attention: its column is n/a.
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(bench, "ATTENTION_HEADS", 1)
    monkeypatch.setattr(bench, "ATTENTION_TOKENS", 70)
    monkeypatch.setitem(bench.ATTENTION_BWD_BLOCKS, 32, ((32, 32, 4), (32, 32, 4)))
    ref, launches = _triton_reference_on_a_stand_in(monkeypatch)
    monkeypatch.setitem(ref.ATTENTION_CONFIGS, 32, ref.ATTENTION_CONFIGS[64])  # its forward configs: d 64 and 128
    notes = []
    ctx = _emulator_ctx(monkeypatch, tmp_path, notes, {"tessera_attention": (32, 32, 4)}, triton_ref=ref)
    rows = bench.bench_attention_bwd(ctx, (70, 32))
    assert [r.dtype for r in rows] == ["f16 d=32", "f16 d=32 causal", "bf16 d=32", "bf16 d=32 causal"]
    for r in rows:  # 0.5 ms each (the fake do_bench)
        causal = r.dtype.endswith("causal")
        assert r.values["tessera"] == pytest.approx(bench.attention_bwd_flops(70, 32, causal) / 0.5e9), r
        assert r.values["triton"] == bench.FAIL  # the stand-in's launches compute nothing
        if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
            assert r.values["torch"] == bench.NA
    assert not [n for n in notes if n[0] == "tessera" and "wrong result" in n[2]], notes
    # Triton: its forward with statistics once per variant (the untimed check), then its three backward kernels
    # at Tessera's blocks, each launch binding to its kernel.
    names = [launch[0].fn.__name__ for launch in launches]
    assert names[:4] == ["_attention_fwd_kernel", "_attention_bwd_preprocess_kernel", "_attention_bwd_dkdv_kernel",
                         "_attention_bwd_dq_kernel"]
    assert names.count("_attention_fwd_kernel") == 4
    (_, forward), (_, preprocess), (dkdv_grid, dkdv), (dq_grid, dq) = (_bind(launch) for launch in launches[:4])
    assert forward["SAVE_LSE"] and forward["seq_len"] == 70 and forward["HEAD_DIM"] == 32
    assert (preprocess["BM"], preprocess["HEAD_DIM"]) == (32, 32)
    assert dkdv_grid == (3, 1) and (dkdv["BM"], dkdv["BN"], dkdv["CAUSAL"]) == (32, 32, False)
    assert dq_grid == (3, 1) and dq["lse_ptr"] is forward["lse_ptr"] and dq["delta_ptr"] is preprocess["delta_ptr"]


def test_size_labels():
    assert bench.size_label("vector_add", (1 << 20,)) == "n=1048576"
    assert bench.size_label("softmax", (4096, 1024)) == "4096x1024"
    assert bench.size_label("matmul", (4096, 4096, 4096)) == "M=N=K=4096"
    assert bench.size_label("matmul", (128, 256, 64)) == "M=128 N=256 K=64"


def test_bytes_and_flops():
    assert bench.bytes_moved("vector_add", (1000,)) == 12000
    assert bench.bytes_moved("softmax", (10, 100)) == 2 * 10 * 100 * 4
    assert bench.bytes_moved("layernorm_fwd", (10, 100)) == (2 * 1000 + 200 + 20) * 4
    assert bench.bytes_moved("layernorm_bwd", (10, 100)) == (3 * 1000 + 300 + 20) * 4
    with pytest.raises(ValueError, match="not a bandwidth benchmark"):
        bench.bytes_moved("matmul", (4, 4, 4))
    assert bench.matmul_flops(2, 3, 4) == 48
    assert bench.work("matmul", (2, 3, 4)) == 48
    assert bench.work("softmax", (10, 100)) == 8000
    assert bench.unit_of("matmul") == "TFLOP/s" and bench.unit_of("layernorm_bwd") == "GB/s"


def test_rates():
    assert bench.rate(1e9, 1.0, "GB/s") == pytest.approx(1000.0)      # 1 GB in 1 ms
    assert bench.rate(2e12, 10.0, "TFLOP/s") == pytest.approx(200.0)  # 2 TFLOP in 10 ms
    assert bench.rate(bench.matmul_flops(4096, 4096, 4096), 1.0, "TFLOP/s") == pytest.approx(137.438953472)
    # A copy counts the bytes read and the bytes written.
    assert bench.copy_bandwidth(512 << 20, 1.0) == pytest.approx(2 * (512 << 20) / 1e6)
    for ms in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="time must be positive"):
            bench.rate(1e9, ms, "GB/s")
    with pytest.raises(ValueError, match="unknown unit"):
        bench.rate(1e9, 1.0, "GiB/s")


def test_fraction():
    assert bench.fraction(850.0, 1000.0) == pytest.approx(0.85)
    assert bench.fraction(bench.FAIL, 1000.0) is None
    assert bench.fraction(500.0, bench.ERROR) is None
    assert bench.fraction(500.0, None) is None
    assert bench.fraction(500.0, 0.0) is None


def test_launch_parameters():
    assert [bench.next_power_of_2(n) for n in (1, 2, 3, 781, 1024, 1025)] == [1, 2, 4, 1024, 1024, 2048]
    assert [bench.num_warps_for(b) for b in (256, 2048, 4096, 8192, 16384)] == [4, 8, 8, 16, 16]
    assert bench.layernorm_fwd_block(1000) == 1024 and bench.layernorm_fwd_block(16384) == 4096
    assert bench.layernorm_bwd_rows_per_program(4096, 132) == 8    # 528 programs wanted -> 8 rows each
    assert bench.layernorm_bwd_rows_per_program(100, 132) == 1     # never fewer rows than programs
    assert bench.layernorm_bwd_rows_per_program(1, 0) == 1


def test_parse_matmul_config():
    assert bench.parse_matmul_config("64,128,32,4") == (64, 128, 32, 4)
    for bad, pattern in [("64,128,32", "expected BM,BN,BK,num_warps"), ("64,a,32,4", "four integers"),
                         ("64,96,32,4", "powers of two"), ("64,128,0,4", "powers of two")]:
        with pytest.raises(ValueError, match=pattern):
            bench.parse_matmul_config(bad)


def _rows():
    R = bench.Row
    return [
        R("softmax", "4096x1024", "f32", "GB/s", {"tessera": 2500.4, "torch": 3000.0, "triton": bench.FAIL},
          4000.0, "copy", 1024),
        R("softmax", "4096x8192", "f32", "GB/s", {"tessera": 3600.0, "torch": 3500.0, "triton": 3700.0},
          4000.0, "copy", 8192),
        R("matmul", "M=N=K=4096", "f16", "TFLOP/s", {"tessera": 300.04, "torch": 600.0, "triton": 550.0},
          600.0, "cuBLAS"),
        R("matmul", "M=N=K=4096", "bf16", "TFLOP/s", {"tessera": bench.NA, "torch": 610.0, "triton": bench.ERROR},
          610.0, "cuBLAS"),
    ]


def test_format_table():
    lines = bench.format_table(_rows()).splitlines()
    assert len(lines) == 2 + 4
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    assert cells[0] == ["benchmark", "size", "dtype", "unit", "Tessera", "torch", "Triton", "Tessera / ref",
                        "torch / ref", "Triton / ref", "ref"]
    assert all(len(c) == len(cells[0]) for c in cells)
    assert len({len(line) for line in lines}) == 1  # padded: every line equally long
    assert cells[2] == ["softmax", "4096x1024", "f32", "GB/s", "2500", "3000", "FAIL", "63%", "75%", "-",
                        "copy 4000"]
    assert cells[4] == ["matmul", "M=N=K=4096", "f16", "TFLOP/s", "300.0", "600.0", "550.0", "50%", "100%", "92%",
                        "cuBLAS 600.0"]
    assert cells[5][4:7] == ["n/a", "610.0", "error"] and cells[5][7] == "-"
    # Markdown: text columns left-aligned, numbers right-aligned.
    assert cells[1][0].startswith("-") and not cells[1][0].endswith(":")
    assert cells[1][4].endswith(":")
    assert lines[2].split("|")[5].startswith(" ") and lines[2].split("|")[5].endswith("2500 ")


def test_targets():
    lines = bench.target_lines(_rows())
    # softmax is judged at its largest rows only; matmul at 4096 per dtype.
    assert lines == [
        "* softmax at 4096x8192 >= 85% of copy bandwidth: met (90%)",
        "* matmul f16 at M=N=K=4096 >= 60% of cuBLAS: missed (50%)",
        "* matmul bf16 at M=N=K=4096 >= 60% of cuBLAS: not judged (Tessera: n/a)",
    ]
    rows = _rows()
    rows[1].values["tessera"] = bench.FAIL
    assert bench.target_lines(rows)[0] == "* softmax at 4096x8192 >= 85% of copy bandwidth: not judged (Tessera: FAIL)"


def test_failed():
    rows = _rows()
    assert bench.failed(rows)  # a FAIL and an error
    clean = [r for r in rows if bench.FAIL not in r.values.values() and bench.ERROR not in r.values.values()]
    assert len(clean) == 2 and not bench.failed(clean)
    na_only = bench.Row("matmul", "x", "bf16", "TFLOP/s", {"tessera": bench.NA, "torch": 1.0, "triton": 1.0})
    assert not bench.failed([na_only])  # n/a is honest, not a failure


def test_notes_lines():
    notes = {("tessera", "ValueError: unknown backend 'cuda'"): ["a", "b", "c", "d", "e"],
             ("triton", "wrong result: output 0"): ["softmax 4096x1024 f32"]}
    assert bench.notes_lines(notes) == [
        "* Tessera, a, b, c and 2 more: ValueError: unknown backend 'cuda'",
        "* Triton, softmax 4096x1024 f32: wrong result: output 0",
    ]


def test_csv(tmp_path):
    path = tmp_path / "out.csv"
    bench.write_csv(_rows(), path)
    with open(path, newline="") as f:
        records = list(csv.DictReader(f))
    assert len(records) == 4
    assert records[0]["benchmark"] == "softmax" and records[0]["triton"] == "FAIL"
    assert float(records[0]["tessera"]) == pytest.approx(2500.4)
    assert float(records[0]["tessera_fraction"]) == pytest.approx(0.6251)
    assert records[0]["triton_fraction"] == ""
    assert records[3]["tessera"] == "n/a" and records[3]["reference_name"] == "cuBLAS"


def test_plot_x():
    assert bench.plot_x("vector_add", (1 << 20,)) == 1 << 20
    assert bench.plot_x("softmax", (4096, 1024)) == 1024
    assert bench.plot_x("layernorm_bwd", (4096, 512)) == 512
    assert bench.plot_x("matmul", (2048, 2048, 2048)) == 2048


def test_write_results(tmp_path):
    R = bench.Row
    rows = [R("softmax", "4096x1024", "f32", "GB/s", {"tessera": 2500.4, "torch": 3000.0, "triton": bench.FAIL},
              4000.0, "copy", 1024, 1024),
            R("softmax", "4096x8192", "f32", "GB/s", {"tessera": 3600.0, "torch": 3500.0, "triton": 3700.0},
              4000.0, "copy", 8192, 8192),
            R("matmul", "M=N=K=4096", "f16", "TFLOP/s", {"tessera": 300.0, "torch": 600.0, "triton": 550.0},
              600.0, "cuBLAS", 0, 4096),
            R("matmul", "M=N=K=4096", "bf16", "TFLOP/s", {"tessera": bench.NA, "torch": 610.0, "triton": 500.0},
              610.0, "cuBLAS", 0, 4096)]
    written = bench.write_results(rows, tmp_path / "results")
    names = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert names == sorted(f"{n}.{e}" for n in ("softmax", "matmul-f16", "matmul-bf16") for e in ("csv", "md", "png"))
    assert sorted(p.name for p in written) == names
    with open(tmp_path / "results" / "softmax.csv", newline="") as f:
        records = list(csv.reader(f))
    assert records == [["columns (4096 rows)", "Tessera", "torch", "Triton"],
                       ["1024", "2500.4", "3000.0", ""], ["8192", "3600.0", "3500.0", "3700.0"]]
    table = (tmp_path / "results" / "matmul-bf16.md").read_text().splitlines()
    assert table[0] == "matmul-bf16 (TFLOP/s, bf16)"
    assert [c.strip() for c in table[4].strip("|").split("|")] == ["4096", "-", "610.00", "500.00"]
    assert (tmp_path / "results" / "matmul-f16.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_header_lines():
    info = {"date": "2030-01-02 03:04 UTC", "gpu": "NVIDIA H200", "sm_count": 132, "driver": "999.1", "cuda": "13.0",
            "torch": "2.11.0", "triton": "3.6.0", "tessera": "abc1234", "copy_gbps": 4012.6, "quick": True}
    text = "\n".join(bench.header_lines(info))
    for fact in ("2030-01-02 03:04 UTC", "--quick", "NVIDIA H200 (132 SMs)", "driver 999.1", "CUDA 13.0",
                 "torch 2.11.0", "triton 3.6.0", "tessera abc1234", "4013 GB/s", "512 MiB", "median"):
        assert fact in text
    assert "--quick" not in "\n".join(bench.header_lines(dict(info, quick=False)))


def test_parse_args():
    options = bench.parse_args([])
    assert options.only == list(bench.BENCHMARKS) and not options.quick and options.csv is None
    assert options.tessera_backend == "cuda" and options.tessera_matmul is None  # autotuned
    assert options.tessera_attention is None  # autotuned on both sides (the quick sweep: one config each)
    options = bench.parse_args(["--quick", "--only", "matmul, softmax,matmul", "--csv", "x.csv",
                                "--tessera-matmul", "64,64,32,4", "--results", "out"])
    assert options.quick and options.only == ["softmax", "matmul"]  # table order, no duplicates
    assert options.csv == pathlib.Path("x.csv") and options.tessera_matmul == (64, 64, 32, 4)
    assert options.results == pathlib.Path("out") and bench.parse_args([]).results is None


def test_matmul_is_autotuned_unless_a_config_is_given(monkeypatch, tmp_path):
    import numpy as np
    import tessera
    # Fixed-config mode: deterministic without a GPU (which configs ptxas prunes depends on the machine).
    monkeypatch.setenv("TESSERA_AUTOTUNE_CONFIG", "5")
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path))
    tuned = bench.matmul_tuner(tessera)
    assert tuned.key == ["M", "N", "K"]
    assert len(tuned.configs) == len(bench.MATMUL_TUNE_CONFIGS) + len(bench.MATMUL_PERSISTENT_TUNE_CONFIGS)
    assert tuned.configs[-1] == tessera.Config({"BM": 128, "BN": 256, "BK": 64}, num_warps=8, num_stages=3,
                                               persistent=True)
    m, n, k = 20, 12, 8
    a, b = np.ones((m, k), np.float16), np.ones((k, n), np.float16)
    c = np.zeros((m, n), np.float16)
    tuned[lambda meta: (tessera.cdiv(m, meta["BM"]) * tessera.cdiv(n, meta["BN"]),)](
        a, b, c, m, n, k, k, 1, n, 1, n, 1, GROUP_M=8, ACTIVATION=0)
    assert tuned.best_config == tessera.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4, num_stages=4)
    np.testing.assert_array_equal(c, np.full((m, n), k, np.float16))
    fixed = bench.matmul_tuner(tessera, (64, 64, 32, 4))
    assert fixed.configs == [tessera.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4, num_stages=3)]


@pytest.mark.sim
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_the_tma_matmul_launcher_computes_a_matmul(dtype, tmp_path, monkeypatch):
    # On the emulator (sm_90a: TMA copies, wgmma), with CPU tensors; ragged M, N and K; warp-specialized.
    torch = pytest.importorskip("torch")
    import tessera
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path))
    ctx = types.SimpleNamespace(tessera=tessera, options=types.SimpleNamespace(tessera_backend="sim"))
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(100, 96, generator=gen).to(getattr(torch, dtype))
    b = torch.randn(96, 72, generator=gen).to(getattr(torch, dtype))
    c = torch.full((100, 72), float("nan"), dtype=getattr(torch, dtype))
    name = "f16" if dtype == "float16" else "bf16"
    # C through pointers, then through a descriptor (a TMA store); then both with ping-pong consumer groups.
    for tma_store, ping_pong in ((False, False), (True, False), (False, True), (True, True)):
        c.fill_(float("nan"))
        config = (64, 64, 32, 4, 2, True, ping_pong, tma_store, ping_pong)
        [out] = bench.tma_matmul_launcher(ctx, name, a, b, c, config)()
        assert out is c
        torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)
        assert tessera.sim.last_report()["findings"] == []


def test_the_tma_matmul_row_reports_the_fastest_right_config(monkeypatch):
    rates = iter([bench.FAIL, 500.0, bench.ERROR, 700.0, 650.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0])
    monkeypatch.setattr(bench, "measure", lambda *args: next(rates))
    notes = {}
    ctx = types.SimpleNamespace(
        torch=types.SimpleNamespace(float16="f16", full=lambda *a, **k: None),
        tessera=types.SimpleNamespace(kernels=types.SimpleNamespace(matmul_desc_f16_out="kernel",
                                                                    matmul_desc_f16_tma_c="kernel"),
                                      TensorDescriptor=lambda array, block: None, cdiv=lambda x, y: -(-x // y)),
        note=lambda provider, what, message: notes.setdefault((provider, what), message))
    row = bench.Row("matmul", "M=N=K=4096", "f16", "TFLOP/s", {"tessera": 300.0, "torch": 700.0, "triton": 600.0},
                    700.0, "cuBLAS")
    a = types.SimpleNamespace(shape=(4096, 4096))
    tma = bench._tma_matmul_row(ctx, row, a, a, None, None, "f16")
    assert (tma.dtype, tma.values, tma.reference) == (
        "f16 TMA", {"tessera": 700.0, "torch": 700.0, "triton": 600.0}, 700.0)
    assert row.values["tessera"] == 300.0  # the pointer kernel's row is left as it was
    note = notes[("tessera", "matmul M=N=K=4096 f16 TMA")]
    assert note.startswith("configs (BM, BN, BK, warps, stages, warp_specialize, persistent, tma_store, ping_pong): "
                           "(128, 128, 64, 4, 3, False, False, False, False): FAIL; "
                           "(128, 128, 64, 8, 3, False, False, False, False): 500")
    assert len(bench.TMA_MATMUL_CONFIGS) == 16 and note.count(";") == 15
    assert (128, 128, 64, 4, 3, True, True, False, True) in bench.TMA_MATMUL_CONFIGS  # ping-pong is weighed too
    assert (128, 256, 64, 8, 3, True, True, True, False) in bench.TMA_MATMUL_CONFIGS  # and CUTLASS's H100 kernel
    # No config right: FAIL when one computed a wrong result, else error.
    for outcomes, cell in (([bench.ERROR, bench.FAIL] + [bench.ERROR] * 14, bench.FAIL),
                           ([bench.ERROR] * 16, bench.ERROR)):
        rates = iter(outcomes)
        monkeypatch.setattr(bench, "measure", lambda *args: next(rates))
        assert bench._tma_matmul_row(ctx, row, a, a, None, None, "f16").values["tessera"] == cell


def test_tma_matmul_targets_are_judged_at_4096_and_8192():
    rows = [bench.Row("matmul", f"M=N=K={s}", "f16 TMA", "TFLOP/s", {"tessera": t, "torch": 700.0, "triton": 650.0},
                      700.0, "cuBLAS") for s, t in ((2048, 100.0), (4096, 720.0), (8192, 630.0))]
    assert bench.target_lines(rows) == [
        "* matmul f16 TMA at M=N=K=4096 >= 100% of cuBLAS (issue 12): met (103%)",
        "* matmul f16 TMA at M=N=K=8192 >= 100% of cuBLAS (issue 12): missed (90%)",
    ]


@pytest.mark.parametrize("argv, message", [
    (["--only", "softmax,gemm"], "unknown benchmark 'gemm'; choose from vector_add"),
    (["--only", ","], "no benchmark named"),
    (["--tessera-matmul", "1,2,3"], "expected BM,BN,BK,num_warps"),
    (["--tessera-attention", "128,64,6"], "BM, BN and num_warps must be positive powers of two"),
    (["--bogus"], "unrecognized arguments"),
    (["--time-budget", "0"], "expected a positive number of seconds, got '0'"),
    (["--time-budget", "soon"], "expected a positive number of seconds, got 'soon'"),
])
def test_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_without_torch_exits_2_with_a_message(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` raise ImportError
    assert bench.main(["--quick"]) == 2
    err = capsys.readouterr().err
    assert "needs PyTorch with CUDA" in err and "Traceback" not in err


def test_without_a_gpu_exits_2_with_a_message(monkeypatch, capsys):
    fake = types.ModuleType("torch")
    fake.__version__ = "0.0-fake"
    fake.version = types.SimpleNamespace(cuda=None)
    fake.cuda = types.SimpleNamespace(is_available=lambda: False)
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert bench.main([]) == 2
    assert "needs a CUDA GPU, and torch sees none (torch 0.0-fake" in capsys.readouterr().err


def test_script_exit_status_without_torch():
    # As a program, in a fresh interpreter that has no torch here (skipped where torch is installed).
    probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("torch is installed here")
    out = subprocess.run([sys.executable, str(BENCH_DIR / "bench_tutorials.py"), "--quick"], capture_output=True,
                         text=True)
    assert out.returncode == 2
    assert "needs PyTorch with CUDA" in out.stderr and "Traceback" not in out.stderr


# The sweep on fake runners and a fake clock (each size "takes" 10 s): the goals (matmul, attention) run
# first; once the time budget has passed no size starts, and the rest is named; a SIGTERM (SweepStopped) ends the
# sweep the same way. The rows come back in table order, and on_rows sees them after every size.
def _fake_runners(now, stop_at=None):
    def runner(name):
        def run(ctx, size):
            if (name, size) == stop_at:
                raise bench.SweepStopped()
            now[0] += 10
            return [bench.Row(name, bench.size_label(name, size), "f16", "TFLOP/s", {"tessera": 1.0})]
        return run
    return {b: runner(b) for b in bench.BENCHMARKS}


def _all_sizes(order):
    return [f"{b} {bench.size_label(b, z)}" for b in order for z in bench.sweep(b, quick=True)]


def test_sweep_runs_the_goals_first_and_stops_at_its_budget():
    now = [0.0]
    seen = []
    options = bench.parse_args(["--quick", "--time-budget", "25"])
    rows, not_run = bench.run_sweep(None, options, _fake_runners(now), lambda: now[0],
                                    lambda rows: seen.append(len(rows)))
    order = _all_sizes(bench.RUN_ORDER)
    assert order[0].startswith("matmul") and order[len(bench.sweep("matmul", True))].startswith("attention")
    assert [f"{r.benchmark} {r.size}" for r in rows] == order[:3]  # started at 0, 10 and 20 s
    assert not_run == order[3:]
    assert seen == [1, 2, 3]


def test_sweep_without_a_budget_runs_everything_in_table_order():
    now = [0.0]
    rows, not_run = bench.run_sweep(None, bench.parse_args(["--quick", "--only", "vector_add,matmul,softmax"]),
                                    _fake_runners(now), lambda: now[0])
    assert [f"{r.benchmark} {r.size}" for r in rows] == _all_sizes(("vector_add", "softmax", "matmul"))
    assert not_run == []


def test_sweep_stopped_by_sigterm_keeps_what_it_measured():
    # The runners turn a launch's Exception into an "error" cell; the stop must get past them.
    assert not issubclass(bench.SweepStopped, Exception)
    now = [0.0]
    stop = ("attention", bench.sweep("attention", True)[0])
    rows, not_run = bench.run_sweep(None, bench.parse_args(["--quick"]), _fake_runners(now, stop), lambda: now[0])
    order = _all_sizes(bench.RUN_ORDER)
    done = len(bench.sweep("matmul", True))
    assert [f"{r.benchmark} {r.size}" for r in rows] == order[:done]
    assert not_run == order[done:]


# A kernel that never finishes (a deadlock) must not take the run with it: the first launch of a measurement may
# run launch_timeout seconds, then the sweep stops with what it measured, the note names the launch, and the run
# fails.
def test_waiting_for_launches_gives_up_after_the_time_limit():
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    never = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=lambda: Event(done=False)))
    assert not bench.wait_for_launches(never, 2.0, clock=lambda: now[0], sleep=sleep)
    assert 2.0 <= now[0] < 2.01
    done = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=Event))
    assert bench.wait_for_launches(done, 2.0, clock=lambda: now[0], sleep=sleep)
    synchronized = []
    no_limit = types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=lambda: synchronized.append(1)))
    assert bench.wait_for_launches(no_limit, 0) and synchronized == [1]


def test_the_launch_time_limit_comes_from_the_environment():
    assert bench.launch_timeout_seconds({}) == bench.LAUNCH_TIMEOUT_SECONDS
    assert bench.launch_timeout_seconds({"TESSERA_GPU_TIMEOUT": "2.5"}) == 2.5
    assert bench.launch_timeout_seconds({"TESSERA_GPU_TIMEOUT": "0"}) == 0
    for bad in ("soon", "-1", "inf"):
        with pytest.raises(ValueError, match="TESSERA_GPU_TIMEOUT must be a number of seconds"):
            bench.launch_timeout_seconds({"TESSERA_GPU_TIMEOUT": bad})


def test_a_bad_launch_time_limit_is_refused_before_anything_runs(monkeypatch, capsys):
    monkeypatch.setenv("TESSERA_GPU_TIMEOUT", "soon")
    monkeypatch.setattr(bench, "_import_prerequisites", lambda: pytest.fail("the limit is checked first"))
    assert bench.main(["--quick"]) == 2
    assert "bench_tutorials: TESSERA_GPU_TIMEOUT must be a number of seconds (0: no limit), not 'soon'" in \
        capsys.readouterr().err


def test_a_launch_that_never_finishes_stops_the_sweep_with_what_it_measured():
    notes = []
    ctx = types.SimpleNamespace(torch=types.SimpleNamespace(cuda=types.SimpleNamespace(Event=lambda: Event(False))),
                                launch_timeout=0.01, note=lambda *args: notes.append(args), hung=False)
    hang_at = ("attention", bench.sweep("attention", True)[0])

    def runner(name):
        def run(ctx, size):
            if (name, size) == hang_at:
                # The first provider's launch never finishes: measure stops there; the other providers never run.
                bench.measure(ctx, "tessera", "attention N=1024", lambda: [], [], [], 1.0, bench.TFLOPS)
                raise AssertionError("measure returned after a launch that never finished")
            return [bench.Row(name, bench.size_label(name, size), "f16", "TFLOP/s", {"tessera": 1.0})]
        return run

    rows, not_run = bench.run_sweep(ctx, bench.parse_args(["--quick"]), {b: runner(b) for b in bench.BENCHMARKS},
                                    time.monotonic)
    order = _all_sizes(bench.RUN_ORDER)
    done = len(bench.sweep("matmul", True))
    assert [f"{r.benchmark} {r.size}" for r in rows] == order[:done]
    assert not_run == order[done:]
    assert ctx.hung
    [(provider, what, message)] = notes
    assert (provider, what) == ("tessera", "attention N=1024")
    assert message.startswith("the launch has not finished after 0.01 s (a kernel that never ends?)")


# triton_reference.py on a stand-in triton (no triton here): its wrappers' launches bind to their kernels'
# parameters (a wrong count or name would be an "error" cell on the GPU), and the matmul is autotuned over
# Tessera's configurations with the grid each config needs. This checks how the kernels are launched, not what they
# compute (the GPU run checks every Triton result against its reference).
def _triton_reference_on_a_stand_in(monkeypatch):
    launches = []

    class Kernel:  # @triton.jit
        def __init__(self, fn):
            self.fn = fn

        def __getitem__(self, grid):
            return lambda *args, **kwargs: launches.append((self, grid, args, kwargs))

    class Config:
        def __init__(self, kwargs, num_warps=4, num_stages=3):
            self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages

    class Autotuner:  # @triton.autotune: "measures" its configs and picks the last
        def __init__(self, kernel, configs, key):
            self.kernel, self.configs, self.key, self.best_config = kernel, configs, key, None

        def __getitem__(self, grid):
            def run(*args, **kwargs):
                self.best_config = best = self.configs[-1]
                launches.append((self.kernel, grid(best.kwargs), args,
                                 dict(kwargs, **best.kwargs, num_warps=best.num_warps, num_stages=best.num_stages)))
            return run

    triton = types.ModuleType("triton")
    triton.jit, triton.Config, triton.cdiv = Kernel, Config, lambda a, b: -(-a // b)
    triton.autotune = lambda configs, key: lambda kernel: Autotuner(kernel, configs, key)
    language = types.ModuleType("triton.language")
    language.__getattr__ = lambda name: object()  # tl.constexpr and the like, in annotations
    triton.language = language
    monkeypatch.setitem(sys.modules, "triton", triton)
    monkeypatch.setitem(sys.modules, "triton.language", language)
    return load("triton_reference", "triton_reference_on_a_stand_in"), launches


def _bind(launch):
    """The launch's arguments bound to its kernel's parameters (launch options aside); raises if they do not fit."""
    import inspect
    kernel, grid, args, kwargs = launch
    options = {k: v for k, v in kwargs.items() if k not in ("num_warps", "num_stages")}
    return grid, inspect.signature(kernel.fn).bind(*args, **options).arguments


def test_the_triton_reference_launches_bind_to_their_kernels(monkeypatch):
    torch = pytest.importorskip("torch")
    ref, launches = _triton_reference_on_a_stand_in(monkeypatch)
    x = torch.randn(3000)
    ref.vector_add(x, x, torch.empty(3000))
    rows = torch.randn(37, 781)
    ref.softmax(rows, torch.empty_like(rows))
    ref.layernorm_fwd(rows, torch.ones(781), torch.zeros(781), 1e-5, torch.empty_like(rows), torch.empty(37),
                      torch.empty(37), 256)
    ref.layernorm_bwd(rows, rows, torch.ones(781), torch.zeros(37), torch.ones(37), torch.empty_like(rows),
                      torch.empty(781), torch.empty(781), torch.empty(5, 781), torch.empty(5, 781), 8)
    q = torch.randn(2, 3, 100, 64)
    ref.attention(q, q, q, torch.empty_like(q), True, 0.125)
    bound = [_bind(launch) for launch in launches]
    assert [launch[0].fn.__name__ for launch in launches] == [
        "_add_kernel", "_softmax_kernel", "_layernorm_fwd_kernel", "_layernorm_bwd_dx_kernel",
        "_layernorm_bwd_dwdb_kernel", "_attention_fwd_kernel"]
    grid, arguments = bound[-1]
    assert grid == (1, 6) and arguments["seq_len"] == 100 and arguments["HEAD_DIM"] == 64 and arguments["CAUSAL"]


def test_the_triton_matmul_is_autotuned_over_tesseras_configs(monkeypatch):
    torch = pytest.importorskip("torch")
    ref, launches = _triton_reference_on_a_stand_in(monkeypatch)
    a, b = torch.randn(300, 200), torch.randn(200, 520)
    configs = bench.matmul_triton_configs()
    assert configs == bench.MATMUL_TUNE_CONFIGS
    assert bench.matmul_triton_configs((64, 64, 32, 4)) == [(64, 64, 32, 4, 3)]  # --tessera-matmul: that one alone
    assert ref.matmul_best_config(configs) is None  # nothing tuned yet
    ref.matmul(a, b, torch.empty(300, 520), configs)
    tuner = ref.matmul_tuner(configs)
    assert tuner is ref.matmul_tuner([list(c) for c in configs])  # one tuner per set of configs
    assert tuner.key == ["M", "N", "K"]
    assert [(c.kwargs["BM"], c.kwargs["BN"], c.kwargs["BK"], c.num_warps, c.num_stages) for c in tuner.configs] == \
        configs
    assert all(c.kwargs["GROUP_M"] == 8 for c in tuner.configs)
    grid, arguments = _bind(launches[-1])
    bm, bn, bk, warps, stages = configs[-1]
    assert grid == (-(-300 // bm) * -(-520 // bn),)
    assert (arguments["M"], arguments["N"], arguments["K"], arguments["BK"]) == (300, 520, 200, bk)
    assert ref.matmul_best_config(configs) == configs[-1]
    # Without configs, the one fixed configuration.
    ref.matmul(a, b, torch.empty(300, 520))
    grid, arguments = _bind(launches[-1])
    assert grid == (-(-300 // 128) * -(-520 // 128),) and arguments["BN"] == 128


@pytest.mark.sim
def test_the_matmul_benchmark_runs_end_to_end_on_the_emulator(tmp_path, monkeypatch):
    # bench_matmul itself (inputs, reference, checks, timing, rows, notes) at one small ragged size with one fixed
    # Tessera config, on CPU tensors launched on the emulator; Triton is the stand-in above, whose launches compute
    # nothing (its cells FAIL, the NaN outputs untouched), and torch 1.13 has no f16 matmul on the CPU.
    ref, launches = _triton_reference_on_a_stand_in(monkeypatch)
    notes = []
    ctx = _emulator_ctx(monkeypatch, tmp_path, notes, {"tessera_matmul": (32, 32, 32, 4)}, matmul=None,
                        triton_ref=ref, hopper=False)
    rows = bench.bench_matmul(ctx, (70, 40, 96))
    assert [(r.benchmark, r.size, r.dtype) for r in rows] == [("matmul", "M=70 N=40 K=96", "f16"),
                                                               ("matmul", "M=70 N=40 K=96", "bf16")]
    f16, bf16 = rows
    assert f16.values["tessera"] == pytest.approx(2 * 70 * 40 * 96 / 0.5e9)  # right, and rated
    assert bf16.values["tessera"] == bench.NA
    assert f16.values["triton"] == bench.FAIL and bf16.values["triton"] == bench.FAIL
    # Triton tuned over the one config Tessera was fixed to, once per dtype.
    assert [launch[3]["BM"] for launch in launches] == [32, 32]
    assert ("tessera", "matmul M=70 N=40 K=96",
            "config Config({'BM': 32, 'BN': 32, 'BK': 32}, num_warps=4, num_stages=3)") in notes
    assert [n[1] for n in notes if n[0] == "triton" and n[2].startswith("wrong result")] == [
        "matmul M=70 N=40 K=96 f16", "matmul M=70 N=40 K=96 bf16"]
    assert not [n for n in notes if n[0] == "tessera" and "wrong result" in n[2]], notes
    # A right Triton result gets its chosen config noted: the stand-in's launch writes the product.
    monkeypatch.setattr(ref, "matmul", lambda a, b, c, configs: c.copy_(a.float() @ b.float()))
    monkeypatch.setattr(ref, "matmul_best_config", lambda configs: configs[0])
    notes.clear()
    bench.bench_matmul(ctx, (70, 40, 96))
    assert ("triton", "matmul M=70 N=40 K=96 f16", "config (32, 32, 32, 4, 3)") in notes, notes


@pytest.mark.sim
def test_the_attention_benchmark_runs_end_to_end_on_the_emulator(tmp_path, monkeypatch):
    # bench_attention itself at one small ragged size (one head of 70 rows, d 32), f16 and bf16, causal and not: the
    # pointer kernel and the descriptor kernels (plain and overlapped; the warp-specialized rows are sm_90 GPUs'),
    # each right and rated; Triton is the stand-in (FAIL cells); torch 1.13 has no scaled_dot_product_attention.
    monkeypatch.setattr(bench, "ATTENTION_HEADS", 1)
    monkeypatch.setattr(bench, "ATTENTION_TOKENS", 70)
    ref, launches = _triton_reference_on_a_stand_in(monkeypatch)
    notes = []
    ctx = _emulator_ctx(monkeypatch, tmp_path, notes, {"tessera_attention": (32, 32, 4)}, triton_ref=ref,
                        hopper=False, attention={})
    rows = bench.bench_attention(ctx, (70, 32))
    variants = [f"{d} d=32{c}" for d in ("f16", "bf16") for c in ("", " causal")]
    # Pointers, descriptors, descriptors overlapped, for each variant.
    assert [r.dtype for r in rows] == [v + kind for v in variants for kind in ("", " descriptors",
                                                                                " descriptors overlapped")]
    for r in rows:
        causal = " causal" in r.dtype
        assert r.values["tessera"] == pytest.approx(bench.attention_flops(70, 32, causal) / 0.5e9), (r, notes)
        assert r.values["triton"] == bench.FAIL, [n for n in notes if n[0] == "triton"]
    assert len(launches) == len(variants)  # Triton measured once per variant, on the pointer rows
    assert {(launch[3]["BM"], launch[3]["BN"], launch[3]["num_warps"]) for launch in launches} == {(32, 32, 4)}
    assert not [n for n in notes if n[0] == "tessera" and ("wrong result" in n[2] or "Error" in n[2])], notes


def test_attention_is_tuned_on_both_sides_in_the_full_sweep_only():
    quick, full = bench.parse_args(["--quick"]), bench.parse_args([])
    assert bench.attention_configs(quick) is None  # each side's one config
    assert bench.attention_configs(full) == bench.ATTENTION_TUNE_CONFIGS
    fixed = bench.parse_args(["--tessera-attention", "64,32,4"])
    assert bench.attention_configs(fixed) == [(64, 32, 4, 3)]
    # Triton's causal loop walks the diagonal block BN keys at a time: BM must be a multiple of BN.
    assert all(bm % bn == 0 for bm, bn, _, _ in bench.ATTENTION_TUNE_CONFIGS)
    assert len(set(bench.ATTENTION_TUNE_CONFIGS)) == len(bench.ATTENTION_TUNE_CONFIGS)


def test_the_triton_attention_is_autotuned_over_the_configs_it_is_given(monkeypatch):
    torch = pytest.importorskip("torch")
    ref, launches = _triton_reference_on_a_stand_in(monkeypatch)
    configs = [(128, 64, 8, 3), (64, 32, 4, 4)]
    assert ref.attention_best_config(configs) is None  # nothing tuned yet
    q = torch.randn(2, 3, 100, 64)
    ref.attention(q, q, q, torch.empty_like(q), True, 0.125, configs)
    tuner = ref.attention_tuner(configs)
    assert tuner is ref.attention_tuner([list(c) for c in configs])  # one tuner per set of configs
    assert tuner.key == ["seq_len", "HEAD_DIM", "CAUSAL"]
    assert [(c.kwargs["BM"], c.kwargs["BN"], c.num_warps, c.num_stages) for c in tuner.configs] == configs
    grid, arguments = _bind(launches[-1])
    assert grid == (-(-100 // 64), 6)  # the stand-in's choice, the last config: BM 64
    assert (arguments["seq_len"], arguments["HEAD_DIM"], arguments["CAUSAL"], arguments["BN"]) == (100, 64, True, 32)
    assert ref.attention_best_config(configs) == (64, 32, 4, 4)
    # Without configs, the fixed one for the head dim.
    ref.attention(q, q, q, torch.empty_like(q), False, 0.125)
    grid, arguments = _bind(launches[-1])
    assert grid == (1, 6) and arguments["BM"] == 128 and launches[-1][3]["num_warps"] == 4


@pytest.mark.sim
def test_tuned_attention_runs_its_descriptor_rows_at_the_chosen_blocks_and_notes_the_choice(tmp_path, monkeypatch):
    # The full sweep's path on the emulator, over two configs; TESSERA_AUTOTUNE_CONFIG=1 makes Tessera's choice
    # deterministic without a clock (the second config). Triton is the stand-in (its cells FAIL: no Triton note).
    monkeypatch.setattr(bench, "ATTENTION_HEADS", 1)
    monkeypatch.setattr(bench, "ATTENTION_TOKENS", 70)
    monkeypatch.setattr(bench, "ATTENTION_TUNE_CONFIGS", [(32, 32, 4, 3), (64, 32, 4, 3)])
    monkeypatch.setenv("TESSERA_AUTOTUNE_CONFIG", "1")
    ref, launches = _triton_reference_on_a_stand_in(monkeypatch)
    blocks = []
    desc_row = bench._attention_desc_row
    monkeypatch.setattr(bench, "_attention_desc_row", lambda *args, **kwargs: blocks.append(kwargs["blocks"]) or
                        desc_row(*args, **kwargs))
    notes = []
    ctx = _emulator_ctx(monkeypatch, tmp_path, notes, {"tessera_attention": None, "quick": False}, triton_ref=ref,
                        hopper=False, attention={})
    rows = bench.bench_attention(ctx, (70, 32))
    assert len(rows) == 12 and set(blocks) == {(64, 32, 4)}
    for r in rows:
        assert r.values["tessera"] == pytest.approx(bench.attention_flops(70, 32, " causal" in r.dtype) / 0.5e9), r
    label = bench.size_label("attention", (70, 32))
    assert [n[1] for n in notes if n[0] == "tessera" and n[2].startswith("config")] == [
        f"attention {label} {d} d=32{c}" for d in ("f16", "bf16") for c in ("", " causal")]
    assert ("tessera", f"attention {label} f16 d=32",
            "config Config({'BM': 64, 'BN': 32}, num_warps=4, num_stages=3)") in notes
    assert sorted(ctx.attention) == ["attention_fwd", "attention_fwd_bf16"]
    assert ctx.attention["attention_fwd"].key == ["seq_len", "HEAD_DIM", "CAUSAL"]
    # Triton tuned over the same two configs (the stand-in takes the last).
    assert {(launch[3]["BM"], launch[3]["BN"]) for launch in launches} == {(64, 32)}


@pytest.mark.sim
@pytest.mark.parametrize("benchmark, size", [("vector_add", (3000,)), ("softmax", (5, 300)),
                                             ("layernorm_fwd", (5, 300)), ("layernorm_bwd", (5, 300))])
def test_the_memory_bound_benchmarks_run_end_to_end_on_the_emulator(benchmark, size, tmp_path, monkeypatch):
    # Each runner itself at one small ragged size on CPU tensors, Tessera on the emulator: its row right and rated
    # in GB/s; torch's kernels (CPU here) right too; Triton the stand-in (FAIL: its launches compute nothing).
    ref, launches = _triton_reference_on_a_stand_in(monkeypatch)
    notes = []
    ctx = _emulator_ctx(monkeypatch, tmp_path, notes, triton_ref=ref, sm_count=132, copy_gbps=3000.0)
    [row] = bench.RUNNERS[benchmark](ctx, size)
    expected_rate = bench.rate(bench.work(benchmark, size), 0.5, bench.GBPS)
    assert (row.benchmark, row.unit) == (benchmark, bench.GBPS)
    assert row.values["tessera"] == pytest.approx(expected_rate), notes
    assert row.values["torch"] == pytest.approx(expected_rate), notes
    assert row.values["triton"] == bench.FAIL and launches
    assert row.reference == 3000.0
