// CompiledKernel::optimizedLLVMIR is the module after the target's O3 pipeline, the input of code generation
// (and of the emulator, jit/sim): code generation's own IR passes, which rewrite the IR they run on (AMDGPU's
// control-flow annotation and kernel-argument lowering), leave no trace in it.
#include <gtest/gtest.h>

#include "AMDGPUTestUtil.h"
#include "tessera/kernels/vector_add.h"

namespace tessera::testing {
namespace {

TEST(AmdgpuOptimizedIR, IsTheModuleBeforeCodeGeneration) {
  std::unique_ptr<ir::Module> m = kernels::vector_add_kernel().trace({{"BLOCK", 1024}});
  jit::CompiledKernel k = compileForAmdgpu(*m->functions().at(0), "gfx942");
  expectGoodCodeObject(k, "gfx942");
  EXPECT_NE(k.optimizedLLVMIR.find("define amdgpu_kernel void @vector_add("), std::string::npos);
  // The masked loads are branches: code generation would have annotated them with llvm.amdgcn.if.
  EXPECT_NE(k.optimizedLLVMIR.find("br i1"), std::string::npos);
  for (const char* codegen : {"llvm.amdgcn.if", "llvm.amdgcn.end.cf", "llvm.amdgcn.kernarg.segment.ptr"})
    EXPECT_EQ(k.optimizedLLVMIR.find(codegen), std::string::npos) << codegen << "\n" << k.optimizedLLVMIR;
}

}  // namespace
}  // namespace tessera::testing
