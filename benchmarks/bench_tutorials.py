#!/usr/bin/env python3
"""Tutorial kernels on the GPU: Tessera vs torch (cuBLAS for matmul, scaled_dot_product_attention for attention)
vs Triton, in one run on one GPU.

    PYTHONPATH=build/python python3 benchmarks/bench_tutorials.py [--quick] [--only softmax,matmul] [--csv out.csv]
                                                                  [--results DIR]

For each tutorial it sweeps sizes, checks every provider's result against a float64 (float32 for matmul)
reference on fresh random inputs (a wrong result prints FAIL instead of a number), then times it with
tessera.testing.do_bench (median, L2 flushed before each run). Vector add, softmax and layer norm are reported in
GB/s and as a fraction of the device copy bandwidth measured at the start of the run; matmul in TFLOP/s and as
a fraction of torch's (cuBLAS) rate at the same size and dtype; attention forward in TFLOP/s and as a fraction
of Triton's (a flash-attention kernel, benchmarks/triton_reference.py); the attention backward in TFLOP/s and as a
fraction of torch's (scaled_dot_product_attention's backward). The table is Markdown, with a header naming the
GPU, driver, versions and date, ready to paste into tutorials/README.md. --results DIR also writes, per benchmark
(and matmul or attention variant), a CSV, a Markdown table and a PNG plot of rate against size (tessera.testing.write_report).
See benchmarks/README.md.

Exit status: 0 when every result was right, 1 when any was wrong or failed to run, 2 when torch or a CUDA
GPU (or the tessera package) is missing. Importing this module imports neither torch nor triton nor tessera.
"""

import argparse
import csv
import dataclasses
import datetime
import functools
import os
import pathlib
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent

BENCHMARKS = ("vector_add", "softmax", "layernorm_fwd", "layernorm_bwd", "matmul", "attention", "attention_bwd")
# The order they run in: the goals first, so that a run cut short by its time budget (--time-budget; a lent
# GPU's calls are short) has measured what matters most. The table keeps BENCHMARKS' order.
RUN_ORDER = ("matmul", "attention", "softmax", "layernorm_fwd", "layernorm_bwd", "attention_bwd", "vector_add")
PROVIDERS = ("tessera", "torch", "triton")
PROVIDER_TITLES = {"tessera": "Tessera", "torch": "torch", "triton": "Triton"}

# Cells that are not a measurement.
FAIL = "FAIL"    # the result was wrong
ERROR = "error"  # the launch raised (the reason is in the notes under the table)
NA = "n/a"       # the provider has no such kernel (e.g. Tessera's matmul takes f16 only)

GBPS = "GB/s"
TFLOPS = "TFLOP/s"
F32_BYTES = 4

ROWS = 4096  # rows of the softmax and layer norm problems
SWEEPS = {
    "vector_add": {"full": [(1 << p,) for p in (20, 22, 24, 26, 28)], "quick": [(1 << 20,), (1 << 24,)]},
    "softmax": {"full": [(ROWS, c) for c in (256, 512, 1024, 2048, 4096, 8192, 16384)],
                "quick": [(ROWS, 1024), (ROWS, 8192)]},
    "layernorm_fwd": {"full": [(ROWS, c) for c in (512, 1024, 2048, 4096, 8192, 16384)],
                      "quick": [(ROWS, 1024), (ROWS, 8192)]},
    "layernorm_bwd": {"full": [(ROWS, c) for c in (512, 1024, 2048, 4096, 8192)], "quick": [(ROWS, 1024), (ROWS, 4096)]},
    # 4095: rows of no alignment, every copy into shared memory an element wide (benchmarks/README.md, "Rows of no
    # alignment"); the TMA matmul, which needs 16-byte rows, sits it out.
    "matmul": {"full": [(s, s, s) for s in (512, 1024, 2048, 4095, 4096, 8192)],
               "quick": [(1024,) * 3, (4096,) * 3]},
    # (sequence length, head dim); batch x ATTENTION_HEADS heads with ATTENTION_TOKENS tokens per head in all.
    "attention": {"full": [(n, d) for n in (512, 1024, 2048, 4096, 8192, 16384) for d in (64, 128)],
                  "quick": [(1024, 64), (4096, 128)]},
    # The backward at the forward's sizes: dQ, dK and dV of the same problems.
    "attention_bwd": {"full": [(n, d) for n in (512, 1024, 2048, 4096, 8192, 16384) for d in (64, 128)],
                      "quick": [(1024, 64), (4096, 128)]},
}
MATMUL_DTYPES = ("f16", "bf16")
ATTENTION_HEADS = 16
ATTENTION_TOKENS = 16384  # batch = ATTENTION_TOKENS // sequence length: the same work per head at every length

# Targets (issue 5), reported against, never assumed.
ROW_TARGET = 0.85     # softmax and layer norm forward: fraction of copy bandwidth, at the largest rows swept
MATMUL_TARGET = 0.60  # matmul f16/bf16: fraction of cuBLAS at M = N = K = 4096
MATMUL_TARGET_SIZE = 4096
ATTENTION_TARGET = 1.0  # attention forward: fraction of Triton's flash attention, at every size (issue 12)

# How long the first launch of each measurement may run before the sweep takes it for a kernel that never ends
# ($TESSERA_GPU_TIMEOUT overrides it). Compiles happen before the launch and do not count.
LAUNCH_TIMEOUT_SECONDS = 60
COPY_BUFFER_BYTES = 512 << 20  # the bandwidth reference: one device-to-device copy of this many bytes
# Tessera's matmul is autotuned (tessera.autotune) over these (BM, BN, BK, num_warps, num_stages) per M, N, K: the
# standard configurations of issue 12 and the former fixed default. --tessera-matmul fixes one instead (3 stages).
MATMUL_TUNE_CONFIGS = [(128, 128, 64, 4, 3), (128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (64, 256, 32, 4, 4),
                       (128, 64, 64, 4, 4), (64, 64, 32, 4, 4), (128, 128, 32, 8, 3)]
# ... and these as persistent kernels (persistent=True: programs loop over the tiles), which the tuner weighs
# against the rest.
MATMUL_PERSISTENT_TUNE_CONFIGS = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3)]
DEFAULT_TESSERA_ATTENTION = (128, 64, 8)  # BM, BN, num_warps
# The full sweep autotunes the attention forward on both sides over these (BM, BN, num_warps, num_stages), per
# sequence length, head dim and causality, as Triton's fused-attention tutorial tunes its kernel: issue 12's
# attention configurations and the smaller tiles Triton's tutorial also tries. BM is a multiple of BN in each (the
# causal loop of Triton's kernel walks the diagonal block BN keys at a time). The quick sweep keeps each side's one
# config (DEFAULT_TESSERA_ATTENTION; triton_reference.ATTENTION_CONFIGS), since compiles are most of its cost;
# --tessera-attention fixes both sides to one.
ATTENTION_TUNE_CONFIGS = [(128, 64, 8, 3), (128, 128, 8, 3), (128, 64, 4, 3), (64, 64, 4, 3), (128, 32, 4, 3),
                          (64, 32, 4, 4)]
# The backward's (BM, BN, num_warps) for attention_bwd_dkdv and attention_bwd_dq, per head dim: blocks whose PTX
# does not spill (kernel_resources' attention_bwd_* rows). At head dim 128 dkdv walks 32 query rows at a time.
ATTENTION_BWD_BLOCKS = {64: ((64, 128, 8), (128, 64, 8)), 128: ((32, 128, 8), (128, 64, 8))}
# On sm_90 GPUs, the matmul rows "<dtype> TMA" time the descriptor matmuls (TMA copies, wgmma; C in the input
# type) over these (BM, BN, BK, num_warps, num_stages, warp_specialize, persistent, tma_store, ping_pong): with
# tma_store C leaves through a descriptor too (matmul_desc_<dtype>_tma_c: a TMA store), else through pointers
# (matmul_desc_<dtype>_out); with ping_pong two groups of num_warps consumer warps each run every other tile
# (implies warp_specialize and persistent). They are tuned here, not by tessera.autotune(descriptor_blocks=...), so
# that every config's result is checked and its rate noted: which variants are right and which pay is what a first
# GPU run must tell. Shared memory beyond the GPU's is refused at the launch and noted; the fastest right one is
# reported. The last two are CUTLASS's usual H100 kernel: 128x256 tiles, two consumer warpgroups, persistent.
TMA_MATMUL_CONFIGS = [(128, 128, 64, 4, 3, False, False, False, False), (128, 128, 64, 8, 3, False, False, False, False),
                      (128, 256, 64, 8, 3, False, False, False, False), (128, 128, 64, 4, 4, True, False, False, False),
                      (128, 128, 64, 8, 3, True, False, False, False), (128, 256, 64, 8, 3, True, False, False, False),
                      (128, 128, 64, 4, 3, True, True, False, False), (128, 128, 64, 8, 3, True, True, False, False),
                      (128, 128, 64, 8, 3, True, False, True, False), (128, 256, 64, 8, 3, True, False, True, False),
                      (128, 128, 64, 8, 3, True, True, True, False), (128, 128, 64, 4, 3, True, True, False, True),
                      (128, 128, 64, 4, 4, True, True, False, True), (128, 128, 64, 4, 3, True, True, True, True),
                      (128, 256, 64, 8, 3, True, True, False, False), (128, 256, 64, 8, 3, True, True, True, False)]
