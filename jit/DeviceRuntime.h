// The target-neutral face of a GPU runtime: what JitKernel and LoadedKernel need to load a CompiledKernel's
// binary and launch it, implemented by thin adapters over the CUDA driver (nvptx, PTX) and the HIP runtime
// (amdgpu, HSA code objects). With it CUDA and HIP share one cache, one specialization and one launch path.
//
// selectRuntime("nvptx" | "amdgpu" | "auto") picks the runtime of a target, or for "auto" the first one with a
// device (nvptx, then amdgpu). It throws tessera::Error saying why each candidate is unavailable.
// selectRuntime("sim") is the emulator (jit/sim/SimRuntime.h), which runs nvptx sm_90a kernels on the host.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ir/Types.h"
#include "jit/KfdTopology.h"

struct CUstream_st;

namespace tessera::jit {

// The implementations' stream handles and classes, declared here as jit/CudaDriver.h and jit/HipRuntime.h declare
// them, so that this interface does not depend on either API.
namespace cu {
using Stream = CUstream_st*;
}
namespace hip {
using Stream = struct ihipStream_t*;
}
class CudaDriver;
class HipRuntime;
class TimingClock;  // jit/KernelTimer.h
struct CompiledKernel;

// A stream of either API; null is the default stream. It converts from cu::Stream and hip::Stream, and back to
// cu::Stream so that code written against the CUDA driver (LaunchOptions::stream into CudaDriver) still compiles.
class DeviceStream {
 public:
  DeviceStream() = default;
  DeviceStream(std::nullptr_t) {}                   // NOLINT: implicit on purpose
  DeviceStream(cu::Stream s) : handle_(s) {}        // NOLINT
  DeviceStream(hip::Stream s) : handle_(s) {}       // NOLINT
  static DeviceStream fromHandle(void* handle) {
    DeviceStream s;
    s.handle_ = handle;
    return s;
  }
  void* handle() const { return handle_; }
  operator cu::Stream() const { return static_cast<cu::Stream>(handle_); }  // NOLINT
  hip::Stream hip() const { return static_cast<hip::Stream>(handle_); }

 private:
  void* handle_ = nullptr;
};

using DeviceModule = void*;
using DeviceFunction = void*;
using DeviceAddress = uint64_t;  // a device pointer, as KernelArg::pointer takes it

// A TMA tensor map to encode (cuTensorMapEncodeTiled's terms): a tiled view of `rank` dimensions, innermost
// first, of `element`s at `base`: `dims` elements each, `byteStrides[d]` bytes between neighbours along
// dimension d >= 1, `box` elements per copy, swizzled by `swizzleBytes` (0, 32, 64 or 128); zeros out of bounds.
struct TensorMapRequest {
  ir::Type element;
  uint32_t rank = 0;
  DeviceAddress base = 0;
  std::array<uint64_t, 5> dims{}, byteStrides{};
  std::array<uint32_t, 5> box{};
  int swizzleBytes = 0;
};
using TensorMapBytes = std::array<std::byte, 128>;

class DeviceRuntime {
 public:
  DeviceRuntime();
  DeviceRuntime(const DeviceRuntime&) = delete;
  DeviceRuntime& operator=(const DeviceRuntime&) = delete;
  virtual ~DeviceRuntime() = default;

  // Tells this runtime from every other of the process, one later made at its address included: what is kept per
  // runtime (loaded modules, the facts autotuning asks of a device) is found by it, never by the address.
  uint64_t instanceId() const { return instanceId_; }

  virtual std::string target() const = 0;        // "nvptx", "amdgpu"
  virtual std::string apiName() const = 0;       // "CUDA", "HIP": used in messages
  virtual std::string binaryFormat() const = 0;  // the CompiledKernel::format it loads: "ptx", "hsaco"
  virtual bool available() const = 0;
  virtual std::string unavailableReason() const = 0;
  // The arch to compile for when LaunchOptions::arch is empty. Throws when the runtime cannot tell.
  virtual std::string nativeArch() const = 0;

  virtual DeviceAddress allocate(size_t bytes) = 0;
  virtual void release(DeviceAddress p) noexcept = 0;
  virtual void copyToDevice(DeviceAddress dst, const void* src, size_t bytes) = 0;
  virtual void copyToHost(void* dst, DeviceAddress src, size_t bytes) = 0;
  virtual void synchronize(DeviceStream stream, const std::string& kernelName = "") = 0;

