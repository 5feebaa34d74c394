// The LLVM optimization pipelines run on a lowered kernel before emitting its binary (and by the emulator, jit/sim,
// on the host code it makes of the result).
#pragma once

#include <llvm/Passes/OptimizationLevel.h>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::backends {

// Both run with the target machine's own analyses and passes registered, then the verifier: they throw
// tessera::Error if the result is not valid LLVM IR.

// LLVM's default module pipeline at `level`.
void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm,
                    llvm::OptimizationLevel level = llvm::OptimizationLevel::O3);

// The kernel pipeline (backends/common/KernelPipeline.h): the passes of O3 our kernels need.
void optimizeKernelModule(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace tessera::backends
