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
  // x86's bf16 conversion instructions (vcvtneps2bf16) flush denormals to zero, and a GPU's do not: code generation
  // would use them for any bf16 value it keeps as f32 in a register (a loaded bf16 stored again), so the results
  // would depend on the host CPU. Without them it calls __truncsfbf2 (BFloat16Libcalls.h), which keeps denormals.
  if (machine->getTargetTriple().isX86())
    for (const char* feature : {"avx512bf16", "avxneconvert"}) machine->getFeatures().AddFeature(feature, false);
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
