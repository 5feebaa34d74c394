// Why an autotune config should never be launched, decided from its compiled kernel before any launch: it needs
// more shared memory per block than the GPU gives, or it spills registers (ptxas -v where ptxas is installed; the
// driver's local-memory attribute once loaded on a CUDA GPU; an AMDGPU code object's own metadata, always).
// Triton finds the first only when a launch fails.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "jit/CompiledKernel.h"

namespace tessera::jit {

struct PruneChecks {
  std::optional<int64_t> maxSharedBytes;  // per block; none: not checked
  std::optional<std::string> ptxas;       // ptxas to ask about PTX kernels' spills; none: not asked
};

// The opt-in shared memory per block of known GPUs (for tuning without one: the emulator, compile-only); nullopt
// for an arch this table does not know.
std::optional<int64_t> knownSharedMemoryLimit(const std::string& target, const std::string& arch);

// Empty when the kernel may run; else the reason, e.g. "needs 196608 B of shared memory, the GPU gives 166912 B".
// Throws when ptxas fails on the PTX (the caller reports it as that config's failure).
std::string pruneReason(const CompiledKernel& kernel, const PruneChecks& checks);

// The same for the driver's report of a loaded kernel's local memory per thread (spills, local arrays).
std::string localMemoryPruneReason(int localBytesPerThread);

}  // namespace tessera::jit
