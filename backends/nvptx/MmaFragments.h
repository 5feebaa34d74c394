// The index arithmetic of the mma.sync lowering of `dot`, as pure functions (no LLVM), so it can be unit-tested on
// the host against the PTX ISA fragment tables. MmaDot.cpp emits exactly this arithmetic.
//
// Instructions: m16n8k16 for f16/bf16, m16n8k32 .s8 for i8 (i32 accumulators), m16n8k8 .tf32 for f32 dots that
// allow tf32. Each consumes 32 bytes of K per row of A and per column of B, and in byte terms their A fragments
// agree: lane (g, t) = (lane / 4, lane % 4) holds bytes 4t..4t+3 of rows g and g + 8 of each 16-byte half of the
// 16 x 32-byte block, in registers (row g, half 0), (g + 8, 0), (g, 1), (g + 8, 1). That is what ldmatrix.x4 (no
// .trans) delivers from four 8x16-byte tiles, whatever the element size. B differs: for 16-bit inputs b0/b1 pair
// two K rows of one column (ldmatrix.trans of row-major B), while for s8 and tf32 a register holds 4 bytes of K of
// one column (column g, bytes 4t..4t+3 of each 16-byte half), which ldmatrix.trans cannot make (it moves 16-bit
// elements), but plain ldmatrix can from B stored transposed (N x K).
//
// Strategy: A (M x K) is staged row-major, B (K x N) row-major for 16-bit inputs and transposed (N x K) for 8- and
// 32-bit ones, in the dot's shared-memory scratch with 16-byte chunks XOR-swizzled per row (mmaSwizzledIndex). Per
// K step, each warp loads an A fragment with one ldmatrix.x4 per 16-row block and a B fragment per 8-column block
// with ldmatrix.x4 covering two K steps when K allows, else x2 (.trans for row-major B), then issues one mma per
// 16x8 accumulator block. The accumulator stays in its distributed (blocked) layout; planMmaAccumulator finds its
// 16x8 blocks.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "backends/common/ThreadMap.h"

