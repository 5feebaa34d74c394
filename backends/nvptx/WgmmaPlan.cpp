#include "backends/nvptx/WgmmaPlan.h"

#include <algorithm>

#include "backends/common/TensorCoreDot.h"
#include "backends/nvptx/MmaFragments.h"
#include "backends/nvptx/MmaLayoutPolicy.h"
#include "backends/nvptx/MmaLinearLayouts.h"
#include "backends/nvptx/WgmmaAsm.h"
#include "transforms/AsyncCopyDotOperands.h"
#include "transforms/analysis/ChainedDots.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::backends::nvptx {

namespace {

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int log2(int64_t v) { return 63 - __builtin_clzll(static_cast<uint64_t>(v)); }

// The widest swizzle whose lines `bytes` contiguous bytes fill.
int64_t swizzleFor(int64_t bytes) { return std::min<int64_t>(128, bytes); }

constexpr int64_t kWarpsPerGroup = 4, kWgmmaM = 64;

// The inputs wgmma takes into an f32 accumulator, with the instruction's K (matchTensorCoreDot requires K to be a
// multiple of it).
constexpr TensorCoreTile kWgmmaTiles[] = {
    {ir::ScalarKind::F16, ir::ScalarKind::F32, kWgmmaM, 8, 16},
    {ir::ScalarKind::BF16, ir::ScalarKind::F32, kWgmmaM, 8, 16},
    {ir::ScalarKind::F8E4M3, ir::ScalarKind::F32, kWgmmaM, 8, 32},
    {ir::ScalarKind::F8E5M2, ir::ScalarKind::F32, kWgmmaM, 8, 32},
};

}  // namespace

std::optional<WgmmaDotPlan> wgmmaDotPlan(const ir::Op& dot, const transforms::PassOptions& options) {
  const std::string arch = options.arch.empty() ? "sm_90a" : options.arch;  // NVPTXTarget::defaultArch
  if (arch != "sm_90a" || options.warpSize != kMmaWarpSize || options.numWarps % kWarpsPerGroup) return std::nullopt;
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, kWgmmaTiles, /*mixedFp8=*/true);
  if (!shape) return std::nullopt;
  // Both operands must reach the dot from shared buffers (register operands keep mma.sync).
  if (!transforms::dotOperandInSharedBuffer(dot, 0) || !transforms::dotOperandInSharedBuffer(dot, 1))
    return std::nullopt;
  // Chained dots (attention) keep mma.sync's chained layout: blocked, so it spans the row statistics' slices and
  // broadcasts, and it is the next dot's A fragment in registers (wgmma with A from registers is not lowered yet).
  if (transforms::isChainedDot(dot)) return std::nullopt;
  WgmmaDotPlan p;
  p.M = shape->M;
  p.N = shape->N;
  p.K = shape->K;
  p.input = shape->tile.input;
  p.inputB = dot.operand(1)->type().element().scalarKind();
  p.k = shape->tile.k;
  p.elementBytes = 32 / p.k;
  p.kMajorB = p.elementBytes == 1 || dotBKContiguous(dot);
  if (!isPowerOfTwo(p.M) || !isPowerOfTwo(p.N) || !isPowerOfTwo(p.K)) return std::nullopt;
  const int64_t warpgroups = options.numWarps / kWarpsPerGroup;
  if (!isPowerOfTwo(warpgroups)) return std::nullopt;
  p.warpgroupsM = std::min(warpgroups, p.M / kWgmmaM);
  p.warpgroupsN = warpgroups / p.warpgroupsM;
  if (p.N % p.warpgroupsN) return std::nullopt;
  const int64_t perWarpgroupN = p.N / p.warpgroupsN;
  p.n = std::min<int64_t>(perWarpgroupN, 256);
  const std::vector<int>& ns = wgmmaNs();
  // An N-major B's lines hold n elements: at least 32 bytes, the narrowest swizzle, takes n >= 16.
  if ((!p.bKMajor() && p.n < 16) || std::find(ns.begin(), ns.end(), p.n) == ns.end()) return std::nullopt;
  p.repeatsM = p.M / (kWgmmaM * p.warpgroupsM);
  p.repeatsN = perWarpgroupN / p.n;
  if (p.registers() > kWgmmaMaxWaitRegisters) return std::nullopt;
  p.swizzleA = swizzleFor(p.K * p.elementBytes);
  p.swizzleB = swizzleFor((p.bKMajor() ? p.K : p.n) * p.elementBytes);
  // Every stage of a buffer starts on a 1024-byte boundary, where the swizzle patterns start.
  if ((p.K * p.N * p.elementBytes) % 1024) return std::nullopt;
  return p;
}

