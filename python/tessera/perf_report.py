"""Benchmark reports in triton.testing's convention: a Benchmark says which sizes (x) and which providers
(lines) to measure, @perf_report runs a function over all of them, and each Benchmark becomes a CSV, a Markdown
table and a PNG line plot named after its plot_name.

    @tessera.testing.perf_report(tessera.testing.Benchmark(
        x_names=["n"], x_vals=[2**i for i in range(12, 20)], x_log=True, line_arg="provider",
        line_vals=["tessera", "numpy"], line_names=["Tessera", "numpy"], ylabel="GB/s", plot_name="vector-add"))
    def bench(n, provider):
        ...
        return gbps            # or (gbps, min, max); None when the provider has no result at this size
    bench.run(save_path="results", print_data=True)

write_report() writes the same three files for measurements made elsewhere (benchmarks/bench_tutorials.py).
"""

import csv
import dataclasses
import io
import math
import pathlib
import re


@dataclasses.dataclass
class Benchmark:
    x_names: list    # the arguments that take each x value
    x_vals: list     # the sizes, in plot order
    line_arg: str    # the argument that takes each line value
    line_vals: list  # the providers, one line each
    line_names: list  # their titles: legend and column names
    plot_name: str   # the files' base name: <plot_name>.csv, .md, .png
    args: dict = dataclasses.field(default_factory=dict)  # further fixed arguments of the function
    xlabel: str = ""
    ylabel: str = ""
    x_log: bool = False
    y_log: bool = False
    styles: list = None  # (color, linestyle) per line; matplotlib's defaults otherwise

    def __post_init__(self):
        if not self.x_names or not self.x_vals or not self.line_vals:
            raise ValueError("a Benchmark needs x_names, x_vals and line_vals")
        if len(self.line_names) != len(self.line_vals):
            raise ValueError(f"{len(self.line_vals)} line_vals but {len(self.line_names)} line_names")
        if self.styles is not None and len(self.styles) != len(self.line_vals):
            raise ValueError(f"{len(self.line_vals)} line_vals but {len(self.styles)} styles")
        if not re.fullmatch(r"[\w.-]+", self.plot_name):
            raise ValueError(f"plot_name {self.plot_name!r} must be a file name (letters, digits, '_', '-', '.')")


@dataclasses.dataclass
class Measurement:
    """One point: the value and, when the function returned (value, min, max), its spread."""
    value: float
    low: float = None
    high: float = None

    @staticmethod
    def of(result):
        if result is None:
            return None
        if isinstance(result, (tuple, list)):
            if len(result) != 3:
                raise ValueError(f"a benchmark returns a number or (value, min, max), got {result!r}")
            value, low, high = (float(r) for r in result)
            return None if math.isnan(value) else Measurement(value, low, high)
        value = float(result)
        return None if math.isnan(value) else Measurement(value)


@dataclasses.dataclass
class Report:
    """A Benchmark's measurements: for each x value, one Measurement (or None: no result) per line."""
    benchmark: Benchmark
    points: list  # [(x, [Measurement or None per line])]

    @classmethod
    def from_results(cls, benchmark, results):
        """From [(x, [result per line])], each result as a benchmark function returns it."""
        return cls(benchmark, [(x, [Measurement.of(r) for r in line_results]) for x, line_results in results])

    def _has_spread(self):
        return any(m is not None and m.low is not None for _, ms in self.points for m in ms)

    def csv_text(self):
        b = self.benchmark
        header = [b.x_names[0]] + list(b.line_names)
        spread = self._has_spread()
        if spread:
            header += [f"{name} {end}" for name in b.line_names for end in ("min", "max")]
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        for x, measurements in self.points:
            row = [x] + ["" if m is None else m.value for m in measurements]
            if spread:
                for m in measurements:
                    row += ["", ""] if m is None or m.low is None else [m.low, m.high]
            writer.writerow(row)
        return out.getvalue()

    def markdown_text(self):
        b = self.benchmark
        header = [b.x_names[0]] + list(b.line_names)
        body = [[str(x)] + ["-" if m is None else f"{m.value:.2f}" for m in ms] for x, ms in self.points]
        widths = [max(len(row[i]) for row in [header] + body) for i in range(len(header))]

        def line(cells):
            return "| " + " | ".join(c.rjust(w) for c, w in zip(cells, widths)) + " |"

        separator = "|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|"
        title = f"{b.plot_name}" + (f" ({b.ylabel})" if b.ylabel else "")
        return "\n".join([title, "", line(header), separator] + [line(cells) for cells in body]) + "\n"

    def save_plot(self, path):
        # The object-oriented API with the Agg canvas: no display, and no change to pyplot's global backend.
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        b = self.benchmark
        figure = Figure(figsize=(7, 4.5), dpi=100)
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        xs = [x for x, _ in self.points]
        for i, name in enumerate(b.line_names):
            points = [(x, ms[i]) for x, ms in self.points if ms[i] is not None]
            if not points:
                continue
            style = {} if b.styles is None else {"color": b.styles[i][0], "linestyle": b.styles[i][1]}
            axes.plot([x for x, _ in points], [m.value for _, m in points], marker="o", label=name, **style)
            spread = [(x, m) for x, m in points if m.low is not None]
            if spread:
                axes.fill_between([x for x, _ in spread], [m.low for _, m in spread], [m.high for _, m in spread],
                                  alpha=0.2, color=axes.lines[-1].get_color())
        if b.x_log:
            axes.set_xscale("log", base=2)
        if b.y_log:
            axes.set_yscale("log")
        if all(isinstance(x, (int, float)) for x in xs):
            axes.set_xticks(xs, [str(x) for x in xs], rotation=30)
        axes.set_xlabel(b.xlabel or b.x_names[0])
        axes.set_ylabel(b.ylabel)
        axes.set_title(b.plot_name)
        axes.grid(True, alpha=0.3)
        if axes.lines:
            axes.legend()
        figure.tight_layout()
        figure.savefig(path, format="png")


def write_report(report, save_path):
    """Writes <plot_name>.csv, .md and .png into save_path (created if missing); returns their paths."""
    folder = pathlib.Path(save_path)
    folder.mkdir(parents=True, exist_ok=True)
    base = folder / report.benchmark.plot_name
    paths = {"csv": base.with_suffix(".csv"), "markdown": base.with_suffix(".md"), "png": base.with_suffix(".png")}
    paths["csv"].write_text(report.csv_text())
    paths["markdown"].write_text(report.markdown_text())
    report.save_plot(paths["png"])
    return paths


class Mark:
    """A function under @perf_report: run() measures it over each Benchmark's x values and lines."""

    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks

    def _measure(self, b, **kwargs):
        points = []
        for x in b.x_vals:
            sizes = {name: x for name in b.x_names}
            points.append((x, [self.fn(**sizes, **{b.line_arg: line}, **b.args, **kwargs) for line in b.line_vals]))
        return Report.from_results(b, points)

    def run(self, save_path=None, print_data=False, **kwargs):
        """Measures every Benchmark; with save_path, writes its CSV, Markdown and PNG there. Returns the Report (a
        list of them when perf_report was given a list)."""
        many = isinstance(self.benchmarks, (list, tuple))
        reports = [self._measure(b, **kwargs) for b in (self.benchmarks if many else [self.benchmarks])]
        for report in reports:
            if print_data:
                print(report.markdown_text())
            if save_path is not None:
                write_report(report, save_path)
        return reports if many else reports[0]


def perf_report(benchmarks):
    """Decorator: fn(**x, line_arg=line, **args) -> value, (value, min, max) or None, measured by .run()."""
    return lambda fn: Mark(fn, benchmarks)
