// Dead code elimination: erases pure ops whose results are unused, unused results of `if`, and loop-carried
// values of `for`/`while` that only feed themselves. Ops with side effects (memory writes, printing,
// asserting) are always kept, and so is every `while` loop: it might not terminate.
#include <unordered_set>
#include <vector>

#include "transforms/PassManager.h"

namespace tessera::transforms {
namespace {

using ir::Block;
using ir::Op;
using ir::OpKind;
using ir::Value;

// True if erasing `op` (when its results are unused) cannot change what the program observably does.
bool isRemovable(const Op& op) {
  if (op.is(OpKind::While)) return false;
  if (op.info().has(ir::kTerminator)) return false;
  bool structured = op.is(OpKind::For) || op.is(OpKind::If);
  if (!structured && !op.info().has(ir::kPure)) return false;
  for (unsigned r = 0; r < op.numRegions(); ++r)
    for (const auto& inner : op.region(r)->ops())
      if (!inner->info().has(ir::kTerminator) && !isRemovable(*inner)) return false;
  return true;
}

bool resultsUnused(const Op& op) {
  for (unsigned i = 0; i < op.numResults(); ++i)
    if (op.result(i)->hasUses()) return false;
  return true;
}

// The op in `block` that is `op` or contains it; null if `op` is not nested in `block`.
Op* ancestorIn(Op* op, const Block* block) {
  while (op && op->parentBlock() != block) op = op->parentOp();
  return op;
}

// Liveness of the ops of one loop body. An op is live if it has side effects, or one of its results is used
// by a live op, or by the body's terminator in a position that is live (`liveYield(index)`).
class BodyLiveness {
 public:
  template <typename LiveYieldFn>
  BodyLiveness(Block* body, LiveYieldFn liveYield) : body_(body) {
    std::vector<Op*> ops;
    for (auto& op : body->ops()) ops.push_back(op.get());
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Op* op = *it;
      if (op == body->terminator()) continue;
      bool live = !isRemovable(*op);
      for (unsigned i = 0; i < op->numResults() && !live; ++i) live = valueUsedLive(op->result(i), liveYield);
      if (live) live_.insert(op);
    }
  }

  bool isLive(Op* op) const { return live_.count(op) != 0; }

  template <typename LiveYieldFn>
  bool valueUsedLive(Value* v, LiveYieldFn liveYield) const {
    for (const ir::Use& u : v->uses()) {
      Op* anc = ancestorIn(u.user, body_);
      if (!anc) return true;  // used outside the body: be conservative
      if (anc == body_->terminator() && anc == u.user) {
        if (liveYield(u.operandIndex)) return true;
      } else if (anc == body_->terminator() || isLive(anc)) {
        return true;
      }
    }
    return false;
  }

 private:
  Block* body_;
  std::unordered_set<Op*> live_;
};

// The body's non-live ops, last first (so erasing them in this order removes users before their operands).
std::vector<Op*> deadOps(Block* body, const BodyLiveness& liveness) {
  std::vector<Op*> dead;
  for (auto it = body->ops().rbegin(); it != body->ops().rend(); ++it)
    if (it->get() != body->terminator() && !liveness.isLive(it->get())) dead.push_back(it->get());
  return dead;
}

class DCE {
 public:
  bool run(ir::Function& f) {
    changed_ = false;
    processBlock(f.body());
    return changed_;
  }

 private:
  void processBlock(Block* block) {
    std::vector<Op*> ops;
    for (auto& op : block->ops()) ops.push_back(op.get());
    // Last to first: a value's users are visited (and possibly erased) before its definition.
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Op* op = *it;
      for (unsigned r = 0; r < op->numRegions(); ++r) processBlock(op->region(r));
      if (op->is(OpKind::If)) removeDeadIfResults(op);
      if (op->is(OpKind::For)) removeDeadCarried(op, /*isWhile=*/false);
      if (op->is(OpKind::While)) removeDeadCarried(op, /*isWhile=*/true);
      if (resultsUnused(*op) && isRemovable(*op)) {
        block->erase(op);
        changed_ = true;
      }
    }
  }

