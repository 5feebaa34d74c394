// The C++ CUDA launch path on the recording driver (tests/fake_cuda/FakeCudaDriver.cpp), which runs nothing:
// what JitKernel hands libcuda for the descriptor matmul on a compute capability 9.0 device (tensor maps encoded
// from the descriptors, the parameters with their maps, threads per program with a producer warpgroup, the grid of
// a persistent launch, a launch in thread-block clusters through cuLaunchKernelEx), driver failures named with the
// call and the kernel, and a kernel that never finishes reported after TESSERA_GPU_TIMEOUT seconds.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "ir/Error.h"
#include "jit/CudaDriver.h"
#include "jit/JitKernel.h"
#include "RecordingLog.h"
#include "tessera/kernels/matmul.h"

using namespace tessera;
using namespace tessera::jit;
using tessera::fake::littleEndianHex;
using tessera::fake::RecordingLog;

namespace {

struct DescriptorMatmul {
  static constexpr int64_t M = 100, N = 72, K = 96;
  std::filesystem::path cacheDir =
      std::filesystem::temp_directory_path() / ("tessera-fake-cuda-cache-" + std::to_string(getpid()));
  CudaDriver driver{TESSERA_FAKE_LIBCUDA};
  KernelCache cache{cacheDir};
  JitKernel kernel{kernels::matmul_desc_kernel(), cache, driver};
  DeviceBuffer a{M * K * 2, driver}, b{K * N * 2, driver}, c{M * N * 4, driver};

  ~DescriptorMatmul() { std::filesystem::remove_all(cacheDir); }

  void launch(LaunchOptions options) {
    kernel.launch({2 * 2, 1, 1},
                  {KernelArg::tensorDescriptor(a, {M, K}, {K, 1}, {64, 32}),
                   KernelArg::tensorDescriptor(b, {K, N}, {N, 1}, {32, 64}), c, M, N, K, N, int64_t(1)},
                  {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 4}}, options);
  }
};

}  // namespace

TEST(JitFakeDriver, TheRecordingDriverIsAComputeCapability90Device) {
  CudaDriver driver(TESSERA_FAKE_LIBCUDA);
  ASSERT_TRUE(driver.available()) << driver.unavailableReason();
  EXPECT_EQ(driver.nativeArch(), "sm_90a");
  EXPECT_EQ(driver.deviceName(), "Tessera fake CUDA driver");
}

TEST(JitFakeDriver, AWarpSpecializedDescriptorMatmulEncodesTensorMapsAndLaunchesAProducerWarpgroup) {
  RecordingLog log("TESSERA_FAKE_CUDA_LOG");
  DescriptorMatmul m;
  LaunchOptions options;
  options.warpSpecialize = true;
  m.launch(options);
  const std::vector<std::string> maps = log.calls("cuTensorMapEncodeTiled");
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_NE(maps[0].find("\"address\": " + std::to_string(m.a.ptr()) + ", \"dims\": [96, 100], \"byte_strides\": "
                         "[192], \"box\": [32, 64], \"swizzle\": 2"),
            std::string::npos)
      << maps[0];
  EXPECT_NE(maps[1].find("\"address\": " + std::to_string(m.b.ptr()) + ", \"dims\": [72, 96], \"byte_strides\": "
                         "[144], \"box\": [64, 32], \"swizzle\": 3"),
            std::string::npos)
      << maps[1];
  const std::vector<std::string> launches = log.calls("cuLaunchKernel");
  ASSERT_EQ(launches.size(), 1u);
  // 4 consumer warps and a producer warpgroup; A's parameter starts with its base address, then its shape.
  EXPECT_NE(launches[0].find("\"grid\": [4, 1, 1], \"block\": [256, 1, 1]"), std::string::npos) << launches[0];
  EXPECT_NE(launches[0].find("\"params\": [\"" + littleEndianHex(m.a.ptr()) + littleEndianHex(100) + littleEndianHex(96) +
                             littleEndianHex(96) + littleEndianHex(1)),
            std::string::npos)
      << launches[0];
  // The map the driver encoded for A sits at byte 128 of its parameter, after the 40 bytes of fields.
  const size_t mapAt = maps[0].find("\"map\": \"") + 8;
  const std::string map = maps[0].substr(mapAt, 256);
  ASSERT_EQ(map.substr(0, 12), "5453524d4150");  // "TSRMAP"
  EXPECT_NE(launches[0].find(std::string(2 * (128 - 40), '0') + map + "\""), std::string::npos) << launches[0];
}

