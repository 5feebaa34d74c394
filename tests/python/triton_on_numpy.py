"""A stand-in `triton` module that runs @triton.jit kernels on numpy, one program after another, so that what the
benchmark's Triton kernels (benchmarks/triton_reference.py) compute is checked where Triton is not installed.

Values are numpy arrays of a subclass with Triton's .to(); a pointer is a tensor's flat storage and element
offsets. The rules that let a wrong kernel show:
- a load's masked-off lanes read NaN when it gives no `other` (Triton leaves them undefined);
- a load or store of an element outside its tensor's storage, under a true mask, raises;
- tl.dot multiplies in f32, as tensor cores accumulate.
numpy has no bfloat16: kernels run on f16 and f32 tensors. triton.autotune runs its first config. Only what
triton_reference.py uses is here.
"""

import builtins
import sys
import types

import numpy as np


class Block(np.ndarray):
    """A block of values (0-d for scalars), with Triton's .to(dtype)."""

    def to(self, dtype, **_):
        return block(np.asarray(self).astype(dtype))


def block(values):
    return np.asarray(values).view(Block)


class _PointerType:
    def __init__(self, element_ty):
        self.element_ty = element_ty


class Pointer:
    """A tensor's flat storage (a numpy array sharing its memory) and element offsets into it."""

    def __init__(self, storage, offsets=0):
        self.storage = storage
        self.offsets = np.asarray(offsets, dtype=np.int64)

    def __add__(self, delta):
        return Pointer(self.storage, self.offsets + np.asarray(delta, dtype=np.int64))

    __radd__ = __add__

    @property
    def dtype(self):
        return _PointerType(self.storage.dtype.type)


def pointer_to(tensor):
    """A torch tensor's storage, from its first element on, as a Pointer (the tensor's memory, shared)."""
    import torch
    storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") else tensor.storage()
    elements = storage.nbytes() // tensor.element_size() if hasattr(storage, "nbytes") else storage.size()
    flat = torch.as_strided(tensor, (elements,), (1,), 0)
    return Pointer(flat.numpy(), tensor.storage_offset())


def _lanes(ptr, mask, what):
    offsets = ptr.offsets
    mask = np.ones(offsets.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    offsets, mask = np.broadcast_arrays(offsets, mask)
    outside = mask & ((offsets < 0) | (offsets >= ptr.storage.size))
    if outside.any():
        raise IndexError(f"{what} of element {offsets[outside].flat[0]} of a tensor of {ptr.storage.size} elements")
    return offsets, mask


def _load(ptr, mask=None, other=None):
    offsets, mask = _lanes(ptr, mask, "load")
    values = ptr.storage[np.where(mask, offsets, 0)]
    fill = values.dtype.type(np.nan if other is None else other)
    return block(np.where(mask, values, fill))


def _store(ptr, value, mask=None):
    offsets, mask = _lanes(ptr, mask, "store")
    value = np.broadcast_to(np.asarray(value), offsets.shape)
    ptr.storage[offsets[mask]] = value[mask].astype(ptr.storage.dtype)


def _dot(a, b, acc=None, **_):
    product = np.asarray(a, dtype=np.float32) @ np.asarray(b, dtype=np.float32)
    return block(product if acc is None else (product + acc).astype(np.float32))


_program = [(0, 0, 0)]  # the running program's ids


def _range(*bounds):
    return (block(np.int32(i)) for i in builtins.range(*(int(b) for b in bounds)))


def _language():
    tl = types.ModuleType("triton.language")
    tl.constexpr = object  # an annotation only
    tl.float16, tl.float32, tl.int32, tl.int64 = np.float16, np.float32, np.int32, np.int64
    tl.program_id = lambda axis: block(np.int32(_program[0][axis]))
    tl.arange = lambda start, end: block(np.arange(start, end, dtype=np.int32))
    tl.zeros = lambda shape, dtype: block(np.zeros(shape, dtype=dtype))
    tl.full = lambda shape, value, dtype: block(np.full(shape, value, dtype=dtype))
    tl.load, tl.store, tl.dot = _load, _store, _dot
    tl.trans = lambda x: block(np.asarray(x).T)
    tl.where = lambda condition, a, b: block(np.where(condition, a, b))
    tl.maximum = lambda a, b: block(np.maximum(a, b))
    tl.minimum = lambda a, b: block(np.minimum(a, b))
    tl.max = lambda x, axis=None: block(np.max(x, axis=axis))
    tl.sum = lambda x, axis=None: block(np.sum(x, axis=axis))
    tl.exp, tl.sqrt = (lambda x: block(np.exp(x))), (lambda x: block(np.sqrt(x)))
    tl.math = types.SimpleNamespace(exp2=lambda x: block(np.exp2(x)), log2=lambda x: block(np.log2(x)))
    tl.cdiv = lambda a, b: -(-a // b)
    return tl


class JITFunction:
    """@triton.jit: called from another kernel it runs inline; kernel[grid](...) runs every program in turn."""

    def __init__(self, fn):
        self.fn = fn

    def _runnable(self):
        # Loops over `range` in a kernel yield blocks, as Triton's do (row.to(tl.int64) in the layer norm).
        return types.FunctionType(self.fn.__code__, dict(self.fn.__globals__, range=_range), self.fn.__name__,
                                  self.fn.__defaults__, self.fn.__closure__)

    def __call__(self, *args, **kwargs):
        return self._runnable()(*args, **kwargs)

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.launch(grid, args, kwargs)

    def launch(self, grid, args, kwargs):
        kwargs = {k: v for k, v in kwargs.items() if k not in ("num_warps", "num_stages")}
        grid = tuple(grid(kwargs) if callable(grid) else grid) + (1, 1)
        args = [_argument(a) for a in args]
        kwargs = {k: _argument(v) for k, v in kwargs.items()}
        fn = self._runnable()
        with np.errstate(all="ignore"):  # inf and NaN are values here, as on a GPU
            for z in builtins.range(grid[2]):
                for y in builtins.range(grid[1]):
                    for x in builtins.range(grid[0]):
                        _program[0] = (x, y, z)
                        fn(*args, **kwargs)


def _argument(value):
    return pointer_to(value) if hasattr(value, "storage_offset") else value


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3):
        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages


class Autotuner:
    """@triton.autotune: runs its first config (there is no clock to choose by)."""

    def __init__(self, kernel, configs, key):
        self.kernel, self.configs, self.key, self.best_config = kernel, configs, key, None

    def __getitem__(self, grid):
        def run(*args, **kwargs):
            self.best_config = best = self.configs[0]
            self.kernel.launch(grid, args, dict(kwargs, **best.kwargs))
        return run


def install(monkeypatch):
    """Puts this `triton` (and `triton.language`) in sys.modules for the test's duration."""
    triton = types.ModuleType("triton")
    triton.jit, triton.Config, triton.cdiv = JITFunction, Config, lambda a, b: -(-a // b)
    triton.autotune = lambda configs, key: lambda kernel: Autotuner(kernel, configs, key)
    triton.language = _language()
    monkeypatch.setitem(sys.modules, "triton", triton)
    monkeypatch.setitem(sys.modules, "triton.language", triton.language)
    return triton
