#include "jit/DeviceRuntime.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "ir/Error.h"
#include "jit/CompiledKernel.h"
#include "jit/CudaDriver.h"
#include "jit/HipRuntime.h"
#include "jit/KernelTimer.h"
#include "jit/KfdTopology.h"
#include "jit/sim/SimRuntime.h"

namespace tessera::jit {

DeviceRuntime::DeviceRuntime() : instanceId_([] {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}()) {}

TensorMapBytes DeviceRuntime::encodeTensorMap(const TensorMapRequest&, const std::string& kernelName) {
  throw Error("kernel '" + kernelName + "' takes a tensor map, which the " + apiName() + " runtime cannot encode");
}

int64_t DeviceRuntime::residentPrograms(DeviceFunction, unsigned, int64_t, const std::string& kernelName) {
  throw Error("kernel '" + kernelName + "' is persistent, and the " + apiName() +
              " runtime cannot tell how many of its programs the device runs at once");
}

void DeviceRuntime::launchClusters(DeviceFunction, const unsigned[3], const unsigned[3], const unsigned[3], unsigned,
                                   DeviceStream, void**, const std::string& kernelName) {
  throw Error("kernel '" + kernelName + "' runs in thread-block clusters (sm_90), which the " + apiName() +
              " runtime cannot launch");
}

std::unique_ptr<TimingClock> DeviceRuntime::makeTimingClock() { return nullptr; }

namespace {

// The programs a persistent launch starts: every multiprocessor (compute unit) times the programs one holds.
int64_t residentOn(int multiprocessors, int perMultiprocessor, const std::string& kernelName) {
  if (perMultiprocessor < 1)
    throw Error("kernel '" + kernelName + "': not one of its programs fits on a multiprocessor (registers, shared "
                "memory or threads), so it cannot be launched");
  return static_cast<int64_t>(multiprocessors) * perMultiprocessor;
}

// CUtensorMapDataType of an element type: fp8 and other bytes travel as uint8, as copies only move them.
int cudaTensorMapDataType(ir::Type element) {
  switch (element.scalarKind()) {
    case ir::ScalarKind::F16: return cu::kTensorMapFloat16;
    case ir::ScalarKind::BF16: return cu::kTensorMapBfloat16;
    case ir::ScalarKind::F32: return cu::kTensorMapFloat32;
    case ir::ScalarKind::F64: return cu::kTensorMapFloat64;
    case ir::ScalarKind::I32: return cu::kTensorMapInt32;
    case ir::ScalarKind::I64: return cu::kTensorMapInt64;
    default: break;
  }
  switch (element.storageBytes()) {
    case 1: return cu::kTensorMapUint8;
    case 2: return cu::kTensorMapUint16;
    case 4: return cu::kTensorMapUint32;
    default: return cu::kTensorMapUint64;
  }
}

// CUtensorMapSwizzle of a swizzle span in bytes.
int cudaTensorMapSwizzle(int swizzleBytes) {
  switch (swizzleBytes) {
    case 32: return cu::kTensorMapSwizzleNone + 1;
    case 64: return cu::kTensorMapSwizzleNone + 2;
    case 128: return cu::kTensorMapSwizzleNone + 3;
    default: return cu::kTensorMapSwizzleNone;
  }
}

// CUDA: PTX modules, dynamic shared memory passed at launch (with an opt-in above 48 KB).
class CudaDeviceRuntime final : public DeviceRuntime {
 public:
  explicit CudaDeviceRuntime(CudaDriver& driver) : driver_(driver) {}

  std::string target() const override { return "nvptx"; }
  std::string apiName() const override { return "CUDA"; }
  std::string binaryFormat() const override { return "ptx"; }
  bool available() const override { return driver_.available(); }
  std::string unavailableReason() const override { return driver_.unavailableReason(); }
  std::string nativeArch() const override { return driver_.nativeArch(); }

  DeviceAddress allocate(size_t bytes) override { return driver_.allocate(bytes); }
  void release(DeviceAddress p) noexcept override { driver_.release(p); }
  void copyToDevice(DeviceAddress dst, const void* src, size_t bytes) override { driver_.copyToDevice(dst, src, bytes); }
  void copyToHost(void* dst, DeviceAddress src, size_t bytes) override { driver_.copyToHost(dst, src, bytes); }
  void synchronize(DeviceStream stream, const std::string& kernelName) override {
    driver_.synchronize(stream, kernelName);
  }

  DeviceModule loadModule(const CompiledKernel& kernel) override { return driver_.loadModule(kernel.binary, kernel.name); }
  void unloadModule(DeviceModule m) noexcept override { driver_.unloadModule(static_cast<cu::Module>(m)); }
  DeviceFunction getFunction(DeviceModule m, const std::string& kernelName) override {
    return driver_.getFunction(static_cast<cu::Module>(m), kernelName);
  }

