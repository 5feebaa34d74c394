// The gfx arch of the machine's AMD GPUs, read from the amdgpu kernel driver's KFD topology
// (/sys/class/kfd/kfd/topology/nodes/<n>/properties, the same source the ROCm runtime enumerates devices from):
// each GPU node's `gfx_target_version` is major * 10000 + minor * 100 + stepping, and the arch name is
// "gfx" + major + minor and stepping as hex digits (90010 -> gfx90a, 90402 -> gfx942, 110000 -> gfx1100).
// CPU nodes have gfx_target_version 0. This saves HIP launches from needing an explicit arch without relying on
// the HIP version's hipDeviceProp_t layout.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tessera::jit {

inline constexpr const char* kKfdTopologyNodes = "/sys/class/kfd/kfd/topology/nodes";

// "gfx90a" for 90010; nullopt for 0 (a CPU node) or a value that names no arch.
std::optional<std::string> gfxArchName(long long gfxTargetVersion);

// A GPU node: its arch, and its compute units (`simd_count / simd_per_cu`; 0 when the node does not say).
struct KfdGpu {
  std::string arch;
  int computeUnits = 0;
};

// The GPU nodes under `nodes`, in node order (empty when there is no such directory).
std::vector<KfdGpu> kfdGpus(const std::filesystem::path& nodes = kKfdTopologyNodes);
// Their archs.
std::vector<std::string> kfdGpuArchs(const std::filesystem::path& nodes = kKfdTopologyNodes);

}  // namespace tessera::jit
