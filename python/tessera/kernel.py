"""Triton-style launches of C++ kernels: kernel[grid](*args, CONST=..., num_warps=...)."""

import numpy as _np

from . import _C, sim as _sim
from .descriptor import TensorDescriptor

BACKENDS = ("interpreter", "eager", "cuda", "hip", "sim")
_TARGETS = {"cuda": "nvptx", "hip": "amdgpu"}  # the JIT target of each GPU backend
# Argument types that are never GPU arrays: checked by type first, since hasattr() on them is comparatively slow.
_HOST_TYPES = frozenset([int, float, bool, _np.ndarray])
_DL_CUDA, _DL_ROCM, _DL_CUDA_MANAGED = 2, 10, 13


def _gpu_array_backend(value):
    """"cuda" for an array in NVIDIA GPU memory, "hip" for one in AMD GPU memory (DLPack's ROCm device: torch's
    and CuPy's ROCm builds), None otherwise."""
    if type(value) in _HOST_TYPES:
        return None
    if type(value) is TensorDescriptor:  # a descriptor lives where its array does
        value = value.array
    dev = getattr(value, "__dlpack_device__", None)
    device_type = dev()[0] if dev is not None and hasattr(value, "__dlpack__") else None
    if device_type == _DL_ROCM:  # before __cuda_array_interface__, which a ROCm tensor may also offer
        return "hip"
    if device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
        return "cuda"
    try:
        if hasattr(value, "__cuda_array_interface__"):
            return "cuda"
    except Exception:  # torch raises KeyError for a dtype the interface has no typestr for (bf16)
        pass
    return None


def _is_gpu_array(value):
    return _gpu_array_backend(value) is not None


def _default_backend(args):
    """The backend a launch without backend= takes: the API of its first GPU array, else the interpreter."""
    for a in args:
        backend = _gpu_array_backend(a)
        if backend:
            return backend
    return "interpreter"


def _producer_stream(args):
    """The current stream of the first torch tensor among args (torch's __cuda_array_interface__ names none)."""
    for a in args:
        if type(a) is TensorDescriptor:
            a = a.array
        if type(a).__module__.startswith("torch") and getattr(a, "is_cuda", False):
            import torch
            return torch.cuda.current_stream(a.device).cuda_stream
    return None


def _check_persistent(persistent):
    if type(persistent) is not bool:
        raise TypeError(f"persistent must be True or False, got {persistent!r}")


def _check_warp_specialize(warp_specialize, ping_pong=False):
    if type(warp_specialize) is not bool:
        raise TypeError(f"warp_specialize must be True or False, got {warp_specialize!r}")
    if type(ping_pong) is not bool:
        raise TypeError(f"ping_pong must be True or False, got {ping_pong!r}")


def _check_num_warps(num_warps):
    # Every backend's bound (the JIT's too): 32 warps of 32 threads are a program's 1024 threads on NVIDIA.
    if type(num_warps) is not int or not 1 <= num_warps <= 32 or num_warps & (num_warps - 1):
        raise ValueError(f"num_warps must be a power of two from 1 to 32, got {num_warps!r}")


def _check_matrix_instr_nonkdim(matrix_instr_nonkdim):
    if type(matrix_instr_nonkdim) is not int or matrix_instr_nonkdim not in (0, 16, 32):
        raise ValueError("matrix_instr_nonkdim must be 0 (the target's choice), 16 or 32, got "
                         f"{matrix_instr_nonkdim!r}")


def _check_num_stages(num_stages):
    if type(num_stages) is not int or not 1 <= num_stages <= 8:
        raise ValueError(f"num_stages must be an int from 1 to 8, got {num_stages!r}")


