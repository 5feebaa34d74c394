// Coalescing: gives every load, store and atomic on a tile of pointers the blocked layout that makes its global
// accesses coalesced and as wide as is legal. The layout's order follows the pointers' contiguity (the most
// contiguous dimension fastest), and each thread holds
//   min(contiguity, alignment in elements, 16 bytes / element size, mask constancy, elements / threads)
// consecutive elements along it, so it can issue them as one vector access (atomics: one element). Where that
// would have a thread touch many rows, alignment and the mask leave the minimum: runs stay whole, accessed in
// pieces. The op's tile operands are converted to that layout and its result converted back (convert_layout);
// assign-layouts then propagates the layouts and remove-layout-conversions cleans up what is redundant.
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

constexpr int64_t kMaxRowsPerThread = 8;  // rows of narrow accesses a thread may touch (16 pointer registers)

bool isMemoryOp(const Op& op) {
  return op.is(OpKind::Load) || op.is(OpKind::Store) || op.is(OpKind::AtomicRMW) || op.is(OpKind::AtomicCAS);
}

// The mask operand of a memory op, if it has one (load: ptr, mask, other; store/atomic_rmw: ptr, value, mask).
Value* maskOperand(const Op& op) {
  if (op.is(OpKind::Load) && op.numOperands() >= 2) return op.operand(1);
  if ((op.is(OpKind::Store) || op.is(OpKind::AtomicRMW)) && op.numOperands() >= 3) return op.operand(2);
  return nullptr;
}

// The product of the extents of every dimension but `fastest`.
int64_t rows(const std::vector<int64_t>& shape, int64_t fastest) {
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (static_cast<int64_t>(d) != fastest) n *= shape[d];
  return n;
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

    if (!op.is(OpKind::Load) && !op.is(OpKind::Store))
      return ir::defaultBlockedLayout(shape, options_.numWarps, options_.warpSize, 1, order);
    const int64_t threads = int64_t(options_.numWarps) * options_.warpSize;
    const int64_t elementsPerThread = std::max<int64_t>(1, type.numElements() / threads);
    // The run a thread would access at once were the pointers aligned and the mask uniform ...
    const int64_t run = std::min(
        {info.contiguity[fastest], std::max<int64_t>(1, kMaxAccessBytes / elemBytes), elementsPerThread});
    // ... and the vector it may: aligned, under one predicate.
    int64_t width = std::min(run, std::max<int64_t>(1, info.divisibility[fastest] / elemBytes));
    if (Value* mask = maskOperand(op); mask && mask->type().isTile())
      width = std::min(width, axis.get(mask).constancy[fastest]);
    // Where narrow accesses would have a thread touch more than kMaxRowsPerThread rows, it keeps the whole run
    // instead (the lowering splits it into those accesses): a thread pays a pointer register pair for every row it
    // touches (row strides are runtime values; LLVM hoists each out of the loop), while a run is one pointer plus
    // immediates, one swizzled chunk of shared memory and one wide store into it. The 999-sized 128x128x64 matmul's
    // operands took 64 rows per thread and spilled 644 bytes. The price: a warp's narrow access spans several rows'
    // 16-byte runs, so each sector is requested once per access of its run (L1 hits after the first; measured on
    // the emulator in benchmarks/README.md, "Rows of no alignment"). Below the limit, consecutive elements stay on
    // consecutive lanes, so that each narrow access is coalesced.
    const bool keepRun = elementsPerThread / width > kMaxRowsPerThread && rows(shape, fastest) > 1;
    return ir::defaultBlockedLayout(shape, options_.numWarps, options_.warpSize, keepRun ? run : width, order);
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
