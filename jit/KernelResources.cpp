#include "jit/KernelResources.h"

#include "backends/Target.h"
#include "ir/Error.h"
#include "jit/PtxasUsage.h"

namespace tessera::jit {

std::optional<int64_t> KernelResources::figure(const std::string& name) const {
  for (const auto& [key, value] : figures)
    if (key == name) return value;
  return std::nullopt;
}

KernelResources kernelResources(const CompiledKernel& kernel, const std::string& ptxasPath) {
  KernelResources r;
  if (kernel.format == "ptx") {
    const std::optional<std::string> ptxas = findPtxas(ptxasPath);
    if (!ptxas)
      throw Error("kernel '" + kernel.name + "': the registers and spills of PTX are ptxas's to decide, and no ptxas "
                  "was found (install the CUDA toolkit, or set TESSERA_PTXAS)");
    const PtxasUsage usage = ptxasUsage(*ptxas, kernel.binary, kernel.arch, kernel.name);
    r.source = "ptxas -v (" + *ptxas + ")";
    r.figures = {{"registers", usage.registers},
                 {"spill_store_bytes", usage.spillStoreBytes},
                 {"spill_load_bytes", usage.spillLoadBytes},
                 {"stack_bytes", usage.stackBytes},
                 {"static_shared_bytes", usage.staticSharedBytes}};
    return r;
  }
  if (!kernel.target.empty()) r.figures = backends::createTarget(kernel.target)->artifactResources(kernel.binary, kernel.name);
  if (r.figures.empty())
    throw Error("kernel '" + kernel.name + "': its " + (kernel.format.empty() ? "artifact" : kernel.format) +
                " records no register figures");
  r.source = "code object metadata";
  return r;
}

}  // namespace tessera::jit