def cdiv(a, b):
    """Ceiling division, for grid sizes."""
    return -(-a // b)


def _key_part(value):
    # Ints key by value; anything else by type and repr, so that values that compare equal but may trace
    # differently (0.0 and -0.0, 1 and 1.0) get separate specializations.
    return value if type(value) is int else (type(value), repr(value))


class Kernel:
    """A kernel written in the C++ DSL (a bound tessera._C.KernelDef).

    kernel[grid](*args, CONST=..., num_warps=4, num_stages=3, backend=None, fast_math=True, persistent=False,
    warp_specialize=False, ping_pong=False, matrix_instr_nonkdim=0)
    launches it (fast_math: the JIT backends' approximate math functions; the interpreter and eager mode compute
    exactly; persistent: on the JIT backends, at most as many programs as the GPU holds loop over the grid's tiles,
    see compile()).
    Runtime arguments go positionally or by keyword, Const parameters by keyword. grid is an int, a tuple of 1 to 3
    ints, or a callable taking the launch's meta-parameters (a dict of the Const values, num_warps and num_stages)
    and returning one of those.

    Backends: None picks "cuda" when an argument is an NVIDIA GPU array (__cuda_array_interface__, or DLPack on a
    CUDA device: torch and CuPy tensors), "hip" when it is an AMD one (DLPack on a ROCm device: torch's and CuPy's
    ROCm builds), and "interpreter" otherwise. "interpreter" traces the kernel once per set of
    Const values and runs the traced IR on numpy arrays or CPU tensors (torch's, through DLPack: same dtype and
    contiguity rules); "eager" runs the C++ kernel function op by op on the same; "cuda"
    JIT-compiles per specialization and launches on the GPU, on the producer's current stream (asynchronous,
    like any CUDA launch); with numpy arrays it copies them to the GPU and back (synchronously). "hip" does the
    same on an AMD GPU through the HIP runtime, for ROCm arrays, or numpy arrays and CPU tensors copied in and
    back. "sim" runs the JIT's GPU code
    on the emulator (tessera.sim, docs/Sim.md) on numpy arrays and CPU tensors, copied in and back: target=
    ("nvptx", "amdgpu") or arch= (tessera.sim.ARCHS; default TESSERA_SIM_ARCH or sm_90a) say which GPU,
    checks=False turns the checks off (global bounds stay), checks={"racecheck": False} one of them
    (tessera.sim.CHECKS); tessera.sim.last_report() has the counters and findings.
    kernel.compile(...) shows what the JIT makes of a kernel, without a GPU.
    """

    def __init__(self, kernel_def):
        self._def = kernel_def
        self.name = kernel_def.name
        self.params = kernel_def.params  # [(name, kind, type)]
        self.arg_names = [p[0] for p in self.params if p[1] != "constant"]
        self.const_names = [p[0] for p in self.params if p[1] == "constant"]
        runtime_params = [p for p in self.params if p[1] != "constant"]
        self._param_types = {p[0]: p[2] for p in runtime_params}
        self._descriptor_args = [(i, p[0]) for i, p in enumerate(runtime_params) if p[1] == "descriptor"]
        self._arg_set = frozenset(self.arg_names)
        self._const_set = frozenset(self.const_names)
        self._specializations = {}
        self._jit = None

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

    def compile(self, target=None, arch=None, num_warps=4, fast_math=True, specialization=None, backend=None,
                checks=None, num_stages=3, persistent=False, warp_specialize=False, ping_pong=False,
                matrix_instr_nonkdim=0, **constants):
        """Compiles the kernel for these Const values without a GPU (for target, "nvptx" by default); returns a
        CompiledKernel with .ptx (.binary, .format), .llvm_ir, .optimized_llvm_ir, .ir_stages [(stage, tile IR)],
        .shared_bytes and .num_warps; .resources() says what it uses (ptxas -v's registers and spills, or an AMDGPU
        code object's VGPRs and spills).

        num_stages is how many shared-memory stages a loop's asynchronous copies (dot operands) cycle through:
        num_stages - 1 iterations are copied ahead. 1 turns pipelining off. Part of the compile cache key.

        persistent=True makes a persistent kernel: a launch starts at most as many programs as the GPU runs at once,
        and each loops over the grid's tiles (program p takes tiles p, p + P, ...). Same results; the kernel takes
        the grid as three extra i32 arguments, which the launch passes. Part of the compile cache key.

        warp_specialize=True (sm_90a, a loop whose dot operands arrive by TMA: tensor descriptors) adds a producer
        warpgroup to the num_warps warps: one of its threads issues the loop's copies num_stages - 1 stages ahead,
        the num_warps warps only wait for them and hand each stage back, and setmaxnreg gives the producers'
        registers to them (.producer_warps is 4). Same results; part of the compile cache key.

        ping_pong=True (implies persistent and warp_specialize) runs two groups of num_warps consumer warps, each on
        every other tile of its program, taking turns with their main loops and their epilogues, so that one
        group's epilogue runs beside the other's tensor-core work (CUTLASS's ping-pong kernels; .consumer_groups is
        2, a program runs 2 * num_warps + 4 warps). Same results; part of the compile cache key.

        matrix_instr_nonkdim (as in Triton; AMDGPU only, other targets ignore it) is the M and N of the MFMA
        instructions: 16 (v_mfma_*_16x16x16, the default; 0 leaves the choice to the target) or 32
        (v_mfma_f32_32x32x8 for f16/bf16 dots whose M is a multiple of 32 and N of 32 * num_warps; other dots keep
        16x16). Same results; part of the compile cache key on AMDGPU.

        backend="sim" compiles for the emulated arch (arch, else target's default arch; see tessera.sim) and also
        loads the kernel into the emulator (with the checks= selection, all by default), so that what the emulator
        cannot run fails here.

        specialization maps runtime parameter names to the facts a launch would find (jit/Specialization.h):
        16 for a pointer aligned to 16 bytes or an integer divisible by 16, 8 for an integer divisible by 8 (but
        not 16), 1 for an integer equal to 1, None
        for no fact, the block shape (a tuple) for a tensor descriptor, which a kernel specializes on (required), or
        a tessera.TensorDescriptor, whose shape and strides are facts too.
        Unnamed pointers default to 16 (what allocators return), unnamed integers to None. Pointers stand for
        arrays of fewer than 2^31 elements (what a launch passing arrays finds; a larger array gets a variant of
        its own, with 64-bit pointer arithmetic).
        """
        self._check_constants(constants)
        _check_num_warps(num_warps)
        _check_num_stages(num_stages)
        _check_persistent(persistent)
        _check_warp_specialize(warp_specialize, ping_pong)
        _check_matrix_instr_nonkdim(matrix_instr_nonkdim)
        if target is not None and not isinstance(target, str):
            raise TypeError(f"target must be a str ('nvptx' or 'amdgpu') or None, got {type(target).__name__}")
        if target == "":  # not the default: None is
            raise ValueError("target must be 'nvptx' or 'amdgpu' (None for nvptx), got ''")
        if arch is not None and not isinstance(arch, str):
            raise TypeError(f"arch must be a str (e.g. 'sm_90a') or None, got {type(arch).__name__}")
        if specialization is not None and not isinstance(specialization, dict):
            raise TypeError(f"specialization must be a dict of runtime parameter names, got {type(specialization).__name__}")
        specialization = dict(specialization or {})
        unknown = sorted(set(specialization) - self._arg_set)
        if unknown:
            raise TypeError(f"kernel '{self.name}' has no runtime parameter {unknown[0]!r} to specialize "
                            f"(its runtime parameters: {', '.join(self.arg_names)})")
        facts = [specialization.get(name, 16 if kind == "pointer" else None)
                 for name, kind, _ in self.params if kind != "constant"]
        if backend is None:
            if checks is not None:
                raise ValueError("checks apply to backend='sim' (the emulator)")
            return self._jit_kernel().compile(facts, constants, num_warps, target or "nvptx", arch or "",
                                              bool(fast_math), num_stages=num_stages, persistent=persistent,
                                              warp_specialize=warp_specialize, ping_pong=ping_pong,
                                              matrix_instr_nonkdim=matrix_instr_nonkdim)
        if backend != "sim":
            raise ValueError(f"compile() takes backend='sim' or None (a GPU target), got {backend!r}")
        runtime = _sim.runtime(target, arch, True if checks is None else checks)
        return self._jit_kernel().compile(facts, constants, num_warps, "", "", bool(fast_math), runtime, num_stages,
                                          persistent, warp_specialize, ping_pong, matrix_instr_nonkdim)

    def _jit_kernel(self):
        if self._jit is None:
            self._jit = _C.JitKernel(self._def)
        return self._jit

    def _specialization(self, constants, runtime=()):
        key = tuple([_key_part(constants[name]) for name in self.const_names])
        blocks = {}
        if self._descriptor_args:  # a kernel specializes on the block of each descriptor it takes
            for i, name in self._descriptor_args:
                if not isinstance(runtime[i], TensorDescriptor):
                    raise TypeError(f"argument '{name}' must be a tessera.TensorDescriptor of "
                                    f"{self._param_types[name]}, got {type(runtime[i]).__name__}")
                blocks[name] = runtime[i].block_shape
            key += tuple(blocks.values())
        spec = self._specializations.get(key)
        if spec is None:
            spec = self._def.specialize(constants, blocks)
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

    def __call__(self, *args, num_warps=4, num_stages=3, backend=None, target=None, arch=None, checks=None,
                 fast_math=True, persistent=False, warp_specialize=False, ping_pong=False, matrix_instr_nonkdim=0,
                 _time_staged=False, **kwargs):
        # _time_staged (tessera.autotune's clock for host arrays on a GPU): with backend "cuda" or "hip", time the
        # launch instead (do_bench with the API's events; the arrays copied in once and not back) and return its
        # milliseconds.
        k = self.kernel
        runtime, constants = k._bind(args, kwargs)
        k._check_constants(constants)
        _check_num_warps(num_warps)
        _check_num_stages(num_stages)
        _check_persistent(persistent)
        _check_warp_specialize(warp_specialize, ping_pong)
        _check_matrix_instr_nonkdim(matrix_instr_nonkdim)
        grid = self.grid
        if callable(grid):
            grid = grid(dict(constants, num_warps=num_warps, num_stages=num_stages))
        if backend is None:
            backend = _default_backend(runtime)
        if backend != "sim" and (target, arch, checks) != (None, None, None):
            given = [n for n, v in (("target", target), ("arch", arch), ("checks", checks)) if v is not None]
            raise ValueError(f"{', '.join(given)} apply to backend='sim' (the emulator), not {backend!r}")
        if backend == "sim":
            _sim.launch(k._jit_kernel(), grid, runtime, constants, num_warps,
                        _sim.runtime(target, arch, True if checks is None else checks), bool(fast_math),
                        num_stages, persistent, warp_specialize, ping_pong, matrix_instr_nonkdim)
        elif backend == "interpreter":  # runs the grid as it is (persistence, warp roles change how, not what)
            k._specialization(constants, runtime).run(grid, runtime)
        elif backend in ("cuda", "hip") and _time_staged:
            return k._jit_kernel().time_staged(grid, runtime, constants, num_warps, _TARGETS[backend], "",
                                               bool(fast_math), num_stages, persistent, warp_specialize, ping_pong,
                                               matrix_instr_nonkdim)
        elif backend == "cuda" or (backend == "hip" and any(map(_is_gpu_array, runtime))):
            # GPU arrays, on their producer's stream (or, for CUDA, numpy arrays copied in and back).
            k._jit_kernel().launch(grid, runtime, constants, num_warps, _producer_stream(runtime), "",
                                   bool(fast_math), num_stages, persistent, warp_specialize, ping_pong,
                                   matrix_instr_nonkdim, _TARGETS[backend])
        elif backend == "eager":
            k._def.run_eager(grid, runtime, constants)
        elif backend == "hip":
            # AMD GPUs through the HIP runtime, on host arrays (numpy arrays, CPU tensors: copied in and back). The
            # arch comes from TESSERA_HIP_ARCH or the GPU (see jit/DeviceRuntime.h).
            k._jit_kernel().launch_staged(grid, runtime, constants, num_warps, "amdgpu", "", bool(fast_math),
                                          num_stages, persistent, warp_specialize, ping_pong, matrix_instr_nonkdim)
        else:
            raise ValueError(f"unknown backend {backend!r}; available here: {', '.join(BACKENDS)}")
