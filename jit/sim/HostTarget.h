// The machine the emulator compiles rewritten kernels for: this process's own CPU. LLVM's native target is the
// only one initialized here (the GPU targets initialize themselves in backends/).
#pragma once

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/DataLayout.h>

namespace tessera::sim {

// Detects the host (triple, CPU and its features); throws tessera::Error when LLVM has no target for it.
llvm::orc::JITTargetMachineBuilder hostMachine();
// The host data layout; every address space not named in it gets address space 0's 64-bit pointers.
const llvm::DataLayout& hostDataLayout();

}  // namespace tessera::sim
