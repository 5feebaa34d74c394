"""Checks a pip-installed tessera from outside the source tree (tests/pip/run.sh runs it with a venv's python):
the package is the installed one, its version is the project's, a library kernel launches, and tessera.load
compiles and launches a kernel from a header of this run's own.

    python check_installed.py <expected version> <scratch dir>
"""

import os
import pathlib
import sys

import numpy as np

import tessera

HEADER = """\
#pragma once
#include "tessera/tessera.h"
using namespace tessera;

inline void shifted(Ptr<f32> x, Ptr<f32> out, Int n, Float shift, Const<int> BLOCK) {
  Tensor offs = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offs < n;
  store(out + offs, load(x + offs, mask) + shift, mask);
}
TESSERA_PY_KERNEL(shifted, x, out, n, shift, BLOCK);
"""


def main(version, scratch):
    package = pathlib.Path(tessera.__file__).resolve().parent
    assert package.is_relative_to(pathlib.Path(sys.prefix).resolve()), f"tessera imported from {package}"
    assert tessera.__version__ == version, f"tessera.__version__ is {tessera.__version__}, expected {version}"

    n = 1000
    rng = np.random.default_rng(7)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    tessera.kernels.vector_add[(tessera.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    np.testing.assert_allclose(out, x + y, rtol=1e-6)

    os.environ["TESSERA_CACHE_DIR"] = str(scratch / "cache")
    header = scratch / "shifted.h"
    header.write_text(HEADER)
    kernels = tessera.load(header)
    out[:] = 0
    kernels.shifted[(tessera.cdiv(n, 128),)](x, out, n, 1.5, BLOCK=128)
    np.testing.assert_allclose(out, x + np.float32(1.5), rtol=1e-6)
    print(f"tessera {tessera.__version__} from {package}: vector_add and tessera.load ok")


if __name__ == "__main__":
    main(sys.argv[1], pathlib.Path(sys.argv[2]))
