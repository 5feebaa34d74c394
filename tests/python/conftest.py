"""Shared fixtures for the Python package's tests. Run with PYTHONPATH=<build>/python (ctest sets it)."""

import numpy as np
import pytest

import tessera


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def pytest_configure(config):
    # ctest runs the emulator's tests (-m sim) apart from the rest (-m "not sim"): tests/CMakeLists.txt.
    config.addinivalue_line("markers", "sim: runs kernels on the emulator (backend='sim')")


def pytest_sessionfinish(session, exitstatus):
    # ctest runs this suite as one test: collecting nothing (exit code 5) would pass silently, so it fails.
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


__all__ = ["tessera"]
