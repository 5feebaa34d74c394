// Whether one side of a convert_layout's shared-memory exchange can move its registers with warp-wide 8 x 8 matrix
// instructions (ldmatrix to read, stmatrix to write, LoweringHooks::loadMatrices / storeMatrices), and which
// registers each instruction moves.
//
// A side qualifies when its layout, seen in the buffer, is made of such matrices: 16-bit elements; lane bits 0
// and 1 step the column by 2 and 4 and a register bit (the pair) by 1, so each lane's 32-bit word is two neighbours
// and 4 lanes cover 8 columns; lane bits 2-4, the warp bits, the other register bits and the register origin keep
// the column's low 3 bits 0, so each row of a matrix is 16 contiguous, aligned bytes of the buffer (a row pitch of
// 16-byte multiples; a swizzle moves whole 16-byte chunks). Up to two further register bits choose the matrix
// (x2, x4); the rest choose the instruction. The mma.sync and wgmma accumulators of 16-bit elements (the attention
// output, an f16 epilogue) and the mma.sync A operand are of this kind.
//
// Lane l gives the address of row l % 8 of matrix l / 8, which lane 4 (l % 8) holds in that matrix's word: the
// coordinates of a thread whose lane bases are the side's lane bases 2-4 and then the two matrices' register bases
// (`addressLaneBases`, with the side's warp bases), XOR the instruction's first register's.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/common/ThreadMap.h"

namespace tessera::backends {

struct MatrixTransferSide {
  std::vector<int64_t> shape;   // the exchange buffer's
  int64_t pitchElements = 0;    // of a buffer row (the last dimension and its pad)
  int64_t elementBytes = 0;
  std::vector<Coords> laneBases, warpBases;  // the side's thread bases in buffer coordinates
  std::vector<Coords> regParts;              // per register: its buffer coordinates in thread (0, 0)
  std::vector<std::optional<int64_t>> rounds;  // per register: its exchange round, where known at compile time
  std::vector<bool> owners;                  // per register; empty: every register may take part (a reading side)
};

struct MatrixInstruction {
  int64_t round = 0;
  int64_t firstRegister = 0;  // the low half of matrix 0's word: row addresses are relative to its element
  std::vector<std::pair<int64_t, int64_t>> words;  // per matrix (1, 2 or 4): the registers of its low, high half
};

struct MatrixTransferPlan {
  std::vector<Coords> addressLaneBases;  // the 5 lane bases of the thread whose element is a lane's row address
  std::vector<MatrixInstruction> instructions;
};

// The plan for `side`, or nothing when its layout is not made of 8 x 8 matrices of 16-bit elements.
std::optional<MatrixTransferPlan> planMatrixTransfers(const MatrixTransferSide& side);

}  // namespace tessera::backends
