#!/usr/bin/env python3
"""Tutorial 3: layer norm forward and backward, launched from Python on numpy arrays. See 03_layernorm.md.

    PYTHONPATH=build/python python3 tutorials/03_layernorm.py [--backend interpreter|eager|cuda|sim]
"""

import sys

import numpy as np
import tessera

import tutorial_check

K = tessera.kernels


def next_power_of_2(n):
    return 1 << (int(n) - 1).bit_length()


def layernorm_forward(x, weight, bias, eps, block=512, backend="interpreter"):
    """y, and the per-row mean and 1/std the backward pass consumes."""
    rows, cols = x.shape
    y = np.empty_like(x)
    mean = np.empty(rows, np.float32)
    rstd = np.empty(rows, np.float32)
    K.layernorm_fwd[(rows,)](x, y, weight, bias, mean, rstd, cols, cols, eps, BLOCK=block, backend=backend)
    return y, mean, rstd


def layernorm_backward(x, dy, weight, mean, rstd, rows_per_program=4, atomics=False, backend="interpreter"):
    """dx, dw, db. dw and db are reduced across programs with atomics, or in two stages through a buffer of
    per-program partial sums."""
    rows, cols = x.shape
    block = next_power_of_2(cols)  # the backward holds a whole row in one tile
    programs = tessera.cdiv(rows, rows_per_program)
    dx = np.empty_like(x)
    if atomics:
        dw = np.zeros(cols, np.float32)  # the programs add into these
        db = np.zeros(cols, np.float32)
        K.layernorm_bwd_atomic[(programs,)](x, dy, dx, weight, mean, rstd, dw, db, cols, rows, cols,
                                            rows_per_program, BLOCK=block, backend=backend)
        return dx, dw, db
    partial_dw = np.empty((programs, cols), np.float32)
    partial_db = np.empty((programs, cols), np.float32)
    K.layernorm_bwd_dx[(programs,)](x, dy, dx, weight, mean, rstd, partial_dw, partial_db, cols, rows, cols,
                                    rows_per_program, BLOCK=block, backend=backend)
    dw = np.empty(cols, np.float32)
    db = np.empty(cols, np.float32)
    block_n = 256
    K.layernorm_bwd_dwdb[(tessera.cdiv(cols, block_n),)](partial_dw, partial_db, dw, db, programs, cols,
                                                         BLOCK_M=4, BLOCK_N=block_n, backend=backend)
    return dx, dw, db


def reference(x, weight, bias, dy, eps):
    """Forward and backward in float64."""
    x, weight, bias, dy = (a.astype(np.float64) for a in (x, weight, bias, dy))
    n = x.shape[1]
    mean = x.mean(axis=1)
    rstd = 1.0 / np.sqrt(((x - mean[:, None]) ** 2).mean(axis=1) + eps)
    x_hat = (x - mean[:, None]) * rstd[:, None]
    y = x_hat * weight + bias
    g = dy * weight
    c1 = (g * x_hat).sum(axis=1, keepdims=True) / n
    c2 = g.sum(axis=1, keepdims=True) / n
    dx = (g - (x_hat * c1 + c2)) * rstd[:, None]
    return y, mean, rstd, dx, (dy * x_hat).sum(axis=0), dy.sum(axis=0)


def run_checks(rows=23, cols=1500, seed=0, backend="interpreter"):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, (rows, cols)).astype(np.float32)
    weight = rng.uniform(-1, 1, cols).astype(np.float32)
    bias = rng.uniform(-1, 1, cols).astype(np.float32)
    dy = rng.uniform(-1, 1, (rows, cols)).astype(np.float32)
    eps = 1e-5
    y_ref, mean_ref, rstd_ref, dx_ref, dw_ref, db_ref = reference(x, weight, bias, dy, eps)

    # f32 sums over a row (or over the rows, for dw/db): about 1e-4 relative leaves room for the rounding.
    y, mean, rstd = layernorm_forward(x, weight, bias, eps, backend=backend)
    ok = tutorial_check.check(f"forward y, {backend} ({rows}x{cols})", y, y_ref, atol=1e-5, rtol=1e-4)
    ok &= tutorial_check.check("forward mean and rstd", np.concatenate([mean, rstd]),
                               np.concatenate([mean_ref, rstd_ref]), atol=1e-6, rtol=1e-5)
    for atomics in (False, True):
        dx, dw, db = layernorm_backward(x, dy, weight, mean, rstd, atomics=atomics, backend=backend)
        variant = "atomics" if atomics else "two-stage"
        ok &= tutorial_check.check(f"backward dx ({variant})", dx, dx_ref, atol=1e-5, rtol=1e-4)
        ok &= tutorial_check.check(f"backward dw, db ({variant})", np.concatenate([dw, db]),
                                   np.concatenate([dw_ref, db_ref]), atol=1e-5, rtol=1e-4)
    return ok


def main(argv=None):
    return tutorial_check.main("03 layernorm", __doc__.splitlines()[0], run_checks, argv)


if __name__ == "__main__":
    sys.exit(main())
