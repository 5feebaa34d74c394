// The AMDGPU layout policy: a `dot` that the MFMA lowering can run (f16 or bf16 inputs with an f32 accumulator,
// or i8 inputs with an i32 one; M, N multiples of 16 and K of the instruction's K; wave64) gets its accumulator and
// result in the blocked layout whose per-thread registers are the v_mfma_f32_16x16x16 C/D fragments (the i8 forms'
// are the same, in i32): sizePerThread [4, 1], threadsPerWarp [4, 16],
// warpsPerCTA [1, numWarps], order [1, 0]: lane l holds rows 4 * (l / 16) + {0..3} of column l % 16 of every
// 16x16 block. Asked for 32x32 instructions (PassOptions::matrixInstrSize = 32, Triton's matrix_instr_nonkdim), a dot
// of 16-bit inputs whose M is a multiple of 32 and whose N a multiple of 32 * numWarps takes the
// v_mfma_f32_32x32x8 C/D fragments instead: sizePerThread [4, 1], threadsPerWarp [2, 32], warpsPerCTA
// [1, numWarps]: lane l holds rows 8 j + 4 (l / 32) + {0..3} of column l % 32 of every 32x32 block. Half as many
// instructions for the same work, each reading operand vectors of the same size (4 elements, K 8 per step).
// Chained dots whose M gives each wave whole 32-row blocks and whose N and K are multiples of 32 take the
// transposed 32x32 fragments (sizePerThread [1, 4], threadsPerWarp [32, 2], warpsPerCTA [numWarps, 1], order
// [0, 1]), still P's A operand in registers.
// Its operands A and B are read from LDS buffers that async copies fill (mfmaOperandSharedLayout).
// Chained dots (transforms/analysis/ChainedDots.h: attention's Q K^T and P V) whose M splits into 16-row blocks per
// wave take the transposed fragments instead (MfmaFragments.h: the lowering computes D^T = B^T A^T), sizePerThread
// [1, 4], threadsPerWarp [16, 4], warpsPerCTA [numWarps, 1], order [0, 1]: lane l holds row l % 16 and columns
// 4 (l / 16) + {0..3} of each 16x16 block, and each wave owns whole 16-row blocks (rows 16 w + 16 numWarps i +
// 0..15). A row's elements all sit in one wave (the softmax's row reductions need no LDS round trip between waves),
// a wave reads only its own rows of Q (with the waves side by side along N each read all of them: the 128x64, d 64
// attention with 8 waves needed 256 VGPRs and spilled 268 more), and the same layout over [M, K] holds exactly the
// MFMA A fragments: P, the first result after element-wise ops and a cast, is the second dot's A operand in
// registers (mfmaOperandARegisterLayout), where it went through LDS 2 bytes at a time before. Both accumulators,
// the row statistics ([M] slices) and their broadcasts share the layout (16-bit inputs only: an i8 A vector holds
// 8 consecutive K on gfx942, which no accumulator layout gives a lane).
// Everything else follows the default policy.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "backends/amdgpu/MfmaFragments.h"
#include "backends/common/TensorCoreDot.h"
#include "transforms/AssignLayouts.h"

namespace tessera::backends::amdgpu {

// The MFMA instructions the lowering uses on `arch` (gfx90a or gfx942; empty: AMDGPUTarget's default, gfx90a), by
// input kind: v_mfma_f32_16x16x16f16 and its bf16 "1k" twin, and for i8 v_mfma_i32_16x16x32_i8 on gfx942 or
// v_mfma_i32_16x16x16i8 on gfx90a (gfx942 has no 16x16x16 i8 form).
std::span<const TensorCoreTile> mfmaTiles(const std::string& arch);

// The MFMA accumulator layout for `dot`, or nullopt when the dot is not an MFMA candidate.
std::optional<ir::Layout> mfmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options);

// The layout in which the MFMA lowering takes A from registers (LayoutPolicy::dotOperandARegisterLayout): the
// chained layout above, for a chained dot whose A is computed from the previous dot's result; nullopt otherwise.
std::optional<ir::Layout> mfmaOperandARegisterLayout(const ir::Op& dot, const transforms::PassOptions& options);

// The LDS layout MFMA reads operand #index (0: A, 1: B) from, K being the dot's reduction size and elementBytes its
// inputs' size: K-contiguous rows (A's rows, order [1, 0]; B's columns, order [0, 1]) in 8-byte chunks swizzled by
// mfmaSwizzleFor. Given the number of rows `outer` (M or N, a power of two), rows shorter than 128 bytes are also
// permuted within groups of 16 (a #linear_shared layout; see the definition).
ir::Layout mfmaOperandLdsLayout(int64_t K, int64_t elementBytes, unsigned index, int64_t outer = 0);
// mfmaOperandLdsLayout for operand #index of `dot` when it is an MFMA candidate on wave64 and, with a shared-memory
// limit set, options.numStages copies of both operands of every MFMA dot of its function fit in that limit;
// nullopt otherwise (the dot then stages the operand in its scratch, laid out the same way).
std::optional<ir::Layout> mfmaOperandSharedLayout(const ir::Op& dot, unsigned index,
                                                  const transforms::PassOptions& options);

class AMDGPULayoutPolicy : public TensorCoreLayoutPolicy {
 public:
  explicit AMDGPULayoutPolicy(const transforms::PassOptions& options)
      : TensorCoreLayoutPolicy(options, &mfmaAccumulatorLayout, &mfmaOperandSharedLayout), options_(options) {}
  // An async_copy is a global load and LDS stores here (AMDGPUHooks has no asynchronous copy).
  bool copiesAsynchronously(int64_t bytes) const override {
    (void)bytes;
    return false;
  }
  // An MFMA dot stages an operand without a buffer in its scratch, laid out as a buffer would be.
  std::optional<ir::Layout> dotOperandStagingLayout(const ir::Op& dot, unsigned index) const override;
  std::optional<ir::Layout> dotOperandARegisterLayout(const ir::Op& dot) const override {
    return mfmaOperandARegisterLayout(dot, options_);
  }

 private:
  transforms::PassOptions options_;
};

}  // namespace tessera::backends::amdgpu
