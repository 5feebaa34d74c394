#include "jit/sim/SimRuntime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include "backends/Target.h"
#include "ir/Error.h"
#include "jit/CompiledKernel.h"
#include "jit/sim/HostJit.h"
#include "jit/sim/RuntimeSymbols.h"
#include "jit/sim/runtime/Launch.h"
#include "jit/sim/runtime/TensorMap.h"

namespace tessera::sim {

namespace {

constexpr size_t kAllocationAlignment = 256;  // as cuMemAlloc and hipMalloc give

// A loaded kernel: its host code and the program sim::launch runs. Module and function handles both point at it.
struct LoadedProgram {
  HostJit jit;
  Program program;
};

// The archs the emulator models and their targets, the default first.
constexpr std::pair<const char*, const char*> kEmulatedArchs[] = {
    {"sm_90a", "nvptx"}, {"sm_80", "nvptx"}, {"gfx90a", "amdgpu"}, {"gfx942", "amdgpu"}};

std::string targetOfArch(const std::string& arch) {
  std::string expected;
  for (const auto& [name, target] : kEmulatedArchs) {
    if (arch == name) return target;
    expected += std::string(expected.empty() ? "" : ", ") + name + " (" + target + ")";
  }
  throw Error("sim: cannot emulate arch '" + arch + "': expected " + expected);
}

}  // namespace

const std::vector<std::string>& emulatedArchs() {
  static const std::vector<std::string> archs = [] {
    std::vector<std::string> names;
    for (const auto& entry : kEmulatedArchs) names.push_back(entry.first);
    return names;
  }();
  return archs;
}

std::string emulatedArch(const std::string& target, const std::string& arch) {
  if (!target.empty() && target != "nvptx" && target != "amdgpu")
    throw Error("sim: unknown target '" + target + "': expected 'nvptx' or 'amdgpu'");
  if (arch.empty()) return target.empty() ? emulatedArchs().front() : backends::createTarget(target)->defaultArch();
  const std::string archTarget = targetOfArch(arch);
  if (!target.empty() && archTarget != target)
    throw Error("sim: arch '" + arch + "' is an " + archTarget + " arch, not one of target '" + target + "'");
  return arch;
}

SimRuntime::SimRuntime(const std::string& arch) : arch_(arch), target_(targetOfArch(arch)) {}

SimRuntime::~SimRuntime() {
  for (const auto& [address, bytes] : allocations_) std::free(reinterpret_cast<void*>(address));
}

jit::DeviceAddress SimRuntime::allocate(size_t bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
  void* p = std::aligned_alloc(kAllocationAlignment, rounded);
  if (!p) throw Error("sim: cannot allocate " + std::to_string(bytes) + " bytes of device (host) memory");
  std::lock_guard<std::mutex> lock(mutex_);
  allocations_[reinterpret_cast<uint64_t>(p)] = bytes;  // the kernel may touch `bytes`, not the rounding
  return reinterpret_cast<jit::DeviceAddress>(p);
}

void SimRuntime::release(jit::DeviceAddress p) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (allocations_.erase(p)) std::free(reinterpret_cast<void*>(p));
}

const std::pair<const uint64_t, size_t>* SimRuntime::allocationContaining(uint64_t address) const {
  auto it = allocations_.upper_bound(address);
  if (it == allocations_.begin()) return nullptr;
  --it;
  return address < it->first + std::max<size_t>(it->second, 1) ? &*it : nullptr;
}

void SimRuntime::checkRange(uint64_t address, size_t bytes, const char* what) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto* a = allocationContaining(address);
  if (!a || address + bytes > a->first + a->second)
    throw Error(std::string("sim: ") + what + " of " + std::to_string(bytes) + " bytes at device address " +
                std::to_string(address) + " is not inside one allocation of this runtime");
}

void SimRuntime::copyToDevice(jit::DeviceAddress dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  checkRange(dst, bytes, "copy to device");
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
}

void SimRuntime::copyToHost(void* dst, jit::DeviceAddress src, size_t bytes) {
  if (bytes == 0) return;
  checkRange(src, bytes, "copy to host");
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
}

