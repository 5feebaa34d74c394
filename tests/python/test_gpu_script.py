"""scripts/gpu/run_on_gpu.sh on a fake bundle, without a GPU: its steps run in order within one time budget, each
logged under TESSERA_GPU_OUT with a name the device tool returns; a failed step fails the run, a step cut by the
budget is named, one that would start with under 20 s left is not run; no torch GPU (bench_tutorials' exit 2) is not
a failure. The fake bundle holds a tiny _C source (compiled the way the script compiles the real one), stand-ins
for tessera-gpu-check and the test binaries, and pytest files; compute-sanitizer and ncu are stand-ins too."""

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
    stand_in = "#!/bin/sh\nwhile [ $# -gt 0 ] && [ \"$1\" != python3 ]; do shift; done\necho '0 errors'\nexec \"$@\"\n"
    for tool in ("compute-sanitizer", "ncu"):
        _write(tools / tool, stand_in, executable=True)
    os.symlink(sys.executable, tools / "python3")  # the script's python3: this one, with pytest
    # `python3 -m pybind11 --includes`, which Debian's python3 lacks (pybind11-dev has only the headers).
    _write(tmp_path / "pymods" / "pybind11" / "__init__.py", "")
    _write(tmp_path / "pymods" / "pybind11" / "__main__.py",
           "import sysconfig\nprint('-I' + sysconfig.get_paths()['include'] + ' -I/usr/include')\n")
    return bundle, tools


def _run(tmp_path, binaries, seconds):
    bundle, tools = _bundle(tmp_path, binaries)
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{tools}:{os.environ['PATH']}", PYTHONPATH=str(tmp_path / "pymods"),
               TESSERA_GPU_OUT=str(out), TESSERA_GPU_SECONDS=str(seconds))
    env.pop("OUT", None)
    result = subprocess.run(["bash", str(SCRIPT), str(bundle)], env=env, capture_output=True, text=True,
                            timeout=seconds + 120)
    summary = (out / "summary.txt").read_text()
    return result, summary, out


def _line(summary, label):
    lines = [line for line in summary.splitlines() if line.startswith(label + " ")]
    assert len(lines) == 1, summary
    return lines[0][len(label):].strip()


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
                                                "memcheck 04_matmul", "pytest (GPU files)", "a_test")]
    assert order == sorted(order)
    names = {p.name for p in out.iterdir()}
    assert {"python__C.log", "tessera-gpu-check.log", "bench_tutorials.log", "pytest__GPU_files_.log",
            "a_test.log", "memcheck_04_matmul.log"} <= names
    assert "case vector_add: ok" in (out / "tessera-gpu-check.log").read_text()
    assert "needs a CUDA GPU" in (out / "bench_tutorials.log").read_text() or \
        "needs PyTorch" in (out / "bench_tutorials.log").read_text()
    assert result.stdout.rstrip().endswith(summary.splitlines()[-1])  # the output ends with the summary


def test_failures_and_the_budget(tmp_path):
    binaries = {"a_test": "echo '[  FAILED  ] Suite.Case (1 ms)'; exit 1", "b_test": "sleep 300", "c_test": "true"}
    result, summary, out = _run(tmp_path, binaries, seconds=45)
    assert result.returncode == 1
    assert _line(summary, "a_test").startswith("FAILED (exit 1;")
    assert "Suite.Case" in (out / "a_test.log").read_text()
    assert _line(summary, "b_test").startswith("stopped by its time limit")
    assert _line(summary, "c_test") == "NOT run: the time budget is spent"
