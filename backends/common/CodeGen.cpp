#include "backends/common/CodeGen.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/CodeGen/MachineModuleInfo.h>
#include <llvm/CodeGen/Passes.h>
#include <llvm/CodeGen/TargetPassConfig.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "ir/Error.h"

namespace tessera::backends {

std::string generateCode(llvm::Module& m, llvm::TargetMachine& tm, llvm::CodeGenFileType type,
                         const std::vector<const void*>& disabledPasses) {
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;  // LLVM 19's code generator still runs on the legacy pass manager
  auto cannotEmit = [&]() {
    return Error("the " + tm.getTargetTriple().str() + " target machine cannot emit " +
                 (type == llvm::CodeGenFileType::ObjectFile ? "an object file" : "assembly"));
  };
  // What TargetMachine::addPassesToEmitFile builds, with a say in the pass configuration before it adds the passes:
  // instruction selection, the machine passes, then the assembly printer (or object writer).
  auto& codegenTM = static_cast<llvm::LLVMTargetMachine&>(tm);
  auto* moduleInfo = new llvm::MachineModuleInfoWrapperPass(&codegenTM);  // the pass manager owns its passes
  llvm::TargetPassConfig* config = codegenTM.createPassConfig(pm);
  config->setDisableVerify(true);  // as addPassesToEmitFile's default: Target::optimize has verified the module
  for (const void* id : disabledPasses) config->disablePass(id);
  pm.add(config);
  pm.add(moduleInfo);
  if (config->addISelPasses()) throw cannotEmit();
  config->addMachinePasses();
  config->setInitialized();
  if (codegenTM.addAsmPrinter(pm, os, nullptr, type, moduleInfo->getMMI().getContext())) throw cannotEmit();
  pm.add(llvm::createFreeMachineFunctionPass());
  pm.run(m);
  return std::string(out.str());
}

}  // namespace tessera::backends