jit::DeviceModule SimRuntime::loadModule(const jit::CompiledKernel& kernel) {
  if (kernel.target != target_ || kernel.arch != arch_)
    throw Error("sim: kernel '" + kernel.name + "' was compiled for " + kernel.target + " " + kernel.arch +
                "; this runtime emulates " + target_ + " " + arch_);
  if (kernel.optimizedLLVMIR.empty())
    throw Error("sim: kernel '" + kernel.name + "' has no optimized LLVM IR to run (a cache entry without it?)");
  // As the GPU refuses it: the driver's cuFuncSetAttribute on CUDA, the code object's loader on HIP.
  if (const int64_t limit = backends::createTarget(target_)->maxSharedBytes(arch_); limit > 0 && kernel.sharedBytes > limit)
    throw Error("sim: kernel '" + kernel.name + "' needs " + std::to_string(kernel.sharedBytes) +
                " bytes of shared memory, more than the " + std::to_string(limit) + " a program may have on " + arch_ +
                "; use smaller blocks or fewer stages");
  std::unique_ptr<LoadedProgram> loaded(new LoadedProgram{
      HostJit(rewriteForHost(kernel.optimizedLLVMIR, kernel.name + ".opt.ll"), runtimeSymbols()), Program{}});
  Program& p = loaded->program;
  p.kernel = loaded->jit.kernel();
  p.target = loaded->jit.target();
  p.warpSize = static_cast<uint32_t>(kernel.warpSize);
  p.numWarps = static_cast<uint32_t>(kernel.numWarps * kernel.consumerGroups + kernel.producerWarps);
  p.sharedBytes = static_cast<uint32_t>(kernel.sharedBytes);
  p.sites = loaded->jit.sites();
  p.entry = loaded->jit.entry();
  p.printfFormats = loaded->jit.printfFormats();
  for (int d = 0; d < 3; ++d) p.clusterDims[d] = static_cast<uint32_t>(kernel.clusterDims[d]);
  return loaded.release();
}

void SimRuntime::unloadModule(jit::DeviceModule m) noexcept { delete static_cast<LoadedProgram*>(m); }

jit::DeviceFunction SimRuntime::getFunction(jit::DeviceModule m, const std::string& kernelName) {
  auto* loaded = static_cast<LoadedProgram*>(m);
  if (loaded->program.kernel != kernelName)
    throw Error("sim: the loaded module holds kernel '" + loaded->program.kernel + "', not '" + kernelName + "'");
  return loaded;
}

int SimRuntime::registersPerThread(jit::DeviceFunction, const std::string& kernelName) {
  throw Error("kernel '" + kernelName + "': the emulator runs host code and has no register figures");
}

int SimRuntime::localBytesPerThread(jit::DeviceFunction, const std::string& kernelName) {
  throw Error("kernel '" + kernelName + "': the emulator runs host code and has no local-memory figures");
}

int64_t SimRuntime::residentPrograms(jit::DeviceFunction f, unsigned threadsPerProgram, int64_t,
                                     const std::string& kernelName) {
  struct Multiprocessor {
    const char* arch;
    unsigned count;
  };
  static constexpr Multiprocessor kFlagships[] = {{"sm_90a", 132}, {"sm_80", 108}, {"gfx90a", 110}, {"gfx942", 304}};
  constexpr int64_t kThreadsPerMultiprocessor = 2048, kProgramsPerMultiprocessor = 32;
  const Multiprocessor* gpu = nullptr;
  for (const Multiprocessor& m : kFlagships)
    if (arch_ == m.arch) gpu = &m;
  if (!gpu) throw Error("sim: no multiprocessor model for arch '" + arch_ + "'");
  // The kernel's shared memory comes with it (loadModule), as a static size does.
  const int64_t shared = static_cast<const LoadedProgram*>(f)->program.sharedBytes;
  int64_t perMultiprocessor = std::min<int64_t>(kProgramsPerMultiprocessor,
                                                kThreadsPerMultiprocessor / std::max(threadsPerProgram, 1u));
  if (shared > 0)
    perMultiprocessor = std::min(perMultiprocessor,
                                 backends::createTarget(target_)->sharedBytesPerMultiprocessor(arch_) / shared);
  if (perMultiprocessor < 1)
    throw Error("sim: kernel '" + kernelName + "': one program (" + std::to_string(threadsPerProgram) + " threads, " +
                std::to_string(shared) + " bytes of shared memory) does not fit on a multiprocessor of " + arch_);
  return static_cast<int64_t>(multiprocessors_ ? multiprocessors_ : gpu->count) * perMultiprocessor;
}

