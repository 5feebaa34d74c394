// The mma.sync lowering of `dot`. No GPU runs here, so correctness is checked on the host:
//  * the index arithmetic (MmaFragments.h) against the PTX ISA's fragment tables and ldmatrix semantics, which
//    this file encodes independently, through a simulation of a whole m16n8k16 dot (staging, ldmatrix, mma,
//    accumulator registers) compared with A·B + C (the s8 and tf32 operand loads are checked against the
//    emulator's fragment tables in sim_warpmatrix_backends_test.cpp, and whole dots under the emulator by the
//    gpu_check_sim tests);
//  * the layout policy: fragment layouts exactly for the dots kMmaTiles lists;
//  * the tutorial matmul through the layout pipeline with the NVPTX layout policy reaches mma.sync, and ptxas
//    accepts it for sm_80 and sm_90a without spills.
// The emitted PTX of fixed dots (mma/ldmatrix counts, the FMA fallbacks) is checked by tests/lit/nvptx/mma-*.tir.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <tuple>

#include "NVPTXTestUtil.h"
#include "backends/common/ThreadMap.h"
#include "backends/nvptx/MmaFragments.h"
#include "backends/nvptx/MmaLayoutPolicy.h"
#include "backends/nvptx/MmaLinearLayouts.h"
#include "ir/Layout.h"
#include "ir/Printer.h"
#include "transforms/AssignLayouts.h"
#include "transforms/PassManager.h"
#include "tessera/kernels/matmul.h"

