// A pipelined wgmma matmul leaves each iteration's dot in flight (pipeline-loops: `pending = 1`, the next stage's
// copies after the dot, a dot_wait after the loop), on the emulator, which checks every wgmma operand and
// accumulator against its wait: the tutorial matmul on sm_90a over several K iterations writes what the interpreter
// writes. Then the order that makes it safe is broken on purpose: the same final tile IR with the dot moved after
// the copies (a copy overwrites the stage the previous iteration's still-pending dot reads) is reported, naming the
// overwrite, the kernel and the copy. The inputs are small integers, so every order of summation gives the same sums.
// Last, a dot into an accumulator computed from the carried value (halved before each step, as attention's O is
// rescaled) is left in flight too, its carried value waited for (dot_wait) before the halving reads it; without that
// wait the emulator reports the read, naming the kernel and the op.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "ir/Error.h"
#include "ir/FloatFormats.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "jit/JitKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/kernels/matmul.h"
#include "tests/gpucheck/Cases.h"
#include "tests/gpucheck/GpuCheck.h"

namespace tessera {
namespace {

constexpr int64_t M = 64, N = 64, K = 160;  // five K iterations of 32: the loop runs with dots in flight
const Constants kTiles{{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 8}};

std::vector<uint16_t> smallIntegers(int64_t n, int64_t mul, int64_t mod) {
  std::vector<uint16_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = ir::encodeF16(static_cast<double>((i * mul) % mod) - mod / 2);
  return v;
}

template <typename T>
std::vector<uint8_t> bytesOf(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// A and B (f16) and C (f32, M x N, zeroed), the buffers both kernels below take first.
std::vector<gpucheck::CheckArg> operandBuffers(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  return {gpucheck::HostBuffer{ir::ScalarKind::F16, bytesOf(a), std::nullopt},
          gpucheck::HostBuffer{ir::ScalarKind::F16, bytesOf(b), std::nullopt},
          gpucheck::HostBuffer{ir::ScalarKind::F32, std::vector<uint8_t>(M * N * 4), std::nullopt}};
}

struct Matmul {
  std::vector<uint16_t> a = smallIntegers(M * K, 7, 9), b = smallIntegers(K * N, 5, 7);

  std::vector<float> onInterpreter() const {
    std::vector<uint16_t> ca = a, cb = b;
    std::vector<float> c(M * N, -1.0f);
    kernels::matmul_kernel().runInterpreter(
        {1, 1, 1},
        {interp::Buffer{ca.data(), ca.size() * 2}, interp::Buffer{cb.data(), cb.size() * 2},
         interp::Buffer{c.data(), c.size() * 4}, M, N, K, K, int64_t(1), N, int64_t(1), N, int64_t(1)},
        kTiles);
    return c;
  }

  std::vector<gpucheck::CheckArg> args() const {
    std::vector<gpucheck::CheckArg> all = operandBuffers(a, b);
    for (int64_t v : {M, N, K, K, int64_t(1), N, int64_t(1), N, int64_t(1)}) all.push_back(v);
    return all;
  }
};

// The tile IR after the last pass of the JIT's compile of the tutorial matmul for sm_90a.
std::string finalTileIR(sim::SimRuntime& runtime) {
  const size_t aBytes = M * K * 2, bBytes = K * N * 2, cBytes = M * N * 4;
  jit::DeviceAddress da = runtime.allocate(aBytes), db = runtime.allocate(bBytes), dc = runtime.allocate(cBytes);
  const std::vector<jit::KernelArg> args{jit::KernelArg::pointer(da, aBytes), jit::KernelArg::pointer(db, bBytes),
                                         jit::KernelArg::pointer(dc, cBytes), M, N, K, K, int64_t(1), N, int64_t(1),
                                         N, int64_t(1)};
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel matmul(kernels::matmul_kernel(), cache);
  jit::LaunchOptions inspect;
  inspect.target = runtime.target();
  inspect.arch = "sm_90a";
  inspect.numWarps = 4;
  const std::string ir = matmul.compileOnly(args, kTiles, inspect)->irAfterPass.back().second;
  for (jit::DeviceAddress d : {da, db, dc}) runtime.release(d);
  return ir;
}

// Lowers and optimizes tile IR that has been through the passes, as the JIT does after them.
std::shared_ptr<const jit::CompiledKernel> compileTileIR(const std::string& text) {
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "matmul.tir");
  ir::verify(*m);
  return gpucheck::compileAfterPasses(*m->functions().at(0), "nvptx", "sm_90a", 4);
}

std::vector<ir::Type> parameterTypes(const std::string& text) {
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "matmul.tir");
  std::vector<ir::Type> types;
  for (const ir::Value* v : m->functions().at(0)->body()->arguments()) types.push_back(v->type());
  return types;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// `text` with the K loop's local_loads and dot moved to just before the loop's yield: after the copies into the
// stage the previous iteration's dot read.
std::string withDotAfterCopies(const std::string& text) {
  std::vector<std::string> body = lines(text), moved, out;
  for (const std::string& line : body)
    if (line.find(" = local_load ") != std::string::npos || line.find(" = dot ") != std::string::npos)
      moved.push_back(line);
  for (const std::string& line : body) {
    if (line.find(" = local_load ") != std::string::npos || line.find(" = dot ") != std::string::npos) continue;
    if (line.rfind("    yield ", 0) == 0) out.insert(out.end(), moved.begin(), moved.end());
    out.push_back(line);
  }
  std::string joined;
  for (const std::string& line : out) joined += line + "\n";
  return joined;
}

std::vector<float> floatsOf(const gpucheck::HostBuffer& b) {
  std::vector<float> v(b.bytes.size() / 4);
  std::memcpy(v.data(), b.bytes.data(), b.bytes.size());
  return v;
}

// Runs `kernel` (compiled from `ir`) on the emulator: no finding, and C bit for bit the interpreter's.
void expectCleanAndExact(const std::shared_ptr<const jit::CompiledKernel>& kernel, const std::string& ir,
                         const std::vector<gpucheck::CheckArg>& args, const std::vector<float>& expected,
                         sim::SimRuntime& runtime) {
  const std::vector<gpucheck::HostBuffer> out =
      gpucheck::launchCompiled(kernel, parameterTypes(ir), {1, 1, 1}, args, runtime);
  std::optional<sim::Report> report = runtime.lastReport();
  ASSERT_TRUE(report);
  EXPECT_FALSE(report->failed()) << report->str();
  const std::vector<float> got = floatsOf(out.at(2));
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(expected[i])) << "element " << i;
}

TEST(SimAsyncDot, APipelinedWgmmaMatmulKeepsOneDotInFlightAndWritesWhatTheInterpreterWrites) {
  sim::SimRuntime& runtime = sim::simRuntime("sm_90a");
  const std::string ir = finalTileIR(runtime);
  // The loop's dot returns with its products pending; the loop is followed by the wait for the last one.
  ASSERT_NE(ir.find("pending = 1} : tile<64x64xf32"), std::string::npos) << ir;
  ASSERT_NE(ir.find(" = dot_wait "), std::string::npos) << ir;
  EXPECT_LT(ir.find(" = dot "), ir.find(" = async_copy ", ir.find(" = for "))) << "the copies come after the dot";

  std::shared_ptr<const jit::CompiledKernel> kernel = compileTileIR(ir);
  EXPECT_NE(kernel->optimizedLLVMIR.find("wgmma.wait_group.sync.aligned 1;"), std::string::npos);
  const Matmul mm;
  expectCleanAndExact(kernel, ir, mm.args(), mm.onInterpreter(), runtime);
}

TEST(SimAsyncDot, CopiesIssuedBeforeTheDotOverwriteThePendingDotsStageAndAreReported) {
  sim::SimRuntime& runtime = sim::simRuntime("sm_90a");
  const std::string broken = withDotAfterCopies(finalTileIR(runtime));
  std::shared_ptr<const jit::CompiledKernel> kernel = compileTileIR(broken);
  const Matmul mm;
  try {
    gpucheck::launchCompiled(kernel, parameterTypes(broken), {1, 1, 1}, mm.args(), runtime);
    FAIL() << "the emulator did not report the overwrite:\n" << broken;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("wgmma operand overwritten before its wait"), std::string::npos) << what;
    EXPECT_NE(what.find("matmul"), std::string::npos) << what;
    EXPECT_NE(what.find("async_copy"), std::string::npos) << what;  // the op that wrote it
  }
}

