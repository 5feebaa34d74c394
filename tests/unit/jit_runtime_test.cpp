// The target-neutral device runtime (jit/DeviceRuntime.h): choosing a runtime by target name or "auto", the HIP
// path's errors through JitKernel on machines without HIP, compileOnly for nvptx and amdgpu through one
// JitKernel and one cache, and LoadedKernel's shared launch path over a recording runtime (no GPU needed).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <new>
#include <regex>
#include <tuple>

#include "ScopedEnv.h"
#include "backends/Target.h"
#include "ir/Error.h"
#include "jit/AutotunedKernel.h"
#include "jit/DeviceRuntime.h"
#include "jit/JitKernel.h"
#include "tessera/kernels/vector_add.h"

using namespace tessera;
using namespace tessera::jit;

namespace {

std::string messageOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no tessera::Error thrown)";
}

bool contains(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

// A runtime that records what it is asked to do; `available` and `reason` are set by each test.
class RecordingRuntime final : public DeviceRuntime {
 public:
  RecordingRuntime(std::string target, std::string api, std::string format)
      : target_(std::move(target)), api_(std::move(api)), format_(std::move(format)) {}

  std::string target() const override { return target_; }
  std::string apiName() const override { return api_; }
  std::string binaryFormat() const override { return format_; }
  bool available() const override { return isAvailable; }
  std::string unavailableReason() const override { return reason; }
  std::string nativeArch() const override { return "native"; }
  DeviceAddress allocate(size_t) override { return 0x1000; }
  void release(DeviceAddress) noexcept override {}
  void copyToDevice(DeviceAddress, const void*, size_t) override {}
  void copyToHost(void*, DeviceAddress, size_t) override {}
  void synchronize(DeviceStream, const std::string&) override {}
  DeviceModule loadModule(const CompiledKernel& kernel) override {
    loadedBinary = kernel.binary;
    ++modulesLoaded;
    return &modulesLoaded;
  }
  void unloadModule(DeviceModule m) noexcept override {
    if (m == &modulesLoaded) --modulesLoaded;
  }
  DeviceFunction getFunction(DeviceModule, const std::string& kernelName) override {
    functionName = kernelName;
    return &functionName;
  }
  bool launchesWithDynamicSharedMemory() const override { return dynamicShared; }
  void raiseSharedMemoryLimit(DeviceFunction, int64_t bytes, const std::string&) override { raisedTo = bytes; }
  int registersPerThread(DeviceFunction, const std::string&) override { return 32; }
  int localBytesPerThread(DeviceFunction, const std::string&) override { return 0; }
  int64_t residentPrograms(DeviceFunction, unsigned threads, int64_t sharedBytes,
                           const std::string& kernelName) override {
    if (resident < 0) return DeviceRuntime::residentPrograms(nullptr, threads, sharedBytes, kernelName);
    ++residentQueries;
    residentAskedFor = {threads, sharedBytes};
    return resident;
  }
  void launch(DeviceFunction, const unsigned grid[3], const unsigned block[3], unsigned sharedBytes,
              DeviceStream stream, void** params, const std::string&) override {
    for (int d = 0; d < 3; ++d) lastGrid[d] = grid[d], lastBlock[d] = block[d];
    lastInts.clear();
    for (int i = recordIntsFrom; params && recordIntsFrom >= 0 && i < recordIntsFrom + 3; ++i) {
      int32_t v;
      std::memcpy(&v, params[i], 4);
      lastInts.push_back(v);
    }
    lastShared = sharedBytes;
    lastStream = stream.handle();
    lastFirstParam = 0;
    if (params) std::memcpy(&lastFirstParam, params[0], firstParamBytes);
    ++launches;
  }

  bool isAvailable = false;
  std::string reason = "no device";
  bool dynamicShared = true;
  std::string loadedBinary, functionName;
  int modulesLoaded = 0, launches = 0;
  int64_t raisedTo = -1;
  unsigned lastGrid[3] = {}, lastBlock[3] = {}, lastShared = 0;
  void* lastStream = nullptr;
  uint64_t lastFirstParam = 0;
  size_t firstParamBytes = 8;  // how many bytes of the first parameter to record (a pointer's)
  int64_t resident = -1;        // what residentPrograms answers; < 0: the default (it cannot tell)
  int residentQueries = 0;
  std::pair<unsigned, int64_t> residentAskedFor;
  int recordIntsFrom = -1;  // the parameter where three i32 to record start (a persistent grid's); < 0: none
  std::vector<int32_t> lastInts;

 private:
  std::string target_, api_, format_;
};

std::vector<KernelArg> vectorAddArgs() {
  return {KernelArg::pointer(256), KernelArg::pointer(512), KernelArg::pointer(768), int32_t(4096)};
}

bool targetAvailable(const char* name, std::string& why) {
  try {
    backends::createTarget(name);
    return true;
  } catch (const Error& e) {
    why = std::string("no ") + name + " target: " + e.what();
    return false;
  }
}

}  // namespace

