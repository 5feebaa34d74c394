"""Shared helpers of the Python tutorials: argument parsing, result checks and the PASS/FAIL line.

The check is the one the C++ tutorials use (TutorialSupport.h): the worst |got - want| / (atol + rtol * |want|)
over all elements must be at most 1, and a NaN where the reference has none fails.
"""

import argparse

import numpy as np
import tessera

# Where a tutorial can run: the reference interpreter (default), eager mode, "cuda" (numpy arrays copied to the
# GPU and back by the CUDA JIT; scripts/run_tutorials.sh adds it when tessera._C.cuda_available()) or "sim" (the
# GPU code on the emulator, for the arch in TESSERA_SIM_ARCH, default sm_90a; scripts/run_tutorials.sh adds it
# without a GPU).
BACKENDS = tessera.kernel.BACKENDS


def launch_arch(backend):
    """The arch launches on `backend` compile for (None for the interpreter and eager mode)."""
    if backend == "cuda":
        return tessera._C.cuda_arch()
    return tessera.sim.runtime().arch if backend == "sim" else None


def worst_error(got, want, atol, rtol):
    got = np.asarray(got, dtype=np.float64).ravel()
    want = np.asarray(want, dtype=np.float64).ravel()
    if got.shape != want.shape:
        return float("inf")
    with np.errstate(invalid="ignore"):
        err = np.abs(got - want) / (atol + rtol * np.abs(want))
    err[np.isnan(got) != np.isnan(want)] = np.inf
    err[np.isnan(got) & np.isnan(want)] = 0.0
    return float(err.max(initial=0.0))


def check(what, got, want, atol, rtol):
    """Prints one result line like the C++ tutorials do; returns whether got is within tolerance of want."""
    err = worst_error(got, want, atol, rtol)
    ok = err <= 1
    print(f"  {what:<52} {'ok' if ok else 'FAILED'}  (worst error {err:.3g} of tolerance)")
    return ok


def parse_args(description, argv):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--backend", choices=BACKENDS, default="interpreter",
                        help="where the kernels run (default: the reference interpreter)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    return parser.parse_args(argv)


def finish(name, ok):
    print(f"{name} (python): {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def main(name, description, run_checks, argv):
    """A tutorial script's main: parses the arguments, runs the checks, and, on the emulator, prints each
    kernel's memory figures (coalescing: global load/store efficiency; shared-memory bank conflicts)."""
    args = parse_args(description, argv)
    with tessera.sim.collect() as reports:
        ok = run_checks(seed=args.seed, backend=args.backend)
    if reports:
        print(f"  memory figures per kernel ({name}, emulated):")
        print("\n".join("    " + line for line in tessera.sim.summary(reports).splitlines()))
    return finish(name, ok)
