#include "backends/amdgpu/MfmaLayoutPolicy.h"

#include "backends/amdgpu/MfmaFragments.h"
#include "ir/IR.h"

namespace tessera::backends::amdgpu {

std::optional<ir::Layout> mfmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (!dot.is(ir::OpKind::Dot) || dot.numOperands() < 3 || options.warpSize != kMfmaWaveSize) return std::nullopt;
  ir::Type a = dot.operand(0)->type(), b = dot.operand(1)->type(), acc = dot.operand(2)->type();
  if (!a.isTile() || !b.isTile() || !acc.isTile() || a.rank() != 2 || b.rank() != 2 || acc.rank() != 2)
    return std::nullopt;
  if (a.element().isPtr() || b.element().isPtr() || acc.element().isPtr()) return std::nullopt;
  const ir::ScalarKind in = a.element().scalarKind();
  if ((in != ir::ScalarKind::F16 && in != ir::ScalarKind::BF16) || b.element().scalarKind() != in ||
      acc.element().scalarKind() != ir::ScalarKind::F32)
    return std::nullopt;
  const int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
  if (M % kMfmaM != 0 || N % kMfmaN != 0 || K % kMfmaK != 0) return std::nullopt;
  return ir::Layout::blocked({4, 1}, {4, 16}, {1, options.numWarps}, {1, 0});
}

std::optional<ir::Layout> AMDGPULayoutPolicy::operandLayout(const ir::Op& op, unsigned index) const {
  if (index == 2)
    if (std::optional<ir::Layout> l = mfmaAccumulatorLayout(op, options_)) return l;
  return fallback_.operandLayout(op, index);
}

std::optional<ir::Layout> AMDGPULayoutPolicy::resultLayout(const ir::Op& op, unsigned index) const {
  if (index == 0)
    if (std::optional<ir::Layout> l = mfmaAccumulatorLayout(op, options_)) return l;
  return fallback_.resultLayout(op, index);
}

}  // namespace tessera::backends::amdgpu
