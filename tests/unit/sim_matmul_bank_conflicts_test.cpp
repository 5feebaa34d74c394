// The tutorial matmul's shared-memory traffic, counted by the emulator on the code the NVPTX backend emits: the
// swizzled operand buffers (cp.async writes, ldmatrix / wgmma reads) and the epilogue's accumulator exchange
// (mma fragments written, rows read for 16-byte global stores) cost no extra wavefront on sm_80 and sm_90a. The
// exchange is conflict-free because its row pad is chosen for the two layouts (transforms/analysis/
// ExchangeConflicts.h); with the fixed one-bank pad these launches had 512 (64x64x32, 4 warps) and 3072 (128x128x64,
// 8 warps) bank conflicts, all in the exchange.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "ir/FloatFormats.h"
#include "jit/JitKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/kernels/matmul.h"

namespace tessera {
namespace {

struct Config {
  int BM, BN, BK, warps;
};

class MatmulBankConflicts : public ::testing::TestWithParam<std::tuple<Config, const char*>> {};

TEST_P(MatmulBankConflicts, NoneInOperandsOrEpilogue) {
  const auto& [c, arch] = GetParam();
  sim::SimRuntime& runtime = sim::simRuntime(arch);
  const int64_t M = c.BM, N = c.BN, K = 2 * c.BK;  // one block, two iterations of the K loop
  // Small integers: exact in f16 and in the f32 accumulator.
  std::vector<uint16_t> a(M * K), b(K * N);
  std::vector<float> expected(M * N, 0.0f);
  for (int64_t i = 0; i < M * K; ++i) a[i] = ir::encodeF16(static_cast<double>(i % 5) - 2);
  for (int64_t i = 0; i < K * N; ++i) b[i] = ir::encodeF16(static_cast<double>(i % 3) - 1);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        expected[m * N + n] += static_cast<float>((m * K + k) % 5 - 2) * static_cast<float>((k * N + n) % 3 - 1);

  jit::DeviceAddress da = runtime.allocate(a.size() * 2), db = runtime.allocate(b.size() * 2),
                     dc = runtime.allocate(expected.size() * 4);
  runtime.copyToDevice(da, a.data(), a.size() * 2);
  runtime.copyToDevice(db, b.data(), b.size() * 2);
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel matmul(kernels::matmul_kernel(), cache);
  jit::LaunchOptions options;
  options.runtime = &runtime;
  options.numWarps = c.warps;
  matmul.launch({1, 1, 1},
                {jit::KernelArg::pointer(da), jit::KernelArg::pointer(db), jit::KernelArg::pointer(dc), M, N, K, K,
                 int64_t(1), N, int64_t(1), N, int64_t(1)},
                {{"BM", c.BM}, {"BN", c.BN}, {"BK", c.BK}, {"GROUP_M", 8}}, options);
  std::optional<sim::Report> report = runtime.takeLastReport();
  std::vector<float> out(expected.size());
  runtime.copyToHost(out.data(), dc, out.size() * 4);
  for (jit::DeviceAddress d : {da, db, dc}) runtime.release(d);

  EXPECT_EQ(out, expected);
  ASSERT_TRUE(report);
  EXPECT_GT(report->total.sharedLoad.requests, 0u);
  EXPECT_GT(report->total.sharedStore.requests, 0u);  // the epilogue's exchange
  EXPECT_EQ(report->total.sharedBankConflicts(), 0u) << report->str();
}

INSTANTIATE_TEST_SUITE_P(Tutorial04, MatmulBankConflicts,
                         ::testing::Combine(::testing::Values(Config{64, 64, 32, 4}, Config{128, 128, 64, 8}),
                                            ::testing::Values("sm_80", "sm_90a")),
                         [](const auto& info) {
                           const Config& c = std::get<0>(info.param);
                           return std::to_string(c.BM) + "x" + std::to_string(c.BN) + "x" + std::to_string(c.BK) +
                                  "_warps" + std::to_string(c.warps) + "_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace tessera
