"""Random cases for fuzzing the Python boundary (fuzz_boundary.py): what a launch or compile case is (load cases
are boundary_load.py's), how it is made from a seed,
how its arguments are built inside guard regions, and which outcomes are allowed.

A case is plain data (a dict of tuples) made deterministically from (seed, index), so the driver can print it
after a crash without building it. Arguments are built only in the worker process that runs the case.

Allowed outcomes: success; TypeError/ValueError whose message names one of the arguments the case spoiled;
tessera.Error. Besides, no byte outside the arrays passed may change (each array is the middle of a larger
buffer whose guard bytes are checked), a rejected launch writes nothing at all, and a case that spoiled an
argument beyond doubt (wrong dtype, non-contiguous view, out-of-range int...) must not succeed.
"""

import math
import random

import tessera

import boundary_load

# Per element type: the numpy and torch dtypes a pointer parameter accepts (bf16 and fp8 as bit patterns).
_ELEM_DTYPES = {
    "i1": (["bool"], ["bool"]), "i8": (["int8"], ["int8"]), "i16": (["int16"], ["int16"]),
    "i32": (["int32"], ["int32"]), "i64": (["int64"], ["int64"]), "u8": (["uint8"], ["uint8"]),
    "u16": (["uint16"], []), "u32": (["uint32"], []), "u64": (["uint64"], []),
    "f16": (["float16"], ["float16"]), "bf16": (["uint16"], ["bfloat16"]), "f32": (["float32"], ["float32"]),
    "f64": (["float64"], ["float64"]), "f8e4m3": (["uint8", "int8"], ["uint8", "int8"]),
    "f8e5m2": (["uint8", "int8"], ["uint8", "int8"]),
}
NUMPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                "float32", "float64", "longdouble", "complex64", "complex128", "clongdouble", "object", "S4", "U2",
                "M8[s]", "m8[ms]", "V4", "f4,i4", ">f4", ">i4", ">f8", ">u2", ">i2", ">f2"]
TORCH_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                "complex64", "complex128"]
# Array layouts: those a launch must reject, and those it may take.
BAD_LAYOUTS = ["strided", "negative", "transposed", "zero_stride", "readonly", "masked", "requires_grad"]
FINE_LAYOUTS = ["contiguous", "offset", "unaligned", "empty", "scalar0d", "rank3"]
NUMPY_ONLY = {"negative", "readonly", "masked", "unaligned"}
TORCH_ONLY = {"requires_grad"}

# Values for Python-level arguments, as (label, must_reject) pairs; the label is built by make_value().
_INT_RANGES = {"i1": (0, 1), "i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1), "i32": (-2**31, 2**31 - 1),
               "i64": (-2**63, 2**63 - 1), "u8": (0, 2**8 - 1), "u16": (0, 2**16 - 1), "u32": (0, 2**32 - 1),
               "u64": (0, 2**64 - 1)}
ODD_VALUES = ["None", "str", "bytes", "list", "dict", "object", "complex", "decimal", "fraction", "array0d",
              "array1d", "np_complex", "lambda", "ellipsis"]
BIG_INTS = [2**31 - 1, 2**31, -2**31 - 1, 2**32, 2**63 - 1, 2**63, -2**63 - 1, 2**64, 10**30, -1, 0]


def pointer_elem(type_str):
    return type_str[4:-1] if type_str.startswith("ptr<") else None


def kernels_under_test(extra=None):
    """{name: tessera.Kernel}: the package's kernels plus any loaded ones, but those taking tensor descriptors,
    whose arguments this generator does not make (test_descriptor.py checks them)."""
    out = {n: getattr(tessera.kernels, n) for n in dir(tessera.kernels) if not n.startswith("_")}
    out.update(extra or {})
    return {n: k for n, k in out.items() if all(kind != "descriptor" for _, kind, _ in k.params)}


