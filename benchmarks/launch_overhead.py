"""Launch overhead from Python versus C++: a cached launch of an empty kernel on the reference interpreter with
grid (1,), as the median over many batches of launches (microseconds per launch).

    PYTHONPATH=build/python python3 benchmarks/launch_overhead.py [--cpp build/benchmarks/launch_overhead]

The empty kernel (benchmarks/empty_kernel.h) is compiled with tessera.load on first use. The C++ numbers come
from the launch_overhead program of the same build, found next to the package unless --cpp names it. GPU
launches will be measured here once the Python package launches through the CUDA JIT.
"""

import argparse
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

import tessera

HERE = pathlib.Path(__file__).resolve().parent


def median_micros(launch, batches=101, per_batch=2000):
    """Median over batches of the mean time per call within a batch."""
    for _ in range(per_batch):
        launch()
    per_call = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(per_batch):
            launch()
        per_call.append((time.perf_counter() - start) / per_batch * 1e6)
    return statistics.median(per_call)


def python_measurements():
    kernel = tessera.load(HERE / "empty_kernel.h").empty
    x = np.zeros(128, np.float32)
    y = np.zeros(128, np.float32)
    launcher = kernel[(1,)]
    spec = kernel.specialization(BLOCK=128)
    args = [x, y, 128, 2.0]
    return [
        ("Python kernel[(1,)](x, y, n, alpha, BLOCK=128)", median_micros(lambda: kernel[(1,)](x, y, 128, 2.0, BLOCK=128))),
        ("Python launcher(...) with kernel[(1,)] kept", median_micros(lambda: launcher(x, y, 128, 2.0, BLOCK=128))),
        ("Python specialization.run((1,), args) (C++ arg conversion)", median_micros(lambda: spec.run((1,), args))),
    ]


def cpp_measurements(path):
    out = subprocess.run([str(path), "--raw"], check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        name, micros = line.rsplit("\t", 1)
        rows.append((name, float(micros)))
    return rows


def default_cpp_path():
    # build/python/tessera/ -> build/benchmarks/launch_overhead
    return pathlib.Path(tessera.__file__).resolve().parents[2] / "benchmarks" / "launch_overhead"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpp", type=pathlib.Path, default=None, help="the C++ launch_overhead program")
    options = parser.parse_args()
    cpp = options.cpp or default_cpp_path()
    if not cpp.exists():
        sys.exit(f"no C++ benchmark at {cpp}: build it (ninja -C build launch_overhead) or pass --cpp")

    rows = cpp_measurements(cpp) + python_measurements()
    baseline = rows[0][1]  # the C++ cached launch
    print(f"{'launch of an empty kernel, grid (1,), interpreter':<62} {'median (us)':>12} {'vs C++ cached':>14}")
    for name, micros in rows:
        print(f"{name:<62} {micros:>12.3f} {micros / baseline:>13.1f}x")


if __name__ == "__main__":
    main()
