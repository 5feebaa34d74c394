// The index arithmetic of the mma.sync m16n8k16 lowering of `dot`, as pure functions (no LLVM), so it can be
// unit-tested on the host against the PTX ISA fragment tables. MmaDot.cpp emits exactly this arithmetic.
//
// Strategy: A (M x K) and B (K x N), 16-bit elements, are staged row-major in the dot's shared-memory scratch
// with 16-byte chunks XOR-swizzled per row (mmaSwizzledIndex). Per 16-wide K step, each warp loads an A
// fragment with one ldmatrix.x4 per 16-row block and a B fragment with ldmatrix.trans (x4 covering two K steps
// when K % 32 == 0, else x2) per 8-column block, then issues one mma per 16x8 accumulator block. The
// accumulator stays in its distributed (blocked) layout; planMmaAccumulator finds its 16x8 blocks.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/common/ThreadMap.h"

namespace tessera::backends::nvptx {

inline constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16;
inline constexpr int64_t kMmaWarpSize = 32;

struct MatrixCoord {
  int64_t row = 0;
  int64_t col = 0;
  bool operator==(const MatrixCoord&) const = default;
};

// ---- shared-memory staging: rows of `rowLength` 16-bit elements; the 8-element (16-byte) chunk c of row r is
// stored at chunk c ^ ((r / perPhase) % maxPhase), so the 8 rows one ldmatrix phase reads hit 8 distinct 16-byte
// bank groups. The permutation stays inside each row: the buffer's size is that of the unswizzled one.
struct MmaSwizzle {
  int64_t rowLength = 0;  // elements; a multiple of 8
  int64_t perPhase = 1;
  int64_t maxPhase = 1;
};
inline constexpr int64_t kMmaChunkElements = 8;
MmaSwizzle mmaSwizzleFor(int64_t rowLength);
int64_t mmaSwizzledIndex(const MmaSwizzle& s, int64_t row, int64_t col);  // element index

// ---- ldmatrix: lane l supplies the address of row (l % 8) of 8x8 tile (l / 8) % tiles. These are the row/column
// offsets (relative to the fragment's origin) each lane supplies.
// A, ldmatrix.x4 of a 16x16 block: tiles (0,0) (8,0) (0,8) (8,8), which deliver registers a0..a3 of the mma A
// fragment (a0: rows 0-7 cols 0-7, a1: rows 8-15, a2: cols 8-15, a3: both).
MatrixCoord mmaALaneOffset(int64_t lane);
// B (row-major K x N), ldmatrix.x{tiles}.trans of a (8 * tiles) x 8 block: tile q covers K rows 8q..8q+7, so
// registers (2s, 2s+1) are b0, b1 of K step s.
MatrixCoord mmaBLaneOffset(int64_t lane, int64_t tiles);

// ---- the accumulator: which registers of each thread form which mma C/D fragments.
struct MmaFragment {
  int64_t row = 0, col = 0;  // register part of the 16x8 block's origin (the warp part is added per thread)
  int64_t regs[4] = {0, 0, 0, 0};  // accumulator registers holding c0..c3
};
struct MmaAccumulatorPlan {
  std::vector<MmaFragment> fragments;
  std::vector<std::pair<int64_t, int>> regSlot;  // per accumulator register: (fragment, slot 0..3)
  std::vector<int64_t> fragmentRows;             // distinct MmaFragment::row values (A loads)
  std::vector<int64_t> fragmentCols;             // distinct MmaFragment::col values (B loads)
};
// The plan when `acc` (the accumulator's thread map, rank 2) has the mma C fragment's shape: lanes spread as
// (lane / 4, 2 * (lane % 4)) within each 16x8 block, each thread's registers covering offsets (0,0) (0,1) (8,0)
// (8,1) of its blocks, and warp bits only selecting whole blocks (or replicating). nullopt otherwise.
std::optional<MmaAccumulatorPlan> planMmaAccumulator(const ThreadMap& acc);

}  // namespace tessera::backends::nvptx
