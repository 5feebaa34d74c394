// The LLVM optimization pipeline every target runs on a lowered kernel before emitting its binary (and the
// emulator, jit/sim, on the host code it makes of the result).
#pragma once

#include <llvm/Passes/OptimizationLevel.h>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::backends {

// LLVM's default module pipeline at `level`, with the target machine's own analyses and passes registered, then
// the verifier: throws tessera::Error if the result is not valid LLVM IR.
void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm,
                    llvm::OptimizationLevel level = llvm::OptimizationLevel::O3);

}  // namespace tessera::backends
