// Every tutorial kernel and op case of tests/gpucheck/Cases.h, run on the GPU and on the reference interpreter
// from the same random inputs, compared element by element. Skips (with the reason) where there is no GPU.
#include <gtest/gtest.h>

#include "jit/CudaDriver.h"
#include "jit/DeviceRuntime.h"
#include "jit/JitKernel.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/vector_add.h"
#include "tests/gpucheck/Cases.h"

using namespace tessera::gpucheck;
using namespace tessera::jit;

namespace {

const std::vector<CheckCase>& cases() {
  static const std::vector<CheckCase> all = allCases();
  return all;
}

KernelCache& testCache() {
  static KernelCache cache{std::filesystem::path()};  // memory only: always compile what this build produces
  return cache;
}

class JitGpu : public testing::TestWithParam<size_t> {};

TEST_P(JitGpu, MatchesTheInterpreter) {
  CudaDriver& driver = CudaDriver::instance();
  if (!driver.available()) GTEST_SKIP() << "no GPU: " << driver.unavailableReason();
  const CheckCase& c = cases()[GetParam()];
  CheckResult r = checkAgainstInterpreter(c, testCache(), *makeCudaDeviceRuntime(driver));
  EXPECT_EQ(r.status, CheckResult::Status::Pass)
      << c.name << ": " << (r.status == CheckResult::Status::Error ? r.message : r.firstMismatch)
      << " (worst error " << r.worstError << " of tolerance, " << r.mismatches << " mismatches)";
}

std::string caseTestName(const testing::TestParamInfo<size_t>& info) {
  std::string name;
  for (char ch : cases()[info.param].name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return std::to_string(info.param) + "_" + name;
}

INSTANTIATE_TEST_SUITE_P(Cases, JitGpu, testing::Range<size_t>(0, cases().size()), caseTestName);

}  // namespace

TEST(JitGpuLaunch, SecondLaunchOfASpecializationReusesTheLoadedKernel) {
  CudaDriver& driver = CudaDriver::instance();
  if (!driver.available()) GTEST_SKIP() << "no GPU: " << driver.unavailableReason();
  JitKernel k(tessera::kernels::vector_add_kernel(), testCache(), driver);
  const int64_t n = 4096;
  std::vector<float> hx(n, 1.0f), hy(n, 2.0f);
  DeviceBuffer x = DeviceBuffer::fromHost(hx), y = DeviceBuffer::fromHost(hy), out(n * sizeof(float));
  cu::Stream stream = driver.createStream();
  LaunchOptions options;
  options.stream = stream;
  k.launch({n / 1024, 1, 1}, {x, y, out, n}, {{"BLOCK", int64_t(1024)}}, options);
  k.launch({n / 1024, 1, 1}, {x, y, out, n}, {{"BLOCK", int64_t(1024)}}, options);
  EXPECT_EQ(k.loadedVariants(), 1u);
  k.launch({n / 1024 + 1, 1, 1}, {x, y, out, n - 1}, {{"BLOCK", int64_t(1024)}}, options);  // n-1: not divisible by 16
  EXPECT_EQ(k.loadedVariants(), 2u);
  driver.synchronize(stream, "vector_add");
  driver.destroyStream(stream);
  for (float v : out.toHost<float>()) ASSERT_EQ(v, 3.0f);
}

TEST(JitGpuLaunch, LargeSharedMemoryRaisesTheLimit) {
  CudaDriver& driver = CudaDriver::instance();
  if (!driver.available()) GTEST_SKIP() << "no GPU: " << driver.unavailableReason();
  // 128x128x128 f16 matmul blocks stage 64 KB of operands when dot operands go through shared memory.
  JitKernel k(tessera::kernels::matmul_kernel(), testCache(), driver);
  const int64_t M = 256, N = 256, K = 256;
  std::vector<uint16_t> a(M * K, 0x3c00), b(K * N, 0x3c00);  // all ones
  DeviceBuffer da = DeviceBuffer::fromHost(a), db = DeviceBuffer::fromHost(b), dc(M * N * sizeof(float));
  tessera::Constants constants{{"BM", int64_t(128)}, {"BN", int64_t(128)}, {"BK", int64_t(128)}, {"GROUP_M", int64_t(4)}};
  std::vector<KernelArg> args{da, db, dc, M, N, K, K, 1, N, 1, N, 1};
  LaunchOptions options;
  options.numWarps = 8;
  LoadedKernel& loaded = k.prepare(args, constants, options);
  loaded.launch({4, 1, 1}, args);
  driver.synchronize(nullptr, "matmul");
  for (float v : dc.toHost<float>()) ASSERT_EQ(v, static_cast<float>(K));
  if (loaded.compiled().sharedBytes <= 48 * 1024)
    GTEST_SKIP() << "results correct, but this lowering used only " << loaded.compiled().sharedBytes
                 << " bytes of shared memory, so the >48 KB opt-in path was not exercised";
}
