// Autotuning: picks, per launch key, the fastest of a kernel's configs (jit/TuneConfig.h), as Triton's
// @triton.autotune does, and remembers it on disk. For a key seen for the first time:
//   1. every config is compiled in parallel (jit/ParallelFor.h) and those that cannot run well are pruned before
//      any launch (jit/ConfigPruning.h: shared memory, spills);
//   2. the rest are benchmarked one after another (jit/KernelTimer.h), and the fastest wins (ties: the earlier);
//   3. the winner is kept in memory and on disk (jit/TuningCache.h), keyed by the kernel, the configs, the key's
//      values, the GPU and the compiler, so that later processes skip 1 and 2.
// A fixed config (AutotuneOptions::fixedConfig, or TESSERA_AUTOTUNE_CONFIG=<index>) skips all of it: tests and CI
// get the same config everywhere. The core here is independent of how configs compile and run (TuningHooks);
// AutotunedKernel (jit/AutotunedKernel.h) and the Python binding plug in the JIT.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "jit/DescriptorBlocks.h"
#include "jit/TuneConfig.h"
#include "jit/TuningCache.h"
#include "tessera/Kernel.h"

namespace tessera::jit {

// The values of the key's launch arguments, in key order, as text: {{"M", "4096"}, {"dtype", "float16"}}.
using TuningKey = std::vector<std::pair<std::string, std::string>>;

// TESSERA_AUTOTUNE_CONFIG as a config index; nullopt when unset. Throws for anything but a non-negative integer.
std::optional<size_t> fixedConfigFromEnvironment();

struct AutotuneOptions {
  std::filesystem::path cacheDirectory = TuningCache::defaultDirectory();  // empty: memory only
  DescriptorBlocks descriptorBlocks;           // descriptor arguments re-blocked per config (jit/DescriptorBlocks.h)
  std::optional<size_t> fixedConfig = fixedConfigFromEnvironment();
  unsigned compileThreads = 0;                 // 0: defaultCompileThreads()
  std::ostream* progress = nullptr;            // null: defaultProgressStream() (stderr on a terminal)
  bool quiet = false;                          // no progress at all
};

// How configs are made ready and timed, by index into the config list.
struct TuningHooks {
  // Compiles config i and says why it must not run ("" when it may). Called from several threads at once.
  std::function<std::string(size_t)> prepare;
  // Launches config i and returns its time in milliseconds. Called from the tuning thread, one at a time.
  std::function<double(size_t)> benchmark;
  // Why configs cannot be timed here (no clock); when set, tuning fails with it before compiling anything.
  std::string cannotBenchmark;
};

struct ConfigOutcome {
  std::string rejected;       // why it was pruned or failed; empty when it ran
  std::optional<double> ms;   // its time, when benchmarked
};

struct TuningReport {
  enum class Source { Benchmarked, Cached, Fixed };
  std::string key;                     // "M=4096, N=4096, K=4096"
  size_t winner = 0;
  Source source = Source::Benchmarked;
  std::vector<ConfigOutcome> outcomes;  // per config, when benchmarked
};

class Autotuner {
 public:
  // Throws tessera::Error for invalid configs (validateTuneConfigs), an empty key list, a key that names no
  // parameter of `def`, or a fixed index past the list.
  Autotuner(const KernelDef& def, std::vector<TuneConfig> configs, std::vector<std::string> keyNames,
            AutotuneOptions options = {});

  // The winning config's index for `key` on `device` (its identity: name, driver, arch). Tunes on the first use
  // of the pair in this process unless the disk has the answer. Throws tessera::Error listing every config's
  // reason when none could run.
  size_t select(const TuningKey& key, const std::string& device, const TuningHooks& hooks);

  const std::vector<TuneConfig>& configs() const { return configs_; }
  const DescriptorBlocks& descriptorBlocks() const { return options_.descriptorBlocks; }
  const std::vector<std::string>& keyNames() const { return keyNames_; }
  const std::string& kernelName() const { return kernelName_; }
  std::optional<TuningReport> lastReport() const;

 private:
  size_t tune(const std::string& keyText, const std::string& cacheKey, const TuningHooks& hooks);

  std::string kernelName_;
  std::string kernelIdentity_;  // name and parameter types: part of the disk key
  std::vector<TuneConfig> configs_;
  std::vector<std::string> keyNames_;
  AutotuneOptions options_;
  TuningCache cache_;
  mutable std::mutex mutex_;
  std::map<std::string, size_t> chosen_;  // by disk key
  std::optional<TuningReport> lastReport_;
};

}  // namespace tessera::jit
