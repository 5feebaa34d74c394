// The CUDA Driver API, loaded at run time with dlopen("libcuda.so.1"). Tessera never links libcuda and needs no
// CUDA headers to build: the few driver types it uses are declared here (their values are checked against
// cuda.h by tests/unit/jit_driver_test.cpp when the header is installed).
//
// On a machine without the driver library or without a GPU, CudaDriver::available() is false and
// unavailableReason() says why; every other entry point then throws tessera::Error with that reason. Every
// failing driver call throws tessera::Error naming the call, the CUresult's name and description, and the kernel
// when there is one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/Error.h"
#include "jit/StreamWait.h"  // KernelTimeout

// Opaque driver handles, spelled as cuda.h spells them so that code including cuda.h can pass its own.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;

namespace tessera::jit {

namespace cu {
using Result = int;  // CUresult
using Device = int;  // CUdevice
using DevicePtr = unsigned long long;  // CUdeviceptr
using Context = CUctx_st*;
using Module = CUmod_st*;
using Function = CUfunc_st*;
using Stream = CUstream_st*;  // null = the default stream
using Event = CUevent_st*;

// The enum values Tessera uses (CUdevice_attribute, CUfunction_attribute, CUjit_option).
constexpr int kSuccess = 0;
constexpr int kNotReady = 600;  // CUDA_ERROR_NOT_READY: cuStreamQuery's "still running"
constexpr int kDeviceAttrMultiprocessorCount = 16;
constexpr int kDeviceAttrComputeCapabilityMajor = 75;
constexpr int kDeviceAttrComputeCapabilityMinor = 76;
constexpr int kDeviceAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int kFuncAttrSharedSizeBytes = 1;
constexpr int kFuncAttrLocalSizeBytes = 3;
constexpr int kFuncAttrNumRegs = 4;
constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
constexpr int kLaunchAttributeClusterDimension = 4;  // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
// cuLaunchKernelEx's CUlaunchAttribute and CUlaunchConfig, in cuda.h's layouts: a 4-byte id padded to 8, then a
// 64-byte value (a cluster's shape: its first three unsigned ints).
struct LaunchAttribute {
  int id = 0;
  char pad[4] = {};
  alignas(8) unsigned value[16] = {};
};
static_assert(sizeof(LaunchAttribute) == 72);
struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  Stream hStream;
  LaunchAttribute* attrs;
  unsigned numAttrs;
};
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSizeBytes = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;
// CUtensorMapDataType and CUtensorMapSwizzle values.
constexpr int kTensorMapUint8 = 0;
constexpr int kTensorMapUint16 = 1;
constexpr int kTensorMapUint32 = 2;
constexpr int kTensorMapInt32 = 3;
constexpr int kTensorMapUint64 = 4;
constexpr int kTensorMapInt64 = 5;
constexpr int kTensorMapFloat16 = 6;
constexpr int kTensorMapFloat32 = 7;
constexpr int kTensorMapFloat64 = 8;
constexpr int kTensorMapBfloat16 = 9;
constexpr int kTensorMapSwizzleNone = 0;  // 32, 64 and 128 bytes follow as 1, 2, 3
constexpr size_t kTensorMapBytes = 128;
// A CUtensorMap: 128 opaque bytes, aligned as cuda.h aligns them.
struct alignas(128) TensorMap {
  std::byte bytes[kTensorMapBytes];
};
}  // namespace cu

class CudaDriver {
 public:
  using TensorMapBytes = cu::TensorMap;
  // The process-wide driver: loads $TESSERA_LIBCUDA (default "libcuda.so.1") and device $TESSERA_CUDA_DEVICE
  // (default 0) on first use. Never throws; check available().
  static CudaDriver& instance();
  // A driver over a specific library (tests point this at libraries that are not a CUDA driver).
  explicit CudaDriver(const std::string& libraryPath, int deviceIndex = 0);
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  bool available() const { return available_; }
  const std::string& unavailableReason() const { return reason_; }

  // Device facts (throw when unavailable).
  std::string deviceName() const;
  int driverVersion() const;      // the CUDA version the driver supports, 1000 * major + 10 * minor: 12040
  int computeCapability() const;  // major * 10 + minor: 90 for an H100/H200
  std::string nativeArch() const;  // "sm_90a" on Hopper (the arch-specific features Tessera can use), else "sm_XY"
  int multiprocessorCount() const;
  int maxSharedBytesPerBlockOptin() const;