  void removeDeadIfResults(Op* op) {
    for (unsigned i = op->numResults(); i-- > 0;) {
      if (op->result(i)->hasUses()) continue;
      for (unsigned r = 0; r < 2; ++r) {
        Op* yield = op->region(r)->terminator();
        if (yield && yield->is(OpKind::Yield) && i < yield->numOperands()) yield->eraseOperand(i);
      }
      op->eraseResult(i);
      changed_ = true;
    }
  }

  // `for %lb, %ub, %step, %init...`: carried value i is init operand 3+i, body argument 1+i, yield operand i and
  // result i. `while %init...`: init operand i, argument i of both regions, after-yield operand i, result i.
  void removeDeadCarried(Op* op, bool isWhile) {
    unsigned numCarried = op->numResults();
    if (numCarried == 0) return;
    unsigned argBase = isWhile ? 0 : 1;
    unsigned initBase = isWhile ? 0 : 3;
    std::vector<Block*> bodies;
    for (unsigned r = 0; r < op->numRegions(); ++r) bodies.push_back(op->region(r));
    if (op->numOperands() != initBase + numCarried) return;  // malformed (unverified input): leave it alone
    for (Block* b : bodies)
      if (b->numArguments() != argBase + numCarried || !b->terminator()) return;
    Block* nextValues = bodies.back();  // the region whose yield produces the next carried values
    if (nextValues->terminator()->numOperands() != numCarried) return;

    std::vector<bool> live(numCarried);
    for (unsigned i = 0; i < numCarried; ++i) live[i] = op->result(i)->hasUses();
    auto liveYieldFor = [&](Block* b) {
      return [&, b](unsigned index) { return b != nextValues || (index < numCarried && live[index]); };
    };
    // Fixed point: a carried value is live if its result is used, or a live op of any region uses its argument.
    for (bool grew = true; grew;) {
      grew = false;
      for (Block* b : bodies) {
        BodyLiveness liveness(b, liveYieldFor(b));
        for (unsigned i = 0; i < numCarried; ++i)
          if (!live[i] && liveness.valueUsedLive(b->argument(argBase + i), liveYieldFor(b))) live[i] = grew = true;
      }
    }
    bool anyDead = false;
    for (unsigned i = 0; i < numCarried; ++i) anyDead |= !live[i];
    if (!anyDead) return;

    // Liveness is computed before the yield loses operands: liveYieldFor indexes the original positions.
    std::vector<std::pair<Block*, std::vector<Op*>>> toErase;
    for (Block* b : bodies) toErase.emplace_back(b, deadOps(b, BodyLiveness(b, liveYieldFor(b))));
    Op* yield = nextValues->terminator();
    for (unsigned i = numCarried; i-- > 0;)
      if (!live[i]) yield->eraseOperand(i);
    for (auto& [b, dead] : toErase)
      for (Op* d : dead) b->erase(d);
    for (unsigned i = numCarried; i-- > 0;) {
      if (live[i]) continue;
      for (Block* b : bodies) b->eraseArgument(argBase + i);
      op->eraseOperand(initBase + i);
      op->eraseResult(i);
    }
    changed_ = true;
  }

  bool changed_ = false;
};

class DCEPass : public Pass {
 public:
  const char* name() const override { return "dce"; }
  void run(ir::Function& f) override {
    DCE dce;
    // Removing a loop-carried value can make values outside the loop dead; a few rounds reach the fixed point.
    for (int round = 0; round < 16 && dce.run(f); ++round) {
    }
  }
};

}  // namespace

std::unique_ptr<Pass> createDCEPass() { return std::make_unique<DCEPass>(); }

}  // namespace tessera::transforms
