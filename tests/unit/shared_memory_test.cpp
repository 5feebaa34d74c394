// Shared memory: the scratch rules (analysis/SharedScratch.h), the interval allocator, allocate-shared-memory and
// insert-barriers. The barrier pass is checked against a path-sensitive reference that runs every path of small
// random programs (loops unrolled up to three times): no path has two conflicting accesses without a barrier
// between them, and every inserted barrier is needed by some path.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "ir/Builder.h"
#include "ir/Layout.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"
#include "transforms/SharedMemoryAllocator.h"
#include "transforms/analysis/ExchangeConflicts.h"
#include "transforms/analysis/Liveness.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera {
namespace {

using ir::Attr;
using ir::Builder;
using ir::Function;
using ir::Layout;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;
using transforms::PassOptions;

const PassOptions kOptions{4, 32};

// Row-major 32x32 layout with 4-element vectors, and its column-major mirror: converting between them is a
// transpose of ownership, which needs shared memory.
Layout rowMajor(const std::vector<int64_t>& shape) { return ir::defaultBlockedLayout(shape, 4, 32, 4); }
Layout colMajor(const std::vector<int64_t>& shape) { return ir::defaultBlockedLayout(shape, 4, 32, 4, {0, 1}); }

Type laidOut(const std::vector<int64_t>& shape, Type element, const Layout& layout) {
  return layout.apply(Type::tile(shape, element));
}

std::unique_ptr<Function> makeFunction() { return std::make_unique<Function>("k", std::vector<Type>{}); }

Value* constantTile(Builder& b, Type t) {
  return t.element().isFloat() ? b.constantFloat(1.0, t) : b.constantInt(1, t);
}

Op* convert(Builder& b, Value* v, const Layout& to) {
  return b.create(OpKind::ConvertLayout, {v}, {to.apply(v->type())});
}

void runPass(const std::string& name, Function& f) { transforms::createPass(name, kOptions)->run(f); }

int countOps(Function& f, OpKind kind) {
  int n = 0;
  f.walk([&](Op* op) { n += op->is(kind); });
  return n;
}

// ------------------------------------------------------------------------------------------------ rules

TEST(SharedMemoryRules, PaddedExchangeBufferIsInjectiveAndBankConflictFreeForColumns) {
  for (int64_t bytes : {1, 2, 4, 8}) {
    std::vector<int64_t> shape = {4, 32, 32};
    const transforms::ExchangeBuffer buffer{shape, bytes};
    int64_t size = buffer.bytes();
    EXPECT_EQ(size % 16, 0);
    std::set<int64_t> seen;
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 32; ++j)
        for (int64_t k = 0; k < 32; ++k) {
          int64_t off = buffer.byteOffset({i, j, k});
          EXPECT_EQ(off % bytes, 0) << "element misaligned";
          EXPECT_LE(off + bytes, size);
          EXPECT_TRUE(seen.insert(off).second) << "two elements share bytes";
        }
  }
  // A column of 32 rows of 32 f32 (the read side of a transpose) touches 32 distinct 4-byte banks.
  std::set<int64_t> banks;
  const transforms::ExchangeBuffer square{{32, 32}, 4};
  for (int64_t row = 0; row < 32; ++row) banks.insert(square.byteOffset({row, 5}) / 4 % 32);
  EXPECT_EQ(banks.size(), 32u);
  // The documented formula: pitch = 32 * 4 + 4, one word of padding, i.e. 33 elements.
  EXPECT_EQ(square.byteOffset({3, 7}), 3 * 132 + 28);
  EXPECT_EQ(square.pitchElements(), 33);
  EXPECT_EQ(square.bytes(), 32 * 132);
  EXPECT_EQ((transforms::ExchangeBuffer{{64}, 2}.bytes()), 144);  // 128 + 4, aligned to 16
  EXPECT_EQ((transforms::ExchangeBuffer{{8, 16}, 8}.pitchElements()), 17);  // 8-byte elements pad by 8 bytes
  EXPECT_THROW(square.byteOffset({1}), Error);
}

TEST(SharedMemoryRules, ConvertLayoutScratch) {
  auto f = makeFunction();
  Builder b(f->body());
  std::vector<int64_t> shape = {32, 32};
  Value* x = constantTile(b, laidOut(shape, Type::f32(), rowMajor(shape)));
  Op* transpose = convert(b, x, colMajor(shape));
  Op* same = convert(b, x, rowMajor(shape));
  EXPECT_FALSE(transforms::canRemapInRegisters(*transpose, kOptions));
  EXPECT_EQ(transforms::scratchBytes(*transpose, kOptions), 32 * (32 * 4 + 4));
  EXPECT_TRUE(transforms::canRemapInRegisters(*same, kOptions));
  EXPECT_EQ(transforms::scratchBytes(*same, kOptions), 0);
}