struct HalvedAccumulator {
  KernelDef def = gpucheck::halvedAccumulatorDot();
  const Constants tiles{{"BM", 64}, {"BN", 64}, {"BK", 32}};
  std::vector<uint16_t> a = smallIntegers(M * K, 7, 9), b = smallIntegers(K * N, 5, 7);

  std::vector<float> onInterpreter() const {
    std::vector<uint16_t> ca = a, cb = b;
    std::vector<float> c(M * N, -1.0f);
    def.runInterpreter({1, 1, 1},
                       {interp::Buffer{ca.data(), ca.size() * 2}, interp::Buffer{cb.data(), cb.size() * 2},
                        interp::Buffer{c.data(), c.size() * 4}, K},
                       tiles);
    return c;
  }

  std::vector<gpucheck::CheckArg> args() const {
    std::vector<gpucheck::CheckArg> all = operandBuffers(a, b);
    all.push_back(K);
    return all;
  }

  // The tile IR after the last pass of the JIT's compile for sm_90a.
  std::string finalTileIR(sim::SimRuntime& runtime) const {
    const size_t aBytes = M * K * 2, bBytes = K * N * 2, cBytes = M * N * 4;
    jit::DeviceAddress da = runtime.allocate(aBytes), db = runtime.allocate(bBytes), dc = runtime.allocate(cBytes);
    const std::vector<jit::KernelArg> args{jit::KernelArg::pointer(da, aBytes), jit::KernelArg::pointer(db, bBytes),
                                           jit::KernelArg::pointer(dc, cBytes), K};
    jit::KernelCache cache{std::filesystem::path()};
    jit::JitKernel jitted(def, cache);
    jit::LaunchOptions inspect;
    inspect.target = runtime.target();
    inspect.arch = "sm_90a";
    inspect.numWarps = 4;
    const std::string ir = jitted.compileOnly(args, tiles, inspect)->irAfterPass.back().second;
    for (jit::DeviceAddress d : {da, db, dc}) runtime.release(d);
    return ir;
  }
};

