// Which dots the NVPTX backend runs on wgmma (backends/nvptx/WgmmaPlan.h): the tutorial matmul at ISSUE 12's
// configurations compiles to wgmma.mma_async of the planned N on sm_90a, with its fence / commit / wait, and to
// mma.sync on sm_80; fewer warps than a warpgroup, or fewer rows than wgmma's 64, keep mma.sync on sm_90a.
// Their results under the emulator against the interpreter are tessera-gpu-check's (tests/gpucheck/Cases.cpp).
#include <gtest/gtest.h>

#include "SimHostTestUtil.h"

namespace tessera::testing {
namespace {

struct Config {
  int BM, BN, BK, warps;
  int n;  // the wgmma instruction's N
};

std::string configName(const Config& c) {
  return std::to_string(c.BM) + "x" + std::to_string(c.BN) + "x" + std::to_string(c.BK) + "_warps" +
         std::to_string(c.warps);
}

SimKernelCase matmulCase(const Config& c) {
  const jit::KernelArg p = alignedPointer();
  const int64_t n = 512;
  return {configName(c), kernels::matmul_kernel(),
          {{"BM", c.BM}, {"BN", c.BN}, {"BK", c.BK}, {"GROUP_M", 8}},
          {p, p, p, n, n, n, n, int64_t(1), n, int64_t(1), n, int64_t(1)}, c.warps};
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

class WgmmaMatmul : public ::testing::TestWithParam<Config> {};

TEST_P(WgmmaMatmul, RunsOnWgmmaOnSm90aAndMmaSyncOnSm80) {
  const Config& c = GetParam();
  const std::string hopper = compileCase(matmulCase(c), "nvptx", "sm_90a")->optimizedLLVMIR;
  EXPECT_GT(count(hopper, "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.n) + "k16.f32.f16.f16"), 0);
  EXPECT_EQ(count(hopper, "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.n) + "k16"),
            count(hopper, "wgmma.mma_async"));  // every instruction of the planned N
  EXPECT_GT(count(hopper, "wgmma.fence.sync.aligned;"), 0);
  EXPECT_GT(count(hopper, "wgmma.commit_group.sync.aligned;"), 0);
  EXPECT_GT(count(hopper, "wgmma.wait_group.sync.aligned 0;"), 0);
  EXPECT_EQ(count(hopper, "llvm.nvvm.mma."), 0);
  EXPECT_EQ(count(hopper, "llvm.nvvm.ldmatrix"), 0);
  const std::string ampere = compileCase(matmulCase(c), "nvptx", "sm_80")->optimizedLLVMIR;
  EXPECT_EQ(count(ampere, "wgmma"), 0);
  EXPECT_GT(count(ampere, "llvm.nvvm.mma.m16n8k16"), 0);
}

INSTANTIATE_TEST_SUITE_P(Issue12Table, WgmmaMatmul,
                         ::testing::Values(Config{128, 128, 64, 4, 128}, Config{128, 128, 64, 8, 128},
                                           Config{128, 256, 64, 8, 256}, Config{64, 256, 32, 4, 256},
                                           Config{128, 64, 64, 4, 64}, Config{64, 64, 32, 4, 64}),
                         [](const auto& info) { return configName(info.param); });

// Two warps are not a warpgroup, and 16-row blocks are smaller than wgmma's 64: both keep mma.sync on sm_90a.
TEST(WgmmaMatmulFallback, TwoWarpsOrSixteenRowsKeepMmaSync) {
  for (const Config& c : {Config{64, 64, 32, 2, 0}, Config{16, 64, 32, 4, 0}}) {
    const std::string hopper = compileCase(matmulCase(c), "nvptx", "sm_90a")->optimizedLLVMIR;
    EXPECT_EQ(count(hopper, "wgmma"), 0) << configName(c);
    EXPECT_GT(count(hopper, "llvm.nvvm.mma.m16n8k16"), 0) << configName(c);
  }
}

}  // namespace
}  // namespace tessera::testing
