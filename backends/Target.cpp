#include "backends/Target.h"

#include "backends/nvptx/NVPTXTarget.h"
#include "ir/Error.h"

namespace tessera::backends {

std::unique_ptr<Target> createTarget(const std::string& name) {
  if (name == "nvptx") return std::make_unique<nvptx::NVPTXTarget>();
  throw Error("unknown target '" + name + "' (known: nvptx)");
}

}  // namespace tessera::backends
