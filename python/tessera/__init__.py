"""Tessera: tile-level GPU kernels written in C++, launched from Python.

    import numpy as np, tessera
    add = tessera.kernels.vector_add
    add[(tessera.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)          # numpy arrays: reference interpreter
    add[lambda meta: (tessera.cdiv(n, meta["BLOCK"]),)](x, y, out, n, BLOCK=256)
    add[(tessera.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, backend="sim")  # the GPU code, emulated
    tessera.sim.last_report()["global_load_efficiency"]
    tuned = tessera.autotune(configs=[tessera.Config({"BLOCK": 1024}, num_warps=4), ...], key=["n"])(add)

Kernels are written in C++ headers with the Tessera DSL and bound with one line each (see
tessera/python.h and tessera.load). Exceptions from the compiler and runtime are tessera.Error.
"""

from . import _C
from ._C import Error, __version__, ir
from .descriptor import TensorDescriptor
from .kernel import Kernel, cdiv
from .autotune import Config, autotune
from .loader import load
from . import aot, sim, testing

kernels = type("kernels", (), {})()
"""The tutorial kernels: vector_add, softmax, layernorm_fwd, matmul."""
for _name in dir(_C.kernels):
    if not _name.startswith("_"):
        setattr(kernels, _name, Kernel(getattr(_C.kernels, _name)))

__all__ = ["__version__", "Config", "Error", "Kernel", "aot", "autotune", "cdiv", "ir", "kernels", "load", "sim",
           "TensorDescriptor", "testing"]