TEST(SharedMemoryRules, ConvertLayoutPadsItsRowsForTheFewestWavefronts) {
  // The f32 mma.sync accumulator of a 128x128 tile on 8 warps (pairs of columns, 8 rows of 4 lanes per warp)
  // converted for 16-byte global stores (4 columns per thread, a warp per row). With the default 4-byte pad every
  // access is scalar and 4-way conflicted (bank = row + column repeats 4 times over a warp); a 32-byte pad keeps
  // rows 16-byte aligned, so the writes are 8 bytes (16 lanes per phase: 4 rows x 4 pairs, rows 8 words apart,
  // all 32 banks) and the reads 16 bytes (8 lanes per phase, 128 contiguous bytes): one wavefront per phase.
  const std::vector<int64_t> shape = {128, 128};
  const Layout accumulator = Layout::blocked({1, 2}, {8, 4}, {1, 8}, {1, 0});
  const Layout rows = Layout::blocked({1, 4}, {1, 32}, {8, 1}, {1, 0});
  const ir::LinearLayout src = accumulator.toLinear(shape), dst = rows.toLinear(shape);
  auto padded = [&](int64_t pad) { return transforms::ExchangeBuffer{shape, 4, pad}; };
  // Default pad: 64 scalar writes and 64 scalar reads of one phase each, at 4 wavefronts apiece.
  EXPECT_EQ(transforms::exchangeWavefronts(src, padded(4)), 64 * 4);
  EXPECT_EQ(transforms::exchangeWavefronts(dst, padded(4)), 64 * 4);
  // 32-byte pad: 32 writes of 8 bytes in 2 phases, 16 reads of 16 bytes in 4 phases, no conflict.
  EXPECT_EQ(transforms::exchangeWavefronts(src, padded(32)), 32 * 2);
  EXPECT_EQ(transforms::exchangeWavefronts(dst, padded(32)), 16 * 4);
  const transforms::ExchangeBuffer chosen = transforms::leastConflictingExchange(src, dst, {shape, 4});
  EXPECT_EQ(chosen.padBytes, 32);
  EXPECT_EQ(chosen.swizzle.phases, 1);  // a pad that serves wins over a swizzle

  // The op's scratch follows: 128 rows of 512 + 32 bytes.
  const PassOptions eightWarps{8, 32};
  auto f = makeFunction();
  Builder b(f->body());
  Value* acc = constantTile(b, laidOut(shape, Type::f32(), accumulator));
  Op* toRows = convert(b, acc, rows);
  EXPECT_EQ(transforms::exchangeBufferOf(*toRows).pitchBytes(), 544);
  EXPECT_EQ(transforms::scratchBytes(*toRows, eightWarps), 128 * 544);
  // allocate-shared-memory records the choice on the op; from then on the op's attributes are the buffer (a pad
  // set by hand, which the search would not choose, is what the scratch and the lowering use).
  transforms::recordExchangeChoice(*toRows);
  EXPECT_EQ(toRows->intAttr(transforms::kExchangePad), 32);
  EXPECT_FALSE(toRows->hasAttr(transforms::kExchangeSwizzle));
  toRows->setAttr(transforms::kExchangePad, ir::Attr::integer(64));
  EXPECT_EQ(transforms::exchangeBufferOf(*toRows).pitchBytes(), 576);
  EXPECT_EQ(transforms::scratchBytes(*toRows, eightWarps), 128 * 576);
  toRows->setAttr(transforms::kExchangePad, ir::Attr::integer(0));
  toRows->setAttr(transforms::kExchangeSwizzle, ir::Attr::intArray({8, 512}));
  const transforms::ExchangeBuffer swizzled = transforms::exchangeBufferOf(*toRows);
  EXPECT_EQ(swizzled.pitchBytes(), 512);
  EXPECT_EQ(swizzled.swizzle, (transforms::ExchangeSwizzle{8, 512}));

  // A transpose is conflict-free with the default pad already: it keeps it (ties go to the default).
  const std::vector<int64_t> square = {32, 32};
  const transforms::ExchangeBuffer transpose = transforms::leastConflictingExchange(
      rowMajor(square).toLinear(square), colMajor(square).toLinear(square), {square, 4});
  EXPECT_EQ(transpose.pitchBytes(), 32 * 4 + 4);
  EXPECT_EQ(transpose.swizzle.phases, 1);
}

TEST(SharedMemoryRules, ConvertLayoutSwizzlesWhereNoPadServesBothSides) {
  // One warp's 16x16 f32 accumulator (pairs of columns, 8 rows of 4 lanes) read 4 columns at a time: a write
  // phase is 16 lanes on 4 rows x 32 bytes, a read phase 8 lanes on 2 rows x 64 bytes. Rows 32 bytes apart in
  // banks serve the writes and 64 the reads; no pitch is both. Swizzling 16-byte chunks serves both with one
  // wavefront per phase: 4 writes of 8 bytes in 2 phases each, 2 reads of 16 bytes in 4 phases each.
  const std::vector<int64_t> shape = {16, 16};
  const ir::LinearLayout src = Layout::blocked({1, 2}, {8, 4}, {1, 1}, {1, 0}).toLinear(shape);
  const ir::LinearLayout dst = Layout::blocked({1, 4}, {8, 4}, {1, 1}, {1, 0}).toLinear(shape);
  const int64_t conflictFree = 4 * 2 + 2 * 4;
  for (int64_t pad = 0; pad <= 128; pad += 4) {
    const transforms::ExchangeBuffer buffer{shape, 4, pad};
    EXPECT_GT(transforms::exchangeWavefronts(src, buffer) + transforms::exchangeWavefronts(dst, buffer), conflictFree)
        << "pad " << pad;
  }
  const transforms::ExchangeBuffer chosen = transforms::leastConflictingExchange(src, dst, {shape, 4});
  EXPECT_GT(chosen.swizzle.phases, 1);
  EXPECT_EQ(chosen.pitchBytes(), 64);  // unpadded
  EXPECT_EQ(transforms::exchangeWavefronts(src, chosen) + transforms::exchangeWavefronts(dst, chosen), conflictFree);
  // The swizzle moves whole 16-byte chunks (4 f32) within a row, and every element keeps its own slot.
  std::set<int64_t> offsets;
  for (int64_t row = 0; row < 16; ++row)
    for (int64_t column = 0; column < 16; ++column) {
      const int64_t offset = chosen.byteOffset({row, column});
      EXPECT_EQ(offset / 64, row);
      EXPECT_EQ(offset % 16, column % 4 * 4);
      offsets.insert(offset);
    }
  EXPECT_EQ(offsets.size(), 256u);
}

TEST(SharedMemoryRules, ConvertLayoutSwizzlesShortRowsApartWithinTheirBlock) {
  // The 16x16 f32 accumulator of one wave64 MFMA (4 consecutive rows of one column per lane, 16 lanes along the
  // columns) read 4 columns at a time (16 lanes along the rows). A write phase is 32 lanes storing one element of
  // each column of 2 rows 4 apart; in 64-byte rows those 2 rows sit in the same 16 banks however their own chunks
  // are permuted, so no pad and no swizzle within rows serves both sides. A swizzle of 128-byte blocks (2 rows)
  // whose stride is one row (chunk bits 4-6 of the offset XOR bits 6-8) moves row r + 4 to the other half of the
  // banks: one wavefront per phase, 4 writes in 2 phases each and one 16-byte read in 8 phases.
  const std::vector<int64_t> shape = {16, 16};
  const ir::LinearLayout src = Layout::blocked({4, 1}, {4, 16}, {1, 1}, {1, 0}).toLinear(shape);
  const ir::LinearLayout dst = Layout::blocked({1, 4}, {16, 4}, {1, 1}, {1, 0}).toLinear(shape);
  const int64_t conflictFree = 4 * 2 + 1 * 8;
  auto cost = [&](const transforms::ExchangeBuffer& buffer) {
    return transforms::exchangeWavefronts(src, buffer) + transforms::exchangeWavefronts(dst, buffer);
  };
  for (int64_t pad = 0; pad <= 128; pad += 4) EXPECT_GT(cost({shape, 4, pad}), conflictFree) << "pad " << pad;
  for (int64_t phases = 2; phases <= 4; phases *= 2)  // chunks XORed within a row, by row
    for (int64_t stride = 64; stride <= 1024; stride *= 2)
      EXPECT_GT(cost({shape, 4, 0, {phases, stride}}), conflictFree) << phases << " " << stride;

  const transforms::ExchangeBuffer chosen = transforms::leastConflictingExchange(src, dst, {shape, 4});
  EXPECT_EQ(chosen.swizzle, (transforms::ExchangeSwizzle{8, 64}));
  EXPECT_EQ(chosen.swizzleBlockRows(), 2);
  EXPECT_EQ(chosen.pitchBytes(), 64);  // unpadded
  EXPECT_EQ(cost(chosen), conflictFree);
  // Chunks stay whole and within their block of 2 rows, and every element keeps its own slot.
  std::set<int64_t> offsets;
  for (int64_t row = 0; row < 16; ++row)
    for (int64_t column = 0; column < 16; ++column) {
      const int64_t offset = chosen.byteOffset({row, column});
      EXPECT_EQ(offset / 128, row / 2);
      EXPECT_EQ(offset % 16, column % 4 * 4);
      offsets.insert(offset);
    }
  EXPECT_EQ(offsets.size(), 256u);
}

