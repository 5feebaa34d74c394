// planMatrixTransfers (backends/common/MatrixTransfers.h): which exchange sides ldmatrix / stmatrix can move, and
// the registers and row addresses of each instruction, against the m8n8 fragment as the PTX ISA defines it
// (register m of lane l: row l / 4, columns 2 (l % 4) and + 1 of matrix m; lane 8m + r gives row r's address).
#include <gtest/gtest.h>

#include "backends/common/MatrixTransfers.h"

namespace tessera::backends {
namespace {

// A side over a row-major buffer (rows of `pitch` elements), every register in round 0.
MatrixTransferSide sideOf(std::vector<int64_t> shape, int64_t pitch, std::vector<Coords> lanes,
                          std::vector<Coords> warps, const std::vector<Coords>& registerBases) {
  MatrixTransferSide s{shape, pitch, 2, std::move(lanes), std::move(warps), {}, {}, {}};
  const size_t regs = size_t{1} << registerBases.size();
  for (size_t r = 0; r < regs; ++r) {
    Coords c(shape.size(), 0);
    for (size_t k = 0; k < registerBases.size(); ++k)
      if (r >> k & 1) c = xorCoords(c, registerBases[k]);
    s.regParts.push_back(c);
    s.rounds.push_back(0);
  }
  return s;
}

const std::vector<Coords> kMatrixLanes = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};

// Where lane `lane`'s word `m` of an instruction lies, as the plan says, against where the ISA puts it.
TEST(MatrixTransfers, WgmmaAccumulatorIsFourMatricesPerInstruction) {
  // 64x64 f16 on 4 warps (the wgmma accumulator), rows padded to 72 elements.
  const std::vector<Coords> registers = {{0, 1}, {8, 0}, {0, 8}, {0, 16}, {0, 32}};
  MatrixTransferSide side = sideOf({64, 64}, 72, kMatrixLanes, {{16, 0}, {32, 0}}, registers);
  std::optional<MatrixTransferPlan> plan = planMatrixTransfers(side);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->instructions.size(), 4u);  // 32 registers = 16 words = 4 x 4
  // The row addresses: lane bits 0-2 pick the matrix row (the lanes' rows 1, 2, 4), bits 3-4 the matrix.
  EXPECT_EQ(plan->addressLaneBases, (std::vector<Coords>{{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 8}}));
  for (const MatrixInstruction& inst : plan->instructions) {
    ASSERT_EQ(inst.words.size(), 4u);
    for (size_t m = 0; m < 4; ++m) {
      auto [low, high] = inst.words[m];
      EXPECT_EQ(high, low + 1) << "the pair is register bit 0";
      // Matrix m of the ISA's fragment: row (lane / 4) + 8 (m & 1), columns 8 (m >> 1) + 2 (lane % 4), + 1, in
      // the instruction's block: the registers' coordinates at thread 0 must be that block's origin.
      const Coords origin = side.regParts[inst.firstRegister];
      EXPECT_EQ(side.regParts[low], xorCoords(origin, Coords{int64_t(8 * (m & 1)), int64_t(8 * (m >> 1))}));
      EXPECT_EQ(side.regParts[high], xorCoords(side.regParts[low], Coords{0, 1}));
    }
  }
}

TEST(MatrixTransfers, FewerRegistersTakeFewerMatrices) {
  EXPECT_EQ(planMatrixTransfers(sideOf({8, 8}, 8, kMatrixLanes, {}, {{0, 1}}))->instructions[0].words.size(), 1u);
  EXPECT_EQ(planMatrixTransfers(sideOf({16, 8}, 8, kMatrixLanes, {}, {{0, 1}, {8, 0}}))->instructions[0].words.size(),
            2u);
  // A third dimension (batches along warps) is one more row coordinate.
  std::optional<MatrixTransferPlan> batched =
      planMatrixTransfers(sideOf({2, 8, 16}, 16, {{0, 0, 2}, {0, 0, 4}, {0, 1, 0}, {0, 2, 0}, {0, 4, 0}}, {{1, 0, 0}},
                                 {{0, 0, 1}, {0, 0, 8}}));
  ASSERT_TRUE(batched);
  EXPECT_EQ(batched->instructions.size(), 1u);
  EXPECT_EQ(batched->instructions[0].words.size(), 2u);
}