namespace tessera {
namespace {

using backends::Coords;
using backends::ThreadMap;
using namespace backends::nvptx;
using namespace tessera::testing;

// ---- PTX ISA facts, written out here independently of the code under test.
// mma.m16n8k16 (.f16/.bf16): groupID = lane / 4, threadID_in_group = lane % 4.
struct RC {
  int64_t row, col;
};
RC ptxAElement(int64_t lane, int i) {  // a0..a7, A is 16x16
  int64_t g = lane / 4, t = lane % 4;
  int64_t row = (i == 0 || i == 1 || i == 4 || i == 5) ? g : g + 8;
  int64_t col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
  return {row, col};
}
RC ptxBElement(int64_t lane, int i) {  // b0..b3, B is 16x8 (K x N)
  int64_t g = lane / 4, t = lane % 4;
  return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
}
RC ptxCElement(int64_t lane, int i) {  // c0..c3 / d0..d3, C is 16x8
  int64_t g = lane / 4, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}
// ldmatrix.m8n8.b16: lanes 8q..8q+7 give the row addresses of matrix q (16 contiguous bytes each); register q of
// lane l receives row l/4, elements 2(l%4), 2(l%4)+1 of matrix q, or with .trans, elements (2(l%4), l/4) and
// (2(l%4)+1, l/4).
using Pair = std::array<double, 2>;
std::vector<std::array<Pair, 4>> simulateLdmatrix(const std::vector<double>& smem, const std::vector<int64_t>& rowAddr,
                                                  int count, bool trans) {
  std::vector<std::array<Pair, 4>> out(32);
  for (int q = 0; q < count; ++q) {
    auto at = [&](int64_t r, int64_t c) { return smem.at(rowAddr.at(8 * q + r) + c); };
    for (int64_t l = 0; l < 32; ++l)
      for (int e = 0; e < 2; ++e)
        out[l][q][e] = trans ? at(2 * (l % 4) + e, l / 4) : at(l / 4, 2 * (l % 4) + e);
  }
  return out;
}

ir::Layout mmaLayout(int64_t warps) { return ir::Layout::blocked({1, 2}, {8, 4}, {1, warps}, {1, 0}); }

// ---- pure arithmetic

TEST(MmaFragments, SwizzleIsAPermutationWithinRowsAndMatchesTheSharedLayout) {
  for (int64_t elementBytes : {1, 2, 4})
    for (int64_t rowBytes : {16, 32, 64, 128, 256, 512}) {
      const int64_t rowLength = rowBytes / elementBytes, chunk = 16 / elementBytes;
      SCOPED_TRACE(std::to_string(elementBytes) + "-byte elements, rows of " + std::to_string(rowLength));
      MmaSwizzle s = mmaSwizzleFor(rowLength, elementBytes);
      EXPECT_EQ(s.chunkElements, chunk);
      ir::Layout shared = ir::Layout::shared(chunk, s.perPhase, s.maxPhase, {1, 0});
      const int64_t rows = 32;
      for (int64_t r = 0; r < rows; ++r) {
        std::set<int64_t> seen;
        for (int64_t c = 0; c < rowLength; ++c) {
          int64_t idx = mmaSwizzledIndex(s, r, c);
          EXPECT_EQ(idx / rowLength, r);
          seen.insert(idx);
          EXPECT_EQ(idx, shared.sharedOffset({rows, rowLength}, {r, c})) << r << " " << c;
        }
        EXPECT_EQ(static_cast<int64_t>(seen.size()), rowLength);
      }
      // One ldmatrix phase (8 rows, 16 bytes each, same logical chunk) hits 8 distinct 16-byte bank groups.
      for (int64_t r0 = 0; r0 < rows; r0 += 8)
        for (int64_t c = 0; c < rowLength; c += chunk) {
          std::set<int64_t> groups;
          for (int64_t r = r0; r < r0 + 8; ++r) groups.insert((mmaSwizzledIndex(s, r, c) * elementBytes / 16) % 8);
          EXPECT_EQ(groups.size(), 8u) << "rows from " << r0 << ", col " << c;
        }
    }
}

// mmaSplitSwizzledIndex against mmaSwizzledIndex: wherever it splits, base + offset is the index for every variable
// row and every variable column whose chunk bits are inside the mask; it splits the offsets ldmatrix uses (rows in
// 16-row blocks, columns in K steps clear of the lanes' chunk bits), and refuses the ones it cannot.
TEST(MmaFragments, SwizzledIndexSplitsIntoAThreadBaseAndAConstant) {
  int64_t splits = 0;
  for (int64_t elementBytes : {1, 2, 4})
    for (int64_t rowBytes : {16, 32, 48, 64, 128, 256}) {
      const MmaSwizzle s = mmaSwizzleFor(rowBytes / elementBytes, elementBytes);
      const int64_t ce = s.chunkElements, chunks = s.rowLength / ce;
      for (int64_t mask : {0, 1, 3, 4, 8, 9})
        for (int64_t row = 0; row < 40; row += 2)
          for (int64_t col = 0; col < 2 * s.rowLength; col += (col % 3 == 0 ? 1 : ce)) {
            SCOPED_TRACE(std::to_string(elementBytes) + "-byte elements, rows of " + std::to_string(s.rowLength) +
                         ", chunk mask " + std::to_string(mask) + ", offset (" + std::to_string(row) + ", " +
                         std::to_string(col) + ")");
            const std::optional<MmaSwizzleSplit> split = mmaSplitSwizzledIndex(s, row, col, mask);
            const bool phaseKept = s.maxPhase == 1 || row % (s.perPhase * s.maxPhase) == 0;
            const bool clear = col % ce == 0 && ((col / ce) & mask) == 0;
            EXPECT_EQ(split.has_value(), (s.maxPhase == 1 && col % ce == 0) || (phaseKept && clear));
            if (!split) continue;
            ++splits;
            EXPECT_EQ(split->baseCol % ce, 0);
            EXPECT_LT(split->baseCol / ce, s.maxPhase);
            for (int64_t rv = 0; rv < 24; ++rv)
              for (int64_t chunk = 0; chunk < 16; ++chunk) {
                if ((chunk & ~mask) != 0 || chunk >= chunks) continue;
                for (int64_t inChunk : {int64_t{0}, ce - 1}) {
                  const int64_t cv = chunk * ce + inChunk;
                  ASSERT_EQ(mmaSwizzledIndex(s, rv + row, cv + col),
                            mmaSwizzledIndex(s, rv, cv + split->baseCol) + split->offset)
                      << "row var " << rv << ", col var " << cv;
                }
              }
          }
    }
  EXPECT_GT(splits, 1000);
  // What the lowering relies on: f16 rows of 128 elements (256 bytes: 8 phases), A's lanes at chunk 0 or 1, K steps
  // of 16: the 16-row blocks and every K step split, into 4 bases; B's x4 lanes at chunks 0..3, pairs of K steps:
  // 2 bases.
  const MmaSwizzle f16 = mmaSwizzleFor(128, 2);
  std::set<int64_t> aBases, bBases;
  for (int64_t row = 0; row < 128; row += 16)
    for (int64_t k0 = 0; k0 < 128; k0 += 16) {
      const std::optional<MmaSwizzleSplit> a = mmaSplitSwizzledIndex(f16, row, k0, 1);
      ASSERT_TRUE(a.has_value()) << row << " " << k0;
      aBases.insert(a->baseCol);
      if (k0 % 32 == 0) {
        const std::optional<MmaSwizzleSplit> b = mmaSplitSwizzledIndex(f16, row / 2, k0, 3);
        ASSERT_TRUE(b.has_value()) << row << " " << k0;
        bBases.insert(b->baseCol);
      }
    }
  EXPECT_EQ(aBases, (std::set<int64_t>{0, 16, 32, 48}));
  EXPECT_EQ(bBases, (std::set<int64_t>{0, 32}));
  EXPECT_FALSE(mmaSplitSwizzledIndex(f16, 4, 0, 1).has_value());   // moves the phase
  EXPECT_FALSE(mmaSplitSwizzledIndex(f16, 0, 8, 1).has_value());   // chunk 1 is a lane's
  EXPECT_FALSE(mmaSplitSwizzledIndex(f16, 0, 12, 0).has_value());  // not whole chunks
}

TEST(MmaFragments, LdmatrixLaneOffsetsFollowTheTileOrder) {
  // A x4: tile q = lane / 8 is (0,0) (8,0) (0,16 bytes) (8,16 bytes), whose delivery gives the A fragment's
  // registers in order.
  const RC aTiles[4] = {{0, 0}, {8, 0}, {0, 16}, {8, 16}};
  for (int64_t lane = 0; lane < 32; ++lane) {
    for (int64_t elementBytes : {1, 2, 4}) {
      MatrixCoord a = mmaALaneOffset(lane, elementBytes);
      EXPECT_EQ(a.row, aTiles[lane / 8].row + lane % 8);
      EXPECT_EQ(a.col * elementBytes, aTiles[lane / 8].col);
    }
    for (int64_t tiles : {2, 4}) {
      MatrixCoord b = mmaBLaneOffset(lane, tiles);
      EXPECT_EQ(b.row, 8 * ((lane / 8) % tiles) + lane % 8);
      EXPECT_EQ(b.col, 0);
      // Transposed B: tile q at K bytes 16q of the same 8 rows (N).
      for (int64_t elementBytes : {1, 4}) {
        MatrixCoord t = mmaBTransposedLaneOffset(lane, tiles, elementBytes);
        EXPECT_EQ(t.row, lane % 8);
        EXPECT_EQ(t.col * elementBytes, 16 * ((lane / 8) % tiles));
      }
    }
  }
  EXPECT_FALSE(mmaStagesBTransposed(2));
  EXPECT_TRUE(mmaStagesBTransposed(1) && mmaStagesBTransposed(4));
}

TEST(MmaFragments, PlanAcceptsOnlyFragmentShapedAccumulators) {
  ThreadMap good = ThreadMap::build(mmaLayout(4), {64, 64}, "test");
  std::optional<MmaAccumulatorPlan> plan = planMmaAccumulator(good);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->fragments.size(), 8u);  // 64x64 / (16x8) blocks / 4 warps
  EXPECT_EQ(plan->regSlot.size(), 32u);
  EXPECT_EQ(plan->fragmentRows.size(), 4u);
  EXPECT_EQ(plan->fragmentCols.size(), 2u);
  // The default layout, warps splitting 8-row halves of a block, lanes 4 x 8 and threads of 4 rows are not mma
  // fragments.
  EXPECT_FALSE(planMmaAccumulator(ThreadMap::build(ir::defaultBlockedLayout({64, 64}, 4, 32), {64, 64}, "t")));
  EXPECT_FALSE(planMmaAccumulator(
      ThreadMap::build(ir::Layout::blocked({1, 2}, {8, 4}, {2, 2}, {1, 0}), {64, 64}, "t")));
  EXPECT_FALSE(planMmaAccumulator(
      ThreadMap::build(ir::Layout::blocked({1, 2}, {4, 8}, {1, 4}, {1, 0}), {64, 64}, "t")));
  EXPECT_FALSE(planMmaAccumulator(
      ThreadMap::build(ir::Layout::blocked({4, 2}, {8, 4}, {1, 4}, {1, 0}), {64, 64}, "t")));
  // 2x2-element threads are fragments with each block's rows permuted: fragment row g is row 2g, g + 8 is 2g + 1.
  std::optional<MmaAccumulatorPlan> permuted =
      planMmaAccumulator(ThreadMap::build(ir::Layout::blocked({2, 2}, {8, 4}, {1, 4}, {1, 0}), {64, 64}, "t"));
  ASSERT_TRUE(permuted);
  EXPECT_EQ(permuted->rowBases, (MmaRowBases{2, 4, 8, 1}));
  for (int64_t g = 0; g < 8; ++g) {
    EXPECT_EQ(mmaBlockRow(permuted->rowBases, g), 2 * g);
    EXPECT_EQ(mmaBlockRow(permuted->rowBases, g + 8), 2 * g + 1);
  }
}

// ---- the formats as linear layouts (MmaLinearLayouts.h), against the same PTX ISA facts

using ir::LinearLayout;

TEST(MmaLinearLayouts, MmaFragmentsFollowThePtxTables) {
  LinearLayout a = mmaOperandAFragment(), b = mmaOperandBFragment(), c = mmaAccumulatorFragment();
  for (int64_t lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 8; ++i) {
      RC e = ptxAElement(lane, i);
      EXPECT_EQ(a.apply({i, lane}), (Coords{e.row, e.col})) << "a" << i << " of lane " << lane;
    }
    for (int i = 0; i < 4; ++i) {
      RC eb = ptxBElement(lane, i), ec = ptxCElement(lane, i);
      EXPECT_EQ(b.apply({i, lane}), (Coords{eb.row, eb.col})) << "b" << i << " of lane " << lane;
      EXPECT_EQ(c.apply({i, lane}), (Coords{ec.row, ec.col})) << "c" << i << " of lane " << lane;
    }
  }
  // A warp holds each element of each operand exactly once.
  EXPECT_TRUE(a.isInvertible() && b.isInvertible() && c.isInvertible());
}

