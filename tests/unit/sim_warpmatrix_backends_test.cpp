// The emulator's warp-matrix semantics (jit/sim/runtime/WarpMatrix.h) against the backends' own index arithmetic
// (backends/nvptx/MmaFragments.h, backends/amdgpu/MfmaFragments.h and the layout policies). The two were written
// separately from the ISA documents; wherever the backend has a mapping for the same operation they must agree, so a
// misreading in either shows up here.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/amdgpu/MfmaFragments.h"
#include "backends/amdgpu/MfmaLayoutPolicy.h"
#include "backends/common/ThreadMap.h"
#include "backends/nvptx/MmaFragments.h"
#include "backends/nvptx/MmaLayoutPolicy.h"
#include "ir/IR.h"
#include "ir/Parser.h"
#include "jit/sim/runtime/WarpMatrix.h"

namespace tessera::sim {
namespace {

using backends::Coords;
using backends::ThreadMap;
namespace nv = backends::nvptx;
namespace amd = backends::amdgpu;

// A staged operand: `rows` x `rowLength` elements of `elementBytes` at the backend's swizzled indices, each holding
// a value derived from its logical (row, col), so what ldmatrix delivers says where it came from: the position
// itself for 16- and 32-bit elements (unique), hashed to 8 bits for 8-bit ones (a wrong position matches only by
// chance, 1 in 256 per element).
struct StagedTile {
  int64_t rows, rowLength, elementBytes;
  nv::MmaSwizzle swizzle;
  std::vector<uint8_t> smem;
  StagedTile(int64_t rows, int64_t rowLength, int64_t elementBytes)
      : rows(rows), rowLength(rowLength), elementBytes(elementBytes),
        swizzle(nv::mmaSwizzleFor(rowLength, elementBytes)), smem(rows * rowLength * elementBytes) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < rowLength; ++c) {
        const uint32_t v = valueOf(r, c);
        std::memcpy(&smem.at(nv::mmaSwizzledIndex(swizzle, r, c) * elementBytes), &v, elementBytes);
      }
  }
  uint32_t valueOf(int64_t row, int64_t col) const {
    const uint32_t id = static_cast<uint32_t>(row * rowLength + col);
    return elementBytes == 1 ? (id * 2654435761u) >> 24 : id;
  }
  uint64_t addressOf(int64_t row, int64_t col) const {
    return reinterpret_cast<uint64_t>(smem.data()) + elementBytes * nv::mmaSwizzledIndex(swizzle, row, col);
  }
};

const MatrixRowRead kReadHost = [](uint32_t, uint64_t address, uint32_t bytes, void* dst) {
  ASSERT_EQ(address % kMatrixRowBytes, 0u) << "ldmatrix rows are 16-byte aligned";
  std::memcpy(dst, reinterpret_cast<const void*>(address), bytes);
};

// Part `part` of a 32-bit register holding elements of `elementBytes`.
uint32_t partOf(uint32_t reg, uint32_t part, int64_t elementBytes) {
  if (elementBytes == 4) return reg;
  const uint32_t bits = static_cast<uint32_t>(8 * elementBytes);
  return (reg >> (bits * part)) & ((1u << bits) - 1);
}

// The mma kinds MmaDot emits, by element size, and their K per instruction.
struct NvptxMma {
  int64_t elementBytes;
  std::vector<MmaKind> kinds;
};
const NvptxMma kNvptxMmas[] = {
    {2, {kMmaM16N8K16_F16_F32, kMmaM16N8K16_BF16_F32, kMmaM16N8K16_F16_F16}},
    {1, {kMmaM16N8K32_S8_S32}},
    {4, {kMmaM16N8K8_TF32_F32}},
};

