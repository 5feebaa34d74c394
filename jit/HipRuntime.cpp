#include "jit/HipRuntime.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "ir/Error.h"
#include "jit/DeviceRuntime.h"
#include "jit/LoadedKernel.h"
#include "jit/StreamWait.h"

namespace tessera::jit {

// The HIP entry points Tessera uses, with their C signatures (hip_runtime_api.h, HIP 5.x).
struct HipRuntime::Api {
  hip::Error (*init)(unsigned);
  hip::Error (*getDeviceCount)(int*);
  hip::Error (*moduleLoadData)(hip::Module*, const void*);
  hip::Error (*moduleUnload)(hip::Module);
  hip::Error (*moduleGetFunction)(hip::Function*, hip::Module, const char*);
  hip::Error (*moduleLaunchKernel)(hip::Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   hip::Stream, void**, void**);
  hip::Error (*malloc)(void**, size_t);
  hip::Error (*free)(void*);
  hip::Error (*memcpy)(void*, const void*, size_t, int);
  hip::Error (*memset)(void*, int, size_t);
  hip::Error (*streamCreate)(hip::Stream*);
  hip::Error (*streamSynchronize)(hip::Stream);
  hip::Error (*streamQuery)(hip::Stream);
  hip::Error (*eventCreate)(hip::Event*);
  hip::Error (*eventDestroy)(hip::Event);
  hip::Error (*eventRecord)(hip::Event, hip::Stream);
  hip::Error (*eventSynchronize)(hip::Event);
  hip::Error (*eventElapsedTime)(float*, hip::Event, hip::Event);
  const char* (*getErrorName)(hip::Error);
  const char* (*getErrorString)(hip::Error);
  // Resolved when present; only persistent launches need it.
  hip::Error (*moduleOccupancyMaxActiveBlocksPerMultiprocessor)(int*, hip::Function, int, size_t);
};

HipRuntime& HipRuntime::instance() {
  static HipRuntime runtime([] {
    if (const char* env = std::getenv("TESSERA_LIBAMDHIP"); env && *env) return std::vector<std::string>{env};
    return std::vector<std::string>{"libamdhip64.so", "libamdhip64.so.5"};
  }());
  return runtime;
}

HipRuntime::HipRuntime(const std::vector<std::string>& libraryPaths) : api_(std::make_unique<Api>()) {
  std::string tried;
  for (const std::string& path : libraryPaths) {
    library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library_) break;
    const char* err = dlerror();
    tried += (tried.empty() ? "" : "; ") + (err ? std::string(err) : path + ": cannot be loaded");
  }
  if (!library_) {
    reason_ = "the HIP runtime library could not be loaded (" + tried + ")";
    return;
  }
  auto resolve = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(library_, name));
    if (!fn && reason_.empty()) reason_ = std::string("the HIP runtime library has no symbol ") + name;
  };
  resolve(api_->init, "hipInit");
  resolve(api_->getDeviceCount, "hipGetDeviceCount");
  resolve(api_->moduleLoadData, "hipModuleLoadData");
  resolve(api_->moduleUnload, "hipModuleUnload");
  resolve(api_->moduleGetFunction, "hipModuleGetFunction");
  resolve(api_->moduleLaunchKernel, "hipModuleLaunchKernel");
  resolve(api_->malloc, "hipMalloc");
  resolve(api_->free, "hipFree");
  resolve(api_->memcpy, "hipMemcpy");
  resolve(api_->streamCreate, "hipStreamCreate");
  resolve(api_->streamSynchronize, "hipStreamSynchronize");
  resolve(api_->streamQuery, "hipStreamQuery");
  resolve(api_->memset, "hipMemset");
  resolve(api_->eventCreate, "hipEventCreate");
  resolve(api_->eventDestroy, "hipEventDestroy");
  resolve(api_->eventRecord, "hipEventRecord");
  resolve(api_->eventSynchronize, "hipEventSynchronize");
  resolve(api_->eventElapsedTime, "hipEventElapsedTime");
  resolve(api_->getErrorName, "hipGetErrorName");
  resolve(api_->getErrorString, "hipGetErrorString");
  api_->moduleOccupancyMaxActiveBlocksPerMultiprocessor =
      reinterpret_cast<decltype(api_->moduleOccupancyMaxActiveBlocksPerMultiprocessor)>(
          dlsym(library_, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor"));
  if (!reason_.empty()) return;
  if (hip::Error e = api_->init(0); e != hip::kSuccess) {
    reason_ = std::string("hipInit failed: ") + api_->getErrorName(e) + " (" + api_->getErrorString(e) + ")";
    return;
  }
  int count = 0;
  if (hip::Error e = api_->getDeviceCount(&count); e != hip::kSuccess || count == 0) {
    reason_ = e != hip::kSuccess ? std::string("hipGetDeviceCount failed: ") + api_->getErrorName(e)
                                 : std::string("the HIP runtime found no AMD GPU");
    return;
  }
  available_ = true;
}

HipRuntime::~HipRuntime() = default;  // the library stays loaded: HIP's own exit handlers run after ours

void HipRuntime::require(const char* what) const {
  if (!available_) throw Error(std::string(what) + ": HIP is not available: " + reason_);
}

void HipRuntime::check(hip::Error e, const char* call, const std::string& kernelName) const {
  if (e == hip::kSuccess) return;
  throw Error(std::string(call) + " failed" + (kernelName.empty() ? "" : " for kernel '" + kernelName + "'") + ": " +
              api_->getErrorName(e) + " (" + api_->getErrorString(e) + ")");
}

int HipRuntime::deviceCount() const {
  require("hipGetDeviceCount");
  int n = 0;
  check(api_->getDeviceCount(&n), "hipGetDeviceCount");
  return n;
}

hip::DevicePtr HipRuntime::allocate(size_t bytes) {
  require("hipMalloc");
  void* p = nullptr;
  check(api_->malloc(&p, bytes), "hipMalloc");
  return p;
}

void HipRuntime::release(hip::DevicePtr p) noexcept {
  if (!available_ || !p) return;
  if (hip::Error e = api_->free(p); e != hip::kSuccess) std::fprintf(stderr, "tessera: hipFree failed: %s\n", api_->getErrorName(e));
}

void HipRuntime::copyToDevice(hip::DevicePtr dst, const void* src, size_t bytes) {
  require("hipMemcpy");
  check(api_->memcpy(dst, src, bytes, hip::kMemcpyHostToDevice), "hipMemcpy (host to device)");
}

void HipRuntime::copyToHost(void* dst, hip::DevicePtr src, size_t bytes) {
  require("hipMemcpy");
  check(api_->memcpy(dst, src, bytes, hip::kMemcpyDeviceToHost), "hipMemcpy (device to host)");
}

void HipRuntime::fillBytes(hip::DevicePtr dst, uint8_t value, size_t bytes) {
  require("hipMemset");
  check(api_->memset(dst, value, bytes), "hipMemset");
}

hip::Event HipRuntime::createEvent() {
  require("hipEventCreate");
  hip::Event e = nullptr;
  check(api_->eventCreate(&e), "hipEventCreate");
  return e;
}

void HipRuntime::destroyEvent(hip::Event e) noexcept {
  if (available_ && e) api_->eventDestroy(e);
}

void HipRuntime::recordEvent(hip::Event e, hip::Stream s) {
  require("hipEventRecord");
  check(api_->eventRecord(e, s), "hipEventRecord");
}

float HipRuntime::elapsedMilliseconds(hip::Event start, hip::Event end) {
  require("hipEventElapsedTime");
  check(api_->eventSynchronize(end), "hipEventSynchronize");
  float ms = 0;
  check(api_->eventElapsedTime(&ms, start, end), "hipEventElapsedTime");
  return ms;
}

hip::Stream HipRuntime::createStream() {
  require("hipStreamCreate");
  hip::Stream s = nullptr;
  check(api_->streamCreate(&s), "hipStreamCreate");
  return s;
}

void HipRuntime::synchronize(hip::Stream s, const std::string& kernelName) {
  require("hipStreamSynchronize");
  // Asynchronous kernel faults surface here; name the kernel that was last launched when the caller knows it.
  const double limit = gpuTimeoutSeconds();
  if (limit == 0) {
    check(api_->streamSynchronize(s), "hipStreamSynchronize", kernelName);
    return;
  }
  // Poll: a blocking wait could not be given up.
  pollUntilFinished(
      [&] {
        const hip::Error e = api_->streamQuery(s);
        if (e == hip::kNotReady) return false;
        check(e, "hipStreamQuery", kernelName);
        return true;
      },
      limit, kernelName);
}

int HipRuntime::maxActiveBlocksPerComputeUnit(hip::Function f, int blockThreads, size_t dynamicSharedBytes,
                                              const std::string& kernelName) {
  require("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor");
  if (!api_->moduleOccupancyMaxActiveBlocksPerMultiprocessor)
    throw Error("kernel '" + kernelName + "': this HIP runtime has no hipModuleOccupancyMaxActiveBlocksPerMultiprocessor, "
                "which a persistent launch needs to size its grid");
  int blocks = 0;
  check(api_->moduleOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, blockThreads, dynamicSharedBytes),
        "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", kernelName);
  return blocks;
}