TEST(SharedMemoryRules, ExchangeLargerThanTheLimitRunsInRoundsOfPowerOfTwoRows) {
  // 128 x 128 f32 (an MFMA accumulator's conversion): 128 rows of 516 bytes = 66048 bytes, over a 65536 limit.
  const transforms::ExchangeBuffer tile{{128, 128}, 4};
  EXPECT_EQ(tile.bytes(), 66048);
  EXPECT_EQ(tile.rowsPerRound(66048), 128);      // fits: one round
  EXPECT_EQ(tile.rowsPerRound(65536), 64);       // 2 rounds of 64 rows
  EXPECT_EQ(tile.roundBytes(64), 33024);
  EXPECT_EQ(tile.rowsPerRound(33024), 64);       // the lowering finds the allocator's choice in smem_bytes
  EXPECT_EQ(tile.rowsPerRound(33023), 32);
  EXPECT_EQ(tile.rowsPerRound(528), 1);          // one row of 516 bytes, aligned to 16
  EXPECT_EQ(tile.rowsPerRound(527), 0);          // not one row
  EXPECT_EQ((transforms::ExchangeBuffer{{6, 100}, 4}.rowsPerRound(2000)), 4);  // 4 of 6 rows, 2 rounds

  auto f = makeFunction();
  Builder b(f->body());
  std::vector<int64_t> shape = {128, 128};
  Op* transpose = convert(b, constantTile(b, laidOut(shape, Type::f32(), rowMajor(shape))), colMajor(shape));
  // Its rows go unpadded, swizzled (analysis/ExchangeConflicts.h): 128 rows of 512 bytes.
  EXPECT_EQ(transforms::exchangeBufferOf(*transpose).pitchBytes(), 512);
  PassOptions limited = kOptions;
  EXPECT_EQ(transforms::scratchBytes(*transpose, limited), 65536);  // no limit
  limited.maxSharedBytes = 65535;
  EXPECT_EQ(transforms::scratchBytes(*transpose, limited), 32768);  // 2 rounds of 64 rows
  limited.maxSharedBytes = 100;  // not even one row: the whole buffer, for the target to reject
  EXPECT_EQ(transforms::scratchBytes(*transpose, limited), 65536);
}

TEST(SharedMemoryRules, ConvertLayoutWithinEachWarpNeedsNoScratch) {
  // 32x4 f32, a warp per 8 rows: lanes numbered row-major, then column-major. Each warp keeps its rows, so warp
  // shuffles do the conversion (ir/LayoutConversion.h), although no register renaming can.
  auto f = makeFunction();
  Builder b(f->body());
  std::vector<int64_t> shape = {32, 4};
  Value* x = constantTile(b, laidOut(shape, Type::f32(), Layout::blocked({1, 1}, {8, 4}, {4, 1}, {1, 0})));
  Op* lanesRenumbered = convert(b, x, Layout::blocked({1, 1}, {8, 4}, {4, 1}, {0, 1}));
  EXPECT_FALSE(transforms::canRemapInRegisters(*lanesRenumbered, kOptions));
  EXPECT_FALSE(transforms::exchangeNeedsSharedMemory(*lanesRenumbered, kOptions));
  EXPECT_EQ(transforms::scratchBytes(*lanesRenumbered, kOptions), 0);
  // Warps along the other dimension: elements change warps, so the conversion goes through shared memory, in
  // unpadded 16-byte rows (analysis/ExchangeConflicts.h: no pad costs fewer wavefronts than the 4-byte one).
  Op* acrossWarps = convert(b, x, Layout::blocked({1, 1}, {8, 4}, {1, 4}, {0, 1}));
  EXPECT_TRUE(transforms::exchangeNeedsSharedMemory(*acrossWarps, kOptions));
  EXPECT_EQ(transforms::scratchBytes(*acrossWarps, kOptions), 32 * (4 * 4));
}

// Exact definition of "remappable in registers", by brute force over every thread: each result register is, in
// every thread, the element at one fixed operand register index.
bool remappableBruteForce(const Layout& from, const Layout& to, const std::vector<int64_t>& shape) {
  int64_t srcRegs = from.registersPerThread(shape), dstRegs = to.registersPerThread(shape);
  for (int64_t r = 0; r < dstRegs; ++r) {
    bool found = false;
    for (int64_t q = 0; q < srcRegs && !found; ++q) {
      bool all = true;
      for (int64_t w = 0; w < 4 && all; ++w)
        for (int64_t l = 0; l < 32 && all; ++l) all = from.coords(shape, w, l, q) == to.coords(shape, w, l, r);
      found = all;
    }
    if (!found) return false;
  }
  return true;
}

// Random blocked layouts over `shape` with 4 warps of 32 threads.
Layout randomBlocked(std::mt19937& rng, const std::vector<int64_t>& shape) {
  auto pow2Split = [&](int64_t total, size_t n) {
    std::vector<int64_t> v(n, 1);
    for (; total > 1; total /= 2) v[rng() % n] *= 2;
    return v;
  };
  std::vector<int64_t> spt(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) spt[d] = int64_t(1) << (rng() % 3);
  std::vector<int64_t> order(shape.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<int64_t>(d);
  std::shuffle(order.begin(), order.end(), rng);
  return Layout::blocked(spt, pow2Split(32, shape.size()), pow2Split(4, shape.size()), order);
}

TEST(SharedMemoryRules, RegisterRemapMatchesBruteForceOnRandomLayouts) {
  std::mt19937 rng(7);
  int remappable = 0, total = 0;
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<int64_t> shape = iter % 2 ? std::vector<int64_t>{16, 8} : std::vector<int64_t>{4, 64};
    Layout from = randomBlocked(rng, shape), to = iter % 5 == 0 ? from : randomBlocked(rng, shape);
    auto f = makeFunction();
    Builder b(f->body());
    Op* op = convert(b, constantTile(b, laidOut(shape, Type::f32(), from)), to);
    bool expected = remappableBruteForce(from, to, shape);
    ASSERT_EQ(transforms::canRemapInRegisters(*op, kOptions), expected) << from.str() << " -> " << to.str();
    // Scratch exactly when shared memory is needed, which a register renaming never needs.
    ASSERT_EQ(transforms::scratchBytes(*op, kOptions) > 0, transforms::exchangeNeedsSharedMemory(*op, kOptions));
    if (expected) {
      ASSERT_FALSE(transforms::exchangeNeedsSharedMemory(*op, kOptions));
    }
    remappable += expected;
    ++total;
  }
  // Both outcomes occur, so the comparison means something.
  EXPECT_GT(remappable, 0);
  EXPECT_LT(remappable, total);
}