// MmaDot: per 16-row block and K step, ldmatrix.x4 with the lanes' rows at mmaALaneOffset delivers the registers
// of the mma A fragment, for every element size.
TEST(WarpMatrixVsBackend, NvptxALoadsDeliverTheMmaAFragment) {
  for (const NvptxMma& mma : kNvptxMmas)
    for (int64_t rowBytes : {32, 64, 128, 256}) {
      const int64_t K = rowBytes / mma.elementBytes, stepK = nv::mmaStepK(mma.elementBytes);
      SCOPED_TRACE(std::to_string(mma.elementBytes) + "-byte elements, K = " + std::to_string(K));
      StagedTile a(32, K, mma.elementBytes);
      for (int64_t row0 : {0, 16})
        for (int64_t k0 = 0; k0 < K; k0 += stepK) {
          std::array<uint64_t, kMatrixLanes> addr;
          for (uint32_t lane = 0; lane < kMatrixLanes; ++lane) {
            nv::MatrixCoord o = nv::mmaALaneOffset(lane, mma.elementBytes);
            addr[lane] = a.addressOf(row0 + o.row, k0 + o.col);
          }
          std::vector<uint32_t> regs(kMatrixLanes * 4);
          executeLdMatrix(4, false, addr, kReadHost, regs);
          for (MmaKind kind : mma.kinds) {
            ASSERT_EQ(static_cast<int64_t>(mmaShape(kind).k), stepK) << mmaShape(kind).instruction;
            ASSERT_EQ(mmaShape(kind).registersOf(MmaOperand::A), 4u);
            const uint32_t parts = static_cast<uint32_t>(4 / mma.elementBytes);
            for (uint32_t lane = 0; lane < kMatrixLanes; ++lane)
              for (uint32_t r = 0; r < 4; ++r)
                for (uint32_t h = 0; h < parts; ++h) {
                  MatrixPosition at = fragmentElement(kind, MmaOperand::A, lane, r, h);
                  ASSERT_EQ(partOf(regs[lane * 4 + r], h, mma.elementBytes), a.valueOf(row0 + at.row, k0 + at.col))
                      << mmaShape(kind).instruction << ": lane " << lane << " register " << r << " part " << h
                      << ", rows from " << row0 << ", k0 " << k0;
                }
          }
        }
    }
}

// MmaDot: per 8-column block, ldmatrix.x{2,4}.trans of B (row-major K x N) with the lanes' rows at
// mmaBLaneOffset delivers b0, b1 of K step s in registers 2s, 2s + 1.
TEST(WarpMatrixVsBackend, NvptxBLoadsDeliverTheMmaBFragment) {
  for (int64_t N : {8, 16, 64, 128})
    for (uint32_t tiles : {2u, 4u}) {
      SCOPED_TRACE("N = " + std::to_string(N) + ", x" + std::to_string(tiles));
      StagedTile b(64, N, 2);
      for (int64_t col0 = 0; col0 < N; col0 += 8)
        for (int64_t k0 = 0; k0 + 8 * tiles <= 64; k0 += 8 * tiles) {
          std::array<uint64_t, kMatrixLanes> addr;
          for (uint32_t lane = 0; lane < kMatrixLanes; ++lane) {
            nv::MatrixCoord o = nv::mmaBLaneOffset(lane, tiles);
            addr[lane] = b.addressOf(k0 + o.row, col0 + o.col);
          }
          std::vector<uint32_t> regs(kMatrixLanes * tiles);
          executeLdMatrix(tiles, true, addr, kReadHost, regs);
          for (uint32_t step = 0; step < tiles / 2; ++step)
            for (uint32_t lane = 0; lane < kMatrixLanes; ++lane)
              for (uint32_t r = 0; r < 2; ++r)
                for (uint32_t h = 0; h < 2; ++h) {
                  MatrixPosition at = fragmentElement(kMmaM16N8K16_F16_F32, MmaOperand::B, lane, r, h);
                  ASSERT_EQ(partOf(regs[lane * tiles + 2 * step + r], h, 2),
                            b.valueOf(k0 + 16 * step + at.row, col0 + at.col))
                      << "lane " << lane << " b" << 2 * r + h << " of K step " << step << ", col0 " << col0;
                }
        }
    }
}

// MmaDot for s8 and tf32: B staged transposed (N x K); per 8-column block, ldmatrix.x{2,4} (no .trans) with the
// lanes' rows at mmaBTransposedLaneOffset delivers the two B registers of K step s in registers 2s, 2s + 1.
TEST(WarpMatrixVsBackend, NvptxTransposedBLoadsDeliverTheMmaBFragment) {
  for (const NvptxMma& mma : kNvptxMmas) {
    if (!nv::mmaStagesBTransposed(mma.elementBytes)) continue;
    const int64_t K = 256 / mma.elementBytes, stepK = nv::mmaStepK(mma.elementBytes);
    for (int64_t N : {8, 16, 64})
      for (uint32_t tiles : {2u, 4u}) {
        SCOPED_TRACE(std::to_string(mma.elementBytes) + "-byte elements, N = " + std::to_string(N) + ", x" +
                     std::to_string(tiles));
        StagedTile bt(N, K, mma.elementBytes);  // row n holds B[., n]
        for (int64_t col0 = 0; col0 < N; col0 += 8)
          for (int64_t k0 = 0; k0 < K; k0 += stepK * tiles / 2) {
            std::array<uint64_t, kMatrixLanes> addr;
            for (uint32_t lane = 0; lane < kMatrixLanes; ++lane) {
              nv::MatrixCoord o = nv::mmaBTransposedLaneOffset(lane, tiles, mma.elementBytes);
              addr[lane] = bt.addressOf(col0 + o.row, k0 + o.col);
            }
            std::vector<uint32_t> regs(kMatrixLanes * tiles);
            executeLdMatrix(tiles, false, addr, kReadHost, regs);
            for (MmaKind kind : mma.kinds) {
              ASSERT_EQ(mmaShape(kind).registersOf(MmaOperand::B), 2u);
              const uint32_t parts = static_cast<uint32_t>(4 / mma.elementBytes);
              for (uint32_t step = 0; step < tiles / 2; ++step)
                for (uint32_t lane = 0; lane < kMatrixLanes; ++lane)
                  for (uint32_t r = 0; r < 2; ++r)
                    for (uint32_t h = 0; h < parts; ++h) {
                      MatrixPosition at = fragmentElement(kind, MmaOperand::B, lane, r, h);  // (k, n)
                      ASSERT_EQ(partOf(regs[lane * tiles + 2 * step + r], h, mma.elementBytes),
                                bt.valueOf(col0 + at.col, k0 + stepK * step + at.row))
                          << mmaShape(kind).instruction << ": lane " << lane << " register " << r << " part " << h
                          << " of K step " << step << ", col0 " << col0 << ", k0 " << k0;
                    }
            }
          }
      }
  }
}

