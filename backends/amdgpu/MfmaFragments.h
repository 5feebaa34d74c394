// The index arithmetic of the MFMA lowering of `dot` on AMD GPUs (wave64), as pure functions (no LLVM), so it can
// be unit-tested on the host against AMD's documented register layouts. MfmaDot.cpp emits exactly this arithmetic.
//
// Instructions (MfmaLayoutPolicy.h, mfmaTiles): v_mfma_f32_16x16x16f16 and its bf16 twin v_mfma_f32_16x16x16bf16_1k
// (gfx90a and gfx942), and for 8-bit integers v_mfma_i32_16x16x32_i8 (gfx942) or v_mfma_i32_16x16x16i8 (gfx90a).
// One wavefront computes D = A * B + C for a 16x16 block with K = 16 (32 for gfx942's i8). The four groups of 16
// lanes split K, so each lane holds E = K / 4 consecutive K elements of each operand (4, or 8 for gfx942's i8). Per
// AMD's register layout for these instructions, lane l holds
//   A: the E elements A[l % 16][E * (l / 16) + v], v = 0..E-1 (one vector: 8 bytes, 4 for gfx90a's i8),
//   B: the E elements B[E * (l / 16) + v][l % 16],
//   C/D: the 4 values D[4 * (l / 16) + v][l % 16], v = 0..3 (f32, or i32 for i8).
//
// Strategy: A (M x K) lies in LDS as M rows of K and B (K x N) as N rows of K (its columns), K-contiguous either
// way, so both operand vectors are E consecutive elements: one LDS load each per block and K step. The rows are
// XOR-swizzled in 8-byte chunks (mfmaSwizzleFor) so those loads hit no bank twice. The operands are either in
// shared buffers that async copies filled in that layout (the layout policy asks for it) or staged by the dot
// itself in its LDS scratch (each inside the byte range the portable lowering uses). The accumulator stays in its
// distributed (blocked) layout; planMfmaAccumulator finds its 16x16 blocks.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/common/ThreadMap.h"

