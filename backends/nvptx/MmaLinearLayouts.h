// NVIDIA tensor-core and shared-memory formats as linear layouts (ir/LinearLayout.h): the register fragments of
// mma.sync m16n8k16 and wgmma m64nNk16, the ldmatrix/stmatrix 8x8 tiles, the swizzled shared layouts TMA writes and
// wgmma reads, and the staging layout MmaDot.cpp uses today. Distributed fragments map input dimensions register
// (the fragment's element index: a0, a1, .. / c0, c1, ..), lane, and for warpgroups warp, onto dim0 (rows) and dim1
// (columns); shared layouts map offset (in elements) onto them. The definitions follow the PTX ISA's fragment
// tables (9.7.14.5.8 for mma.m16n8k16, 9.7.15.5.1 for wgmma) and its ldmatrix/stmatrix descriptions.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/LinearLayout.h"

namespace tessera::backends::nvptx {

// ---- mma.sync.m16n8k16 with .f16/.bf16 inputs and an .f32 accumulator, one warp.
ir::LinearLayout mmaAccumulatorFragment();  // C/D, 16x8: c0..c3 at (lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2)
ir::LinearLayout mmaOperandAFragment();     // A, 16x16: a0..a7 (four .f16x2 registers, low half first)
ir::LinearLayout mmaOperandBFragment();     // B, 16x8 (K x N): b0..b3

// ---- ldmatrix / stmatrix .m8n8.x{count}.b16 (count 1, 2 or 4), one warp. Output dimensions: matrix (which of the
// `count` 8x8 matrices), row, col (of that matrix, as addressed in shared memory).
// The element each lane holds: register = element index (bit 0: the 16-bit half of a .b32 register, higher bits:
// the register, i.e. the matrix). Without .trans lane l holds row l / 4, columns 2 * (l % 4) + {0, 1}; .trans holds
// the transpose: rows 2 * (l % 4) + {0, 1} of column l / 4. stmatrix stores exactly what ldmatrix loads.
ir::LinearLayout ldmatrixFragment(int count, bool trans);
// The row each lane addresses: lanes 8q..8q+7 give rows 0..7 of matrix q; lanes past 8 * count give none (their
// bits replicate).
ir::LinearLayout ldmatrixAddresses(int count);

// ---- wgmma.mma_async.m64nNk16, one warpgroup (4 warps of 32): input dimensions register, lane, warp.
// The f32 accumulator D, 64 x n (n a power of two from 8 to 256): warp w holds rows 16w..16w+15 in the mma.sync C
// pattern, repeated every 8 columns: d_i at (16 w + lane / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (lane % 4) + i % 2).
ir::LinearLayout wgmmaAccumulatorFragment(int64_t n);
// A in registers (.f16/.bf16), 64 x 16: a0..a7 at (16 w + lane / 4 + 8 * ((i / 2) % 2), 2 * (lane % 4) + i % 2 + 8 * (i / 4)).
ir::LinearLayout wgmmaOperandAFragment();

// ---- the NVMMA shared layouts (TMA writes them, wgmma reads them), for a rows x cols tile whose dimension
// `contiguousDim` (0 or 1) is contiguous in memory: 16-byte chunks XOR-swizzled within swizzle atoms of 8 lines of
// `swizzleBytes` (32, 64 or 128) bytes; line l's chunk c is stored at chunk c ^ ((l / (128 / swizzleBytes)) %
// (swizzleBytes / 16)). A contiguous extent longer than one line of the atom is split into column blocks of
// swizzleBytes bytes, each holding all the lines. Offsets in elements of `elementBytes` (1, 2, 4 or 8). Throws
// tessera::Error when the contiguous extent is shorter than the swizzle width, there are fewer than 8 lines (one
// atom), or the parameters are invalid.
ir::LinearLayout nvmmaSharedLayout(const std::vector<int64_t>& shape, int contiguousDim, int64_t elementBytes,
                                   int64_t swizzleBytes);

// ---- today's mma.sync staging (MmaFragments.h: mmaSwizzledIndex): rows x rowLength elements of `elementBytes`,
// 16-byte chunks XOR-swizzled per row as mmaSwizzleFor(rowLength, elementBytes) says.
ir::LinearLayout mmaStagingLayout(int64_t rows, int64_t rowLength, int64_t elementBytes);

}  // namespace tessera::backends::nvptx
