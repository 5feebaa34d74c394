// What wgmma.mma_async computes, as the PTX ISA defines it (9.7.15: warpgroup level matrix multiply-accumulate),
// written from the document and sharing nothing with the backend (backends/nvptx/MmaLinearLayouts.*,
// WgmmaAsm.*): the shared-memory matrix descriptor, the canonical K-major and MN-major operand layouts with their
// swizzle modes, the accumulator fragment of the 128 threads of a warpgroup, and the product.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "jit/sim/SimABI.h"
#include "jit/sim/runtime/WarpMatrix.h"

namespace tessera::sim {

inline constexpr uint32_t kWarpgroupThreads = 128;
inline constexpr uint32_t kWgmmaM = 64;
// The instruction's K for an input format: each row of A and B spans 32 bytes of K (16 f16/bf16, 32 e4m3/e5m2).
uint32_t wgmmaK(MatrixElement input);

// The 64-bit matrix descriptor: byte quantities as the descriptor encodes them (fields >> 4 scaled back).
struct MatrixDescriptor {
  uint32_t startAddress = 0;       // bits 0-13: shared address >> 4
  uint32_t leadingByteOffset = 0;  // bits 16-29, >> 4
  uint32_t strideByteOffset = 0;   // bits 32-45, >> 4
  uint32_t baseOffset = 0;         // bits 49-51: the swizzle pattern's phase at the start address
  uint32_t swizzleBytes = 0;       // bits 62-63: 0 none (interleave), 1: 128, 2: 64, 3: 32
};
MatrixDescriptor decodeMatrixDescriptor(uint64_t bits);

// One operand of an m64nNkK wgmma in shared memory: `rows` x K elements along (M or N) x K, K-major (each row's K
// elements in the rows of two core matrices, 16 bytes each) or MN-major (transposed: runs of the M/N index
// contiguous; 16-bit inputs only).
struct WgmmaOperand {
  MatrixDescriptor descriptor;
  bool mnMajor = false;        // imm-trans-a / imm-trans-b
  uint32_t rows = 0;           // 64 for A, N for B
  uint32_t elementBytes = 2;   // 2 (K = 16) or 1 (K = 32)
};

// The shared address of element (row, k) of `operand`: the canonical layout's address from the descriptor's start
// address and byte offsets, then the swizzle, which XORs address bits 4-6 (16-byte chunk) with bits 7-9 (the
// 128-byte line), on 1 (32 B), 2 (64 B) or 3 (128 B) bits.
uint32_t wgmmaElementAddress(const WgmmaOperand& operand, uint32_t row, uint32_t k);

// Where register `reg` of warpgroup thread `thread` (0..127) sits in the 64 x n f32 accumulator: warp w = thread /
// 32 holds rows 16w..16w+15; with lane l, d_reg is at row 16w + l / 4 + 8 * ((reg / 2) % 2), column 8 * (reg / 4)
// + 2 * (l % 4) + reg % 2.
MatrixPosition wgmmaAccumulatorElement(uint32_t thread, uint32_t reg);

// Where element `e` (0..7: register e / 2, the low half first) of warpgroup thread `thread`'s A fragment sits in
// the 64 x 16 A of a 16-bit wgmma with A in registers (the ISA's register fragment for A): warp w holds rows
// 16w..16w+15; with lane l, at row 16w + l / 4 + 8 * ((e / 2) % 2), column 2 * (l % 4) + e % 2 + 8 * (e / 4).
MatrixPosition wgmmaRegisterAElement(uint32_t thread, uint32_t e);

// D = A * B (+ C when scaleD) over the warpgroup, with K = wgmmaK(inputA): a and b are the operands' element
// encodings (A 64 x K row-major, B K x n row-major, i.e. B[k][n]; 8-bit ones in the low byte); c and d hold n / 2
// registers per thread, thread-major. Inputs: f16 and bf16 (A and B alike), or e4m3 and e5m2 (mixed), decoded as
// the ISA defines them (IsaFloat8.h). Numerics as executeMma (WarpMatrix.h): exact products, summed in double,
// rounded once to f32.
void executeWgmma(uint32_t n, MatrixElement inputA, MatrixElement inputB, std::span<const uint16_t> a,
                  std::span<const uint16_t> b, bool scaleD, std::span<const uint32_t> c, std::span<uint32_t> d);

}  // namespace tessera::sim
