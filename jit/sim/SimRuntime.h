// The emulator as a jit::DeviceRuntime (docs/Sim.md): kernels compile for the emulated GPU target exactly as for a
// device (same pipeline, cache and specialization), and loading one rewrites its optimized LLVM module into host
// code (HostModule) and compiles that (HostJit); launches run it with sim::launch. Device memory is host memory;
// each allocation is registered, and a launch lets the kernel touch the allocations its pointer arguments point
// into. A launch whose checks find something throws tessera::Error naming the kernel, program, thread and the
// author's file:line; the last launch's report stays available either way.
//
// The emulated target is chosen by arch: nvptx sm_90a (the default) or sm_80, amdgpu gfx90a or gfx942.
// jit::selectRuntime("sim") is the sm_90a instance with every check on; simRuntime(arch, checks) gives any of them.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jit/DeviceRuntime.h"
#include "jit/sim/runtime/Checks.h"
#include "jit/sim/runtime/Report.h"

namespace tessera::sim {

class SimRuntime final : public jit::DeviceRuntime {
 public:
  // Throws tessera::Error for an arch the emulator does not model.
  explicit SimRuntime(const std::string& arch);
  ~SimRuntime() override;

  std::string target() const override { return target_; }  // the emulated target: "nvptx" or "amdgpu"
  std::string apiName() const override { return "sim"; }
  std::string binaryFormat() const override { return target_ == "nvptx" ? "ptx" : "hsaco"; }
  bool available() const override { return true; }
  std::string unavailableReason() const override { return ""; }
  std::string nativeArch() const override { return arch_; }

  jit::DeviceAddress allocate(size_t bytes) override;
  void release(jit::DeviceAddress p) noexcept override;
  void copyToDevice(jit::DeviceAddress dst, const void* src, size_t bytes) override;
  void copyToHost(void* dst, jit::DeviceAddress src, size_t bytes) override;
  void synchronize(jit::DeviceStream, const std::string&) override {}  // launches run to completion

  jit::DeviceModule loadModule(const jit::CompiledKernel& kernel) override;
  bool loadsLLVMIR() const override { return true; }
  void unloadModule(jit::DeviceModule m) noexcept override;
  jit::DeviceFunction getFunction(jit::DeviceModule m, const std::string& kernelName) override;

  // The shared-memory size comes with the compiled kernel (loadModule), as for a static LDS size.
  bool launchesWithDynamicSharedMemory() const override { return false; }
  void raiseSharedMemoryLimit(jit::DeviceFunction, int64_t, const std::string&) override {}
  int registersPerThread(jit::DeviceFunction, const std::string& kernelName) override;
  int localBytesPerThread(jit::DeviceFunction, const std::string& kernelName) override;

  // The emulated GPU's multiprocessors (setMultiprocessors, else the arch's flagship: 132 for sm_90a as an H100
  // SXM, 108 for sm_80 as an A100, 110 for gfx90a as an MI250X die, 304 for gfx942 as an MI300X) times the
  // programs one holds by its threads (2048) and shared memory (Target::sharedBytesPerMultiprocessor: 228 KB,
  // 164 KB, 64 KB of LDS). Registers are not modeled (the emulator has no register figures), so this may be more
  // than the GPU would hold.
  int64_t residentPrograms(jit::DeviceFunction f, unsigned threadsPerProgram, int64_t sharedBytes,
                           const std::string& kernelName) override;
  void launch(jit::DeviceFunction f, const unsigned grid[3], const unsigned block[3], unsigned sharedBytes,
              jit::DeviceStream stream, void** params, const std::string& kernelName) override;
  void launchClusters(jit::DeviceFunction f, const unsigned grid[3], const unsigned block[3], const unsigned cluster[3],
                      unsigned sharedBytes, jit::DeviceStream stream, void** params,
                      const std::string& kernelName) override;
  // The emulator's own encoding (runtime/TensorMap.h), which its cp.async.bulk.tensor decodes.
  jit::TensorMapBytes encodeTensorMap(const jit::TensorMapRequest& request, const std::string& kernelName) override;

  // The checks launches run (runtime/Checks.h: all by default; bounds are always checked; counters stay).
  void setChecks(Checks checks) { checks_ = checks; }
  Checks checks() const { return checks_; }
  // Host threads running programs; 0 (the default): the hardware's.
  void setHostThreads(unsigned threads) { hostThreads_ = threads; }
  // The multiprocessors residentPrograms counts; 0 (the default): the arch's flagship GPU's. A test that wants a
  // persistent kernel's programs to loop over several tiles emulates a small GPU.
  void setMultiprocessors(unsigned count) { multiprocessors_ = count; }
  unsigned multiprocessors() const { return multiprocessors_; }
  // The report of the last launch through this runtime (empty before the first).
  std::optional<Report> lastReport() const;
  // The same, leaving none: a caller that takes it before and after a launch knows whether the launch ran.
  std::optional<Report> takeLastReport();

 private:
  // The allocation containing `address`, or null.
  const std::pair<const uint64_t, size_t>* allocationContaining(uint64_t address) const;
  void checkRange(uint64_t address, size_t bytes, const char* what) const;

  std::string arch_, target_;
  Checks checks_;
  unsigned hostThreads_ = 0;
  unsigned multiprocessors_ = 0;
  mutable std::mutex mutex_;
  std::map<uint64_t, size_t> allocations_;  // address -> bytes
  std::optional<Report> lastReport_;
};

// The archs the emulator models, the default first: sm_90a, sm_80 (nvptx), gfx90a, gfx942 (amdgpu).
const std::vector<std::string>& emulatedArchs();

// The arch to emulate for a target and arch either of which may be empty: `arch` when given (its target must be
// `target`, if that is given), else the target's default arch (backends' Target::defaultArch), else sm_90a.
// Throws tessera::Error for an unknown target, an arch the emulator does not model, or a mismatch.
std::string emulatedArch(const std::string& target, const std::string& arch);

// The process-wide runtime emulating `arch` with `checks` (all, none, or a selection; created on first use, never
// changed after).
SimRuntime& simRuntime(const std::string& arch = "sm_90a", Checks checks = true);

}  // namespace tessera::sim
