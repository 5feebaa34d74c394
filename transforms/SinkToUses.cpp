// sink-to-uses: moves register-only pure ops down to just before their first user in the same block, when that
// frees more registers than it holds longer. Kernels compute values where the author wrote them, often long before
// they are needed: attention computes the bounds, offsets and masks of its second key loop and of its epilogue
// before the first key loop, and holds them through it; a mask built before a dot is held through the dot. Neither
// LLVM's NVPTX backend nor ptxas reliably moves such values back (ptxas 13.0 on sm_80: the causal 128x128 d128
// attention spilled 40 bytes before this pass, 12 after; the i8 128x128x64 matmul on sm_90a went from 155
// registers to 128; benchmarks/README.md, "Values sunk to their first use").
//
// The cost model counts the registers a thread spends on a value: a tile's elements per thread in its layout, a
// broadcast's or expand_dims' those of its operand (the same registers), a splat's its scalar's one, a constant's
// none (folded into the instructions that use it). An op moves when its result's registers, freed from its old
// place to the target, exceed those of the operands it would hold longer: each operand not live at the target
// anyway (defined outside the block, or used again at or after the target), unless its definition can move along
// for less (the op is its only user), as chains like arange -> add -> expand_dims -> broadcast -> cmp do. Ties
// stay: ptxas's response to reordering is not monotone, and a move that frees nothing is churn. Only ops that lower
// to register arithmetic move (elementwise ops, aranges, splats, broadcasts, expand_dims): never memory ops, dots,
// reductions or layout conversions, whose places matter to barriers and to the overlap of copies with work. Ops
// move only within their block, never into a loop or an `if` (that would repeat or condition their work).
#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "ir/Layout.h"
#include "transforms/PassManager.h"

namespace tessera::transforms {
namespace {

using ir::Block;
using ir::Op;
using ir::OpKind;
using ir::Value;

bool movable(const Op& op) {
  if (op.numResults() != 1 || op.numRegions() != 0 || !op.info().has(ir::kPure)) return false;
  if (op.info().has(ir::kElementwise)) return true;
  return op.is(OpKind::Arange) || op.is(OpKind::Splat) || op.is(OpKind::Broadcast) || op.is(OpKind::ExpandDims);
}

class BlockSinker {
 public:
  explicit BlockSinker(Block& block) : block_(block) {}

  void run() {
    std::vector<Op*> ops;
    for (auto& op : block_.ops()) ops.push_back(op.get());
    // Last first: an op's operands' definitions come before it, so by the time they are visited the op has moved
    // and they follow it.
    renumber();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Op* op = *it;
      if (!movable(*op)) continue;
      Op* target = firstUser(*op);
      if (!target || position(target) == position(op) + 1 || !sinksTo(*op, position(target))) continue;
      block_.insertBefore(target, block_.remove(op));
      renumber();  // as linear as the move itself (Block finds ops by walking its list)
    }
  }

 private:
  void renumber() {
    position_.clear();
    int i = 0;
    for (auto& op : block_.ops()) position_[op.get()] = i++;
  }
  int position(Op* op) const { return position_.at(op); }

  // The op of this block that is `user` or holds it in a region; null if it is outside the block.
  Op* ancestorInBlock(Op* user) const {
    while (user && user->parentBlock() != &block_) user = user->parentOp();
    return user;
  }

  Op* firstUser(const Op& op) const {
    Op* first = nullptr;
    for (const ir::Use& use : op.result(0)->uses()) {
      Op* user = ancestorInBlock(use.user);
      if (!user) return nullptr;  // not dominated by the block: leave it
      if (!first || position(user) < position(first)) first = user;
    }
    return first;
  }

  // The registers a thread spends holding `v` (a tile: its elements per thread; a broadcast or expand_dims shares
  // its operand's registers, a splat is its scalar's, a constant is folded into the instructions that use it).
  static int64_t registers(Value* v) {
    Op* def = v->definingOp();
    if (def && def->is(OpKind::Constant)) return 0;
    if (!v->type().isTile()) return 1;
    if (def) {
      if (def->is(OpKind::Splat)) return 1;
      if (def->is(OpKind::Broadcast) || def->is(OpKind::ExpandDims)) return registers(def->operand(0));
    }
    const std::optional<ir::Layout> layout = ir::Layout::ofType(v->type());
    return layout ? layout->registersPerThread(v->type().shape()) : v->type().numElements();
  }

  static int64_t registers(const std::set<Value*>& values) {
    int64_t total = 0;
    for (Value* v : values) total += registers(v);
    return total;
  }

  // The values that moving `op` to just before the op at `targetPosition` keeps live longer: each operand not live
  // there anyway, unless its definition moves along and lengthens less (its only user is `op`).
  std::set<Value*> lengthened(const Op& op, int targetPosition) const {
    std::set<Value*> values;
    for (Value* v : op.operands()) {
      Op* def = v->definingOp();
      if (!def || def->parentBlock() != &block_) continue;  // live throughout the block anyway
      bool onlyUser = true, liveAtTarget = false;
      for (const ir::Use& use : v->uses()) {
        if (use.user == &op) continue;
        onlyUser = false;
        Op* user = ancestorInBlock(use.user);
        if (!user || position(user) >= targetPosition) liveAtTarget = true;
      }
      if (liveAtTarget) continue;
      if (onlyUser && movable(*def)) {
        std::set<Value*> along = lengthened(*def, targetPosition);
        if (registers(along) < registers(v)) {
          values.insert(along.begin(), along.end());
          continue;
        }
      }
      values.insert(v);
    }
    return values;
  }

  // Sinking pays when the result's registers, freed until the target, outweigh those kept live longer.
  bool sinksTo(const Op& op, int targetPosition) const {
    return registers(lengthened(op, targetPosition)) < registers(op.result(0));
  }

  Block& block_;
  std::unordered_map<Op*, int> position_;
};

void sinkIn(Block& block) {
  for (auto& op : block.ops())
    for (unsigned r = 0; r < op->numRegions(); ++r) sinkIn(*op->region(r));
  BlockSinker(block).run();
}

class SinkToUsesPass : public Pass {
 public:
  const char* name() const override { return "sink-to-uses"; }
  void run(ir::Function& f) override { sinkIn(*f.body()); }
};

}  // namespace

std::unique_ptr<Pass> createSinkToUsesPass() { return std::make_unique<SinkToUsesPass>(); }

}  // namespace tessera::transforms
