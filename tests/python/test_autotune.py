"""tessera.autotune without a GPU: fake timers stand in for the clock (real timing runs only on a GPU). Pruning
before any launch, the fastest survivor, the disk cache read by a second process, re-tuning on new key values,
the fixed-config mode and the errors for bad configs and keys."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tessera

N_ELEMS = 300  # not a multiple of any BLOCK below


def vector_add_configs():
    return [tessera.Config({"BLOCK": 128}, num_warps=4), tessera.Config({"BLOCK": 256}, num_warps=4),
            tessera.Config({"BLOCK": 64}, num_warps=2)]


class ScriptedTimer:
    """Runs each launch once and reports the next scripted time."""

    def __init__(self, times):
        self.times = list(times)
        self.calls = 0

    def __call__(self, fn):
        fn()
        self.calls += 1
        return self.times[self.calls - 1]


def never_timed(fn):
    raise AssertionError("the tuner benchmarked a config")


def add_tuned(tmp_path, timer, **kw):
    return tessera.autotune(configs=vector_add_configs(), key=["n"], timer=timer, cache_dir=tmp_path, **kw)(
        tessera.kernels.vector_add)


def run_add(tuned, n=N_ELEMS, backend="interpreter"):
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    tuned[lambda meta: (tessera.cdiv(n, meta["BLOCK"]),)](x, y, out, n, backend=backend)
    np.testing.assert_array_equal(out, x + 1)


def test_the_fastest_config_wins_and_is_remembered(tmp_path):
    timer = ScriptedTimer([2.0, 0.5, 1.0])
    tuned = add_tuned(tmp_path, timer)
    assert tuned.best_config is None
    run_add(tuned)
    assert timer.calls == 3
    assert tuned.best_config == tessera.Config({"BLOCK": 256}, num_warps=4)
    report = tuned.last_report
    assert report["source"] == "benchmarked" and report["winner"] == 1 and report["key"] == f"n={N_ELEMS}"
    assert [o["ms"] for o in report["outcomes"]] == [2.0, 0.5, 1.0]
    run_add(tuned)  # the same key: no more timing
    assert timer.calls == 3 and tuned.last_report["source"] == "cached"


def test_new_key_values_tune_again(tmp_path):
    timer = ScriptedTimer([2.0, 0.5, 1.0, 0.1, 0.5, 1.0])
    tuned = add_tuned(tmp_path, timer)
    run_add(tuned, n=300)
    run_add(tuned, n=1000)
    assert timer.calls == 6
    assert tuned.best_config == tessera.Config({"BLOCK": 128}, num_warps=4)


def test_a_second_process_reads_the_winner_without_benchmarking(tmp_path):
    run_add(add_tuned(tmp_path, ScriptedTimer([2.0, 0.5, 1.0])))
    script = textwrap.dedent(f"""
        import numpy as np, tessera
        def never_timed(fn):
            raise AssertionError("benchmarked")
        tuned = tessera.autotune(configs=[tessera.Config({{"BLOCK": 128}}, num_warps=4),
                                          tessera.Config({{"BLOCK": 256}}, num_warps=4),
                                          tessera.Config({{"BLOCK": 64}}, num_warps=2)],
                                 key=["n"], timer=never_timed, cache_dir={str(tmp_path)!r})(tessera.kernels.vector_add)
        n = {N_ELEMS}
        x = np.arange(n, dtype=np.float32); out = np.zeros(n, np.float32)
        tuned[lambda meta: (tessera.cdiv(n, meta["BLOCK"]),)](x, x, out, n)
        print(tuned.last_report["source"], tuned.best_config)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("TESSERA_AUTOTUNE_CONFIG", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "cached Config({'BLOCK': 256}, num_warps=4)"


@pytest.mark.sim
def test_configs_over_the_shared_memory_limit_are_pruned_before_any_launch(tmp_path):
    configs = [tessera.Config({"BM": 32, "BN": 32, "BK": 32}, num_warps=4),
               tessera.Config({"BM": 32, "BN": 32, "BK": 2048}, num_warps=8),  # 256 KB of operands, unpipelined
               tessera.Config({"BM": 16, "BN": 16, "BK": 16}, num_warps=1)]
    timer = ScriptedTimer([2.0, 1.0])
    mm = tessera.autotune(configs=configs, key=["M", "N", "K"], timer=timer, cache_dir=tmp_path)(
        tessera.kernels.matmul)
    M, N, K = 40, 24, 36
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    mm[lambda meta: (tessera.cdiv(M, meta["BM"]) * tessera.cdiv(N, meta["BN"]),)](
        a, b, c, M, N, K, K, 1, N, 1, N, 1, GROUP_M=4, backend="sim", arch="sm_90a")
    assert timer.calls == 2
    assert mm.last_report["outcomes"][1]["rejected"] == (
        "needs 262144 B of shared memory, the GPU gives 232448 B per block")
    assert mm.best_config == configs[2]
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), atol=1e-4)


