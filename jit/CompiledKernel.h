// The result of compiling one specialized kernel: the loadable artifact plus everything needed to launch it
// and to inspect how it was produced. Plain data, so the cache can store and reload it byte for byte.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tessera::jit {

struct CompiledKernel {
  std::string name;         // the kernel's (function's) name: the symbol to look up in the loaded module
  std::string target;       // "nvptx", "amdgpu"
  std::string arch;         // "sm_90a", "gfx942", ...
  std::string format;       // "ptx" or "hsaco"
  int numWarps = 0;
  int warpSize = 0;
  int64_t sharedBytes = 0;  // dynamic shared memory the launch must provide (function attribute smem_bytes)
  std::string binary;       // PTX text or code-object bytes
  std::string llvmIR;       // LLVM IR as lowered, before LLVM's optimizations
  std::string optimizedLLVMIR;  // LLVM IR after Target::optimize: the module Target::emit turned into `binary`
  std::vector<std::pair<std::string, std::string>> irAfterPass;  // (stage, tile IR text), in pipeline order
  // The runtime parameters whose tensor descriptor carries a TMA tensor map the launch must encode, and the
  // swizzle (0, 32, 64 or 128 bytes) the kernel's shared buffers expect of it.
  std::vector<std::pair<unsigned, int>> tensorMaps;  // (parameter, swizzle bytes)

  int threadsPerProgram() const { return numWarps * warpSize; }
  bool operator==(const CompiledKernel&) const = default;
};

}  // namespace tessera::jit