TEST(MmaLinearLayouts, LdmatrixFragmentsMatchTheLdmatrixSimulation) {
  // Matrices stored one after another, row-major: element (q, r, c) at 64 q + 8 r + c holds that same number.
  std::vector<double> smem(4 * 64);
  for (size_t i = 0; i < smem.size(); ++i) smem[i] = static_cast<double>(i);
  for (int count : {1, 2, 4})
    for (bool trans : {false, true}) {
      SCOPED_TRACE("x" + std::to_string(count) + (trans ? ".trans" : ""));
      LinearLayout tile = ldmatrixFragment(count, trans), rows = ldmatrixAddresses(count);
      std::vector<int64_t> rowAddr(32);
      for (int64_t l = 0; l < 32; ++l) {
        Coords mr = rows.apply({l});  // (matrix, row) lane l addresses
        rowAddr[l] = 64 * mr[0] + 8 * mr[1];
      }
      std::vector<std::array<Pair, 4>> got = simulateLdmatrix(smem, rowAddr, count, trans);
      for (int64_t l = 0; l < 32; ++l)
        for (int q = 0; q < count; ++q)
          for (int e = 0; e < 2; ++e) {
            Coords m = tile.apply({2 * q + e, l});  // (matrix, row, col)
            EXPECT_EQ(got[l][q][e], static_cast<double>(64 * m[0] + 8 * m[1] + m[2])) << "lane " << l;
          }
    }
}

