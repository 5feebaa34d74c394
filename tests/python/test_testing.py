"""tessera.testing.do_bench on the CPU path (interpreter launches)."""

import numpy as np
import pytest

import tessera
from tessera.testing import do_bench


def test_do_bench_calls_warmup_plus_rep_times_and_returns_milliseconds():
    calls = []
    result = do_bench(lambda: calls.append(1), warmup=3, rep=20, device="cpu")
    assert len(calls) == 23
    assert isinstance(result, float) and 0 <= result < 10


def test_do_bench_measures_time():
    import time
    ms = do_bench(lambda: time.sleep(0.002), warmup=1, rep=5, device="cpu")
    assert 1.9 <= ms < 50


class FakeClock:
    """A perf_counter that only advances when the benchmarked function says so (durations in ms)."""

    def __init__(self, durations_ms):
        self.now = 0.0
        self.durations = list(durations_ms)

    def perf_counter(self):
        return self.now

    def fn(self):
        self.now += self.durations.pop(0) / 1e3 if self.durations else 0.0


@pytest.mark.parametrize("mode, expected", [("median", 3.0), ("mean", 2.8), ("min", 1.0), ("max", 5.0)])
def test_do_bench_return_modes(monkeypatch, mode, expected):
    clock = FakeClock([100, 3, 1, 4, 1, 5])  # the first call is warmup and must not count
    monkeypatch.setattr(tessera.testing.time, "perf_counter", clock.perf_counter)
    assert do_bench(clock.fn, warmup=1, rep=5, device="cpu", return_mode=mode) == pytest.approx(expected)


def test_do_bench_on_an_interpreter_launch():
    x, y, out = (np.ones(256, np.float32) for _ in range(3))
    ms = do_bench(lambda: tessera.kernels.vector_add[2](x, y, out, 256, BLOCK=128), warmup=2, rep=10, device="cpu")
    assert 0 < ms < 1000
    np.testing.assert_array_equal(out, 2.0)


def test_do_bench_rejects_unknown_return_mode():
    with pytest.raises(ValueError, match="unknown return_mode 'p50'"):
        do_bench(lambda: None, return_mode="p50", device="cpu")


def test_do_bench_cuda_without_a_gpu_is_an_error():
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a CUDA device is present")
    except ImportError:
        pass
    with pytest.raises(RuntimeError, match="needs torch with a CUDA device"):
        do_bench(lambda: None, device="cuda")
