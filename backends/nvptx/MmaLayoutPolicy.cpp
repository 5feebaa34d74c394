#include "backends/nvptx/MmaLayoutPolicy.h"

#include "backends/common/TensorCoreDot.h"
#include "backends/nvptx/WgmmaPlan.h"
#include "ir/IR.h"
#include "ir/LinearLayout.h"
#include "transforms/AsyncCopyDotOperands.h"
#include "transforms/analysis/ChainedDots.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::backends::nvptx {

namespace {

// Whether `dot` takes the chained accumulator layout (see MmaLayoutPolicy.h).
bool stacksWarpsAlongM(const ir::Op& dot, const TensorCoreDot& shape, const transforms::PassOptions& options) {
  const bool sixteenBit = shape.tile.input == ir::ScalarKind::F16 || shape.tile.input == ir::ScalarKind::BF16;
  return sixteenBit && shape.M % (kMmaM * options.numWarps) == 0 && transforms::isChainedDot(dot);
}

ir::Layout chainedAccumulatorLayout(const transforms::PassOptions& options) {
  return ir::Layout::blocked({2, 2}, {8, 4}, {options.numWarps, 1}, {1, 0});
}

// Whether `v` is defined outside the innermost loop around `op` (false when `op` is in no loop).
bool definedOutsideLoopOf(const ir::Value* v, const ir::Op& op) {
  const ir::Op* loop = op.parentOp();
  while (loop && !loop->is(ir::OpKind::For) && !loop->is(ir::OpKind::While)) loop = loop->parentOp();
  if (!loop) return false;
  const ir::Block* block = v->isBlockArg() ? v->ownerBlock() : v->definingOp()->parentBlock();
  for (const ir::Op* owner = block->parentOp(); owner; owner = owner->parentOp())
    if (owner == loop) return false;
  return true;
}

}  // namespace

std::optional<ir::Layout> mmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (options.warpSize != kMmaWarpSize) return std::nullopt;
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, kMmaTiles);
  if (!shape) return std::nullopt;
  if (stacksWarpsAlongM(dot, *shape, options)) return chainedAccumulatorLayout(options);
  return ir::Layout::blocked({1, 2}, {8, 4}, {1, options.numWarps}, {1, 0});
}

std::optional<ir::Layout> mmaOperandARegisterLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (options.warpSize != kMmaWarpSize) return std::nullopt;
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, kMmaTiles);
  if (!shape || !stacksWarpsAlongM(dot, *shape, options)) return std::nullopt;
  if (transforms::operandAFromDot(dot)) return chainedAccumulatorLayout(options);
  // A loop-variant load is better copied to shared memory asynchronously than converted on every iteration. So is
  // a loop-invariant load the copy pass can take (attention's Q): held in registers through the loop, its fragments
  // would cost 32 registers per thread at d 128, which the accumulators need (wgmma reads it by descriptor on
  // sm_90a, ldmatrix in every iteration on sm_80).
  if (!definedOutsideLoopOf(dot.operand(0), dot) || transforms::dotOperandInSharedBuffer(dot, 0)) return std::nullopt;
  return chainedAccumulatorLayout(options);
}

std::optional<ir::Layout> mmaChainedASharedLayout(int64_t M, int64_t K, int64_t elementBytes) {
  auto powerOfTwo = [](int64_t x) { return x >= kMmaM && (x & (x - 1)) == 0; };
  if (!powerOfTwo(M) || !powerOfTwo(K)) return std::nullopt;
  const ir::LinearLayout plain = mmaSharedLayout(mmaSwizzleFor(K, elementBytes)).toLinear({M, K});
  // Each offset basis's row, its bits within the 16-row block taken through the permutation.
  std::vector<ir::LinearLayout::Basis> offsets = plain.inDim(ir::kOffsetDim).bases;
  for (ir::LinearLayout::Basis& basis : offsets)
    basis[0] = (basis[0] & ~int64_t{15}) ^ mmaBlockRow(kChainedRows, basis[0] & 15);
  return ir::Layout::linearShared(ir::LinearLayout({{ir::kOffsetDim, offsets}}, plain.outDims()));
}

ir::Layout mmaSharedLayout(const MmaSwizzle& s, bool dim0Contiguous) {
  return ir::Layout::shared(s.chunkElements, s.perPhase, s.maxPhase, dim0Contiguous ? std::vector<int64_t>{0, 1}
                                                                                    : std::vector<int64_t>{1, 0});
}