TEST(MmaLinearLayouts, LdmatrixTilesPlacedAsMmaDotLoadsThemAreTheOperandFragments) {
  // A: ldmatrix.x4 with matrices at (0,0) (8,0) (0,8) (8,8) of the 16x16 block (mmaALaneOffset).
  LinearLayout placeA({{"matrix", {{8, 0}, {0, 8}}}, {"row", {{1, 0}, {2, 0}, {4, 0}}}, {"col", {{0, 1}, {0, 2}, {0, 4}}}},
                      {{"dim0", 16}, {"dim1", 16}});
  EXPECT_EQ(ldmatrixFragment(4, false).compose(placeA), mmaOperandAFragment());
  LinearLayout aRows = ldmatrixAddresses(4).compose(placeA.sublayout({"matrix", "row"}, {"dim0", "dim1"}));
  for (int64_t lane = 0; lane < 32; ++lane) {
    MatrixCoord o = mmaALaneOffset(lane, 2);
    EXPECT_EQ(aRows.apply({lane}), (Coords{o.row, o.col})) << "lane " << lane;
  }
  // B (K x N): ldmatrix.trans with matrix q at K rows 8q (mmaBLaneOffset); x2 is one K step's fragment.
  for (int tiles : {2, 4}) {
    LinearLayout::InDim matrices{"matrix", {}};
    for (int64_t q = 1; q < tiles; q *= 2) matrices.bases.push_back({8 * q, 0});
    LinearLayout placeB({matrices, {"row", {{1, 0}, {2, 0}, {4, 0}}}, {"col", {{0, 1}, {0, 2}, {0, 4}}}},
                        {{"dim0", 8 * tiles}, {"dim1", 8}});
    if (tiles == 2) {
      EXPECT_EQ(ldmatrixFragment(2, true).compose(placeB), mmaOperandBFragment());
    }
    LinearLayout bRows = ldmatrixAddresses(tiles).compose(placeB.sublayout({"matrix", "row"}, {"dim0", "dim1"}));
    for (int64_t lane = 0; lane < 32; ++lane) {
      MatrixCoord o = mmaBLaneOffset(lane, tiles);
      EXPECT_EQ(bRows.apply({lane}), (Coords{o.row, o.col})) << "lane " << lane << ", " << tiles << " tiles";
    }
  }
}

TEST(MmaLinearLayouts, PolicyAccumulatorRegistersAreMmaFragments) {
  // Every fragment planMmaAccumulator finds in the policy's blocked layout holds c0..c3 where the mma.sync
  // accumulator fragment says, in every lane.
  LinearLayout frag = mmaAccumulatorFragment();
  for (int64_t warps : {1, 2, 4, 8})
    for (std::vector<int64_t> shape : {std::vector<int64_t>{64, 64}, {128, 256}, {16, 64}}) {
      ThreadMap acc = ThreadMap::build(mmaLayout(warps), shape, "test");
      std::optional<MmaAccumulatorPlan> plan = planMmaAccumulator(acc);
      ASSERT_TRUE(plan);
      for (const MmaFragment& f : plan->fragments)
        for (int s = 0; s < 4; ++s)
          for (int64_t lane = 0; lane < 32; ++lane) {
            Coords in = frag.apply({s, lane});
            EXPECT_EQ(acc.coordsOf(f.regs[s], 0, lane), (Coords{f.row + in[0], f.col + in[1]}));
          }
    }
}

TEST(MmaLinearLayouts, WgmmaFragmentsFollowThePtxTables) {
  // wgmma.m64nNk16: warp w of the warpgroup holds rows 16w..16w+15; d_i sits in column block i / 4 of 8 columns, at
  // row groupID + 8 * ((i / 2) % 2), column 2 * threadID_in_group + i % 2; a_i at the mma.sync A position.
  for (int64_t n = 8; n <= 256; n *= 2) {
    LinearLayout d = wgmmaAccumulatorFragment(n);
    ASSERT_EQ(d.inDimSize("register"), n / 2);
    EXPECT_TRUE(d.isInvertible());
    for (int64_t w = 0; w < 4; ++w)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t i = 0; i < n / 2; ++i) {
          int64_t g = lane / 4, t = lane % 4;
          EXPECT_EQ(d.apply({i, lane, w}), (Coords{16 * w + g + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * t + i % 2}))
              << "n " << n << ", warp " << w << ", lane " << lane << ", d" << i;
        }
  }
  LinearLayout a = wgmmaOperandAFragment();
  for (int64_t w = 0; w < 4; ++w)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 8; ++i) {
        RC e = ptxAElement(lane, i);
        EXPECT_EQ(a.apply({i, lane, w}), (Coords{16 * w + e.row, e.col}));
      }
  EXPECT_THROW(wgmmaAccumulatorFragment(24), Error);
}

// The PTX ISA's swizzle modes as address arithmetic: within each 8 x swizzleBytes atom (8 lines of a tile whose lines
// are stored one after another, column blocks of swizzleBytes one after another), the 16-byte chunk bits [4, 4 + b)
// of the byte address are XOR-ed with bits [7, 7 + b), b = log2(swizzleBytes / 16).
int64_t swizzledElementOffset(int64_t line, int64_t pos, int64_t lines, int64_t elementBytes, int64_t swizzleBytes) {
  const int64_t lineElements = swizzleBytes / elementBytes;
  int64_t byte = (pos / lineElements) * lines * swizzleBytes + line * swizzleBytes + (pos % lineElements) * elementBytes;
  byte ^= ((byte >> 7) & (swizzleBytes / 16 - 1)) << 4;
  return byte / elementBytes;
}

