"""Benchmarking and testing helpers: do_bench times a function; perf_report and Benchmark (perf_report.py) sweep
and report benchmarks as CSV, Markdown and PNG plots."""

import statistics
import time

from .perf_report import Benchmark, Report, perf_report, write_report  # noqa: F401 (the public API)


def do_bench(fn, warmup=25, rep=100, device=None, flush_l2=True, return_mode="median"):
    """Times fn() and returns the median (or "mean"/"min"/"max") in milliseconds.

    On a GPU (device="cuda", or when torch sees one and device is None) each run is timed with CUDA events,
    and the L2 cache is flushed before every run by writing a 256 MB buffer, so runs don't benefit from the
    previous one's cache contents. Without a GPU it times fn() with a wall clock (for interpreter runs).
    warmup and rep are numbers of calls.
    """
    if return_mode not in ("median", "mean", "min", "max"):
        raise ValueError(f"unknown return_mode {return_mode!r}")
    torch = None
    if device != "cpu":
        try:
            import torch as _torch
            if _torch.cuda.is_available():
                torch = _torch
        except ImportError:
            pass
    if device == "cuda" and torch is None:
        raise RuntimeError("do_bench(device='cuda') needs torch with a CUDA device")
    for _ in range(warmup):
        fn()
    times = []
    if torch is not None:
        flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda") if flush_l2 else None
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(rep)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(rep)]
        torch.cuda.synchronize()
        for i in range(rep):
            if flush is not None:
                flush.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    else:
        for _ in range(rep):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return {"median": statistics.median, "mean": statistics.fmean, "min": min, "max": max}[return_mode](times)
