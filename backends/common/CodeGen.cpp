#include "backends/common/CodeGen.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "ir/Error.h"

namespace tessera::backends {

std::string generateCode(llvm::Module& m, llvm::TargetMachine& tm, llvm::CodeGenFileType type) {
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;  // LLVM 19's code generator still runs on the legacy pass manager
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    throw Error("the " + tm.getTargetTriple().str() + " target machine cannot emit " +
                (type == llvm::CodeGenFileType::ObjectFile ? "an object file" : "assembly"));
  pm.run(m);
  return std::string(out.str());
}

}  // namespace tessera::backends
