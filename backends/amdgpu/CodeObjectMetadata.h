// What an AMDGPU code object says its kernel uses: the "amdhsa.kernels" map of the metadata note LLVM writes into
// every HSA code object (NT_AMDGPU_METADATA, msgpack). No GPU and no ROCm tool are needed to read it: the
// autotuner prunes configurations that spill with it (jit/ConfigPruning.h), benchmarks/amdgpu_resources prints it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tessera::backends::amdgpu {

// Each field is absent where the metadata lacks it (.agpr_count exists on gfx90a and later only).
struct KernelResourceUsage {
  std::optional<int64_t> vgprs;         // .vgpr_count
  std::optional<int64_t> agprs;         // .agpr_count
  std::optional<int64_t> vgprSpills;    // .vgpr_spill_count: VGPRs spilled to scratch memory
  std::optional<int64_t> sgprs;         // .sgpr_count
  std::optional<int64_t> sgprSpills;    // .sgpr_spill_count: SGPRs spilled (to VGPR lanes first)
  std::optional<int64_t> ldsBytes;      // .group_segment_fixed_size
  std::optional<int64_t> scratchBytes;  // .private_segment_fixed_size: scratch per work-item (spills, arrays)
};

// The first kernel's usage in `codeObject` (an ELF from AMDGPUTarget::emit). Throws tessera::Error naming
// `kernelName` when it is not a 64-bit ELF or carries no such metadata.
KernelResourceUsage codeObjectResources(const std::string& codeObject, const std::string& kernelName);

}  // namespace tessera::backends::amdgpu
