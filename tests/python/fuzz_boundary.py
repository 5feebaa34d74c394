#!/usr/bin/env python3
"""Fuzzes the Python boundary: kernel[grid](...) and kernel.compile(...) with random argument kinds, dtypes,
shapes, strides, grids, Const values, keywords and backends (boundary_cases.py makes the cases,
boundary_run.py runs and judges one), and tessera.load(...) with bad paths, argument kinds and header contents
(boundary_load.py).

Cases run in a worker process, so a segfault, an abort or a hang is reported with the seed and case index that
reproduce it; the driver then starts a fresh worker and goes on.

    PYTHONPATH=build/python /usr/bin/python3 tests/python/fuzz_boundary.py --minutes 20
    PYTHONPATH=build/python /usr/bin/python3 tests/python/fuzz_boundary.py --seed 7 --case 1234   # one case
"""

import argparse
import collections
import json
import os
import pathlib
import select
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import boundary_cases  # noqa: E402


def _kernels():
    return boundary_cases.kernels_under_test()


def _worker(seed):
    """Runs the case indices read from stdin, one JSON line of results per case on stdout."""
    import warnings
    warnings.simplefilter("ignore")
    import boundary_run
    kernels = _kernels()
    abort_at = os.environ.get("FUZZ_BOUNDARY_ABORT_AT")  # test_fuzz_boundary.py: a crash the driver must report
    for line in sys.stdin:
        index = int(line)
        if str(index) == abort_at:
            os.abort()
        case = boundary_cases.make_case(seed, index, kernels)
        problems, outcome, message = boundary_run.run_case(case, kernels)
        print(json.dumps({"index": index, "problems": problems, "outcome": outcome}), flush=True)


class _Worker:
    def __init__(self, seed):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker", "--seed", str(seed)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True, bufsize=1)

    def run(self, index, timeout):
        """The case's result dict, or ('crash' | 'hang', detail)."""
        self.proc.stdin.write(f"{index}\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.proc.kill()
            self.proc.wait()
            return "hang", f"no result after {timeout} s"
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            self.stderr.seek(0)
            tail = self.stderr.read().decode(errors="replace")[-2000:]
            return "crash", f"worker exited with {code} (negative: killed by that signal)\n{tail}"
        return json.loads(line)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


def fuzz(seed, cases, minutes, timeout, log=print):
    """Runs cases 0, 1, ... of `seed` until `cases` ran or `minutes` passed; returns (cases run, findings)."""
    kernels = _kernels()
    deadline = time.monotonic() + minutes * 60 if minutes else None
    outcomes, findings = collections.Counter(), []
    worker = _Worker(seed)
    index = 0
    while (cases is None or index < cases) and (deadline is None or time.monotonic() < deadline):
        result = worker.run(index, timeout)
        if isinstance(result, tuple):
            outcomes[result[0]] += 1
            findings.append((index, [f"{result[0]}: {result[1]}"]))
            worker = _Worker(seed)
        else:
            outcomes[result["outcome"]] += 1
            if result["problems"]:
                findings.append((index, result["problems"]))
        if findings and findings[-1][0] == index:
            log(f"FINDING seed {seed} case {index}:\n  " + "\n  ".join(findings[-1][1]))
            log(boundary_cases.describe(boundary_cases.make_case(seed, index, kernels)))
            log(f"  reproduce: {sys.executable} {__file__} --seed {seed} --case {index}")
        index += 1
    worker.close()
    log(f"seed {seed}: {index} cases, outcomes {dict(outcomes)}, {len(findings)} findings")
    return index, findings


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=None, help="default: from the clock (printed)")
    parser.add_argument("--cases", type=int, default=None, help="stop after this many cases")
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long")
    parser.add_argument("--timeout", type=float, default=60, help="seconds one case may take before it counts as a hang")
    parser.add_argument("--case", type=int, default=None, help="run this one case here and show it")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    if args.worker:
        _worker(seed)
        return 0
    if args.case is not None:
        import boundary_run
        kernels = _kernels()
        case = boundary_cases.make_case(seed, args.case, kernels)
        print(boundary_cases.describe(case))
        problems, outcome, message = boundary_run.run_case(case, kernels)
        print(f"outcome: {outcome} {message}")
        print("\n".join(problems) or "no problems")
        return 1 if problems else 0
    if args.cases is None and args.minutes is None:
        parser.error("give --cases, --minutes or --case")
    _, findings = fuzz(seed, args.cases, args.minutes, args.timeout)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