// A trans whose operand and result have random layouts: remappable exactly when, by brute force over every
// thread, each result register holds the element of one fixed operand register (through the permutation).
TEST(SharedMemoryRules, TransRemapMatchesBruteForceOnRandomLayouts) {
  std::mt19937 rng(11);
  int remappable = 0;
  const std::vector<int64_t> inShape = {8, 32}, outShape = {32, 8};
  for (int iter = 0; iter < 200; ++iter) {
    const Layout from = randomBlocked(rng, inShape);
    // Every third result layout mirrors the operand's (each thread then already holds its elements, in some
    // register order), so both answers occur often.
    auto mirrored = [](const std::vector<int64_t>& v) { return std::vector<int64_t>{v[1], v[0]}; };
    const Layout to = iter % 3 ? randomBlocked(rng, outShape)
                               : Layout::blocked(mirrored(from.sizePerThread()), mirrored(from.threadsPerWarp()),
                                                 mirrored(from.warpsPerCTA()), {1 - from.order()[0], 1 - from.order()[1]});
    auto f = makeFunction();
    Builder b(f->body());
    Value* x = constantTile(b, laidOut(inShape, Type::f32(), from));
    Op* trans = b.create(OpKind::Trans, {x}, {laidOut(outShape, Type::f32(), to)}, {{"perm", Attr::intArray({1, 0})}});
    bool expected = true;
    for (int64_t r = 0; r < to.registersPerThread(outShape) && expected; ++r) {
      bool found = false;
      for (int64_t q = 0; q < from.registersPerThread(inShape) && !found; ++q) {
        bool all = true;
        for (int64_t w = 0; w < 4 && all; ++w)
          for (int64_t l = 0; l < 32 && all; ++l) {
            const std::vector<int64_t> c = to.coords(outShape, w, l, r);
            all = from.coords(inShape, w, l, q) == std::vector<int64_t>{c[1], c[0]};
          }
        found = all;
      }
      expected = found;
    }
    ASSERT_EQ(transforms::canRemapInRegisters(*trans, kOptions), expected) << from.str() << " -> " << to.str();
    remappable += expected;
  }
  EXPECT_GT(remappable, 50);
  EXPECT_LT(remappable, 200);
}

// Wavefronts of one-word accesses (f32, one element per register along the row) into random padded and swizzled
// buffers, against their definition: per register, the most distinct words the warp's lanes ask of one bank.
TEST(SharedMemoryRules, ScalarExchangeWavefrontsMatchTheirDefinitionOnRandomBuffers) {
  std::mt19937 rng(5);
  const std::vector<int64_t> shape = {32, 32};
  int conflicted = 0;
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<int64_t> spt = {int64_t(1) << (rng() % 3), 1}, tpw = {1, 1}, wpc = {1, 1};
    for (int64_t t = 32; t > 1; t /= 2) tpw[rng() % 2] *= 2;
    for (int64_t w = 4; w > 1; w /= 2) wpc[rng() % 2] *= 2;
    const Layout layout = Layout::blocked(spt, tpw, wpc, rng() % 2 ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1});
    const ir::LinearLayout linear = layout.toLinear(shape);
    transforms::ExchangeBuffer buffer{shape, 4, static_cast<int64_t>(rng() % 33) * 4};
    if (rng() % 2) buffer = {shape, 4, 0, {int64_t(2) << (rng() % 3), int64_t(32) << (rng() % 6)}};
    const uint64_t repeated = linear.freeVariableMasks()[0];
    int64_t expected = 0;
    for (int64_t r = 0; r < layout.registersPerThread(shape); ++r) {
      if ((static_cast<uint64_t>(r) & repeated) != 0) continue;
      std::map<int64_t, std::set<int64_t>> wordsOfBank;
      for (int64_t l = 0; l < 32; ++l) {
        const int64_t word = buffer.byteOffset(layout.coords(shape, 0, l, r)) / 4;
        wordsOfBank[word % 32].insert(word);
      }
      size_t most = 0;
      for (const auto& [bank, words] : wordsOfBank) most = std::max(most, words.size());
      expected += static_cast<int64_t>(most);
    }
    ASSERT_EQ(transforms::exchangeWavefronts(linear, buffer), expected) << layout.str() << " pad " << *buffer.padBytes
                                                                          << " swizzle " << buffer.swizzle.phases;
    conflicted += expected > layout.registersPerThread(shape);
  }
  EXPECT_GT(conflicted, 0);  // conflicts occur, so the count is exercised beyond one word per bank
}

TEST(SharedMemoryRules, ShapeOpsUseTheirExchangeBuffer) {
  auto f = makeFunction();
  Builder b(f->body());
  std::vector<int64_t> shape = {32, 32};
  Value* x = constantTile(b, laidOut(shape, Type::f16(), rowMajor(shape)));
  // trans whose result is laid out row-major too: every thread needs the mirror elements.
  Op* trans = b.create(OpKind::Trans, {x}, {laidOut(shape, Type::f16(), rowMajor(shape))},
                       {{"perm", Attr::intArray({1, 0})}});
  EXPECT_EQ(transforms::exchangeBufferShape(*trans), shape);
  EXPECT_EQ(transforms::scratchBytes(*trans, kOptions), (transforms::ExchangeBuffer{shape, 2}.bytes()));
  // trans into the mirrored layout: each thread already holds its elements.
  Op* transFree = b.create(OpKind::Trans, {x}, {laidOut(shape, Type::f16(), colMajor(shape))},
                           {{"perm", Attr::intArray({1, 0})}});
  EXPECT_EQ(transforms::scratchBytes(*transFree, kOptions), 0);
  // cat: the buffer has the result's shape.
  std::vector<int64_t> catShape = {64, 32};
  Op* cat = b.create(OpKind::Cat, {x, x}, {laidOut(catShape, Type::f16(), colMajor(catShape))});
  EXPECT_EQ(transforms::exchangeBufferShape(*cat), catShape);
  EXPECT_EQ(transforms::scratchBytes(*cat, kOptions), (transforms::ExchangeBuffer{catShape, 2}.bytes()));
  // expand_dims of a scalar: every thread holds the scalar.
  Value* s = b.constantFloat(2.0, Type::f32());
  Layout one = ir::defaultBlockedLayout({1}, 4, 32);
  Op* expand = b.create(OpKind::ExpandDims, {s}, {laidOut({1}, Type::f32(), one)}, {{"axis", Attr::integer(0)}});
  EXPECT_EQ(transforms::scratchBytes(*expand, kOptions), 0);
}