TMA_MATMUL_TARGET = 1.0  # f16/bf16 TMA matmul: fraction of cuBLAS at M = N = K = 4096 and 8192 (issue 12)
TMA_MATMUL_TARGET_SIZES = (4096, 8192)


# --- sizes, work and rates (pure) ------------------------------------------------------------------------------

def sweep(benchmark, quick=False):
    """The problem sizes of a benchmark: (n,) for vector add, (rows, cols) for softmax and layer norm, (M, N, K),
    (sequence length, head dim) for attention."""
    return list(SWEEPS[benchmark]["quick" if quick else "full"])


def size_label(benchmark, size):
    if benchmark == "vector_add":
        return f"n={size[0]}"
    if benchmark == "matmul":
        m, n, k = size
        return f"M=N=K={m}" if m == n == k else f"M={m} N={n} K={k}"
    if benchmark in ("attention", "attention_bwd"):
        seq_len, head_dim = size
        return f"N={seq_len} ({attention_batch(seq_len)}x{ATTENTION_HEADS} heads)"  # d: in the dtype column
    return f"{size[0]}x{size[1]}"


def bytes_moved(benchmark, size):
    """The least memory traffic of one call: every input read once and every output written once (f32). Scratch
    buffers and re-reads that an implementation chooses (layer norm's passes over a row) don't count."""
    if benchmark == "vector_add":
        return 3 * size[0] * F32_BYTES
    if benchmark not in ("softmax", "layernorm_fwd", "layernorm_bwd"):
        raise ValueError(f"{benchmark} is not a bandwidth benchmark")
    rows, cols = size
    if benchmark == "softmax":
        return 2 * rows * cols * F32_BYTES
    if benchmark == "layernorm_fwd":  # x in, y out, weight and bias in, mean and rstd out
        return (2 * rows * cols + 2 * cols + 2 * rows) * F32_BYTES
    return (3 * rows * cols + 3 * cols + 2 * rows) * F32_BYTES  # x, dy in, dx out; w in, dw, db out; mean, rstd in


def plot_x(benchmark, size):
    """The size a plot puts on its x axis: n, the row length, or M (= N = K in the sweeps)."""
    return size[1] if benchmark in ("softmax", "layernorm_fwd", "layernorm_bwd") else size[0]


def plot_x_label(benchmark):
    if benchmark == "vector_add":
        return "n (elements)"
    if benchmark == "matmul":
        return "M = N = K"
    if benchmark in ("attention", "attention_bwd"):
        return f"sequence length ({ATTENTION_TOKENS} tokens x {ATTENTION_HEADS} heads)"
    return f"columns ({ROWS} rows)"


def matmul_flops(m, n, k):
    return 2 * m * n * k


def attention_batch(seq_len):
    return max(1, ATTENTION_TOKENS // seq_len)


def attention_flops(seq_len, head_dim, causal=False):
    """The two matmuls (Q K^T and P V) of every head; causal attention computes about half of the scores."""
    flops = 4 * attention_batch(seq_len) * ATTENTION_HEADS * seq_len * seq_len * head_dim
    return flops // 2 if causal else flops


def attention_bwd_flops(seq_len, head_dim, causal=False):
    """The backward's five matmuls per head (S recomputed, dV, dP, dQ, dK): 2.5 times the forward's two, as
    FlashAttention counts them."""
    return attention_flops(seq_len, head_dim, causal) * 5 // 2


def unit_of(benchmark):
    return TFLOPS if benchmark in ("matmul", "attention", "attention_bwd") else GBPS


def work(benchmark, size, causal=False):
    """What the rate divides: flops for matmul and attention, bytes for the others."""
    if benchmark == "matmul":
        return matmul_flops(*size)
    if benchmark == "attention":
        return attention_flops(*size, causal)
    if benchmark == "attention_bwd":
        return attention_bwd_flops(*size, causal)
    return bytes_moved(benchmark, size)


def rate(amount, ms, unit):
    """GB/s from bytes or TFLOP/s from flops, given a time in milliseconds."""
    if not ms > 0:
        raise ValueError(f"time must be positive, got {ms!r} ms")
    scale = 1e6 if unit == GBPS else 1e9 if unit == TFLOPS else None
    if scale is None:
        raise ValueError(f"unknown unit {unit!r}")
    return amount / ms / scale


def copy_bandwidth(buffer_bytes, ms):
    """GB/s of a device-to-device copy: it reads and writes buffer_bytes each."""
    return rate(2 * buffer_bytes, ms, GBPS)


def fraction(value, reference):
    """value / reference when both are measurements, else None."""
    if isinstance(value, str) or isinstance(reference, str) or value is None or not reference:
        return None
    return value / reference


def next_power_of_2(n):
    return 1 << (int(n) - 1).bit_length()


def num_warps_for(block):
    """As the tutorials choose: more warps for longer rows."""
    return 16 if block >= 8192 else 8 if block >= 2048 else 4


def layernorm_fwd_block(cols):
    return min(next_power_of_2(cols), 4096)


def layernorm_bwd_rows_per_program(rows, sm_count):
    """About four programs per SM, each summing dw/db over a run of consecutive rows."""
    programs = max(1, min(rows, 4 * sm_count))
    return -(-rows // programs)


def _parse_powers_of_two(text, names):
    """'a,b,...' -> a tuple of len(names) positive powers of two, or ValueError naming what was expected."""
    parts = text.split(",")
    if len(parts) != len(names):
        raise ValueError(f"expected {','.join(names)}, got {text!r}")
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        count = {3: "three", 4: "four"}.get(len(names), str(len(names)))
        raise ValueError(f"expected {count} integers {','.join(names)}, got {text!r}") from None
    if any(v <= 0 or v & (v - 1) for v in values):
        raise ValueError(f"{', '.join(names[:-1])} and {names[-1]} must be positive powers of two, got {text!r}")
    return values


def parse_matmul_config(text):
    """'BM,BN,BK,num_warps' -> a tuple of four positive ints (block sizes and warps powers of two)."""
    return _parse_powers_of_two(text, ("BM", "BN", "BK", "num_warps"))


def parse_attention_config(text):
    """'BM,BN,num_warps' -> a tuple of three positive powers of two."""
    return _parse_powers_of_two(text, ("BM", "BN", "num_warps"))


# --- results and the table (pure) ------------------------------------------------------------------------------

@dataclasses.dataclass
class Row:
    benchmark: str
    size: str
    dtype: str
    unit: str
    values: dict  # provider -> rate (float) or FAIL / ERROR / NA
    reference: object = None   # copy bandwidth (GB/s) or torch's cuBLAS rate (TFLOP/s); None or a str if unknown
    reference_name: str = ""   # "copy" or "cuBLAS"
    cols: int = 0              # the row length of softmax / layer norm problems, for the targets
    x: int = 0                 # the size on a plot's x axis (plot_x)

    def fraction(self, provider):
        return fraction(self.values.get(provider), self.reference)


def format_value(value, unit):
    if isinstance(value, str):
        return value
    if value is None:
        return "-"
    return f"{value:.1f}" if unit == TFLOPS else f"{value:.0f}"


def format_fraction(f):
    return "-" if f is None else f"{100 * f:.0f}%"


TABLE_COLUMNS = ("benchmark", "size", "dtype", "unit", *[PROVIDER_TITLES[p] for p in PROVIDERS],
                 *[f"{PROVIDER_TITLES[p]} / ref" for p in PROVIDERS], "ref")


def table_cells(row):
    ref = row.reference_name
    if row.reference_name and not isinstance(row.reference, str) and row.reference is not None:
        ref = f"{row.reference_name} {format_value(row.reference, row.unit)}"
    return [row.benchmark, row.size, row.dtype, row.unit, *[format_value(row.values.get(p), row.unit) for p in PROVIDERS],
            *[format_fraction(row.fraction(p)) for p in PROVIDERS], ref]


def format_table(rows):
    """A Markdown table, columns padded so it also reads well in a terminal. Numbers are right-aligned."""
    body = [table_cells(r) for r in rows]
    widths = [max([len(h)] + [len(cells[i]) for cells in body]) for i, h in enumerate(TABLE_COLUMNS)]
    numeric = [i >= 4 for i in range(len(TABLE_COLUMNS))]

    def line(cells):
        padded = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)]
        return "| " + " | ".join(padded) + " |"

    separator = "|" + "|".join(("-" * (w + 1) + ":") if num else ("-" * (w + 2))
                               for w, num in zip(widths, numeric)) + "|"
    return "\n".join([line(TABLE_COLUMNS), separator] + [line(cells) for cells in body])


