"""Triton-style launches of C++ kernels: kernel[grid](*args, CONST=..., num_warps=...)."""

BACKENDS = ("interpreter", "eager")


def cdiv(a, b):
    """Ceiling division, for grid sizes."""
    return -(-a // b)


def _key_part(value):
    # Ints key by value; anything else by type and repr, so that values that compare equal but may trace
    # differently (0.0 and -0.0, 1 and 1.0) get separate specializations.
    return value if type(value) is int else (type(value), repr(value))


class Kernel:
    """A kernel written in the C++ DSL (a bound tessera._C.KernelDef).

    kernel[grid](*args, CONST=..., num_warps=4, backend="interpreter") launches it. Runtime arguments go
    positionally or by keyword, Const parameters by keyword. grid is an int, a tuple of 1 to 3 ints, or a callable
    taking the launch's meta-parameters (a dict of the Const values and num_warps) and returning one of those.
    The interpreter backend traces the kernel once per set of Const values and reuses the traced IR; "eager"
    runs the C++ kernel function op by op.
    """

    def __init__(self, kernel_def):
        self._def = kernel_def
        self.name = kernel_def.name
        self.params = kernel_def.params  # [(name, kind, type)]
        self.arg_names = [p[0] for p in self.params if p[1] != "constant"]
        self.const_names = [p[0] for p in self.params if p[1] == "constant"]
        self._arg_set = frozenset(self.arg_names)
        self._const_set = frozenset(self.const_names)
        self._specializations = {}

    def __repr__(self):
        sig = ", ".join(f"{n}: {t}" if k != "constant" else f"{n}=<const>" for n, k, t in self.params)
        return f"<tessera kernel {self.name}({sig})>"

    def __getitem__(self, grid):
        return _Launcher(self, grid)

    def trace(self, **constants):
        """The kernel's tile IR for these Const values (a fresh ir.Module, free to transform)."""
        self._check_constants(constants)
        return self._def.trace(constants)

    def specialization(self, **constants):
        """The cached specialization for these Const values (traced on first use): .ir, .module(), .run()."""
        self._check_constants(constants)
        return self._specialization(constants)

    def _specialization(self, constants):
        key = tuple([_key_part(constants[name]) for name in self.const_names])
        spec = self._specializations.get(key)
        if spec is None:
            spec = self._def.specialize(constants)
            self._specializations[key] = spec
        return spec

    def _check_constants(self, constants):
        if constants.keys() == self._const_set:
            return
        unknown = sorted(set(constants) - self._const_set)
        if unknown:
            raise TypeError(f"kernel '{self.name}' got an unexpected keyword argument {unknown[0]!r} "
                            f"(its Const parameters: {', '.join(self.const_names) or 'none'})")
        missing = [c for c in self.const_names if c not in constants]
        raise TypeError(f"kernel '{self.name}' needs Const parameter {missing[0]!r} as a keyword argument")

    def _bind(self, args, kwargs):
        """Splits positional/keyword arguments into runtime arguments (in order) and Const values."""
        n = len(self.arg_names)
        if len(args) == n and kwargs.keys() <= self._const_set:
            return args, kwargs  # the common case: runtime arguments positional, Consts by keyword
        if len(args) > n:
            raise TypeError(f"kernel '{self.name}' takes {n} positional arguments "
                            f"({', '.join(self.arg_names)}), got {len(args)}")
        kwargs = dict(kwargs)
        dup = [name for name in self.arg_names[:len(args)] if name in kwargs]
        if dup:
            raise TypeError(f"kernel '{self.name}' got multiple values for argument {dup[0]!r}")
        runtime = list(args)
        for name in self.arg_names[len(args):]:
            if name not in kwargs:
                raise TypeError(f"kernel '{self.name}' is missing argument {name!r}")
            runtime.append(kwargs.pop(name))
        return runtime, kwargs


class _Launcher:
    __slots__ = ("kernel", "grid")

    def __init__(self, kernel, grid):
        self.kernel = kernel
        self.grid = grid

    def __call__(self, *args, num_warps=4, backend="interpreter", **kwargs):
        k = self.kernel
        runtime, constants = k._bind(args, kwargs)
        k._check_constants(constants)
        if type(num_warps) is not int or num_warps <= 0 or num_warps & (num_warps - 1):
            raise ValueError(f"num_warps must be a positive power of two, got {num_warps!r}")
        grid = self.grid
        if callable(grid):
            grid = grid(dict(constants, num_warps=num_warps))
        if backend == "interpreter":
            k._specialization(constants).run(grid, runtime)
        elif backend == "eager":
            k._def.run_eager(grid, runtime, constants)
        else:
            raise ValueError(f"unknown backend {backend!r}; available here: {', '.join(BACKENDS)}")
