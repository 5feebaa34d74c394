// Coalescing: gives every load, store and atomic on a tile of pointers the blocked layout that makes its global
// accesses coalesced and as wide as is legal. The layout's order follows the pointers' contiguity (the most
// contiguous dimension fastest), and each thread holds
//   min(contiguity, alignment in elements, 16 bytes / element size, mask constancy, elements / threads)
// consecutive elements along it, so it can issue them as one vector access (atomics: one element). The op's
// tile operands are converted to that layout and its result converted back (convert_layout); assign-layouts
// then propagates the layouts and remove-layout-conversions cleans up what is redundant.
#include <algorithm>
#include <iterator>

#include "ir/Builder.h"
#include "ir/Layout.h"
#include "transforms/analysis/AxisInfo.h"
#include "transforms/PassManager.h"

namespace tessera::transforms {
namespace {

using ir::Layout;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

constexpr int64_t kMaxVectorBytes = 16;  // the widest global access (ld.global.v4.b32 and friends)

bool isMemoryOp(const Op& op) {
  return op.is(OpKind::Load) || op.is(OpKind::Store) || op.is(OpKind::AtomicRMW) || op.is(OpKind::AtomicCAS);
}

// The mask operand of a memory op, if it has one (load: ptr, mask, other; store/atomic_rmw: ptr, value, mask).
Value* maskOperand(const Op& op) {
  if (op.is(OpKind::Load) && op.numOperands() >= 2) return op.operand(1);
  if ((op.is(OpKind::Store) || op.is(OpKind::AtomicRMW)) && op.numOperands() >= 3) return op.operand(2);
  return nullptr;
}

class CoalescePass : public Pass {
 public:
  explicit CoalescePass(const PassOptions& options) : options_(options) {}
  const char* name() const override { return "coalesce"; }

  void run(ir::Function& f) override {
    AxisInfoAnalysis axis(f);
    std::vector<Op*> memoryOps;
    f.walk([&](Op* op) {
      if (isMemoryOp(*op) && op->numOperands() > 0 && op->operand(0)->type().isTile()) memoryOps.push_back(op);
    });
    for (Op* op : memoryOps) rewrite(*op, chooseLayout(*op, axis));
  }

 private:
  Layout chooseLayout(const Op& op, const AxisInfoAnalysis& axis) const {
    Value* ptr = op.operand(0);
    Type type = ptr->type();
    const std::vector<int64_t>& shape = type.shape();
    int64_t elemBytes = type.pointee().storageBytes();
    AxisInfo info = axis.get(ptr);
    std::vector<int64_t> order = axis.contiguityOrder(ptr);
    int64_t fastest = order[0];

    int64_t perThread = 1;
    if (op.is(OpKind::Load) || op.is(OpKind::Store)) {
      int64_t threads = int64_t(options_.numWarps) * options_.warpSize;
      perThread = std::min({info.contiguity[fastest], std::max<int64_t>(1, info.divisibility[fastest] / elemBytes),
                            std::max<int64_t>(1, kMaxVectorBytes / elemBytes),
                            std::max<int64_t>(1, type.numElements() / threads)});
      // A predicated vector access needs one predicate for the whole vector.
      if (Value* mask = maskOperand(op); mask && mask->type().isTile())
        perThread = std::min(perThread, axis.get(mask).constancy[fastest]);
    }
    return ir::defaultBlockedLayout(shape, options_.numWarps, options_.warpSize, perThread, order);
  }

  // Converts the op's tile operands to `layout`, gives its tile results `layout`, and converts those back to
  // what their users expect.
  static void rewrite(Op& op, const Layout& layout) {
    ir::Builder b;
    b.setInsertionPoint(&op);
    b.setLoc(op.loc());
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      Value* v = op.operand(i);
      if (!v->type().isTile()) continue;
      Type wanted = layout.apply(v->type());
      if (v->type() != wanted) op.setOperand(i, b.create1(OpKind::ConvertLayout, {v}, wanted));
    }
    ir::Block* block = op.parentBlock();
    auto it = std::find_if(block->ops().begin(), block->ops().end(), [&](const auto& o) { return o.get() == &op; });
    Op* next = std::next(it) == block->ops().end() ? nullptr : std::next(it)->get();
    for (unsigned i = 0; i < op.numResults(); ++i) {
      Value* r = op.result(i);
      Type original = r->type();
      if (!original.isTile() || layout.apply(original) == original) continue;
      r->setType(layout.apply(original));
      ir::Builder after(block, next);
      after.setLoc(op.loc());
      Value* back = after.create1(OpKind::ConvertLayout, {r}, original);
      r->replaceAllUsesWith(back);
      back->definingOp()->setOperand(0, r);
    }
  }

  PassOptions options_;
};

}  // namespace

std::unique_ptr<Pass> createCoalescePass(const PassOptions& options) { return std::make_unique<CoalescePass>(options); }

}  // namespace tessera::transforms
