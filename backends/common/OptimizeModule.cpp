#include "backends/common/OptimizeModule.h"

#include <functional>

#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Vectorize/LoadStoreVectorizer.h>

#include "backends/common/KernelPipeline.h"
#include "ir/Error.h"

namespace tessera::backends {

namespace {

void runPipeline(llvm::Module& m, llvm::TargetMachine& tm, MemoryAccessVectorization vectorization,
                 const std::function<llvm::ModulePassManager(llvm::PassBuilder&)>& build) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = build(pb);
  if (vectorization == MemoryAccessVectorization::AsGpuCodegen)
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::LoadStoreVectorizerPass()));
  mpm.run(m, mam);
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(m, &es))
    throw Error(tm.getTargetTriple().getArchName().str() + ": invalid LLVM IR after optimization: " + es.str());
}

}  // namespace

void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm, llvm::OptimizationLevel level,
                    MemoryAccessVectorization vectorization) {
  runPipeline(m, tm, vectorization, [&](llvm::PassBuilder& pb) { return pb.buildPerModuleDefaultPipeline(level); });
}

void optimizeKernelModule(llvm::Module& m, llvm::TargetMachine& tm, MemoryAccessVectorization vectorization) {
  runPipeline(m, tm, vectorization, [](llvm::PassBuilder&) { return buildKernelPipeline(); });
}

}  // namespace tessera::backends
