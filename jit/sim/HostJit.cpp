#include "jit/sim/HostJit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "backends/common/DebugLocations.h"
#include "backends/common/OptimizeModule.h"
#include "ir/Error.h"
#include "jit/sim/BFloat16Libcalls.h"
#include "jit/sim/HostTarget.h"

namespace tessera::sim {

namespace {

llvm::CodeGenOptLevel codeGenLevel(HostOptLevel level) {
  switch (level) {
    case HostOptLevel::O0: return llvm::CodeGenOptLevel::None;
    case HostOptLevel::O1: return llvm::CodeGenOptLevel::Less;
    case HostOptLevel::O2: return llvm::CodeGenOptLevel::Default;
  }
  return llvm::CodeGenOptLevel::Default;
}

}  // namespace

HostJit::HostJit(HostModule host, const RuntimeSymbols& runtime, HostOptLevel level)
    : kernel_(host.kernel),
      target_(host.target),
      sites_(std::move(host.sites)),
      pointerParameters_(std::move(host.pointerParameters)),
      byValueParameters_(std::move(host.byValueParameters)),
      printfFormats_(std::move(host.printfFormats)) {
  auto failure = [&](const std::string& why) {
    return Error("sim: compiling kernel '" + kernel_ + "' (" + target_ + ") for the host failed: " + why);
  };
  llvm::orc::JITTargetMachineBuilder machine = hostMachine();
  machine.setCodeGenOptLevel(codeGenLevel(level));
  // The sites carry every source location the runtime reports; the host code needs no debug info.
  backends::stripSourceLocations(*host.module);
  if (level != HostOptLevel::O0) {
    llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = machine.createTargetMachine();
    if (!tm) throw failure(llvm::toString(tm.takeError()));
    backends::optimizeModule(*host.module, **tm,
                             level == HostOptLevel::O2 ? llvm::OptimizationLevel::O2 : llvm::OptimizationLevel::O1);
  }

  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(machine)).create();
  if (!jit) throw failure(llvm::toString(jit.takeError()));
  jit_ = std::move(*jit);
  // The session reports some failures (unresolved symbols) on its own channel before the lookup fails.
  auto sessionErrors = std::make_shared<std::string>();
  jit_->getExecutionSession().setErrorReporter(
      [sessionErrors](llvm::Error e) { *sessionErrors += llvm::toString(std::move(e)) + "; "; });

  llvm::orc::JITDylib& main = jit_->getMainJITDylib();
  llvm::orc::SymbolMap symbols;
  // The runtime's functions, and the bf16 conversions code generation may call (BFloat16Libcalls.h).
  for (const RuntimeSymbols* table : {&runtime, &bfloat16Libcalls()})
    for (const auto& [name, address] : *table)
      symbols[jit_->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                              llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  if (llvm::Error e = main.define(llvm::orc::absoluteSymbols(std::move(symbols))))
    throw failure(llvm::toString(std::move(e)));
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit_->getDataLayout().getGlobalPrefix(),
      [](const llvm::orc::SymbolStringPtr& name) { return !(*name).starts_with("__tsim_"); });
  if (!process) throw failure(llvm::toString(process.takeError()));
  main.addGenerator(std::move(*process));

  if (llvm::Error e = jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(host.module), std::move(host.context))))
    throw failure(llvm::toString(std::move(e)));
  llvm::Expected<llvm::orc::ExecutorAddr> address = jit_->lookup(host.entry);
  if (!address) throw failure(*sessionErrors + llvm::toString(address.takeError()));
  entry_ = address->toPtr<Entry>();
}

HostJit::~HostJit() = default;

}  // namespace tessera::sim
