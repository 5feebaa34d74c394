// One configuration an autotuner may pick for a kernel: Const values (tile sizes...), the warp count, and any
// other compile option by name ("fast_math", "num_stages", "persistent", "warp_specialize", "ping_pong",
// "matrix_instr_nonkdim"). Options are an open name/value set, so that a new compile option needs one line in
// applyTuneOptions and nothing else in the tuner.
//
//   TuneConfig{{{"BM", 128}, {"BN", 128}, {"BK", 64}}, /*numWarps=*/8}
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "jit/JitKernel.h"
#include "tessera/Kernel.h"

namespace tessera::jit {

struct TuneConfig {
  Constants constants;                     // Const parameters the config sets (the launch gives the others)
  int numWarps = 4;
  std::map<std::string, int64_t> options;  // other compile options by name: see applyTuneOptions

  // "BM=128, BN=128, BK=64, num_warps=8" (options after num_warps, by name): stable, part of the tuning cache key.
  std::string str() const;
  bool operator==(const TuneConfig&) const = default;
};

// The compile options a config may set besides num_warps.
const std::vector<std::string>& tuneOptionNames();

// `base` with the config's warp count and options applied.
LaunchOptions applyTuneOptions(const TuneConfig& config, LaunchOptions base);

// The launch's constants with the config's on top. Throws when both set the same Const.
Constants mergeTuneConstants(const TuneConfig& config, const Constants& launchConstants, const std::string& kernel);

// Throws tessera::Error, naming the kernel and the config, when `configs` is empty, a config sets something that
// is not a Const parameter of `def`, an option the JIT does not know, a warp count that is not a power of two
// from 1 to 32, or repeats an earlier config.
void validateTuneConfigs(const KernelDef& def, const std::vector<TuneConfig>& configs);

}  // namespace tessera::jit