// `text` without the K loop's dot_wait (the first one: the one after the loop waits for the last dot), its result
// replaced by its operand: the halving then reads the previous iteration's pending products.
std::string withoutTheLoopsDotWait(const std::string& text) {
  std::vector<std::string> body = lines(text);
  std::string result, operand;
  std::string joined;
  for (const std::string& line : body) {
    const size_t at = line.find(" = dot_wait %");
    if (result.empty() && at != std::string::npos) {
      result = line.substr(line.find('%'), at - line.find('%'));
      operand = line.substr(at + 12, line.find(' ', at + 12) - (at + 12));
      continue;
    }
    joined += line + "\n";
  }
  EXPECT_FALSE(result.empty()) << text;
  for (size_t at = joined.find(result + " "); !result.empty() && at != std::string::npos;
       at = joined.find(result + " ", at + operand.size()))
    joined.replace(at, result.size(), operand);
  for (size_t at = joined.find(result + ","); !result.empty() && at != std::string::npos;
       at = joined.find(result + ",", at + operand.size()))
    joined.replace(at, result.size(), operand);
  return joined;
}

TEST(SimAsyncDot, ADotIntoAHalvedAccumulatorStaysInFlightBehindAWaitForTheCarriedValue) {
  sim::SimRuntime& runtime = sim::simRuntime("sm_90a");
  const HalvedAccumulator h;
  const std::string ir = h.finalTileIR(runtime);
  const size_t loop = ir.find(" = for ");
  const size_t wait = ir.find(" = dot_wait ", loop), dot = ir.find(" = dot ", loop);
  ASSERT_NE(wait, std::string::npos) << ir;
  EXPECT_LT(wait, dot) << "the carried value is waited for before the dot reads it:\n" << ir;
  EXPECT_NE(ir.find("pending = 1} : tile<64x64xf32", dot), std::string::npos) << ir;
  EXPECT_NE(ir.find(" = dot_wait ", ir.find("    yield ", dot)), std::string::npos) << "a wait after the loop";

  expectCleanAndExact(compileTileIR(ir), ir, h.args(), h.onInterpreter(), runtime);
}

TEST(SimAsyncDot, ReadingThePendingAccumulatorWithoutTheWaitIsReported) {
  sim::SimRuntime& runtime = sim::simRuntime("sm_90a");
  const HalvedAccumulator h;
  const std::string broken = withoutTheLoopsDotWait(h.finalTileIR(runtime));
  std::shared_ptr<const jit::CompiledKernel> kernel = compileTileIR(broken);
  try {
    gpucheck::launchCompiled(kernel, parameterTypes(broken), {1, 1, 1}, h.args(), runtime);
    FAIL() << "the emulator did not report the read:\n" << broken;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("wgmma accumulator read before its wait"), std::string::npos) << what;
    EXPECT_NE(what.find("halved_accumulator"), std::string::npos) << what;
    EXPECT_NE(what.find("(mul)"), std::string::npos) << what;  // the op that read it
  }
}

}  // namespace
}  // namespace tessera
