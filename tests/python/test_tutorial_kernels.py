"""Every tutorial kernel launched from Python on numpy arrays, on the interpreter, in eager mode and on the emulator
(backend="sim": sm_80, sm_90a, gfx942), checked against numpy at sizes that are not multiples of the block."""

import numpy as np
import pytest

import tessera

BACKENDS = ["interpreter", "eager"]
# The host backends, then the emulated GPUs as "sim-<arch>".
LAUNCHES = BACKENDS + [pytest.param(f"sim-{arch}", marks=pytest.mark.sim) for arch in ("sm_80", "sm_90a", "gfx942")]


def options(launch):
    """The launch keywords for a LAUNCHES entry."""
    if launch.startswith("sim-"):
        return {"backend": "sim", "arch": launch[len("sim-"):]}
    return {"backend": launch}


@pytest.mark.parametrize("launch", LAUNCHES)
def test_vector_add(rng, launch):
    n = 1000  # not a multiple of BLOCK: the last program's mask matters
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.full(n + 8, 7.0, dtype=np.float32)
    tessera.kernels.vector_add[(tessera.cdiv(n, 256),)](x, y, out[:n], n, BLOCK=256, **options(launch))
    np.testing.assert_array_equal(out[:n], x + y)
    np.testing.assert_array_equal(out[n:], 7.0)  # nothing written past n


@pytest.mark.parametrize("launch", LAUNCHES)
def test_softmax(rng, launch):
    rows, cols = 7, 100  # BLOCK = 128: 28 masked lanes per row
    x = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
    out = np.zeros((rows, cols), dtype=np.float32)
    tessera.kernels.softmax[(rows,)](out, x, x.strides[0] // 4, out.strides[0] // 4, cols, BLOCK=128,
                                     **options(launch))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_layernorm_fwd(rng, launch):
    rows, cols, eps = 5, 300, 1e-5  # 300 columns in BLOCK=128 chunks: 3 chunks, the last one partial
    x = rng.standard_normal((rows, cols), dtype=np.float32) * 3 + 1
    w = rng.standard_normal(cols, dtype=np.float32)
    b = rng.standard_normal(cols, dtype=np.float32)
    y = np.zeros_like(x)
    mean = np.zeros(rows, dtype=np.float32)
    rstd = np.zeros(rows, dtype=np.float32)
    tessera.kernels.layernorm_fwd[(rows,)](x, y, w, b, mean, rstd, cols, cols, eps, BLOCK=128, **options(launch))
    x64 = x.astype(np.float64)
    ref_mean = x64.mean(axis=1)
    ref_rstd = 1 / np.sqrt(x64.var(axis=1) + eps)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, ref_rstd, rtol=1e-5)
    ref_y = (x64 - ref_mean[:, None]) * ref_rstd[:, None] * w + b
    np.testing.assert_allclose(y, ref_y, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_matmul_f16(rng, launch):
    M, N, K = 37, 45, 70  # none a multiple of the 16x16x16 blocks
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), dtype=np.float32)
    BM = BN = BK = 16
    grid = lambda meta: (tessera.cdiv(M, meta["BM"]) * tessera.cdiv(N, meta["BN"]),)
    tessera.kernels.matmul[grid](a, b, c, M, N, K, *(s // 2 for s in a.strides), *(s // 2 for s in b.strides),
                                 *(s // 4 for s in c.strides), BM=BM, BN=BN, BK=BK, GROUP_M=2, **options(launch))
    # f16 products are exact in f32, so only the f32 summation order differs from numpy's.
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)


def test_matmul_transposed_b_through_strides(rng):
    M, N, K = 20, 24, 33
    a = rng.standard_normal((M, K)).astype(np.float16)
    bt = rng.standard_normal((N, K)).astype(np.float16)  # B = bt.T: strides (1, K), data stays contiguous
    c = np.zeros((M, N), dtype=np.float32)
    grid = (tessera.cdiv(M, 16) * tessera.cdiv(N, 16),)
    tessera.kernels.matmul[grid](a, bt, c, M, N, K, K, 1, 1, K, N, 1, BM=16, BN=16, BK=16, GROUP_M=1)
    np.testing.assert_allclose(c, a.astype(np.float64) @ bt.T.astype(np.float64), rtol=1e-4, atol=1e-4)


def test_interpreter_and_eager_agree_bit_for_bit(rng):
    rows, cols = 3, 50
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    outs = []
    for backend in BACKENDS:
        out = np.zeros_like(x)
        tessera.kernels.softmax[rows](out, x, cols, cols, cols, BLOCK=64, backend=backend)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.sim
def test_matmul_on_32x32_mfma_instructions(rng):
    """matrix_instr_nonkdim=32 (AMDGPU): the matmul's dot runs on v_mfma_f32_32x32x8 (16 accumulator registers per
    lane and block, K steps of 8) on the emulated gfx942, at ragged sizes; 16 and the default keep 16x16x16."""
    M, N, K = 150, 200, 90
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    meta = dict(BM=64, BN=128, BK=32, GROUP_M=2)  # 4 waves side by side along N: 32 columns each
    grid = (tessera.cdiv(M, 64) * tessera.cdiv(N, 128),)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    matmul = tessera.kernels.matmul
    for size, instruction in ((32, "llvm.amdgcn.mfma.f32.32x32x8f16"), (16, "llvm.amdgcn.mfma.f32.16x16x16f16"),
                              (0, "llvm.amdgcn.mfma.f32.16x16x16f16")):
        compiled = matmul.compile(target="amdgpu", arch="gfx942", num_warps=4, matrix_instr_nonkdim=size, **meta)
        assert instruction in compiled.llvm_ir, size
        assert ("32x32x8" in compiled.llvm_ir) == (size == 32)
        c = np.zeros((M, N), dtype=np.float32)
        matmul[grid](a, b, c, M, N, K, *(s // 2 for s in a.strides), *(s // 2 for s in b.strides),
                     *(s // 4 for s in c.strides), num_warps=4, backend="sim", arch="gfx942",
                     matrix_instr_nonkdim=size, **meta)
        np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)


def test_matrix_instr_nonkdim_is_checked_and_ignored_on_nvptx():
    meta = dict(BM=64, BN=128, BK=32, GROUP_M=2)
    with pytest.raises(ValueError, match=r"matrix_instr_nonkdim must be 0 \(the target's choice\), 16 or 32, got 24"):
        tessera.kernels.matmul.compile(target="amdgpu", matrix_instr_nonkdim=24, **meta)
    with pytest.raises(ValueError, match="matrix_instr_nonkdim must be"):
        tessera.kernels.matmul[(1,)](None, None, None, 1, 1, 1, 1, 1, 1, 1, 1, 1, matrix_instr_nonkdim=True, **meta)
    # NVIDIA has no such choice: the option changes nothing there (one autotune config list serves every target).
    plain = tessera.kernels.matmul.compile(target="nvptx", arch="sm_80", num_warps=4, **meta)
    asked = tessera.kernels.matmul.compile(target="nvptx", arch="sm_80", num_warps=4, matrix_instr_nonkdim=32, **meta)
    assert asked.ptx == plain.ptx
