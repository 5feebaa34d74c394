// canonicalize-pointers keeps the matmul's meaning: the interpreter runs the tutorial matmul as traced and after
// the pass (its loop carrying i32 offsets instead of pointer tiles), on a ragged launch (M, N, K not multiples of
// the blocks, strides not multiples of 16), and the two write the same bits. Also: without pointer_range = 32
// the loop carries i64 sums instead, and the bits are the same again.
#include <gtest/gtest.h>

#include <bit>
#include <vector>

#include "backends/interpreter/Interpreter.h"
#include "ir/FloatFormats.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "tessera/kernels/matmul.h"
#include "transforms/PassManager.h"

namespace tessera {
namespace {

constexpr int64_t M = 75, N = 67, K = 90;

std::unique_ptr<ir::Module> tracedMatmul(bool narrowPointers) {
  std::unique_ptr<ir::Module> m =
      kernels::matmul_kernel().trace({{"BM", 32}, {"BN", 32}, {"BK", 16}, {"GROUP_M", 2}});
  ir::Function& f = *m->functions().at(0);
  for (unsigned i = 0; i < f.numArguments(); ++i)
    if (narrowPointers && f.argument(i)->type().isPtr()) f.argAttrs(i)["pointer_range"] = ir::Attr::integer(32);
  return m;
}

std::unique_ptr<ir::Module> withPass(const ir::Module& traced) {
  std::unique_ptr<ir::Module> m = ir::parseModule(ir::print(traced));
  transforms::PassManager pm;
  pm.add("canonicalize-pointers");
  pm.run(*m);
  return m;
}

// C (f32) of the ragged matmul of fixed f16 inputs with non-integer values, so that sums round.
std::vector<float> run(const ir::Function& f) {
  std::vector<uint16_t> a(M * K), b(K * N);
  for (int64_t i = 0; i < M * K; ++i) a[i] = ir::encodeF16(static_cast<double>((i * 7) % 23) / 8 - 1.3);
  for (int64_t i = 0; i < K * N; ++i) b[i] = ir::encodeF16(static_cast<double>((i * 5) % 19) / 16 - 0.55);
  std::vector<float> c(M * N, -7.0f);
  const std::vector<interp::Arg> args{interp::Buffer{a.data(), a.size() * 2}, interp::Buffer{b.data(), b.size() * 2},
                                      interp::Buffer{c.data(), c.size() * 4}, M, N, K, K, int64_t(1), N,
                                      int64_t(1), N, int64_t(1)};
  interp::run(f, args, {((M + 31) / 32) * ((N + 31) / 32), 1, 1});
  return c;
}

// The line of `text` that starts the K loop.
std::string loopLine(const std::string& text) {
  const size_t at = text.find(" = for ");
  EXPECT_NE(at, std::string::npos) << text;
  const size_t start = text.rfind('\n', at) + 1;
  return text.substr(start, text.find('\n', at) - start);
}

// The traced kernel and the rewritten one write the same bits of C on the interpreter.
void expectSameBits(const ir::Module& traced, const ir::Module& rewritten) {
  const std::vector<float> before = run(*traced.functions()[0]);
  const std::vector<float> after = run(*rewritten.functions()[0]);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(after[i]), std::bit_cast<uint32_t>(before[i])) << "element " << i;
  EXPECT_NE(before[0], -7.0f);  // the kernel wrote C
}

TEST(CanonicalizePointers, RaggedMatmulWritesTheSameBitsOnTheInterpreter) {
  std::unique_ptr<ir::Module> traced = tracedMatmul(true);
  std::unique_ptr<ir::Module> rewritten = withPass(*traced);
  // The traced loop carries two pointer tiles (B, A) and the accumulator; after the pass, two i32s instead.
  EXPECT_NE(loopLine(ir::print(*traced)).find("xptr<f16>>"), std::string::npos);
  const std::string loop = loopLine(ir::print(*rewritten));
  EXPECT_EQ(loop.find("ptr<"), std::string::npos) << ir::print(*rewritten);
  EXPECT_NE(loop.find(": i32, i32, tile<32x32xf32> {"), std::string::npos) << loop;

  expectSameBits(*traced, *rewritten);
}

// Without pointer_range the sums may not fit an i32: the loop carries them as i64s, and the kernel still writes the
// same bits.
TEST(CanonicalizePointers, WithoutPointerRangeTheLoopCarriesI64Sums) {
  std::unique_ptr<ir::Module> traced = tracedMatmul(false);
  std::unique_ptr<ir::Module> rewritten = withPass(*traced);
  const std::string loop = loopLine(ir::print(*rewritten));
  EXPECT_EQ(loop.find("ptr<"), std::string::npos) << ir::print(*rewritten);
  EXPECT_NE(loop.find(": i64, i64, tile<32x32xf32> {"), std::string::npos) << loop;

  expectSameBits(*traced, *rewritten);
}

}  // namespace
}  // namespace tessera
