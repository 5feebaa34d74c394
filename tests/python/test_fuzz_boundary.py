"""The boundary fuzzer's own machinery: a crashing case is reported with its seed and index and the run goes on;
guard bytes catch writes outside an array. (ctest runs the fuzzer itself as python_fuzz_boundary.)"""

import numpy as np

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