CSV_FIELDS = ("benchmark", "size", "dtype", "unit", *PROVIDERS, "reference_name", "reference",
              *[f"{p}_fraction" for p in PROVIDERS])


def csv_records(rows):
    records = []
    for r in rows:
        record = {"benchmark": r.benchmark, "size": r.size, "dtype": r.dtype, "unit": r.unit,
                  "reference_name": r.reference_name, "reference": "" if r.reference is None else r.reference}
        for p in PROVIDERS:
            record[p] = r.values.get(p, "")
            f = r.fraction(p)
            record[f"{p}_fraction"] = "" if f is None else round(f, 4)
        records.append(record)
    return records


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(csv_records(rows))


def plot_name(benchmark, dtype):
    """A file name: matmul and attention have one plot per dtype (attention: per head dim and causal flag too)."""
    if benchmark in ("matmul", "attention", "attention_bwd"):
        return f"{benchmark}-" + dtype.replace(" ", "-").replace("=", "")
    return benchmark


def write_results(rows, folder):
    """Per benchmark (and matmul dtype): <name>.csv, .md and .png in folder, each provider's rate against size.
    A FAIL, error or n/a cell is a gap in the plot and an empty (CSV) or "-" (Markdown) cell. Returns the paths."""
    from tessera.testing import Benchmark, Report, write_report

    groups = {}
    for r in rows:
        groups.setdefault((r.benchmark, r.dtype), []).append(r)
    written = []
    for (benchmark, dtype), group in groups.items():
        spec = Benchmark(x_names=[plot_x_label(benchmark)], x_vals=[r.x for r in group], line_arg="provider",
                         line_vals=list(PROVIDERS), line_names=[PROVIDER_TITLES[p] for p in PROVIDERS],
                         plot_name=plot_name(benchmark, dtype), ylabel=f"{group[0].unit}, {dtype}", x_log=True)
        results = [(r.x, [None if isinstance(r.values.get(p), str) else r.values.get(p) for p in PROVIDERS])
                   for r in group]
        written.extend(write_report(Report.from_results(spec, results), folder).values())
    return written


def header_lines(info):
    """The run's context, as Markdown lines: info has date, gpu, sm_count, driver, cuda, torch, triton, tessera,
    copy_gbps, quick."""
    copy = info.get("copy_gbps")
    copy_text = f"{copy:.0f} GB/s" if isinstance(copy, (int, float)) else str(copy)
    return [
        f"Tessera tutorial benchmarks, {info['date']}{' (--quick sweep)' if info.get('quick') else ''}",
        "",
        f"* GPU: {info['gpu']} ({info['sm_count']} SMs), driver {info['driver']}, CUDA {info['cuda']} (torch's)",
        f"* torch {info['torch']}, triton {info['triton']}, tessera {info['tessera']}",
        f"* device copy bandwidth: {copy_text} ({COPY_BUFFER_BYTES >> 20} MiB device-to-device copy, "
        "read + write bytes)",
        "* times: tessera.testing.do_bench, median of 100 runs, L2 flushed before each; GB/s count each input "
        "read once and each output written once",
    ]


def target_lines(rows):
    """One line per target of issue 5: met, missed, or why it could not be judged."""
    lines = []
    for bench, title in (("softmax", "softmax"), ("layernorm_fwd", "layer norm forward")):
        candidates = [r for r in rows if r.benchmark == bench]
        if not candidates:
            continue
        largest = max(candidates, key=lambda r: r.cols)
        lines.append(_target_line(f"{title} at {largest.size} >= {ROW_TARGET:.0%} of copy bandwidth",
                                  largest.values.get("tessera"), largest.fraction("tessera"), ROW_TARGET))
    for dtype in MATMUL_DTYPES:
        label = f"M=N=K={MATMUL_TARGET_SIZE}"
        for r in rows:
            if r.benchmark == "matmul" and r.dtype == dtype and r.size == label:
                lines.append(_target_line(f"matmul {dtype} at {label} >= {MATMUL_TARGET:.0%} of cuBLAS",
                                          r.values.get("tessera"), r.fraction("tessera"), MATMUL_TARGET))
    for dtype in MATMUL_DTYPES:
        for size in TMA_MATMUL_TARGET_SIZES:
            label = f"M=N=K={size}"
            for r in rows:
                if r.benchmark == "matmul" and r.dtype == f"{dtype} TMA" and r.size == label:
                    lines.append(_target_line(f"matmul {dtype} TMA at {label} >= {TMA_MATMUL_TARGET:.0%} of cuBLAS "
                                              "(issue 12)", r.values.get("tessera"), r.fraction("tessera"),
                                              TMA_MATMUL_TARGET))
    # Judged on the worst row: the goal holds at every size. The pointer kernel (attention_fwd), the one through
    # descriptors (rows "... descriptors") and that one warp-specialized each on their own.
    for suffix, title in reversed(ATTENTION_KINDS):
        attention = [r for r in rows if r.benchmark == "attention" and attention_kind(r.dtype) == suffix]
        if attention:
            lines.append(_worst_attention_line(attention, title))
    return lines


# The attention kernels whose rows are judged apart, by the suffix of the rows' dtype (the longest first).
ATTENTION_KINDS = ((" descriptors overlapped warp-specialized",
                    "attention through descriptors, softmax overlapped with the next Q K^T, warp-specialized"),
                   (" descriptors overlapped", "attention through descriptors, softmax overlapped with the next Q K^T"),
                   (" descriptors warp-specialized persistent",
                    "attention through descriptors, warp-specialized and persistent"),
                   (" descriptors warp-specialized without turns",
                    "attention through descriptors, warp-specialized, consumer warpgroups not taking turns"),
                   (" descriptors warp-specialized", "attention through descriptors, warp-specialized"),
                   (" descriptors", "attention through descriptors"), ("", "attention"))


def attention_kind(dtype):
    return next(suffix for suffix, _ in ATTENTION_KINDS if dtype.endswith(suffix))


def _worst_attention_line(attention, title):
    judged = [r for r in attention if r.fraction("tessera") is not None]
    what = f"{title} at every size >= {ATTENTION_TARGET:.0%} of Triton"
    if len(judged) < len(attention):
        unjudged = next(r for r in attention if r.fraction("tessera") is None)
        return _target_line(what + f" (first unjudged: {unjudged.size} {unjudged.dtype})",
                            unjudged.values.get("tessera"), None, ATTENTION_TARGET)
    worst = min(judged, key=lambda r: r.fraction("tessera"))
    return _target_line(what + f" (worst: {worst.size} {worst.dtype})", worst.values.get("tessera"),
                        worst.fraction("tessera"), ATTENTION_TARGET)


def _target_line(what, value, achieved, target):
    if achieved is None:
        return f"* {what}: not judged (Tessera: {value if isinstance(value, str) else 'no result'})"
    return f"* {what}: {'met' if achieved >= target else 'missed'} ({100 * achieved:.0f}%)"


def notes_lines(notes):
    """{(provider, message): [problems]} -> one line per message, naming where it happened (the same launch error
    at every size is one line)."""
    lines = []
    for (provider, message), whats in notes.items():
        where = ", ".join(whats[:3]) + (f" and {len(whats) - 3} more" if len(whats) > 3 else "")
        lines.append(f"* {PROVIDER_TITLES[provider]}, {where}: {message}")
    return lines


def failed(rows):
    """Whether any provider's result was wrong or failed to run."""
    return any(v in (FAIL, ERROR) for r in rows for v in r.values.values())


def parse_only(text):
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown or not names:
        problem = f"unknown benchmark {unknown[0]!r}" if unknown else "no benchmark named"
        raise argparse.ArgumentTypeError(f"{problem}; choose from {', '.join(BENCHMARKS)}")
    return [b for b in BENCHMARKS if b in names]  # table order, duplicates dropped


