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

  // Clusters (Program::clusterDims, which divide the grid): cluster c is at (c mod nx, c / nx mod ny, ...) in the
  // grid of clusters, and its program of rank r (x + cx * (y + cy * z) within the cluster) has program id
  // cluster * clusterDims + (x, y, z), as PTX's %clusterid, %cluster_ctaid and %cluster_ctarank say.
  uint32_t clusterSize() const { return program.clusterDims[0] * program.clusterDims[1] * program.clusterDims[2]; }
  std::array<uint32_t, 3> clusterGrid() const {
    return {grid[0] / program.clusterDims[0], grid[1] / program.clusterDims[1], grid[2] / program.clusterDims[2]};
  }
  uint64_t clusters() const {
    std::array<uint32_t, 3> n = clusterGrid();
    return uint64_t{n[0]} * n[1] * n[2];
  }
  uint64_t programOf(uint64_t cluster, uint32_t rank) const {
    const std::array<uint32_t, 3>& c = program.clusterDims;
    std::array<uint32_t, 3> n = clusterGrid();
    uint64_t x = cluster % n[0] * c[0] + rank % c[0];
    uint64_t y = cluster / n[0] % n[1] * c[1] + rank / c[0] % c[1];
    uint64_t z = cluster / n[0] / n[1] * c[2] + rank / c[0] / c[1];
    return x + grid[0] * (y + grid[1] * z);
  }
};

}  // namespace tessera::sim
