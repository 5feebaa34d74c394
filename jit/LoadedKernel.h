// A compiled kernel loaded into the GPU: owns the CUDA module, knows how to pack arguments for the kernel's
// parameters (the tile-IR function's arguments, in order: pointers as 64-bit addresses, i1 as a byte, other
// scalars in their own width) and launches it with numWarps * warpSize threads and sharedBytes of dynamic
// shared memory, raising the kernel's dynamic shared-memory limit first when it needs more than 48 KB.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "ir/Types.h"
#include "jit/CompiledKernel.h"
#include "jit/CudaDriver.h"
#include "jit/KernelArg.h"

namespace tessera::jit {

using LaunchGrid = std::array<int64_t, 3>;

class LoadedKernel {
 public:
  // `paramTypes`: the kernel function's argument types (scalars and pointers).
  LoadedKernel(std::shared_ptr<const CompiledKernel> kernel, std::vector<ir::Type> paramTypes,
               CudaDriver& driver = CudaDriver::instance());
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  // Enqueues one launch on `stream` (asynchronous: synchronize the stream to wait and to see faults).
  void launch(const LaunchGrid& grid, const std::vector<KernelArg>& args, cu::Stream stream = nullptr);

  const CompiledKernel& compiled() const { return *kernel_; }
  int registersPerThread() const;
  int localBytesPerThread() const;  // spills and local arrays; 0 for a well-compiled kernel

 private:
  std::shared_ptr<const CompiledKernel> kernel_;
  std::vector<ir::Type> paramTypes_;
  CudaDriver& driver_;
  cu::Module module_ = nullptr;
  cu::Function function_ = nullptr;
};

// The bytes one kernel parameter of type `t` receives for `arg` (exposed for tests). Throws tessera::Error
// when the kinds do not match.
std::vector<uint8_t> packKernelArgument(ir::Type t, const KernelArg& arg, const std::string& kernelName, size_t index);

}  // namespace tessera::jit
