#include "jit/sim/runtime/RegisterCounts.h"

#include <algorithm>

namespace tessera::sim {

namespace {
constexpr uint32_t kWarpsPerGroup = 4;
}

void RegisterCounts::beginProgram(uint32_t threads, uint32_t warps, uint32_t warpSize) {
  warpSize_ = warpSize;
  current_.assign(threads, 0);
  executed_.assign(threads, 0);
  reported_.assign(warps, 0);
  byGroup_.assign((warps + kWarpsPerGroup - 1) / kWarpsPerGroup, {});
}

const RegisterCounts::Execution& RegisterCounts::join(uint32_t thread, const Execution& e) {
  std::vector<Execution>& group = byGroup_[thread / warpSize_ / kWarpsPerGroup];
  const uint32_t index = executed_[thread]++;
  if (index == group.size()) group.push_back(e);
  return group[index];
}

bool RegisterCounts::firstReportOfWarp(uint32_t thread) {
  uint32_t& reported = reported_[thread / warpSize_];
  const uint32_t execution = executed_[thread];
  if (reported >= execution) return false;
  reported = execution;
  return true;
}

}  // namespace tessera::sim
