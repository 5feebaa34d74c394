#!/usr/bin/env python3
"""Tutorial 4: tiled matmul with a fused activation epilogue, autotuned, and an fp8 variant, launched from Python on
numpy arrays. See 04_matmul.md.

    PYTHONPATH=build/python python3 tutorials/04_matmul.py [--backend interpreter|eager|cuda|sim]
"""

import math
import sys

import numpy as np
import tessera

import tutorial_check

# The kernels' ACTIVATION values (frontend/tessera/kernels/matmul.h).
ACTIVATIONS = {"none": 0, "relu": 1, "leaky_relu": 2, "gelu_tanh": 3}
LEAKY_RELU_SLOPE = 0.01


# The tile sizes and warps the kernels are tuned over. On a GPU (backend "cuda") the first call for each M, N, K
# compiles them all in parallel, prunes those that do not fit in shared memory or spill, times the rest and keeps
# the winner on disk. The other backends have no clock, so there the tutorial fixes config 0 (deterministic, as
# TESSERA_AUTOTUNE_CONFIG=0 would make any run).
CONFIGS = [tessera.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4),
           tessera.Config({"BM": 32, "BN": 32, "BK": 32}, num_warps=4),
           tessera.Config({"BM": 128, "BN": 128, "BK": 32}, num_warps=8),
           tessera.Config({"BM": 128, "BN": 128, "BK": 32}, num_warps=8, persistent=True)]
_tuned = {}


def tuned(kernel, backend):
    """kernel autotuned over CONFIGS, keyed by M, N and K (one tuner per kernel and timing mode)."""
    timed = backend == "cuda"
    if (kernel.name, timed) not in _tuned:
        _tuned[kernel.name, timed] = tessera.autotune(configs=CONFIGS, key=["M", "N", "K"],
                                                      fixed=None if timed else 0)(kernel)
    return _tuned[kernel.name, timed]