TEST(MmaLinearLayouts, NvmmaSharedLayoutsFollowTheSwizzleModes) {
  for (int64_t swizzle : {32, 64, 128})
    for (int64_t elementBytes : {1, 2, 4})
      for (int contiguous : {0, 1})
        for (int64_t blocks : {1, 2, 4})
          for (int64_t lines : {8, 16, 64}) {
            std::vector<int64_t> shape(2);
            shape[contiguous] = blocks * swizzle / elementBytes;
            shape[1 - contiguous] = lines;
            SCOPED_TRACE(std::to_string(swizzle) + "B swizzle, " + std::to_string(elementBytes) + "-byte elements, " +
                         std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + ", contiguous dim " +
                         std::to_string(contiguous));
            LinearLayout l = nvmmaSharedLayout(shape, contiguous, elementBytes, swizzle);
            ASSERT_TRUE(l.isInvertible());
            LinearLayout offsetOf = l.invert();
            for (int64_t line = 0; line < lines; ++line)
              for (int64_t pos = 0; pos < shape[contiguous]; ++pos) {
                Coords c(2);
                c[contiguous] = pos;
                c[1 - contiguous] = line;
                ASSERT_EQ(offsetOf.apply(c)[0], swizzledElementOffset(line, pos, lines, elementBytes, swizzle))
                    << "line " << line << ", position " << pos;
              }
            // 8 consecutive lines read at one 16-byte chunk (an ldmatrix phase) hit 8 distinct 16-byte bank groups.
            for (int64_t line0 = 0; line0 < lines; line0 += 8)
              for (int64_t pos = 0; pos < shape[contiguous]; pos += 16 / elementBytes) {
                std::set<int64_t> groups;
                for (int64_t line = line0; line < line0 + 8; ++line) {
                  Coords c(2);
                  c[contiguous] = pos;
                  c[1 - contiguous] = line;
                  groups.insert(offsetOf.apply(c)[0] * elementBytes / 16 % 8);
                }
                EXPECT_EQ(groups.size(), 8u) << "lines from " << line0 << ", position " << pos;
              }
          }
  // One column block is the #shared sugar with 16-byte vectors.
  EXPECT_EQ(nvmmaSharedLayout({64, 64}, 1, 2, 128), ir::Layout::shared(8, 1, 8, {1, 0}).toLinear({64, 64}));
  EXPECT_EQ(nvmmaSharedLayout({16, 64}, 0, 4, 64), ir::Layout::shared(4, 2, 4, {0, 1}).toLinear({16, 64}));
  EXPECT_THROW(nvmmaSharedLayout({64, 32}, 1, 2, 128), Error);  // 64 bytes per line, shorter than the swizzle
  EXPECT_THROW(nvmmaSharedLayout({4, 64}, 1, 2, 128), Error);   // less than one 8-line atom
  EXPECT_THROW(nvmmaSharedLayout({64, 64}, 1, 2, 16), Error);
}

TEST(MmaLinearLayouts, StagingLayoutIsMmaSwizzledIndex) {
  for (int64_t elementBytes : {1, 2, 4})
    for (int64_t rowBytes : {16, 32, 64, 128, 256, 512}) {
      const int64_t rowLength = rowBytes / elementBytes;
      LinearLayout offsetOf = mmaStagingLayout(32, rowLength, elementBytes).invert();
      MmaSwizzle s = mmaSwizzleFor(rowLength, elementBytes);
      for (int64_t r = 0; r < 32; ++r)
        for (int64_t c = 0; c < rowLength; ++c) EXPECT_EQ(offsetOf.apply({r, c})[0], mmaSwizzledIndex(s, r, c));
    }
}

// The accumulator layout the policy gives chained dots: warps stacked along M, each fragment's rows permuted.
ir::Layout chainedLayout(int64_t warps) { return ir::Layout::blocked({2, 2}, {8, 4}, {warps, 1}, {1, 0}); }

