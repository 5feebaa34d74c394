#include "backends/nvptx/SharedMemoryLimits.h"

namespace tessera::backends::nvptx {

std::optional<SharedMemoryLimits> sharedMemoryLimits(const std::string& arch) {
  // sm_80 as an A100 (sm_87's Orin is the same); sm_86 and sm_89 as the GeForce parts; sm_90 as an H100.
  if (arch == "sm_80") return SharedMemoryLimits{167936, 166912};
  if (arch == "sm_86" || arch == "sm_89") return SharedMemoryLimits{102400, 101376};
  if (arch == "sm_90" || arch == "sm_90a") return SharedMemoryLimits{233472, 232448};
  return std::nullopt;
}

}  // namespace tessera::backends::nvptx