// The accumulator layout a layout policy gives a dot of these sizes and types (the real policy function).
struct DotTypes {
  const char* input = "f16";
  const char* accumulator = "f32";
  const char* precision = "ieee";
};
ThreadMap accumulatorMap(bool amdgpu, int64_t M, int64_t N, int64_t K, int warps, DotTypes types = {},
                         int matrixInstrSize = 0) {
  auto tile = [](int64_t rows, int64_t cols, const char* element) {
    return "tile<" + std::to_string(rows) + "x" + std::to_string(cols) + "x" + element + ">";
  };
  const std::string zero = std::string(types.input) == "i8" ? "0" : "0.0";
  const std::string accZero = std::string(types.accumulator) == "i32" ? "0" : "0.0";
  const std::string text = "func @k() {\n  %a = constant {value = " + zero + "} : " + tile(M, K, types.input) +
                           "\n  %b = constant {value = " + zero + "} : " + tile(K, N, types.input) +
                           "\n  %c = constant {value = " + accZero + "} : " + tile(M, N, types.accumulator) +
                           "\n  %d = dot %a, %b, %c {input_precision = \"" + types.precision +
                           "\"} : " + tile(M, N, types.accumulator) + "\n  return\n}\n";
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "dot.tir");
  const ir::Op* dot = nullptr;
  for (const auto& op : m->functions().at(0)->body()->ops())
    if (op->is(ir::OpKind::Dot)) dot = op.get();
  if (!dot) throw Error("no dot in the test kernel");
  transforms::PassOptions options;
  options.numWarps = warps;
  options.warpSize = amdgpu ? 64 : 32;
  options.matrixInstrSize = matrixInstrSize;
  std::optional<ir::Layout> layout =
      amdgpu ? amd::mfmaAccumulatorLayout(*dot, options) : nv::mmaAccumulatorLayout(*dot, options);
  if (!layout) throw Error("the policy gave this dot no tensor-core accumulator layout");
  return ThreadMap::build(*layout, {M, N}, "accumulator");
}

// For every warp, block and lane: the accumulator registers a backend's plan assigns to slot s of a block hold the
// element that the emulator's C/D fragment map of `kind` puts in register s of that lane, at the block's origin
// (the plan's register part plus the warp's part, as MmaDot / MfmaDot add them).
template <typename Plan>
void expectPlanMatchesFragment(const ThreadMap& acc, const Plan& plan, MmaKind kind) {
  const MmaShape& s = mmaShape(kind);
  for (int64_t w = 0; w < acc.numWarps; ++w) {
    Coords warpPart(2, 0);
    for (size_t j = 0; j < acc.warpBases.size(); ++j)
      if ((w >> j) & 1) warpPart = backends::xorCoords(warpPart, acc.warpBases[j]);
    for (const auto& f : plan.fragments)
      for (uint32_t lane = 0; lane < s.lanes; ++lane)
        for (uint32_t slot = 0; slot < s.registersOf(MmaOperand::C); ++slot) {
          MatrixPosition at = fragmentElement(kind, MmaOperand::C, lane, slot, 0);
          ASSERT_EQ(acc.coordsOf(f.regs[slot], w, lane),
                    (Coords{warpPart[0] + f.row + at.row, warpPart[1] + f.col + at.col}))
              << "warp " << w << " lane " << lane << " slot " << slot << " of the block at (" << f.row << ", "
              << f.col << ")";
        }
  }
}