def _matmul_config_arg(text):
    try:
        return parse_matmul_config(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _attention_config_arg(text):
    try:
        return parse_attention_config(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small sweep (two sizes per tutorial)")
    parser.add_argument("--only", type=parse_only, default=list(BENCHMARKS), metavar="NAMES",
                        help=f"comma-separated subset of: {', '.join(BENCHMARKS)}")
    parser.add_argument("--csv", type=pathlib.Path, default=None, metavar="PATH", help="also write the rows as CSV")
    parser.add_argument("--results", type=pathlib.Path, default=None, metavar="DIR",
                        help="also write a CSV, a Markdown table and a PNG plot per benchmark into DIR")
    parser.add_argument("--tessera-backend", default="cuda", help="the backend= of Tessera launches (default cuda)")
    parser.add_argument("--tessera-matmul", type=_matmul_config_arg, default=None, metavar="BM,BN,BK,WARPS",
                        help="Tessera matmul tile sizes and warps (default: autotuned over MATMUL_TUNE_CONFIGS)")
    parser.add_argument("--tessera-attention", type=_attention_config_arg, default=None, metavar="BM,BN,WARPS",
                        help="attention forward blocks and warps for Tessera and Triton alike (default: both "
                             "autotuned over ATTENTION_TUNE_CONFIGS; with --quick, Tessera at "
                             f"{','.join(map(str, DEFAULT_TESSERA_ATTENTION))} and Triton at its own)")
    parser.add_argument("--time-budget", type=_seconds_arg, default=None, metavar="SECONDS",
                        help="start no benchmark size once this many seconds have passed (the rest is named under "
                             "the table); SIGTERM also stops the sweep and prints what was measured")
    return parser.parse_args(argv)


def _seconds_arg(text):
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return seconds


class SweepStopped(BaseException):
    """SIGTERM during the sweep (a time limit around the whole run): the rows so far are still reported. Not an
    Exception, so that the handlers that turn a failed launch into an "error" cell let it through."""


class LaunchNeverFinished(SweepStopped):
    """A launch still running after its time limit (measure): the GPU goes on running it and every later launch
    would wait behind it, so the sweep stops there, reporting what it measured, and the run fails."""


def run_sweep(ctx, options, runners, clock, on_rows=lambda rows: None):
    """Runs every (benchmark, size) of the sweep, in RUN_ORDER, until options.time_budget seconds (of `clock`) have
    passed or a SweepStopped is raised. Returns the rows in table order (BENCHMARKS') and the labels of the sizes
    not run. `on_rows(rows)` is called after each size (the CSV is rewritten there, so that a run killed outright
    still leaves what it measured)."""
    start = clock()
    planned = [(b, size) for b in RUN_ORDER if b in options.only for size in sweep(b, options.quick)]
    labels = [f"{b} {size_label(b, size)}" for b, size in planned]
    rows = []
    for i, (benchmark, size) in enumerate(planned):
        if options.time_budget is not None and clock() - start >= options.time_budget:
            return _table_order(rows), labels[i:]
        print(f"bench_tutorials: {labels[i]}", file=sys.stderr, flush=True)
        try:
            rows.extend(runners[benchmark](ctx, size))
            on_rows(rows)
        except LaunchNeverFinished:
            ctx.hung = True
            return _table_order(rows), labels[i:]
        except SweepStopped:
            return _table_order(rows), labels[i:]
    return _table_order(rows), []


def _table_order(rows):
    return sorted(rows, key=lambda r: BENCHMARKS.index(r.benchmark))  # stable: sizes stay in sweep order


def _stop_on_sigterm(signum, frame):
    raise SweepStopped()


# --- running on the GPU ----------------------------------------------------------------------------------------

class Context:
    """What the GPU part needs: the libraries, the copy bandwidth, the notes printed under the table."""

    def __init__(self, torch, tessera, do_bench, triton_ref, options):
        self.torch = torch
        self.tessera = tessera
        self.do_bench = do_bench
        self.triton_ref = triton_ref
        self.options = options
        self.sm_count = torch.cuda.get_device_properties(0).multi_processor_count
        self.copy_gbps = None
        self.launch_timeout = options.launch_timeout  # main reads it: launch_timeout_seconds()
        self.hung = False  # a launch never finished (run_sweep): the GPU is still busy with it
        self._notes = {}  # (provider, message) -> the problems it happened for, in first-seen order
        self.matmul = None  # Tessera's autotuned matmul (matmul_tuner), made on first use
        self.attention = {}  # Tessera's autotuned attention forwards (attention_tuner), by kernel name
        # TMA and wgmma: the TMA matmul rows (TMA_MATMUL_CONFIGS) run on sm_90 only.
        self.hopper = tuple(torch.cuda.get_device_capability(0)) == (9, 0)

    def note(self, provider, what, message):
        whats = self._notes.setdefault((provider, message), [])
        if what not in whats:
            whats.append(what)

    def notes(self):
        return notes_lines(self._notes)


def _first_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def check_outputs(torch, got, expected, tolerances):
    """None when every output is within atol + rtol * |expected| of the reference, else what went wrong."""
    for i, (g, e, (atol, rtol)) in enumerate(zip(got, expected, tolerances)):
        g = g.reshape(e.shape).to(e.dtype)
        bad = ~((g - e).abs() <= atol + rtol * e.abs())  # NaN compares false: a NaN is always bad
        if bool(bad.any()):
            index = int(bad.flatten().nonzero()[0])
            return (f"output {i}: {int(bad.sum())} of {e.numel()} elements off, e.g. element {index}: "
                    f"{float(g.flatten()[index]):.6g} vs {float(e.flatten()[index]):.6g} "
                    f"(atol {atol:g}, rtol {rtol:g})")
    return None


def launch_timeout_seconds(environ=os.environ):
    """How long the first launch of each measurement may run: $TESSERA_GPU_TIMEOUT seconds, as Tessera's own waits
    read it (0: no limit), else LAUNCH_TIMEOUT_SECONDS."""
    text = environ.get("TESSERA_GPU_TIMEOUT", "")
    if not text:
        return LAUNCH_TIMEOUT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise ValueError(f"TESSERA_GPU_TIMEOUT must be a number of seconds (0: no limit), not {text!r}")
    return seconds


def wait_for_launches(torch, seconds, clock=time.monotonic, sleep=time.sleep):
    """torch.cuda.synchronize() for the current stream that gives up after `seconds` (0: never): True when its work
    finished. A fault in that work raises here, as from synchronize."""
    if seconds == 0:
        torch.cuda.synchronize()
        return True
    done = torch.cuda.Event()
    done.record()
    deadline = clock() + seconds
    while not done.query():
        if clock() >= deadline:
            return False
        sleep(0.0005)
    return True


def measure(ctx, provider, what, fn, expected, tolerances, amount, unit):
    """Checks fn()'s outputs, then times it. fn writes into outputs that start as NaN (or allocates them). A first
    launch that does not finish within ctx.launch_timeout seconds stops the sweep (LaunchNeverFinished)."""
    torch = ctx.torch
    try:
        got = fn()
        if not wait_for_launches(torch, ctx.launch_timeout):
            ctx.note(provider, what, f"the launch has not finished after {ctx.launch_timeout:g} s (a kernel that "
                                     "never ends?): the sweep stopped there, since every later launch would wait "
                                     "behind it")
            raise LaunchNeverFinished()
        problem = check_outputs(torch, got, expected, tolerances)
        if problem:
            ctx.note(provider, what, f"wrong result: {problem}")
            return FAIL
        return rate(amount, ctx.do_bench(fn, device="cuda"), unit)
    except Exception as e:  # a launch that raises is reported, and the other providers still run
        ctx.note(provider, what, _first_line(e))
        return ERROR


def _providers(ctx, tessera_fn, torch_fn, triton_fn):
    """The callables to measure; None (an n/a cell) for Triton when it is not installed."""
    return {"tessera": tessera_fn, "torch": torch_fn, "triton": triton_fn if ctx.triton_ref is not None else None}


def _run_row(ctx, benchmark, size, dtype, fns, expected, tolerances, reference=None, reference_name="copy",
             causal=False):
    unit = unit_of(benchmark)
    label = size_label(benchmark, size)
    what = f"{benchmark} {label} {dtype}"
    values = {}
    for provider in PROVIDERS:
        fn = fns.get(provider)
        values[provider] = NA if fn is None else measure(ctx, provider, what, fn, expected, tolerances,
                                                          work(benchmark, size, causal), unit)
    if benchmark == "matmul":
        reference, reference_name = values["torch"], "cuBLAS"
    elif benchmark == "attention":
        reference, reference_name = values["triton"], "Triton"
    elif benchmark == "attention_bwd":
        reference, reference_name = values["torch"], "torch"
    elif reference is None:
        reference = ctx.copy_gbps
    cols = size[1] if benchmark in ("softmax", "layernorm_fwd", "layernorm_bwd") else 0
    return Row(benchmark, label, dtype, unit, values, reference, reference_name, cols, plot_x(benchmark, size))


def _nan_like(torch, t):
    return torch.full_like(t, float("nan"))


def bench_vector_add(ctx, size):
    torch, K, backend = ctx.torch, ctx.tessera.kernels, ctx.options.tessera_backend
    (n,) = size
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    expected = [x.double() + y.double()]
    outs = {p: _nan_like(torch, x) for p in PROVIDERS}
    block = 1024

    def tessera_fn():
        K.vector_add[(ctx.tessera.cdiv(n, block),)](x, y, outs["tessera"], n, BLOCK=block, num_warps=4,
                                                    backend=backend)
        return [outs["tessera"]]

    fns = _providers(ctx, tessera_fn, lambda: [torch.add(x, y, out=outs["torch"])],
                     lambda: [ctx.triton_ref.vector_add(x, y, outs["triton"])])
    # f32 addition is correctly rounded: half an ulp (atol: a sum that flushes to zero).
    return [_run_row(ctx, "vector_add", size, "f32", fns, expected, [(1e-37, 6e-8)])]


def bench_softmax(ctx, size):
    torch, K, backend = ctx.torch, ctx.tessera.kernels, ctx.options.tessera_backend
    rows, cols = size
    x = torch.randn(rows, cols, device="cuda") * 4
    expected = [torch.softmax(x.double(), dim=-1)]
    outs = {p: _nan_like(torch, x) for p in PROVIDERS}
    block = next_power_of_2(cols)

    def tessera_fn():
        out = outs["tessera"]
        K.softmax[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=block, num_warps=num_warps_for(block),
                           backend=backend)
        return [out]

    fns = _providers(ctx, tessera_fn, lambda: [torch.softmax(x, dim=-1)],
                     lambda: [ctx.triton_ref.softmax(x, outs["triton"])])
    # f32 exp (possibly an ex2 approximation) and a sum over the row: some f32 ulps relative.
    return [_run_row(ctx, "softmax", size, "f32", fns, expected, [(1e-7, 2e-5)])]


def _layernorm_inputs(torch, rows, cols):
    x = torch.randn(rows, cols, device="cuda") * 2 + 0.5
    weight = torch.randn(cols, device="cuda")
    bias = torch.randn(cols, device="cuda")
    return x, weight, bias


def _layernorm_reference(x, weight, bias, eps):
    x = x.double()
    mean = x.mean(dim=1)
    rstd = 1 / ((x - mean[:, None]).square().mean(dim=1) + eps).sqrt()
    return (x - mean[:, None]) * rstd[:, None] * weight.double() + bias.double(), mean, rstd


EPS = 1e-5


def bench_layernorm_fwd(ctx, size):
    torch, K, backend = ctx.torch, ctx.tessera.kernels, ctx.options.tessera_backend
    rows, cols = size
    x, weight, bias = _layernorm_inputs(torch, rows, cols)
    expected = list(_layernorm_reference(x, weight, bias, EPS))
    outs = {p: (_nan_like(torch, x), torch.full((rows,), float("nan"), device="cuda"),
                torch.full((rows,), float("nan"), device="cuda")) for p in PROVIDERS}
    block = layernorm_fwd_block(cols)

    def tessera_fn():
        y, mean, rstd = outs["tessera"]
        K.layernorm_fwd[(rows,)](x, y, weight, bias, mean, rstd, x.stride(0), cols, EPS, BLOCK=block,
                                 num_warps=num_warps_for(block), backend=backend)
        return [y, mean, rstd]

    fns = _providers(ctx, tessera_fn, lambda: list(torch.native_layer_norm(x, [cols], weight, bias, EPS)),
                     lambda: list(ctx.triton_ref.layernorm_fwd(x, weight, bias, EPS, *outs["triton"], block)))
    # y is O(1) after a sum over the row in f32; mean and rstd alike.
    return [_run_row(ctx, "layernorm_fwd", size, "f32", fns, expected, [(1e-4, 1e-4), (1e-5, 1e-5), (1e-5, 1e-5)])]


def _layernorm_bwd_reference(x, dy, weight, mean, rstd):
    x, dy, weight, mean, rstd = (t.double() for t in (x, dy, weight, mean, rstd))
    x_hat = (x - mean[:, None]) * rstd[:, None]
    g = dy * weight
    dx = rstd[:, None] * (g - (x_hat * (g * x_hat).mean(dim=1, keepdim=True) + g.mean(dim=1, keepdim=True)))
    return dx, (dy * x_hat).sum(dim=0), dy.sum(dim=0)


def bench_layernorm_bwd(ctx, size):
    torch, K, backend = ctx.torch, ctx.tessera.kernels, ctx.options.tessera_backend
    rows, cols = size
    x, weight, bias = _layernorm_inputs(torch, rows, cols)
    dy = torch.randn(rows, cols, device="cuda")
    _, mean2d, rstd2d = torch.native_layer_norm(x, [cols], weight, bias, EPS)  # the statistics every provider uses
    mean, rstd = mean2d.reshape(rows).contiguous(), rstd2d.reshape(rows).contiguous()
    expected = list(_layernorm_bwd_reference(x, dy, weight, mean, rstd))
    rows_per_program = layernorm_bwd_rows_per_program(rows, ctx.sm_count)
    programs = -(-rows // rows_per_program)
    block = next_power_of_2(cols)

    def buffers():
        nan = float("nan")
        return (_nan_like(torch, x), torch.full((cols,), nan, device="cuda"), torch.full((cols,), nan, device="cuda"),
                torch.empty(programs, cols, device="cuda"), torch.empty(programs, cols, device="cuda"))

    outs = {p: buffers() for p in PROVIDERS}
    block_n = 128

    def tessera_fn():
        dx, dw, db, partial_dw, partial_db = outs["tessera"]
        K.layernorm_bwd_dx[(programs,)](x, dy, dx, weight, mean, rstd, partial_dw, partial_db, x.stride(0), rows, cols,
                                        rows_per_program, BLOCK=block, num_warps=num_warps_for(block), backend=backend)
        K.layernorm_bwd_dwdb[(ctx.tessera.cdiv(cols, block_n),)](partial_dw, partial_db, dw, db, programs, cols,
                                                                 BLOCK_M=32, BLOCK_N=block_n, num_warps=4,
                                                                 backend=backend)
        return [dx, dw, db]

    def torch_fn():
        return list(torch.ops.aten.native_layer_norm_backward(dy, x, [cols], mean2d, rstd2d, weight, bias,
                                                              [True, True, True]))

    fns = _providers(ctx, tessera_fn, torch_fn,
                     lambda: list(ctx.triton_ref.layernorm_bwd(x, dy, weight, mean, rstd, *outs["triton"],
                                                               rows_per_program)))
    # dw and db sum `rows` O(1) terms in f32.
    return [_run_row(ctx, "layernorm_bwd", size, "f32", fns, expected, [(1e-4, 1e-4), (2e-3, 1e-4), (2e-3, 1e-4)])]


def matmul_tuner(tessera, fixed_config=None):
    """Tessera's f16 matmul autotuned per M, N, K over MATMUL_TUNE_CONFIGS, or over fixed_config alone."""
    configs = [tuple(fixed_config) + (3, False)] if fixed_config else (
        [c + (False,) for c in MATMUL_TUNE_CONFIGS] + [c + (True,) for c in MATMUL_PERSISTENT_TUNE_CONFIGS])
    return tessera.autotune(configs=[tessera.Config({"BM": bm, "BN": bn, "BK": bk}, num_warps=w, num_stages=stages,
                                                    **({"persistent": True} if persistent else {}))
                                     for bm, bn, bk, w, stages, persistent in configs],
                            key=["M", "N", "K"], fixed=0 if fixed_config else None)(
                                tessera.kernels.matmul_epilogue_f16)


def matmul_triton_configs(fixed_config=None):
    """What Triton's matmul is autotuned over, (BM, BN, BK, num_warps, num_stages) tuples: the configurations
    Tessera's non-persistent matmul is tuned over (Triton's tutorial kernel has no persistent form), or the one
    --tessera-matmul fixes, so that both sides choose from the same tiles."""
    return [tuple(fixed_config) + (3,)] if fixed_config else list(MATMUL_TUNE_CONFIGS)


def bench_matmul(ctx, size):
    torch, backend = ctx.torch, ctx.options.tessera_backend
    m, n, k = size
    if ctx.matmul is None:
        ctx.matmul = matmul_tuner(ctx.tessera, ctx.options.tessera_matmul)
    triton_configs = matmul_triton_configs(ctx.options.tessera_matmul)
    rows = []
    for dtype_name in MATMUL_DTYPES:
        dtype = torch.float16 if dtype_name == "f16" else torch.bfloat16
        scale = k ** -0.25  # products of two such inputs summed over k are O(1)
        a = (torch.randn(m, k, device="cuda") * scale).to(dtype)
        b = (torch.randn(k, n, device="cuda") * scale).to(dtype)
        expected = [a.float() @ b.float()]  # f32 without TF32 (switched off in main)
        outs = {p: torch.full((m, n), float("nan"), device="cuda", dtype=dtype) for p in PROVIDERS}

        def tessera_fn(a=a, b=b, c=outs["tessera"]):
            grid = lambda meta: (ctx.tessera.cdiv(m, meta["BM"]) * ctx.tessera.cdiv(n, meta["BN"]),)  # noqa: E731
            ctx.matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                             c.stride(1), GROUP_M=8, ACTIVATION=0, backend=backend)
            return [c]

        # Tessera's matmul kernels take f16 inputs only (frontend/tessera/kernels/matmul.h): no bf16 entry.
        if dtype_name != "f16":
            ctx.note("tessera", f"matmul {dtype_name}", "n/a: the tutorial matmul kernels take f16 inputs only")
        fns = _providers(ctx, tessera_fn if dtype_name == "f16" else None, lambda a=a, b=b: [torch.matmul(a, b)],
                         lambda a=a, b=b, c=outs["triton"]: [ctx.triton_ref.matmul(a, b, c, triton_configs)])
        # f32 accumulation, rounded once to the output type (f16: 2^-11, bf16: 2^-8 relative).
        tolerance = (1e-2, 1e-2) if dtype_name == "f16" else (3e-2, 2e-2)
        rows.append(_run_row(ctx, "matmul", size, dtype_name, fns, expected, [tolerance]))
        if dtype_name == "f16" and ctx.matmul.best_config is not None:
            ctx.note("tessera", f"matmul {size_label('matmul', size)}", f"config {ctx.matmul.best_config}")
        if ctx.triton_ref is not None and isinstance(rows[-1].values["triton"], float):
            best = ctx.triton_ref.matmul_best_config(triton_configs)
            if best is not None:
                ctx.note("triton", f"matmul {size_label('matmul', size)} {dtype_name}", f"config {best}")
        if ctx.hopper and k % 8 == 0 and n % 8 == 0:  # TMA: rows a multiple of 16 bytes
            rows.append(_tma_matmul_row(ctx, rows[-1], a, b, expected, [tolerance], dtype))
    return rows


def tma_matmul_launcher(ctx, dtype_name, a, b, c, config):
    """A launch of a matmul_desc kernel on dtype_name ("f16" or "bf16") inputs for one TMA_MATMUL_CONFIGS entry,
    returning [c]."""
    bm, bn, bk, warps, stages, warp_specialize, persistent, tma_store, ping_pong = config
    m, k = a.shape
    n = b.shape[1]
    da = ctx.tessera.TensorDescriptor(a, (bm, bk))
    db = ctx.tessera.TensorDescriptor(b, (bk, bn))
    grid = (ctx.tessera.cdiv(m, bm) * ctx.tessera.cdiv(n, bn),)
    options = dict(BM=bm, BN=bn, BK=bk, GROUP_M=8, num_warps=warps, num_stages=stages,
                   warp_specialize=warp_specialize, persistent=persistent, **({"ping_pong": True} if ping_pong else {}))
    if tma_store:
        kernel = getattr(ctx.tessera.kernels, f"matmul_desc_{dtype_name}_tma_c")
        dc = ctx.tessera.TensorDescriptor(c, (bm, bn))

        def fn():
            kernel[grid](da, db, dc, m, n, k, **options, backend=ctx.options.tessera_backend)
            return [c]
        return fn
    kernel = getattr(ctx.tessera.kernels, f"matmul_desc_{dtype_name}_out")

    def fn():
        kernel[grid](da, db, c, m, n, k, c.stride(0), c.stride(1), **options, backend=ctx.options.tessera_backend)
        return [c]
    return fn


def _tma_matmul_row(ctx, row, a, b, expected, tolerances, dtype):
    """The row `row` (torch and Triton as measured there) with Tessera's TMA matmul: each config is checked, then
    timed; the fastest right one is the cell, and every config's outcome is a note."""
    torch = ctx.torch
    name = "f16" if dtype == torch.float16 else "bf16"
    what = f"matmul {row.size} {row.dtype} TMA"
    best, outcomes = None, []
    for config in TMA_MATMUL_CONFIGS:
        c = torch.full((a.shape[0], b.shape[1]), float("nan"), device="cuda", dtype=dtype)
        value = measure(ctx, "tessera", f"{what} {config}", tma_matmul_launcher(ctx, name, a, b, c, config),
                        expected, tolerances, work("matmul", (a.shape[0], b.shape[1], a.shape[1])), TFLOPS)
        outcomes.append(f"{config}: {format_value(value, TFLOPS)}")
        if not isinstance(value, str) and (best is None or value > best[0]):
            best = (value, config)
    ctx.note("tessera", what, "configs (BM, BN, BK, warps, stages, warp_specialize, persistent, tma_store, ping_pong): " +
             "; ".join(outcomes))
    value = best[0] if best else FAIL if any(o.endswith(FAIL) for o in outcomes) else ERROR
    return dataclasses.replace(row, dtype=f"{row.dtype} TMA", values=dict(row.values, tessera=value))


def _attention_reference(torch, q, k, v, causal):
    """f32 softmax(q k^T / sqrt(d)) v, one head at a time (a whole batch of f64 score matrices would not fit)."""
    out = torch.empty(q.shape, device="cuda")
    seq_len, head_dim = q.shape[-2:]
    hidden = torch.ones(seq_len, seq_len, device="cuda", dtype=torch.bool).triu(1) if causal else None
    for b in range(q.shape[0]):
        for h in range(q.shape[1]):
            s = q[b, h].float() @ k[b, h].float().T / head_dim ** 0.5
            if causal:
                s.masked_fill_(hidden, float("-inf"))
            out[b, h] = torch.softmax(s, dim=-1) @ v[b, h].float()
    return out


def attention_configs(options):
    """What the attention forward is chosen from on both sides, (BM, BN, num_warps, num_stages) tuples: the one
    --tessera-attention fixes, else ATTENTION_TUNE_CONFIGS; None in the quick sweep, where each side launches its
    own single config."""
    if options.tessera_attention:
        return [tuple(options.tessera_attention) + (3,)]
    return None if options.quick else list(ATTENTION_TUNE_CONFIGS)


def attention_tuner(tessera, kernel, configs):
    """`kernel` (an attention_fwd of the kernel library) autotuned per sequence length, head dim and causality over
    configs; one config is launched as it is."""
    return tessera.autotune(configs=[tessera.Config({"BM": bm, "BN": bn}, num_warps=w, num_stages=stages)
                                     for bm, bn, w, stages in configs],
                            key=["seq_len", "HEAD_DIM", "CAUSAL"], fixed=0 if len(configs) == 1 else None)(kernel)


def bench_attention(ctx, size):
    torch, backend = ctx.torch, ctx.options.tessera_backend
    seq_len, head_dim = size
    batch, heads = attention_batch(seq_len), ATTENTION_HEADS
    configs = attention_configs(ctx.options)
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)  # torch >= 2.0
    if sdpa is None:
        ctx.note("torch", "attention", f"n/a: torch {torch.__version__} has no scaled_dot_product_attention")
    rows = []
    for dtype_name in MATMUL_DTYPES:
        dtype = torch.float16 if dtype_name == "f16" else torch.bfloat16
        q, k, v = (torch.randn(batch, heads, seq_len, head_dim, device="cuda").to(dtype) for _ in range(3))
        sm_scale = head_dim ** -0.5
        name = "attention_fwd" if dtype == torch.float16 else "attention_fwd_bf16"
        if configs and name not in ctx.attention:
            ctx.attention[name] = attention_tuner(ctx.tessera, getattr(ctx.tessera.kernels, name), configs)
        for causal in (False, True):
            expected = [_attention_reference(torch, q, k, v, causal)]
            outs = {p: torch.full_like(q, float("nan")) for p in PROVIDERS}

            def tessera_fn(q=q, k=k, v=v, o=outs["tessera"], causal=causal):
                strides = [x.stride(i) for x in (q, k, v, o) for i in range(3)]
                args = (q, k, v, o, sm_scale, heads, seq_len, *strides)
                if configs:
                    ctx.attention[name][lambda meta: (ctx.tessera.cdiv(seq_len, meta["BM"]), batch * heads)](
                        *args, HEAD_DIM=head_dim, CAUSAL=int(causal), backend=backend)
                else:
                    bm, bn, warps = DEFAULT_TESSERA_ATTENTION
                    getattr(ctx.tessera.kernels, name)[(ctx.tessera.cdiv(seq_len, bm), batch * heads)](
                        *args, BM=bm, BN=bn, HEAD_DIM=head_dim, CAUSAL=int(causal), num_warps=warps, backend=backend)
                return [o]

            torch_fn = None if sdpa is None else (lambda q=q, k=k, v=v, causal=causal: [sdpa(q, k, v, is_causal=causal)])
            fns = _providers(ctx, tessera_fn, torch_fn,
                             lambda q=q, k=k, v=v, o=outs["triton"], causal=causal:
                             [ctx.triton_ref.attention(q, k, v, o, causal, sm_scale, configs)])
            # P and the output are rounded to the input type (f16: 2^-11, bf16: 2^-8 relative); outputs are O(1).
            tolerance = (1e-2, 1e-2) if dtype_name == "f16" else (3e-2, 2e-2)
            variant = f"{dtype_name} d={head_dim}" + (" causal" if causal else "")
            pointers = _run_row(ctx, "attention", size, variant, fns, expected, [tolerance], causal=causal)
            rows.append(pointers)
            # The descriptor kernels run at the blocks and warps the pointer kernel was tuned to.
            blocks = _attention_chosen_config(ctx, name, configs, size, variant, pointers)
            desc_row = functools.partial(_attention_desc_row, ctx, pointers, q, k, v, causal, expected, [tolerance],
                                         blocks=blocks)
            rows.append(desc_row())
            if ctx.hopper:  # a producer warpgroup issues the TMA copies (setmaxnreg: sm_90a)
                rows.append(desc_row(warp_specialize=True))
                # ... and without the consumer warpgroups' turns (order-consumer-groups), to see what they are worth.
                rows.append(desc_row(warp_specialize=True, consumer_turns=False))
                # ... and persistent: the producer fills the next tile's stages during this one's epilogue.
                rows.append(desc_row(warp_specialize=True, persistent=True))
            # The softmax of each key block overlapped with the next block's Q K^T (attention_fwd_desc_overlap): on
            # sm_90 that product stays in flight on the tensor cores during the softmax (FlashAttention-3's overlap
            # within a warpgroup); elsewhere the same kernel, reordered.
            rows.append(desc_row(overlap=True))
            if ctx.hopper:
                rows.append(desc_row(warp_specialize=True, overlap=True))
    return rows


def _attention_chosen_config(ctx, name, configs, size, variant, row):
    """The (BM, BN, num_warps) Tessera's pointer kernel ran `row` with, noting each side's choice when tuned:
    DEFAULT_TESSERA_ATTENTION in the quick sweep, or when tuning chose nothing (its launch failed)."""
    if not configs:
        return DEFAULT_TESSERA_ATTENTION
    what = f"attention {size_label('attention', size)} {variant}"
    best = ctx.attention[name].best_config
    if best is not None and len(configs) > 1:
        ctx.note("tessera", what, f"config {best}")
    if ctx.triton_ref is not None and len(configs) > 1 and isinstance(row.values["triton"], float):
        chosen = ctx.triton_ref.attention_best_config(configs)
        if chosen is not None:
            ctx.note("triton", what, f"config {chosen}")
    return DEFAULT_TESSERA_ATTENTION if best is None else (best.kwargs["BM"], best.kwargs["BN"], best.num_warps)


def _attention_desc_row(ctx, row, q, k, v, causal, expected, tolerances, blocks, warp_specialize=False,
                        consumer_turns=True, persistent=False, overlap=False):
    """The row `row` (torch and Triton as measured there) with Tessera's attention through tensor descriptors
    (attention_fwd_desc: 3-d descriptors as Triton's Hopper tutorial takes them; on sm_90 K and V arrive by TMA and
    its output leaves by a TMA store), at `blocks` (BM, BN, num_warps); with `warp_specialize`, a producer warpgroup
    issues the copies, and without `consumer_turns` the consumer warpgroups do not take turns
    (TESSERA_NO_CONSUMER_TURNS, read at each launch); `persistent` programs loop over the tiles; `overlap` runs
    attention_fwd_desc_overlap, whose softmax overlaps the next key block's Q K^T."""
    torch, tessera = ctx.torch, ctx.tessera
    bm, bn, warps = blocks
    batch, heads, seq_len, head_dim = q.shape
    out = torch.full_like(q, float("nan"))
    descs = [tessera.TensorDescriptor(x.reshape(batch * heads, seq_len, head_dim), (1, block, head_dim))
             for x, block in ((q, bm), (k, bn), (v, bn), (out, bm))]
    name = "attention_fwd_desc" + ("_overlap" if overlap else "") + ("" if q.dtype == torch.float16 else "_bf16")
    kernel = getattr(tessera.kernels, name)

    def fn():
        kernel[(tessera.cdiv(seq_len, bm), batch * heads)](
            *descs, head_dim ** -0.5, seq_len, BM=bm, BN=bn, HEAD_DIM=head_dim, CAUSAL=int(causal), num_warps=warps,
            backend=ctx.options.tessera_backend, **({"warp_specialize": True} if warp_specialize else {}),
            **({"persistent": True} if persistent else {}))
        return [out]
    dtype = f"{row.dtype} descriptors" + (" overlapped" if overlap else "") + \
        (" warp-specialized" if warp_specialize else "") + \
        ("" if consumer_turns else " without turns") + (" persistent" if persistent else "")
    what = f"attention {row.size} {dtype}"
    before = os.environ.get("TESSERA_NO_CONSUMER_TURNS")
    os.environ["TESSERA_NO_CONSUMER_TURNS"] = "0" if consumer_turns else "1"
    try:
        value = measure(ctx, "tessera", what, fn, expected, tolerances, work("attention", (seq_len, head_dim), causal),
                        TFLOPS)
    finally:
        if before is None:
            os.environ.pop("TESSERA_NO_CONSUMER_TURNS")
        else:
            os.environ["TESSERA_NO_CONSUMER_TURNS"] = before
    return dataclasses.replace(row, dtype=dtype, values=dict(row.values, tessera=value))


def attention_bwd_reference(torch, q, k, v, d_o, causal):
    """[dQ, dK, dV] in f32, one head at a time (a whole batch of f32 score matrices would not fit), by the
    backward's formulas: P = softmax(S), dV = P^T dO, dS = P * (dP - rowsum(dP * P)) with dP = dO V^T (rowsum(dP * P)
    is rowsum(dO * O)), dQ = dS K / sqrt(d), dK = dS^T Q / sqrt(d)."""
    grads = [torch.empty(q.shape, device=q.device) for _ in range(3)]
    seq_len, head_dim = q.shape[-2:]
    scale = head_dim ** -0.5
    hidden = torch.ones(seq_len, seq_len, device=q.device, dtype=torch.bool).triu(1) if causal else None
    for b in range(q.shape[0]):
        for h in range(q.shape[1]):
            qf, kf, vf, dof = (x[b, h].float() for x in (q, k, v, d_o))
            s = qf @ kf.T * scale
            if causal:
                s.masked_fill_(hidden, float("-inf"))
            p = torch.softmax(s, dim=-1)
            del s
            dp = dof @ vf.T
            ds = p * (dp - (dp * p).sum(dim=-1, keepdim=True))
            grads[0][b, h] = ds @ kf * scale
            grads[1][b, h] = ds.T @ qf * scale
            grads[2][b, h] = p.T @ dof
    return grads


def attention_bwd_launcher(ctx, q, k, v, d_o, causal, blocks, forward_blocks=None):
    """Tessera's backward on contiguous [batch, heads, seq_len, head_dim] inputs: a function that runs
    attention_bwd_preprocess, attention_bwd_dkdv and attention_bwd_dq and returns [dQ, dK, dV]. Its first call
    (measure's check, untimed) first runs the forward that saves each row's statistic (attention_fwd_lse, at
    forward_blocks = (BM, BN, num_warps), by default --tessera-attention's, else DEFAULT_TESSERA_ATTENTION).
    blocks: ((BM, BN, num_warps) of dkdv, (BM, BN, num_warps) of dq)."""
    torch, tessera, backend = ctx.torch, ctx.tessera, ctx.options.tessera_backend
    batch, heads, seq_len, head_dim = q.shape
    suffix = "" if q.dtype == torch.float16 else "_bf16"

    def kernel(name):
        return getattr(tessera.kernels, name + suffix)

    scale = head_dim ** -0.5
    layout = (heads, seq_len, q.stride(0), q.stride(1), q.stride(2))
    out, dq, dk, dv = (torch.full_like(q, float("nan")) for _ in range(4))
    lse, delta = (torch.full((batch * heads, seq_len), float("nan"), device=q.device) for _ in range(2))
    bm, bn, warps = forward_blocks or ctx.options.tessera_attention or DEFAULT_TESSERA_ATTENTION
    forward_done = []

    def forward():
        kernel("attention_fwd_lse")[(tessera.cdiv(seq_len, bm), batch * heads)](
            q, k, v, out, lse, scale, *layout, BM=bm, BN=bn, HEAD_DIM=head_dim, CAUSAL=int(causal), num_warps=warps,
            backend=backend)
        forward_done.append(True)

    (dkdv_bm, dkdv_bn, dkdv_warps), (dq_bm, dq_bn, dq_warps) = blocks
    rows = (tessera.cdiv(seq_len, dq_bm), batch * heads)

    def fn():
        if not forward_done:
            forward()
        kernel("attention_bwd_preprocess")[rows](out, d_o, delta, *layout, BM=dq_bm, HEAD_DIM=head_dim,
                                                 num_warps=dq_warps, backend=backend)
        kernel("attention_bwd_dkdv")[(tessera.cdiv(seq_len, dkdv_bn), batch * heads)](
            q, k, v, d_o, lse, delta, dk, dv, scale, *layout, BM=dkdv_bm, BN=dkdv_bn, HEAD_DIM=head_dim,
            CAUSAL=int(causal), num_warps=dkdv_warps, backend=backend)
        kernel("attention_bwd_dq")[rows](q, k, v, d_o, lse, delta, dq, scale, *layout, BM=dq_bm, BN=dq_bn,
                                         HEAD_DIM=head_dim, CAUSAL=int(causal), num_warps=dq_warps, backend=backend)
        return [dq, dk, dv]
    return fn


def bench_attention_bwd(ctx, size):
    torch = ctx.torch
    seq_len, head_dim = size
    batch, heads = attention_batch(seq_len), ATTENTION_HEADS
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)  # torch >= 2.0
    if sdpa is None:
        ctx.note("torch", "attention_bwd", f"n/a: torch {torch.__version__} has no scaled_dot_product_attention")
    rows = []
    for dtype_name in MATMUL_DTYPES:
        dtype = torch.float16 if dtype_name == "f16" else torch.bfloat16
        q, k, v, d_o = (torch.randn(batch, heads, seq_len, head_dim, device="cuda").to(dtype) for _ in range(4))
        for causal in (False, True):
            expected = attention_bwd_reference(torch, q, k, v, d_o, causal)
            # P and dS are rounded to the input type before their products, and so are the gradients: a part in
            # a hundred (f16) or twenty-five (bf16) of each gradient's largest element.
            tol = 1e-2 if dtype_name == "f16" else 4e-2
            tolerances = [(tol * float(e.abs().max()), 0.0) for e in expected]
            tessera_fn = attention_bwd_launcher(ctx, q, k, v, d_o, causal, ATTENTION_BWD_BLOCKS[head_dim])
            triton_fn = None if ctx.triton_ref is None else \
                triton_attention_bwd_launcher(ctx, q, k, v, d_o, causal, ATTENTION_BWD_BLOCKS[head_dim])
            torch_fn = None
            if sdpa is not None:
                leaves = [x.detach().requires_grad_() for x in (q, k, v)]
                out = sdpa(*leaves, is_causal=causal)
                torch_fn = (lambda out=out, leaves=leaves:
                            list(torch.autograd.grad(out, leaves, d_o, retain_graph=True)))
            variant = f"{dtype_name} d={head_dim}" + (" causal" if causal else "")
            rows.append(_run_row(ctx, "attention_bwd", size, variant, _providers(ctx, tessera_fn, torch_fn, triton_fn),
                                 expected, tolerances, causal=causal))
            del expected
    blocks = ATTENTION_BWD_BLOCKS[head_dim]
    ctx.note("tessera", f"attention_bwd d={head_dim}",
             f"blocks (BM, BN, num_warps): dkdv {blocks[0]}, dq {blocks[1]} (Triton's kernels at the same)")
    return rows


