// The C++ HIP launch path on the recording HIP runtime (tests/fake_hip/FakeHipRuntime.cpp), which runs nothing but
// checks launches against the code object's own metadata: what JitKernel hands libamdhip64 for an amdgpu launch
// (the code object for the device's arch, the kernel's explicit arguments byte for byte, num_warps * 64
// work-items within the kernel's flat work-group limit), runtime failures named with the call and the kernel, and
// a kernel that never finishes reported after TESSERA_GPU_TIMEOUT seconds, as on CUDA, autotuning timed with HIP
// events, and persistent launches sized by the KFD topology's compute units.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

#include "ir/Error.h"
#include "jit/AutotunedKernel.h"
#include "jit/CudaDriver.h"
#include "jit/DeviceRuntime.h"
#include "jit/HipRuntime.h"
#include "jit/JitKernel.h"
#include "RecordingLog.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/vector_add.h"

using namespace tessera;
using namespace tessera::jit;
using tessera::fake::littleEndianHex;
using tessera::fake::RecordingLog;

namespace {

std::string messageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A vector add launched on the amdgpu target through the recording runtime; CUDA is absent.
struct HipVectorAdd {
  static constexpr int64_t n = 1000;
  std::filesystem::path cacheDir =
      std::filesystem::temp_directory_path() / ("tessera-fake-hip-cache-" + std::to_string(getpid()));
  CudaDriver noCuda{"/nonexistent/libcuda.so.1"};
  HipRuntime hip{{TESSERA_FAKE_LIBAMDHIP}};
  KernelCache cache{cacheDir};
  JitKernel kernel{kernels::vector_add_kernel(), cache, noCuda, hip};
  hip::DevicePtr x = hip.allocate(n * 4), y = hip.allocate(n * 4), out = hip.allocate(n * 4);

  ~HipVectorAdd() {
    for (hip::DevicePtr p : {x, y, out}) hip.release(p);
    std::filesystem::remove_all(cacheDir);
  }
  static uint64_t address(hip::DevicePtr p) { return reinterpret_cast<uint64_t>(p); }

  void launch(const std::string& arch = "gfx90a", int numWarps = 4) {
    LaunchOptions options;
    options.target = "amdgpu";
    options.arch = arch;
    options.numWarps = numWarps;
    kernel.launch({(n + 255) / 256, 1, 1},
                  {KernelArg::pointer(address(x)), KernelArg::pointer(address(y)), KernelArg::pointer(address(out)),
                   int64_t(n)},
                  {{"BLOCK", 256}}, options);
  }
};

}  // namespace

TEST(JitFakeHip, TheRecordingRuntimeIsAnAvailableHipRuntimeWithOneDevice) {
  HipRuntime hip({TESSERA_FAKE_LIBAMDHIP});
  ASSERT_TRUE(hip.available()) << hip.unavailableReason();
  EXPECT_EQ(hip.deviceCount(), 1);
}

TEST(JitFakeHip, AVectorAddLoadsItsCodeObjectAndPassesItsExplicitArgumentsByteForByte) {
  RecordingLog log("TESSERA_FAKE_HIP_LOG");
  HipVectorAdd v;
  v.launch();
  const std::vector<std::string> loads = log.calls("hipModuleLoadData");
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_NE(loads[0].find("\"device_arch\": \"gfx90a\", \"result\": 0"), std::string::npos) << loads[0];
  const std::vector<std::string> launches = log.calls("hipModuleLaunchKernel");
  ASSERT_EQ(launches.size(), 1u);
  // 4 wavefronts of 64; HIP's LDS is static, so no dynamic bytes. The three pointers, then n as 4 bytes: the
  // hidden arguments the code object also declares are the runtime's to fill.
  EXPECT_NE(launches[0].find("\"kernel\": \"vector_add\", \"grid\": [4, 1, 1], \"block\": [256, 1, 1], "
                             "\"shared\": 0"),
            std::string::npos)
      << launches[0];
  const auto hexOf = [](hip::DevicePtr p) { return littleEndianHex(HipVectorAdd::address(p)); };
  EXPECT_NE(launches[0].find("\"params\": [\"" + hexOf(v.x) + "\", \"" + hexOf(v.y) + "\", \"" + hexOf(v.out) + "\", \"" +
                             littleEndianHex(HipVectorAdd::n, 4) + "\"]}"),
            std::string::npos)
      << launches[0];
  // A second launch reuses the loaded module.
  v.launch();
  EXPECT_EQ(log.calls("hipModuleLoadData").size(), 1u);
  EXPECT_EQ(log.calls("hipModuleLaunchKernel").size(), 2u);
}

