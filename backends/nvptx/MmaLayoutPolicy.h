// The NVPTX layout policy: a `dot` that the mma.sync lowering can run (kMmaTiles: f16/bf16 inputs with an f32
// accumulator and K % 16 == 0, i8 with an i32 one and K % 32 == 0, f32 allowing tf32 with K % 8 == 0; M % 16 == 0,
// N % 8 == 0, warps of 32) gets its accumulator and result in the blocked layout whose per-thread registers are the
// mma C/D fragments (the same for every one of these shapes): sizePerThread [1, 2], threadsPerWarp [8, 4],
// warpsPerCTA [1, numWarps], order [1, 0]. A warp's 8 lanes rows repeat every 8 rows, so a thread holds rows g
// and g + 8 of every 16-row block, columns 2 * (lane % 4) + {0, 1}. Everything else follows the default policy.
//
// Chained dots (transforms/analysis/ChainedDots.h: attention's Q K^T and P V) with 16-bit inputs whose M splits
// into 16-row blocks per warp instead take sizePerThread [2, 2], threadsPerWarp [8, 4], warpsPerCTA [numWarps, 1]:
// every warp owns whole 16-row blocks (rows 16 w + 16 numWarps i + 0..15), and a thread holds rows 2g and 2g + 1
// of each. That is the mma C fragment with the block's rows permuted (fragment row g is row 2g, row g + 8 is
// 2g + 1); the lowering permutes A's rows alike (MmaAccumulatorPlan::rowBases), and the mma does not care which
// row is which. Then a row's elements all sit in one warp (row reductions are shuffles), and the same layout over
// [M, K] holds exactly the A fragments of m16n8k16 (the C fragments of two adjacent 8-column blocks are the A
// fragment of one 16-column K step): the first dot's result, after element-wise ops and a cast, is the second
// dot's A operand without moving a byte (mmaOperandARegisterLayout). Being blocked, the layout spans every shape,
// so the row statistics ([M] slices), their broadcasts and both accumulators share it. A loop-invariant A that
// comes from a load (attention's Q) is copied once to a shared buffer instead of being held in registers through
// the loop (mma.sync reads it with ldmatrix, rows permuted by the lane addresses).
//
// On sm_90a, the dots WgmmaPlan.h admits get wgmma's accumulator and shared operand layouts instead (the policy
// below; mmaAccumulatorLayout and mmaOperandSharedLayout are mma.sync's alone); chained dots keep the chained
// layout and run on wgmma too (wgmmaChainedDotPlan).
#pragma once

#include <optional>

#include "backends/common/TensorCoreDot.h"
#include "backends/nvptx/MmaFragments.h"
#include "transforms/AssignLayouts.h"

namespace tessera::backends::nvptx {

// The rows of a 16-row block that the chained layout's fragment rows stand for (MmaAccumulatorPlan::rowBases):
// fragment row g (groupID) is row 2g, g + 8 is 2g + 1.
inline constexpr MmaRowBases kChainedRows = {2, 4, 8, 1};

// The mma.sync shapes the lowering uses, by input kind: m16n8k16 (f16, bf16), m16n8k32 .s8, m16n8k8 .tf32.
inline constexpr TensorCoreTile kMmaTiles[] = {
    {ir::ScalarKind::F16, ir::ScalarKind::F32, kMmaM, kMmaN, mmaStepK(2)},
    {ir::ScalarKind::BF16, ir::ScalarKind::F32, kMmaM, kMmaN, mmaStepK(2)},
    {ir::ScalarKind::I8, ir::ScalarKind::I32, kMmaM, kMmaN, mmaStepK(1)},
    {ir::ScalarKind::F32, ir::ScalarKind::F32, kMmaM, kMmaN, mmaStepK(4)},
};

// The mma accumulator layout for `dot`, or nullopt when the dot is not an mma candidate.
std::optional<ir::Layout> mmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options);
// The layout in which the mma lowering takes A from registers (LayoutPolicy::dotOperandARegisterLayout): the
// chained accumulator layout above, for a chained dot whose A is computed from the previous dot's result, or is
// defined outside the dot's loop (converted once, in front of it) and cannot be copied to a shared buffer; nullopt
// otherwise (A is copied to a shared buffer, as a loop-invariant load such as attention's Q is, or staged).
std::optional<ir::Layout> mmaOperandARegisterLayout(const ir::Op& dot, const transforms::PassOptions& options);