hip::Module HipRuntime::loadModule(const std::string& codeObject, const std::string& kernelName) {
  require(("hipModuleLoadData (kernel '" + kernelName + "')").c_str());
  hip::Module m = nullptr;
  check(api_->moduleLoadData(&m, codeObject.data()), "hipModuleLoadData", kernelName);
  return m;
}

void HipRuntime::unloadModule(hip::Module m) noexcept {
  if (!available_ || !m) return;
  if (hip::Error e = api_->moduleUnload(m); e != hip::kSuccess)
    std::fprintf(stderr, "tessera: hipModuleUnload failed: %s\n", api_->getErrorName(e));
}

hip::Function HipRuntime::getFunction(hip::Module m, const std::string& kernelName) {
  require(("hipModuleGetFunction (kernel '" + kernelName + "')").c_str());
  hip::Function f = nullptr;
  check(api_->moduleGetFunction(&f, m, kernelName.c_str()), "hipModuleGetFunction", kernelName);
  return f;
}

void HipRuntime::launch(hip::Function f, const unsigned grid[3], const unsigned block[3], unsigned sharedBytes,
                        hip::Stream stream, void** params, const std::string& kernelName) {
  require(("hipModuleLaunchKernel (kernel '" + kernelName + "')").c_str());
  check(api_->moduleLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], sharedBytes, stream, params,
                                 nullptr),
        "hipModuleLaunchKernel", kernelName);
}

