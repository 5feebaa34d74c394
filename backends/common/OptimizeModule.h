// The LLVM optimization pipelines run on a lowered kernel before emitting its binary (and by the emulator, jit/sim,
// on the host code it makes of the result).
#pragma once

#include <llvm/Passes/OptimizationLevel.h>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::backends {

// The GPU code generators merge adjacent loads and stores into vector accesses (NVPTX's and AMDGPU's codegen IR
// passes run LLVM's load/store vectorizer). A GPU target runs that vectorizer in its optimization too, so that its
// optimized module (the emulator's input) makes the accesses its binary makes: without it the emulator saw four
// scalar loads where the PTX has one ld.global.v4, and reported a quarter of the real coalescing efficiency.
enum class MemoryAccessVectorization { None, AsGpuCodegen };

// Both run with the target machine's own analyses and passes registered, then the verifier: they throw
// tessera::Error if the result is not valid LLVM IR.

// LLVM's default module pipeline at `level`.
void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm,
                    llvm::OptimizationLevel level = llvm::OptimizationLevel::O3,
                    MemoryAccessVectorization vectorization = MemoryAccessVectorization::None);

// The kernel pipeline (backends/common/KernelPipeline.h): the passes of O3 our kernels need.
void optimizeKernelModule(llvm::Module& m, llvm::TargetMachine& tm,
                          MemoryAccessVectorization vectorization = MemoryAccessVectorization::None);

}  // namespace tessera::backends
