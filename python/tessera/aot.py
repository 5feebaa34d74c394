"""Ahead-of-time export: a kernel compiled now, shipped as a C header and source (docs/AOT.md).

    paths = tessera.aot.export(tessera.kernels.vector_add, "exports", constants={"BLOCK": 1024},
                               targets=["nvptx:sm_90a", "amdgpu:gfx942"], divisible_by_16=["x", "y", "out", "n"])

The same library code as the tessera-aot tool. The generated C needs neither Tessera nor LLVM at run time.
"""

from . import _C


def export(kernel, out_dir, constants=None, targets=("nvptx:sm_80", "nvptx:sm_90a"), num_warps=4,
           divisible_by_16=(), equal_to_1=(), name=None, fast_math=True, cubin=True, ptxas=None, divisible_by_8=()):
    """Writes out_dir/<name>.h and out_dir/<name>.c for `kernel` (a tessera.Kernel) and returns their paths.

    constants: every Const parameter's value. targets: "nvptx:sm_80", "nvptx:sm_90a", "amdgpu:gfx90a",
    "amdgpu:gfx942". divisible_by_16 / equal_to_1: runtime parameter names the binaries may assume 16-byte aligned
    (pointers) or multiples of 16 (integers), or equal to 1; divisible_by_8: integers the binaries may assume
    multiples of 8 (a ragged size such as 1000 keeps 16-byte row copies of 16-bit data). The launch function checks
    them all. cubin: also embed a
    cubin per nvptx arch when ptxas is found (ptxas: its path). Raises tessera.Error for bad input.
    """
    paths, _binaries = _C.aot.export_kernel(
        kernel._def, str(out_dir), dict(constants or {}), list(targets), num_warps, set(divisible_by_16),
        set(divisible_by_8), set(equal_to_1), name or "", fast_math, cubin, ptxas or "")
    return paths