std::optional<ir::Layout> mmaOperandSharedLayout(const ir::Op& dot, unsigned index,
                                                 const transforms::PassOptions& options) {
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, kMmaTiles);
  if (options.warpSize != kMmaWarpSize || !shape || index > 1) return std::nullopt;
  const int64_t elementBytes = dot.operand(index)->type().element().storageBytes();
  if (elementBytes != 2) return std::nullopt;
  if (index == 0) {
    if (stacksWarpsAlongM(dot, *shape, options))
      if (std::optional<ir::Layout> chained = mmaChainedASharedLayout(shape->M, shape->K, elementBytes)) return chained;
    return mmaSharedLayout(mmaSwizzleFor(shape->K, elementBytes));
  }
  const bool kContiguous = dotBKContiguous(dot);
  return mmaSharedLayout(mmaSwizzleFor(kContiguous ? shape->K : shape->N, elementBytes), kContiguous);
}

std::optional<ir::Layout> tensorCoreAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (std::optional<WgmmaDotPlan> plan = wgmmaDotPlan(dot, options)) return wgmmaAccumulatorLayout(*plan, options.numWarps);
  return mmaAccumulatorLayout(dot, options);
}

std::optional<ir::Layout> NVPTXLayoutPolicy::dotOperandSharedLayout(const ir::Op& dot, unsigned index) const {
  if (std::optional<WgmmaDotPlan> plan = wgmmaDotPlan(dot, options_); plan && index < 2)
    return wgmmaOperandLayout(*plan, index);
  if (std::optional<WgmmaDotPlan> plan = wgmmaChainedDotPlan(dot, options_);
      plan && (index == 1 || (index == 0 && !plan->aInRegisters)))
    return wgmmaOperandLayout(*plan, index);
  return mmaOperandSharedLayout(dot, index, options_);
}

// A descriptor's block has its innermost dimension contiguous, as the copy lands it: A [M, K] and an N-major B
// [K, N] are laid out that way, a K-major B only when it is the block transposed (attention's K^T; an 8-bit B read
// as it is stored is not). Chained dots (attention) take B this way; not A, whose buffer holds the rows of each
// 16-row block permuted (wgmmaOperandLayout), which a box cannot land.
std::optional<int64_t> NVPTXLayoutPolicy::dotOperandTmaSwizzle(const ir::Op& dot, unsigned index) const {
  std::optional<WgmmaDotPlan> plan = wgmmaDotPlan(dot, options_);
  if (!plan) plan = wgmmaChainedDotPlan(dot, options_);
  if (!plan || index > 1 || (index == 0 && plan->chained)) return std::nullopt;
  const bool transposed = transforms::dotOperandSourceTransposed(dot, index);
  if (index == 0 ? transposed : plan->bKMajor() != transposed) return std::nullopt;
  return index == 0 ? plan->swizzleA : plan->swizzleB;
}

std::string NVPTXLayoutPolicy::dotOperandTmaRefusal(const ir::Op& dot, unsigned index) const {
  if (index > 1 || dotOperandTmaSwizzle(dot, index)) return {};
  std::string why;
  const bool chained = transforms::isChainedDot(dot);
  std::optional<WgmmaDotPlan> plan =
      chained ? wgmmaChainedDotPlan(dot, options_, &why) : wgmmaDotPlan(dot, options_, &why);
  if (!plan) return "the dot does not run on wgmma, which TMA copies feed: " + why;
  if (index == 0 && plan->chained)
    return "a chained dot's A (attention's Q) is copied with cp.async: its buffer permutes the rows of each 16-row "
           "block, which a TMA box cannot land";
  if (index == 0) return "A is read transposed (M contiguous); a TMA box lands A with K contiguous";
  return std::string("B is read ") + (transforms::dotOperandSourceTransposed(dot, 1) ? "transposed" : "as stored") +
         ", which lands it " + (plan->bKMajor() ? "N" : "K") + "-major; wgmma reads this B " +
         (plan->bKMajor() ? "K" : "N") + "-major";
}

bool NVPTXLayoutPolicy::dotIsAsynchronous(const ir::Op& dot) const {
  if (wgmmaBufferDotPlan(dot, options_)) return true;
  std::optional<WgmmaDotPlan> chained = wgmmaChainedDotPlan(dot, options_);
  if (!chained) return false;
  for (unsigned index : {0u, 1u}) {
    if (index == 0 && chained->aInRegisters) continue;
    const ir::Op* load = transforms::dotOperandBuffer(dot, index);
    if (!load || !load->operand(0)->type().encoding() ||
        ir::Layout::fromAttr(*load->operand(0)->type().encoding()) != wgmmaOperandLayout(*chained, index))
      return false;
  }
  return true;
}

}  // namespace tessera::backends::nvptx