def available_backends():
    """Every backend name a launch accepts (tessera.kernel.BACKENDS, which grows as backends land)."""
    return list(tessera.kernel.BACKENDS)


# ---------------------------------------------------------------------------------------------- generation


class _Gen:
    """Makes one case: valid arguments first, then a few spoiled ones (`offenders`, with `must_reject`)."""

    def __init__(self, rng):
        self.rng = rng
        self.offenders = {}  # name: whether its latest spoiled value must be rejected

    def spoil(self, name, certain):
        self.offenders[name] = certain

    def valid_array(self, elem):
        numpy_ok, torch_ok = _ELEM_DTYPES[elem]
        lib = "torch" if torch_ok and self.rng.random() < 0.3 else "numpy"
        dtype = self.rng.choice(torch_ok if lib == "torch" else numpy_ok)
        n = self.rng.choice([1, 7, 64, 256, 1000, 4096])
        shape = (n,) if self.rng.random() < 0.7 else (self.rng.choice([1, 4, 16]), n)
        return ("array", lib, dtype, shape, "contiguous")

    def valid_scalar(self, type_str):
        if type_str.startswith("f") or type_str == "bf16":
            return ("value", self.rng.choice([0.0, 1.5, -2.0, 1e-5, 3.0]))
        lo, hi = _INT_RANGES[type_str]
        return ("value", self.rng.choice([v for v in (0, 1, 2, 7, 16, 64, 100, 256, 1000, -1) if lo <= v <= hi]))

    def valid_const(self):
        return ("value", self.rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))

    def spoiled_array(self, elem):
        r = self.rng.random()
        numpy_ok, torch_ok = _ELEM_DTYPES[elem]
        base = self.valid_array(elem)
        if r < 0.4:  # a dtype, maybe the right one
            lib = self.rng.choice(["numpy", "torch"])
            dtype = self.rng.choice(TORCH_DTYPES if lib == "torch" else NUMPY_DTYPES)
            return ("array", lib, dtype, base[3], "contiguous"), dtype not in (torch_ok if lib == "torch" else numpy_ok)
        if r < 0.8:  # a layout
            layout = self.rng.choice(BAD_LAYOUTS + FINE_LAYOUTS)
            lib = "numpy" if layout in NUMPY_ONLY else "torch" if layout in TORCH_ONLY else base[1]
            if lib == "torch" and not torch_ok:
                lib = "numpy"
                layout = "contiguous" if layout in TORCH_ONLY else layout
            dtype = base[2] if lib == base[1] else (torch_ok if lib == "torch" else numpy_ok)[0]
            if layout == "requires_grad" and not dtype.startswith(("float", "bfloat")):
                layout = "strided"
            return ("array", lib, dtype, base[3], layout), layout in BAD_LAYOUTS
        return ("odd", self.rng.choice(ODD_VALUES + ["int", "float", "bool", "np_float"])), True

    def spoiled_scalar(self, type_str):
        is_float = type_str.startswith("f") or type_str == "bf16"
        r = self.rng.random()
        if r < 0.4:
            if is_float:
                v = self.rng.choice([10**400, -10**400, 2**64, math.inf, -math.inf, math.nan, 1e308, True])
                return ("value", v), isinstance(v, int) and abs(v) > 10**308
            lo, hi = _INT_RANGES[type_str]
            # Huge values a parameter can hold are left out: as a size or a loop bound they ask for hours of work.
            v = self.rng.choice([v for v in BIG_INTS if not lo <= v <= hi or abs(v) <= 2**16] + [True, False])
            return ("value", v), not lo <= v <= hi
        if r < 0.6:
            kind = self.rng.choice(["np_int64", "np_uint8", "np_bool", "np_float", "float", "tensor0d"])
            return ("odd", kind), not is_float and kind in ("np_float", "float")
        if r < 0.65:  # 0-d tensors have __index__ (int tensors) or __float__
            return ("odd", "float_tensor0d"), not is_float
        return ("odd", self.rng.choice(ODD_VALUES)), True

    def spoiled_const(self):
        r = self.rng.random()
        if r < 0.5:
            # 2**21 is just past the largest tile (2**20 elements, which is valid but takes minutes to run or compile)
            v = self.rng.choice([0, -1, 3, 2**31, 2**32 + 8, 2**63, 2**64, -2**63 - 1, 2**21, True])
            return ("value", v), v in (2**31, 2**32 + 8, 2**63, 2**64, -2**63 - 1)
        if r < 0.7:
            return ("value", self.rng.choice([8.5, 16.0, -0.5, math.nan, math.inf, 1e300])), True
        kind = self.rng.choice(ODD_VALUES + ["np_int64", "np_float", "tensor0d"])
        return ("odd", kind), kind not in ("np_int64", "tensor0d", "array0d")  # 0-d int arrays have __index__

    def grid(self):
        r = self.rng.random()
        if r < 0.4:
            return ("value", self.rng.randint(1, 4))
        if r < 0.8:
            return ("value", tuple(self.rng.randint(1, 3) for _ in range(self.rng.randint(1, 3))))
        return ("callable", self.rng.randint(1, 3))

    def spoiled_grid(self):
        choices = [(0, True), (-1, True), (2**31, True), (2**63, True), (2**64, True), (1.0, True), ("2", True),
                   ((), True), ((1, 1, 1, 1), True), ((2, 0), True), ((1, -3), True), ((2**31 - 1, 0), True),
                   ([2], False), ((True,), False), ((1.5,), True)]
        value, certain = self.rng.choice(choices)
        if self.rng.random() < 0.3:
            kind = self.rng.choice(["None", "object", "dict", "array1d", "np_float", "np_int64", "bytes"])
            return ("odd", kind), kind not in ("np_int64", "array1d")
        if self.rng.random() < 0.2:
            return ("callable_returning", value), certain
        return ("value", value), certain


