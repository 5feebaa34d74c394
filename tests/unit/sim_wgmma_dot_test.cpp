// Which dots the NVPTX backend runs on wgmma (backends/nvptx/WgmmaPlan.h): the tutorial matmul at ISSUE 12's
// configurations compiles to wgmma.mma_async of the planned N on sm_90a, with its fence / commit / wait, and to
// mma.sync on sm_80; fewer warps than a warpgroup, or fewer rows than wgmma's 64, keep mma.sync on sm_90a. fp8
// matmuls run on m64nNk32 with both operands K-major: B copied by cp.async from a B^T tensor, through registers
// from a row-major one; on sm_80 they stay on FMAs.
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

// B row-major [K, N], or with `bTransposed` B^T row-major ([N, K]: strides (1, K)).
SimKernelCase matmulCase(const Config& c, KernelDef kernel = kernels::matmul_kernel(), bool bTransposed = false) {
  const jit::KernelArg p = alignedPointer();
  const int64_t n = 512, one = 1;
  return {configName(c), std::move(kernel),
          {{"BM", c.BM}, {"BN", c.BN}, {"BK", c.BK}, {"GROUP_M", 8}},
          {p, p, p, n, n, n, n, one, bTransposed ? one : n, bTransposed ? n : one, n, one}, c.warps};
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
  EXPECT_EQ(count(ampere, "wgmma."), 0);
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
    const auto compiled = compileCase(matmulCase(c), "nvptx", "sm_90a");
    const std::string& hopper = compiled->optimizedLLVMIR;
    EXPECT_EQ(count(hopper, "wgmma."), 0) << configName(c);  // no instruction (the dot report says "not wgmma:")
    EXPECT_GT(count(hopper, "llvm.nvvm.mma.m16n8k16"), 0) << configName(c);
    ASSERT_EQ(compiled->dots.size(), 1u) << configName(c);
    EXPECT_EQ(compiled->dots[0].instruction, "mma.sync m16n8k16 f16") << configName(c);
    EXPECT_EQ(compiled->dots[0].note.rfind("not wgmma: ", 0), 0u) << compiled->dots[0].note;
  }
}

class WgmmaFp8Matmul : public ::testing::TestWithParam<Config> {};

TEST_P(WgmmaFp8Matmul, RunsOnK32WgmmaWithBothOperandsKMajor) {
  const Config& c = GetParam();
  const std::string mma = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.n) + "k32.f32";
  for (bool bTransposed : {true, false}) {
    const std::string e4m3 = compileCase(matmulCase(c, kernels::matmul_kernel_of<f8e4m3>("e4m3"), bTransposed),
                                         "nvptx", "sm_90a")->optimizedLLVMIR;
    EXPECT_GT(count(e4m3, mma + ".e4m3.e4m3 {"), 0) << bTransposed;
    EXPECT_EQ(count(e4m3, mma + ".e4m3.e4m3 {"), count(e4m3, "wgmma.mma_async"));
    EXPECT_EQ(count(e4m3, ", p, 1, 1;"), count(e4m3, "wgmma.mma_async"));  // no transpose immediates
    EXPECT_GT(count(e4m3, "wgmma.wait_group.sync.aligned 0;"), 0);
    // From B^T every copy is a 16-byte cp.async; from a row-major B, B's copy is a load and byte stores.
    EXPECT_GT(count(e4m3, "llvm.nvvm.cp.async.cg.shared.global.16.s"), 0);
    EXPECT_EQ(count(e4m3, "cp.async.ca.shared.global"), 0);
    EXPECT_EQ(count(e4m3, "store i8") > 0, !bTransposed) << bTransposed;
  }
  const std::string e5m2 = compileCase(matmulCase(c, kernels::matmul_kernel_of<f8e5m2>("e5m2"), true), "nvptx",
                                       "sm_90a")->optimizedLLVMIR;
  EXPECT_GT(count(e5m2, mma + ".e5m2.e5m2 {"), 0);
  const std::string mixed = compileCase(matmulCase(c, kernels::matmul_mixed_kernel<f8e4m3, f8e5m2>("mixed"), true),
                                        "nvptx", "sm_90a")->optimizedLLVMIR;
  EXPECT_GT(count(mixed, mma + ".e4m3.e5m2 {"), 0);
  EXPECT_EQ(count(mixed, mma + ".e4m3.e5m2 {"), count(mixed, "wgmma.mma_async"));
  const std::string ampere =
      compileCase(matmulCase(c, kernels::matmul_kernel_of<f8e4m3>("e4m3"), true), "nvptx", "sm_80")->optimizedLLVMIR;
  EXPECT_EQ(count(ampere, "wgmma"), 0);
  EXPECT_EQ(count(ampere, "llvm.nvvm.mma."), 0);
}

INSTANTIATE_TEST_SUITE_P(Issue12Table, WgmmaFp8Matmul,
                         ::testing::Values(Config{128, 128, 64, 4, 128}, Config{128, 256, 64, 8, 256},
                                           Config{64, 64, 32, 4, 64}),
                         [](const auto& info) { return configName(info.param); });

}  // namespace
}  // namespace tessera::testing