def matmul(a, b, activation=None, out_dtype=np.float32, GROUP_M=4, backend="interpreter"):
    """a @ b for float16 a [M, K] and b [K, N], accumulated in f32; optionally activated and stored as f16."""
    (M, K), (K2, N) = a.shape, b.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {a.shape} @ {b.shape}")
    c = np.empty((M, N), out_dtype)
    strides = [s // x.itemsize for x in (a, b, c) for s in x.strides]  # in elements, as the kernel wants

    def grid(meta):  # 1-D: the kernel orders the tiles itself
        return (tessera.cdiv(M, meta["BM"]) * tessera.cdiv(N, meta["BN"]),)

    if activation is None and out_dtype == np.float32:
        tuned(tessera.kernels.matmul, backend)[grid](a, b, c, M, N, K, *strides, GROUP_M=GROUP_M, backend=backend)
    else:
        kernel = tessera.kernels.matmul_epilogue_f16 if out_dtype == np.float16 else tessera.kernels.matmul_epilogue
        tuned(kernel, backend)[grid](a, b, c, M, N, K, *strides, GROUP_M=GROUP_M,
                                     ACTIVATION=ACTIVATIONS[activation or "none"], backend=backend)
    return c


# The value of each e4m3 bit pattern: sign, 4 exponent bits (bias 7), 3 mantissa bits; S.1111.111 is NaN.
_CODES = np.arange(256)
E4M3_VALUES = np.where(_CODES & 0x80, -1.0, 1.0) * np.where(
    (_CODES >> 3) & 15 == 0, (_CODES & 7) / 8 * 2.0 ** -6, (1 + (_CODES & 7) / 8) * 2.0 ** (((_CODES >> 3) & 15) - 7))
E4M3_VALUES[(_CODES & 0x7F) == 0x7F] = np.nan


def to_e4m3(x):
    """The bit patterns (uint8) of the e4m3 values nearest to x: numpy has no fp8 dtype, so fp8 arrays travel as
    their bits."""
    finite = np.flatnonzero(~np.isnan(E4M3_VALUES))
    nearest = np.abs(x.reshape(-1, 1) - E4M3_VALUES[finite]).argmin(axis=1)
    return finite[nearest].astype(np.uint8).reshape(x.shape)


def matmul_fp8(a, b_t, BM=64, BN=64, BK=32, GROUP_M=4, backend="interpreter"):
    """a @ b for e4m3 a [M, K] and b given transposed, b_t = b.T [N, K] (both uint8 bit patterns), into f32.
    b_t makes both operands K-major, the only order Hopper's fp8 wgmma reads (see 04_matmul.md)."""
    (M, K), (N, K2) = a.shape, b_t.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {a.shape} @ {b_t.shape}.T")
    c = np.empty((M, N), np.float32)
    grid = (tessera.cdiv(M, BM) * tessera.cdiv(N, BN),)
    # B's strides (stride_bk, stride_bn) over b_t: 1 along K, K along N.
    tessera.kernels.matmul_f8e4m3[grid](a, b_t, c, M, N, K, K, 1, 1, K, N, 1, BM=BM, BN=BN, BK=BK, GROUP_M=GROUP_M,
                                        backend=backend)
    return c


def matmul_desc(a, b, BM=64, BN=64, BK=32, GROUP_M=4, warp_specialize=False, ping_pong=False, backend="interpreter"):
    """a @ b into a's dtype (f16), with A and B read through tensor descriptors: blocks of BM x BK and BK x BN,
    zero past the edges. On sm_90a they arrive by TMA; warp_specialize=True hands those copies to a producer
    warpgroup, ping_pong=True also runs two consumer groups on alternate tiles of persistent programs (sm_90a
    only)."""
    (M, K), N = a.shape, b.shape[1]
    c = np.empty((M, N), a.dtype)
    grid = (tessera.cdiv(M, BM) * tessera.cdiv(N, BN),)
    # Each descriptor covers the matrix (shape=) inside rows padded to start 16 bytes apart, a tensor map's rule.
    da = tessera.TensorDescriptor(rows_16_bytes_apart(a), (BM, BK), shape=a.shape)
    db = tessera.TensorDescriptor(rows_16_bytes_apart(b), (BK, BN), shape=b.shape)
    tessera.kernels.matmul_desc_f16_out[grid](da, db, c, M, N, K, N, 1, BM=BM, BN=BN, BK=BK, GROUP_M=GROUP_M,
                                              warp_specialize=warp_specialize, backend=backend,
                                              **({"ping_pong": True} if ping_pong else {}))
    return c


def rows_16_bytes_apart(x):
    """x, or a copy of it in rows padded with zeros to a multiple of 16 bytes."""
    row_elements = 16 // x.itemsize
    cols = -(-x.shape[1] // row_elements) * row_elements
    if cols == x.shape[1]:
        return x
    padded = np.zeros((x.shape[0], cols), x.dtype)
    padded[:, :x.shape[1]] = x
    return padded


def activate(x, activation):
    if activation == "relu":
        return np.maximum(x, 0)
    if activation == "leaky_relu":
        return np.where(x > 0, x, x * LEAKY_RELU_SLOPE)
    if activation == "gelu_tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return x


def run_checks(M=131, N=75, K=90, seed=0, backend="interpreter"):
    """No size is a multiple of its block: the edge tiles are masked."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    want = a.astype(np.float64) @ b.astype(np.float64)  # f16 products are exact; only the f32 sums round
    ok = tutorial_check.check(f"{backend} matches numpy ({M}x{N}x{K})", matmul(a, b, backend=backend), want,
                              atol=1e-5, rtol=1e-5)
    print(f"  autotuned config: {tuned(tessera.kernels.matmul, backend).best_config}")
    for activation in ACTIVATIONS:
        activated = activate(want, activation)
        ok &= tutorial_check.check(f"epilogue {activation}, f32 C",
                                   matmul(a, b, activation, np.float32, backend=backend), activated,
                                   atol=1e-5, rtol=1e-5)
        # f16 C: half an f16 ulp (2^-11 relative) on top of the f32 result.
        ok &= tutorial_check.check(f"epilogue {activation}, f16 C",
                                   matmul(a, b, activation, np.float16, backend=backend), activated,
                                   atol=1e-4, rtol=1e-3)
    # The same kernel persistent: as many programs as the GPU holds loop over the 3 x 2 tiles (the interpreter and
    # eager mode run the grid as it is).
    c = np.zeros((M, N), np.float32)
    grid = (tessera.cdiv(M, 64) * tessera.cdiv(N, 64),)
    tessera.kernels.matmul[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=64, BN=64, BK=32, GROUP_M=4,
                                 persistent=True, backend=backend)
    ok &= tutorial_check.check(f"persistent, {backend}", c, want, atol=1e-5, rtol=1e-5)
    # A and B through tensor descriptors (TMA copies on sm_90a), C in f16: half an f16 ulp on top of the f32 result.
    ok &= tutorial_check.check(f"tensor descriptors, f16 C, {backend}", matmul_desc(a, b, backend=backend), want,
                               atol=1e-4, rtol=1e-3)
    if tutorial_check.launch_arch(backend) == "sm_90a":  # a producer warpgroup issues the copies
        ok &= tutorial_check.check(f"tensor descriptors, warp-specialized, {backend}",
                                   matmul_desc(a, b, warp_specialize=True, backend=backend), want, atol=1e-4,
                                   rtol=1e-3)
        ok &= tutorial_check.check(f"tensor descriptors, ping-pong consumer groups, {backend}",
                                   matmul_desc(a, b, ping_pong=True, backend=backend), want, atol=1e-4, rtol=1e-3)
    # fp8: e4m3 products are exact in f32 too; b goes in transposed.
    a8, b8_t = to_e4m3(a.astype(np.float64)), to_e4m3(b.astype(np.float64).T)
    want8 = E4M3_VALUES[a8] @ E4M3_VALUES[b8_t].T
    ok &= tutorial_check.check(f"fp8 e4m3, B^T, {backend}", matmul_fp8(a8, b8_t, backend=backend), want8,
                               atol=1e-5, rtol=1e-5)
    return ok


def main(argv=None):
    return tutorial_check.main("04 matmul", __doc__.splitlines()[0], run_checks, argv)


if __name__ == "__main__":
    sys.exit(main())