def _case_rng(seed, index):
    return random.Random(f"tessera-boundary/{seed}/{index}")


def make_case(seed, index, kernels):
    """The case for (seed, index): plain data, the same in every process. A few are tessera.load cases
    (boundary_load.py)."""
    if boundary_load.is_load_case(seed, index):
        return boundary_load.make_case(seed, index)
    rng = _case_rng(seed, index)
    name = rng.choice(sorted(kernels))
    kernel = kernels[name]
    op = "compile" if rng.random() < 0.08 else "launch"
    gen = _Gen(rng)
    runtime = [(n, t) for n, k, t in kernel.params if k != "constant"]
    args = {n: (gen.valid_array(pointer_elem(t)) if pointer_elem(t) else gen.valid_scalar(t)) for n, t in runtime}
    consts = {n: gen.valid_const() for n in kernel.const_names}
    case = {"seed": seed, "index": index, "op": op, "kernel": name, "grid": gen.grid(), "options": {},
            "keyword_runtime": [], "drop": [], "extra_kwargs": {}, "extra_positional": 0}
    if op == "compile":
        case["options"]["target"] = rng.choice(["nvptx", "amdgpu"])
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        what = rng.random()
        if what < 0.3 and runtime:
            n, t = rng.choice(runtime)
            spec, certain = gen.spoiled_array(pointer_elem(t)) if pointer_elem(t) else gen.spoiled_scalar(t)
            args[n] = spec
            gen.spoil(n, certain and op == "launch")  # compile never looks at argument values
        elif what < 0.5 and consts:
            n = rng.choice(sorted(consts))
            consts[n], certain = gen.spoiled_const()
            gen.spoil(n, certain)
        elif what < 0.65:
            _spoil_keywords(gen, case, runtime, consts)
        elif what < 0.8 and op == "launch":
            case["grid"], certain = gen.spoiled_grid()
            gen.spoil("grid", certain)
        else:
            _spoil_option(gen, case, runtime)
    backend = case["options"].get("backend", ("value", None))[1]
    if backend in ("cuda", "hip"):  # GPU backends take GPU arrays or numpy arrays only: any other may be named
        gen.offenders.update({n: False for n, s in args.items() if s[0] != "array" or s[1] != "numpy"})
    case.update(args=args, consts=consts, offenders=sorted(gen.offenders), must_reject=any(gen.offenders.values()))
    return case