namespace tessera::backends::amdgpu {

inline constexpr int64_t kMfmaM = 16, kMfmaN = 16;  // the default block: v_mfma_*_16x16x*
inline constexpr int64_t kMfmaLargeBlock = 32;  // v_mfma_f32_32x32x8{f16,bf16_1k}, by request (matrixInstrSize)
inline constexpr int64_t kMfmaWaveSize = 64;
inline constexpr int64_t kMfmaChunkBytes = 8;  // the LDS swizzle's unit

// The elements of each operand a lane holds for an instruction of K `instructionK` over `block` x `block` blocks:
// the wave's 64 lanes hold block x instructionK elements, block lanes per K group: K / 4 for 16x16 (4 groups), K / 2
// for 32x32 (2 groups).
constexpr int64_t mfmaOperandElements(int64_t instructionK, int64_t block = kMfmaM) {
  return instructionK * block / kMfmaWaveSize;
}
// The C/D registers of one block per lane: 4 (16x16), 16 (32x32).
constexpr int64_t mfmaAccumulatorRegisters(int64_t block) { return block * block / kMfmaWaveSize; }

// Where lane `lane` reads its operand vector of `elements` (mfmaOperandElements) within a block x block block at K
// step origin 0: A row and first K index; B column and first K index (the vector covers K indices first .. first +
// elements - 1). Lane l reads row (column) l % block and K from elements * (l / block).
struct MfmaOperandOrigin {
  int64_t outer = 0;  // A: row, B: column
  int64_t k = 0;      // first K index
  bool operator==(const MfmaOperandOrigin&) const = default;
};
MfmaOperandOrigin mfmaOperandOrigin(int64_t lane, int64_t elements, int64_t block = kMfmaM);

// The offset along the fragment's register dimension (D's rows; columns when transposed) of C/D register `slot` of
// a lane in the K group 0 (lanes 0 .. block - 1): slot for 16x16; 8 (slot / 4) + slot % 4 for 32x32, whose lanes
// of K group 1 hold the 4 rows after each such run of 4.
constexpr int64_t mfmaAccumulatorOffset(int64_t block, int64_t slot) {
  return block == kMfmaLargeBlock ? 8 * (slot / 4) + slot % 4 : slot;
}

// The XOR swizzle of the operands' LDS rows (K elements of `elementBytes` each; A's rows, B's columns): 8-byte
// chunks, the chunk index XOR-ed with (row / perPhase) % maxPhase. A ds_read_b64 is served 16 lanes at a time, and
// those 16 lanes read one chunk of 16 consecutive rows (with 32x32 blocks too: lanes 0-15 and 16-31 read rows 0-15
// and 16-31 of the same chunk); 128 bytes (16 chunks) span the 32 banks, so rows shorter than
// that share a 128-byte line (perPhase rows per phase) and the phases must make the 16 chunks land in 16
// distinct 8-byte bank pairs. A ds_read_b32 (gfx90a's i8 vectors) is served 32 lanes at a time: the two halves of
// the same chunks, so the same swizzle serves it. The XOR stays inside the row: the phase is below the largest
// power of two dividing the row's chunks. The #shared layout with vec = one chunk's elements and these phases
// (mfmaOperandLdsLayout).
struct MfmaSwizzle {
  int64_t perPhase = 1;
  int64_t maxPhase = 1;
};
MfmaSwizzle mfmaSwizzleFor(int64_t K, int64_t elementBytes);

// ---- the accumulator: which registers of each thread form which MFMA C/D fragments.
//
// Transposed: computing D^T = B^T A^T instead, by handing the instruction B's fragment as its A operand and A's as
// its B (lane l holds B^T[l % 16][4 (l / 16) + v] = B[4 (l / 16) + v][l % 16], B's own fragment, and likewise for
// A), leaves lane l with D[l % 16][4 (l / 16) + v]: a row per lane and 4 consecutive columns, which is exactly the A
// fragment's arrangement. Chained dots (attention's S = Q K^T, then P V) take that layout, so the first result,
// after element-wise ops and a cast, is the second dot's A operand in registers, and the second accumulator shares
// the layout (MfmaLayoutPolicy.h). With 32x32 blocks alike: lane l holds D[l % 32][8 j + 4 (l / 32) + v], which
// are A's 32x32x8 vectors of K steps j = 0..3 (A[l % 32][4 (l / 32) + v] of each step of 8).
struct MfmaFragment {
  int64_t row = 0, col = 0;   // register part of the block's origin (the warp part is added per thread)
  std::vector<int64_t> regs;  // the accumulator registers holding the lane's D elements, slot by slot (4 or 16)
};
struct MfmaAccumulatorPlan {
  int64_t block = kMfmaM;                        // 16 (16x16 instructions) or 32 (32x32x8)
  bool transposed = false;                       // D^T's fragments: registers run along the columns
  std::vector<MfmaFragment> fragments;
  std::vector<std::pair<int64_t, int>> regSlot;  // per accumulator register: (fragment, slot)
  std::vector<int64_t> fragmentRows;             // distinct MfmaFragment::row values (A loads)
  std::vector<int64_t> fragmentCols;             // distinct MfmaFragment::col values (B loads)
};
// The plan when `acc` (the accumulator's thread map, rank 2, wave64) has the MFMA C/D fragment's shape: for 16x16
// blocks, lane bits 0-3 select columns 1, 2, 4, 8 and lane bits 4-5 rows 4, 8 of each block, and each thread's
// registers cover row offsets 0..3 of its blocks; for 32x32 blocks, lane bits 0-4 select columns 1 .. 16 and lane
// bit 5 row 4, and the registers cover row offsets 8 j + 0..3 (j = 0..3); warp bits only select whole blocks (or
// replicate). Or the transposed shape (rows and columns exchanged). nullopt otherwise. Over an A operand ([M, K])
// in the transposed 16x16 shape, the fragments are A's MFMA operand vectors (`row` its M origin, `col` its K origin).
std::optional<MfmaAccumulatorPlan> planMfmaAccumulator(const ThreadMap& acc);

}  // namespace tessera::backends::amdgpu