// The #shared layout of a staging swizzle: rows of `s.rowLength`, `s.chunkElements`-element chunks XOR-swizzled;
// the rows run along dimension 1 (row-major), or along dimension 0 with `dim0Contiguous` (a transposed B: N x K).
ir::Layout mmaSharedLayout(const MmaSwizzle& s, bool dim0Contiguous = false);
// The buffer of a chained dot's A ([M, K], M a power of two; attention's Q): mmaSharedLayout(mmaSwizzleFor(K)) over
// buffer rows, where buffer row r of each 16-row block holds the block's row mmaBlockRow(kChainedRows, r), the
// accumulator's row order. ldmatrix's lanes then read consecutive buffer rows, as for an unpermuted A. With the
// rows permuted by the lane addresses instead, one 8x8 matrix read rows 0, 2, ..., 14 of a 16-row block, which had
// 4 of the 8 phases between them: a 2-way bank conflict on every ldmatrix of Q. nullopt where M is no power of two.
std::optional<ir::Layout> mmaChainedASharedLayout(int64_t M, int64_t K, int64_t elementBytes);
// The shared layout the mma lowering reads operand #index (0: A, 1: B) of `dot` from with ldmatrix, when it can
// read it from a shared buffer: f16/bf16 mma candidates (A row-major; B row-major for ldmatrix.trans, or, when
// dotBKContiguous, transposed, N x K, for ldmatrix without .trans). nullopt for i8 and tf32 (B is staged transposed, f32 is rounded to tf32
// while staged) and for other dots.
std::optional<ir::Layout> mmaOperandSharedLayout(const ir::Op& dot, unsigned index,
                                                 const transforms::PassOptions& options);

// The policy's choice: wgmma's accumulator layout for the dots WgmmaPlan.h admits, else mma.sync's.
std::optional<ir::Layout> tensorCoreAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options);

class NVPTXLayoutPolicy : public TensorCoreLayoutPolicy {
 public:
  explicit NVPTXLayoutPolicy(const transforms::PassOptions& options)
      : TensorCoreLayoutPolicy(options, &tensorCoreAccumulatorLayout), options_(options) {}
  // wgmma's NVMMA layouts for the dots WgmmaPlan.h admits, else mmaOperandSharedLayout.
  std::optional<ir::Layout> dotOperandSharedLayout(const ir::Op& dot, unsigned index) const override;
  std::optional<ir::Layout> dotOperandARegisterLayout(const ir::Op& dot) const override {
    return mmaOperandARegisterLayout(dot, options_);
  }
  // On sm_90a, the operands of the dots WgmmaPlan.h admits whose NVMMA layout has the descriptor's innermost
  // dimension contiguous (A, and B of 16-bit inputs): the plan's swizzle.
  std::optional<int64_t> dotOperandTmaSwizzle(const ir::Op& dot, unsigned index) const override;
  // Why not: the wgmma plan's refusal, a chained A, or a block that lands in the other major order.
  std::string dotOperandTmaRefusal(const ir::Op& dot, unsigned index) const override;
  // The dots lowerWgmmaDot runs on wgmma: from both their buffers (wgmmaBufferDotPlan), or chained
  // (wgmmaChainedDotPlan) with B, and A unless it is in registers, in the plan's buffer layouts. wgmma.wait_group
  // can leave them in flight.
  bool dotIsAsynchronous(const ir::Op& dot) const override;
  // cp.async moves 4, 8 or 16 bytes (NVPTXHooks::asyncCopy).
  bool copiesAsynchronously(int64_t bytes) const override { return bytes == 4 || bytes == 8 || bytes == 16; }
  // sm_90a (setmaxnreg): a producer warpgroup keeping 24 registers per thread; the consumers take the rest of the
  // registers one program per multiprocessor starts with (WarpSpecialization.cpp).
  std::optional<WarpRoles> warpRoles(int64_t consumerWarps) const override;
  // sm_90 and sm_90a (the default arch) have TMA stores.
  bool storesDescriptorsWithTma() const override {
    return options_.arch.empty() || options_.arch == "sm_90" || options_.arch == "sm_90a";
  }

 private:
  transforms::PassOptions options_;
};

}  // namespace tessera::backends::nvptx
