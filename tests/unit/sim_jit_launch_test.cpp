// JitKernel launching on the emulator (LaunchOptions::runtime), and what the Python binding asks of SimRuntime:
// the arch a target and arch resolve to, one runtime per arch and checks setting, and taking the last report; a
// launch in thread-block clusters runs them as clusters.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "ir/Error.h"
#include "jit/JitKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/kernels/vector_add.h"

namespace tessera {
namespace {

// Host data in device buffers of a runtime, released at the end of the scope.
class SimBuffers {
 public:
  explicit SimBuffers(jit::DeviceRuntime& runtime) : runtime_(runtime) {}
  ~SimBuffers() {
    for (jit::DeviceAddress a : addresses_) runtime_.release(a);
  }
  jit::KernelArg add(const std::vector<float>& data) {
    addresses_.push_back(runtime_.allocate(data.size() * sizeof(float)));
    runtime_.copyToDevice(addresses_.back(), data.data(), data.size() * sizeof(float));
    return jit::KernelArg::pointer(addresses_.back());
  }
  std::vector<float> read(size_t index, size_t n) {
    std::vector<float> out(n);
    runtime_.copyToHost(out.data(), addresses_[index], n * sizeof(float));
    return out;
  }

 private:
  jit::DeviceRuntime& runtime_;
  std::vector<jit::DeviceAddress> addresses_;
};

jit::LaunchOptions onRuntime(sim::SimRuntime& runtime) {
  jit::LaunchOptions options;
  options.runtime = &runtime;
  return options;
}

TEST(SimJitLaunch, JitKernelLaunchesOnTheRuntimeItIsGivenAndKeepsOneVariantPerRuntime) {
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel add(kernels::vector_add_kernel(), cache);
  const int64_t n = 300;
  std::vector<float> x(n), y(n, 0.5f);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  for (const char* arch : {"sm_80", "gfx942"}) {
    sim::SimRuntime& runtime = sim::simRuntime(arch);
    SimBuffers buffers(runtime);
    std::vector<jit::KernelArg> args{buffers.add(x), buffers.add(y), buffers.add(std::vector<float>(n)), n};
    add.launch({3, 1, 1}, args, {{"BLOCK", 128}}, onRuntime(runtime));
    std::vector<float> out = buffers.read(2, n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], x[i] + 0.5f) << arch << " element " << i;
    // The compiled kernel is the emulated arch's: the runtime's arch, not the target's default.
    EXPECT_EQ(add.prepare(args, {{"BLOCK", 128}}, onRuntime(runtime)).compiled().arch, arch);
    std::optional<sim::Report> report = runtime.lastReport();
    ASSERT_TRUE(report);
    EXPECT_EQ(report->kernel, "vector_add");
    EXPECT_GT(report->total.globalStore.requests, 0u);
  }
  EXPECT_EQ(add.loadedVariants(), 2u);
}

TEST(SimJitLaunch, AClusterLaunchRunsItsProgramsInClustersOfTheCompiledShape) {
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel add(kernels::vector_add_kernel(), cache);
  sim::SimRuntime& runtime = sim::simRuntime("sm_90a");
  const int64_t n = 500;
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  SimBuffers buffers(runtime);
  std::vector<jit::KernelArg> args{buffers.add(x), buffers.add(y), buffers.add(std::vector<float>(n)), n};
  jit::LaunchOptions options = onRuntime(runtime);
  options.clusterDims = {2, 1, 1};
  runtime.takeLastReport();
  add.launch({4, 1, 1}, args, {{"BLOCK", 128}}, options);
  std::optional<sim::Report> report = runtime.takeLastReport();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->clusterDims, (std::array<uint32_t, 3>{2, 1, 1}));
  std::vector<float> out = buffers.read(2, n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 3.0f) << "element " << i;
  EXPECT_EQ(add.prepare(args, {{"BLOCK", 128}}, options).compiled().clusterDims, (std::array<int, 3>{2, 1, 1}));
  // The emulator refuses a grid that is not a whole number of clusters, as the driver does.
  try {
    add.launch({3, 1, 1}, args, {{"BLOCK", 128}}, options);
    ADD_FAILURE() << "a grid of 3 programs launched in clusters of 2";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("launch grid 3x1x1 is not a whole number of its clusters of 2x1x1"),
              std::string::npos)
        << e.what();
  }
}

TEST(SimJitLaunch, TheSameSpecializationOnTwoRuntimesIsLoadedOnEach) {
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel add(kernels::vector_add_kernel(), cache);
  std::vector<jit::KernelArg> args{jit::KernelArg::pointer(256), jit::KernelArg::pointer(256),
                                   jit::KernelArg::pointer(256), int64_t(64)};
  sim::SimRuntime &checked = sim::simRuntime("sm_90a", true), &unchecked = sim::simRuntime("sm_90a", false);
  jit::LoadedKernel& a = add.prepare(args, {{"BLOCK", 64}}, onRuntime(checked));
  jit::LoadedKernel& b = add.prepare(args, {{"BLOCK", 64}}, onRuntime(unchecked));
  EXPECT_NE(&a, &b);
  EXPECT_EQ(&a, &add.prepare(args, {{"BLOCK", 64}}, onRuntime(checked)));
  EXPECT_EQ(add.loadedVariants(), 2u);
}