// What is kept per runtime (loaded modules, autotuning's facts about the device) is found by the runtime's
// instance id, never by its address: the allocator may give a new runtime the address of one destroyed before it
// (tests make one per test), and the new one must not inherit what was kept for the old.
TEST(DeviceRuntimeIdentity, ARuntimeMadeWhereADestroyedOneWasIsANewRuntime) {
  alignas(RecordingRuntime) unsigned char storage[sizeof(RecordingRuntime)];
  auto* first = new (storage) RecordingRuntime("nvptx", "FirstAPI", "ptx");
  const uint64_t firstId = first->instanceId();
  EXPECT_TRUE(contains(tuningDeviceFor(first, "nvptx", "sm_90a").identity, "FirstAPI"));
  first->~RecordingRuntime();
  auto* second = new (storage) RecordingRuntime("nvptx", "SecondAPI", "ptx");
  ASSERT_EQ(static_cast<void*>(second), static_cast<void*>(first));
  EXPECT_NE(second->instanceId(), firstId);
  const std::string identity = tuningDeviceFor(second, "nvptx", "sm_90a").identity;
  EXPECT_TRUE(contains(identity, "SecondAPI")) << identity;
  second->~RecordingRuntime();
}

TEST(JitRuntimeSelection, AutoWithoutAnyDeviceListsWhyEachTargetIsUnavailable) {
  RecordingRuntime cuda("nvptx", "CUDA", "ptx"), hip("amdgpu", "HIP", "hsaco");
  cuda.reason = "libcuda.so.1 is missing";
  hip.reason = "libamdhip64.so is missing";
  std::string msg = messageOf([&] { selectRuntime("auto", {&hip, &cuda}); });
  EXPECT_TRUE(contains(msg, "no GPU is available for target 'auto'")) << msg;
  size_t nvptx = msg.find("nvptx (CUDA: libcuda.so.1 is missing)");
  size_t amdgpu = msg.find("amdgpu (HIP: libamdhip64.so is missing)");
  ASSERT_NE(nvptx, std::string::npos) << msg;
  ASSERT_NE(amdgpu, std::string::npos) << msg;
  EXPECT_LT(nvptx, amdgpu) << "reasons follow the preference order, whatever order the candidates come in";
}

TEST(JitRuntimeSelection, AutoPrefersNvptxThenAmdgpu) {
  RecordingRuntime cuda("nvptx", "CUDA", "ptx"), hip("amdgpu", "HIP", "hsaco");
  hip.isAvailable = true;
  EXPECT_EQ(&selectRuntime("auto", {&cuda, &hip}), &hip);
  cuda.isAvailable = true;
  EXPECT_EQ(&selectRuntime("auto", {&hip, &cuda}), &cuda);
}