@pytest.mark.sim
def test_descriptor_blocks_follow_each_config(tmp_path):
    # The TMA matmul (sm_90a) tuned over two tilings: each config reads its own BM x BK and BK x BN blocks,
    # whatever block the launch's descriptors carry; warp specialization and ping-pong consumer groups are options
    # tuned over.
    configs = [tessera.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4, warp_specialize=True),
               tessera.Config({"BM": 64, "BN": 32, "BK": 16}, num_warps=4),
               tessera.Config({"BM": 64, "BN": 32, "BK": 32}, num_warps=4, ping_pong=True)]
    timer = ScriptedTimer([2.0, 3.0, 1.0])  # the ping-pong config wins: the launch below runs it
    mm = tessera.autotune(configs=configs, key=["M", "N", "K"], timer=timer, cache_dir=tmp_path,
                          descriptor_blocks={"a": ("BM", "BK"), "b": ("BK", "BN")})(
        tessera.kernels.matmul_desc_f16_out)
    M, N, K = 40, 24, 40
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    da, db = tessera.TensorDescriptor(a, (8, 8)), tessera.TensorDescriptor(b, (8, 8))
    grid = lambda meta: (tessera.cdiv(M, meta["BM"]) * tessera.cdiv(N, meta["BN"]),)  # noqa: E731
    mm[grid](da, db, c, M, N, K, N, 1, GROUP_M=4, backend="sim", arch="sm_90a")
    assert timer.calls == 3 and mm.best_config == configs[2]
    assert [o["rejected"] for o in mm.last_report["outcomes"]] == ["", "", ""]
    assert da.block_shape == (8, 8)  # the caller's descriptors are left as they were
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), atol=2e-2, rtol=2e-3)
    # Without descriptor_blocks every config would read the 8x8 blocks: none can run, and the error says why.
    plain = tessera.autotune(configs=configs, key=["M", "N", "K"], timer=ScriptedTimer([]), cache_dir=tmp_path)(
        tessera.kernels.matmul_desc_f16_out)
    with pytest.raises(tessera.Error, match="config 0"):
        plain[grid](da, db, c, M, N, K, N, 1, GROUP_M=4, backend="sim", arch="sm_90a")


def test_bad_descriptor_blocks_are_clear_errors(tmp_path):
    configs = [tessera.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4)]
    kernel = tessera.kernels.matmul_desc_f16_out
    with pytest.raises(TypeError, match="descriptor_blocks must be a dict"):
        tessera.autotune(configs=configs, key=["M"], descriptor_blocks=[("a", "BM")])(kernel)
    with pytest.raises(tessera.Error, match="'c' is not a tensor descriptor parameter of the kernel"):
        tessera.autotune(configs=configs, key=["M"], descriptor_blocks={"c": ("BM", "BN")})(kernel)
    with pytest.raises(tessera.Error, match="'BX' is not a Const parameter of the kernel"):
        tessera.autotune(configs=configs, key=["M"], descriptor_blocks={"a": ("BM", "BX")})(kernel)
    # In fixed mode nothing is compiled before the launch: the launch says which Const is missing.
    fixed = tessera.autotune(configs=configs, key=["M"], fixed=0, descriptor_blocks={"a": ("BM", "GROUP_M")})(kernel)
    a = np.zeros((64, 64), np.float16)
    with pytest.raises(TypeError, match="the block of 'a' takes Const 'GROUP_M', which neither the config nor the "
                                        "launch sets"):
        fixed[(1,)](tessera.TensorDescriptor(a, (8, 8)), tessera.TensorDescriptor(a, (8, 8)), a, 64, 64, 64, 64, 1)


