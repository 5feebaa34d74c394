#include "jit/CudaDriver.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "ir/Error.h"
#include "jit/StreamWait.h"

namespace tessera::jit {

using namespace cu;

// Driver entry points, resolved by their exported (versioned) symbol names: cuda.h's macros map e.g. cuMemAlloc
// to cuMemAlloc_v2, and the unversioned symbols are legacy ABIs with 32-bit sizes.
struct CudaDriver::Api {
  Result (*cuInit)(unsigned);
  Result (*cuDriverGetVersion)(int*);
  Result (*cuDeviceGetCount)(int*);
  Result (*cuDeviceGet)(Device*, int);
  Result (*cuDeviceGetName)(char*, int, Device);
  Result (*cuDeviceGetAttribute)(int*, int, Device);
  Result (*cuDevicePrimaryCtxRetain)(Context*, Device);
  Result (*cuDevicePrimaryCtxRelease)(Device);
  Result (*cuCtxSetCurrent)(Context);
  Result (*cuCtxSynchronize)();
  Result (*cuModuleLoadDataEx)(Module*, const void*, unsigned, int*, void**);
  Result (*cuModuleUnload)(Module);
  Result (*cuModuleGetFunction)(Function*, Module, const char*);
  Result (*cuFuncGetAttribute)(int*, int, Function);
  Result (*cuFuncSetAttribute)(Function, int, int);
  Result (*cuLaunchKernel)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Stream,
                           void**, void**);
  Result (*cuMemAlloc)(DevicePtr*, size_t);
  Result (*cuMemFree)(DevicePtr);
  Result (*cuMemcpyHtoD)(DevicePtr, const void*, size_t);
  Result (*cuMemcpyDtoH)(void*, DevicePtr, size_t);
  Result (*cuMemcpyDtoD)(DevicePtr, DevicePtr, size_t);
  Result (*cuMemsetD8)(DevicePtr, unsigned char, size_t);
  Result (*cuStreamCreate)(Stream*, unsigned);
  Result (*cuStreamDestroy)(Stream);
  Result (*cuStreamSynchronize)(Stream);
  Result (*cuStreamQuery)(Stream);  // optional: only a synchronize with a time limit polls
  Result (*cuEventCreate)(Event*, unsigned);
  Result (*cuEventDestroy)(Event);
  Result (*cuEventRecord)(Event, Stream);
  Result (*cuEventSynchronize)(Event);
  Result (*cuEventElapsedTime)(float*, Event, Event);
  Result (*cuGetErrorName)(Result, const char**);
  Result (*cuGetErrorString)(Result, const char**);
  // Resolved when present (every driver since CUDA 6.5 has it); only persistent launches need it.
  Result (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, Function, int, size_t);
  // Optional: CUDA 12 and later.
  Result (*cuLaunchKernelEx)(const LaunchConfig*, Function, void**, void**);
  Result (*cuTensorMapEncodeTiled)(TensorMap*, int, unsigned, void*, const uint64_t*, const uint64_t*,
                                   const uint32_t*, const uint32_t*, int, int, int, int);
};

CudaDriver& CudaDriver::instance() {
  // Never destroyed: DeviceBuffers in other static objects may still free memory during exit.
  static CudaDriver* driver = [] {
    const char* lib = std::getenv("TESSERA_LIBCUDA");
    const char* dev = std::getenv("TESSERA_CUDA_DEVICE");
    return new CudaDriver(lib && *lib ? lib : "libcuda.so.1", dev && *dev ? std::atoi(dev) : 0);
  }();
  return *driver;
}

CudaDriver::CudaDriver(const std::string& libraryPath, int deviceIndex) : api_(std::make_unique<Api>()) {
  load(libraryPath, deviceIndex);
}

CudaDriver::~CudaDriver() {
  if (context_ && api_->cuDevicePrimaryCtxRelease) api_->cuDevicePrimaryCtxRelease(device_);
  // libcuda is never dlclose'd: the driver keeps threads and atexit handlers that outlive this object.
}