TEST(JitRuntimeSelection, AnExplicitTargetIsNeverReplacedByAnother) {
  RecordingRuntime cuda("nvptx", "CUDA", "ptx"), hip("amdgpu", "HIP", "hsaco");
  cuda.isAvailable = true;
  hip.reason = "the HIP runtime found no AMD GPU";
  EXPECT_EQ(&selectRuntime("nvptx", {&cuda, &hip}), &cuda);
  std::string msg = messageOf([&] { selectRuntime("amdgpu", {&cuda, &hip}); });
  EXPECT_TRUE(contains(msg, "target 'amdgpu' cannot run kernels here: HIP is not available: "
                            "the HIP runtime found no AMD GPU"))
      << msg;
}

TEST(JitRuntimeSelection, UnknownTargetNamesTheChoices) {
  RecordingRuntime cuda("nvptx", "CUDA", "ptx");
  std::string msg = messageOf([&] { selectRuntime("cuda", {&cuda}); });
  EXPECT_TRUE(contains(msg, "unknown GPU target 'cuda': expected 'auto', 'nvptx' or 'amdgpu'")) << msg;
}

// The process-wide selection over the real CUDA driver and HIP runtime. Neither has a device on the machines
// this was written on; where one does, the test checks that it is chosen instead.
TEST(JitRuntimeSelection, ProcessWideAutoOnThisMachine) {
  CudaDriver& cuda = CudaDriver::instance();
  HipRuntime& hip = HipRuntime::instance();
  if (cuda.available()) {
    EXPECT_EQ(selectRuntime("auto").target(), "nvptx");
    EXPECT_EQ(firstAvailableTarget(), "nvptx");
    return;
  }
  if (hip.available()) {
    EXPECT_EQ(selectRuntime("auto").target(), "amdgpu");
    return;
  }
  std::string msg = messageOf([] { selectRuntime("auto"); });
  EXPECT_TRUE(contains(msg, "nvptx (CUDA: " + cuda.unavailableReason() + ")")) << msg;
  EXPECT_TRUE(contains(msg, "amdgpu (HIP: " + hip.unavailableReason() + ")")) << msg;
  EXPECT_EQ(messageOf([] { firstAvailableTarget(); }), msg);
  msg = messageOf([] { selectRuntime("amdgpu"); });
  EXPECT_TRUE(contains(msg, "HIP is not available: " + hip.unavailableReason())) << msg;
}

TEST(JitRuntimeHipPath, LaunchWithoutHipSaysWhyAndLoadsNothing) {
  CudaDriver cuda("libcuda-that-does-not-exist.so.1");
  HipRuntime hip({"/nonexistent/libamdhip64.so"});
  KernelCache cache{std::filesystem::path()};
  JitKernel k(kernels::vector_add_kernel(), cache, cuda, hip);
  LaunchOptions options;
  options.target = "amdgpu";
  options.arch = "gfx90a";
  std::string msg = messageOf([&] { k.launch({4, 1, 1}, vectorAddArgs(), {{"BLOCK", 1024}}, options); });
  EXPECT_TRUE(contains(msg, "cannot launch kernel 'vector_add': HIP is not available: " + hip.unavailableReason()))
      << msg;
  msg = messageOf([&] { k.prepare(vectorAddArgs(), {{"BLOCK", 1024}}, options); });
  EXPECT_TRUE(contains(msg, "HIP is not available")) << msg;
  // The CUDA path of the same kernel still reports CUDA's reason, not HIP's.
  options.target = "nvptx";
  options.arch = "";
  msg = messageOf([&] { k.launch({4, 1, 1}, vectorAddArgs(), {{"BLOCK", 1024}}, options); });
  EXPECT_TRUE(contains(msg, "cannot launch kernel 'vector_add': CUDA is not available: " + cuda.unavailableReason()))
      << msg;
  options.target = "auto";
  msg = messageOf([&] { k.launch({4, 1, 1}, vectorAddArgs(), {{"BLOCK", 1024}}, options); });
  EXPECT_TRUE(contains(msg, "no GPU is available for target 'auto'")) << msg;
  EXPECT_TRUE(contains(msg, "amdgpu (HIP: " + hip.unavailableReason() + ")")) << msg;
  EXPECT_EQ(k.loadedVariants(), 0u);
  EXPECT_EQ(cache.stats().compiles, 0) << "nothing is compiled for a launch that cannot happen";
}

