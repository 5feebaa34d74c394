// The LLVM optimization pipeline for a lowered Tessera kernel: the passes of LLVM's O3 module pipeline that change
// what our kernels compile to, and none of the others (docs/CompileTime.md says how they were chosen).
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class PassBuilder;
}  // namespace llvm

namespace tessera::backends {

// The pipeline, with the passes the target machine behind `pb` asks for at the start of every pipeline
// (NVPTX: resolving __nvvm_reflect for libdevice, the ranges of thread and block ids).
llvm::ModulePassManager buildKernelPipeline(llvm::PassBuilder& pb);

}  // namespace tessera::backends
