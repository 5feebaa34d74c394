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
#pragma once

#include <cstdint>
#include <optional>

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
  int64_t swizzleA = 0, swizzleB = 0;        // bytes: 32, 64 or 128
  int64_t registers() const { return n / 2 * repeatsM * repeatsN; }  // accumulator registers per thread
  bool bKMajor() const { return elementBytes == 1; }  // else N-major
};

// The plan for `dot`, or nullopt when it does not run on wgmma.
std::optional<WgmmaDotPlan> wgmmaDotPlan(const ir::Op& dot, const transforms::PassOptions& options);

// The accumulator (and result) layout: a Linear layout over [M, N] whose registers are, in order, the
// instruction's fragment (wgmmaAccumulatorFragment(n)), then the repeats along N, then along M; warps 0-1 of a
// warpgroup are the fragment's, the next warp bits step the warpgroups along M, then along N.
ir::Layout wgmmaAccumulatorLayout(const WgmmaDotPlan& plan, int numWarps);
// The shared layout of operand #index (0: A [M, K], 1: B [K, N]).
ir::Layout wgmmaOperandLayout(const WgmmaDotPlan& plan, unsigned index);

}  // namespace tessera::backends::nvptx
