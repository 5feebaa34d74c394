#!/usr/bin/env python3
"""Tutorial 1: vector add, launched from Python on numpy arrays. See 01_vector_add.md.

    PYTHONPATH=build/python python3 tutorials/01_vector_add.py [--backend interpreter|eager|cuda|sim]
"""

import sys

import numpy as np
import tessera

import tutorial_check


def vector_add(x, y, block=1024, backend="interpreter"):
    """out = x + y with the tutorial kernel: one program per BLOCK elements."""
    out = np.empty_like(x)
    n = x.size
    # The grid can depend on the Const values: a callable gets them (and num_warps) as a dict.
    grid = lambda meta: (tessera.cdiv(n, meta["BLOCK"]),)
    tessera.kernels.vector_add[grid](x, y, out, n, BLOCK=block, backend=backend)
    return out


def run_checks(n=98_432 + 17, block=1024, seed=0, backend="interpreter"):
    """n is not a multiple of the block on purpose: the last program is partly masked."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    got = vector_add(x, y, block, backend)
    want = x.astype(np.float64) + y.astype(np.float64)
    # One f32 rounding of an exact sum: within half an f32 ulp.
    return tutorial_check.check(f"{backend} matches numpy (n={n})", got, want, atol=1e-6, rtol=1e-6)


def main(argv=None):
    return tutorial_check.main("01 vector add", __doc__.splitlines()[0], run_checks, argv)


if __name__ == "__main__":
    sys.exit(main())
