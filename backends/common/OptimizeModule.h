// The LLVM optimization pipeline every target runs on a lowered kernel before emitting its binary (and the
// emulator, jit/sim, on the host code it makes of the result).
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

// LLVM's default module pipeline at `level`, with the target machine's own analyses and passes registered, then
// the verifier: throws tessera::Error if the result is not valid LLVM IR.
void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm,
                    llvm::OptimizationLevel level = llvm::OptimizationLevel::O3,
                    MemoryAccessVectorization vectorization = MemoryAccessVectorization::None);

}  // namespace tessera::backends
