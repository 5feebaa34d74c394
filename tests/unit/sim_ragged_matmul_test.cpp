// The tutorial matmul on a ragged launch (M, N, K = 75, 67, 90: partial blocks, strides no multiple of 16) on the
// emulator, with sized pointers (KernelArg::pointer(addr, bytes): the offsets32 fact, so canonicalize-pointers
// carries the K loop's pointers as i32 offsets) and with bare ones (i64 sums of the steps carried): both write C
// bit for bit as the interpreter does, on sm_80, sm_90a and gfx942. The inputs are small integers, so every
// order of summation gives the same f32 sums and any difference is an addressing one.
#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <vector>

#include "ir/FloatFormats.h"
#include "jit/JitKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/kernels/matmul.h"

namespace tessera {
namespace {

constexpr int64_t M = 75, N = 67, K = 90;
const Constants kTiles{{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 8}};
constexpr int64_t kPrograms = 2 * 2;  // ceil(75 / 64) x ceil(67 / 64)

struct Inputs {
  std::vector<uint16_t> a, b;
  Inputs() : a(M * K), b(K * N) {
    for (int64_t i = 0; i < M * K; ++i) a[i] = ir::encodeF16(static_cast<double>((i * 7) % 9) - 4);
    for (int64_t i = 0; i < K * N; ++i) b[i] = ir::encodeF16(static_cast<double>((i * 5) % 7) - 3);
  }
};

std::vector<float> onInterpreter(const Inputs& in) {
  std::vector<uint16_t> a = in.a, b = in.b;
  std::vector<float> c(M * N, -1.0f);
  kernels::matmul_kernel().runInterpreter(
      {kPrograms, 1, 1},
      {interp::Buffer{a.data(), a.size() * 2}, interp::Buffer{b.data(), b.size() * 2},
       interp::Buffer{c.data(), c.size() * 4}, M, N, K, K, int64_t(1), N, int64_t(1), N, int64_t(1)},
      kTiles);
  return c;
}

struct Launch {
  std::vector<float> c;
  std::string loopAfterPass;  // the K loop's line after canonicalize-pointers
};

Launch onEmulator(const Inputs& in, const char* arch, bool sized) {
  sim::SimRuntime& runtime = sim::simRuntime(arch);
  const size_t aBytes = in.a.size() * 2, bBytes = in.b.size() * 2, cBytes = M * N * 4;
  jit::DeviceAddress da = runtime.allocate(aBytes), db = runtime.allocate(bBytes), dc = runtime.allocate(cBytes);
  runtime.copyToDevice(da, in.a.data(), aBytes);
  runtime.copyToDevice(db, in.b.data(), bBytes);
  auto pointer = [&](jit::DeviceAddress p, size_t bytes) {
    return sized ? jit::KernelArg::pointer(p, bytes) : jit::KernelArg::pointer(p);
  };
  const std::vector<jit::KernelArg> args{pointer(da, aBytes), pointer(db, bBytes), pointer(dc, cBytes),
                                         M, N, K, K, int64_t(1), N, int64_t(1), N, int64_t(1)};
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel matmul(kernels::matmul_kernel(), cache);
  jit::LaunchOptions options;
  options.runtime = &runtime;
  options.numWarps = 4;
  Launch out;
  // The launch keeps only the final tile IR; the same specialization compiled for inspection keeps every stage.
  jit::LaunchOptions inspect = options;
  inspect.runtime = nullptr;
  inspect.target = runtime.target();
  inspect.arch = arch;
  for (const auto& [stage, ir] : matmul.compileOnly(args, kTiles, inspect)->irAfterPass)
    if (stage.find("canonicalize-pointers") != std::string::npos) {
      const size_t at = ir.find(" = for ");
      if (at != std::string::npos) out.loopAfterPass = ir.substr(ir.rfind('\n', at) + 1, ir.find('\n', at) - ir.rfind('\n', at) - 1);
    }
  matmul.launch({kPrograms, 1, 1}, args, kTiles, options);
  out.c.resize(M * N);
  runtime.copyToHost(out.c.data(), dc, cBytes);
  for (jit::DeviceAddress d : {da, db, dc}) runtime.release(d);
  return out;
}

class RaggedMatmul : public ::testing::TestWithParam<const char*> {};

TEST_P(RaggedMatmul, SizedAndBarePointersWriteWhatTheInterpreterWrites) {
  const Inputs in;
  const std::vector<float> expected = onInterpreter(in);
  const Launch sized = onEmulator(in, GetParam(), true);
  // The launch carried i32 offsets, not pointer tiles.
  ASSERT_FALSE(sized.loopAfterPass.empty());
  EXPECT_EQ(sized.loopAfterPass.find("ptr<"), std::string::npos) << sized.loopAfterPass;
  // Bare pointers: i64 sums of the steps (no fact bounds the offsets).
  const Launch bare = onEmulator(in, GetParam(), false);
  EXPECT_EQ(bare.loopAfterPass.find("ptr<"), std::string::npos) << bare.loopAfterPass;
  EXPECT_NE(bare.loopAfterPass.find(": i64, i64, tile<"), std::string::npos) << bare.loopAfterPass;
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(sized.c[i]), std::bit_cast<uint32_t>(expected[i])) << "sized, element " << i;
    ASSERT_EQ(std::bit_cast<uint32_t>(bare.c[i]), std::bit_cast<uint32_t>(expected[i])) << "bare, element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Tutorial04, RaggedMatmul, ::testing::Values("sm_80", "sm_90a", "gfx942"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace tessera
