// backends/common/XorOfBases.h: the run-at-a-time code for a linear layout's offset computes exactly the bit-by-bit
// XOR of the bases, for any bases (runs, overlapping shifts, zeros, bits past the bases), in 3 instructions a run.
#include <gtest/gtest.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <random>

#include "backends/common/XorOfBases.h"

namespace tessera::backends {
namespace {

using Bases = std::vector<ir::LinearLayout::Basis>;

int64_t bitByBit(int64_t value, const Bases& bases) {
  int64_t result = 0;
  for (size_t i = 0; i < bases.size(); ++i)
    if ((value >> i) & 1) result ^= bases[i][0];
  return result;
}

Bases basesOf(std::initializer_list<int64_t> offsets) {
  Bases bases;
  for (int64_t o : offsets) bases.push_back({o});
  return bases;
}

struct Builder {
  llvm::LLVMContext ctx;
  llvm::Module module{"m", ctx};
  llvm::Function* f = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {llvm::Type::getInt32Ty(ctx)}, false),
      llvm::GlobalValue::ExternalLinkage, "f", module);
  IRBuilder b{llvm::BasicBlock::Create(ctx, "entry", f)};

  // With a constant value the builder folds everything: the result is the offset itself.
  int64_t evaluate(int64_t value, const Bases& bases) {
    llvm::Value* v = xorOfBases(b, b.getInt32(static_cast<uint32_t>(value)), bases);
    auto* c = llvm::dyn_cast<llvm::ConstantInt>(v);
    EXPECT_NE(c, nullptr);
    return c ? static_cast<int64_t>(c->getZExtValue()) : -1;
  }
};

TEST(XorOfBases, EqualsTheBitByBitXorForRandomBases) {
  Builder t;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 13);
    Bases bases;
    for (int i = 0; i < n; ++i) {
      switch (rng() % 4) {
        case 0: bases.push_back({int64_t(1) << (rng() % 16)}); break;             // a power of two
        case 1: bases.push_back({i > 0 ? bases.back()[0] * 2 : 72}); break;      // continues a run
        case 2: bases.push_back({0}); break;                                     // a broadcast bit
        default: bases.push_back({static_cast<int64_t>(rng() % 65536)}); break;  // anything
      }
    }
    const int64_t value = static_cast<int64_t>(rng() % (int64_t(1) << (n + 2)));  // bits past the bases too
    ASSERT_EQ(t.evaluate(value, bases), bitByBit(value, bases)) << "trial " << trial;
  }
}

TEST(XorOfBases, ShiftedBasesThatOverlapAreNotOneRun) {
  Builder t;
  // 3, 6, 12 are 3 shifted, but 3 + 6 != 3 ^ 6: summing them as one run would be wrong.
  const Bases overlapping = basesOf({3, 6, 12});
  for (int64_t v = 0; v < 8; ++v) EXPECT_EQ(t.evaluate(v, overlapping), bitByBit(v, overlapping)) << v;
}

TEST(XorOfBases, ASwizzledRowIsAFewRuns) {
  Builder t;
  llvm::Value* row = t.f->getArg(0);
  // A 64-wide f16 row of a 128-byte-swizzled buffer: row bits 0-2 XOR into the column (72 = 64 + 8, doubling), bits
  // 3-5 are the plain stride: two runs, so two and-shift-multiplies and one XOR (lshr 0 folds).
  xorOfBases(t.b, row, basesOf({72, 144, 288, 512, 1024, 2048}));
  EXPECT_EQ(t.f->getEntryBlock().size(), 6u);
}

}  // namespace
}  // namespace tessera::backends