std::optional<WgmmaDotPlan> wgmmaChainedDotPlan(const ir::Op& dot, const transforms::PassOptions& options) {
  const std::string arch = options.arch.empty() ? "sm_90a" : options.arch;  // NVPTXTarget::defaultArch
  if (arch != "sm_90a" || options.warpSize != kMmaWarpSize || options.numWarps % kWarpsPerGroup) return std::nullopt;
  if (!transforms::isChainedDot(dot) || !transforms::dotOperandInSharedBuffer(dot, 1)) return std::nullopt;
  // A computed by the previous dot always ends in registers (mmaOperandARegisterLayout); asked before layouts are
  // assigned (expand-descriptor-loads), the attribute saying so is not there yet.
  const bool aInRegisters = transforms::dotTakesAInRegisters(dot) || transforms::operandAFromDot(dot);
  if (!aInRegisters && (transforms::operandAFromDot(dot) || !transforms::dotOperandInSharedBuffer(dot, 0)))
    return std::nullopt;
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, kWgmmaTiles);
  if (!shape || shape->tile.k != 16) return std::nullopt;  // 16-bit inputs: the A fragment is the accumulator's
  WgmmaDotPlan p;
  p.M = shape->M;
  p.N = shape->N;
  p.K = shape->K;
  p.input = p.inputB = shape->tile.input;
  p.k = 16;
  p.elementBytes = 2;
  p.kMajorB = dotBKContiguous(dot);
  p.chained = true;
  p.aInRegisters = aInRegisters;
  // The chained layout (MmaLayoutPolicy.h) gives each warp M / (16 * num_warps) blocks of 16 rows, all N columns.
  const int64_t rowsPerRound = kMmaM * options.numWarps;
  if (p.M % rowsPerRound || !isPowerOfTwo(p.N) || !isPowerOfTwo(p.K)) return std::nullopt;
  p.warpgroupsM = options.numWarps / kWarpsPerGroup;
  p.n = p.N;
  p.repeatsM = p.M / rowsPerRound;
  const std::vector<int>& ns = wgmmaNs();
  if ((!p.bKMajor() && p.n < 16) || std::find(ns.begin(), ns.end(), p.n) == ns.end()) return std::nullopt;
  if (p.registers() > kWgmmaMaxWaitRegisters) return std::nullopt;
  p.swizzleB = swizzleFor((p.bKMajor() ? p.K : p.n) * p.elementBytes);
  if ((p.K * p.N * p.elementBytes) % 1024) return std::nullopt;
  if (!p.aInRegisters) {
    p.swizzleA = swizzleFor(p.K * p.elementBytes);
    if (p.swizzleA < 32) return std::nullopt;  // A's lines: at least the narrowest swizzle
  }
  return p;
}

ir::Layout wgmmaAccumulatorLayout(const WgmmaDotPlan& plan, int numWarps) {
  const ir::LinearLayout fragment = wgmmaAccumulatorFragment(plan.n);
  std::vector<ir::LinearLayout::Basis> registers = fragment.inDim(ir::kRegisterDim).bases;
  std::vector<ir::LinearLayout::Basis> warps = fragment.inDim(ir::kWarpDim).bases;
  for (int i = 0; i < log2(plan.repeatsN); ++i) registers.push_back({0, plan.n * plan.warpgroupsN << i});
  for (int i = 0; i < log2(plan.repeatsM); ++i) registers.push_back({kWgmmaM * plan.warpgroupsM << i, 0});
  for (int i = 0; i < log2(plan.warpgroupsM); ++i) warps.push_back({kWgmmaM << i, 0});
  for (int i = 0; i < log2(plan.warpgroupsN); ++i) warps.push_back({0, plan.n << i});
  if (int64_t{1} << warps.size() != numWarps)
    throw Error("wgmma accumulator layout: " + std::to_string(numWarps) + " warps do not match the plan");
  return ir::Layout::linear(ir::LinearLayout({{ir::kRegisterDim, registers},
                                              {ir::kLaneDim, fragment.inDim(ir::kLaneDim).bases},
                                              {ir::kWarpDim, warps}},
                                             {{ir::tensorDimName(0), plan.M}, {ir::tensorDimName(1), plan.N}}));
}

ir::Layout wgmmaOperandLayout(const WgmmaDotPlan& plan, unsigned index) {
  const std::vector<int64_t> shape = index == 0 ? std::vector<int64_t>{plan.M, plan.K} : std::vector<int64_t>{plan.K, plan.N};
  // K is dimension 1 of A and 0 of B: A and a K-major B have it contiguous, an N-major B has N.
  const int contiguous = index == 0 || !plan.bKMajor() ? 1 : 0;
  const ir::LinearLayout nvmma =
      nvmmaSharedLayout(shape, contiguous, plan.elementBytes, index == 0 ? plan.swizzleA : plan.swizzleB);
  if (index != 0 || !plan.chained) return ir::Layout::linearShared(nvmma);
  // A chained A: buffer row r of a 16-row block holds the block's row kChainedRows(r), linear over the row bits.
  std::vector<ir::LinearLayout::Basis> offsets = nvmma.inDim(ir::kOffsetDim).bases;
  for (ir::LinearLayout::Basis& basis : offsets) {
    int64_t row = basis[0] & ~int64_t{15};
    for (int i = 0; i < 4; ++i)
      if (basis[0] >> i & 1) row ^= kChainedRows[static_cast<size_t>(i)];
    basis[0] = row;
  }
  return ir::Layout::linearShared(ir::LinearLayout({{ir::kOffsetDim, offsets}}, nvmma.outDims()));
}

std::optional<WgmmaDotPlan> wgmmaBufferDotPlan(const ir::Op& dot, const transforms::PassOptions& options) {
  const ir::Value* acc = dot.operand(2);
  if (dot.result(0)->type() != acc->type() || wgmmaChainedDotPlan(dot, options)) return std::nullopt;
  std::optional<WgmmaDotPlan> plan = wgmmaDotPlan(dot, options);
  if (!plan || ir::Layout::ofType(acc->type()) != wgmmaAccumulatorLayout(*plan, options.numWarps)) return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    const ir::Op* load = transforms::dotOperandBuffer(dot, i);
    if (!load || ir::Layout::fromAttr(*load->operand(0)->type().encoding()) != wgmmaOperandLayout(*plan, i))
      return std::nullopt;
  }
  return plan;
}

}  // namespace tessera::backends::nvptx
