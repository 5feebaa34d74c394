"""tessera.testing.perf_report / Benchmark: the CSV, Markdown table and PNG plot of a benchmark, from CPU data."""

import csv

import numpy as np
import pytest

import tessera
from tessera.testing import Benchmark, do_bench, perf_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _benchmark(**overrides):
    spec = dict(x_names=["n"], x_vals=[256, 1024, 4096], line_arg="provider", line_vals=["fast", "slow"],
                line_names=["Fast", "Slow"], plot_name="toy", ylabel="GB/s", x_log=True,
                styles=[("red", "-"), ("blue", "--")])
    spec.update(overrides)
    return Benchmark(**spec)


def _toy(n, provider, scale=1.0):
    if provider == "slow" and n == 4096:
        return None  # no result at this size
    return scale * n / (10 if provider == "fast" else 100)


def _pixels(path):
    import matplotlib.image
    return matplotlib.image.imread(str(path))


def _has_colour(image, rgb):
    return bool(np.any(np.all(np.abs(image[..., :3] - np.array(rgb)) < 0.05, axis=-1)))


def test_run_calls_the_function_for_every_size_and_line_and_writes_three_files(tmp_path):
    calls = []

    @perf_report(_benchmark(args={"scale": 2.0}))
    def bench(n, provider, scale):
        calls.append((n, provider, scale))
        return _toy(n, provider, scale)

    report = bench.run(save_path=tmp_path)
    assert calls == [(n, p, 2.0) for n in (256, 1024, 4096) for p in ("fast", "slow")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy.csv", "toy.md", "toy.png"]
    assert [(x, [m and m.value for m in ms]) for x, ms in report.points] == [
        (256, [51.2, 5.12]), (1024, [204.8, 20.48]), (4096, [819.2, None])]


def test_the_csv_has_a_column_per_line_and_leaves_missing_results_empty(tmp_path):
    perf_report(_benchmark())(_toy).run(save_path=tmp_path)
    with open(tmp_path / "toy.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["n", "Fast", "Slow"]
    assert rows[1:] == [["256", "25.6", "2.56"], ["1024", "102.4", "10.24"], ["4096", "409.6", ""]]


def test_the_markdown_table_is_well_formed(tmp_path):
    perf_report(_benchmark())(_toy).run(save_path=tmp_path)
    lines = (tmp_path / "toy.md").read_text().splitlines()
    assert lines[0] == "toy (GB/s)" and lines[1] == ""
    table = lines[2:]
    assert len(table) == 2 + 3  # header, separator, one row per size
    assert all(line.startswith("|") and line.endswith("|") and line.count("|") == 4 for line in table)
    assert [c.strip() for c in table[0].strip("|").split("|")] == ["n", "Fast", "Slow"]
    assert all(set(c) <= set("-:") and c.endswith(":") for c in table[1].strip("|").split("|"))
    assert [c.strip() for c in table[4].strip("|").split("|")] == ["4096", "409.60", "-"]


def test_the_png_is_an_image_with_each_line_in_its_colour(tmp_path):
    perf_report(_benchmark())(_toy).run(save_path=tmp_path)
    path = tmp_path / "toy.png"
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    image = _pixels(path)
    assert image.shape[:2] == (450, 700)
    assert _has_colour(image, (1, 0, 0)) and _has_colour(image, (0, 0, 1))

    # A line without any result is not drawn.
    perf_report(_benchmark(plot_name="fast-only"))(lambda n, provider: _toy(n, "fast") if provider == "fast"
                                                   else None).run(save_path=tmp_path)
    image = _pixels(tmp_path / "fast-only.png")
    assert _has_colour(image, (1, 0, 0)) and not _has_colour(image, (0, 0, 1))


def test_value_min_max_results_add_spread_columns(tmp_path):
    report = perf_report(_benchmark(x_vals=[256]))(lambda n, provider: (2.0, 1.0, 3.0)).run(save_path=tmp_path)
    assert report.points[0][1][0].low == 1.0 and report.points[0][1][0].high == 3.0
    rows = list(csv.reader((tmp_path / "toy.csv").read_text().splitlines()))
    assert rows == [["n", "Fast", "Slow", "Fast min", "Fast max", "Slow min", "Slow max"],
                    ["256", "2.0", "2.0", "1.0", "3.0", "1.0", "3.0"]]


def test_a_list_of_benchmarks_gives_a_report_each_and_print_data_prints_the_tables(tmp_path, capsys):
    reports = perf_report([_benchmark(plot_name="a"), _benchmark(plot_name="b")])(_toy).run(save_path=tmp_path,
                                                                                            print_data=True)
    assert [r.benchmark.plot_name for r in reports] == ["a", "b"]
    assert {p.name for p in tmp_path.iterdir()} == {f"{n}.{e}" for n in "ab" for e in ("csv", "md", "png")}
    printed = capsys.readouterr().out
    assert "a (GB/s)" in printed and "b (GB/s)" in printed


@pytest.mark.parametrize("overrides, message", [
    ({"line_names": ["Fast"]}, "2 line_vals but 1 line_names"),
    ({"styles": [("red", "-")]}, "2 line_vals but 1 styles"),
    ({"x_vals": []}, "needs x_names, x_vals and line_vals"),
    ({"plot_name": "../escape"}, "must be a file name"),
])
def test_bad_benchmarks_are_refused(overrides, message):
    with pytest.raises(ValueError, match=message):
        _benchmark(**overrides)


def test_a_malformed_result_is_refused():
    with pytest.raises(ValueError, match=r"a number or \(value, min, max\)"):
        perf_report(_benchmark())(lambda n, provider: (1.0, 2.0)).run()


def test_an_interpreter_benchmark_end_to_end(tmp_path):
    @perf_report(Benchmark(x_names=["n"], x_vals=[128, 512], line_arg="provider", line_vals=["tessera", "numpy"],
                           line_names=["Tessera (interpreter)", "numpy"], plot_name="vector-add-cpu", ylabel="GB/s"))
    def bench(n, provider):
        x, y = np.ones(n, np.float32), np.full(n, 2.0, np.float32)
        out = np.zeros(n, np.float32)

        def tessera_add():
            tessera.kernels.vector_add[(tessera.cdiv(n, 128),)](x, y, out, n, BLOCK=128)

        ms = do_bench(tessera_add if provider == "tessera" else lambda: np.add(x, y, out=out), warmup=1, rep=3,
                      device="cpu")
        np.testing.assert_array_equal(out, 3.0)
        return 3 * n * 4 / ms / 1e6

    report = bench.run(save_path=tmp_path)
    assert all(m is not None and m.value > 0 for _, ms in report.points for m in ms)
    assert (tmp_path / "vector-add-cpu.png").read_bytes()[:8] == PNG_SIGNATURE
    assert len((tmp_path / "vector-add-cpu.csv").read_text().splitlines()) == 3
