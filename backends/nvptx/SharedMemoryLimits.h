// The shared memory NVIDIA GPUs give, per arch the NVPTX target compiles for (the CUDA programming guide's
// compute-capability tables): what a multiprocessor holds, and the most one program may opt in to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tessera::backends::nvptx {

struct SharedMemoryLimits {
  int64_t perMultiprocessor;  // bytes
  int64_t perProgram;         // bytes: cudaDevAttrMaxSharedMemoryPerBlockOptin (the driver keeps 1 KB of the rest)
};

// nullopt for an arch the target does not compile for.
std::optional<SharedMemoryLimits> sharedMemoryLimits(const std::string& arch);

}  // namespace tessera::backends::nvptx
