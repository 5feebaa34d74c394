// One LLVM target machine per thread and configuration, reused by every compile on that thread.
//
// Creating a target machine (its subtarget, its MC layer, its pass configuration) cost as much as a third of the
// lowering of a small kernel, and each compile created three: one for the data layout of the lowered module, one
// for the optimization pipeline, one for the code generator. A target machine keeps no state between modules that
// changes the code it generates, so all three stages of every compile can share one. Per thread, because one
// target machine must not generate code for two modules at once (the autotuner compiles in parallel).
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace llvm {
class TargetMachine;
}  // namespace llvm

namespace tessera::backends {

// The calling thread's target machine for `key` (the triple, arch, features and options that `create` uses),
// created by `create` on the first request.
llvm::TargetMachine& cachedTargetMachine(const std::string& key,
                                         const std::function<std::unique_ptr<llvm::TargetMachine>()>& create);

}  // namespace tessera::backends
