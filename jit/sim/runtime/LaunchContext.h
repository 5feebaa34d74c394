// What every worker of a launch shares, read-only: the program, the configuration, the grid, the parameters and
// the launch's memory.
#pragma once

#include <array>
#include <cstdint>

#include "jit/sim/runtime/AmdKernelBlocks.h"
#include "jit/sim/runtime/GlobalMemoryChecker.h"
#include "jit/sim/runtime/Launch.h"

namespace tessera::sim {

struct LaunchContext {
  const Program& program;
  const LaunchConfig& config;
  std::array<uint32_t, 3> grid;
  void** params;
  const AmdKernelBlocks& amd;
  const GlobalMemoryChecker& global;

  std::array<uint32_t, 3> programId(uint64_t index) const {
    return {static_cast<uint32_t>(index % grid[0]), static_cast<uint32_t>(index / grid[0] % grid[1]),
            static_cast<uint32_t>(index / grid[0] / grid[1])};
  }
};

}  // namespace tessera::sim
