"""The boundary fuzzer's own machinery: a crashing case is reported with its seed and index and the run goes on;
guard bytes catch writes outside an array; tessera.load cases come up and are judged. (ctest runs the fuzzer
itself as python_fuzz_boundary.)"""

import numpy as np
import tessera

import boundary_cases
import boundary_run
import fuzz_boundary


def test_a_crash_is_reported_with_seed_and_case_and_the_run_goes_on(monkeypatch):
    monkeypatch.setenv("FUZZ_BOUNDARY_ABORT_AT", "1")
    log = []
    ran, findings = fuzz_boundary.fuzz(seed=5, cases=3, minutes=None, timeout=60, log=log.append)
    assert ran == 3
    assert [index for index, _ in findings] == [1]
    assert "crash: worker exited with -6" in findings[0][1][0]
    assert any("--seed 5 --case 1" in line for line in log)


def test_cases_are_reproducible():
    kernels = boundary_cases.kernels_under_test()
    assert [boundary_cases.make_case(9, i, kernels) for i in range(50)] == \
           [boundary_cases.make_case(9, i, kernels) for i in range(50)]


def test_guards_catch_a_write_outside_the_array():
    spec = ("array", "numpy", "float32", (8,), "contiguous")
    arr, guard = boundary_run.build_value("x", spec, np.random.default_rng(0))
    arr[...] = 7  # inside: allowed
    assert not guard.outside_changed()
    np.ndarray((9,), np.float32, buffer=guard.arena, offset=guard.start)[8] = 1  # one element past the end
    assert guard.outside_changed()


def test_load_cases_come_up_and_are_judged(monkeypatch):
    kernels = boundary_cases.kernels_under_test()
    loads = [c for c in (boundary_cases.make_case(3, i, kernels) for i in range(600)) if c["op"] == "load"]
    assert 10 <= len(loads) <= 60
    assert {c["header"][0] for c in loads} == {"path", "odd", "contents"}
    assert {"extra_flags", "compiler"} <= {o for c in loads for o in c["offenders"]}
    for case in loads[:8]:
        problems, outcome, message = boundary_run.run_case(case, kernels)
        assert problems == [], (boundary_cases.describe(case), outcome, message)

    def raising(error):
        def load(*args, **kwargs):
            raise error
        return load
    named = next(c for c in loads if c["offenders"])
    monkeypatch.setattr(tessera, "load", raising(ValueError("bad input")))
    assert "names none of" in boundary_run.run_case(named, kernels)[0][0]
    monkeypatch.setattr(tessera, "load", raising(RuntimeError("Symlink loop")))
    assert boundary_run.run_case(named, kernels)[0] == ["raised RuntimeError: Symlink loop"]
    monkeypatch.setattr(tessera, "load", lambda *args, **kwargs: None)
    assert boundary_run.run_case(named, kernels)[0] == ["succeeded with a compiler that does not exist"]
