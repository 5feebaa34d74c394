// A compiled kernel loaded into the GPU through a DeviceRuntime (CUDA or HIP): owns the module, knows how to pack
// arguments for the kernel's parameters (the tile-IR function's arguments, in order: pointers as 64-bit
// addresses, i1 as a byte, other scalars in their own width) and launches it with numWarps * warpSize threads.
// On CUDA the launch passes sharedBytes of dynamic shared memory, raising the kernel's limit first when it needs
// more than 48 KB; on HIP the LDS size is static in the code object.
//
// A persistent kernel (CompiledKernel::persistent) is launched on min(tiles, resident programs) programs, the
// tiles being those of the grid the caller asked for (gx * gy * gz, fewer than 2^31; each extent at least 1, no
// other limit), which it receives as three trailing i32 arguments; the resident programs are counted once, at
// load (DeviceRuntime::residentPrograms).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "ir/Types.h"
#include "jit/CompiledKernel.h"
#include "jit/CudaDriver.h"
#include "jit/DeviceRuntime.h"
#include "jit/KernelArg.h"

namespace tessera::jit {

using LaunchGrid = std::array<int64_t, 3>;

class LoadedKernel {
 public:
  // `paramTypes`: the kernel function's argument types (scalars and pointers).
  LoadedKernel(std::shared_ptr<const CompiledKernel> kernel, std::vector<ir::Type> paramTypes,
               CudaDriver& driver = CudaDriver::instance());
  // Loads through `runtime`, which must outlive this object and load the kernel's binary format.
  LoadedKernel(std::shared_ptr<const CompiledKernel> kernel, std::vector<ir::Type> paramTypes, DeviceRuntime& runtime);
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  // Enqueues one launch on `stream` (asynchronous: synchronize the stream to wait and to see faults).
  void launch(const LaunchGrid& grid, const std::vector<KernelArg>& args, DeviceStream stream = nullptr);

  const CompiledKernel& compiled() const { return *kernel_; }
  int registersPerThread() const;
  int localBytesPerThread() const;  // spills and local arrays; 0 for a well-compiled kernel
  // A persistent kernel's launch: the programs it starts for `grid` (its x extent; y and z are 1). Throws for a
  // kernel that is not persistent.
  LaunchGrid persistentGrid(const LaunchGrid& grid) const;

 private:
  void load();
  int64_t dynamicSharedBytes() const;  // what a launch passes: the kernel's shared bytes on CUDA, 0 on HIP

  std::shared_ptr<const CompiledKernel> kernel_;
  std::vector<ir::Type> paramTypes_;
  std::unique_ptr<DeviceRuntime> ownedRuntime_;  // the CUDA adapter when constructed over a CudaDriver
  DeviceRuntime& runtime_;
  DeviceModule module_ = nullptr;
  DeviceFunction function_ = nullptr;
  int64_t residentPrograms_ = 0;  // persistent kernels only
};

// The bytes one kernel parameter of type `t` receives for `arg` (exposed for tests). Throws tessera::Error
// when the kinds do not match.
std::vector<uint8_t> packKernelArgument(ir::Type t, const KernelArg& arg, const std::string& kernelName, size_t index);

}  // namespace tessera::jit
