#include "backends/nvptx/MmaLayoutPolicy.h"

#include "ir/IR.h"

namespace tessera::backends::nvptx {

std::optional<ir::Layout> mmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (!dot.is(ir::OpKind::Dot) || dot.numOperands() < 3 || options.warpSize != 32) return std::nullopt;
  ir::Type a = dot.operand(0)->type(), b = dot.operand(1)->type(), acc = dot.operand(2)->type();
  if (!a.isTile() || !b.isTile() || !acc.isTile() || a.rank() != 2 || b.rank() != 2 || acc.rank() != 2)
    return std::nullopt;
  if (a.element().isPtr() || b.element().isPtr() || acc.element().isPtr()) return std::nullopt;
  const ir::ScalarKind in = a.element().scalarKind();
  if ((in != ir::ScalarKind::F16 && in != ir::ScalarKind::BF16) || b.element().scalarKind() != in ||
      acc.element().scalarKind() != ir::ScalarKind::F32)
    return std::nullopt;
  const int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
  if (M % 16 != 0 || N % 8 != 0 || K % 16 != 0) return std::nullopt;
  return ir::Layout::blocked({1, 2}, {8, 4}, {1, options.numWarps}, {1, 0});
}

std::optional<ir::Layout> NVPTXLayoutPolicy::operandLayout(const ir::Op& op, unsigned index) const {
  if (index == 2)
    if (std::optional<ir::Layout> l = mmaAccumulatorLayout(op, options_)) return l;
  return fallback_.operandLayout(op, index);
}

std::optional<ir::Layout> NVPTXLayoutPolicy::resultLayout(const ir::Op& op, unsigned index) const {
  if (index == 0)
    if (std::optional<ir::Layout> l = mmaAccumulatorLayout(op, options_)) return l;
  return fallback_.resultLayout(op, index);
}

}  // namespace tessera::backends::nvptx
