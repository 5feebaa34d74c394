#include "backends/Target.h"

#include "backends/amdgpu/AMDGPUTarget.h"
#include "backends/nvptx/NVPTXTarget.h"
#include "ir/Error.h"

namespace tessera::backends {

std::unique_ptr<Target> createTarget(const std::string& name) {
  if (name == "nvptx") return std::make_unique<nvptx::NVPTXTarget>();
  if (name == "amdgpu") return std::make_unique<amdgpu::AMDGPUTarget>();
  throw Error("unknown target '" + name + "' (known: nvptx, amdgpu)");
}

}  // namespace tessera::backends