  bool launchesWithDynamicSharedMemory() const override { return true; }
  void raiseSharedMemoryLimit(DeviceFunction f, int64_t bytes, const std::string& kernelName) override {
    auto function = static_cast<cu::Function>(f);
    int limit = driver_.maxSharedBytesPerBlockOptin();
    int staticBytes = driver_.functionAttribute(function, cu::kFuncAttrSharedSizeBytes, kernelName);
    if (bytes + staticBytes > limit)
      throw Error("kernel '" + kernelName + "' needs " + std::to_string(bytes) + " bytes of shared memory (plus " +
                  std::to_string(staticBytes) + " static), more than the " + std::to_string(limit) +
                  " bytes this GPU allows per block; use smaller blocks or fewer stages");
    driver_.setFunctionAttribute(function, cu::kFuncAttrMaxDynamicSharedSizeBytes, static_cast<int>(bytes), kernelName);
  }
  int registersPerThread(DeviceFunction f, const std::string& kernelName) override {
    return driver_.functionAttribute(static_cast<cu::Function>(f), cu::kFuncAttrNumRegs, kernelName);
  }
  int localBytesPerThread(DeviceFunction f, const std::string& kernelName) override {
    return driver_.functionAttribute(static_cast<cu::Function>(f), cu::kFuncAttrLocalSizeBytes, kernelName);
  }
  TensorMapBytes encodeTensorMap(const TensorMapRequest& r, const std::string& kernelName) override {
    const cu::TensorMap map = driver_.encodeTensorMapTiled(cudaTensorMapDataType(r.element), r.rank, r.base,
                                                           r.dims.data(), r.byteStrides.data() + 1, r.box.data(),
                                                           cudaTensorMapSwizzle(r.swizzleBytes), kernelName);
    TensorMapBytes bytes;
    std::memcpy(bytes.data(), map.bytes, bytes.size());
    return bytes;
  }

  int64_t residentPrograms(DeviceFunction f, unsigned threadsPerProgram, int64_t sharedBytes,
                           const std::string& kernelName) override {
    const int perMultiprocessor = driver_.maxActiveBlocksPerMultiprocessor(
        static_cast<cu::Function>(f), static_cast<int>(threadsPerProgram), static_cast<size_t>(sharedBytes), kernelName);
    return residentOn(driver_.multiprocessorCount(), perMultiprocessor, kernelName);
  }

  void launch(DeviceFunction f, const unsigned grid[3], const unsigned block[3], unsigned sharedBytes,
              DeviceStream stream, void** params, const std::string& kernelName) override {
    driver_.launch(static_cast<cu::Function>(f), grid, block, sharedBytes, stream, params, kernelName);
  }
  void launchClusters(DeviceFunction f, const unsigned grid[3], const unsigned block[3], const unsigned cluster[3],
                      unsigned sharedBytes, DeviceStream stream, void** params, const std::string& kernelName) override {
    driver_.launchClusters(static_cast<cu::Function>(f), grid, block, cluster, sharedBytes, stream, params, kernelName);
  }
  std::unique_ptr<TimingClock> makeTimingClock() override { return makeCudaEventClock(driver_); }

 private:
  CudaDriver& driver_;
};

// HIP: HSA code objects whose LDS size is static, so launches pass no dynamic shared memory.
class HipDeviceRuntime final : public DeviceRuntime {
 public:
  HipDeviceRuntime(HipRuntime& hip, std::filesystem::path kfdNodes) : hip_(hip), kfdNodes_(std::move(kfdNodes)) {}

  std::string target() const override { return "amdgpu"; }
  std::string apiName() const override { return "HIP"; }
  std::string binaryFormat() const override { return "hsaco"; }
  bool available() const override { return hip_.available(); }
  std::string unavailableReason() const override { return hip_.unavailableReason(); }
  std::string nativeArch() const override {
    // TESSERA_HIP_ARCH wins; otherwise the GPUs' arch from the driver's KFD topology (HipRuntime does not read
    // hipDeviceProp_t, whose layout changes between HIP versions). Mixed archs are not guessed between.
    if (const char* env = std::getenv("TESSERA_HIP_ARCH"); env && *env) return env;
    std::vector<std::string> archs = kfdGpuArchs(kfdNodes_);
    if (!archs.empty() && std::all_of(archs.begin(), archs.end(), [&](const std::string& a) { return a == archs[0]; }))
      return archs[0];
    std::string found;
    for (const std::string& a : archs) found += (found.empty() ? "" : ", ") + a;
    throw Error("cannot tell which AMD GPU arch to compile for (" +
                (archs.empty() ? "no GPU in " + kfdNodes_.string() : "GPUs of several archs: " + found) +
                "): pass LaunchOptions::arch (e.g. gfx90a or gfx942) or set TESSERA_HIP_ARCH");
  }

