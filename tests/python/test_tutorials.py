"""The six Python tutorials' checks at small sizes, on the reference interpreter, in eager mode and on the
emulator (its default arch, sm_90a; tests/python/test_tutorial_kernels.py covers the other archs).

    PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python/test_tutorials.py
"""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

TUTORIALS = pathlib.Path(__file__).resolve().parents[2] / "tutorials"
sys.path.insert(0, str(TUTORIALS))  # the scripts import their shared tutorial_check module

import tutorial_check  # noqa: E402

BACKENDS = ["interpreter", "eager", pytest.param("sim", marks=pytest.mark.sim)]


def load(script):
    """Imports tutorials/<script>.py (its name starts with a digit, so plain `import` can't)."""
    spec = importlib.util.spec_from_file_location("tutorial_" + script, TUTORIALS / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def vector_add():
    return load("01_vector_add")


@pytest.fixture(scope="module")
def softmax():
    return load("02_softmax")


@pytest.fixture(scope="module")
def layernorm():
    return load("03_layernorm")


@pytest.fixture(scope="module")
def matmul():
    return load("04_matmul")


@pytest.fixture(scope="module")
def attention():
    return load("05_attention")


@pytest.fixture(scope="module")
def dropout():
    return load("06_dropout")


@pytest.mark.parametrize("backend", BACKENDS)
def test_vector_add(vector_add, backend):
    assert vector_add.run_checks(n=1000, block=256, seed=1, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax(softmax, backend):
    assert softmax.run_checks(rows=5, cols=100, seed=2, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_layernorm_forward_and_backward(layernorm, backend):
    assert layernorm.run_checks(rows=7, cols=100, seed=3, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_with_epilogues(matmul, backend):
    assert matmul.run_checks(M=40, N=24, K=40, seed=4, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_attention_causal_and_not(attention, backend):
    assert attention.run_checks(batch=2, heads=1, seq_len=40, head_dim=32, seed=5, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dropout_masked_and_seeded(dropout, backend):
    assert dropout.run_checks(n=3000, p=0.4, seed=6, backend=backend)


def test_dropout_reference_is_philox_4x32_10(dropout):
    """The script's numpy Philox against Random123's known answer for counter 0 and key 0."""
    words = dropout.philox(0, np.zeros(1, np.int32))
    assert [int(w[0]) for w in words] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


def test_e4m3_encoding_rounds_to_the_nearest_value(matmul):
    codes = matmul.to_e4m3(np.array([0.0, 1.0, -1.5, 448.0, 1.0625 + 1e-9, 2.0 ** -9, 500.0]))
    assert codes.tolist() == [0x00, 0x38, 0xBC, 0x7E, 0x39, 0x01, 0x7E]  # 500 -> the largest finite, 448
    assert np.isnan(matmul.E4M3_VALUES[0x7F]) and matmul.E4M3_VALUES[0x78] == 256.0


@pytest.mark.sim
def test_fp8_matmul_runs_on_wgmma_under_the_emulator(matmul, monkeypatch):
    import tessera
    monkeypatch.setenv("TESSERA_SIM_ARCH", "sm_90a")
    rng = np.random.default_rng(6)
    a, b_t = matmul.to_e4m3(rng.uniform(-1, 1, (70, 64))), matmul.to_e4m3(rng.uniform(-1, 1, (50, 64)))
    got = matmul.matmul_fp8(a, b_t, backend="sim")
    np.testing.assert_allclose(got, matmul.E4M3_VALUES[a] @ matmul.E4M3_VALUES[b_t].T, rtol=1e-5, atol=1e-5)
    report = tessera.sim.last_report()
    assert report["warp_instructions"]["mma"] > 0 and report["findings"] == []


def test_main_prints_pass(vector_add, capsys):
    assert vector_add.main(["--seed", "5"]) == 0
    assert "01 vector add (python): PASS" in capsys.readouterr().out


@pytest.mark.sim
def test_main_on_the_emulator_prints_each_kernels_memory_figures(layernorm, capsys, monkeypatch):
    monkeypatch.setenv("TESSERA_SIM_ARCH", "sm_80")
    assert layernorm.main(["--backend", "sim", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "memory figures per kernel (03 layernorm, emulated):" in out
    header = next(line for line in out.splitlines() if "ld.eff" in line)
    assert header.split() == ["kernel", "arch", "launches", "ld.eff", "st.eff", "bank", "conflicts", "barriers"]
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith("    layernorm_")}
    assert sorted(rows) == ["layernorm_bwd_atomic", "layernorm_bwd_dwdb", "layernorm_bwd_dx", "layernorm_fwd"]
    assert all(row[1] == "sm_80" and row[2] == "1" for row in rows.values())
    assert all(0 < float(row[3]) <= 1 and 0 < float(row[4]) <= 1 for row in rows.values())
    assert int(rows["layernorm_fwd"][6]) > 0  # its row reductions wait at barriers
    assert "03 layernorm (python): PASS" in out


def test_check_reports_wrong_results(capsys):
    """The scripts' PASS means something: a result off by more than the tolerance, or a NaN, fails."""
    want = np.linspace(-1, 1, 100)
    assert tutorial_check.check("exact", want.astype(np.float32), want, atol=1e-6, rtol=1e-6)
    off = want.astype(np.float32).copy()
    off[17] += 1e-3
    assert not tutorial_check.check("one element off", off, want, atol=1e-6, rtol=1e-6)
    nan = want.astype(np.float32).copy()
    nan[3] = np.nan
    assert not tutorial_check.check("a NaN", nan, want, atol=1e-6, rtol=1e-6)
    assert "FAILED" in capsys.readouterr().out


def test_softmax_is_stable_for_large_inputs(softmax):
    """Rows whose exp() overflows f32 without the max subtraction still give finite probabilities."""
    x = np.full((2, 40), 100.0, np.float32)
    x[1, :20] = -100.0
    got = softmax.softmax(x)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, softmax.reference(x), rtol=1e-5, atol=1e-7)


def test_layernorm_backward_variants_agree(layernorm):
    """Two-stage and atomics reductions of dw/db give the same gradients (the interpreter runs programs in order,
    so here even the rounding agrees closely)."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((9, 70)).astype(np.float32)
    dy = rng.standard_normal((9, 70)).astype(np.float32)
    w = rng.standard_normal(70).astype(np.float32)
    b = np.zeros(70, np.float32)
    _, mean, rstd = layernorm.layernorm_forward(x, w, b, 1e-5, block=32)
    two_stage = layernorm.layernorm_backward(x, dy, w, mean, rstd, rows_per_program=2, atomics=False)
    atomics = layernorm.layernorm_backward(x, dy, w, mean, rstd, rows_per_program=2, atomics=True)
    for a, b_ in zip(two_stage, atomics):
        np.testing.assert_allclose(a, b_, rtol=1e-5, atol=1e-6)


def test_matmul_f16_output_is_float16(matmul):
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (20, 30)).astype(np.float16)
    b = rng.uniform(-1, 1, (30, 10)).astype(np.float16)
    c = matmul.matmul(a, b, "relu", np.float16)
    assert c.dtype == np.float16
    # Off the GPU there is no clock: the autotuned kernel uses the first config, without tuning.
    tuned = matmul.tuned(matmul.tessera.kernels.matmul_epilogue_f16, "interpreter")
    assert tuned.best_config == matmul.CONFIGS[0] and tuned.last_report["source"] == "fixed"
    assert np.all(c >= 0)
    np.testing.assert_allclose(c.astype(np.float64), np.maximum(a.astype(np.float64) @ b.astype(np.float64), 0),
                               rtol=1e-3, atol=1e-4)


def test_bf16_bit_patterns_round_to_nearest_even(attention):
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, -2.5, 1 + 2**-9], np.float32)  # ties go to the even neighbour
    bits = attention.to_bf16_bits(x)
    np.testing.assert_array_equal(bits, [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x3F80])
    np.testing.assert_array_equal(attention.from_bf16_bits(bits), [1.0, 1.0, 1 + 2**-6, -2.5, 1.0])


def test_attention_rejects_mismatched_inputs(attention):
    q = np.zeros((1, 1, 8, 16), np.float16)
    with pytest.raises(ValueError, match="q, k and v differ"):
        attention.attention(q, q, np.zeros((1, 1, 8, 16), np.uint16))
    with pytest.raises(ValueError, match="head dimension .* must be contiguous"):
        wide = np.zeros((1, 1, 8, 32), np.float16)[..., ::2]
        attention.attention(wide, wide, wide)