TEST(JitFakeHip, AnEightWarpMatmulLaunchesWithinItsFlatWorkGroupLimitAndDeclaresItsLds) {
  RecordingLog log("TESSERA_FAKE_HIP_LOG");
  HipVectorAdd v;  // its runtime and cache
  constexpr int64_t M = 100, N = 72, K = 96;
  hip::DevicePtr a = v.hip.allocate(M * K * 2), b = v.hip.allocate(K * N * 2), c = v.hip.allocate(M * N * 4);
  JitKernel matmul(kernels::matmul_kernel(), v.cache, v.noCuda, v.hip);
  LaunchOptions options;
  options.target = "amdgpu";
  options.arch = "gfx90a";
  options.numWarps = 8;
  auto ptr = [](hip::DevicePtr p) { return KernelArg::pointer(HipVectorAdd::address(p)); };
  matmul.launch({2 * 2, 1, 1}, {ptr(a), ptr(b), ptr(c), M, N, K, K, int64_t(1), N, int64_t(1), N, int64_t(1)},
                {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 8}}, options);
  const std::vector<std::string> launches = log.calls("hipModuleLaunchKernel");
  ASSERT_EQ(launches.size(), 1u);
  // The runtime refuses a block above the kernel's .max_flat_workgroup_size: 512 work-items were accepted.
  EXPECT_NE(launches[0].find("\"block\": [512, 1, 1]"), std::string::npos) << launches[0];
  const size_t lds = launches[0].find("\"lds\": ");
  ASSERT_NE(lds, std::string::npos);
  EXPECT_GT(std::stol(launches[0].substr(lds + 7)), 0) << "the dot's operands are staged in LDS: " << launches[0];
  for (hip::DevicePtr p : {a, b, c}) v.hip.release(p);
}

TEST(JitFakeHip, ACodeObjectForAnotherArchIsRefusedByTheRuntimeNamingTheKernel) {
  RecordingLog log("TESSERA_FAKE_HIP_LOG");
  HipVectorAdd v;
  const std::string msg = messageOf([&] { v.launch("gfx942"); });
  EXPECT_NE(msg.find("hipModuleLoadData failed for kernel 'vector_add': hipErrorNoBinaryForGpu (no kernel image is "
                     "available for execution on the device)"),
            std::string::npos)
      << msg;
  EXPECT_TRUE(log.calls("hipModuleLaunchKernel").empty());
}

TEST(JitFakeHip, RuntimeFailuresNameTheCallTheErrorAndTheKernel) {
  HipVectorAdd v;
  for (const char* call : {"hipModuleLaunchKernel", "hipModuleLoadData"}) {
    setenv("TESSERA_FAKE_HIP_FAIL", call, 1);
    // A module not loaded yet fails to load: a specialization of its own (8 warps).
    const std::string msg = messageOf([&] { v.launch("gfx90a", std::string(call) == "hipModuleLoadData" ? 8 : 4); });
    EXPECT_NE(msg.find(std::string(call) + " failed for kernel 'vector_add': hipErrorLaunchOutOfResources (too many "
                                           "resources requested for launch)"),
              std::string::npos)
        << msg;
  }
  unsetenv("TESSERA_FAKE_HIP_FAIL");
}