TEST(JitRuntimeCompileOnly, OneJitKernelCompilesForNvptxAndAmdgpuThroughOneCache) {
  std::string why;
  if (!targetAvailable("nvptx", why) || !targetAvailable("amdgpu", why)) GTEST_SKIP() << why;
  CudaDriver cuda("libcuda-that-does-not-exist.so.1");
  HipRuntime hip({"/nonexistent/libamdhip64.so"});
  KernelCache cache{std::filesystem::path()};
  JitKernel k(kernels::vector_add_kernel(), cache, cuda, hip);
  const Constants constants = {{"BLOCK", 1024}};

  LaunchOptions nv;
  nv.arch = "sm_90a";
  auto ptx = k.compileOnly(vectorAddArgs(), constants, nv);
  EXPECT_EQ(ptx->target, "nvptx");
  EXPECT_EQ(ptx->format, "ptx");
  EXPECT_EQ(ptx->warpSize, 32);
  EXPECT_TRUE(contains(ptx->binary, ".entry vector_add"));

  for (const char* arch : {"gfx90a", "gfx942"}) {
    SCOPED_TRACE(arch);
    LaunchOptions amd;
    amd.target = "amdgpu";
    amd.arch = arch;
    auto hsaco = k.compileOnly(vectorAddArgs(), constants, amd);
    EXPECT_EQ(hsaco->target, "amdgpu");
    EXPECT_EQ(hsaco->arch, arch);
    EXPECT_EQ(hsaco->format, "hsaco");
    EXPECT_EQ(hsaco->warpSize, 64);
    EXPECT_EQ(hsaco->threadsPerProgram(), 256);
    EXPECT_EQ(hsaco->binary.substr(0, 4), "\x7f" "ELF");
    EXPECT_TRUE(contains(hsaco->binary, "vector_add"));
    EXPECT_EQ(k.compileOnly(vectorAddArgs(), constants, amd).get(), hsaco.get()) << "second compile is a cache hit";
  }
  // An empty arch falls back to the target's default without touching a device.
  LaunchOptions amdDefault;
  amdDefault.target = "amdgpu";
  EXPECT_EQ(k.compileOnly(vectorAddArgs(), constants, amdDefault)->arch, backends::createTarget("amdgpu")->defaultArch());
  EXPECT_EQ(k.compileOnly(vectorAddArgs(), constants, nv).get(), ptx.get());
  KernelCache::Stats stats = cache.stats();
  EXPECT_GE(stats.compiles, 3);  // ptx, gfx90a, gfx942 (and the default arch, unless it is one of those)
  EXPECT_GE(stats.memoryHits, 3);
  EXPECT_EQ(stats.compiles + stats.memoryHits, 7);
  EXPECT_EQ(k.loadedVariants(), 0u);
}