TEST(JitFakeDriver, APersistentLaunchStartsTheProgramsTheGpuHoldsAndPassesTheTileGrid) {
  RecordingLog log("TESSERA_FAKE_CUDA_LOG");
  DescriptorMatmul m;
  LaunchOptions options;
  options.warpSpecialize = true;
  options.persistent = true;
  m.launch(options);
  const std::vector<std::string> launches = log.calls("cuLaunchKernel");
  ASSERT_EQ(launches.size(), 1u);
  // 4 tiles, fewer than 132 multiprocessors hold; the tile grid (4, 1, 1) follows the kernel's own arguments.
  EXPECT_NE(launches[0].find("\"grid\": [4, 1, 1]"), std::string::npos) << launches[0];
  EXPECT_NE(launches[0].find("\"04000000\", \"01000000\", \"01000000\"]}"), std::string::npos) << launches[0];
}

TEST(JitFakeDriver, AClusterLaunchGoesThroughCuLaunchKernelExWithTheClusterShape) {
  RecordingLog log("TESSERA_FAKE_CUDA_LOG");
  DescriptorMatmul m;
  LaunchOptions options;
  options.clusterDims = {2, 1, 1};
  m.launch(options);
  EXPECT_TRUE(log.calls("cuLaunchKernel").empty());
  const std::vector<std::string> launches = log.calls("cuLaunchKernelEx");
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_NE(launches[0].find("\"grid\": [4, 1, 1], \"block\": [128, 1, 1], \"cluster\": [2, 1, 1]"), std::string::npos)
      << launches[0];
  EXPECT_NE(launches[0].find("\"params\": [\"" + littleEndianHex(m.a.ptr())), std::string::npos) << launches[0];
  // The cluster shape is part of the specialization: without it, the same kernel is another entry.
  auto clusterOf = [&](const LaunchOptions& o) {
    return m.kernel
        .prepare({KernelArg::tensorDescriptor(m.a, {m.M, m.K}, {m.K, 1}, {64, 32}),
                  KernelArg::tensorDescriptor(m.b, {m.K, m.N}, {m.N, 1}, {32, 64}), m.c, m.M, m.N, m.K, m.N,
                  int64_t(1)},
                 {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 4}}, o)
        .compiled()
        .clusterDims;
  };
  EXPECT_EQ(clusterOf(options), (std::array<int, 3>{2, 1, 1}));
  EXPECT_EQ(clusterOf(LaunchOptions()), (std::array<int, 3>{1, 1, 1}));
  // The driver's refusal names the call and the kernel, as cuLaunchKernel's does.
  setenv("TESSERA_FAKE_CUDA_FAIL", "cuLaunchKernelEx", 1);
  try {
    m.launch(options);
    ADD_FAILURE() << "cuLaunchKernelEx did not fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuLaunchKernelEx failed for kernel 'matmul_desc': "
                                         "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
              std::string::npos)
        << e.what();
  }
  unsetenv("TESSERA_FAKE_CUDA_FAIL");
}