TEST(JitFakeHip, AKernelThatNeverFinishesIsReportedAfterTheTimeLimitWithItsName) {
  HipVectorAdd v;
  setenv("TESSERA_FAKE_HIP_HANG", "vector_add", 1);
  v.launch();  // asynchronous: the wait is what notices
  setenv("TESSERA_GPU_TIMEOUT", "0.25", 1);
  const auto start = std::chrono::steady_clock::now();
  try {
    v.hip.synchronize(nullptr, "vector_add");
    ADD_FAILURE() << "the wait for a kernel that never finishes returned";
  } catch (const KernelTimeout& e) {
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
    EXPECT_NE(std::string(e.what()).find("kernel 'vector_add' has not finished after 0.25 s (TESSERA_GPU_TIMEOUT): "
                                         "it may never end"),
              std::string::npos)
        << e.what();
  }
  // With no limit the runtime's wait decides (a GPU's would never return; the fake's fails).
  unsetenv("TESSERA_GPU_TIMEOUT");
  try {
    v.hip.synchronize(nullptr, "vector_add");
    ADD_FAILURE() << "the fake runtime's wait returned";
  } catch (const KernelTimeout&) {
    ADD_FAILURE() << "no time limit was set";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hipStreamSynchronize failed for kernel 'vector_add': hipErrorLaunchTimeOut"),
              std::string::npos)
        << e.what();
  }
  unsetenv("TESSERA_FAKE_HIP_HANG");
  setenv("TESSERA_GPU_TIMEOUT", "0.25", 1);
  EXPECT_NO_THROW(v.hip.synchronize(nullptr, "vector_add"));  // idle: the poll returns at once
  setenv("TESSERA_GPU_TIMEOUT", "soon", 1);
  EXPECT_NE(messageOf([&] { v.hip.synchronize(nullptr, "vector_add"); })
                .find("TESSERA_GPU_TIMEOUT must be a number of seconds (0: no limit), not 'soon'"),
            std::string::npos);
  unsetenv("TESSERA_GPU_TIMEOUT");
}

TEST(JitFakeHip, AutotuningOnAnAmdGpuTimesEachConfigWithHipEventsAndKeepsTheFastest) {
  // The recording runtime's device takes 10 ms per program, so the config with the fewest programs is the fastest;
  // it sits in the middle of the list, so that neither the first nor the last config wins by position.
  RecordingLog log("TESSERA_FAKE_HIP_LOG");
  HipVectorAdd v;
  std::unique_ptr<DeviceRuntime> runtime = makeHipDeviceRuntime(v.hip);
  AutotuneOptions tuning;
  tuning.cacheDirectory.clear();  // memory only
  tuning.fixedConfig.reset();
  tuning.quiet = true;
  AutotunedKernel tuned(kernels::vector_add_kernel(),
                        {{{{"BLOCK", 128}}, 4}, {{{"BLOCK", 1024}}, 4}, {{{"BLOCK", 256}}, 4}}, {"n"}, tuning, v.cache);
  LaunchOptions options;
  options.runtime = runtime.get();
  options.arch = "gfx90a";
  const ConfigGrid grid = [](const TuneConfig& c) {
    const int64_t block = std::get<int64_t>(c.constants.at("BLOCK"));
    return LaunchGrid{(HipVectorAdd::n + block - 1) / block, 1, 1};
  };
  const std::vector<KernelArg> args = {KernelArg::pointer(HipVectorAdd::address(v.x)),
                                       KernelArg::pointer(HipVectorAdd::address(v.y)),
                                       KernelArg::pointer(HipVectorAdd::address(v.out)), int64_t(HipVectorAdd::n)};
  tuned.launch(grid, args, {}, options);
  ASSERT_TRUE(tuned.bestConfig().has_value());
  EXPECT_EQ(tuned.bestConfig()->str(), "BLOCK=1024, num_warps=4");
  const std::optional<TuningReport> report = tuned.tuner().lastReport();
  ASSERT_TRUE(report.has_value());
  ASSERT_EQ(report->outcomes.size(), 3u);
  // Each config's median launch: 8, 1 and 4 programs of 10 ms.
  EXPECT_DOUBLE_EQ(report->outcomes[0].ms.value_or(-1), 80);
  EXPECT_DOUBLE_EQ(report->outcomes[1].ms.value_or(-1), 10);
  EXPECT_DOUBLE_EQ(report->outcomes[2].ms.value_or(-1), 40);
  // Every timed run starts from a flushed cache: a 256 MB write before each.
  const std::vector<std::string> flushes = log.calls("hipMemset");
  ASSERT_FALSE(flushes.empty());
  EXPECT_NE(flushes[0].find("\"bytes\": 268435456"), std::string::npos) << flushes[0];
  // The final launch uses the winner: 1 program.
  const std::vector<std::string> launches = log.calls("hipModuleLaunchKernel");
  ASSERT_FALSE(launches.empty());
  EXPECT_NE(launches.back().find("\"grid\": [1, 1, 1]"), std::string::npos) << launches.back();
}

