#include "backends/nvptx/MmaLayoutPolicy.h"

#include "backends/common/TensorCoreDot.h"
#include "backends/nvptx/WgmmaPlan.h"
#include "ir/IR.h"

namespace tessera::backends::nvptx {

std::optional<ir::Layout> mmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (options.warpSize != kMmaWarpSize || !matchTensorCoreDot(dot, kMmaTiles)) return std::nullopt;
  return ir::Layout::blocked({1, 2}, {8, 4}, {1, options.numWarps}, {1, 0});
}

ir::Layout mmaSharedLayout(const MmaSwizzle& s) {
  return ir::Layout::shared(s.chunkElements, s.perPhase, s.maxPhase, {1, 0});
}

std::optional<ir::Layout> mmaOperandSharedLayout(const ir::Op& dot, unsigned index,
                                                 const transforms::PassOptions& options) {
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, kMmaTiles);
  if (options.warpSize != kMmaWarpSize || !shape || index > 1) return std::nullopt;
  const int64_t elementBytes = dot.operand(index)->type().element().storageBytes();
  if (elementBytes != 2 || mmaStagesBTransposed(elementBytes)) return std::nullopt;
  return mmaSharedLayout(mmaSwizzleFor(index == 0 ? shape->K : shape->N, elementBytes));
}

std::optional<ir::Layout> tensorCoreAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (std::optional<WgmmaDotPlan> plan = wgmmaDotPlan(dot, options)) return wgmmaAccumulatorLayout(*plan, options.numWarps);
  return mmaAccumulatorLayout(dot, options);
}

std::optional<ir::Layout> NVPTXLayoutPolicy::dotOperandSharedLayout(const ir::Op& dot, unsigned index) const {
  if (std::optional<WgmmaDotPlan> plan = wgmmaDotPlan(dot, options_); plan && index < 2)
    return wgmmaOperandLayout(*plan, index);
  return mmaOperandSharedLayout(dot, index, options_);
}

}  // namespace tessera::backends::nvptx
