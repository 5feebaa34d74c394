// What a compiled kernel uses, as the tool that decides it says: `ptxas -v` for PTX (where ptxas is installed), the
// code object's own metadata for AMDGPU. Triton users read n_regs and n_spills; here each figure keeps its tool's
// name and meaning (a PTX spill is bytes stored and loaded, an AMDGPU spill a count of registers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jit/CompiledKernel.h"

namespace tessera::jit {

struct KernelResources {
  std::string source;  // "ptxas -v (/usr/local/cuda/bin/ptxas)" or "code object metadata"
  // PTX: "registers", "spill_store_bytes", "spill_load_bytes", "stack_bytes" (per thread), "static_shared_bytes".
  // AMDGPU: Target::artifactResources' figures.
  std::vector<std::pair<std::string, int64_t>> figures;

  std::optional<int64_t> figure(const std::string& name) const;
};

// `ptxasPath` as findPtxas takes it (empty: $TESSERA_PTXAS, the CUDA toolkit's, $PATH's). Throws tessera::Error
// naming the kernel when the figures cannot be had: a PTX kernel where no ptxas is installed, ptxas failing on it,
// an artifact that records none.
KernelResources kernelResources(const CompiledKernel& kernel, const std::string& ptxasPath = "");

}  // namespace tessera::jit
