#include "backends/common/TensorCoreDot.h"

#include "backends/common/KernelLowering.h"
#include "transforms/AsyncCopyDotOperands.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::backends {

std::optional<TensorCoreDot> matchTensorCoreDot(const ir::Op& dot, std::span<const TensorCoreTile> tiles,
                                                bool mixedFp8) {
  if (!dot.is(ir::OpKind::Dot) || dot.numOperands() != 3 || dot.numResults() != 1) return std::nullopt;
  ir::Type aTy = dot.operand(0)->type(), bTy = dot.operand(1)->type(), accTy = dot.operand(2)->type();
  if (aTy.rank() != 2 || bTy.rank() != 2 || accTy.rank() != 2) return std::nullopt;
  // Layouts may differ between the accumulator and the result before assign-layouts has run.
  if (dot.result(0)->type().withoutEncoding() != accTy.withoutEncoding()) return std::nullopt;
  if (aTy.element().isPtr() || bTy.element().isPtr() || accTy.element().isPtr()) return std::nullopt;
  const ir::ScalarKind in = aTy.element().scalarKind(), acc = accTy.element().scalarKind();
  if (bTy.element().scalarKind() != in && !(mixedFp8 && aTy.element().isFP8() && bTy.element().isFP8()))
    return std::nullopt;
  const bool allowsTF32 = dot.hasAttr("input_precision") && dot.stringAttr("input_precision") == "tf32";
  if (in == ir::ScalarKind::F32 && !allowsTF32) return std::nullopt;
  const int64_t M = aTy.shape()[0], K = aTy.shape()[1], N = bTy.shape()[1];
  for (const TensorCoreTile& t : tiles)
    if (t.input == in && t.accumulator == acc && M % t.m == 0 && N % t.n == 0 && K % t.k == 0)
      return TensorCoreDot{t, M, N, K};
  return std::nullopt;
}

std::string tensorCoreRefusal(const ir::Op& dot, std::span<const TensorCoreTile> tiles,
                              const std::string& instructions) {
  std::string takes;
  for (const TensorCoreTile& t : tiles) {
    const std::string input = t.input == ir::ScalarKind::F32 ? std::string("tf32") : ir::scalarKindName(t.input);
    if (takes.find(input + " ") != std::string::npos) continue;  // the same input with another tile
    takes += (takes.empty() ? "" : ", ") + input + " (" + std::to_string(t.m) + " x " + std::to_string(t.n) +
             " x " + std::to_string(t.k) + " blocks)";
  }
  const ir::Type a = dot.operand(0)->type(), b = dot.operand(1)->type(), acc = dot.operand(2)->type();
  std::string is = std::string(ir::scalarKindName(a.element().scalarKind())) + " x " +
                   ir::scalarKindName(b.element().scalarKind()) + " -> " +
                   ir::scalarKindName(acc.element().scalarKind());
  if (a.rank() == 2 && b.rank() == 2)
    is += ", M x N x K = " + std::to_string(a.shape()[0]) + " x " + std::to_string(b.shape()[1]) + " x " +
          std::to_string(a.shape()[1]);
  const bool f32 = a.element().scalarKind() == ir::ScalarKind::F32;
  return "the " + instructions + " lowering takes " + takes + "; this dot is " + is +
         (f32 ? " (f32 inputs run on tensor cores as tf32 only with input_precision = \"tf32\")" : "");
}

std::optional<ir::Layout> TensorCoreLayoutPolicy::operandLayout(const ir::Op& op, unsigned index) const {
  if (index == 2)
    if (std::optional<ir::Layout> l = accumulatorLayout_(op, options_)) return l;
  return fallback_.operandLayout(op, index);
}

std::optional<ir::Layout> TensorCoreLayoutPolicy::resultLayout(const ir::Op& op, unsigned index) const {
  if (index == 0)
    if (std::optional<ir::Layout> l = accumulatorLayout_(op, options_)) return l;
  return fallback_.resultLayout(op, index);
}

std::optional<ir::Layout> TensorCoreLayoutPolicy::dotOperandSharedLayout(const ir::Op& dot, unsigned index) const {
  return operandSharedLayout_ ? operandSharedLayout_(dot, index, options_) : std::nullopt;
}

llvm::Value* warpCoordinatePart(IRBuilder& b, llvm::Value* warp, const std::vector<Coords>& bases, int dim) {
  llvm::Value* acc = b.getInt32(0);
  for (size_t j = 0; j < bases.size(); ++j) {
    if (bases[j][dim] == 0) continue;
    llvm::Value* bit = b.CreateAnd(b.CreateLShr(warp, b.getInt32(static_cast<uint32_t>(j))), b.getInt32(1));
    acc = b.CreateXor(acc, b.CreateMul(bit, b.getInt32(static_cast<uint32_t>(bases[j][dim]))));
  }
  return acc;
}

namespace {

// Whether offset 1 of a shared layout is the next element along dimension 0.
bool sharedRunsAlongDim0(const ir::Layout& layout) {
  if (layout.kind() == ir::Layout::Kind::Shared) return layout.order()[0] == 0;
  if (layout.kind() != ir::Layout::Kind::LinearShared) return false;
  const std::vector<ir::LinearLayout::Basis>& offsets = layout.linearLayout().inDim(ir::kOffsetDim).bases;
  return !offsets.empty() && offsets[0][0] != 0;
}

}  // namespace

bool dotBKContiguous(const ir::Op& dot) {
  if (const ir::Op* local = transforms::dotOperandBuffer(dot, 1))
    return sharedRunsAlongDim0(ir::Layout::fromAttr(*local->operand(0)->type().encoding()));
  const ir::Op* load = transforms::dotOperandSourceLoad(dot, 1);
  // A descriptor block lands with its innermost dimension contiguous: B's K when B is the block transposed.
  if (load && load->is(ir::OpKind::DescLoad)) return transforms::dotOperandSourceTransposed(dot, 1);
  if (!load || !load->is(ir::OpKind::Load)) return false;
  std::optional<ir::Layout> layout = ir::Layout::ofType(load->result(0)->type());
  return layout && layout->kind() == ir::Layout::Kind::Blocked && layout->order()[0] == 0;
}

}  // namespace tessera::backends