Op* addReduce(Builder& b, const std::vector<Value*>& inputs, int axis, const std::vector<Type>& resultTypes) {
  std::vector<Value*> operands = inputs;
  Op* op = b.create(OpKind::Reduce, operands, resultTypes, {{"axis", Attr::integer(axis)}});
  Builder rb(op->region(0));
  std::vector<Value*> yields;
  for (int half = 0; half < 2; ++half)  // accumulators, then new elements
    for (Value* in : inputs) op->region(0)->addArgument(in->type().element());
  for (size_t i = 0; i < inputs.size(); ++i)
    yields.push_back(rb.binary(OpKind::Add, op->region(0)->argument(i), op->region(0)->argument(i + inputs.size())));
  rb.yield(yields);
  return op;
}

TEST(SharedMemoryRules, ReduceAcrossWarpsOnly) {
  auto f = makeFunction();
  Builder b(f->body());
  std::vector<int64_t> shape = {64, 64};
  Layout layout = rowMajor(shape);  // warps along dimension 0
  ASSERT_EQ(layout.warpsPerCTA(), (std::vector<int64_t>{4, 1}));
  Value* x = constantTile(b, laidOut(shape, Type::f32(), layout));
  Value* y = constantTile(b, laidOut(shape, Type::i64(), layout));
  auto sliced = [&](int dim, Type e) { return laidOut({64}, e, Layout::slice(dim, layout)); };
  Op* acrossWarps = addReduce(b, {x, y}, 0, {sliced(0, Type::f32()), sliced(0, Type::i64())});
  EXPECT_EQ(transforms::reduceWarpParts(*acrossWarps, kOptions), 4);
  // f32 area: 64 outputs * 4 warps * 4 bytes = 1024; the i64 area: 64 * 4 * 8 = 2048.
  EXPECT_EQ(transforms::scratchBytes(*acrossWarps, kOptions), 1024 + 2048);
  Op* withinWarps = addReduce(b, {x}, 1, {sliced(1, Type::f32())});
  EXPECT_EQ(transforms::reduceWarpParts(*withinWarps, kOptions), 1);
  EXPECT_EQ(transforms::scratchBytes(*withinWarps, kOptions), 0);
  // A tile smaller than the warps' reach along the axis: the extra warps only replicate.
  std::vector<int64_t> small = {8, 64};
  Layout smallLayout = Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0});
  Value* z = constantTile(b, laidOut(small, Type::f32(), smallLayout));
  Op* partial = addReduce(b, {z}, 0, {laidOut({64}, Type::f32(), Layout::slice(0, smallLayout))});
  EXPECT_EQ(transforms::reduceWarpParts(*partial, kOptions), 4);
  std::vector<int64_t> tiny = {2, 64};
  Value* t = constantTile(b, laidOut(tiny, Type::f32(), smallLayout));
  Op* replicatedWarps = addReduce(b, {t}, 0, {laidOut({64}, Type::f32(), Layout::slice(0, smallLayout))});
  EXPECT_EQ(transforms::reduceWarpParts(*replicatedWarps, kOptions), 1);
}

TEST(SharedMemoryRules, ScanDotAndAtomics) {
  auto f = std::make_unique<Function>("k", std::vector<Type>{Type::ptr(Type::f32())});
  Builder b(f->body());
  std::vector<int64_t> shape = {32, 32};
  Layout layout = rowMajor(shape);
  Value* x = constantTile(b, laidOut(shape, Type::f32(), layout));
  Value* h = constantTile(b, laidOut(shape, Type::f16(), layout));
  Op* scan = b.create(OpKind::Scan, {x, h}, {x->type(), h->type()},
                      {{"axis", Attr::integer(1)}, {"reverse", Attr::boolean(false)}});
  EXPECT_EQ(transforms::scratchBytes(*scan, kOptions), 32 * 32 * 4 + 32 * 32 * 2);

  Value* a = constantTile(b, laidOut({32, 16}, Type::f16(), rowMajor({32, 16})));
  Value* bb = constantTile(b, laidOut({16, 8}, Type::f16(), rowMajor({16, 8})));
  Value* acc = constantTile(b, laidOut({32, 8}, Type::f32(), rowMajor({32, 8})));
  Op* dot = b.create(OpKind::Dot, {a, bb, acc}, {acc->type()}, {{"input_precision", Attr::string("ieee")}});
  EXPECT_EQ(transforms::scratchBytes(*dot, kOptions), 32 * 16 * 2 + 16 * 8 * 2);

  // A scalar atomic whose old value is used: one 16-byte slot. Unused: nothing.
  Value* one = b.constantFloat(1.0, Type::f32());
  Value* old = b.atomicRMW("add", f->argument(0), one);
  Op* scalarAtomic = old->definingOp();
  EXPECT_EQ(transforms::scratchBytes(*scalarAtomic, kOptions), 0);
  b.debugPrint("old", {old});
  EXPECT_EQ(transforms::scratchBytes(*scalarAtomic, kOptions), 16);
  // A 16-element pointer tile over 128 threads is replicated; 128 elements one per thread are not.
  auto pointers = [&](int64_t n) {
    Layout l = ir::defaultBlockedLayout({n}, 4, 32);
    Value* base = b.splat(f->argument(0), {n});
    base->setType(laidOut({n}, Type::ptr(Type::f32()), l));
    Value* v = constantTile(b, laidOut({n}, Type::f32(), l));
    Value* r = b.atomicRMW("add", base, v);
    b.debugPrint("old", {r});
    return r->definingOp();
  };
  EXPECT_EQ(transforms::scratchBytes(*pointers(16), kOptions), 64);
  EXPECT_EQ(transforms::scratchBytes(*pointers(128), kOptions), 0);
  EXPECT_EQ(transforms::scratchBytes(*b.debugPrint("x", {x}), kOptions), 0);
}