namespace tessera::backends::nvptx {

inline constexpr int64_t kMmaM = 16, kMmaN = 8;
inline constexpr int64_t kMmaStepBytes = 32;   // K bytes per mma, per row of A and column of B
inline constexpr int64_t kMmaChunkBytes = 16;  // an ldmatrix row; the unit of the swizzle
inline constexpr int64_t kMmaWarpSize = 32;
// The K extent of one mma for elements of `elementBytes` (2: m16n8k16, 1: m16n8k32, 4: m16n8k8).
inline constexpr int64_t mmaStepK(int64_t elementBytes) { return kMmaStepBytes / elementBytes; }

struct MatrixCoord {
  int64_t row = 0;
  int64_t col = 0;
  bool operator==(const MatrixCoord&) const = default;
};

// ---- shared-memory staging: rows of `rowLength` elements; the 16-byte chunk c of row r is stored at chunk
// c ^ ((r / perPhase) % maxPhase), so the 8 rows one ldmatrix phase reads hit 8 distinct 16-byte bank groups. The
// permutation stays inside each row: the buffer's size is that of the unswizzled one.
struct MmaSwizzle {
  int64_t rowLength = 0;      // elements; a multiple of chunkElements
  int64_t chunkElements = 8;  // elements per 16-byte chunk
  int64_t perPhase = 1;
  int64_t maxPhase = 1;
};
MmaSwizzle mmaSwizzleFor(int64_t rowLength, int64_t elementBytes);
int64_t mmaSwizzledIndex(const MmaSwizzle& s, int64_t row, int64_t col);  // element index
// The index of (rowVar + row, colVar + col) as mmaSwizzledIndex(s, rowVar, colVar + baseCol) + offset, for every
// rowVar >= 0 and every colVar >= 0 whose chunk (colVar / chunkElements) has bits only in `colVarChunkBits`. Then
// ldmatrix addresses that differ by constants share one per-thread base and fold the rest into the instruction.
// It holds when the row offset keeps the phase (a multiple of perPhase * maxPhase rows) and the column offset is
// whole chunks whose bits are clear in colVarChunkBits: the XOR then treats the sum as an OR, its chunk bits at or
// above maxPhase are out of the phase's reach and add (offset), and the ones below it select the base (baseCol).
// nullopt where it does not hold.
struct MmaSwizzleSplit {
  int64_t baseCol = 0;  // elements: whole chunks below maxPhase
  int64_t offset = 0;   // elements
  bool operator==(const MmaSwizzleSplit&) const = default;
};
std::optional<MmaSwizzleSplit> mmaSplitSwizzledIndex(const MmaSwizzle& s, int64_t row, int64_t col,
                                                     int64_t colVarChunkBits);

// ---- the rows of a 16-row block: which row of the block fragment row f (0..15: groupID g, plus 8 for c2/c3 and
// a2/a3) stands for, the XOR of rowBases[i] over the set bits i of f. The mma does not care which row is which as
// long as A and the accumulator agree, so accumulator layouts may permute a block's rows (MmaLayoutPolicy.h).
using MmaRowBases = std::array<int64_t, 4>;
inline constexpr MmaRowBases kMmaIdentityRows = {1, 2, 4, 8};
int64_t mmaBlockRow(const MmaRowBases& rowBases, int64_t fragmentRow);

// ---- ldmatrix: lane l supplies the address of row (l % 8) of 8 x 16-byte tile (l / 8) % tiles. These are the
// row/column offsets in elements (relative to the fragment's origin) each lane supplies.
// A, ldmatrix.x4 of a 16-row x 32-byte block: tiles (0,0) (8,0) (0,16B) (8,16B), which deliver the 4 registers of
// the mma A fragment for every element size (16-bit: a0..a7 in pairs; s8: a0..a15 in fours; tf32: a0..a3). The
// row is the block row of fragment row (l % 8) + 8 * ((l / 8) % 2).
MatrixCoord mmaALaneOffset(int64_t lane, int64_t elementBytes, const MmaRowBases& rowBases = kMmaIdentityRows);
// B of 16-bit elements (row-major K x N), ldmatrix.x{tiles}.trans of a (8 * tiles) x 8 block: tile q covers K rows
// 8q..8q+7, so registers (2s, 2s+1) are b0, b1 of K step s.
MatrixCoord mmaBLaneOffset(int64_t lane, int64_t tiles);
// B of 8- or 32-bit elements staged transposed (N x K), ldmatrix.x{tiles} of an 8-row (N) x 16 * tiles-byte (K)
// block: tile q covers K bytes 16q..16q+15, so registers (2s, 2s+1) are the two B registers of K step s. The
// offset is (n, k).
MatrixCoord mmaBTransposedLaneOffset(int64_t lane, int64_t tiles, int64_t elementBytes);
// Whether B is staged transposed for this element size (8- and 32-bit) rather than row-major (16-bit).
inline constexpr bool mmaStagesBTransposed(int64_t elementBytes) { return elementBytes != 2; }

// ---- the accumulator: which registers of each thread form which mma C/D fragments.
struct MmaFragment {
  int64_t row = 0, col = 0;  // register part of the 16x8 block's origin (the warp part is added per thread)
  int64_t regs[4] = {0, 0, 0, 0};  // accumulator registers holding c0..c3
};
struct MmaAccumulatorPlan {
  MmaRowBases rowBases = kMmaIdentityRows;  // the block rows of the fragment rows (lanes' groupID, then c2/c3)
  std::vector<MmaFragment> fragments;
  std::vector<std::pair<int64_t, int>> regSlot;  // per accumulator register: (fragment, slot 0..3)
  std::vector<int64_t> fragmentRows;             // distinct MmaFragment::row values (A loads)
  std::vector<int64_t> fragmentCols;             // distinct MmaFragment::col values (B loads)
};
// The plan when `acc` (the accumulator's thread map, rank 2) has the mma C fragment's shape up to a permutation of
// each 16-row block's rows: within each 16x8 block, lane bits 0-1 step the column by 2 and 4 and lane bits 2-4 the
// row by rowBases[0..2], each thread's registers covering offsets (0,0) (0,1) (h,0) (h,1) (h = rowBases[3]) of its
// blocks, and warp bits only selecting whole blocks (or replicating). nullopt otherwise.
std::optional<MmaAccumulatorPlan> planMmaAccumulator(const ThreadMap& acc);

// The 8x8 tiles of B each ldmatrix loads (mmaBLaneOffset, mmaBTransposedLaneOffset), for a reduction of K in
// steps of stepK: 4 (.x4: two K steps of one fragment column) when K allows and the warp has no more fragment
// columns than rows, else 2 (.x2: one K step). Two K steps of B are 4 registers per column, half of them held a
// step before their mma: with more columns than rows (attention's dots: one row and 8 or 16 columns a warp, 32 or
// 64 B registers) they outweigh A's 4 per row and step, and ptxas spilled (sm_80, 128x128, d 128: 24 bytes,
// causal) where one K step per load spills nothing and takes 30 to 55 registers fewer elsewhere.
int64_t mmaBLoadTiles(const MmaAccumulatorPlan& plan, int64_t K, int64_t stepK);

// ---- A straight from registers (16-bit inputs): when the A operand's layout (`a`, over M x K) holds, in every
// thread, the elements of the m16n8k16 A fragments that the accumulator's plan needs (rows permuted as its
// rowBases say, the warps' rows those of the accumulator) at register indices that are the same in every thread,
// the A register of element e (a0..a7) of K step s for fragment row plan.fragmentRows[i]: entry (i * steps + s) * 8
// + e, steps = K / 16. Decided on the linear forms (ir::planConversion finds a register permutation); nullopt
// otherwise.
std::optional<std::vector<int64_t>> planMmaOperandARegisters(const ThreadMap& a, const ThreadMap& acc,
                                                             const MmaAccumulatorPlan& plan);

}  // namespace tessera::backends::nvptx
