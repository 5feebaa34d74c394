"""Triton-style launches of C++ kernels: kernel[grid](*args, CONST=..., num_warps=...)."""

import inspect

BACKENDS = ("interpreter", "eager")


def cdiv(a, b):
    """Ceiling division, for grid sizes."""
    return -(-a // b)


class Kernel:
    """A kernel written in the C++ DSL (a bound tessera._C.KernelDef)."""

    def __init__(self, kernel_def):
        self._def = kernel_def
        self.name = kernel_def.name
        self.params = kernel_def.params  # [(name, kind, type)]
        self.arg_names = [p[0] for p in self.params if p[1] != "constant"]
        self.const_names = [p[0] for p in self.params if p[1] == "constant"]

    def __repr__(self):
        sig = ", ".join(f"{n}: {t}" if k != "constant" else f"{n}=<const>" for n, k, t in self.params)
        return f"<tessera kernel {self.name}({sig})>"

    def __getitem__(self, grid):
        return _Launcher(self, grid)

    def trace(self, **constants):
        """The kernel's tile IR for these Const values (an ir.Module)."""
        self._check_constants(constants)
        return self._def.trace(constants)

    def _check_constants(self, constants):
        unknown = sorted(set(constants) - set(self.const_names))
        if unknown:
            raise TypeError(f"kernel '{self.name}' has no Const parameter {unknown[0]!r} "
                            f"(its Const parameters: {', '.join(self.const_names) or 'none'})")
        missing = [c for c in self.const_names if c not in constants]
        if missing:
            raise TypeError(f"kernel '{self.name}' needs Const parameter {missing[0]!r} as a keyword argument")

    def _bind(self, args, kwargs):
        """Splits positional/keyword arguments into runtime arguments (in order) and constants."""
        kwargs = dict(kwargs)
        if len(args) > len(self.arg_names):
            raise TypeError(f"kernel '{self.name}' takes {len(self.arg_names)} positional arguments "
                            f"({', '.join(self.arg_names)}), got {len(args)}")
        runtime = list(args)
        for name in self.arg_names[len(args):]:
            if name not in kwargs:
                raise TypeError(f"kernel '{self.name}' is missing argument {name!r}")
            runtime.append(kwargs.pop(name))
        dup = [n for n in self.arg_names[:len(args)] if n in kwargs]
        if dup:
            raise TypeError(f"kernel '{self.name}' got argument {dup[0]!r} twice")
        return runtime, kwargs


class _Launcher:
    def __init__(self, kernel, grid):
        self.kernel = kernel
        self.grid = grid

    def __call__(self, *args, num_warps=4, backend=None, **kwargs):
        k = self.kernel
        runtime, constants = k._bind(args, kwargs)
        k._check_constants(constants)
        if not isinstance(num_warps, int) or num_warps <= 0 or num_warps & (num_warps - 1):
            raise ValueError(f"num_warps must be a positive power of two, got {num_warps!r}")
        grid = self.grid
        if callable(grid):
            grid = grid(dict(constants, num_warps=num_warps))
        if isinstance(grid, int):
            grid = (grid,)
        grid = tuple(grid)
        if backend is None:
            backend = "interpreter"
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; available here: {', '.join(BACKENDS)}")
        if backend == "interpreter":
            k._def.run_interpreter(grid, runtime, constants)
        else:
            k._def.run_eager(grid, runtime, constants)