// Simulates the whole lowering of acc + a·b for one accumulator layout, with the documented ldmatrix and mma
// semantics, and compares every thread's result registers with the reference. With `aInRegisters`, A is held in
// the accumulator's layout over M x K and its fragments are packed from registers (planMmaOperandARegisters)
// instead of loaded with ldmatrix.
void simulateDot(const ir::Layout& layout, int64_t M, int64_t N, int64_t K, int64_t warps, uint32_t seed,
                 bool aInRegisters = false) {
  SCOPED_TRACE(layout.str() + " M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) +
               " warps=" + std::to_string(warps) + (aInRegisters ? " A in registers" : ""));
  ThreadMap acc = ThreadMap::build(layout, {M, N}, "sim");
  std::optional<MmaAccumulatorPlan> plan = planMmaAccumulator(acc);
  ASSERT_TRUE(plan);
  ThreadMap aMap = ThreadMap::build(layout, {M, K}, "sim");
  std::optional<std::vector<int64_t>> aSource;
  if (aInRegisters) {
    aSource = planMmaOperandARegisters(aMap, acc, *plan);
    ASSERT_TRUE(aSource);
  }
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-4, 4);  // integer values: every sum is exact in double
  std::vector<double> A(M * K), B(K * N), C(M * N);
  for (double& x : A) x = small(rng);
  for (double& x : B) x = small(rng);
  for (double& x : C) x = small(rng);

  // Staging: element (r, c) at its swizzled index.
  MmaSwizzle as = mmaSwizzleFor(K, 2), bs = mmaSwizzleFor(N, 2);
  std::vector<double> aSmem(M * K, NAN), bSmem(K * N, NAN);
  for (int64_t r = 0; r < M; ++r)
    for (int64_t c = 0; c < K; ++c) aSmem.at(mmaSwizzledIndex(as, r, c)) = A[r * K + c];
  for (int64_t r = 0; r < K; ++r)
    for (int64_t c = 0; c < N; ++c) bSmem.at(mmaSwizzledIndex(bs, r, c)) = B[r * N + c];

  const int64_t bTiles = mmaBLoadTiles(*plan, K, 16);
  std::vector<bool> covered(M * N, false);
  for (int64_t w = 0; w < warps; ++w) {
    // The warp's part of the accumulator coordinates (what MmaDot.cpp computes from the warp bases).
    int64_t warpRow = 0, warpCol = 0;
    for (size_t j = 0; j < acc.warpBases.size(); ++j)
      if ((w >> j) & 1) {
        warpRow ^= acc.warpBases[j][0];
        warpCol ^= acc.warpBases[j][1];
      }
    // d[lane][fragment][slot], initialised from the thread's accumulator registers.
    std::vector<std::vector<std::array<double, 4>>> d(32, std::vector<std::array<double, 4>>(plan->fragments.size()));
    for (int64_t l = 0; l < 32; ++l)
      for (size_t f = 0; f < plan->fragments.size(); ++f)
        for (int s = 0; s < 4; ++s) {
          backends::Coords c = acc.coordsOf(plan->fragments[f].regs[s], w, l);
          d[l][f][s] = C[c[0] * N + c[1]];
        }
    std::map<int64_t, std::vector<std::array<Pair, 4>>> bRegs;
    for (int64_t k0 = 0; k0 < K; k0 += 16) {
      const int64_t step = k0 / 16;
      std::map<int64_t, std::vector<std::array<Pair, 4>>> aRegs;
      for (size_t i = 0; i < plan->fragmentRows.size(); ++i) {
        const int64_t row = plan->fragmentRows[i];
        if (aSource) {  // register p packs elements 2p, 2p + 1 of the fragment, from the thread's A registers
          const size_t first = (i * static_cast<size_t>(K / 16) + static_cast<size_t>(step)) * 8;
          aRegs[row].resize(32);
          for (int64_t l = 0; l < 32; ++l)
            for (int p = 0; p < 4; ++p)
              for (int h = 0; h < 2; ++h) {
                backends::Coords c = aMap.coordsOf((*aSource)[first + 2 * p + h], w, l);
                aRegs[row][l][p][h] = A[c[0] * K + c[1]];
              }
          continue;
        }
        std::vector<int64_t> addr(32);
        for (int64_t l = 0; l < 32; ++l) {
          MatrixCoord o = mmaALaneOffset(l, 2, plan->rowBases);
          addr[l] = mmaSwizzledIndex(as, warpRow + row + o.row, k0 + o.col);
          ASSERT_EQ(addr[l] % 8, 0) << "ldmatrix rows must be 16-byte aligned";
        }
        aRegs[row] = simulateLdmatrix(aSmem, addr, 4, false);
      }
      if (bTiles == 2 || step % 2 == 0)
        for (int64_t col : plan->fragmentCols) {
          std::vector<int64_t> addr(32);
          for (int64_t l = 0; l < 32; ++l) {
            MatrixCoord o = mmaBLaneOffset(l, bTiles);
            addr[l] = mmaSwizzledIndex(bs, k0 + o.row, warpCol + col + o.col);
            ASSERT_EQ(addr[l] % 8, 0);
          }
          bRegs[col] = simulateLdmatrix(bSmem, addr, static_cast<int>(bTiles), true);
        }
      const int bFirst = bTiles == 4 ? 2 * (step % 2) : 0;
      for (size_t f = 0; f < plan->fragments.size(); ++f) {
        // Assemble the warp's A (16x16), B (16x8), C (16x8) from the lanes' registers per the ISA tables.
        double a[16][16], b[16][8], c[16][8];
        for (int64_t l = 0; l < 32; ++l) {
          const auto& ar = aRegs[plan->fragments[f].row][l];
          const auto& br = bRegs[plan->fragments[f].col][l];
          for (int i = 0; i < 8; ++i) {
            RC e = ptxAElement(l, i);
            a[e.row][e.col] = ar[i / 2][i % 2];
          }
          for (int i = 0; i < 4; ++i) {
            RC e = ptxBElement(l, i);
            b[e.row][e.col] = br[bFirst + i / 2][i % 2];
          }
          for (int i = 0; i < 4; ++i) {
            RC e = ptxCElement(l, i);
            c[e.row][e.col] = d[l][f][i];
          }
        }
        for (int64_t l = 0; l < 32; ++l)
          for (int i = 0; i < 4; ++i) {
            RC e = ptxCElement(l, i);
            double sum = c[e.row][e.col];
            for (int kk = 0; kk < 16; ++kk) sum += a[e.row][kk] * b[kk][e.col];
            d[l][f][i] = sum;
          }
      }
    }
    // Every result register of every thread: (A·B + C) at that register's coordinates.
    for (int64_t l = 0; l < 32; ++l)
      for (int64_t r = 0; r < acc.numRegs(); ++r) {
        backends::Coords c = acc.coordsOf(r, w, l);
        double want = C[c[0] * N + c[1]];
        for (int64_t k = 0; k < K; ++k) want += A[c[0] * K + k] * B[k * N + c[1]];
        auto [frag, slot] = plan->regSlot[r];
        ASSERT_EQ(d[l][frag][slot], want) << "warp " << w << " lane " << l << " reg " << r << " at (" << c[0]
                                          << ", " << c[1] << ")";
        covered[c[0] * N + c[1]] = true;
      }
  }
  for (bool c : covered) ASSERT_TRUE(c);
}

