// The tutorial matmul's shared-memory traffic, counted by the emulator on the code the NVPTX backend emits: the
// swizzled operand buffers (cp.async writes, ldmatrix / wgmma reads) and the epilogue's accumulator exchange
// (mma fragments written, rows read for 16-byte global stores) cost no extra wavefront on sm_80 and sm_90a. The
// exchange is conflict-free because its row pad is chosen for the two layouts (transforms/analysis/
// ExchangeConflicts.h); with the fixed one-bank pad these launches had 512 (64x64x32, 4 warps) and 3072 (128x128x64,
// 8 warps) bank conflicts, all in the exchange. The i8 matmul on AMD's integer MFMAs, below.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ir/FloatFormats.h"
#include "jit/JitKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/kernels/matmul.h"

namespace tessera {
namespace {

struct Config {
  int BM, BN, BK, warps;
  int matrixInstrSize = 0;  // jit::LaunchOptions::matrixInstrSize: 32 runs AMD's v_mfma_f32_32x32x8 where it can
};

// One block of the tutorial matmul `kernel` (M = BM, N = BN, K = 2 BK: two iterations of the K loop) on the
// emulator for `arch`, on a and b of In (their bits) into c of Out: the output and the launch's report. The
// pointers carry their sizes, as Python's do, unless `sized` is false (raw device pointers, as C++ may pass).
template <typename In, typename Out>
std::pair<std::vector<Out>, std::optional<sim::Report>> runMatmul(const KernelDef& kernel, const Config& c,
                                                                  const char* arch, const std::vector<In>& a,
                                                                  const std::vector<In>& b, bool sized = true) {
  sim::SimRuntime& runtime = sim::simRuntime(arch);
  const int64_t M = c.BM, N = c.BN, K = 2 * c.BK;
  const uint64_t aBytes = a.size() * sizeof(In), bBytes = b.size() * sizeof(In), cBytes = M * N * sizeof(Out);
  jit::DeviceAddress da = runtime.allocate(aBytes), db = runtime.allocate(bBytes), dc = runtime.allocate(cBytes);
  runtime.copyToDevice(da, a.data(), aBytes);
  runtime.copyToDevice(db, b.data(), bBytes);
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel matmul(kernel, cache);
  jit::LaunchOptions options;
  options.runtime = &runtime;
  options.numWarps = c.warps;
  options.matrixInstrSize = c.matrixInstrSize;
  auto pointer = [&](jit::DeviceAddress d, uint64_t bytes) {
    return sized ? jit::KernelArg::pointer(d, bytes) : jit::KernelArg::pointer(d);
  };
  matmul.launch({1, 1, 1},
                {pointer(da, aBytes), pointer(db, bBytes), pointer(dc, cBytes), M, N, K, K, int64_t(1), N,
                 int64_t(1), N, int64_t(1)},
                {{"BM", c.BM}, {"BN", c.BN}, {"BK", c.BK}, {"GROUP_M", 8}}, options);
  std::optional<sim::Report> report = runtime.takeLastReport();
  std::vector<Out> out(M * N);
  runtime.copyToHost(out.data(), dc, cBytes);
  for (jit::DeviceAddress d : {da, db, dc}) runtime.release(d);
  return {std::move(out), std::move(report)};
}

std::string configName(const Config& c, const char* arch) {
  return std::to_string(c.BM) + "x" + std::to_string(c.BN) + "x" + std::to_string(c.BK) + "_warps" +
         std::to_string(c.warps) + (c.matrixInstrSize ? "_mfma" + std::to_string(c.matrixInstrSize) : "") + "_" + arch;
}

class MatmulBankConflicts : public ::testing::TestWithParam<std::tuple<Config, const char*>> {};

TEST_P(MatmulBankConflicts, NoneInOperandsOrEpilogue) {
  const auto& [c, arch] = GetParam();
  const int64_t M = c.BM, N = c.BN, K = 2 * c.BK;
  // Small integers: exact in f16 and in the f32 accumulator.
  std::vector<uint16_t> a(M * K), b(K * N);
  std::vector<float> expected(M * N, 0.0f);
  for (int64_t i = 0; i < M * K; ++i) a[i] = ir::encodeF16(static_cast<double>(i % 5) - 2);
  for (int64_t i = 0; i < K * N; ++i) b[i] = ir::encodeF16(static_cast<double>(i % 3) - 1);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        expected[m * N + n] += static_cast<float>((m * K + k) % 5 - 2) * static_cast<float>((k * N + n) % 3 - 1);
  const auto [out, report] = runMatmul<uint16_t, float>(kernels::matmul_kernel(), c, arch, a, b);

  EXPECT_EQ(out, expected);
  ASSERT_TRUE(report);
  EXPECT_GT(report->total.sharedLoad.requests, 0u);
  EXPECT_GT(report->total.sharedStore.requests, 0u);  // the epilogue's exchange
  EXPECT_EQ(report->total.sharedBankConflicts(), 0u) << report->str();
}

INSTANTIATE_TEST_SUITE_P(Tutorial04, MatmulBankConflicts,
                         ::testing::Combine(::testing::Values(Config{64, 64, 32, 4}, Config{128, 128, 64, 8}),
                                            ::testing::Values("sm_80", "sm_90a")),
                         [](const auto& info) { return configName(std::get<0>(info.param), std::get<1>(info.param)); });

// On AMD the copies of B are loads and LDS stores that transpose (N-contiguous in memory, K-contiguous in LDS,
// 16-byte loads of 4 K rows a thread, one 8-byte store per column): with 8 of a store phase's 16 lanes along K
// they reach all 16 phases of the 128-byte K rows (64 of f16), none conflicts. Before (all 16 along N, or 4 along
// K) they wrote 4 or 8 of the 16: 384 extra wavefronts at 128x128x64, 2304 at 128x256x64. Where K rows are 64
// bytes (BK 32), two rows share the banks, and the columns one store writes (8 apart) all had the same parity, so
// half of the banks: 96 extra wavefronts at 64x64x32, 384 at 64x256x32, until B's buffer permuted its rows
// (mfmaOperandLdsLayout).
INSTANTIATE_TEST_SUITE_P(Tutorial04Amd, MatmulBankConflicts,
                         ::testing::Combine(::testing::Values(Config{64, 64, 32, 4}, Config{64, 256, 32, 4},
                                                              Config{128, 128, 64, 8}, Config{128, 256, 64, 8}),
                                            ::testing::Values("gfx942", "gfx90a")),
                         [](const auto& info) { return configName(std::get<0>(info.param), std::get<1>(info.param)); });

// On v_mfma_f32_32x32x8 (matrix_instr_nonkdim=32): the operand reads are the same 8-byte vectors, 16 lanes of 16
// consecutive rows at a time, and the epilogue exchanges from the 32x32 fragments.
INSTANTIATE_TEST_SUITE_P(Tutorial04AmdLargeMfma, MatmulBankConflicts,
                         ::testing::Combine(::testing::Values(Config{64, 256, 32, 4, 32}, Config{128, 128, 64, 4, 32},
                                                              Config{128, 256, 64, 8, 32}),
                                            ::testing::Values("gfx942", "gfx90a")),
                         [](const auto& info) { return configName(std::get<0>(info.param), std::get<1>(info.param)); });

// Launched with raw pointers (no sizes, so no i32 offsets), the loop carries the i64 sum of its steps instead of
// the i32 one (canonicalize-pointers), and its copies restage as the sized launch's do: the same LDS traffic.
// Before, the loop carried the pointer tiles themselves, which stage-copies-in-registers cannot recompute in its
// layouts: at 128x128x64 on gfx942 (8 waves) the copies went to LDS in the pointers' layout, 640 store requests
// and 5120 wavefronts (3584 of them conflicts) against the sized launch's 448 and 1280. On sm_90a (cp.async) the
// two launches were alike already; it checks that the i64 sum keeps them so.
class MatmulRawPointers : public ::testing::TestWithParam<std::tuple<Config, const char*>> {};

TEST_P(MatmulRawPointers, StoreToLdsAsSizedPointersDo) {
  const auto& [c, arch] = GetParam();
  const int64_t M = c.BM, N = c.BN, K = 2 * c.BK;
  std::vector<uint16_t> a(M * K), b(K * N);
  for (int64_t i = 0; i < M * K; ++i) a[i] = ir::encodeF16(static_cast<double>(i % 5) - 2);
  for (int64_t i = 0; i < K * N; ++i) b[i] = ir::encodeF16(static_cast<double>(i % 3) - 1);
  const auto [sizedOut, sized] = runMatmul<uint16_t, float>(kernels::matmul_kernel(), c, arch, a, b);
  const auto [rawOut, raw] = runMatmul<uint16_t, float>(kernels::matmul_kernel(), c, arch, a, b, /*sized=*/false);

  EXPECT_EQ(rawOut, sizedOut);
  ASSERT_TRUE(sized && raw);
  EXPECT_EQ(raw->total.sharedBankConflicts(), 0u) << raw->str();
  EXPECT_EQ(raw->total.sharedStore.requests, sized->total.sharedStore.requests);
  EXPECT_EQ(raw->total.sharedStore.wavefronts, sized->total.sharedStore.wavefronts);
}

INSTANTIATE_TEST_SUITE_P(Tutorial04, MatmulRawPointers,
                         ::testing::Combine(::testing::Values(Config{128, 128, 64, 8}),
                                            ::testing::Values("gfx942", "sm_90a")),
                         [](const auto& info) { return configName(std::get<0>(info.param), std::get<1>(info.param)); });

// The i8 matmul on AMD's integer MFMAs: the operand reads (8 bytes a lane on gfx942, 4 on gfx90a) from the
// 8-byte-chunk swizzle, B's copies into LDS (N-contiguous in memory, K-contiguous in LDS: 8 K rows of 2 columns a
// thread, one 8-byte store per column) and the epilogue's exchange have no conflict. B's K rows are 64 bytes, two
// to a 128-byte line: the lanes of a store phase write columns of one parity, which reached only 8 of the 16 bank
// pairs (2-way, 4 extra wavefronts per request: 96 at 64x64, 192 at 128x128) until B's buffer permuted its rows
// (mfmaOperandLdsLayout: row r where r ^ ((r >> 4) % 2) would be).
class MatmulI8BankConflicts : public ::testing::TestWithParam<std::tuple<Config, const char*>> {};

TEST_P(MatmulI8BankConflicts, NoneInOperandsOrEpilogue) {
  const auto& [c, arch] = GetParam();
  const int64_t M = c.BM, N = c.BN, K = 2 * c.BK;
  std::vector<int8_t> a(M * K), b(K * N);
  std::vector<int32_t> expected(M * N, 0);
  for (int64_t i = 0; i < M * K; ++i) a[i] = static_cast<int8_t>(i % 251 - 125);
  for (int64_t i = 0; i < K * N; ++i) b[i] = static_cast<int8_t>(i % 241 - 120);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) expected[m * N + n] += int32_t(a[m * K + k]) * int32_t(b[k * N + n]);
  const auto [out, report] = runMatmul<int8_t, int32_t>(kernels::matmul_kernel_of<i8>("i8"), c, arch, a, b);

  EXPECT_EQ(out, expected);
  ASSERT_TRUE(report);
  for (const sim::OpCounters& op : report->ops)
    if (op.op == "dot") EXPECT_GT(op.counters.sharedLoad.requests, 0u);
  EXPECT_GT(report->total.sharedStore.requests, 0u);
  EXPECT_EQ(report->total.sharedBankConflicts(), 0u) << report->str();
}

INSTANTIATE_TEST_SUITE_P(Tutorial04, MatmulI8BankConflicts,
                         ::testing::Combine(::testing::Values(Config{64, 64, 64, 4}, Config{128, 128, 64, 8}),
                                            ::testing::Values("gfx942", "gfx90a")),
                         [](const auto& info) { return configName(std::get<0>(info.param), std::get<1>(info.param)); });

}  // namespace
}  // namespace tessera
