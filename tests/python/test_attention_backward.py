"""The fused attention backward (kernels/attention_backward.h: attention_fwd_lse, then attention_bwd_preprocess,
attention_bwd_dkdv and attention_bwd_dq) against torch's float64 autograd: small blocks on the interpreter, in eager
mode and on the emulator (sm_80, sm_90a, gfx942); larger blocks, the ones whose PTX has no spills at head dim 64, on
the emulator. Sequence lengths are multiples of neither block."""

import math

import pytest

torch = pytest.importorskip("torch")

import tessera  # noqa: E402

K = tessera.kernels
SUFFIX = {torch.float16: "", torch.bfloat16: "_bf16"}
# dQ, dK, dV and O are rounded to the input type, and so are P and dS before their products: a few of its ulps of
# the largest gradient.
TOLERANCE = {torch.float16: 4e-3, torch.bfloat16: 3e-2}


def kernel(name, dtype):
    return getattr(K, name + SUFFIX[dtype])


def forward_and_backward(q, k, v, d_o, causal, fwd_blocks, dkdv_blocks, dq_blocks, **launch):
    """Tessera's O, log2-sum-exp2 statistics and gradients for contiguous [batch, heads, seq_len, head_dim] inputs.
    Each *_blocks is (BM, BN, num_warps)."""
    batch, heads, seq_len, head_dim = q.shape
    scale = 1 / math.sqrt(head_dim)
    layout = (heads, seq_len, *(q.stride(i) for i in range(3)))
    nan = lambda: torch.full_like(q, math.nan)  # noqa: E731
    out, dq, dk, dv = nan(), nan(), nan(), nan()
    lse = torch.full((batch * heads, seq_len), math.nan)
    delta = torch.full((batch * heads, seq_len), math.nan)
    bm, bn, warps = fwd_blocks
    kernel("attention_fwd_lse", q.dtype)[(tessera.cdiv(seq_len, bm), batch * heads)](
        q, k, v, out, lse, scale, *layout, BM=bm, BN=bn, HEAD_DIM=head_dim, CAUSAL=int(causal), num_warps=warps, **launch)
    kernel("attention_bwd_preprocess", q.dtype)[(tessera.cdiv(seq_len, bm), batch * heads)](
        out, d_o, delta, *layout, BM=bm, HEAD_DIM=head_dim, num_warps=warps, **launch)
    bm, bn, warps = dkdv_blocks
    kernel("attention_bwd_dkdv", q.dtype)[(tessera.cdiv(seq_len, bn), batch * heads)](
        q, k, v, d_o, lse, delta, dk, dv, scale, *layout, BM=bm, BN=bn, HEAD_DIM=head_dim, CAUSAL=int(causal),
        num_warps=warps, **launch)
    bm, bn, warps = dq_blocks
    kernel("attention_bwd_dq", q.dtype)[(tessera.cdiv(seq_len, bm), batch * heads)](
        q, k, v, d_o, lse, delta, dq, scale, *layout, BM=bm, BN=bn, HEAD_DIM=head_dim, CAUSAL=int(causal),
        num_warps=warps, **launch)
    return out, lse, dq, dk, dv


def reference(q, k, v, d_o, causal):
    """O, the statistics in log2 units, and dQ, dK, dV by float64 autograd."""
    q, k, v = (x.double().requires_grad_() for x in (q, k, v))
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        seq_len = q.shape[-2]
        s = s.masked_fill(~torch.ones(seq_len, seq_len, dtype=torch.bool).tril(), -math.inf)
    out = torch.softmax(s, dim=-1) @ v
    out.backward(d_o.double())
    lse = (torch.logsumexp(s, dim=-1) / math.log(2)).reshape(-1, q.shape[-2])
    return out.detach(), lse.detach(), q.grad, k.grad, v.grad


def check(got, want, dtype):
    tol = TOLERANCE[dtype]
    for name, g, w in zip(("out", "lse", "dq", "dk", "dv"), got, want):
        scale = w.abs().max().item()
        torch.testing.assert_close(g.double(), w, atol=tol * scale, rtol=0, msg=lambda m, name=name: f"{name}: {m}")


def inputs(shape, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=gen).to(dtype) for _ in range(4)]


LAUNCHES = [pytest.param({"backend": b}, id=b) for b in ("interpreter", "eager")] + [
    pytest.param({"backend": "sim", "arch": arch}, id=f"sim-{arch}", marks=pytest.mark.sim)
    for arch in ("sm_80", "sm_90a", "gfx942")]


@pytest.mark.parametrize("launch", LAUNCHES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_small_blocks(launch, dtype, causal):
    # 2 x 2 (batch, head) pairs of 53 rows: the last query and key blocks are ragged.
    q, k, v, d_o = inputs((2, 2, 53, 32), dtype)
    got = forward_and_backward(q, k, v, d_o, causal, (32, 16, 4), (32, 16, 4), (32, 16, 4), **launch)
    check(got, reference(q, k, v, d_o, causal), dtype)


@pytest.mark.sim
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("arch, dtype", [("sm_90a", torch.float16), ("sm_80", torch.bfloat16)])
def test_large_blocks_on_the_emulator(arch, dtype, causal):
    # dK and dV over 128 keys with 8 warps, dQ over 128 rows with 8 warps: no spills at head dim 64 (ptxas 13.0).
    q, k, v, d_o = inputs((1, 2, 195, 64), dtype, seed=1)
    got = forward_and_backward(q, k, v, d_o, causal, (128, 64, 8), (64, 128, 8), (128, 64, 8), backend="sim", arch=arch)
    check(got, reference(q, k, v, d_o, causal), dtype)


def test_causal_must_be_zero_or_one():
    with pytest.raises(tessera.Error, match="CAUSAL must be 0 or 1, got 2"):
        K.attention_bwd_dq.compile(BM=32, BN=16, HEAD_DIM=32, CAUSAL=2)