TEST(SimJitLaunch, OneRuntimePerArchAndChecksSetting) {
  EXPECT_EQ(&sim::simRuntime("sm_80", true), &sim::simRuntime("sm_80"));
  EXPECT_NE(&sim::simRuntime("sm_80", true), &sim::simRuntime("sm_80", false));
  EXPECT_EQ(sim::simRuntime("gfx942", true).checks(), sim::Checks(true));
  EXPECT_EQ(sim::simRuntime("gfx942", false).checks(), sim::Checks(false));
  sim::Checks noRacecheck;
  noRacecheck.racecheck = false;
  EXPECT_EQ(sim::simRuntime("gfx942", noRacecheck).checks(), noRacecheck);
  EXPECT_EQ(&sim::simRuntime("gfx942", noRacecheck), &sim::simRuntime("gfx942", sim::Checks::parse("memcheck,initcheck,synccheck")));
  EXPECT_EQ(&jit::selectRuntime("sim"), &sim::simRuntime("sm_90a", true));
}

TEST(SimJitLaunch, EmulatedArchComesFromTheArchOrTheTargetsDefault) {
  EXPECT_EQ(sim::emulatedArchs().front(), "sm_90a");
  EXPECT_EQ(sim::emulatedArch("", ""), "sm_90a");
  EXPECT_EQ(sim::emulatedArch("nvptx", ""), "sm_90a");
  EXPECT_EQ(sim::emulatedArch("amdgpu", ""), "gfx90a");
  EXPECT_EQ(sim::emulatedArch("", "gfx942"), "gfx942");
  EXPECT_EQ(sim::emulatedArch("nvptx", "sm_80"), "sm_80");
  auto message = [](const std::string& target, const std::string& arch) {
    try {
      sim::emulatedArch(target, arch);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("", "sm_75").find("cannot emulate arch 'sm_75': expected sm_90a (nvptx), sm_80 (nvptx), "
                                      "gfx90a (amdgpu), gfx942 (amdgpu)"),
            std::string::npos);
  EXPECT_NE(message("nvptx", "gfx942").find("arch 'gfx942' is an amdgpu arch, not one of target 'nvptx'"),
            std::string::npos);
  EXPECT_NE(message("x86", "").find("unknown target 'x86'"), std::string::npos);
}

TEST(SimJitLaunch, TakingTheLastReportLeavesNone) {
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel add(kernels::vector_add_kernel(), cache);
  sim::SimRuntime& runtime = sim::simRuntime("sm_80", false);
  SimBuffers buffers(runtime);
  std::vector<float> x(64, 1.0f);
  add.launch({1, 1, 1}, {buffers.add(x), buffers.add(x), buffers.add(x), int64_t(64)}, {{"BLOCK", 64}},
             onRuntime(runtime));
  std::optional<sim::Report> report = runtime.takeLastReport();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->kernel, "vector_add");
  EXPECT_FALSE(runtime.takeLastReport());
  EXPECT_FALSE(runtime.lastReport());
}

TEST(SimJitLaunch, AKernelCompiledForAnotherArchIsRefused) {
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel add(kernels::vector_add_kernel(), cache);
  jit::LaunchOptions sm80;
  sm80.target = "nvptx";
  sm80.arch = "sm_80";
  std::vector<jit::KernelArg> args{jit::KernelArg::pointer(256), jit::KernelArg::pointer(256),
                                   jit::KernelArg::pointer(256), int64_t(64)};
  auto compiled = add.compileOnly(args, {{"BLOCK", 64}}, sm80);
  try {
    jit::LoadedKernel loaded(compiled, {}, sim::simRuntime("sm_90a"));
    FAIL() << "loaded an sm_80 kernel on the sm_90a emulator";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("was compiled for nvptx sm_80; this runtime emulates nvptx sm_90a"),
              std::string::npos)
        << e.what();
  }
}

// The emulator refuses what the GPU would: a program with more shared memory than the arch's opt-in limit
// (SharedMemoryLimits.h: 166912 B on sm_80, 232448 B on sm_90a).
TEST(SimJitLaunch, AKernelWithMoreSharedMemoryThanTheArchGivesIsRefused) {
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel add(kernels::vector_add_kernel(), cache);
  for (const auto& [arch, limit] : {std::pair<std::string, int64_t>{"sm_80", 166912}, {"sm_90a", 232448}}) {
    jit::LaunchOptions options;
    options.target = "nvptx";
    options.arch = arch;
    std::vector<jit::KernelArg> args{jit::KernelArg::pointer(256), jit::KernelArg::pointer(256),
                                     jit::KernelArg::pointer(256), int64_t(64)};
    auto compiled = add.compileOnly(args, {{"BLOCK", 64}}, options);
    auto atLimit = std::make_shared<jit::CompiledKernel>(*compiled);
    atLimit->sharedBytes = limit;
    EXPECT_NO_THROW(jit::LoadedKernel(atLimit, {}, sim::simRuntime(arch))) << arch;
    auto over = std::make_shared<jit::CompiledKernel>(*compiled);
    over->sharedBytes = limit + 1;
    try {
      jit::LoadedKernel loaded(over, {}, sim::simRuntime(arch));
      FAIL() << "loaded a kernel needing " << over->sharedBytes << " B of shared memory on " << arch;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("kernel '" + compiled->name + "' needs " + std::to_string(limit + 1) +
                                           " bytes of shared memory, more than the " + std::to_string(limit) +
                                           " a program may have on " + arch),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace tessera