  DeviceAddress allocate(size_t bytes) override { return reinterpret_cast<DeviceAddress>(hip_.allocate(bytes)); }
  void release(DeviceAddress p) noexcept override { hip_.release(reinterpret_cast<hip::DevicePtr>(p)); }
  void copyToDevice(DeviceAddress dst, const void* src, size_t bytes) override {
    hip_.copyToDevice(reinterpret_cast<hip::DevicePtr>(dst), src, bytes);
  }
  void copyToHost(void* dst, DeviceAddress src, size_t bytes) override {
    hip_.copyToHost(dst, reinterpret_cast<hip::DevicePtr>(src), bytes);
  }
  void synchronize(DeviceStream stream, const std::string& kernelName) override {
    hip_.synchronize(stream.hip(), kernelName);
  }

  DeviceModule loadModule(const CompiledKernel& kernel) override { return hip_.loadModule(kernel.binary, kernel.name); }
  void unloadModule(DeviceModule m) noexcept override { hip_.unloadModule(static_cast<hip::Module>(m)); }
  DeviceFunction getFunction(DeviceModule m, const std::string& kernelName) override {
    return hip_.getFunction(static_cast<hip::Module>(m), kernelName);
  }

  bool launchesWithDynamicSharedMemory() const override { return false; }
  void raiseSharedMemoryLimit(DeviceFunction, int64_t, const std::string&) override {}  // LDS is static
  int registersPerThread(DeviceFunction, const std::string& kernelName) override { throw unsupported(kernelName); }
  int localBytesPerThread(DeviceFunction, const std::string& kernelName) override { throw unsupported(kernelName); }

  // Compute units from the KFD topology (as the arch: no hipDeviceProp_t), programs per unit from HIP.
  int64_t residentPrograms(DeviceFunction f, unsigned threadsPerProgram, int64_t sharedBytes,
                           const std::string& kernelName) override {
    std::vector<KfdGpu> gpus = kfdGpus(kfdNodes_);
    if (gpus.empty() || gpus[0].computeUnits < 1)
      throw Error("kernel '" + kernelName + "' is persistent, and the KFD topology (" + kfdNodes_.string() +
                  ") does not say how many compute units the GPU has");
    const int perUnit = hip_.maxActiveBlocksPerComputeUnit(static_cast<hip::Function>(f),
                                                           static_cast<int>(threadsPerProgram),
                                                           static_cast<size_t>(sharedBytes), kernelName);
    return residentOn(gpus[0].computeUnits, perUnit, kernelName);
  }

  void launch(DeviceFunction f, const unsigned grid[3], const unsigned block[3], unsigned sharedBytes,
              DeviceStream stream, void** params, const std::string& kernelName) override {
    hip_.launch(static_cast<hip::Function>(f), grid, block, sharedBytes, stream.hip(), params, kernelName);
  }
  std::unique_ptr<TimingClock> makeTimingClock() override { return makeHipEventClock(hip_); }

 private:
  static Error unsupported(const std::string& kernelName) {
    return Error("kernel '" + kernelName + "': per-thread register and scratch figures are not available through "
                 "HIP's module API; read them from the code object with llvm-readelf --notes");
  }
  HipRuntime& hip_;
  std::filesystem::path kfdNodes_;  // the KFD topology's nodes: the GPUs' arch and compute units
};

}  // namespace

std::unique_ptr<DeviceRuntime> makeCudaDeviceRuntime(CudaDriver& driver) {
  return std::make_unique<CudaDeviceRuntime>(driver);
}
std::unique_ptr<DeviceRuntime> makeHipDeviceRuntime(HipRuntime& hip, const std::filesystem::path& kfdNodes) {
  return std::make_unique<HipDeviceRuntime>(hip, kfdNodes);
}

const std::vector<std::string>& deviceTargets() {
  static const std::vector<std::string> targets = {"nvptx", "amdgpu"};
  return targets;
}

DeviceRuntime& selectRuntime(const std::string& target, const std::vector<DeviceRuntime*>& candidates) {
  if (target == "auto") {
    std::string reasons;
    for (const std::string& name : deviceTargets())
      for (DeviceRuntime* r : candidates) {
        if (r->target() != name) continue;
        if (r->available()) return *r;
        reasons += (reasons.empty() ? "" : "; ") + name + " (" + r->apiName() + ": " + r->unavailableReason() + ")";
      }
    throw Error("no GPU is available for target 'auto' (tried nvptx, then amdgpu): " +
                (reasons.empty() ? std::string("no runtimes were given") : reasons));
  }
  for (DeviceRuntime* r : candidates) {
    if (r->target() != target) continue;
    if (!r->available())
      throw Error("target '" + target + "' cannot run kernels here: " + r->apiName() + " is not available: " +
                  r->unavailableReason());
    return *r;
  }
  throw Error("unknown GPU target '" + target + "': expected 'auto', 'nvptx' or 'amdgpu'");
}

DeviceRuntime& selectRuntime(const std::string& target) {
  if (target == "sim") return sim::simRuntime();
  static const std::unique_ptr<DeviceRuntime> cuda = makeCudaDeviceRuntime(CudaDriver::instance());
  static const std::unique_ptr<DeviceRuntime> hip = makeHipDeviceRuntime(HipRuntime::instance());
  return selectRuntime(target, {cuda.get(), hip.get()});
}

}  // namespace tessera::jit