TEST(MmaFragments, SimulatedDotMatchesReference) {
  uint32_t seed = 1;
  for (auto [M, N, K, warps] : std::vector<std::array<int64_t, 4>>{
           {16, 8, 16, 1}, {16, 32, 16, 4}, {64, 64, 32, 4}, {32, 64, 16, 4}, {32, 32, 128, 4}, {128, 64, 64, 8},
           {16, 16, 32, 4} /* N < 8 * warps: replicated warps */, {64, 128, 16, 2}})
    simulateDot(mmaLayout(warps), M, N, K, warps, seed++);
}

TEST(MmaFragments, SimulatedChainedDotMatchesReference) {
  // Warps stacked along M with permuted fragment rows, A by ldmatrix (permuted lane rows) and from registers.
  uint32_t seed = 100;
  for (auto [M, N, K, warps] : std::vector<std::array<int64_t, 4>>{
           {128, 64, 64, 8}, {128, 128, 64, 8}, {64, 64, 32, 4}, {256, 32, 16, 8} /* two blocks per warp */})
    for (bool aInRegisters : {false, true}) simulateDot(chainedLayout(warps), M, N, K, warps, seed++, aInRegisters);
}

// A chained dot's A buffer (attention's Q on sm_80) holds each 16-row block's rows in the accumulator's order:
// buffer row r is row mmaBlockRow(kChainedRows, r), laid out as the plain swizzle lays out row r, so ldmatrix's
// lanes read 8 consecutive buffer rows: 8 distinct 16-byte bank groups. Reading the permuted rows of the plain
// layout instead, one matrix's rows 0, 2, ..., 14 fall into 4 groups for rows of 128 bytes or more.
TEST(MmaFragments, ChainedABufferHoldsTheAccumulatorsRowOrder) {
  for (int64_t M : {16, 64, 128})
    for (int64_t K : {32, 64, 128}) {
      SCOPED_TRACE("M " + std::to_string(M) + " K " + std::to_string(K));
      const std::optional<ir::Layout> layout = mmaChainedASharedLayout(M, K, 2);
      ASSERT_TRUE(layout);
      const MmaSwizzle plain = mmaSwizzleFor(K, 2);
      for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < K; ++c) {
          const int64_t row = (r & ~int64_t{15}) ^ mmaBlockRow(kChainedRows, r & 15);
          ASSERT_EQ(layout->sharedOffset({M, K}, {row, c}), mmaSwizzledIndex(plain, r, c)) << r << ", " << c;
        }
      // The 16-byte bank groups (8 per 128 bytes) of one ldmatrix matrix's 8 rows at chunk 0.
      auto groups = [&](const MmaRowBases& rows) {
        std::set<int64_t> g;
        for (int64_t lane = 0; lane < 8; ++lane)
          g.insert(mmaSwizzledIndex(plain, mmaBlockRow(rows, lane), 0) * 2 / 16 % 8);
        return g.size();
      };
      EXPECT_EQ(groups(kMmaIdentityRows), 8u);
      if (K >= 64) EXPECT_EQ(groups(kChainedRows), 4u);
    }
  EXPECT_FALSE(mmaChainedASharedLayout(48, 64, 2));  // no power of two: the plain layout, rows permuted by the lanes
}

TEST(MmaFragments, OperandARegistersNeedTheAccumulatorsRowsAndLanes) {
  const std::vector<int64_t> accShape = {128, 64}, aShape = {128, 32};
  ThreadMap acc = ThreadMap::build(chainedLayout(8), accShape, "t");
  std::optional<MmaAccumulatorPlan> plan = planMmaAccumulator(acc);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->rowBases, (MmaRowBases{2, 4, 8, 1}));
  EXPECT_TRUE(planMmaOperandARegisters(ThreadMap::build(chainedLayout(8), aShape, "t"), acc, *plan));
  // A spread differently (the coalesced default, warps along N) holds other elements: no register permutation.
  EXPECT_FALSE(planMmaOperandARegisters(ThreadMap::build(ir::defaultBlockedLayout(aShape, 8, 32), aShape, "t"), acc, *plan));
  EXPECT_FALSE(planMmaOperandARegisters(ThreadMap::build(mmaLayout(8), aShape, "t"), acc, *plan));
  // With the warps along N, every warp needs the A rows of all blocks: not in its registers either.
  ThreadMap alongN = ThreadMap::build(mmaLayout(8), accShape, "t");
  EXPECT_FALSE(planMmaOperandARegisters(ThreadMap::build(chainedLayout(8), aShape, "t"), alongN,
                                        *planMmaAccumulator(alongN)));
}

const std::string kMmaLayoutText = "#blocked{order = [1, 0], spt = [1, 2], tpw = [8, 4], wpc = [1, 4]}";

// ---- the layout policy and the tutorial matmul

