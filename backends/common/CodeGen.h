// LLVM's code generator, as every target runs it on an optimized module: assembly text or an object file.
#pragma once

#include <string>
#include <vector>

#include <llvm/Support/CodeGen.h>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::backends {

// Runs the target machine's code generator over `m` (which it rewrites) and returns the file it writes, leaving
// out the passes `disabledPasses` names (LLVM pass IDs such as &llvm::MachineCSEID, everywhere the target's
// pipeline adds them; what `llc -disable-machine-cse` does, for this compile only).
std::string generateCode(llvm::Module& m, llvm::TargetMachine& tm, llvm::CodeGenFileType type,
                         const std::vector<const void*>& disabledPasses = {});

}  // namespace tessera::backends
