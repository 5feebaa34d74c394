// When and how a `dot` runs on Hopper's wgmma (sm_90a): a dot of f16, bf16, f8e4m3 or f8e5m2 operands (the two
// fp8 formats mixed or not) into f32
// whose operands both reach it through shared buffers (async-copy-dot-operands), with num_warps a multiple of 4.
// Each warpgroup (4 warps) runs m64nNk16 (16-bit) or m64nNk32 (8-bit) instructions: warpgroups tile M (64 rows
// each), then N; a warpgroup repeats its instruction over the rest of its part of the tile. Its operands stay in
// the NVMMA shared layouts (MmaLinearLayouts.h) the copies write, each with the widest swizzle (up to 128 bytes)
// its lines allow: A [M, K] K-major; B [K, N] N-major for 16-bit inputs (wgmma's transposed B) and K-major for
// 8-bit ones, which the ISA allows only K-major. A K-major B buffer is the transpose of a row-major B tile: when B
// comes from a row-major [K, N] tensor, its copy runs through registers (a vector load along N, then byte
// stores; LowerSharedBuffers.cpp), and when it comes from a K-contiguous one (B given as [N, K], B^T row-major, as
// Triton's Hopper fp8 matmul takes it) the copy is cp.async's 16-byte runs. Every other dot keeps mma.sync
// (MmaLayoutPolicy.h), or FMAs for fp8.
//
// A 16-bit B whose load runs fastest along K (dotBKContiguous: B given as [N, K], attention's K^T) gets a K-major
// buffer too, which its copy fills with cp.async's 16-byte runs, and the instruction reads it untransposed.
//
// Chained dots (attention's Q K^T and P V, transforms/analysis/ChainedDots.h) that assign-layouts marks
// `a_in_registers` keep mma.sync's chained accumulator layout (MmaLayoutPolicy.h: each warp owns whole 16-row
// blocks, so the row statistics are warp shuffles and one dot's result is the next one's A without moving), and
// run on wgmma with A from registers (wgmmaChainedDotPlan): per warp, that layout's registers of each 16-row block
// are exactly a wgmma A fragment and accumulator fragment (rows permuted alike, which the product does not see),
// so each warpgroup issues one m64nNk16 per row block and K step over its four warps' blocks, B (all N columns)
// read from its buffer by descriptor. A chained dot whose A is a load made before its loop (attention's Q) instead
// has A copied once into a shared buffer (async-copy-dot-operands, one copy for the dots of both key loops) that
// wgmma reads by descriptor, so that its fragments do not occupy registers through the loop: an NVMMA K-major
// buffer whose rows are permuted within each 16-row block as the chained layout's rows are (kChainedRows), so that
// the instruction's row g of a warp's block is the row the accumulator holds there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/IR.h"
#include "ir/Layout.h"
#include "transforms/PassManager.h"

namespace tessera::backends::nvptx {

struct WgmmaDotPlan {
  int64_t M = 0, N = 0, K = 0;
  ir::ScalarKind input = ir::ScalarKind::F16;    // A's
  ir::ScalarKind inputB = ir::ScalarKind::F16;   // B's: A's, or the other fp8 format
  int64_t elementBytes = 2;                      // 2, or 1 for the 8-bit floats
  int64_t k = 16;                                // the instruction's K: 32 bytes of elements
  int64_t warpgroupsM = 1, warpgroupsN = 1;  // how the warpgroups tile M and N
  int64_t n = 0;                             // the instruction's N
  int64_t repeatsM = 1, repeatsN = 1;        // instructions per warpgroup along M and N, per K step of 16
  int64_t swizzleA = 0, swizzleB = 0;        // bytes: 32, 64 or 128 (swizzleA: 0 with A in registers)
  bool kMajorB = false;                      // B K-major: 8-bit inputs, or a K-contiguous 16-bit B
  bool chained = false;                      // wgmmaChainedDotPlan: the chained accumulator layout
  bool aInRegisters = false;                 // a chained dot's A from registers (else its row-permuted buffer)
  int64_t registers() const { return n / 2 * repeatsM * repeatsN; }  // accumulator registers per thread
  bool bKMajor() const { return kMajorB; }   // else N-major
};

// The plan for `dot`, or nullopt when it does not run on wgmma with both operands in shared memory (with
// `whyNot`, the reason in words, for errors that explain it).
std::optional<WgmmaDotPlan> wgmmaDotPlan(const ir::Op& dot, const transforms::PassOptions& options,
                                         std::string* whyNot = nullptr);
// The plan for a chained dot taking A from registers (marked `a_in_registers`) or from a shared buffer, B from a
// shared buffer: repeatsM 16-row blocks per warp (M / (16 * num_warps)), n = N (at most 256), swizzleA 0 with A
// in registers; nullopt when it does not run on wgmma (it keeps mma.sync; `whyNot` as above).
std::optional<WgmmaDotPlan> wgmmaChainedDotPlan(const ir::Op& dot, const transforms::PassOptions& options,
                                                std::string* whyNot = nullptr);

// The plan of a dot that lowerWgmmaDot runs from its two shared buffers (not chained): wgmmaDotPlan's, when the
// accumulator has its layout and both operands are local_loads of buffers in its operand layouts. Such a dot can
// be left in flight (LayoutPolicy::dotIsAsynchronous): its operands never pass through registers.
std::optional<WgmmaDotPlan> wgmmaBufferDotPlan(const ir::Op& dot, const transforms::PassOptions& options);

// The accumulator (and result) layout: a Linear layout over [M, N] whose registers are, in order, the
// instruction's fragment (wgmmaAccumulatorFragment(n)), then the repeats along N, then along M; warps 0-1 of a
// warpgroup are the fragment's, the next warp bits step the warpgroups along M, then along N.
ir::Layout wgmmaAccumulatorLayout(const WgmmaDotPlan& plan, int numWarps);
// The shared layout of operand #index (0: A [M, K], 1: B [K, N]) of either kind of plan.
ir::Layout wgmmaOperandLayout(const WgmmaDotPlan& plan, unsigned index);

}  // namespace tessera::backends::nvptx