TEST(NVPTXMma, PolicyChoosesFragmentLayoutOnlyForMmaDots) {
  transforms::PassOptions options;
  options.numWarps = 4;
  options.arch = "sm_80";  // on sm_90a the f16/bf16 dots whose operands are loads run on wgmma (below)
  auto dotOf = [](const std::string& in, const std::string& precision, int64_t M, int64_t N, int64_t K) {
    const std::string operands = "#blocked{order = [1, 0], spt = [1, 4], tpw = [4, 8], wpc = [4, 1]}";
    std::string text = dotKernel({in, in == "i8" ? "i32" : "f32", M, N, K, precision, operands, kMmaLayoutText});
    return ir::parseModule(text, "policy.tir");
  };
  NVPTXLayoutPolicy policy(options);
  auto findDot = [](ir::Module& m) -> const ir::Op* {
    for (const auto& op : m.functions().at(0)->body()->ops())
      if (op->is(ir::OpKind::Dot)) return op.get();
    return nullptr;
  };
  // mma shapes: f16 (m16n8k16), i8 (m16n8k32), f32 allowing tf32 (m16n8k8).
  for (auto [in, precision, K] : std::vector<std::tuple<std::string, std::string, int64_t>>{
           {"f16", "ieee", 32}, {"bf16", "ieee", 16}, {"i8", "ieee", 32}, {"i8", "ieee", 64}, {"f32", "tf32", 8}}) {
    std::unique_ptr<ir::Module> m = dotOf(in, precision, 64, 64, K);
    const ir::Op* d = findDot(*m);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(policy.resultLayout(*d, 0), mmaLayout(4)) << in << " " << precision << " K=" << K;
    EXPECT_EQ(policy.operandLayout(*d, 2), mmaLayout(4)) << in << " " << precision << " K=" << K;
  }
  // f32 without tf32 (ieee), and K not a multiple of the instruction's: the FMA path's default layout.
  for (auto [in, precision, K] : std::vector<std::tuple<std::string, std::string, int64_t>>{
           {"f32", "ieee", 32}, {"i8", "ieee", 16}, {"f32", "tf32", 4}, {"f16", "ieee", 8}}) {
    std::unique_ptr<ir::Module> m = dotOf(in, precision, 64, 64, K);
    const ir::Op* d = findDot(*m);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(policy.resultLayout(*d, 0), ir::defaultBlockedLayout({64, 64}, 4, 32)) << in << " " << precision << " K=" << K;
  }
  // sm_90a: f16 and bf16 take wgmma's accumulator (a linear layout); i8 and tf32 keep mma.sync's fragments.
  transforms::PassOptions hopper = options;
  hopper.arch = "sm_90a";
  NVPTXLayoutPolicy hopperPolicy(hopper);
  for (auto [in, precision, K] : std::vector<std::tuple<std::string, std::string, int64_t>>{
           {"f16", "ieee", 32}, {"bf16", "ieee", 16}, {"i8", "ieee", 32}, {"f32", "tf32", 8}}) {
    std::unique_ptr<ir::Module> m = dotOf(in, precision, 64, 64, K);
    const ir::Op* d = findDot(*m);
    ASSERT_NE(d, nullptr);
    const bool wgmma = in == "f16" || in == "bf16";
    std::optional<ir::Layout> layout = hopperPolicy.resultLayout(*d, 0);
    ASSERT_TRUE(layout) << in << " K=" << K;
    EXPECT_EQ(layout->kind() == ir::Layout::Kind::Linear, wgmma) << in << " K=" << K;
    if (!wgmma) {
      EXPECT_EQ(layout, mmaLayout(4)) << in << " K=" << K;
    }
  }
}

TEST(NVPTXMma, TutorialMatmulThroughThePipelineUsesMma) {
  if (!havePtxas()) GTEST_SKIP() << "ptxas not found at " << kPtxas;
  Constants constants{{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 8}};
  std::unique_ptr<ir::Module> m = tessera::kernels::matmul_kernel().trace(constants);
  ir::Function& f = *m->functions().at(0);
  f.attrs()["num_warps"] = ir::Attr::integer(4);
  for (unsigned i = 0; i < f.numArguments(); ++i)
    if (f.argument(i)->type().isPtr()) f.argAttrs(i)["divisibility"] = ir::Attr::integer(16);
  transforms::PassOptions options;
  options.numWarps = 4;
  options.arch = "sm_80";  // mma.sync's layouts (sm_90a would take wgmma's)
  transforms::PassManager pm;
  pm.setVerifyEach(true);
  pm.add(transforms::createPass("coalesce", options));
  pm.add(transforms::createAssignLayoutsPass(options, std::make_shared<NVPTXLayoutPolicy>(options)));
  for (const char* name : {"remove-layout-conversions", "canonicalize", "cse", "dce", "allocate-shared-memory",
                           "insert-barriers"})
    pm.add(transforms::createPass(name, options));
  pm.run(*m);
  const std::string text = ir::print(*m);
  ASSERT_NE(text.find("spt = [1, 2], tpw = [8, 4], wpc = [1, 4]"), std::string::npos) << text;
  for (const char* arch : {"sm_90a", "sm_80"}) {
    SCOPED_TRACE(arch);
    Compiled c = compileIR(text, arch, 4);
    EXPECT_EQ(countOccurrences(c.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), 16) << c.ptx;
    EXPECT_GT(countOccurrences(c.ptx, "ldmatrix.sync.aligned.m8n8.x4"), 0);
    PtxasReport r = runPtxas(c.ptx, arch);
    EXPECT_EQ(r.status, 0) << r.log;
    EXPECT_EQ(r.spillStores, 0) << r.log;
    EXPECT_EQ(r.spillLoads, 0) << r.log;
    EXPECT_EQ(r.stackFrame, 0) << r.log;
  }
}

}  // namespace
}  // namespace tessera
