// The HIP runtime, loaded at run time with dlopen("libamdhip64.so", then "libamdhip64.so.5"). Tessera never
// links it and needs no HIP headers. It loads the HSA code objects the AMDGPU target emits (code object v4, as
// the Debian HIP 5.2 runtime expects) and launches them.
//
// Without the library or without an AMD GPU (the case on every machine this was developed on: nothing here has
// run on AMD hardware), available() is false, unavailableReason() says why, and every other entry point throws
// tessera::Error with that reason. Failing HIP calls throw tessera::Error naming the call, the hipError_t's name
// and description, and the kernel when there is one.
//
// JitKernel launches through this runtime for target "amdgpu" via the DeviceRuntime adapter (jit/DeviceRuntime.h),
// with the same cache, specialization and argument packing (packKernelArgument) as CUDA launches.
// launchKernel below launches a CompiledKernel directly, without a JitKernel.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/Types.h"
#include "jit/CompiledKernel.h"
#include "jit/KernelArg.h"

namespace tessera::jit {

namespace hip {
using Error = int;  // hipError_t
using Module = struct ihipModule_t*;
using Function = struct ihipModuleSymbol_t*;
using Stream = struct ihipStream_t*;  // null = the default stream
using Event = struct ihipEvent_t*;
using DevicePtr = void*;
constexpr int kSuccess = 0;
constexpr int kNotReady = 600;  // hipErrorNotReady: hipStreamQuery's "still running"
constexpr int kMemcpyHostToDevice = 1;
constexpr int kMemcpyDeviceToHost = 2;
}  // namespace hip

class HipRuntime {
 public:
  // The process-wide runtime over $TESSERA_LIBAMDHIP (default: libamdhip64.so, then libamdhip64.so.5). Never
  // throws; check available().
  static HipRuntime& instance();
  // A runtime over a specific library list (tests point this at libraries that are not HIP).
  explicit HipRuntime(const std::vector<std::string>& libraryPaths);
  ~HipRuntime();
  HipRuntime(const HipRuntime&) = delete;
  HipRuntime& operator=(const HipRuntime&) = delete;

  bool available() const { return available_; }
  const std::string& unavailableReason() const { return reason_; }
  int deviceCount() const;

  hip::DevicePtr allocate(size_t bytes);
  void release(hip::DevicePtr p) noexcept;
  void copyToDevice(hip::DevicePtr dst, const void* src, size_t bytes);
  void copyToHost(void* dst, hip::DevicePtr src, size_t bytes);
  void fillBytes(hip::DevicePtr dst, uint8_t value, size_t bytes);  // hipMemset
  hip::Stream createStream();
  // Events, to time kernels (the autotuner's clock on AMD GPUs, jit/KernelTimer.h).
  hip::Event createEvent();
  void destroyEvent(hip::Event e) noexcept;
  void recordEvent(hip::Event e, hip::Stream s);
  float elapsedMilliseconds(hip::Event start, hip::Event end);  // synchronizes on `end`
  // Waits for the stream's work. With $TESSERA_GPU_TIMEOUT set to a number of seconds, it polls hipStreamQuery
  // instead and throws KernelTimeout (jit/StreamWait.h) past that many; unset or 0, it waits as long as the work
  // runs (HIP's own behaviour).
  void synchronize(hip::Stream s, const std::string& kernelName = "");

  hip::Module loadModule(const std::string& codeObject, const std::string& kernelName);
  void unloadModule(hip::Module m) noexcept;  // errors are reported on stderr: it runs in destructors
  hip::Function getFunction(hip::Module m, const std::string& kernelName);
  // hipModuleOccupancyMaxActiveBlocksPerMultiprocessor: the blocks of `blockThreads` threads one compute unit holds.
  int maxActiveBlocksPerComputeUnit(hip::Function f, int blockThreads, size_t dynamicSharedBytes,
                                    const std::string& kernelName);
  void launch(hip::Function f, const unsigned grid[3], const unsigned block[3], unsigned sharedBytes, hip::Stream stream,
              void** params, const std::string& kernelName);

  // Loads (once per HipRuntime and code object) and launches a kernel compiled for the amdgpu target with
  // numWarps * 64 work-items per program; `paramTypes` are the kernel function's argument types.
  void launchKernel(const CompiledKernel& kernel, const std::vector<ir::Type>& paramTypes,
                    const std::array<int64_t, 3>& grid, const std::vector<KernelArg>& args, hip::Stream stream = nullptr);

 private:
  struct Api;
  void require(const char* what) const;
  void check(hip::Error e, const char* call, const std::string& kernelName = "") const;
  std::unique_ptr<Api> api_;
  void* library_ = nullptr;
  bool available_ = false;
  std::string reason_;
  std::vector<std::pair<std::string, hip::Module>> modules_;  // by code object bytes
};

// The target a user gets without choosing: "nvptx" when the CUDA driver has a GPU, else "amdgpu" when HIP has
// one. Throws tessera::Error giving both reasons when neither does (selectRuntime("auto"), jit/DeviceRuntime.h).
std::string firstAvailableTarget();

}  // namespace tessera::jit
