// What LLVM's NVPTX target machine adds at the start of every optimization pipeline (nvvm-reflect, then
// nvvm-intr-range), done from the module itself.
//
// Why not LLVM's passes: in LLVM 19 they read a kernel's annotations (.maxntid, "kernel") through a process-wide
// cache keyed by the module's and the function's addresses, which only code generation (the NVPTX printer's
// finalization) clears, and whose clearing function the shared libLLVM does not export. A module optimized and
// dropped without code generation (the emulator runs optimized IR; tests and tessera-translate stop there too)
// left its entry behind, and a later module allocated at the same addresses read it: thread-id ranges and
// .maxntid of another kernel (a 4-warp kernel's thread ids were taken to be below 32, and its upper warps read
// and wrote outside the tile). Reading the module's own nvvm.annotations here leaves nothing behind, so code
// generation, which fills and clears that cache in one run, always sees the module it prints.
#pragma once

namespace llvm {
class Module;
}  // namespace llvm

namespace tessera::backends::nvptx {

// Replaces every __nvvm_reflect("name") (libdevice's compile-time queries) by its answer, as nvvm-reflect does:
// "__CUDA_ARCH" is smVersion * 10 (sm_90a: 900), "__CUDA_FTZ" the module flag "nvvm-reflect-ftz" (0 when
// absent), anything else 0. The branches on them fold in the pipeline's first cleanup.
void answerReflectQueries(llvm::Module& m, unsigned smVersion);

// Gives each kernel's reads of the thread, block and grid ids (tid, ntid, ctaid, nctaid) the value range
// nvvm-intr-range gives them from the kernel's maxntidx / reqntidx annotation (at most 1024 threads, 2^31 - 1
// blocks along x, 65535 along y and z), intersected with a range the call already has.
void addIdRanges(llvm::Module& m);

}  // namespace tessera::backends::nvptx