void SimRuntime::launchClusters(jit::DeviceFunction f, const unsigned grid[3], const unsigned block[3],
                                const unsigned cluster[3], unsigned sharedBytes, jit::DeviceStream stream,
                                void** params, const std::string& kernelName) {
  // The program runs in the clusters its kernel was compiled for (CompiledKernel::clusterDims), as CUDA's would.
  const std::array<uint32_t, 3>& compiled = static_cast<const LoadedProgram*>(f)->program.clusterDims;
  if (cluster[0] != compiled[0] || cluster[1] != compiled[1] || cluster[2] != compiled[2])
    throw Error("sim: kernel '" + kernelName + "' was compiled for clusters of " + std::to_string(compiled[0]) + "x" +
                std::to_string(compiled[1]) + "x" + std::to_string(compiled[2]) + " programs");
  launch(f, grid, block, sharedBytes, stream, params, kernelName);
}

void SimRuntime::launch(jit::DeviceFunction f, const unsigned grid[3], const unsigned block[3], unsigned,
                        jit::DeviceStream, void** params, const std::string& kernelName) {
  const auto* loaded = static_cast<const LoadedProgram*>(f);
  const Program& program = loaded->program;
  const uint32_t threads = program.numWarps * program.warpSize;
  if (block[0] != threads || block[1] != 1 || block[2] != 1)
    throw Error("sim: kernel '" + kernelName + "' runs blocks of " + std::to_string(threads) + " threads; the launch " +
                "asked for " + std::to_string(block[0]) + "x" + std::to_string(block[1]) + "x" +
                std::to_string(block[2]));
  LaunchConfig config;
  config.checks = checks_;
  config.threads = hostThreads_;
  {
    // The memory the kernel may touch: the allocations its pointer arguments point into.
    std::lock_guard<std::mutex> lock(mutex_);
    for (uint32_t i : loaded->jit.pointerParameters()) {
      uint64_t address = 0;
      std::memcpy(&address, params[i], sizeof address);
      if (const auto* a = allocationContaining(address)) config.allocations.push_back({a->first, a->second});
    }
    // Parameters passed by value are read where the launch keeps them.
    for (const auto& [i, bytes] : loaded->jit.byValueParameters())
      config.allocations.push_back({reinterpret_cast<uint64_t>(params[i]), bytes});
  }
  Report report = sim::launch(program, {grid[0], grid[1], grid[2]}, params, config);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lastReport_ = report;
  }
  report.throwIfFailed();
}

jit::TensorMapBytes SimRuntime::encodeTensorMap(const jit::TensorMapRequest& r, const std::string& kernelName) {
  TensorMapFields f;
  f.rank = r.rank;
  f.elementBytes = static_cast<uint32_t>(r.element.storageBytes());
  f.globalAddress = r.base;
  for (uint32_t d = 0; d < r.rank && d < kTensorMapMaxRank; ++d) {
    f.dims[d] = r.dims[d];
    f.strides[d] = r.byteStrides[d];
    f.box[d] = r.box[d];
  }
  f.swizzleBytes = static_cast<uint32_t>(r.swizzleBytes);
  if (std::string why = tensorMapError(f); !why.empty())
    throw Error("sim: kernel '" + kernelName + "': cannot encode its tensor map: " + why);
  return sim::encodeTensorMap(f);
}

std::optional<Report> SimRuntime::lastReport() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lastReport_;
}

std::optional<Report> SimRuntime::takeLastReport() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(lastReport_, std::nullopt);
}

SimRuntime& simRuntime(const std::string& arch, Checks checks) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<SimRuntime>> runtimes;
  std::lock_guard<std::mutex> lock(mutex);
  const std::pair key{arch, checks.str()};
  auto it = runtimes.find(key);
  if (it == runtimes.end()) {
    it = runtimes.emplace(key, std::make_unique<SimRuntime>(arch)).first;
    it->second->setChecks(checks);
  }
  return *it->second;
}

}  // namespace tessera::sim
