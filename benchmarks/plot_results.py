#!/usr/bin/env python3
"""Turns the CSV of benchmarks/compile_time or benchmarks/kernel_resources into a PNG bar plot.

    plot_results.py RESULTS.csv [--out PLOT.png]     (default: RESULTS.png beside the CSV)

compile_time: per case, a bar of Tessera's stages stacked (trace, passes, lower, optimize, emit, then the rest of
the JIT's time: tessera_ms beyond the stages, its verification and printing) beside a bar of ptxas's time on the
same PTX. kernel_resources: per case, registers, and the spill bytes stored and loaded.
Cells that say "absent" (no ptxas on the machine that measured) are left out of the plot.
"""
import argparse
import csv
import pathlib
import sys

STAGES = ["trace_ms", "passes_ms", "lower_ms", "optimize_ms", "emit_ms"]


def number(cell):
    """The cell's value, or None for a cell without one ("absent", "n/a")."""
    try:
        return float(cell)
    except ValueError:
        return None


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path}: no rows")
    return rows


def new_figure(cases, panels):
    # The object-oriented API with the Agg canvas: no display needed, pyplot's global state left alone.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(4 + 5 * panels, 1.5 + 0.32 * len(cases)), dpi=100)  # 4 in. for the case names
    FigureCanvasAgg(figure)
    return figure, [figure.add_subplot(1, panels, i + 1) for i in range(panels)]


def plot_compile_time(rows, out):
    cases = [r["case"] for r in rows]
    figure, (axes,) = new_figure(cases, 1)
    y = range(len(rows))
    height = 0.4
    left = [0.0] * len(rows)
    for stage in STAGES:
        values = [number(r[stage]) or 0.0 for r in rows]
        axes.barh([i - height / 2 for i in y], values, height, left=left, label=stage[:-3])
        left = [a + b for a, b in zip(left, values)]
    # The stages were timed on their own, the JIT's compile as a whole: what it does besides them (0 where the
    # machine's noise makes the whole come out below the parts).
    other = [max(0.0, (number(r["tessera_ms"]) or 0.0) - total) for r, total in zip(rows, left)]
    axes.barh([i - height / 2 for i in y], other, height, left=left, label="JIT's other work", hatch="//",
              color="white", edgecolor="gray")
    ptxas = [number(r["ptxas_ms"]) for r in rows]
    if any(v is not None for v in ptxas):
        axes.barh([i + height / 2 for i in y], [v or 0.0 for v in ptxas], height, color="black", label="ptxas")
    axes.set_yticks(list(y), cases)
    axes.invert_yaxis()
    axes.set_xlabel("CPU ms")
    axes.set_title("compile time: Tessera's stages vs ptxas")
    axes.legend(loc="upper right", fontsize="small")  # the tutorial kernels at the top have short bars
    figure.tight_layout()
    figure.savefig(out, format="png")


def plot_kernel_resources(rows, out):
    measured = [r for r in rows if number(r["registers"]) is not None]
    if not measured:
        raise ValueError("no row has ptxas's numbers (ptxas was absent): nothing to plot")
    cases = [r["case"] for r in measured]
    figure, (registers, spills) = new_figure(cases, 2)
    y = list(range(len(measured)))
    registers.barh(y, [number(r["registers"]) for r in measured])
    registers.axvline(255, color="red", linestyle="--", linewidth=1, label="255 (the limit)")
    registers.set_xlabel("registers per thread")
    registers.legend(loc="lower right", fontsize="small")
    height = 0.4
    spills.barh([i - height / 2 for i in y], [number(r["spill_stores_B"]) for r in measured], height, label="stored")
    spills.barh([i + height / 2 for i in y], [number(r["spill_loads_B"]) for r in measured], height, label="loaded")
    spills.set_xlabel("spill bytes per thread")
    spills.legend(loc="lower right", fontsize="small")
    for axes in (registers, spills):
        axes.set_yticks(y, cases)
        axes.invert_yaxis()
    spills.set_yticklabels([])
    figure.suptitle("kernel resources (ptxas -v)")
    figure.tight_layout()
    figure.savefig(out, format="png")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", type=pathlib.Path)
    parser.add_argument("--out", type=pathlib.Path, help="the PNG to write (default: the CSV's name with .png)")
    args = parser.parse_args(argv)
    out = args.out or args.csv.with_suffix(".png")
    try:
        rows = read_rows(args.csv)
        columns = rows[0].keys()
        if set(STAGES) <= columns:
            plot_compile_time(rows, out)
        elif "registers" in columns:
            plot_kernel_resources(rows, out)
        else:
            raise ValueError(f"{args.csv}: neither compile_time's nor kernel_resources' columns")
    except (OSError, ValueError, KeyError) as e:
        print(f"plot_results.py: {e}", file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
