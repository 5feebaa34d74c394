// The rewriting step of the emulator (docs/Sim.md): the optimized LLVM module of an NVPTX or AMDGPU
// kernel (the module the target turns into PTX or a code object) becomes a host module in which every GPU
// operation, and every global and shared memory access, is a call of a SimABI.h runtime function with a site,
// plus an entry point taking CUDA-style parameters. HostJit compiles the result.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jit/sim/SimABI.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tessera::sim {

struct HostModule {
  HostModule();
  HostModule(HostModule&&) noexcept;
  HostModule& operator=(HostModule&&) noexcept;
  ~HostModule();

  std::unique_ptr<llvm::LLVMContext> context;  // owns `module` (declared first: destroyed last)
  std::unique_ptr<llvm::Module> module;        // for this host; GPU operations call __tsim_* functions
  std::string target;                          // "nvptx" or "amdgpu": what the GPU module was compiled for
  std::string kernel;                          // the kernel's name
  std::string entry;                           // "<kernel>.tsim_entry", a void(void** params): params[i] points
                                               // at argument i's value, as in cuLaunchKernel
  SiteTable sites;                             // indexed by the `site` argument of the runtime calls
  std::vector<uint32_t> pointerParameters;     // the kernel's pointer parameters, by index: their buffers are
                                               // the memory a launch may touch (a descriptor's: its base,
                                               // the first 8 of its bytes)
  std::vector<std::pair<uint32_t, uint64_t>> byValueParameters;  // (index, bytes) of the aggregates passed by
                                               // value (descriptors): the kernel reads them where params[i] points
  std::vector<std::string> printfFormats;      // amdgpu: the module's llvm.printf.fmts strings, in order
};

// Rewrites the GPU module printed in `gpuModuleText` (CompiledKernel::optimizedLLVMIR); `name` says where the
// text came from in parse errors. Throws tessera::Error for a module the emulator cannot run, naming the kernel,
// the intrinsic, function or inline asm, and the author's source location when the module has it.
HostModule rewriteForHost(const std::string& gpuModuleText, const std::string& name = "<gpu module>");
// The same for a module in memory (copied into the result's own context; `gpuModule` is not modified).
HostModule rewriteForHost(const llvm::Module& gpuModule);

// One line per site: "site 3: load global 16 bytes align 16, op 'load' at file:line:column: <instruction>".
std::string formatSiteTable(const SiteTable& sites);

}  // namespace tessera::sim