TEST(JitRuntimeLoadedKernel, HipStyleRuntimeLaunchesWavefrontsWithStaticLds) {
  auto compiled = std::make_shared<CompiledKernel>();
  compiled->name = "scale";
  compiled->target = "amdgpu";
  compiled->format = "hsaco";
  compiled->numWarps = 4;
  compiled->warpSize = 64;
  compiled->sharedBytes = 96 * 1024;
  compiled->binary = "\x7f" "ELF code object";
  RecordingRuntime hip("amdgpu", "HIP", "hsaco");
  hip.isAvailable = true;
  hip.dynamicShared = false;
  std::vector<ir::Type> params = {ir::Type::ptr(ir::Type::f32()), ir::Type::i32()};
  {
    LoadedKernel loaded(compiled, params, hip);
    EXPECT_EQ(hip.loadedBinary, compiled->binary);
    EXPECT_EQ(hip.functionName, "scale");
    EXPECT_EQ(hip.raisedTo, -1) << "LDS is static: no limit to raise";
    int fakeStream = 0;
    loaded.launch({3, 2, 1}, {KernelArg::pointer(0xabc0), 7}, DeviceStream::fromHandle(&fakeStream));
    EXPECT_EQ(hip.launches, 1);
    EXPECT_EQ(hip.lastBlock[0], 256u);
    EXPECT_EQ(hip.lastGrid[0], 3u);
    EXPECT_EQ(hip.lastGrid[1], 2u);
    EXPECT_EQ(hip.lastShared, 0u);
    EXPECT_EQ(hip.lastStream, &fakeStream);
    EXPECT_EQ(hip.lastFirstParam, 0xabc0u);
    std::string msg = messageOf([&] { loaded.launch({1, 1, 1}, {KernelArg::pointer(0xabc0)}, nullptr); });
    EXPECT_TRUE(contains(msg, "takes 2 arguments, got 1")) << msg;
    EXPECT_EQ(hip.modulesLoaded, 1);
  }
  EXPECT_EQ(hip.modulesLoaded, 0) << "the module is unloaded with the LoadedKernel";
}

TEST(JitRuntimeLoadedKernel, CudaStyleRuntimeRaisesTheSharedLimitAndPassesDynamicBytes) {
  auto compiled = std::make_shared<CompiledKernel>();
  compiled->name = "big_smem";
  compiled->target = "nvptx";
  compiled->format = "ptx";
  compiled->numWarps = 8;
  compiled->warpSize = 32;
  compiled->sharedBytes = 64 * 1024;
  RecordingRuntime cuda("nvptx", "CUDA", "ptx");
  cuda.isAvailable = true;
  LoadedKernel loaded(compiled, {ir::Type::i32()}, cuda);
  EXPECT_EQ(cuda.raisedTo, 64 * 1024);
  cuda.firstParamBytes = 4;  // the i32, packed in 4 bytes
  loaded.launch({1, 1, 1}, {5}, nullptr);
  EXPECT_EQ(cuda.lastFirstParam, 5u);
  EXPECT_EQ(cuda.lastBlock[0], 256u);
  EXPECT_EQ(cuda.lastShared, 64u * 1024);
}

TEST(JitRuntimeLoadedKernel, ABinaryOfTheOtherTargetIsRefusedBeforeLoading) {
  auto compiled = std::make_shared<CompiledKernel>();
  compiled->name = "k";
  compiled->target = "nvptx";
  compiled->format = "ptx";
  RecordingRuntime hip("amdgpu", "HIP", "hsaco");
  hip.isAvailable = true;
  std::string msg = messageOf([&] { LoadedKernel loaded(compiled, {}, hip); });
  EXPECT_TRUE(contains(msg, "kernel 'k' was compiled for nvptx (ptx); the HIP runtime loads only hsaco")) << msg;
  EXPECT_EQ(hip.modulesLoaded, 0);
}

// TESSERA_TIMINGS=1 times the module load; loading PTX is where the CUDA driver runs its ptxas.
TEST(JitRuntimeLoadedKernel, TimingsNameTheModuleLoad) {
  testing_support::ScopedEnv timings("TESSERA_TIMINGS", "1");
  for (auto [target, api, format, stage] :
       {std::tuple<const char*, const char*, const char*, const char*>{"nvptx", "CUDA", "ptx", "ptxas and load module"},
        {"amdgpu", "HIP", "hsaco", "load module"}}) {
    SCOPED_TRACE(target);
    auto compiled = std::make_shared<CompiledKernel>();
    compiled->name = "k";
    compiled->target = target;
    compiled->arch = "arch_1";
    compiled->format = format;
    RecordingRuntime runtime(target, api, format);
    runtime.isAvailable = true;
    testing::internal::CaptureStderr();
    LoadedKernel loaded(compiled, {}, runtime);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(std::regex_match(err, std::regex(std::string("tessera timing: @k ") + target + " arch_1: " + stage +
                                                 ": [0-9]+\\.[0-9]{3} ms\n")))
        << err;
    EXPECT_EQ(runtime.modulesLoaded, 1);
  }
}

