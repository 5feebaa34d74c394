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
memory than the GPU has or spill registers (before any launch), times the rest (do_bench: L2 flushed, CUDA or
HIP events, median) and launches the fastest; later launches with those key values, in this process or another,
reuse the winner (the cache sits next to the JIT's, keyed by the kernel, the configs, the key values, the GPU,
its driver and the Tessera build). A key names runtime arguments (ints by value, arrays by dtype) or Consts the
launch gives.

Real timing needs a GPU: CUDA events on an NVIDIA GPU, HIP events on an AMD one (backend="hip"). Host arrays
(numpy arrays, CPU tensors) are copied in once per config, and only the launches are timed. The emulator
(backend="sim") and the interpreter can stand in for one only with timer=: a callable taking a launch function
and returning milliseconds (tests pass fakes). fixed=i, or the environment variable TESSERA_AUTOTUNE_CONFIG=i,
always uses config i: no compiling, no timing, deterministic.
While tuning, a progress line shows on stderr when it is a terminal (progress=True/False forces it).

A kernel taking tensor descriptors reads blocks that depend on the config (a matmul's A block is BM x BK):
descriptor_blocks={"a": ("BM", "BK"), "b": ("BK", "BN")} re-blocks those arguments for each config, dimension by
dimension from a Const's value (the config's, else the launch's) or a number. The launch passes descriptors with
any valid block; the one each config reads replaces it.
"""

from . import _C, sim as _sim
from .descriptor import TensorDescriptor
from .kernel import Kernel, _TARGETS, _default_backend, _is_gpu_array


class Config:
    """One configuration: Const values, the warp count, and other launch options by name (fast_math, num_stages,
    persistent, warp_specialize, ping_pong, matrix_instr_nonkdim)."""

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


def autotune(configs, key, timer=None, fixed=None, cache_dir=None, progress=None, descriptor_blocks=None):
    """Decorates a tessera Kernel (see the module's docstring)."""
    def decorate(kernel):
        return Autotuned(kernel, configs, key, timer=timer, fixed=fixed, cache_dir=cache_dir, progress=progress,
                         descriptor_blocks=descriptor_blocks)
    return decorate


def _key_text(value):
    if isinstance(value, bool) or not hasattr(value, "dtype"):
        return repr(value)
    return str(value.dtype)  # arrays and tensors: by element type


def _fact(value):
    # The specialization facts (jit/Specialization.h) of a runtime argument, as kernel.compile() takes them.
    if type(value) is int:
        return 16 if value % 16 == 0 else 8 if value % 8 == 0 else 1 if value == 1 else None
    if type(value) is TensorDescriptor:
        return value  # its shape and strides as they are; the config gives the block (descriptor_blocks)
    return 16 if hasattr(value, "dtype") else None  # arrays: allocators align to 16 bytes or more


class Autotuned:
    """A Kernel launched with the best of its configs: autotuned[grid](*args, **consts, backend=...)."""

    def __init__(self, kernel, configs, key, timer=None, fixed=None, cache_dir=None, progress=None,
                 descriptor_blocks=None):
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
        if descriptor_blocks is not None and not isinstance(descriptor_blocks, dict):
            raise TypeError("descriptor_blocks must be a dict {descriptor name: (Const name or int, ...)}, got "
                            f"{type(descriptor_blocks).__name__}")
        self.descriptor_blocks = {name: tuple(dims) for name, dims in (descriptor_blocks or {}).items()}
        self._tuner = _C.Autotuner(kernel._def, [(c.kwargs, c.num_warps, c.options) for c in configs], self.key,
                                   None if cache_dir is None else str(cache_dir), fixed, progress,
                                   {name: list(dims) for name, dims in self.descriptor_blocks.items()})

    def __repr__(self):
        return f"<tessera autotuned kernel {self.name}, {len(self.configs)} configs, key {self.key}>"

    def __getitem__(self, grid):
        return _AutotunedLauncher(self, grid)

    @property
    def last_report(self):
        """How the last launch chose: {key, winner, source ('benchmarked', 'cached', 'fixed'), outcomes}."""
        return self._tuner.last_report

    def _reblocked(self, runtime, config, constants):
        """The runtime arguments with the descriptors descriptor_blocks names reading config's blocks."""
        if not self.descriptor_blocks:
            return runtime
        values = dict(constants, **config.kwargs)
        out = list(runtime)
        for name, dims in self.descriptor_blocks.items():
            i = self.kernel.arg_names.index(name)
            d = out[i]
            if type(d) is TensorDescriptor:  # anything else is refused by the launch, naming the argument
                missing = [x for x in dims if isinstance(x, str) and x not in values]
                if missing:
                    raise TypeError(f"autotuned kernel '{self.name}': the block of '{name}' takes Const "
                                    f"'{missing[0]}', which neither the config nor the launch sets")
                block = tuple(values[x] if isinstance(x, str) else x for x in dims)
                out[i] = TensorDescriptor(d.array, block, shape=d.shape, strides=d.strides)
        return out

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
            backend = _default_backend(runtime)
        sim_kwargs = dict(target=target, arch=arch, checks=checks) if backend == "sim" else {}
        grid = self.grid

        def launch(index, **timed):
            config = tuned.configs[index]
            return k[grid](*tuned._reblocked(runtime, config, constants), **constants, **config.launch_kwargs(),
                           backend=backend, **sim_kwargs, **timed)

        on_host = not any(map(_is_gpu_array, runtime))

        def benchmark(index):
            if tuned.timer:
                return float(tuned.timer(lambda: launch(index)))
            if on_host:  # the API's events; the host arrays are copied in once per config, outside the timing
                return float(launch(index, _time_staged=True))
            return float(_C.bench_launch(lambda: launch(index), _TARGETS[backend]))

        on_gpu = backend in ("cuda", "hip")
        cannot = "" if tuned.timer or on_gpu else (
            f"autotuned kernel '{tuned.name}': backend {backend!r} has no clock to tune with; real timing runs on a "
            "CUDA or AMD GPU (pass timer= to tessera.autotune)")
        # The emulator compiles for its own arch; the interpreter is pruned as the default emulated GPU would be.
        sim_runtime = None if on_gpu else _sim.runtime(target, arch, True if checks is None else checks)
        index = tuned._tuner.select(tuned._key_values(runtime, constants), k._jit_kernel(),
                                    [_fact(v) for v in runtime], constants, backend, sim_runtime,
                                    None if cannot else benchmark, cannot)
        tuned.best_config = tuned.configs[index]
        launch(index)
