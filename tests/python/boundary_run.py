"""Running one boundary case (boundary_cases.make_case) and judging it: arguments are built inside guarded
buffers, the call is made, and the outcome, the guard bytes and (for vector_add) the result are checked.
Returns the list of problems found; an empty list is a pass."""

import decimal
import fractions
import math

import numpy as np
import torch

import tessera

import boundary_load

GUARD = 64       # bytes after each array that no launch may touch
PATTERN = 0xA5   # what arena bytes hold before the array's data is written
ALIGN = 64       # an array starts this far into its arena, so `offset` and `unaligned` views move off alignment


class Guarded:
    """An argument that lives in the middle of an arena (a larger uint8 buffer): the bytes outside
    [start, start + length) belong to no array and must never change."""

    def __init__(self, name, value, arena, start, length):
        self.name, self.value, self.arena, self.start, self.length = name, value, arena, start, length
        self.before = arena.clone() if isinstance(arena, torch.Tensor) else arena.copy()

    def _bytes(self):
        a = self.arena.numpy() if isinstance(self.arena, torch.Tensor) else self.arena
        b = self.before.numpy() if isinstance(self.before, torch.Tensor) else self.before
        return a, b

    def outside_changed(self):
        a, b = self._bytes()
        end = self.start + self.length
        return not (np.array_equal(a[:self.start], b[:self.start]) and np.array_equal(a[end:], b[end:]))

    def changed(self):
        a, b = self._bytes()
        return not np.array_equal(a, b)


def _odd(kind):
    return {
        "None": None, "str": "x", "bytes": b"\0" * 16, "list": [1.0, 2.0], "dict": {}, "object": object(),
        "complex": 1 + 2j, "decimal": decimal.Decimal("1.5"), "fraction": fractions.Fraction(1, 3),
        "array0d": np.array(3), "array1d": np.array([2]), "tensor0d": torch.tensor(3), "float_tensor0d": torch.tensor(2.5), "np_complex": np.complex64(1),
        "lambda": lambda: 0, "ellipsis": ..., "int": 3, "float": 1.5, "bool": True, "np_float": np.float32(2.0),
        "np_int64": np.int64(8), "np_uint8": np.uint8(8), "np_bool": np.bool_(True),
    }[kind]


def _shape(shape, layout):
    count = int(np.prod(shape))
    if layout == "empty":
        return (0,)
    if layout == "scalar0d":
        return ()
    if layout == "rank3":
        return (1, 1, count)
    if layout in ("zero_stride", "transposed", "strided", "negative"):  # one element would be contiguous whatever its stride
        return (max(count, 8),)
    return shape


def _fill(view, rng):
    """Small integral values, whatever the dtype (random bits for kinds that have no numbers)."""
    if view.dtype.kind in "biufc":
        view[...] = rng.integers(0, 4, size=view.shape).astype(view.dtype)
    else:
        view.view(np.uint8)[...] = rng.integers(0, 256, size=view.nbytes, dtype=np.uint8).reshape(view.view(np.uint8).shape)


def _numpy_array(name, dtype, shape, layout, rng):
    dt = np.dtype(dtype)
    shape = _shape(shape, layout)
    count = int(np.prod(shape))
    if dt.hasobject:
        arr = np.empty(shape, dt)
        arr[...] = 1.0
        return arr, None
    backing = count * (2 if layout == "strided" else 1)
    start = ALIGN + {"offset": dt.itemsize, "unaligned": 1}.get(layout, 0)
    length = backing * dt.itemsize
    arena = np.full(start + length + GUARD, PATTERN, np.uint8)
    flat = arena[start:start + length].view(dt)
    _fill(flat, rng)
    if layout == "strided":
        arr = flat[::2]
    elif layout == "negative":
        arr = flat[::-1]
    elif layout == "transposed":
        arr = flat.reshape(4, -1).T if count % 4 == 0 else flat.reshape(2, -1).T
    elif layout == "zero_stride":
        arr = np.lib.stride_tricks.as_strided(flat[:1], shape=(count,), strides=(0,))
    else:
        arr = flat.reshape(shape)
    if layout == "readonly":
        arr.setflags(write=False)
    if layout == "masked":
        arr = np.ma.masked_array(arr, mask=np.arange(arr.size).reshape(arr.shape) % 2 == 0)
    return arr, Guarded(name, arr, arena, start, length)


def _torch_array(name, dtype, shape, layout, rng):
    tdt = getattr(torch, dtype)
    itemsize = torch.empty((), dtype=tdt).element_size()
    shape = _shape(shape, layout)
    count = int(np.prod(shape))
    backing = count * (2 if layout == "strided" else 1)
    start = ALIGN + (itemsize if layout == "offset" else 0)
    length = backing * itemsize
    arena = torch.full((start + length + GUARD,), PATTERN, dtype=torch.uint8)
    flat = arena[start:start + length].view(tdt)
    flat.copy_(torch.from_numpy(rng.integers(0, 4, size=backing)).to(tdt))
    if layout == "strided":
        t = flat[::2]
    elif layout == "transposed":
        t = flat.view(4, -1).t() if count % 4 == 0 else flat.view(2, -1).t()
    elif layout == "zero_stride":
        t = flat[:1].expand(count)
    else:
        t = flat.view(shape)
    if layout == "requires_grad":
        t.requires_grad_()
    return t, Guarded(name, t, arena, start, length)


