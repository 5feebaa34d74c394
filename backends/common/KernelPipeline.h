// The LLVM optimization pipeline for a lowered Tessera kernel: the passes of LLVM's O3 module pipeline that change
// what our kernels compile to, and none of the others (docs/CompileTime.md says how they were chosen).
#pragma once

#include <llvm/IR/PassManager.h>

namespace tessera::backends {

// The pipeline. It leaves out the passes a target machine adds at the start of every pipeline: the target runs
// their equivalent first (NVPTX: backends/nvptx/StartPasses.h says why).
llvm::ModulePassManager buildKernelPipeline();

}  // namespace tessera::backends
