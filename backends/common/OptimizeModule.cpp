#include "backends/common/OptimizeModule.h"

#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "ir/Error.h"

namespace tessera::backends {

void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm, llvm::OptimizationLevel level) {
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
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(m, &es))
    throw Error(tm.getTargetTriple().getArchName().str() + ": invalid LLVM IR after optimization: " + es.str());
}

}  // namespace tessera::backends
