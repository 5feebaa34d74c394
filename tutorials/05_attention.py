#!/usr/bin/env python3
"""Tutorial 5: fused attention forward (online softmax) and backward, causal and not, f16 and bf16, from Python.
See 05_attention.md.

    PYTHONPATH=build/python python3 tutorials/05_attention.py [--backend interpreter|eager|cuda|sim]
"""

import math
import sys

import numpy as np
import tessera

import tutorial_check


def to_bf16_bits(x):
    """float array -> bf16 bit patterns (uint16), rounded to nearest even: numpy has no bfloat16."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def attention(q, k, v, causal=False, sm_scale=None, BM=32, BN=16, backend="interpreter"):
    """softmax(q @ k^T * sm_scale) @ v over [batch, heads, seq_len, head_dim] arrays whose last dimension is
    contiguous: float16, or uint16 holding bf16 bit patterns. The result has the inputs' type."""
    batch, heads, seq_len, head_dim = q.shape
    if k.shape != q.shape or v.shape != q.shape or q.dtype != k.dtype or q.dtype != v.dtype:
        raise ValueError(f"q, k and v differ: {q.shape} {q.dtype}, {k.shape} {k.dtype}, {v.shape} {v.dtype}")
    if any(x.strides[-1] != x.itemsize for x in (q, k, v)):
        raise ValueError("the head dimension of q, k and v must be contiguous")
    kernel = {np.dtype(np.float16): tessera.kernels.attention_fwd,
              np.dtype(np.uint16): tessera.kernels.attention_fwd_bf16}[q.dtype]
    out = np.empty_like(q)
    strides = [s // x.itemsize for x in (q, k, v, out) for s in x.strides[:3]]  # batch, head, row; in elements
    grid = (tessera.cdiv(seq_len, BM), batch * heads)
    scale = 1 / math.sqrt(head_dim) if sm_scale is None else sm_scale
    kernel[grid](q, k, v, out, scale, heads, seq_len, *strides, BM=BM, BN=BN, HEAD_DIM=head_dim,
                 CAUSAL=int(causal), backend=backend)
    return out


def attention_desc(q, k, v, causal=False, sm_scale=None, BM=32, BN=16, backend="interpreter", overlap=False,
                   **options):
    """The same through tensor descriptors (attention_fwd_desc), as Triton's Hopper tutorial passes them: each of
    q, k, v and the output as a [batch * heads, seq_len, head_dim] tensor read and written in whole blocks
    ([1, BM, head_dim] and [1, BN, head_dim]), zero past seq_len. The arrays must be contiguous. With `overlap`,
    attention_fwd_desc_overlap: each block's softmax beside the next block's Q K^T. `options` go to the launch
    (num_warps; warp_specialize=True on sm_90a: a producer warpgroup issues K's and V's TMA copies)."""
    batch, heads, seq_len, head_dim = q.shape
    if any(not x.flags.c_contiguous for x in (q, k, v)):
        raise ValueError("attention_desc views q, k and v as [batch * heads, seq_len, head_dim]: make them contiguous")
    name = "attention_fwd_desc" + ("_overlap" if overlap else "") + ("_bf16" if q.dtype == np.uint16 else "")
    kernel = getattr(tessera.kernels, name)
    out = np.empty_like(q)
    descs = [tessera.TensorDescriptor(x.reshape(batch * heads, seq_len, head_dim), (1, block, head_dim))
             for x, block in ((q, BM), (k, BN), (v, BN), (out, BM))]
    scale = 1 / math.sqrt(head_dim) if sm_scale is None else sm_scale
    kernel[(tessera.cdiv(seq_len, BM), batch * heads)](*descs, scale, seq_len, BM=BM, BN=BN, HEAD_DIM=head_dim,
                                                       CAUSAL=int(causal), backend=backend, **options)
    return out


def attention_backward(q, k, v, d_o, causal=False, BM=32, BN=16, backend="interpreter"):
    """The forward again, saving each row's log2-sum-exp2 (attention_fwd_lse), then the gradients dq, dk, dv of
    sum(out * d_o) (FlashAttention-2: attention_bwd_preprocess, attention_bwd_dkdv, attention_bwd_dq). All arrays
    contiguous [batch, heads, seq_len, head_dim], float16 or bf16 bits; returns (out, dq, dk, dv)."""
    batch, heads, seq_len, head_dim = q.shape
    if any(not x.flags.c_contiguous for x in (q, k, v, d_o)):
        raise ValueError("the backward kernels take one layout for every tensor: make them contiguous")
    suffix = "_bf16" if q.dtype == np.uint16 else ""
    kernel = lambda name: getattr(tessera.kernels, name + suffix)  # noqa: E731
    out, dq, dk, dv = (np.empty_like(q) for _ in range(4))
    lse = np.empty((batch * heads, seq_len), np.float32)  # per row: the forward's statistics, in log2 units
    delta = np.empty((batch * heads, seq_len), np.float32)  # per row: sum(out * d_o)
    layout = (heads, seq_len, *(s // q.itemsize for s in q.strides[:3]))
    scale = 1 / math.sqrt(head_dim)
    rows, keys = (tessera.cdiv(seq_len, BM), batch * heads), (tessera.cdiv(seq_len, BN), batch * heads)
    blocks = dict(BM=BM, BN=BN, HEAD_DIM=head_dim, CAUSAL=int(causal), backend=backend)
    kernel("attention_fwd_lse")[rows](q, k, v, out, lse, scale, *layout, **blocks)
    kernel("attention_bwd_preprocess")[rows](out, d_o, delta, *layout, BM=BM, HEAD_DIM=head_dim, backend=backend)
    kernel("attention_bwd_dkdv")[keys](q, k, v, d_o, lse, delta, dk, dv, scale, *layout, **blocks)
    kernel("attention_bwd_dq")[rows](q, k, v, d_o, lse, delta, dq, scale, *layout, **blocks)
    return out, dq, dk, dv


def reference_backward(q, k, v, d_o, causal, sm_scale):
    """dq, dk, dv in float64: dV = P^T dO, dS = P * (dO V^T - rowsum(dO * O)), dQ = dS K s, dK = dS^T Q s."""
    s = np.einsum("zhmd,zhnd->zhmn", q, k) * sm_scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    dp = np.einsum("zhmd,zhnd->zhmn", d_o, v)
    ds = p * (dp - np.einsum("zhmd,zhmd->zhm", d_o, np.einsum("zhmn,zhnd->zhmd", p, v))[..., None])
    return (np.einsum("zhmn,zhnd->zhmd", ds, k) * sm_scale, np.einsum("zhmn,zhmd->zhnd", ds, q) * sm_scale,
            np.einsum("zhmn,zhmd->zhnd", p, d_o))


def reference(q, k, v, causal, sm_scale):
    """The same in float64, one (seq_len x seq_len) score matrix at a time."""
    s = np.einsum("zhmd,zhnd->zhmn", q, k) * sm_scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("zhmn,zhnd->zhmd", p / p.sum(axis=-1, keepdims=True), v)


def run_checks(batch=1, heads=2, seq_len=75, head_dim=64, seed=0, backend="interpreter"):
    """seq_len is a multiple of neither block (BM = 32, BN = 16): the last query and key blocks are masked."""
    rng = np.random.default_rng(seed)
    shape = (batch, heads, seq_len, head_dim)
    x = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(3)]
    sm_scale = 1 / math.sqrt(head_dim)
    # (name, encode, decode, tolerance): P and the output are rounded to the input type, which sets the tolerance.
    types = [("f16", lambda a: a.astype(np.float16), lambda b: b.astype(np.float64), 5e-4),
             ("bf16", to_bf16_bits, lambda b: from_bf16_bits(b).astype(np.float64), 4e-3)]
    ok = True
    for name, encode, decode, tol in types:
        q, k, v = (encode(a) for a in x)
        for causal in (False, True):
            want = reference(decode(q), decode(k), decode(v), causal, sm_scale)
            what = f"{name} {'causal' if causal else 'non-causal'}, {backend} ({batch}x{heads}x{seq_len}x{head_dim})"
            runs = [("", attention), (", through descriptors", attention_desc),
                    (", softmax beside the next Q K^T", lambda *args, **kw: attention_desc(*args, overlap=True, **kw))]
            if tutorial_check.launch_arch(backend) == "sm_90a":  # a warpgroup of wgmma needs BM = 64 on 4 warps
                runs.append((", warp-specialized", lambda *args, **kw: attention_desc(
                    *args, BM=64, BN=64, num_warps=4, warp_specialize=True, **kw)))
                runs.append((", warp-specialized and persistent", lambda *args, **kw: attention_desc(
                    *args, BM=64, BN=64, num_warps=4, warp_specialize=True, persistent=True, **kw)))
            for how, run in runs:
                got = decode(run(q, k, v, causal, sm_scale, backend=backend))
                ok &= tutorial_check.check(what + how, got, want, atol=tol, rtol=tol)
            # The backward: gradients of sum(out * d_o), each within a few input-type ulps of its largest element.
            d_o = encode(rng.uniform(-1, 1, shape).astype(np.float32))
            grads = attention_backward(q, k, v, d_o, causal, backend=backend)[1:]
            wants = reference_backward(decode(q), decode(k), decode(v), decode(d_o), causal, sm_scale)
            for grad, got, want in zip(("dq", "dk", "dv"), grads, wants):
                scale = np.abs(want).max()
                ok &= tutorial_check.check(f"{what}, backward {grad}", decode(got), want, atol=2 * tol * scale, rtol=0)
    return ok


def main(argv=None):
    return tutorial_check.main("05 attention", __doc__.splitlines()[0], run_checks, argv)


if __name__ == "__main__":
    sys.exit(main())
