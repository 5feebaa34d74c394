// LLVM's code generator, as every target runs it on an optimized module: assembly text or an object file.
#pragma once

#include <string>

#include <llvm/Support/CodeGen.h>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::backends {

// Runs the target machine's code generator over `m` (which it rewrites) and returns the file it writes.
std::string generateCode(llvm::Module& m, llvm::TargetMachine& tm, llvm::CodeGenFileType type);

}  // namespace tessera::backends