def test_fixed_mode_neither_compiles_nor_times(tmp_path, monkeypatch):
    tuned = add_tuned(tmp_path, never_timed, fixed=2)
    run_add(tuned)
    assert tuned.best_config == tessera.Config({"BLOCK": 64}, num_warps=2)
    assert tuned.last_report["source"] == "fixed"
    monkeypatch.setenv("TESSERA_AUTOTUNE_CONFIG", "1")
    from_env = add_tuned(tmp_path, never_timed)
    run_add(from_env)
    assert from_env.best_config == tessera.Config({"BLOCK": 256}, num_warps=4)


def test_progress_line_when_asked(tmp_path, capfd):
    run_add(add_tuned(tmp_path, ScriptedTimer([2.0, 0.5, 1.0]), progress=True))
    err = capfd.readouterr().err
    assert f"tessera autotune @vector_add n={N_ELEMS}: compiled 3/3, pruned 0, benchmarked 3/3" in err
    assert "best {BLOCK=256, num_warps=4}" in err


def test_without_a_timer_off_the_gpu_tuning_says_why(tmp_path):
    with pytest.raises(tessera.Error, match="backend 'interpreter' has no clock to tune with; real timing runs on "
                                            r"a CUDA or AMD GPU \(pass timer= to tessera.autotune\)"):
        run_add(add_tuned(tmp_path, None))


def test_bad_configs_and_keys_are_clear_errors(tmp_path):
    add = tessera.kernels.vector_add
    with pytest.raises(tessera.Error, match="autotune of kernel 'vector_add': no configs to choose from"):
        tessera.autotune(configs=[], key=["n"])(add)
    with pytest.raises(tessera.Error, match="config 0 {BLK=128, num_warps=4}: 'BLK' is not a Const parameter"):
        tessera.autotune(configs=[tessera.Config({"BLK": 128})], key=["n"])(add)
    with pytest.raises(tessera.Error, match="num_warps must be a power of two between 1 and 32, got 3"):
        tessera.autotune(configs=[tessera.Config({"BLOCK": 128}, num_warps=3)], key=["n"])(add)
    with pytest.raises(tessera.Error, match="unknown compile option 'num_stagez'"):
        tessera.autotune(configs=[tessera.Config({"BLOCK": 128}, num_stagez=3)], key=["n"])(add)
    with pytest.raises(tessera.Error, match="key 'size' is not a parameter of the kernel"):
        tessera.autotune(configs=vector_add_configs(), key=["size"])(add)
    with pytest.raises(TypeError, match="configs must be tessera.Config objects, got dict"):
        tessera.autotune(configs=[{"BLOCK": 128}], key=["n"])(add)
    with pytest.raises(TypeError, match="key must be a list of argument names"):
        tessera.autotune(configs=vector_add_configs(), key="n")(add)
    with pytest.raises(TypeError, match="decorates a tessera kernel, got function"):
        tessera.autotune(configs=vector_add_configs(), key=["n"])(lambda: None)
    tuned = add_tuned(tmp_path, never_timed)
    with pytest.raises(TypeError, match="'BLOCK' is set by the autotune configs; do not pass it to the launch"):
        x = np.zeros(4, np.float32)
        tuned[(1,)](x, x, x, 4, BLOCK=64)


def test_arrays_key_by_dtype():
    from tessera.autotune import _key_text
    assert _key_text(np.zeros(3, np.float16)) == "float16"
    assert _key_text(4096) == "4096" and _key_text(True) == "True"