  // Memory.
  cu::DevicePtr allocate(size_t bytes);
  void release(cu::DevicePtr ptr) noexcept;  // errors are reported on stderr: it runs in destructors
  void copyToDevice(cu::DevicePtr dst, const void* src, size_t bytes);
  void copyToHost(void* dst, cu::DevicePtr src, size_t bytes);
  void copyDeviceToDevice(cu::DevicePtr dst, cu::DevicePtr src, size_t bytes);
  void fillBytes(cu::DevicePtr dst, uint8_t value, size_t bytes);

  // Streams and events.
  cu::Stream createStream();
  void destroyStream(cu::Stream s) noexcept;
  // Waits for the stream's work. With $TESSERA_GPU_TIMEOUT set to a number of seconds, it polls instead and throws
  // KernelTimeout past that many; unset or 0, it waits as long as the work runs (CUDA's own behaviour).
  void synchronize(cu::Stream s, const std::string& kernelName = "");
  cu::Event createEvent();
  void destroyEvent(cu::Event e) noexcept;
  void recordEvent(cu::Event e, cu::Stream s);
  float elapsedMilliseconds(cu::Event start, cu::Event end);  // synchronizes on `end`

  // Modules and launches. loadModule's errors include the driver's JIT log (e.g. ptxas messages).
  cu::Module loadModule(const std::string& image, const std::string& kernelName);
  void unloadModule(cu::Module m) noexcept;
  cu::Function getFunction(cu::Module m, const std::string& kernelName);
  int functionAttribute(cu::Function f, int attribute, const std::string& kernelName);
  void setFunctionAttribute(cu::Function f, int attribute, int value, const std::string& kernelName);
  void launch(cu::Function f, const unsigned grid[3], const unsigned block[3], unsigned sharedBytes, cu::Stream stream,
              void** params, const std::string& kernelName);
  // The same in thread-block clusters of `cluster` programs (cuLaunchKernelEx with the cluster attribute; CUDA 12,
  // sm_90).
  void launchClusters(cu::Function f, const unsigned grid[3], const unsigned block[3], const unsigned cluster[3],
                      unsigned sharedBytes, cu::Stream stream, void** params, const std::string& kernelName);
  // cuOccupancyMaxActiveBlocksPerMultiprocessor: how many blocks of `blockThreads` threads and `dynamicSharedBytes`
  // of dynamic shared memory one multiprocessor holds at once (its registers, shared memory and thread slots).
  int maxActiveBlocksPerMultiprocessor(cu::Function f, int blockThreads, size_t dynamicSharedBytes,
                                       const std::string& kernelName);

  // cuTensorMapEncodeTiled (CUDA 12 and later): the tensor map of a tiled view of `rank` dimensions (innermost
  // first) of elements of `dataType` at `base`: `dims` elements, `byteStrides` bytes between neighbours of
  // dimensions 1.. (rank - 1 entries), `box` elements per copy, `swizzle` a CUtensorMapSwizzle, out-of-bounds
  // elements filled with zeros. Errors name the kernel.
  TensorMapBytes encodeTensorMapTiled(int dataType, unsigned rank, cu::DevicePtr base, const uint64_t* dims,
                                      const uint64_t* byteStrides, const uint32_t* box, int swizzle,
                                      const std::string& kernelName);

  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a result code.
  std::string describeResult(cu::Result r) const;

 private:
  struct Api;
  void load(const std::string& libraryPath, int deviceIndex);
  void require() const;  // throws when unavailable; makes the context current on this thread
  void check(cu::Result r, const char* call, const std::string& kernelName = "") const;
  int deviceAttribute(int attribute) const;

  std::unique_ptr<Api> api_;
  void* library_ = nullptr;
  bool available_ = false;
  std::string reason_;
  cu::Device device_ = 0;
  cu::Context context_ = nullptr;
};

// Device memory owned by one object: allocated in the constructor, freed in the destructor. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes, CudaDriver& driver = CudaDriver::instance());
  template <class T>
  static DeviceBuffer fromHost(const std::vector<T>& host, CudaDriver& driver = CudaDriver::instance()) {
    DeviceBuffer b(host.size() * sizeof(T), driver);
    b.copyFromHost(host.data(), host.size() * sizeof(T));
    return b;
  }
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  cu::DevicePtr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  // Copies `bytes` (at most bytes()) between the host and the start of the buffer; throws on overflow.
  void copyFromHost(const void* src, size_t bytes);
  void copyToHost(void* dst, size_t bytes) const;
  template <class T>
  std::vector<T> toHost() const {
    std::vector<T> v(bytes_ / sizeof(T));
    copyToHost(v.data(), v.size() * sizeof(T));
    return v;
  }

 private:
  void reset() noexcept;
  CudaDriver* driver_ = nullptr;
  cu::DevicePtr ptr_ = 0;
  size_t bytes_ = 0;
};

}  // namespace tessera::jit