// Coordinates are XORs of bases: a warp base on a lane's row permutes the rows each warp's matrices start at,
// and the register origin of a tile placed in a larger buffer (cat, join) moves every address.
TEST(MatrixTransfers, BasesCombineAsXors) {
  std::optional<MatrixTransferPlan> permuted =
      planMatrixTransfers(sideOf({16, 16}, 24, kMatrixLanes, {{1, 0}}, {{0, 1}, {8, 0}, {0, 8}}));
  ASSERT_TRUE(permuted);
  EXPECT_EQ(permuted->instructions.size(), 1u);
  MatrixTransferSide placed = sideOf({32, 16}, 16, kMatrixLanes, {}, {{0, 1}, {8, 0}});
  for (Coords& c : placed.regParts) c = xorCoords(c, Coords{16, 8});
  std::optional<MatrixTransferPlan> plan = planMatrixTransfers(placed);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->instructions[0].firstRegister, 0);
  EXPECT_EQ(plan->instructions[0].words, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {2, 3}}));
  // An origin inside a 16-byte row cannot be.
  for (Coords& c : placed.regParts) c = xorCoords(c, Coords{0, 4});
  EXPECT_FALSE(planMatrixTransfers(placed));
}

TEST(MatrixTransfers, OtherLayoutsAreNotMatrices) {
  const std::vector<Coords> registers = {{0, 1}, {8, 0}};
  ASSERT_TRUE(planMatrixTransfers(sideOf({16, 8}, 8, kMatrixLanes, {}, registers)));
  // f32 elements.
  MatrixTransferSide f32 = sideOf({16, 8}, 8, kMatrixLanes, {}, registers);
  f32.elementBytes = 4;
  EXPECT_FALSE(planMatrixTransfers(f32));
  // Four consecutive columns a thread (lane bit 0 steps 4 columns).
  EXPECT_FALSE(planMatrixTransfers(sideOf({16, 16}, 16, {{0, 4}, {0, 8}, {1, 0}, {2, 0}, {4, 0}}, {}, {{0, 1}, {0, 2}, {8, 0}})));
  // No register pair (one element a thread along the columns).
  EXPECT_FALSE(planMatrixTransfers(sideOf({16, 8}, 8, kMatrixLanes, {}, {{8, 0}})));
  // A row pitch that misaligns rows (8 columns + 4 elements of pad: 24 bytes).
  EXPECT_FALSE(planMatrixTransfers(sideOf({16, 8}, 12, kMatrixLanes, {}, registers)));
  // A warp base inside a 16-byte row, a register base likewise.
  EXPECT_FALSE(planMatrixTransfers(sideOf({8, 16}, 16, kMatrixLanes, {{0, 4}}, {{0, 1}, {0, 8}})));
  EXPECT_FALSE(planMatrixTransfers(sideOf({16, 8}, 8, kMatrixLanes, {}, {{0, 1}, {8, 4}})));
  // A writing side with a register that duplicates another (not its owner).
  MatrixTransferSide duplicated = sideOf({16, 8}, 8, kMatrixLanes, {}, registers);
  duplicated.owners = {true, true, false, true};
  EXPECT_FALSE(planMatrixTransfers(duplicated));
  // A register whose round the lowering only knows per thread.
  MatrixTransferSide unknownRound = sideOf({16, 8}, 8, kMatrixLanes, {}, registers);
  unknownRound.rounds[3].reset();
  EXPECT_FALSE(planMatrixTransfers(unknownRound));
  // Registers of one instruction in different rounds.
  MatrixTransferSide split = sideOf({16, 8}, 8, kMatrixLanes, {}, registers);
  split.rounds[2] = split.rounds[3] = 1;
  EXPECT_FALSE(planMatrixTransfers(split));
}

}  // namespace
}  // namespace tessera::backends
