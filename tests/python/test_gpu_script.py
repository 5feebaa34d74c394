"""scripts/gpu/run_on_gpu.sh on a fake bundle, without a GPU: its steps run in order within one time budget, the
kernel check beside the extension's build and the correctness checks all at once; a failed step fails the run, a
step cut by the budget is named, one that would start with under 20 s left is not run; no torch GPU
(bench_tutorials' exit 2) is not a failure; TESSERA_GPU_STEPS picks steps; what comes back is at most four files
(the device tool returns eight), every log packed in one. The fake bundle holds a tiny _C source (compiled the way
the script compiles the real one), stand-ins for tessera-gpu-check and the test binaries, and pytest files;
compute-sanitizer and ncu are stand-ins too."""

import os
import pathlib
import shutil
import subprocess
import sys
import tarfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu" / "run_on_gpu.sh"

pytestmark = pytest.mark.skipif(shutil.which("c++") is None or shutil.which("xz") is None,
                                reason="needs c++ and xz")


def _write(path, text, executable=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if executable:
        path.chmod(0o755)


def _bundle(tmp_path, binaries):
    """A bundle.tar.xz with `binaries` ({name: shell body}) under bin/, and the tools dir for PATH."""
    b = tmp_path / "bundle"
    _write(b / "REVISION", "fake-revision\n")
    (b / "lib").mkdir(parents=True)
    _write(b / "bin" / "tessera-gpu-check", "#!/bin/sh\necho 'case vector_add: ok'\n", executable=True)
    for name, body in binaries.items():
        _write(b / "bin" / name, f"#!/bin/sh\n{body}\n", executable=True)
    py = b / "python"
    _write(py / "python" / "src" / "module.cpp",
           "#include <pybind11/pybind11.h>\nPYBIND11_MODULE(_C, m) { m.def(\"answer\", [] { return 42; }); }\n")
    _write(py / "python" / "src" / "other.cpp", "int other() { return 1; }\n")
    _write(py / "tessera" / "__init__.py", "")
    lib = py / "tessera" / "libtessera.so"
    source = tmp_path / "empty.c"
    source.write_text("int tessera_stand_in(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", str(source), "-o", str(lib)], check=True)
    for name in ("test_gpu", "test_aot", "test_jit", "test_testing"):
        _write(py / "tests" / "python" / f"{name}.py",
               "def test_extension():\n    from tessera import _C\n    assert _C.answer() == 42\n")
    for t in ("01_vector_add", "02_softmax", "03_layernorm", "04_matmul", "05_attention", "06_dropout"):
        _write(py / "tutorials" / f"{t}.py", "print('tutorial ran')\n")
    bundle = tmp_path / "bundle.tar.xz"
    with tarfile.open(bundle, "w:xz") as tar:
        tar.add(b, arcname=".")

    tools = tmp_path / "tools"
    # compute-sanitizer and ncu: skip their options, run the program.
    stand_in = ("#!/bin/sh\necho \"options: $*\"\nwhile [ $# -gt 0 ] && [ \"$1\" != python3 ]; do shift; done\n"
                "echo '0 errors'\nexec \"$@\"\n")
    for tool in ("compute-sanitizer", "ncu"):
        _write(tools / tool, stand_in, executable=True)
    os.symlink(sys.executable, tools / "python3")  # the script's python3: this one, with pytest
    # `python3 -m pybind11 --includes`, which Debian's python3 lacks (pybind11-dev has only the headers).
    _write(tmp_path / "pymods" / "pybind11" / "__init__.py", "")
    _write(tmp_path / "pymods" / "pybind11" / "__main__.py",
           "import sysconfig\nprint('-I' + sysconfig.get_paths()['include'] + ' -I/usr/include')\n")
    return bundle, tools


def _run(tmp_path, binaries, seconds, env_extra=None, bench=None, tools_first=None):
    """Runs the script on a fake bundle; with `bench` (a Python script's text), a copy of the script in a checkout
    whose benchmarks/bench_tutorials.py is that; with `tools_first`, that folder first on PATH. Returns (result,
    summary.txt's text, the out folder)."""
    bundle, tools = _bundle(tmp_path, binaries)
    script = SCRIPT
    if bench is not None:
        checkout = tmp_path / "checkout"
        _write(checkout / "scripts" / "gpu" / "run_on_gpu.sh", SCRIPT.read_text(), executable=True)
        _write(checkout / "benchmarks" / "bench_tutorials.py", bench)
        script = checkout / "scripts" / "gpu" / "run_on_gpu.sh"
    out = tmp_path / "out"
    path = f"{tools_first}:{tools}" if tools_first else str(tools)
    env = dict(os.environ, PATH=f"{path}:{os.environ['PATH']}", PYTHONPATH=str(tmp_path / "pymods"),
               TESSERA_GPU_OUT=str(out), TESSERA_GPU_SECONDS=str(seconds), **(env_extra or {}))
    env.pop("OUT", None)
    result = subprocess.run(["bash", str(script), str(bundle)], env=env, capture_output=True, text=True,
                            timeout=seconds + 120)
    summary = (out / "summary.txt").read_text() if (out / "summary.txt").exists() else ""
    return result, summary, out