TEST(JitFakeDriver, ClustersThatCannotRunAreRefusedWithTheKernelsName) {
  RecordingLog log("TESSERA_FAKE_CUDA_LOG");
  DescriptorMatmul m;
  auto refusal = [&](LaunchOptions options) -> std::string {
    try {
      m.launch(options);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  LaunchOptions options;
  options.clusterDims = {3, 1, 1};  // the grid has 4 programs
  EXPECT_NE(refusal(options).find("kernel 'matmul_desc': launch grid 4x1x1 is not a whole number of its clusters of "
                                  "3x1x1 programs"),
            std::string::npos);
  options.clusterDims = {4, 3, 1};
  EXPECT_NE(refusal(options).find("a cluster holds at most 8 programs, got 4x3x1"), std::string::npos);
  options.clusterDims = {0, 1, 1};
  EXPECT_NE(refusal(options).find("cluster dimensions must be at least 1, got 0x1x1"), std::string::npos);
  options.clusterDims = {2, 1, 1};
  options.arch = "sm_80";
  EXPECT_NE(refusal(options).find("JIT compile of @matmul_desc for nvptx sm_80: thread-block clusters (2x1x1) need "
                                  "sm_90 or later"),
            std::string::npos);
  options.arch = "";
  options.persistent = true;
  EXPECT_NE(refusal(options).find("persistent kernels do not run in thread-block clusters yet"), std::string::npos);
  EXPECT_TRUE(log.calls("cuLaunchKernelEx").empty());
}

TEST(JitFakeDriver, DriverFailuresNameTheCallTheErrorAndTheKernel) {
  RecordingLog log("TESSERA_FAKE_CUDA_LOG");
  DescriptorMatmul m;
  for (const char* call : {"cuTensorMapEncodeTiled", "cuLaunchKernel", "cuModuleLoadDataEx"}) {
    setenv("TESSERA_FAKE_CUDA_FAIL", call, 1);
    LaunchOptions options;
    // A module not loaded yet fails to load: a specialization of its own.
    options.numStages = std::string(call) == "cuModuleLoadDataEx" ? 2 : 3;
    try {
      m.launch(options);
      ADD_FAILURE() << call << " did not fail";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(call) + " failed for kernel 'matmul_desc': "
                                           "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources requested for "
                                           "launch)"),
                std::string::npos)
          << e.what();
    }
  }
  unsetenv("TESSERA_FAKE_CUDA_FAIL");
  EXPECT_TRUE(log.calls("cuLaunchKernel").empty());
}

TEST(JitFakeDriver, AKernelThatNeverFinishesIsReportedAfterTheTimeLimitWithItsName) {
  DescriptorMatmul m;
  setenv("TESSERA_FAKE_CUDA_HANG", "matmul_desc", 1);
  m.launch(LaunchOptions());  // asynchronous: the wait is what notices
  setenv("TESSERA_GPU_TIMEOUT", "0.25", 1);
  const auto start = std::chrono::steady_clock::now();
  try {
    m.driver.synchronize(nullptr, "matmul_desc");
    ADD_FAILURE() << "the wait for a kernel that never finishes returned";
  } catch (const KernelTimeout& e) {
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
    EXPECT_NE(std::string(e.what()).find("kernel 'matmul_desc' has not finished after 0.25 s (TESSERA_GPU_TIMEOUT): "
                                         "it may never end"),
              std::string::npos)
        << e.what();
  }
  // With no limit the driver's wait decides (a GPU's would never return; the fake's fails).
  unsetenv("TESSERA_GPU_TIMEOUT");
  try {
    m.driver.synchronize(nullptr, "matmul_desc");
    ADD_FAILURE() << "the fake driver's wait returned";
  } catch (const KernelTimeout&) {
    ADD_FAILURE() << "no time limit was set";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuStreamSynchronize failed for kernel 'matmul_desc': "
                                         "CUDA_ERROR_LAUNCH_TIMEOUT"),
              std::string::npos)
        << e.what();
  }
  unsetenv("TESSERA_FAKE_CUDA_HANG");
  setenv("TESSERA_GPU_TIMEOUT", "0.25", 1);
  EXPECT_NO_THROW(m.driver.synchronize(nullptr, "matmul_desc"));  // idle: the poll returns at once
  for (const char* bad : {"soon", "-1", "1s"}) {
    setenv("TESSERA_GPU_TIMEOUT", bad, 1);
    try {
      m.driver.synchronize(nullptr, "matmul_desc");
      ADD_FAILURE() << "TESSERA_GPU_TIMEOUT=" << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("TESSERA_GPU_TIMEOUT must be a number of seconds (0: no limit), not '" +
                                           std::string(bad) + "'"),
                std::string::npos)
          << e.what();
    }
  }
  unsetenv("TESSERA_GPU_TIMEOUT");
}
