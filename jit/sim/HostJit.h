// Compiles a rewritten kernel (HostModule) for this machine with ORC's LLJIT and hands back its entry point.
// The kernel's runtime calls resolve to the functions the caller names; nothing else may define a __tsim_
// symbol, so a runtime function the caller forgot is an error here, not a crash at launch.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jit/sim/HostModule.h"

namespace llvm::orc {
class LLJIT;
}  // namespace llvm::orc

namespace tessera::sim {

// The runtime's functions by their SimABI.h names ("__tsim_load" -> &__tsim_load).
using RuntimeSymbols = std::map<std::string, const void*>;

// How much the host compiler optimizes the rewritten kernel (IR pipeline and code generation). O1 is the
// default: benchmarks/sim_host_jit.cpp measured it against O2 (docs/Sim.md).
enum class HostOptLevel { O0, O1, O2 };

class HostJit {
 public:
  using Entry = void (*)(void** params);

  // Compiles `host`. `runtime` must name every __tsim_* function it calls; the other symbols the host code
  // needs (libm's functions for LLVM's math intrinsics, memcpy) come from this process. Throws tessera::Error
  // naming the kernel and the reason (an unresolved symbol included).
  HostJit(HostModule host, const RuntimeSymbols& runtime, HostOptLevel level = HostOptLevel::O1);
  ~HostJit();
  HostJit(const HostJit&) = delete;
  HostJit& operator=(const HostJit&) = delete;

  Entry entry() const { return entry_; }
  const std::string& kernel() const { return kernel_; }
  const std::string& target() const { return target_; }
  const SiteTable& sites() const { return sites_; }
  const std::vector<uint32_t>& pointerParameters() const { return pointerParameters_; }
  const std::vector<std::pair<uint32_t, uint64_t>>& byValueParameters() const { return byValueParameters_; }
  const std::vector<std::string>& printfFormats() const { return printfFormats_; }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::string kernel_, target_;
  SiteTable sites_;
  std::vector<uint32_t> pointerParameters_;
  std::vector<std::pair<uint32_t, uint64_t>> byValueParameters_;
  std::vector<std::string> printfFormats_;
  Entry entry_ = nullptr;
};

}  // namespace tessera::sim