def build_value(name, spec, rng):
    """(the Python object for a spec, its Guarded record or None)."""
    if spec[0] == "array":
        _, lib, dtype, shape, layout = spec
        return (_torch_array if lib == "torch" else _numpy_array)(name, dtype, shape, layout, rng)
    if spec[0] == "odd":
        return _odd(spec[1]), None
    if spec[0] == "callable":
        size = spec[1]
        return (lambda meta: (size,)), None
    if spec[0] == "callable_returning":
        value = spec[1]
        return (lambda meta: value), None
    return spec[1], None


def _first_grid_dim(grid, consts):
    if callable(grid):
        grid = grid(dict(consts, num_warps=4))
    return int(grid) if isinstance(grid, (int, np.integer)) else int(grid[0])


def _vector_add_problems(built, grid, consts):
    """vector_add computes out[i] = x[i] + y[i] for i < n: a success must have done exactly that."""
    x, y, out, n = (built[k] for k in ("x", "y", "out", "n"))
    as_np = lambda a: (a.detach().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)).reshape(-1)
    covered = min(int(n), _first_grid_dim(grid, consts) * int(consts["BLOCK"]))
    if covered <= 0:
        return []
    want = as_np(x)[:covered].astype(np.float32) + as_np(y)[:covered].astype(np.float32)
    got = as_np(out)[:covered]
    if not np.array_equal(want, got, equal_nan=True):
        bad = int(np.flatnonzero(~((want == got) | (np.isnan(want) & np.isnan(got))))[0])
        return [f"vector_add succeeded with a wrong result: out[{bad}] = {got[bad]!r}, expected {want[bad]!r}"]
    return []


def _names_offender(message, offenders):
    # Extra positional arguments are named by count, or as the runtime argument they collided with.
    return any(o in message or (o == "positional arguments" and ("positional" in message or "multiple values" in message))
               for o in offenders)


def run_case(case, kernels):
    """Runs the case; returns (a list of problems (empty: the case passed), the outcome, its message)."""
    if case["op"] == "load":
        return boundary_load.run_case(case)
    rng = np.random.default_rng([case["seed"], case["index"]])
    kernel = kernels[case["kernel"]]
    guards, built = [], {}
    for name, spec in case["args"].items():
        built[name], g = build_value(name, spec, rng)
        guards += [g] if g else []
    consts = {n: build_value(n, s, rng)[0] for n, s in case["consts"].items() if n not in case["drop"]}
    extra = {n: build_value(n, s, rng)[0] for n, s in case["extra_kwargs"].items()}
    options = {n: build_value(n, s, rng)[0] for n, s in case["options"].items()}
    grid = build_value("grid", case["grid"], rng)[0]
    positional = [v for n, v in built.items() if n not in case["keyword_runtime"]] + [8] * case["extra_positional"]
    keywords = {n: built[n] for n in case["keyword_runtime"]}
    outcome, message = "ok", ""
    try:
        if case["op"] == "compile":
            kernel.compile(**options, **consts, **extra)
        else:
            kernel[grid](*positional, **options, **keywords, **consts, **extra)
    except tessera.Error as e:
        outcome, message = "tessera.Error", str(e)
    except (TypeError, ValueError) as e:
        outcome, message = type(e).__name__, str(e)
    except BaseException as e:  # anything else is a finding, KeyboardInterrupt included (the driver kills, not ^C)
        outcome, message = "unexpected " + type(e).__name__, str(e)

    problems = []
    if outcome.startswith("unexpected"):
        problems.append(f"raised {outcome[11:]}: {message}")
    elif outcome in ("TypeError", "ValueError"):
        if not case["offenders"]:
            problems.append(f"a valid call was rejected with {outcome}: {message}")
        elif not _names_offender(message, case["offenders"]):
            problems.append(f"{outcome} names none of {case['offenders']}: {message}")
    elif outcome == "ok" and case["must_reject"]:
        problems.append(f"succeeded although {case['offenders']} is invalid")
    for g in guards:
        if g.outside_changed():
            problems.append(f"bytes outside argument '{g.name}' changed")
        elif outcome in ("TypeError", "ValueError") and g.changed():
            problems.append(f"argument '{g.name}' changed although the call was rejected")
    if outcome == "ok" and case["kernel"] == "vector_add" and case["op"] == "launch" and not problems:
        problems += _vector_add_problems(built, grid, consts)
    return problems, outcome, message
