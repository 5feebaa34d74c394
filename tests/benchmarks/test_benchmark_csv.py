"""benchmarks/compile_time, kernel_resources and amdgpu_resources on small cases: their --csv files are well formed
(the header, one row per case, numbers where numbers belong), a missing ptxas is reported in its columns rather
than failing the run, and benchmarks/plot_results.py turns each CSV into a PNG.

ctest passes the binaries' paths in COMPILE_TIME, KERNEL_RESOURCES and AMDGPU_RESOURCES. Where ptxas is absent
(CI), the ptxas columns must say "absent"; their content is checked only where it is installed.
"""
import csv
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLOT = ROOT / "benchmarks" / "plot_results.py"
PTXAS = "/usr/local/cuda/bin/ptxas"
HAVE_PTXAS = os.access(PTXAS, os.X_OK)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

COMPILE_TIME_COLUMNS = ["case", "trace_ms", "passes_ms", "lower_ms", "optimize_ms", "emit_ms", "jit_ms",
                        "tessera_ms", "ptxas_ms", "tessera/ptxas"]
KERNEL_RESOURCES_COLUMNS = ["case", "registers", "spill_stores_B", "spill_loads_B", "stack_B", "ptxas_smem_B",
                            "dynamic_smem_B", "ptxas_ms", "ptxas_cpu_ms", "tensor_cores"]
AMDGPU_RESOURCES_COLUMNS = ["case", "vgprs", "agprs", "vgpr_spills", "sgprs", "sgpr_spills", "lds_B", "scratch_B"]
PTXAS_RESOURCE_COLUMNS = ["registers", "spill_stores_B", "spill_loads_B", "stack_B", "ptxas_smem_B", "ptxas_ms",
                          "ptxas_cpu_ms"]


def binary(variable):
    path = os.environ.get(variable)
    if not path:
        pytest.fail(f"{variable} is not set: run this test through ctest")
    return path


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=600)


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows, f"{path} is empty"
    width = len(rows[0])
    assert all(len(r) == width for r in rows), f"ragged rows in {path}: {rows}"
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]


def measure(variable, only, tmp_path, *extra):
    out = tmp_path / f"{variable.lower()}.csv"
    result = run([binary(variable), "--only", only, "--runs", "1", "--csv", str(out), *extra])
    assert result.returncode == 0, result.stderr
    header, rows = read_csv(out)
    return result, header, rows, out


def plot(csv_path):
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib is not installed")
    png = csv_path.with_suffix(".png")
    result = run([sys.executable, str(PLOT), str(csv_path), "--out", str(png)])
    assert result.returncode == 0, result.stderr
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_compile_time_csv(tmp_path):
    result, header, rows, out = measure("COMPILE_TIME", "vector_add", tmp_path)
    assert header == COMPILE_TIME_COLUMNS
    assert [r["case"] for r in rows] == ["vector_add_f32_BLOCK=1024_w4_sm_90a"]
    row = rows[0]
    stages = [float(row[c]) for c in COMPILE_TIME_COLUMNS[1:6]]
    assert all(s >= 0 for s in stages) and sum(stages) > 0
    # What a launch waits for: the trace, then the JIT's whole compile (timed apart from the stages).
    assert float(row["jit_ms"]) > 0
    assert float(row["tessera_ms"]) == pytest.approx(float(row["trace_ms"]) + float(row["jit_ms"]), abs=0.03)
    if HAVE_PTXAS:
        ptxas = float(row["ptxas_ms"])
        assert ptxas > 0
        assert float(row["tessera/ptxas"]) == pytest.approx(float(row["tessera_ms"]) / ptxas, rel=0.05, abs=0.002)
    else:
        assert (row["ptxas_ms"], row["tessera/ptxas"]) == ("absent", "n/a")
    assert row["case"] in result.stdout  # the table is printed as well
    plot(out)


def test_compile_time_without_ptxas(tmp_path):
    result, _, rows, out = measure("COMPILE_TIME", "vector_add", tmp_path, "--ptxas", str(tmp_path / "no-ptxas"))
    assert (rows[0]["ptxas_ms"], rows[0]["tessera/ptxas"]) == ("absent", "n/a")
    assert "ptxas absent" in result.stdout
    plot(out)  # a plot of Tessera's stages alone


def test_kernel_resources_csv(tmp_path):
    _, header, rows, out = measure("KERNEL_RESOURCES", "softmax", tmp_path)
    assert header == KERNEL_RESOURCES_COLUMNS
    assert [r["case"] for r in rows] == ["softmax_f32_BLOCK=1024_w4_sm_90a"]
    row = rows[0]
    assert int(row["dynamic_smem_B"]) > 0  # softmax reduces across warps through shared memory
    assert row["tensor_cores"] == "none"
    if not HAVE_PTXAS:
        assert all(row[c] == "absent" for c in PTXAS_RESOURCE_COLUMNS)
        return
    assert 0 < int(row["registers"]) <= 255
    assert all(int(row[c]) >= 0 for c in ["spill_stores_B", "spill_loads_B", "stack_B", "ptxas_smem_B"])
    assert float(row["ptxas_ms"]) > 0 and float(row["ptxas_cpu_ms"]) > 0
    plot(out)


# The ragged matmuls with rows of no alignment that spilled while every copy of a K step loaded before any store:
# 128 loaded registers beside 128 accumulators (copies through registers now go in rounds of at most 64).
@pytest.mark.skipif(not HAVE_PTXAS, reason="ptxas is not installed")
@pytest.mark.parametrize("case", ["matmul_f16_128x128x64_w4_s3_ragged999_sm_90a",
                                  "matmul_f16_128x128x64_w4_s3_ragged999_sm_80",
                                  "matmul_f16_128x256x64_w8_s3_ragged999_sm_80"])
