#!/usr/bin/env python3
"""Tutorial 6: low-memory dropout, launched from Python on numpy arrays. See 06_dropout.md.

    PYTHONPATH=build/python python3 tutorials/06_dropout.py [--backend interpreter|eager|cuda|sim]
"""

import sys

import numpy as np
import tessera

import tutorial_check

K = tessera.kernels


def philox(seed, offsets, rounds=10):
    """The four words of Philox4x32 for the counters (offset, 0, 0, 0) and the key (seed's low 32 bits, its high
    32 bits): what the DSL's randint4x draws for i32 offsets (and Triton's tl.randint4x)."""
    seed &= (1 << 64) - 1  # a negative seed as its 64-bit two's complement
    k0, k1 = seed & 0xFFFFFFFF, seed >> 32
    c0 = np.asarray(offsets).astype(np.uint32)  # i32 offsets: their bits
    c1 = c2 = c3 = np.zeros_like(c0)
    for _ in range(rounds):
        a = c0.astype(np.uint64) * np.uint64(0xD2511F53)  # 64-bit products: high and low words
        b = c2.astype(np.uint64) * np.uint64(0xCD9E8D57)
        c0, c1, c2, c3 = ((b >> np.uint64(32)).astype(np.uint32) ^ c1 ^ np.uint32(k0), b.astype(np.uint32),
                          (a >> np.uint64(32)).astype(np.uint32) ^ c3 ^ np.uint32(k1), a.astype(np.uint32))
        k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


def rand(seed, offsets):
    """rand(seed, offset): the first word, read as signed, folded onto [0, 2^31) and scaled into [0, 1)."""
    x = philox(seed, offsets)[0].view(np.int32)
    return np.where(x < 0, ~x, x).astype(np.float32) * np.float32(4.6566127342e-10)


def dropout(x, keep, p, block=1024, backend="interpreter"):
    """x / (1 - p) where keep is nonzero, else 0: the mask comes from memory."""
    out = np.empty_like(x)
    K.dropout[(tessera.cdiv(x.size, block),)](x, keep, out, x.size, p, BLOCK=block, backend=backend)
    return out


def seeded_dropout(x, p, seed, block=1024, backend="interpreter"):
    """The same with the mask drawn in the kernel: rand(seed, offset) > p. Nothing but the seed is stored."""
    out = np.empty_like(x)
    K.seeded_dropout[(tessera.cdiv(x.size, block),)](x, out, x.size, p, seed, BLOCK=block, backend=backend)
    return out


def run_checks(n=100_003, p=0.3, seed=0, backend="interpreter"):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.5, n).astype(np.float32)  # never 0: a 0 in the output means dropped
    scale = np.float32(1) / (np.float32(1) - np.float32(p))
    keep = (rng.uniform(size=n) > p).astype(np.int8)
    ok = tutorial_check.check(f"{backend} matches numpy (dropout, n={n})", dropout(x, keep, p, backend=backend),
                              np.where(keep != 0, x.astype(np.float64) * scale, 0), atol=1e-30, rtol=1e-6)
    dropout_seed = 1000 + seed
    got = seeded_dropout(x, p, dropout_seed, backend=backend)
    kept = rand(dropout_seed, np.arange(n, dtype=np.int32)) > np.float32(p)
    ok &= tutorial_check.check(f"{backend} matches numpy's Philox (seeded dropout)", got,
                               np.where(kept, x.astype(np.float64) * scale, 0), atol=1e-30, rtol=1e-6)
    # The backward pass: the same seed on the gradient drops the same elements.
    dy = rng.uniform(0.5, 1.5, n).astype(np.float32)
    same = np.array_equal(seeded_dropout(dy, p, dropout_seed, backend=backend) == 0, got == 0)
    print(f"  {'backward drops the forward elements':<52} {'ok' if same else 'FAILED'}")
    return ok and same


def main(argv=None):
    return tutorial_check.main("06 dropout", __doc__.splitlines()[0], run_checks, argv)


if __name__ == "__main__":
    sys.exit(main())
