#!/usr/bin/env python3
"""Tutorial 2: fused row softmax, launched from Python on numpy arrays. See 02_softmax.md.

    PYTHONPATH=build/python python3 tutorials/02_softmax.py [--backend interpreter|eager|cuda|sim]
"""

import sys

import numpy as np
import tessera

import tutorial_check


def next_power_of_2(n):
    return 1 << (int(n) - 1).bit_length()


def num_warps_for(block):
    """More warps for longer rows, so each thread keeps a modest number of elements in registers."""
    return 16 if block >= 8192 else 8 if block >= 2048 else 4


def softmax(x, backend="interpreter"):
    """Row-wise softmax of a 2-D float32 array: one program per row, BLOCK = the row length rounded up."""
    rows, cols = x.shape
    out = np.empty_like(x)
    block = next_power_of_2(cols)
    tessera.kernels.softmax[(rows,)](out, x, x.strides[0] // x.itemsize, out.strides[0] // out.itemsize, cols,
                                     BLOCK=block, num_warps=num_warps_for(block), backend=backend)
    return out


def reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def run_checks(rows=37, cols=781, seed=0, backend="interpreter"):
    rng = np.random.default_rng(seed)
    # Large inputs: without the max subtraction exp() would overflow f32 (exp(89) is already inf).
    x = rng.uniform(-8, 8, (rows, cols)).astype(np.float32) * np.float32(12)
    got = softmax(x, backend)
    # f32 exp and a sum over the row: a few f32 ulps relative.
    return tutorial_check.check(f"{backend} matches numpy ({rows}x{cols})", got, reference(x), atol=1e-7, rtol=1e-5)


def main(argv=None):
    return tutorial_check.main("02 softmax", __doc__.splitlines()[0], run_checks, argv)


if __name__ == "__main__":
    sys.exit(main())