void CudaDriver::load(const std::string& libraryPath, int deviceIndex) {
  const std::string hint = " GPU execution needs the NVIDIA driver and a GPU; compiling (compileOnly) works without them.";
  library_ = dlopen(libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    const char* err = dlerror();
    reason_ = "cannot load the CUDA driver library '" + libraryPath + "': " + (err ? err : "unknown error") + "." + hint;
    return;
  }
  std::string missing;
  auto resolve = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(library_, symbol));
    if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  };
  Api& a = *api_;
  resolve(a.cuInit, "cuInit");
  resolve(a.cuDriverGetVersion, "cuDriverGetVersion");
  resolve(a.cuDeviceGetCount, "cuDeviceGetCount");
  resolve(a.cuDeviceGet, "cuDeviceGet");
  resolve(a.cuDeviceGetName, "cuDeviceGetName");
  resolve(a.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  resolve(a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  resolve(a.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  resolve(a.cuCtxSetCurrent, "cuCtxSetCurrent");
  resolve(a.cuCtxSynchronize, "cuCtxSynchronize");
  resolve(a.cuModuleLoadDataEx, "cuModuleLoadDataEx");
  resolve(a.cuModuleUnload, "cuModuleUnload");
  resolve(a.cuModuleGetFunction, "cuModuleGetFunction");
  resolve(a.cuFuncGetAttribute, "cuFuncGetAttribute");
  resolve(a.cuFuncSetAttribute, "cuFuncSetAttribute");
  resolve(a.cuLaunchKernel, "cuLaunchKernel");
  resolve(a.cuMemAlloc, "cuMemAlloc_v2");
  resolve(a.cuMemFree, "cuMemFree_v2");
  resolve(a.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  resolve(a.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  resolve(a.cuMemcpyDtoD, "cuMemcpyDtoD_v2");
  resolve(a.cuMemsetD8, "cuMemsetD8_v2");
  resolve(a.cuStreamCreate, "cuStreamCreate");
  resolve(a.cuStreamDestroy, "cuStreamDestroy_v2");
  resolve(a.cuStreamSynchronize, "cuStreamSynchronize");
  resolve(a.cuEventCreate, "cuEventCreate");
  resolve(a.cuEventDestroy, "cuEventDestroy_v2");
  resolve(a.cuEventRecord, "cuEventRecord");
  resolve(a.cuEventSynchronize, "cuEventSynchronize");
  resolve(a.cuEventElapsedTime, "cuEventElapsedTime");
  resolve(a.cuGetErrorName, "cuGetErrorName");
  resolve(a.cuGetErrorString, "cuGetErrorString");
  a.cuStreamQuery = reinterpret_cast<decltype(a.cuStreamQuery)>(dlsym(library_, "cuStreamQuery"));
  a.cuTensorMapEncodeTiled =
      reinterpret_cast<decltype(a.cuTensorMapEncodeTiled)>(dlsym(library_, "cuTensorMapEncodeTiled"));
  a.cuLaunchKernelEx = reinterpret_cast<decltype(a.cuLaunchKernelEx)>(dlsym(library_, "cuLaunchKernelEx"));
  a.cuOccupancyMaxActiveBlocksPerMultiprocessor = reinterpret_cast<decltype(a.cuOccupancyMaxActiveBlocksPerMultiprocessor)>(
      dlsym(library_, "cuOccupancyMaxActiveBlocksPerMultiprocessor"));
  if (!missing.empty()) {
    reason_ = "'" + libraryPath + "' is not a usable CUDA driver library: it lacks " + missing + "." + hint;
    return;
  }
  if (Result r = a.cuInit(0); r != kSuccess) {
    reason_ = "cuInit failed: " + describeResult(r) + "." + hint;
    return;
  }
  int count = 0;
  if (Result r = a.cuDeviceGetCount(&count); r != kSuccess) {
    reason_ = "cuDeviceGetCount failed: " + describeResult(r) + "." + hint;
    return;
  }
  if (deviceIndex < 0 || deviceIndex >= count) {
    reason_ = count == 0 ? "the CUDA driver found no GPU." + hint
                         : "CUDA device " + std::to_string(deviceIndex) + " does not exist (the driver found " +
                               std::to_string(count) + "; set TESSERA_CUDA_DEVICE).";
    return;
  }
  if (Result r = a.cuDeviceGet(&device_, deviceIndex); r != kSuccess) {
    reason_ = "cuDeviceGet(" + std::to_string(deviceIndex) + ") failed: " + describeResult(r);
    return;
  }
  if (Result r = a.cuDevicePrimaryCtxRetain(&context_, device_); r != kSuccess) {
    context_ = nullptr;
    reason_ = "cuDevicePrimaryCtxRetain failed: " + describeResult(r);
    return;
  }
  available_ = true;
}

std::string CudaDriver::describeResult(Result r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_->cuGetErrorName) api_->cuGetErrorName(r, &name);
  if (api_->cuGetErrorString) api_->cuGetErrorString(r, &text);
  return std::string(name ? name : "CUresult " + std::to_string(r)) + " (" + (text ? text : "no description") + ")";
}

void CudaDriver::require() const {
  if (!available_) throw Error("CUDA is not available: " + reason_);
  // The primary context must be current on whichever thread calls in, and other libraries in the process may
  // have switched it; setting it is cheap, so every entry point does.
  check(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

void CudaDriver::check(Result r, const char* call, const std::string& kernelName) const {
  if (r == kSuccess) return;
  throw Error(std::string(call) + " failed" + (kernelName.empty() ? "" : " for kernel '" + kernelName + "'") + ": " +
              describeResult(r));
}

int CudaDriver::deviceAttribute(int attribute) const {
  require();
  int v = 0;
  check(api_->cuDeviceGetAttribute(&v, attribute, device_), "cuDeviceGetAttribute");
  return v;
}

std::string CudaDriver::deviceName() const {
  require();
  char name[256] = {};
  check(api_->cuDeviceGetName(name, sizeof name - 1, device_), "cuDeviceGetName");
  return name;
}

int CudaDriver::driverVersion() const {
  require();
  int v = 0;
  check(api_->cuDriverGetVersion(&v), "cuDriverGetVersion");
  return v;
}

int CudaDriver::computeCapability() const {
  return deviceAttribute(kDeviceAttrComputeCapabilityMajor) * 10 + deviceAttribute(kDeviceAttrComputeCapabilityMinor);
}

std::string CudaDriver::nativeArch() const {
  int cc = computeCapability();
  // sm_90a unlocks Hopper-only instructions (wgmma, setmaxnreg); its PTX loads only on compute capability 9.0.
  return cc == 90 ? "sm_90a" : "sm_" + std::to_string(cc);
}

int CudaDriver::multiprocessorCount() const { return deviceAttribute(kDeviceAttrMultiprocessorCount); }
int CudaDriver::maxSharedBytesPerBlockOptin() const { return deviceAttribute(kDeviceAttrMaxSharedMemoryPerBlockOptin); }

DevicePtr CudaDriver::allocate(size_t bytes) {
  require();
  DevicePtr p = 0;
  check(api_->cuMemAlloc(&p, bytes == 0 ? 1 : bytes), "cuMemAlloc");  // 0-byte allocations are an error in CUDA
  return p;
}

void CudaDriver::release(DevicePtr ptr) noexcept {
  if (!available_ || ptr == 0) return;
  try {
    require();
    check(api_->cuMemFree(ptr), "cuMemFree");
  } catch (const std::exception& e) {
    std::cerr << "tessera: " << e.what() << "\n";
  }
}

void CudaDriver::copyToDevice(DevicePtr dst, const void* src, size_t bytes) {
  require();
  if (bytes) check(api_->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}
void CudaDriver::copyToHost(void* dst, DevicePtr src, size_t bytes) {
  require();
  if (bytes) check(api_->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}
void CudaDriver::copyDeviceToDevice(DevicePtr dst, DevicePtr src, size_t bytes) {
  require();
  if (bytes) check(api_->cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
}
void CudaDriver::fillBytes(DevicePtr dst, uint8_t value, size_t bytes) {
  require();
  if (bytes) check(api_->cuMemsetD8(dst, value, bytes), "cuMemsetD8");
}

Stream CudaDriver::createStream() {
  require();
  Stream s = nullptr;
  check(api_->cuStreamCreate(&s, 0), "cuStreamCreate");
  return s;
}
void CudaDriver::destroyStream(Stream s) noexcept {
  if (available_ && s) api_->cuStreamDestroy(s);
}
void CudaDriver::synchronize(Stream s, const std::string& kernelName) {
  require();
  // Asynchronous kernel faults surface here; name the kernel that was last launched when the caller knows it.
  const double limit = gpuTimeoutSeconds();
  if (limit == 0 || !api_->cuStreamQuery) {
    check(api_->cuStreamSynchronize(s), "cuStreamSynchronize", kernelName);
    return;
  }
  // Poll: a blocking wait could not be given up.
  pollUntilFinished(
      [&] {
        const Result r = api_->cuStreamQuery(s);
        if (r == kNotReady) return false;
        check(r, "cuStreamQuery", kernelName);
        return true;
      },
      limit, kernelName);
}
Event CudaDriver::createEvent() {
  require();
  Event e = nullptr;
  check(api_->cuEventCreate(&e, 0), "cuEventCreate");
  return e;
}
void CudaDriver::destroyEvent(Event e) noexcept {
  if (available_ && e) api_->cuEventDestroy(e);
}
void CudaDriver::recordEvent(Event e, Stream s) {
  require();
  check(api_->cuEventRecord(e, s), "cuEventRecord");
}
float CudaDriver::elapsedMilliseconds(Event start, Event end) {
  require();
  check(api_->cuEventSynchronize(end), "cuEventSynchronize");
  float ms = 0;
  check(api_->cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
  return ms;
}

Module CudaDriver::loadModule(const std::string& image, const std::string& kernelName) {
  require();
  char errorLog[8192] = {}, infoLog[8192] = {};
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes, kJitInfoLogBuffer, kJitInfoLogBufferSizeBytes};
  void* values[] = {errorLog, reinterpret_cast<void*>(sizeof errorLog - 1), infoLog,
                    reinterpret_cast<void*>(sizeof infoLog - 1)};
  Module m = nullptr;
  // PTX must be NUL-terminated; std::string's c_str() is.
  Result r = api_->cuModuleLoadDataEx(&m, image.c_str(), 4, options, values);
  if (r != kSuccess)
    throw Error("cuModuleLoadDataEx failed for kernel '" + kernelName + "': " + describeResult(r) +
                (errorLog[0] ? std::string("\ndriver JIT log:\n") + errorLog : std::string()));
  return m;
}
void CudaDriver::unloadModule(Module m) noexcept {
  if (available_ && m) api_->cuModuleUnload(m);
}
Function CudaDriver::getFunction(Module m, const std::string& kernelName) {
  require();
  Function f = nullptr;
  check(api_->cuModuleGetFunction(&f, m, kernelName.c_str()), "cuModuleGetFunction", kernelName);
  return f;
}
int CudaDriver::functionAttribute(Function f, int attribute, const std::string& kernelName) {
  require();
  int v = 0;
  check(api_->cuFuncGetAttribute(&v, attribute, f), "cuFuncGetAttribute", kernelName);
  return v;
}
void CudaDriver::setFunctionAttribute(Function f, int attribute, int value, const std::string& kernelName) {
  require();
  check(api_->cuFuncSetAttribute(f, attribute, value), "cuFuncSetAttribute", kernelName);
}
void CudaDriver::launch(Function f, const unsigned grid[3], const unsigned block[3], unsigned sharedBytes,
                        Stream stream, void** params, const std::string& kernelName) {
  require();
  check(api_->cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], sharedBytes, stream, params,
                             nullptr),
        "cuLaunchKernel", kernelName);
}

void CudaDriver::launchClusters(Function f, const unsigned grid[3], const unsigned block[3], const unsigned cluster[3],
                                unsigned sharedBytes, Stream stream, void** params, const std::string& kernelName) {
  require();
  if (!api_->cuLaunchKernelEx)
    throw Error("kernel '" + kernelName + "': a launch in thread-block clusters needs cuLaunchKernelEx (CUDA 12 " +
                "or later), which this driver does not have");
  LaunchAttribute clusterShape;
  clusterShape.id = kLaunchAttributeClusterDimension;
  for (int d = 0; d < 3; ++d) clusterShape.value[d] = cluster[d];
  const LaunchConfig config{grid[0], grid[1], grid[2], block[0], block[1], block[2], sharedBytes, stream,
                            &clusterShape, 1};
  check(api_->cuLaunchKernelEx(&config, f, params, nullptr), "cuLaunchKernelEx", kernelName);
}

int CudaDriver::maxActiveBlocksPerMultiprocessor(Function f, int blockThreads, size_t dynamicSharedBytes,
                                                 const std::string& kernelName) {
  require();
  if (!api_->cuOccupancyMaxActiveBlocksPerMultiprocessor)
    throw Error("kernel '" + kernelName + "': this CUDA driver has no cuOccupancyMaxActiveBlocksPerMultiprocessor, "
                "which a persistent launch needs to size its grid");
  int blocks = 0;
  check(api_->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, blockThreads, dynamicSharedBytes),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor", kernelName);
  return blocks;
}

CudaDriver::TensorMapBytes CudaDriver::encodeTensorMapTiled(int dataType, unsigned rank, DevicePtr base,
                                                          const uint64_t* dims, const uint64_t* byteStrides,
                                                          const uint32_t* box, int swizzle,
                                                          const std::string& kernelName) {
  require();
  if (!api_->cuTensorMapEncodeTiled)
    throw Error("kernel '" + kernelName + "' takes a tensor descriptor, and this CUDA driver has no " +
                "cuTensorMapEncodeTiled (CUDA 12 or later encodes tensor maps)");
  constexpr int kInterleaveNone = 0, kL2Promotion128B = 2, kOobFillZeros = 0;
  const uint32_t elementStrides[5] = {1, 1, 1, 1, 1};
  TensorMap map{};
  check(api_->cuTensorMapEncodeTiled(&map, dataType, rank, reinterpret_cast<void*>(base), dims, byteStrides, box,
                                     elementStrides, kInterleaveNone, swizzle, kL2Promotion128B, kOobFillZeros),
        "cuTensorMapEncodeTiled", kernelName);
  return map;
}

// ---- DeviceBuffer

DeviceBuffer::DeviceBuffer(size_t bytes, CudaDriver& driver) : driver_(&driver), bytes_(bytes) {
  ptr_ = driver.allocate(bytes);
}
DeviceBuffer::~DeviceBuffer() { reset(); }
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : driver_(o.driver_), ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = 0;
  o.bytes_ = 0;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    driver_ = o.driver_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = 0;
    o.bytes_ = 0;
  }
  return *this;
}
void DeviceBuffer::reset() noexcept {
  if (driver_ && ptr_) driver_->release(ptr_);
  ptr_ = 0;
  bytes_ = 0;
}
void DeviceBuffer::copyFromHost(const void* src, size_t bytes) {
  if (bytes > bytes_)
    throw Error("DeviceBuffer::copyFromHost: " + std::to_string(bytes) + " bytes do not fit in a buffer of " +
                std::to_string(bytes_));
  if (!driver_) throw Error("DeviceBuffer::copyFromHost on an empty (moved-from or default) buffer");
  driver_->copyToDevice(ptr_, src, bytes);
}
void DeviceBuffer::copyToHost(void* dst, size_t bytes) const {
  if (bytes > bytes_)
    throw Error("DeviceBuffer::copyToHost: asked for " + std::to_string(bytes) + " bytes from a buffer of " +
                std::to_string(bytes_));
  if (!driver_) throw Error("DeviceBuffer::copyToHost on an empty (moved-from or default) buffer");
  driver_->copyToHost(dst, ptr_, bytes);
}

}  // namespace tessera::jit