def triton_attention_bwd_launcher(ctx, q, k, v, d_o, causal, blocks):
    """Triton's backward (triton_reference.attention_backward: the same three kernels as Tessera's) at `blocks`, as
    attention_bwd_launcher: a function returning [dQ, dK, dV] whose first call (the untimed check) first runs
    Triton's forward with its statistics (triton_reference.attention_forward_lse)."""
    torch = ctx.torch
    batch, heads, seq_len, head_dim = q.shape
    scale = head_dim ** -0.5
    out, dq, dk, dv = (torch.full_like(q, float("nan")) for _ in range(4))
    lse, delta = (torch.full((batch * heads, seq_len), float("nan"), device=q.device) for _ in range(2))
    forward_done = []

    def fn():
        if not forward_done:
            ctx.triton_ref.attention_forward_lse(q, k, v, out, lse, causal, scale)
            forward_done.append(True)
        ctx.triton_ref.attention_backward(q, k, v, out, d_o, lse, delta, dq, dk, dv, causal, scale, blocks)
        return [dq, dk, dv]
    return fn


RUNNERS = {"vector_add": bench_vector_add, "softmax": bench_softmax, "layernorm_fwd": bench_layernorm_fwd,
           "layernorm_bwd": bench_layernorm_bwd, "matmul": bench_matmul, "attention": bench_attention,
           "attention_bwd": bench_attention_bwd}


