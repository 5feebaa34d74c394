// A JitKernel launched through an Autotuner (jit/Autotuner.h): each launch looks up the best config for its key
// values, tuning on first use, and launches with it.
//
//   tessera::jit::AutotunedKernel mm(tessera::kernels::matmul_kernel(),
//       {{{{"BM", 128}, {"BN", 128}, {"BK", 64}}, 8}, {{{"BM", 64}, {"BN", 64}, {"BK", 32}}, 4}}, {"M", "N", "K"});
//   mm.launch([&](const TuneConfig& c) { return LaunchGrid{cdiv(M, bm(c)) * cdiv(N, bn(c)), 1, 1}; },
//             {a, b, c, M, N, K, ...}, {{"GROUP_M", 8}});
//
// On a CUDA or AMD GPU the configs are timed with the API's events (DeviceRuntime::makeTimingClock,
// jit/KernelTimer.h). The emulator (LaunchOptions::runtime) has no meaningful clock: setTimer() gives the tuner
// one (tests use fakes).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jit/Autotuner.h"
#include "jit/ConfigPruning.h"
#include "jit/JitKernel.h"
#include "jit/KernelTimer.h"

namespace tessera::jit {

// The GPU a tuning is for: its identity in the tuning cache, and how configs are pruned for it.
struct TuningDevice {
  std::string identity;        // "NVIDIA H100 80GB HBM3, CUDA driver 12040, sm_90a"; "sim nvptx sm_90a"
  PruneChecks checks;
  bool inspectLoaded = false;  // also load each config and prune on the driver's local-memory attribute (CUDA)
};
// For launches on `runtime` (null: compiling for `target` and `arch` with no device, as the interpreter does).
TuningDevice tuningDeviceFor(DeviceRuntime* runtime, const std::string& target, const std::string& arch);

// TuningHooks::prepare over the JIT: compiles config i for this launch (its constants on top of `constants`, its
// options on `resolved`, its descriptor blocks from `blocks`) and prunes it for `device`. Shared by
// AutotunedKernel and the Python binding.
std::function<std::string(size_t)> compileAndPrune(JitKernel& jit, const std::vector<TuneConfig>& configs,
                                                   const std::vector<KernelArg>& args, const Constants& constants,
                                                   const LaunchOptions& resolved, const TuningDevice& device,
                                                   const DescriptorBlocks& blocks = {});

// The key's values among a launch's runtime arguments and Const values. Throws for a pointer (its element type
// is fixed by the kernel's signature, already part of the tuning cache key: key on sizes and Consts).
TuningKey tuningKeyFor(const KernelDef& def, const std::vector<std::string>& keyNames,
                       const std::vector<KernelArg>& args, const Constants& constants);

using ConfigGrid = std::function<LaunchGrid(const TuneConfig&)>;

class AutotunedKernel {
 public:
  AutotunedKernel(KernelDef def, std::vector<TuneConfig> configs, std::vector<std::string> keyNames,
                  AutotuneOptions options = {}, KernelCache& cache = KernelCache::global());

  // Picks this launch's config (tuning when its key is new) and launches it. `constants` are the Consts the
  // configs leave out; `options` the launch's target, runtime, stream (its num_warps comes from the config).
  void launch(const ConfigGrid& grid, const std::vector<KernelArg>& args, const Constants& constants = {},
              const LaunchOptions& options = {});
  // The config `launch` would use, tuning as it would, without the final launch.
  const TuneConfig& select(const ConfigGrid& grid, const std::vector<KernelArg>& args, const Constants& constants = {},
                           const LaunchOptions& options = {});

  // Times benchmark launches (null: the GPU runtime's events, an error where it has none).
  void setTimer(std::shared_ptr<KernelTimer> timer) { timer_ = std::move(timer); }
  // The config the last launch or select used.
  std::optional<TuneConfig> bestConfig() const;
  Autotuner& tuner() { return tuner_; }
  JitKernel& jit() { return jit_; }

 private:
  KernelTimer* timerFor(DeviceRuntime& runtime);  // null where there is none

  JitKernel jit_;
  Autotuner tuner_;
  std::shared_ptr<KernelTimer> timer_;
  // Each GPU runtime's event clock, made on its first tuning (null for runtimes without one), by instanceId.
  std::map<uint64_t, std::unique_ptr<KernelTimer>> deviceTimers_;
  std::optional<size_t> best_;
};

}  // namespace tessera::jit
