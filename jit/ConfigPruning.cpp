#include "jit/ConfigPruning.h"

#include "backends/Target.h"
#include "jit/PtxasUsage.h"

namespace tessera::jit {

std::optional<int64_t> knownSharedMemoryLimit(const std::string& target, const std::string& arch) {
  if (target != "nvptx" && target != "amdgpu") return std::nullopt;
  const int64_t limit = backends::createTarget(target)->maxSharedBytes(arch);
  return limit > 0 ? std::optional<int64_t>(limit) : std::nullopt;
}

std::string pruneReason(const CompiledKernel& kernel, const PruneChecks& checks) {
  auto sharedReason = [&](int64_t shared) {
    return checks.maxSharedBytes && shared > *checks.maxSharedBytes
               ? "needs " + std::to_string(shared) + " B of shared memory, the GPU gives " +
                     std::to_string(*checks.maxSharedBytes) + " B per block"
               : std::string();
  };
  // The kernel's own figure first: it costs nothing, and ptxas is slow on the huge tiles it rules out.
  if (std::string reason = sharedReason(kernel.sharedBytes); !reason.empty()) return reason;
  // An artifact that records its spills (an AMDGPU code object) says so itself, at no cost.
  if (kernel.format != "ptx")
    return kernel.target.empty() ? "" : backends::createTarget(kernel.target)->spillReport(kernel.binary, kernel.name);
  if (!checks.ptxas) return "";
  const PtxasUsage usage = ptxasUsage(*checks.ptxas, kernel.binary, kernel.arch, kernel.name);
  if (std::string reason = sharedReason(kernel.sharedBytes + usage.staticSharedBytes); !reason.empty()) return reason;
  if (usage.spillStoreBytes > 0 || usage.spillLoadBytes > 0)
    return "spills registers (ptxas -v: " + std::to_string(usage.registers) + " registers, " +
           std::to_string(usage.spillStoreBytes) + " B spill stores, " + std::to_string(usage.spillLoadBytes) +
           " B spill loads)";
  return "";
}

std::string localMemoryPruneReason(int localBytesPerThread) {
  if (localBytesPerThread <= 0) return "";
  return "uses " + std::to_string(localBytesPerThread) + " B of local memory per thread (register spills; driver "
         "attribute LOCAL_SIZE_BYTES)";
}

}  // namespace tessera::jit