def measure_copy_bandwidth(torch, do_bench):
    src = torch.randn(COPY_BUFFER_BYTES // F32_BYTES, device="cuda")
    dst = torch.empty_like(src)
    ms = do_bench(lambda: dst.copy_(src), device="cuda")
    if not torch.equal(dst, src):
        raise RuntimeError("the device copy used as the bandwidth reference produced a wrong result")
    return copy_bandwidth(COPY_BUFFER_BYTES, ms)


def _driver_version():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _tessera_revision():
    try:
        out = subprocess.run(["git", "-C", str(HERE), "describe", "--always", "--dirty"], capture_output=True,
                             text=True, timeout=30)
        return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown revision"
    except (OSError, subprocess.SubprocessError):
        return "unknown revision"


def _import_prerequisites():
    """(torch, tessera, do_bench) or a message saying what is missing."""
    try:
        import torch
    except ImportError as e:
        return None, f"bench_tutorials: needs PyTorch with CUDA, and torch could not be imported ({e})"
    if not torch.cuda.is_available():
        return None, ("bench_tutorials: needs a CUDA GPU, and torch sees none "
                      f"(torch {torch.__version__}, built for CUDA {torch.version.cuda})")
    try:
        import tessera
        from tessera.testing import do_bench
    except ImportError as e:
        return None, (f"bench_tutorials: the tessera package could not be imported ({e}); "
                      "run with PYTHONPATH=<build>/python")
    return (torch, tessera, do_bench), None


def main(argv=None):
    options = parse_args(argv)
    try:
        options.launch_timeout = launch_timeout_seconds()
    except ValueError as e:
        print(f"bench_tutorials: {e}", file=sys.stderr)
        return 2
    found, problem = _import_prerequisites()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    torch, tessera, do_bench = found
    torch.backends.cuda.matmul.allow_tf32 = False  # the matmul reference is plain f32
    triton_ref, triton_version = None, "not installed"
    try:
        sys.path.insert(0, str(HERE))
        import triton
        import triton_reference
        triton_ref, triton_version = triton_reference, triton.__version__
    except ImportError as e:
        print(f"bench_tutorials: no Triton column ({e})", file=sys.stderr)

    ctx = Context(torch, tessera, do_bench, triton_ref, options)
    ctx.copy_gbps = measure_copy_bandwidth(torch, do_bench)
    info = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "gpu": torch.cuda.get_device_name(0), "sm_count": ctx.sm_count, "driver": _driver_version(),
            "cuda": torch.version.cuda, "torch": torch.__version__, "triton": triton_version,
            "tessera": _tessera_revision(), "copy_gbps": ctx.copy_gbps, "quick": options.quick}

    def after_size(rows):
        torch.cuda.empty_cache()
        if options.csv:
            write_csv(rows, options.csv)

    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    rows, not_run = run_sweep(ctx, options, RUNNERS, time.monotonic, after_size)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    print("\n".join(header_lines(info)))
    print()
    print(format_table(rows))
    if not_run:
        why = "a launch never finished: see the notes" if ctx.hung else "the time budget was spent, or the run was stopped"
        print(f"\nNot run ({why}): {', '.join(not_run)}")
    targets = target_lines(rows)
    if targets:
        print("\nTargets (issue 5):\n" + "\n".join(targets))
    notes = ctx.notes()
    if notes:
        print("\nNotes:\n" + "\n".join(notes))
    if options.csv:
        write_csv(rows, options.csv)
        print(f"\nbench_tutorials: wrote {options.csv}", file=sys.stderr)
    if options.results:
        written = write_results(rows, options.results)
        print(f"bench_tutorials: wrote {len(written)} files to {options.results}", file=sys.stderr)
    if ctx.hung:
        # The GPU is still running the kernel that never finished: leave without the CUDA teardown, which could
        # wait for it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
    return 1 if failed(rows) else 0


if __name__ == "__main__":
    sys.exit(main())