TEST(SharedMemoryRules, ClearErrors) {
  auto f = makeFunction();
  Builder b(f->body());
  std::vector<int64_t> shape = {32, 32};
  Value* bare = constantTile(b, Type::tile(shape, Type::f32()));
  Op* noLayout = convert(b, bare, rowMajor(shape));
  try {
    transforms::scratchBytes(*noLayout, kOptions);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no layout"), std::string::npos) << e.what();
  }
  Value* x = constantTile(b, laidOut(shape, Type::f32(), rowMajor(shape)));
  Op* ok = convert(b, x, colMajor(shape));
  try {
    transforms::scratchBytes(*ok, PassOptions{8, 32});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("spans 4 warps"), std::string::npos) << e.what();
  }
  ok->setAttr("smem_offset", Attr::integer(0));
  EXPECT_THROW(transforms::scratchRangeOf(*ok), Error);
  ok->setAttr("smem_bytes", Attr::integer(-16));
  EXPECT_THROW(transforms::scratchRangeOf(*ok), Error);
}

// ------------------------------------------------------------------------------------------------ allocator

TEST(SharedMemoryAllocator, OverlappingLifetimesNeverShareBytesOnRandomIntervals) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 500; ++iter) {
    std::vector<transforms::SharedBuffer> buffers(1 + rng() % 12);
    for (auto& buf : buffers) {
      buf.bytes = static_cast<int64_t>(rng() % 300);
      buf.live.start = rng() % 20;
      buf.live.end = buf.live.start + rng() % 6;
    }
    int64_t total = transforms::assignSharedOffsets(buffers);
    EXPECT_EQ(total % 16, 0);
    int64_t highest = 0;
    for (size_t i = 0; i < buffers.size(); ++i) {
      const auto& a = buffers[i];
      EXPECT_EQ(a.offset % 16, 0);
      EXPECT_LE(a.offset + a.bytes, total);
      highest = std::max(highest, a.offset + transforms::alignToShared(a.bytes));
      for (size_t j = i + 1; j < buffers.size(); ++j) {
        const auto& c = buffers[j];
        bool shareBytes = a.offset < c.offset + c.bytes && c.offset < a.offset + a.bytes;
        if (a.live.overlaps(c.live)) {
          EXPECT_FALSE(shareBytes) << "iteration " << iter << ": buffers " << i << ", " << j;
        }
      }
    }
    EXPECT_EQ(total, highest);
    // Lower bound: at any point, the buffers live there must all fit.
    for (int64_t point = 0; point < 26; ++point) {
      int64_t live = 0;
      for (const auto& a : buffers)
        if (a.live.start <= point && point <= a.live.end) live += transforms::alignToShared(a.bytes);
      EXPECT_GE(total, live);
    }
  }
}

TEST(SharedMemoryAllocator, DisjointLifetimesReuseBytes) {
  std::vector<transforms::SharedBuffer> buffers = {{100, {0, 2}}, {64, {3, 5}}, {32, {1, 4}}};
  EXPECT_EQ(transforms::assignSharedOffsets(buffers), 112 + 32);
  EXPECT_EQ(buffers[0].offset, 0);
  EXPECT_EQ(buffers[1].offset, 0);    // reuses the first buffer's bytes
  EXPECT_EQ(buffers[2].offset, 112);  // overlaps both in time: placed after them
  std::vector<transforms::SharedBuffer> none;
  EXPECT_EQ(transforms::assignSharedOffsets(none), 0);
}

TEST(SharedMemoryLiveness, LoopsExtendValuesLiveAcrossTheBackEdge) {
  auto f = makeFunction();
  Builder b(f->body());
  Value* outside = b.constantFloat(1.0, Type::f32());                  // 0
  Value* lb = b.constantInt(0, Type::i32());                           // 1
  Value* ub = b.constantInt(4, Type::i32());                           // 2
  Op* loop = b.forOp(lb, ub, ub, {outside});                           // 3 .. 7
  Builder body(loop->region(0));
  Value* early = body.binary(OpKind::Add, outside, outside);           // 4: uses `outside`
  Value* inner = body.binary(OpKind::Add, early, loop->region(0)->argument(1));  // 5
  body.yield({inner});                                                 // 6
  Value* after = b.binary(OpKind::Add, loop->result(0), loop->result(0));  // 8
  b.ret();                                                             // 9
  transforms::OpNumbering numbering(*f);
  EXPECT_EQ(numbering.start(loop), 3);
  EXPECT_EQ(numbering.end(loop), 7);
  // `outside` is used only at 4, inside the loop: it must survive every iteration, up to the loop's end.
  auto live = numbering.valueInterval(outside);
  EXPECT_EQ(live.start, 0);
  EXPECT_EQ(live.end, 7);
  // `early` is defined and used within one iteration.
  EXPECT_EQ(numbering.valueInterval(early).start, 4);
  EXPECT_EQ(numbering.valueInterval(early).end, 5);
  // The carried argument is defined by the loop and used inside it.
  EXPECT_EQ(numbering.valueInterval(loop->region(0)->argument(1)).end, 5);
  EXPECT_EQ(numbering.valueInterval(after).start, 8);
  EXPECT_EQ(numbering.scratchInterval(after->definingOp()).end, 8);
}

// ------------------------------------------------------------------------------------------------ reference

// Pending shared accesses of one path since its last barrier.
struct PathState {
  std::set<std::pair<int64_t, int64_t>> touched;  // every access both reads and writes its range here
  bool operator<(const PathState& o) const { return touched < o.touched; }
};

// Runs every path through `block` (loops 0..3 iterations) from each state in `in`; sets `conflict` if some path
// accesses bytes touched since its last barrier.
std::set<PathState> runPaths(ir::Block& block, std::set<PathState> in, bool& conflict) {
  for (auto& opPtr : block.ops()) {
    Op* op = opPtr.get();
    if (op->is(OpKind::Barrier)) {
      in = {PathState{}};
    } else if (op->is(OpKind::If)) {
      std::set<PathState> out = runPaths(*op->region(0), in, conflict);
      for (const PathState& s : runPaths(*op->region(1), in, conflict)) out.insert(s);
      in = out;
    } else if (op->is(OpKind::For)) {
      std::set<PathState> all = in, cur = in;
      for (int iteration = 0; iteration < 3; ++iteration) {
        cur = runPaths(*op->region(0), cur, conflict);
        all.insert(cur.begin(), cur.end());
      }
      in = all;
    } else if (auto range = transforms::scratchRangeOf(*op)) {
      std::set<PathState> out;
      for (PathState s : in) {
        for (auto [lo, hi] : s.touched)
          if (lo < range->end() && range->offset < hi) conflict = true;
        s.touched.insert({range->offset, range->end()});
        out.insert(s);
      }
      in = out;
    }
  }
  return in;
}

bool hasUnorderedConflict(Function& f) {
  bool conflict = false;
  runPaths(*f.body(), {PathState{}}, conflict);
  return conflict;
}

