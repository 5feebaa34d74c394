// The LLVM optimization every target runs on a lowered kernel before emitting its binary.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::backends {

enum class OptimizationPipeline {
  Kernel,  // buildKernelPipeline (backends/common/KernelPipeline.h): the passes of O3 our kernels need
  O3,      // LLVM's default O3 module pipeline
};

// Runs `pipeline` with the target machine's own analyses and passes registered, then the verifier: throws
// tessera::Error if the result is not valid LLVM IR.
void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm, OptimizationPipeline pipeline);

}  // namespace tessera::backends