TEST(JitFakeHip, APersistentLaunchStartsTheProgramsTheComputeUnitsHoldAndPassesTheTileGrid) {
  // A KFD topology of one gfx90a with 2 compute units (8 SIMDs, 4 per unit): the arch and the units come from it.
  const std::filesystem::path topology =
      std::filesystem::temp_directory_path() / ("tessera-fake-kfd-" + std::to_string(getpid()));
  std::filesystem::create_directories(topology / "1");
  std::ofstream(topology / "1" / "properties") << "simd_count 8\nsimd_per_cu 4\ngfx_target_version 90010\n";
  RecordingLog log("TESSERA_FAKE_HIP_LOG");
  HipVectorAdd v;  // its runtime and cache
  std::unique_ptr<DeviceRuntime> runtime = makeHipDeviceRuntime(v.hip, topology);
  EXPECT_EQ(runtime->nativeArch(), "gfx90a");
  constexpr int64_t M = 320, N = 320, K = 64;  // 5 x 5 tiles of 64 x 64
  hip::DevicePtr a = v.hip.allocate(M * K * 2), b = v.hip.allocate(K * N * 2), c = v.hip.allocate(M * N * 4);
  JitKernel matmul(kernels::matmul_kernel(), v.cache, v.noCuda, v.hip);
  LaunchOptions options;
  options.runtime = runtime.get();
  options.persistent = true;
  auto ptr = [](hip::DevicePtr p) { return KernelArg::pointer(HipVectorAdd::address(p)); };
  matmul.launch({25, 1, 1}, {ptr(a), ptr(b), ptr(c), M, N, K, K, int64_t(1), N, int64_t(1), N, int64_t(1)},
                {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 8}}, options);
  const std::vector<std::string> launches = log.calls("hipModuleLaunchKernel");
  ASSERT_EQ(launches.size(), 1u);
  // The recording runtime's occupancy: 64 KB of LDS and 2048 work-items per unit, whichever holds fewer programs.
  const size_t ldsAt = launches[0].find("\"lds\": ") + 7;
  const int64_t lds = std::stol(launches[0].substr(ldsAt));
  ASSERT_GT(lds, 0);
  const int64_t perUnit = std::min<int64_t>(65536 / lds, 2048 / 256);
  const int64_t programs = std::min<int64_t>(25, 2 * perUnit);
  EXPECT_NE(launches[0].find("\"grid\": [" + std::to_string(programs) + ", 1, 1]"), std::string::npos)
      << launches[0];
  // The tile grid (25, 1, 1) follows the kernel's own arguments.
  EXPECT_NE(launches[0].find("\"19000000\", \"01000000\", \"01000000\"]}"), std::string::npos) << launches[0];
  // Where the topology does not give the compute units, a persistent launch says what is missing.
  std::ofstream(topology / "1" / "properties") << "gfx_target_version 90010\n";
  std::unique_ptr<DeviceRuntime> unitsUnknown = makeHipDeviceRuntime(v.hip, topology);
  options.runtime = unitsUnknown.get();
  const std::string msg = messageOf([&] {
    matmul.launch({25, 1, 1}, {ptr(a), ptr(b), ptr(c), M, N, K, K, int64_t(1), N, int64_t(1), N, int64_t(1)},
                  {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 8}}, options);
  });
  for (hip::DevicePtr p : {a, b, c}) v.hip.release(p);
  EXPECT_NE(msg.find("kernel 'matmul' is persistent, and the KFD topology (" + topology.string() +
                     ") does not say how many compute units the GPU has"),
            std::string::npos)
      << msg;
  std::filesystem::remove_all(topology);
}