def _line(summary, label):
    lines = [line for line in summary.splitlines() if line.startswith(label + " ")]
    assert len(lines) == 1, summary
    return lines[0][len(label):].strip()


def _logs(out):
    """{name: text} of logs.tar.gz's logs/ (the benchmark's results under bench/ too)."""
    with tarfile.open(out / "logs.tar.gz") as tar:
        return {m.name[len("logs/"):]: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}


def _returned(out):
    """The files the device tool would return: every file under out, at most two folders down."""
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())


def test_every_step_runs_and_is_logged(tmp_path):
    result, summary, out = _run(tmp_path, {"a_test": "echo '[  PASSED  ] 3 tests'"}, seconds=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert summary.startswith("== tessera GPU run: revision fake-revision")
    for label in ("python _C", "tessera-gpu-check", "memcheck 04_matmul", "racecheck 05_attention", "ncu 02_softmax",
                  "pytest (GPU files)", "a_test"):
        assert _line(summary, label) == "passed"
    # torch here has no GPU: bench_tutorials exits 2, which is no failure.
    assert _line(summary, "bench_tutorials") == "no torch or no GPU (see its log)"
    # The order: the kernels, the benchmarks, the tools, the tests.
    order = [summary.index(label) for label in ("python _C", "tessera-gpu-check", "bench_tutorials",
                                                "memcheck 04_matmul", "pytest (GPU files)", "a_test",
                                                "ncu 04_matmul")]
    assert order == sorted(order)
    # The device tool returns at most eight files: the summary and one archive of the logs (no benchmark ran).
    assert _returned(out) == ["logs.tar.gz", "summary.txt"]
    logs = _logs(out)
    assert {"python__C.log", "tessera-gpu-check.log", "bench_tutorials.log", "pytest__GPU_files_.log",
            "a_test.log", "memcheck_04_matmul.log", "racecheck_06_dropout.log", "ncu_02_softmax.log"} <= set(logs)
    assert "case vector_add: ok" in logs["tessera-gpu-check.log"]
    assert "tutorial ran" in logs["racecheck_06_dropout.log"]
    assert "--tool racecheck" in logs["racecheck_06_dropout.log"]
    assert "--clock-control none" in logs["ncu_02_softmax.log"]  # the clocks as found: the machine is shared
    assert "needs a CUDA GPU" in logs["bench_tutorials.log"] or "needs PyTorch" in logs["bench_tutorials.log"]
    assert result.stdout.rstrip().endswith(summary.splitlines()[-1])  # the output ends with the summary


def test_failures_and_the_budget(tmp_path):
    binaries = {"a_test": "echo '[  FAILED  ] Suite.Case (1 ms)'; exit 1", "b_test": "sleep 300", "c_test": "true"}
    result, summary, out = _run(tmp_path, binaries, seconds=45)
    assert result.returncode == 1
    assert _line(summary, "a_test").startswith("FAILED (exit 1; logs.tar.gz: a_test.log)")
    assert "Suite.Case" in _logs(out)["a_test.log"]
    assert _line(summary, "b_test").startswith("stopped by its time limit")
    assert _line(summary, "c_test") == "passed"  # it ran beside b_test
    # ncu, after them, would start with under 20 s of the budget left.
    assert _line(summary, "ncu 04_matmul") == "NOT run: the time budget is spent"


def test_the_kernel_check_runs_beside_the_extension_build_and_the_checks_all_at_once(tmp_path):
    """Stand-ins that wait for each other: run one after another, they would give up and fail."""
    meeting = tmp_path / "meeting"
    meeting.mkdir()
    # meet MINE THEIRS: says MINE has started, then waits (10 s at most) until THEIRS has.
    meet = (f"#!/bin/sh\ntouch {meeting}/$1\nfor i in $(seq 200); do [ -e {meeting}/$2 ] && exit 0; sleep 0.05; done\n"
            "echo \"$2 never started\"; exit 9\n")
    # gather NAME COUNT: says one more NAME has started, then waits until COUNT have.
    gather = (f"#!/bin/sh\ntouch {meeting}/$1.$$\nfor i in $(seq 200); do\n"
              f"  [ $(ls {meeting} | grep -c \"^$1\\.\") -ge $2 ] && exit 0; sleep 0.05\ndone\n"
              "echo \"not all $1 started\"; exit 9\n")
    first = tmp_path / "first"
    _write(first / "meet", meet, executable=True)
    _write(first / "gather", gather, executable=True)
    _write(first / "c++-meeting", "#!/bin/sh\nmeet compiler kernel-check || exit 9\nexec c++ \"$@\"\n", executable=True)
    # The twelve sanitizer runs and the test binary.
    _write(first / "compute-sanitizer", "#!/bin/sh\ngather check 13 || exit 9\n"
           "while [ $# -gt 0 ] && [ \"$1\" != python3 ]; do shift; done\nexec \"$@\"\n", executable=True)
    check = "meet kernel-check compiler && echo 'case vector_add: ok'"
    binaries = {"tessera-gpu-check": check, "a_test": "gather check 13"}
    result, summary, out = _run(tmp_path, binaries, seconds=300, tools_first=first,
                                env_extra={"CXX": "c++-meeting", "TESSERA_GPU_STEPS": "check,sanitizers,tests"})
    assert result.returncode == 0, result.stdout + result.stderr
    for label in ("python _C", "tessera-gpu-check", "memcheck 04_matmul", "racecheck 06_dropout", "a_test"):
        assert _line(summary, label) == "passed"
    assert len(list(meeting.glob("check.*"))) == 13


def test_the_checks_one_at_a_time(tmp_path):
    """TESSERA_GPU_ONE_AT_A_TIME=1: no sanitizer run or test binary starts while another runs."""
    first = tmp_path / "first"
    # alone: fails if another run holds the lock, else holds it a moment.
    alone = (f"#!/bin/sh\nmkdir {tmp_path}/running 2>/dev/null || {{ echo 'another check is running'; exit 9; }}\n"
             f"sleep 0.2\nrmdir {tmp_path}/running\n")
    _write(first / "alone", alone, executable=True)
    _write(first / "compute-sanitizer", "#!/bin/sh\nalone || exit 9\n"
           "while [ $# -gt 0 ] && [ \"$1\" != python3 ]; do shift; done\nexec \"$@\"\n", executable=True)
    result, summary, out = _run(tmp_path, {"a_test": "alone", "b_test": "alone"}, seconds=300, tools_first=first,
                                env_extra={"TESSERA_GPU_STEPS": "sanitizers,tests", "TESSERA_GPU_ONE_AT_A_TIME": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    for label in ("memcheck 04_matmul", "racecheck 06_dropout", "a_test", "b_test"):
        assert _line(summary, label) == "passed"


def test_a_benchmark_run_brings_back_its_table_and_csv(tmp_path):
    bench = """import argparse, pathlib
parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true")
parser.add_argument("--time-budget")
parser.add_argument("--csv")
parser.add_argument("--results")
options = parser.parse_args()
assert options.quick and float(options.time_budget) > 0
pathlib.Path(options.csv).write_text("benchmark,size\\nmatmul,4096\\n")
results = pathlib.Path(options.results)
results.mkdir(parents=True)
for name in ("matmul-f16.md", "matmul-f16.csv", "matmul-f16.png", "softmax.md", "softmax.csv", "softmax.png"):
    (results / name).write_text(name)
print("bench_tutorials: matmul 4096 f16 measured")
print("Tessera tutorial benchmarks (NVIDIA H100 80GB HBM3)")
print("| benchmark | size | Tessera |")
print("bench_tutorials: wrote 6 files")
print("| matmul | 4096 | 700 TFLOP/s |")
"""
    result, summary, out = _run(tmp_path, {}, seconds=300, bench=bench)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _line(summary, "bench_tutorials") == "passed"
    assert _returned(out) == ["bench.csv", "bench.md", "logs.tar.gz", "summary.txt"]
    table = (out / "bench.md").read_text()
    assert table.startswith("Tessera tutorial benchmarks (NVIDIA H100 80GB HBM3)")
    assert "| matmul | 4096 | 700 TFLOP/s |" in table and "bench_tutorials:" not in table
    assert (out / "bench.csv").read_text().startswith("benchmark,size")
    logs = _logs(out)
    assert logs["bench/matmul-f16.png"] == "matmul-f16.png" and "bench/softmax.md" in logs
    assert "| matmul | 4096 | 700 TFLOP/s |" in result.stdout  # the table is in the output too


def test_chosen_steps_only(tmp_path):
    result, summary, out = _run(tmp_path, {"a_test": "true"}, seconds=300,
                                env_extra={"TESSERA_GPU_STEPS": "check,tests"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(steps: check,tests)" in summary.splitlines()[0]
    assert _line(summary, "tessera-gpu-check") == "passed" and _line(summary, "a_test") == "passed"
    # Neither step needs the extension, so it is not built; nothing else ran.
    for label in ("python _C", "bench_tutorials", "memcheck", "ncu", "pytest"):
        assert label not in summary

    result, summary, out = _run(tmp_path / "again", {}, seconds=300, env_extra={"TESSERA_GPU_STEPS": "pytest"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert _line(summary, "python _C") == "passed" and _line(summary, "pytest (GPU files)") == "passed"
    assert "tessera-gpu-check" not in summary and "memcheck" not in summary


def test_an_unknown_step_is_named(tmp_path):
    result, summary, out = _run(tmp_path, {}, seconds=300, env_extra={"TESSERA_GPU_STEPS": "check,sanitiser"})
    assert result.returncode == 2
    assert "unknown step 'sanitiser' in TESSERA_GPU_STEPS" in result.stderr
    assert "check,bench,sanitizers,pytest,tests,ncu" in result.stderr
