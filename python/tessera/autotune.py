"""Autotuning, as Triton's @triton.autotune: pick the fastest of several configs per key, remembered on disk.

    matmul = tessera.autotune(
        configs=[tessera.Config({"BM": 128, "BN": 128, "BK": 64}, num_warps=8),
                 tessera.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4)],
        key=["M", "N", "K"],
    )(tessera.kernels.matmul)
    matmul[lambda meta: (tessera.cdiv(M, meta["BM"]) * tessera.cdiv(N, meta["BN"]),)](a, b, c, M, N, K, ...,
                                                                                      GROUP_M=8)
    matmul.best_config   # Config({'BM': 128, 'BN': 128, 'BK': 64}, num_warps=8)

The first launch with new key values compiles every config in parallel, prunes those that need more shared
memory than the GPU has or spill registers (before any launch), times the rest (do_bench: L2 flushed, CUDA
events, median) and launches the fastest; later launches with those key values, in this process or another,
reuse the winner (the cache sits next to the JIT's, keyed by the kernel, the configs, the key values, the GPU,
its driver and the Tessera build). A key names runtime arguments (ints by value, arrays by dtype) or Consts the
launch gives.

Real timing needs a CUDA GPU. The emulator (backend="sim") and the interpreter can stand in for one only with
timer=: a callable taking a launch function and returning milliseconds (tests pass fakes). fixed=i, or the
environment variable TESSERA_AUTOTUNE_CONFIG=i, always uses config i: no compiling, no timing, deterministic.
While tuning, a progress line shows on stderr when it is a terminal (progress=True/False forces it).
"""

from . import _C, sim as _sim
from .kernel import Kernel, _is_gpu_array


class Config:
    """One configuration: Const values, the warp count, and other launch options by name (fast_math, num_stages,
    persistent, warp_specialize)."""

    def __init__(self, kwargs, num_warps=4, **options):
        if not isinstance(kwargs, dict):
            raise TypeError(f"Config takes a dict of Const values, got {type(kwargs).__name__}")
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.options = dict(options)

    def launch_kwargs(self):
        """What a launch with this config adds to the kernel call."""
        return dict(self.kwargs, num_warps=self.num_warps, **self.options)

    def __eq__(self, other):
        return isinstance(other, Config) and (self.kwargs, self.num_warps, self.options) == (
            other.kwargs, other.num_warps, other.options)

    def __repr__(self):
        options = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"Config({self.kwargs!r}, num_warps={self.num_warps}{options})"


def autotune(configs, key, timer=None, fixed=None, cache_dir=None, progress=None):
    """Decorates a tessera Kernel (see the module's docstring)."""
    def decorate(kernel):
        return Autotuned(kernel, configs, key, timer=timer, fixed=fixed, cache_dir=cache_dir, progress=progress)
    return decorate


def _key_text(value):
    if isinstance(value, bool) or not hasattr(value, "dtype"):
        return repr(value)
    return str(value.dtype)  # arrays and tensors: by element type


def _fact(value):
    # The specialization facts (jit/Specialization.h) of a runtime argument, as kernel.compile() takes them.
    if type(value) is int:
        return 16 if value % 16 == 0 else 8 if value % 8 == 0 else 1 if value == 1 else None
    return 16 if hasattr(value, "dtype") else None  # arrays: allocators align to 16 bytes or more


class Autotuned:
    """A Kernel launched with the best of its configs: autotuned[grid](*args, **consts, backend=...)."""

    def __init__(self, kernel, configs, key, timer=None, fixed=None, cache_dir=None, progress=None):
        if not isinstance(kernel, Kernel):
            raise TypeError(f"tessera.autotune decorates a tessera kernel, got {type(kernel).__name__}")
        configs = list(configs)
        for c in configs:
            if not isinstance(c, Config):
                raise TypeError(f"autotune configs must be tessera.Config objects, got {type(c).__name__}")
        if isinstance(key, str):
            raise TypeError("autotune key must be a list of argument names, e.g. ['M', 'N', 'K']")
        self.kernel = kernel
        self.name = kernel.name
        self.configs = configs
        self.key = list(key)
        self.timer = timer
        self.best_config = None
        self._tuner = _C.Autotuner(kernel._def, [(c.kwargs, c.num_warps, c.options) for c in configs], self.key,
                                   None if cache_dir is None else str(cache_dir), fixed, progress)

    def __repr__(self):
        return f"<tessera autotuned kernel {self.name}, {len(self.configs)} configs, key {self.key}>"

    def __getitem__(self, grid):
        return _AutotunedLauncher(self, grid)

    @property
    def last_report(self):
        """How the last launch chose: {key, winner, source ('benchmarked', 'cached', 'fixed'), outcomes}."""
        return self._tuner.last_report

    def _key_values(self, runtime, constants):
        k = self.kernel
        values = []
        for name in self.key:
            if name in k._arg_set:
                values.append((name, _key_text(runtime[k.arg_names.index(name)])))
            elif name in constants:
                values.append((name, _key_text(constants[name])))
            else:
                raise TypeError(f"autotuned kernel '{self.name}': key '{name}' is a Const the launch does not give")
        return values


class _AutotunedLauncher:
    __slots__ = ("tuned", "grid")

    def __init__(self, tuned, grid):
        self.tuned = tuned
        self.grid = grid

    def __call__(self, *args, backend=None, target=None, arch=None, checks=None, **kwargs):
        tuned = self.tuned
        k = tuned.kernel
        runtime, constants = k._bind(args, kwargs)
        set_twice = sorted(set(constants) & {n for c in tuned.configs for n in c.launch_kwargs()})
        if set_twice:
            raise TypeError(f"autotuned kernel '{tuned.name}': {set_twice[0]!r} is set by the autotune configs; "
                            "do not pass it to the launch")
        if backend is None:
            backend = "cuda" if any(map(_is_gpu_array, runtime)) else "interpreter"
        if backend == "hip":
            raise ValueError(f"autotuned kernel '{tuned.name}': autotuning on HIP is not supported yet")
        sim_kwargs = dict(target=target, arch=arch, checks=checks) if backend == "sim" else {}
        grid = self.grid

        def launch(index):
            k[grid](*runtime, **constants, **tuned.configs[index].launch_kwargs(), backend=backend, **sim_kwargs)

        timer = tuned.timer or (_C.bench_launch if backend == "cuda" else None)
        cannot = "" if timer else (
            f"autotuned kernel '{tuned.name}': backend {backend!r} has no clock to tune with; real timing runs on a "
            "CUDA GPU (pass timer= to tessera.autotune)")
        # The emulator compiles for its own arch; the interpreter is pruned as the default emulated GPU would be.
        sim_runtime = _sim.runtime(target, arch, True if checks is None else checks) if backend != "cuda" else None
        index = tuned._tuner.select(tuned._key_values(runtime, constants), k._jit_kernel(),
                                    [_fact(v) for v in runtime], constants, backend, sim_runtime,
                                    (lambda i: float(timer(lambda: launch(i)))) if timer else None, cannot)
        tuned.best_config = tuned.configs[index]
        launch(index)