// A persistent kernel (CompiledKernel::persistent) starts min(tiles, resident programs) programs in x and passes
// the grid it was asked for as three trailing i32 arguments; grids the tile index (an i32) cannot count are refused,
// and a runtime that cannot count resident programs refuses to load it.
TEST(JitRuntimeLoadedKernel, PersistentKernelsRunTheGridsTilesOnTheResidentPrograms) {
  auto compiled = std::make_shared<CompiledKernel>();
  compiled->name = "tiles";
  compiled->target = "nvptx";
  compiled->format = "ptx";
  compiled->numWarps = 4;
  compiled->warpSize = 32;
  compiled->sharedBytes = 96 * 1024;
  compiled->persistent = true;
  RecordingRuntime cuda("nvptx", "CUDA", "ptx");
  cuda.isAvailable = true;
  cuda.resident = 12;
  cuda.recordIntsFrom = 1;
  const std::vector<ir::Type> params{ir::Type::ptr(ir::Type::f32())};
  LoadedKernel loaded(compiled, params, cuda);
  EXPECT_EQ(cuda.residentQueries, 1) << "counted once, at load";
  EXPECT_EQ(cuda.residentAskedFor, (std::pair<unsigned, int64_t>{128, 96 * 1024}));
  const std::vector<KernelArg> args{KernelArg::pointer(0x1000)};
  for (auto [grid, programs] : {std::pair<LaunchGrid, unsigned>{{10, 3, 2}, 12}, {{5, 1, 1}, 5}, {{1, 70000, 1}, 12}}) {
    loaded.launch(grid, args);
    EXPECT_EQ(cuda.lastGrid[0], programs);
    EXPECT_EQ(cuda.lastGrid[1], 1u);
    EXPECT_EQ(cuda.lastGrid[2], 1u);
    EXPECT_EQ(cuda.lastInts, (std::vector<int32_t>{int32_t(grid[0]), int32_t(grid[1]), int32_t(grid[2])}));
  }
  EXPECT_EQ(cuda.residentQueries, 1);
  const int launches = cuda.launches;
  std::string msg = messageOf([&] { loaded.launch({70000, 70000, 1}, args); });
  EXPECT_TRUE(contains(msg, "kernel 'tiles' is persistent, and its launch grid 70000x70000x1 has more than 2^31 - 1 "
                            "tiles")) << msg;
  msg = messageOf([&] { loaded.launch({4, 0, 1}, args); });
  EXPECT_TRUE(contains(msg, "launch grid dimension 1 is 0")) << msg;
  EXPECT_EQ(cuda.launches, launches) << "refused grids launch nothing";

  RecordingRuntime cannotTell("nvptx", "CUDA", "ptx");
  cannotTell.isAvailable = true;
  msg = messageOf([&] { LoadedKernel refused(compiled, params, cannotTell); });
  EXPECT_TRUE(contains(msg, "kernel 'tiles' is persistent, and the CUDA runtime cannot tell how many of its programs "
                            "the device runs at once")) << msg;
  EXPECT_EQ(cannotTell.modulesLoaded, 0) << "the module is unloaded again";

  // A kernel that is not persistent never asks, and launches its grid as it is.
  compiled->persistent = false;
  RecordingRuntime plain("nvptx", "CUDA", "ptx");
  plain.isAvailable = true;
  plain.resident = 12;
  LoadedKernel ordinary(compiled, params, plain);
  ordinary.launch({10, 3, 2}, args);
  EXPECT_EQ(plain.residentQueries, 0);
  EXPECT_EQ(plain.lastGrid[0], 10u);
  EXPECT_EQ(plain.lastGrid[1], 3u);
  msg = messageOf([&] { ordinary.persistentGrid({1, 1, 1}); });
  EXPECT_TRUE(contains(msg, "kernel 'tiles' is not persistent")) << msg;
}
