// The LLVM optimization pipeline every target runs on a lowered kernel before emitting its binary.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::backends {

// LLVM's default O3 module pipeline, with the target machine's own analyses and passes registered, then the
// verifier: throws tessera::Error if the result is not valid LLVM IR.
void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace tessera::backends