  // Loads the kernel's binary (CUDA, HIP), or what else of it the runtime runs (the emulator: its LLVM IR).
  virtual DeviceModule loadModule(const CompiledKernel& kernel) = 0;
  // Whether loadModule reads CompiledKernel::optimizedLLVMIR (which a compile for a launch then keeps).
  virtual bool loadsLLVMIR() const { return false; }
  virtual void unloadModule(DeviceModule m) noexcept = 0;
  virtual DeviceFunction getFunction(DeviceModule m, const std::string& kernelName) = 0;

  // CUDA takes a kernel's shared memory as dynamic bytes at launch, and must raise the kernel's limit first when
  // it needs more than 48 KB; HIP's LDS size is static in the code object (launches pass 0 dynamic bytes).
  virtual bool launchesWithDynamicSharedMemory() const = 0;
  // Throws when the device cannot give `bytes` to one block.
  virtual void raiseSharedMemoryLimit(DeviceFunction f, int64_t bytes, const std::string& kernelName) = 0;
  // Per-thread resources of a loaded kernel; throws where the API cannot report them.
  virtual int registersPerThread(DeviceFunction f, const std::string& kernelName) = 0;
  virtual int localBytesPerThread(DeviceFunction f, const std::string& kernelName) = 0;

  // How many programs of `f` (`threadsPerProgram` threads, `sharedBytes` of shared memory each) the device runs at
  // once: its multiprocessors times the programs one holds. A persistent kernel's launch starts that many at most.
  // Throws tessera::Error naming the kernel where the runtime cannot tell (the default).
  virtual int64_t residentPrograms(DeviceFunction f, unsigned threadsPerProgram, int64_t sharedBytes,
                                   const std::string& kernelName);
  virtual void launch(DeviceFunction f, const unsigned grid[3], const unsigned block[3], unsigned sharedBytes,
                      DeviceStream stream, void** params, const std::string& kernelName) = 0;
  // The same in thread-block clusters of `cluster` programs (sm_90), each of which divides the grid's. Throws
  // tessera::Error naming the kernel on runtimes without clusters (the default).
  virtual void launchClusters(DeviceFunction f, const unsigned grid[3], const unsigned block[3],
                              const unsigned cluster[3], unsigned sharedBytes, DeviceStream stream, void** params,
                              const std::string& kernelName);

  // The tensor map a kernel's descriptor parameter carries (CUDA: the driver's encoding; the emulator: its own).
  // Throws tessera::Error naming the kernel where it cannot be encoded; runtimes without TMA have none.
  virtual TensorMapBytes encodeTensorMap(const TensorMapRequest& request, const std::string& kernelName);
  // A clock that times launches on the default stream the way do_bench does (jit/KernelTimer.h): the API's events
  // and an L2 flush buffer. Null (the default) where the runtime has no meaningful clock, as the emulator has not.
  virtual std::unique_ptr<TimingClock> makeTimingClock();

 private:
  const uint64_t instanceId_;
};

// Adapters over a specific driver or runtime (which must outlive them).
std::unique_ptr<DeviceRuntime> makeCudaDeviceRuntime(CudaDriver& driver);
// The HIP adapter reads the GPUs' arch and compute units from the KFD topology under `kfdNodes`
// (jit/KfdTopology.h; tests point it at a directory of their own).
std::unique_ptr<DeviceRuntime> makeHipDeviceRuntime(HipRuntime& hip,
                                                    const std::filesystem::path& kfdNodes = kKfdTopologyNodes);

// The known target names, in "auto" preference order.
const std::vector<std::string>& deviceTargets();  // {"nvptx", "amdgpu"}

// Picks the runtime for `target` among `candidates` (one per target): "auto" means the first available one.
// Throws tessera::Error for an unknown target, an unavailable requested target (with its reason), or, for
// "auto", when none is available (listing every candidate's reason).
DeviceRuntime& selectRuntime(const std::string& target, const std::vector<DeviceRuntime*>& candidates);
// The same over the process-wide CudaDriver::instance() and HipRuntime::instance().
DeviceRuntime& selectRuntime(const std::string& target);

}  // namespace tessera::jit