TEST(WarpMatrixVsBackend, NvptxAccumulatorPlanMatchesTheMmaCFragment) {
  struct Case {
    MmaKind kind;
    DotTypes types;
  };
  for (const Case& c : {Case{kMmaM16N8K16_F16_F32, {}}, Case{kMmaM16N8K32_S8_S32, {"i8", "i32", "ieee"}},
                        Case{kMmaM16N8K8_TF32_F32, {"f32", "f32", "tf32"}}})
    for (auto [M, N, warps] : std::vector<std::array<int64_t, 3>>{{16, 8, 1}, {64, 64, 4}, {128, 128, 8}, {16, 16, 4}}) {
      SCOPED_TRACE(std::string(mmaShape(c.kind).instruction) + ", " + std::to_string(M) + "x" + std::to_string(N) +
                   ", " + std::to_string(warps) + " warps");
      ThreadMap acc = accumulatorMap(false, M, N, mmaShape(c.kind).k, static_cast<int>(warps), c.types);
      std::optional<nv::MmaAccumulatorPlan> plan = nv::planMmaAccumulator(acc);
      ASSERT_TRUE(plan);
      expectPlanMatchesFragment(acc, *plan, c.kind);
    }
}

// MfmaDot loads item v of a lane's operand vector from K index mfmaOperandOrigin(lane, E).k + v, E =
// mfmaOperandElements(K) items in one load: a <4 x half> (two registers, item v in register v / 2, half v % 2), or
// the i8 bytes in an i64 (gfx942) or i32 (gfx90a): item v in register v / 4, byte v % 4.
TEST(WarpMatrixVsBackend, AmdgpuOperandOriginsMatchTheMfmaFragments) {
  for (MmaKind kind : {kMfmaF32_16x16x16F16, kMfmaF32_16x16x16BF16, kMfmaI32_16x16x32I8, kMfmaI32_16x16x16I8,
                       kMfmaF32_32x32x8F16, kMfmaF32_32x32x8BF16}) {
    SCOPED_TRACE(mmaShape(kind).instruction);
    const int64_t block = mmaShape(kind).m;
    const uint32_t E = static_cast<uint32_t>(amd::mfmaOperandElements(mmaShape(kind).k, block));
    const uint32_t perRegister = kind == kMfmaI32_16x16x32I8 || kind == kMfmaI32_16x16x16I8 ? 4 : 2;
    for (uint32_t lane = 0; lane < 64; ++lane) {
      amd::MfmaOperandOrigin o = amd::mfmaOperandOrigin(lane, E, block);
      for (uint32_t v = 0; v < E; ++v) {
        const uint32_t outer = static_cast<uint32_t>(o.outer), k = static_cast<uint32_t>(o.k) + v;
        EXPECT_EQ(fragmentElement(kind, MmaOperand::A, lane, v / perRegister, v % perRegister),
                  (MatrixPosition{outer, k}))
            << "lane " << lane << " item " << v;
        EXPECT_EQ(fragmentElement(kind, MmaOperand::B, lane, v / perRegister, v % perRegister),
                  (MatrixPosition{k, outer}))
            << "lane " << lane << " item " << v;
      }
    }
  }
}

TEST(WarpMatrixVsBackend, AmdgpuAccumulatorPlanMatchesTheMfmaDFragment) {
  for (auto [M, N, warps] : std::vector<std::array<int64_t, 3>>{{16, 16, 1}, {64, 64, 4}, {128, 64, 8}, {16, 64, 8}}) {
    SCOPED_TRACE(std::to_string(M) + "x" + std::to_string(N) + ", " + std::to_string(warps) + " waves");
    ThreadMap acc = accumulatorMap(true, M, N, 16, static_cast<int>(warps));
    std::optional<amd::MfmaAccumulatorPlan> plan = amd::planMfmaAccumulator(acc);
    ASSERT_TRUE(plan);
    expectPlanMatchesFragment(acc, *plan, kMfmaF32_16x16x16F16);
  }
}

// The policy's 32x32 layout (matrixInstrSize 32) against v_mfma_f32_32x32x8's 16 C/D registers per lane.
TEST(WarpMatrixVsBackend, AmdgpuLargeBlockPlanMatchesTheMfmaDFragment) {
  for (auto [M, N, warps] : std::vector<std::array<int64_t, 3>>{{32, 32, 1}, {64, 128, 4}, {128, 256, 8}}) {
    SCOPED_TRACE(std::to_string(M) + "x" + std::to_string(N) + ", " + std::to_string(warps) + " waves");
    ThreadMap acc = accumulatorMap(true, M, N, 16, static_cast<int>(warps), {}, /*matrixInstrSize=*/32);
    std::optional<amd::MfmaAccumulatorPlan> plan = amd::planMfmaAccumulator(acc);
    ASSERT_TRUE(plan);
    ASSERT_EQ(plan->block, 32);
    expectPlanMatchesFragment(acc, *plan, kMfmaF32_32x32x8F16);
  }
}

}  // namespace
}  // namespace tessera::sim
