#include "jit/sim/HostTarget.h"

#include <mutex>

#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>

#include "ir/Error.h"

namespace tessera::sim {

llvm::orc::JITTargetMachineBuilder hostMachine() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> machine = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machine) throw Error("sim: LLVM cannot compile for this host: " + llvm::toString(machine.takeError()));
  return std::move(*machine);
}

const llvm::DataLayout& hostDataLayout() {
  static const llvm::DataLayout layout = [] {
    llvm::Expected<llvm::DataLayout> dl = hostMachine().getDefaultDataLayoutForTarget();
    if (!dl) throw Error("sim: no data layout for this host: " + llvm::toString(dl.takeError()));
    return std::move(*dl);
  }();
  return layout;
}

}  // namespace tessera::sim