// Every barrier is needed: without it, some path conflicts.
void expectEveryBarrierNeeded(Function& f) {
  std::vector<Op*> barriers;
  f.walk([&](Op* op) {
    if (op->is(OpKind::Barrier)) barriers.push_back(op);
  });
  for (size_t i = 0; i < barriers.size(); ++i) {
    auto copy = f.clone();
    std::vector<Op*> copies;
    copy->walk([&](Op* op) {
      if (op->is(OpKind::Barrier)) copies.push_back(op);
    });
    copies[i]->parentBlock()->erase(copies[i]);
    EXPECT_TRUE(hasUnorderedConflict(*copy)) << "barrier " << i << " is not needed in\n" << ir::print(f);
  }
}

// A random program of convert_layouts (needing scratch) nested in loops and branches. With `presetRanges`, each
// convert gets a random smem range (for the barrier pass alone); otherwise allocation assigns them.
void randomBlock(Builder& b, std::mt19937& rng, int depth, Value* tile, Value* cond, bool presetRanges) {
  int n = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < n; ++i) {
    unsigned choice = rng() % 8;
    if (choice == 6 && depth < 2) {
      Op* ifOp = b.ifOp(cond, {});
      for (unsigned r = 0; r < 2; ++r) {
        Builder inner(ifOp->region(r));
        randomBlock(inner, rng, depth + 1, tile, cond, presetRanges);
        inner.yield({});
      }
    } else if (choice == 7 && depth < 2) {
      Value* lb = b.constantInt(0, Type::i32());
      Value* ub = b.constantInt(3, Type::i32());
      Op* loop = b.forOp(lb, ub, b.constantInt(1, Type::i32()), {});
      Builder inner(loop->region(0));
      randomBlock(inner, rng, depth + 1, tile, cond, presetRanges);
      inner.yield({});
    } else {
      Op* cvt = convert(b, tile, colMajor({32, 32}));
      if (presetRanges) {
        static const int64_t offsets[] = {0, 16, 48, 64};
        cvt->setAttr("smem_offset", Attr::integer(offsets[rng() % 4]));
        cvt->setAttr("smem_bytes", Attr::integer(16 * (1 + static_cast<int64_t>(rng() % 3))));
      }
    }
  }
}

std::unique_ptr<Function> randomProgram(std::mt19937& rng, bool presetRanges) {
  auto f = makeFunction();
  Builder b(f->body());
  Value* tile = constantTile(b, laidOut({32, 32}, Type::f32(), rowMajor({32, 32})));
  Value* cond = b.constantBool(true);
  randomBlock(b, rng, 0, tile, cond, presetRanges);
  b.ret();
  return f;
}

TEST(InsertBarriers, RandomProgramsGetExactlyTheNeededBarriers) {
  std::mt19937 rng(3);
  int withBarriers = 0, withoutBarriers = 0;
  for (int iter = 0; iter < 200; ++iter) {
    auto f = randomProgram(rng, /*presetRanges=*/true);
    ASSERT_NO_THROW(ir::verify(*f)) << ir::print(*f);
    runPass("insert-barriers", *f);
    ASSERT_NO_THROW(ir::verify(*f));
    EXPECT_FALSE(hasUnorderedConflict(*f)) << ir::print(*f);
    expectEveryBarrierNeeded(*f);
    (countOps(*f, OpKind::Barrier) ? withBarriers : withoutBarriers)++;
    // Idempotent: a second run finds nothing left to order.
    int before = countOps(*f, OpKind::Barrier);
    runPass("insert-barriers", *f);
    EXPECT_EQ(countOps(*f, OpKind::Barrier), before);
  }
  EXPECT_GT(withBarriers, 0);
  EXPECT_GT(withoutBarriers, 0);
}

TEST(AllocateSharedMemory, RandomProgramsGetScratchAndSafeBarriers) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 100; ++iter) {
    auto f = randomProgram(rng, /*presetRanges=*/false);
    runPass("allocate-shared-memory", *f);
    transforms::OpNumbering numbering(*f);
    int64_t total = f->attrs().at("smem_bytes").getInt();
    int64_t highest = 0;
    std::vector<std::pair<Op*, transforms::SharedRange>> owners;
    f->walk([&](Op* op) {
      int64_t need = transforms::scratchBytes(*op, kOptions);
      auto range = transforms::scratchRangeOf(*op);
      ASSERT_EQ(range.has_value(), need > 0) << op->describe();
      if (!range) return;
      EXPECT_EQ(range->bytes, need);
      EXPECT_EQ(range->offset % 16, 0);
      EXPECT_LE(range->end(), total);
      highest = std::max(highest, range->end());
      owners.push_back({op, *range});
    });
    EXPECT_EQ(total, highest);
    for (size_t i = 0; i < owners.size(); ++i)
      for (size_t j = i + 1; j < owners.size(); ++j)
        if (numbering.scratchInterval(owners[i].first).overlaps(numbering.scratchInterval(owners[j].first))) {
          EXPECT_TRUE(owners[i].second.end() <= owners[j].second.offset ||
                      owners[j].second.end() <= owners[i].second.offset);
        }
    runPass("insert-barriers", *f);
    EXPECT_NO_THROW(ir::verify(*f));
    EXPECT_FALSE(hasUnorderedConflict(*f)) << ir::print(*f);
    expectEveryBarrierNeeded(*f);
  }
}

// ------------------------------------------------------------------------------------------------ barrier cases

struct TwoConverts {
  std::unique_ptr<Function> f;
  Op* first;
  Op* second;
};

TwoConverts twoConverts(int64_t secondOffset) {
  TwoConverts t{makeFunction(), nullptr, nullptr};
  Builder b(t.f->body());
  Value* x = constantTile(b, laidOut({32, 32}, Type::f32(), rowMajor({32, 32})));
  t.first = convert(b, x, colMajor({32, 32}));
  t.second = convert(b, x, colMajor({32, 32}));
  t.first->setAttr("smem_offset", Attr::integer(0));
  t.first->setAttr("smem_bytes", Attr::integer(4224));
  t.second->setAttr("smem_offset", Attr::integer(secondOffset));
  t.second->setAttr("smem_bytes", Attr::integer(4224));
  b.ret();
  return t;
}

TEST(InsertBarriers, DisjointBuffersNeedNoBarrier) {
  TwoConverts t = twoConverts(4224);
  runPass("insert-barriers", *t.f);
  EXPECT_EQ(countOps(*t.f, OpKind::Barrier), 0);
}