void HipRuntime::launchKernel(const CompiledKernel& kernel, const std::vector<ir::Type>& paramTypes,
                              const std::array<int64_t, 3>& grid, const std::vector<KernelArg>& args,
                              hip::Stream stream) {
  if (kernel.target != "amdgpu" || kernel.format != "hsaco")
    throw Error("cannot launch kernel '" + kernel.name + "' with HIP: it was compiled for " + kernel.target + " (" +
                kernel.format + "), not amdgpu (hsaco)");
  if (args.size() != paramTypes.size())
    throw Error("kernel '" + kernel.name + "' takes " + std::to_string(paramTypes.size()) + " arguments, got " +
                std::to_string(args.size()));
  for (int64_t g : grid)
    if (g <= 0 || g > INT32_MAX) throw Error("kernel '" + kernel.name + "': grid dimensions must be in [1, 2^31)");
  // Pack before touching the runtime, so argument mistakes are reported the same way with or without a GPU.
  std::vector<std::vector<uint8_t>> packed;
  for (size_t i = 0; i < args.size(); ++i) packed.push_back(packKernelArgument(paramTypes[i], args[i], kernel.name, i));
  require(("launching kernel '" + kernel.name + "'").c_str());
  hip::Module module = nullptr;
  for (const auto& [bytes, m] : modules_)
    if (bytes == kernel.binary) module = m;
  if (!module) {
    module = loadModule(kernel.binary, kernel.name);
    modules_.emplace_back(kernel.binary, module);
  }
  hip::Function f = getFunction(module, kernel.name);
  std::vector<void*> params;
  for (auto& p : packed) params.push_back(p.data());
  const unsigned threads = static_cast<unsigned>(kernel.threadsPerProgram());
  // HIP's grid is in programs (blocks), like CUDA's; LDS is static in the code object, so no dynamic bytes.
  const unsigned g[3] = {static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2])};
  const unsigned block[3] = {threads, 1, 1};
  launch(f, g, block, 0, stream, params.data(), kernel.name);
}

std::string firstAvailableTarget() { return selectRuntime("auto").target(); }

}  // namespace tessera::jit