def _spoil_keywords(gen, case, runtime, consts):
    rng = gen.rng
    kind = rng.choice(["unknown", "missing_const", "duplicate", "by_keyword", "extra_positional", "wrong_case"])
    if kind == "unknown":
        name = rng.choice(["BLOK", "grid", "stream", "x_", "num_warp"])
        case["extra_kwargs"][name] = ("value", 4)
        gen.spoil(name, True)
    elif kind == "missing_const" and consts:
        name = rng.choice(sorted(consts))
        case["drop"].append(name)
        gen.spoil(name, True)
    elif kind == "wrong_case" and consts:
        name = rng.choice(sorted(consts))
        case["drop"].append(name)
        case["extra_kwargs"][name.lower() if name != name.lower() else name.upper()] = ("value", 8)
        gen.spoil(name, True)
    elif kind == "duplicate" and runtime:
        name = runtime[0][0]
        case["extra_kwargs"][name] = ("value", 1)
        gen.spoil(name, True)
    elif kind == "by_keyword" and runtime and case["op"] == "launch":
        case["keyword_runtime"] = [n for n, _ in runtime[rng.randint(0, len(runtime) - 1):]]
    elif case["op"] == "launch":
        case["extra_positional"] = rng.randint(1, 2)
        gen.spoil("positional arguments", True)


def _spoil_option(gen, case, runtime):
    rng = gen.rng
    opts = case["options"]
    what = rng.choice(["num_warps", "backend"] if case["op"] == "launch" else
                      ["num_warps", "target", "arch", "specialization", "fast_math"])
    if what == "num_warps":
        v = rng.choice([0, 3, -4, 1.0, True, "4", None, 2**70, 64])
        opts["num_warps"] = ("value", v)
        gen.spoil("num_warps", not (type(v) is int and v > 0 and v & (v - 1) == 0))
    elif what == "backend":
        v = rng.choice(available_backends() + ["sim", "CUDA", "", "interp", 5, b"cuda", None])
        opts["backend"] = ("value", v)
        gen.spoil("backend", v not in available_backends() and v is not None)
    elif what == "target":
        v = rng.choice(["ptx", "", "NVPTX", 5, None, "amdgpu"])
        opts["target"] = ("value", v)
        gen.spoil("target", v not in ("amdgpu", None))  # None: the default, nvptx
    elif what == "arch":
        v = rng.choice(["sm_0", "", "gfx942", "sm_90a", 90, None, "sm_80\0"])
        opts["arch"] = ("value", v)
        gen.spoil("arch", False)
    elif what == "fast_math":
        opts["fast_math"] = ("value", rng.choice([0, "no", None, [], 2]))
    else:
        name = rng.choice([n for n, _ in runtime] + ["nope"])
        v = rng.choice([16, 1, None, 3, 2**70, "16", 16.0, -16, True])
        opts["specialization"] = ("value", {name: v}) if rng.random() < 0.9 else ("odd", rng.choice(["list", "str"]))
        gen.spoil(name, False)
        gen.spoil("specialization", name == "nope")


def describe(case):
    if case["op"] == "load":
        return boundary_load.describe(case)
    keys = ["op", "kernel", "grid", "args", "consts", "options", "keyword_runtime", "drop", "extra_kwargs",
            "extra_positional", "offenders", "must_reject"]
    return "\n".join(f"  {k}: {case[k]!r}" for k in keys if case[k] not in ({}, [], 0) or k in ("args", "grid"))