TEST(InsertBarriers, ReusedBytesGetOneBarrierBetweenTheOps) {
  TwoConverts t = twoConverts(4208);  // overlaps the first buffer's last 16 bytes
  runPass("insert-barriers", *t.f);
  ASSERT_EQ(countOps(*t.f, OpKind::Barrier), 1);
  auto it = t.f->body()->ops().begin();
  while (it->get() != t.first) ++it;
  EXPECT_TRUE((++it)->get()->is(OpKind::Barrier));
  EXPECT_EQ((++it)->get(), t.second);
}

TEST(InsertBarriers, LoopReusingItsBufferGetsABarrierAtTheTop) {
  auto f = makeFunction();
  Builder b(f->body());
  Value* x = constantTile(b, laidOut({32, 32}, Type::f32(), rowMajor({32, 32})));
  Op* loop = b.forOp(b.constantInt(0, Type::i32()), b.constantInt(8, Type::i32()), b.constantInt(1, Type::i32()), {});
  Builder body(loop->region(0));
  Op* cvt = convert(body, x, colMajor({32, 32}));
  body.yield({});
  b.ret();
  runPass("allocate-shared-memory", *f);
  runPass("insert-barriers", *f);
  ASSERT_EQ(countOps(*f, OpKind::Barrier), 1);
  EXPECT_TRUE(loop->region(0)->front()->is(OpKind::Barrier));
  EXPECT_EQ(loop->region(0)->front()->parentBlock(), cvt->parentBlock());
}

TEST(InsertBarriers, IfJoinsBothBranches) {
  auto f = makeFunction();
  Builder b(f->body());
  Value* x = constantTile(b, laidOut({32, 32}, Type::f32(), rowMajor({32, 32})));
  Op* ifOp = b.ifOp(b.constantBool(true), {});
  Builder thenB(ifOp->region(0));
  Op* inThen = convert(thenB, x, colMajor({32, 32}));
  inThen->setAttr("smem_offset", Attr::integer(0));
  inThen->setAttr("smem_bytes", Attr::integer(64));
  thenB.yield({});
  Builder(ifOp->region(1)).yield({});
  Op* after = convert(b, x, colMajor({32, 32}));
  after->setAttr("smem_offset", Attr::integer(32));
  after->setAttr("smem_bytes", Attr::integer(64));
  b.ret();
  runPass("insert-barriers", *f);
  ASSERT_EQ(countOps(*f, OpKind::Barrier), 1);
  auto it = f->body()->ops().begin();
  while (it->get() != after) ++it;
  EXPECT_TRUE((--it)->get()->is(OpKind::Barrier));
}

TEST(InsertBarriers, SharedPointerAccessesConflictWithEverything) {
  Type sharedPtr = Type::ptr(Type::f32(), ir::kSharedAddrSpace);
  auto f = std::make_unique<Function>("k", std::vector<Type>{sharedPtr});
  Builder b(f->body());
  Value* one = b.constantFloat(1.0, Type::f32());
  b.store(f->argument(0), one);
  Value* loaded = b.load(f->argument(0));  // RAW through shared memory: barrier
  Value* again = b.load(f->argument(0));   // read after read: none
  b.store(f->argument(0), b.binary(OpKind::Add, loaded, again));  // WAR: barrier
  b.ret();
  runPass("insert-barriers", *f);
  std::vector<std::string> kinds;
  for (auto& op : f->body()->ops())
    if (op->is(OpKind::Load) || op->is(OpKind::Store) || op->is(OpKind::Barrier)) kinds.push_back(op->name());
  EXPECT_EQ(kinds, (std::vector<std::string>{"store", "barrier", "load", "load", "barrier", "store"}));
}

TEST(AllocateSharedMemory, StaleRangesAreDroppedAndTotalReported) {
  auto f = makeFunction();
  Builder b(f->body());
  Value* x = constantTile(b, laidOut({32, 32}, Type::f32(), rowMajor({32, 32})));
  Op* free = convert(b, x, rowMajor({32, 32}));
  free->setAttr("smem_offset", Attr::integer(128));
  free->setAttr("smem_bytes", Attr::integer(16));
  Op* transposing = convert(b, x, colMajor({32, 32}));
  b.ret();
  runPass("allocate-shared-memory", *f);
  EXPECT_FALSE(free->hasAttr("smem_offset"));
  EXPECT_FALSE(free->hasAttr("smem_bytes"));
  EXPECT_EQ(transposing->intAttr("smem_offset"), 0);
  EXPECT_EQ(transposing->intAttr("smem_bytes"), 32 * 132);
  EXPECT_EQ(f->attrs().at("smem_bytes").getInt(), 32 * 132);
  auto empty = makeFunction();
  Builder(empty->body()).ret();
  runPass("allocate-shared-memory", *empty);
  EXPECT_EQ(empty->attrs().at("smem_bytes").getInt(), 0);
}

// The cost model stage-copies-in-registers picks its lanes with: 4 waves of 64 lanes store a 64x64 f16 tile, 4 rows
// of 4 columns a thread, rows first (one 8-byte store per column), into a buffer whose rows are its columns
// (attention's V: keys contiguous, swizzled in 8-byte chunks over 16 phases). Lanes along the columns alone put the
// 16 lanes of a store on columns 4 apart: 4 swizzle phases for 16 lanes, 4 ways conflicted. With 4 lanes along the
// rows first, a store's 16 lanes cover 16 bank pairs: one wavefront per phase of each of the 4 stores.
TEST(SharedBufferWavefronts, LanesAlongTheRowsFirstSpreadTransposedStoresOverTheBanks) {
  using Bases = std::vector<ir::LinearLayout::Basis>;
  const Bases registers{{1, 0}, {2, 0}, {0, 1}, {0, 2}}, warps{{16, 0}, {32, 0}};
  auto storeLayout = [&](Bases lanes) {
    return ir::LinearLayout({{ir::kRegisterDim, registers}, {ir::kLaneDim, std::move(lanes)}, {ir::kWarpDim, warps}},
                            {{"dim0", 64}, {"dim1", 64}});
  };
  const Layout v = Layout::shared(4, 1, 16, {0, 1});
  const int64_t columnsFirst = transforms::sharedBufferWavefronts(
      storeLayout({{0, 4}, {0, 8}, {0, 16}, {0, 32}, {4, 0}, {8, 0}}), v, {64, 64}, 2, 4);
  const int64_t rowsFirst = transforms::sharedBufferWavefronts(
      storeLayout({{4, 0}, {8, 0}, {0, 4}, {0, 8}, {0, 16}, {0, 32}}), v, {64, 64}, 2, 4);
  EXPECT_EQ(rowsFirst, 4 * 4);  // 4 stores of 4 phases, conflict-free
  EXPECT_EQ(columnsFirst, 4 * rowsFirst);
}

}  // namespace
}  // namespace tessera
