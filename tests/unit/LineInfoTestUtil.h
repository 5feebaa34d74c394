// Shared helpers of the *_line_info tests: compile a tutorial kernel through the JIT pipeline (with the source
// locations the lowering attaches, backends/common/DebugLocations.h), then emit its laid-out IR again with them
// stripped, to show that line info changes nothing in the code.
#pragma once

#include <string>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/Target.h"
#include "backends/common/DebugLocations.h"
#include "ir/Parser.h"
#include "jit/Compiler.h"
#include "tessera/kernels/matmul.h"

namespace tessera::testing {

// The tutorial matmul for `target`/`arch`, traced and specialized as a launch would be (below).
inline jit::CompiledKernel compileTutorialMatmul(const std::string& target, const std::string& arch, int block,
                                                 int blockK, int numWarps) {
  std::unique_ptr<ir::Module> m =
      kernels::matmul_kernel().trace({{"BM", block}, {"BN", block}, {"BK", blockK}, {"GROUP_M", 8}});
  ir::Function& f = *m->functions().at(0);
  // Specialized as the JIT specializes a launch on large contiguous row-major matrices (the benchmarks' cases):
  // aligned pointers, sizes and leading strides divisible by 16, unit inner strides. Left generic, the kernel
  // spills (sm_80 and sm_90a: 255 registers, about 700 bytes), and ptxas's spill choices move with the .loc lines,
  // which is not what these tests are about.
  for (unsigned i = 0; i < f.numArguments(); ++i) {
    const std::string& name = f.argument(i)->nameHint();
    if (name == "stride_ak" || name == "stride_bn" || name == "stride_cn")
      f.argAttrs(i)["equal_to_1"] = ir::Attr::boolean(true);
    else
      f.argAttrs(i)["divisibility"] = ir::Attr::integer(16);
  }
  std::unique_ptr<backends::Target> t = backends::createTarget(target);
  backends::TargetOptions options;
  options.arch = arch;
  options.numWarps = numWarps;
  return jit::compile(f, *t, options);
}

// What the target emits for `k`'s laid-out IR (its last pipeline stage) without line info.
inline std::string emitWithoutLineInfo(const jit::CompiledKernel& k) {
  std::unique_ptr<ir::Module> m = ir::parseModule(k.irAfterPass.back().second, k.name + ".tir");
  std::unique_ptr<backends::Target> target = backends::createTarget(k.target);
  backends::TargetOptions options;
  options.arch = k.arch;
  options.numWarps = k.numWarps;
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> lowered = target->lowerToLLVM(*m->functions().at(0), ctx, options);
  backends::stripSourceLocations(*lowered);
  target->optimize(*lowered, options);
  return target->emit(*lowered, options);
}

}  // namespace tessera::testing