def test_kernel_resources_ragged_matmuls_do_not_spill(case, tmp_path):
    _, _, rows, _ = measure("KERNEL_RESOURCES", case, tmp_path)
    assert [r["case"] for r in rows] == [case]
    assert [rows[0][c] for c in ["spill_stores_B", "spill_loads_B", "stack_B"]] == ["0", "0", "0"]


# The warp-specialized persistent descriptor matmuls bench_tutorials.py times, at 64x64x32.
WS_PERSISTENT_64 = "64x64x32_w4_s4_warp_specialized_persistent_sm_90a"


# The library matmul on each input type compiles and uses tensor cores (fp8 e4m3 and e5m2, bf16 on both archs, and
# bf16 attention on sm_80 too): fp8 on sm_90a's wgmma, with B row-major
# (copied through registers into its K-major buffer) and B transposed; so does the matmul through descriptors, and
# the attention through 3-d descriptors, whose blocks a reshape and K's a trans reach the dots through (without
# expand-descriptor-loads' rank-2 reads and transpose-loads it ran on mma.sync and spilled), the attention whose
# softmax overlaps the next Q K^T, and the two descriptor matmuls with C in f16, warp-specialized and persistent.
@pytest.mark.parametrize("case, instruction", [("matmul_f16_64x64x32_w4_s4_sm_80", "mma.sync"),
                                               ("matmul_bf16_64x64x32_w4_s4_sm_90a", "wgmma"),
                                               ("matmul_f8e4m3_64x64x32_w4_s4_sm_90a", "wgmma"),
                                               ("matmul_f8e4m3_64x64x32_w4_s4_bT_sm_90a", "wgmma"),
                                               ("matmul_f8e5m2_64x64x32_w4_s4_sm_90a", "wgmma"),
                                               ("matmul_bf16_64x64x32_w4_s4_sm_80", "mma.sync"),
                                               ("attention_fwd_bf16_64x64_d64_w4_sm_80", "mma.sync"),
                                               ("matmul_i8_128x128x64_w8_s3_sm_90a", "mma.sync"),
                                               ("matmul_tf32_64x64x32_w4_s3_sm_90a", "mma.sync"),
                                               ("matmul_desc_f16_64x64x32_w4_s4_sm_80", "mma.sync"),
                                               ("matmul_desc_f16_64x64x32_w4_s4_sm_90a", "wgmma"),
                                               ("attention_fwd_desc_f16_64x64_d64_w4_sm_90a", "wgmma"),
                                               ("attention_fwd_desc_overlap_f16_64x64_d64_w4_sm_90a", "wgmma"),
                                               (f"matmul_desc_out_f16_{WS_PERSISTENT_64}", "wgmma"),
                                               (f"matmul_desc_tma_c_f16_{WS_PERSISTENT_64}", "wgmma")])
def test_kernel_resources_matmul_inputs(case, instruction, tmp_path):
    _, _, rows, _ = measure("KERNEL_RESOURCES", case, tmp_path)
    assert [(r["case"], r["tensor_cores"]) for r in rows] == [(case, instruction)]


# gfx942 from the code object's metadata: a matmul whose accumulators sit in AGPRs (128x128x64 on 4 waves), free of
# spills, and in every row spills exactly where the note reports a scratch segment (where spills go).
def test_amdgpu_resources_csv(tmp_path):
    _, header, rows, _ = measure("AMDGPU_RESOURCES", "128x128", tmp_path)
    assert header == AMDGPU_RESOURCES_COLUMNS
    by_case = {r["case"]: r for r in rows}
    matmul = by_case["matmul_f16_128x128x64_w4_s3_gfx942"]
    assert 0 < int(matmul["vgprs"]) <= 512 and int(matmul["agprs"]) > 0
    assert (matmul["vgpr_spills"], matmul["scratch_B"]) == ("0", "0")
    assert int(matmul["lds_B"]) > 0 and int(matmul["sgprs"]) > 0
    assert all((int(r["vgpr_spills"]) > 0) == (int(r["scratch_B"]) > 0) for r in rows)
    assert "attention_fwd_f16_128x128_d128_w8_gfx942" in by_case
    assert all(int(r[c]) >= 0 for r in rows for c in AMDGPU_RESOURCES_COLUMNS[1:])


def test_kernel_resources_without_ptxas(tmp_path):
    _, _, rows, out = measure("KERNEL_RESOURCES", "softmax", tmp_path, "--ptxas", str(tmp_path / "no-ptxas"))
    assert all(rows[0][c] == "absent" for c in PTXAS_RESOURCE_COLUMNS)
    result = run([sys.executable, str(PLOT), str(out)])
    assert result.returncode == 1 and "ptxas was absent" in result.stderr


@pytest.mark.parametrize("variable", ["COMPILE_TIME", "KERNEL_RESOURCES", "AMDGPU_RESOURCES"])
def test_bad_arguments(variable, tmp_path):
    result = run([binary(variable), "--runs", "0"])
    assert result.returncode == 2 and "--runs takes 1 to 100" in result.stderr
    result = run([binary(variable), "--only", "no-such-kernel"])
    assert result.returncode == 1 and "no case matches --only 'no-such-kernel'" in result.stderr


def test_plot_rejects_other_csv(tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    result = run([sys.executable, str(PLOT), str(other)])
    assert result.returncode == 1 and "neither compile_time's nor kernel_resources' columns" in result.stderr
