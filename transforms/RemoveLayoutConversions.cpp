// remove-layout-conversions: deletes the convert_layout ops that layout assignment left but that do not need
// to move data, repeating until nothing changes:
//  * convert(x) to x's own layout is x; convert(convert(x)) converts x directly;
//  * a conversion of a value computed only from cheap ops (constant, arange, splat, and element-wise ops,
//    broadcast, expand_dims and hint over those) is replaced by recomputing the value in the needed layout
//    (the copies go right after the originals, so nothing moves into a loop);
//  * a conversion inside a loop of a value defined outside it is hoisted in front of the loop;
//  * a loop-carried value that every iteration converts from L1 to L2 on entry and back from L2 to L1 before
//    the yield is carried in L2 instead: one conversion before the loop and one after it;
//  * likewise when the next iteration's value is an element-wise update of the carried one with cheap operands
//    (a tile of pointers advanced by a splat stride): the update is recomputed in L2.
// Unused conversions and unused copies' originals are erased.
#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "ir/Layout.h"
#include "transforms/PassManager.h"
#include "transforms/Rematerialize.h"

namespace tessera::transforms {
namespace {

using ir::Layout;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

std::optional<Layout> layoutOf(const Value* v) { return Layout::ofType(v->type()); }

Op* nextOp(Op* op) {
  ir::Block* block = op->parentBlock();
  auto it = std::find_if(block->ops().begin(), block->ops().end(), [&](const auto& o) { return o.get() == op; });
  return std::next(it) == block->ops().end() ? nullptr : std::next(it)->get();
}

// Whether `v` is defined inside `region owner` (in one of its regions, at any depth).
bool definedInside(const Value* v, const Op* owner) {
  const ir::Block* block = v->isBlockArg() ? v->ownerBlock() : v->definingOp()->parentBlock();
  for (const Op* op = block->parentOp(); op; op = op->parentBlock()->parentOp())
    if (op == owner) return true;
  return false;
}

std::vector<Op*> conversionsOf(ir::Function& f) {
  std::vector<Op*> converts;
  f.walk([&](Op* op) {
    if (op->is(OpKind::ConvertLayout)) converts.push_back(op);
  });
  return converts;
}

class RemoveLayoutConversionsPass : public Pass {
 public:
  const char* name() const override { return "remove-layout-conversions"; }

  void run(ir::Function& f) override {
    for (bool changed = true; changed;) {
      changed = foldConversions(f);
      changed |= rematerialize(f);
      changed |= hoistInvariantConversions(f);
      changed |= carryConvertedValues(f);
      eraseDeadOps();
    }
  }

 private:
  // ---- identity conversions and chains
  bool foldConversions(ir::Function& f) {
    bool changed = false;
    for (Op* c : conversionsOf(f)) {
      Value* src = c->operand(0);
      if (Op* inner = src->definingOp(); inner && inner->is(OpKind::ConvertLayout)) {
        c->setOperand(0, inner->operand(0));
        maybeDead_.insert(inner);
        src = c->operand(0);
        changed = true;
      }
      if (src->type() == c->result(0)->type()) {
        c->result(0)->replaceAllUsesWith(src);
        maybeDead_.insert(c);
        changed = true;
      }
    }
    return changed;
  }

  // ---- recomputing cheap values in the needed layout (Rematerialize.h)
  bool rematerialize(ir::Function& f) {
    bool changed = false;
    for (Op* c : conversionsOf(f)) {
      if (!c->result(0)->hasUses() || maybeDead_.count(c)) continue;
      std::optional<Layout> target = layoutOf(c->result(0));
      Value* src = c->operand(0);
      if (!target || !target->isDistributed() || src->definingOp() == nullptr) continue;
      // Only worth it when the source is computed (a plain identity was folded already).
      int budget = Rematerializer::kBudget;
      if (!Rematerializer::possible(src, *target, budget)) continue;
      c->result(0)->replaceAllUsesWith(remat_.recompute(src, *target, maybeDead_));
      maybeDead_.insert(c);
      changed = true;
    }
    return changed;
  }

  // ---- loops
  bool hoistInvariantConversions(ir::Function& f) {
    bool changed = false;
    for (Op* c : conversionsOf(f)) {
      if (maybeDead_.count(c)) continue;
      Op* loop = c->parentBlock()->parentOp();
      if (!loop || !(loop->is(OpKind::For) || loop->is(OpKind::While))) continue;
      if (definedInside(c->operand(0), loop)) continue;
      std::unique_ptr<Op> moved = c->parentBlock()->remove(c);
      loop->parentBlock()->insertBefore(loop, std::move(moved));
      changed = true;
    }
    return changed;
  }

  bool carryConvertedValues(ir::Function& f) {
    std::vector<Op*> loops;
    f.walk([&](Op* op) {
      if (op->is(OpKind::For)) loops.push_back(op);
    });
    bool changed = false;
    for (Op* loop : loops) {
      ir::Block* body = loop->region(0);
      Op* yield = body->terminator();
      if (!yield) continue;
      for (unsigned i = 0; i < loop->numResults(); ++i)
        changed |= carryInConvertedLayout(loop, i, yield) || carryUpdateInConvertedLayout(loop, i, yield);
    }
    return changed;
  }

  // Carried value #i: every use of the region argument converts it to one layout L2, and the yielded value is
  // a conversion of a value already in L2. Carry L2 instead.
  bool carryInConvertedLayout(Op* loop, unsigned i, Op* yield) {
    Value* arg = loop->region(0)->argument(1 + i);
    if (!arg->type().isTile() || !arg->hasUses()) return false;
    std::optional<Type> converted;
    for (const ir::Use& u : arg->uses()) {
      if (!u.user->is(OpKind::ConvertLayout) || maybeDead_.count(u.user)) return false;
      Type t = u.user->result(0)->type();
      if (converted && *converted != t) return false;
      converted = t;
    }
    Op* back = yield->operand(i)->definingOp();
    if (!back || !back->is(OpKind::ConvertLayout) || back->operand(0)->type() != *converted) return false;

    Type original = arg->type();
    std::vector<Op*> entryConverts;
    for (const ir::Use& u : arg->uses()) entryConverts.push_back(u.user);
    for (Op* c : entryConverts) {
      c->result(0)->replaceAllUsesWith(arg);
      maybeDead_.insert(c);
    }
    arg->setType(*converted);
    yield->setOperand(i, back->operand(0));
    maybeDead_.insert(back);

    carryResultIn(loop, i, *converted, original);
    return true;
  }

  // Carried value #i: its region argument is used by conversions to one layout L2 and by the element-wise op
  // computing the yielded value (its only use), whose other tile operands can be recomputed in L2. Carry L2 and
  // compute the update in L2.
  bool carryUpdateInConvertedLayout(Op* loop, unsigned i, Op* yield) {
    Value* arg = loop->region(0)->argument(1 + i);
    Op* update = yield->operand(i)->definingOp();
    if (!arg->type().isTile() || !update || update->parentBlock() != loop->region(0) || update->numResults() != 1 ||
        !update->info().has(ir::kElementwise) || !update->info().has(ir::kPure) ||
        update->result(0)->uses().size() != 1)
      return false;
    std::optional<Type> converted;
    std::vector<Op*> entryConverts;
    for (const ir::Use& u : arg->uses()) {
      if (u.user == update) continue;
      if (!u.user->is(OpKind::ConvertLayout) || maybeDead_.count(u.user)) return false;
      Type t = u.user->result(0)->type();
      if (converted && *converted != t) return false;
      converted = t;
      entryConverts.push_back(u.user);
    }
    if (!converted) return false;
    const std::optional<Layout> target = Layout::ofType(*converted);
    if (!target || !target->isDistributed()) return false;
    for (Value* operand : update->operands()) {
      int budget = Rematerializer::kBudget;
      if (operand != arg && operand->type().isTile() && !Rematerializer::possible(operand, *target, budget))
        return false;
    }

    Type original = arg->type();
    for (Op* c : entryConverts) {
      c->result(0)->replaceAllUsesWith(arg);
      maybeDead_.insert(c);
    }
    arg->setType(*converted);
    for (unsigned k = 0; k < update->numOperands(); ++k)
      if (Value* operand = update->operand(k); operand != arg && operand->type().isTile())
        update->setOperand(k, remat_.recompute(operand, *target, maybeDead_));
    update->result(0)->setType(target->apply(update->result(0)->type()));

    carryResultIn(loop, i, *converted, original);
    return true;
  }

  // The loop's init #i is converted to `carried` in front of it and its result #i back to `original` after it
  // (the region argument and the yielded value are already of type `carried`).
  void carryResultIn(Op* loop, unsigned i, Type carried, Type original) {
    ir::Block* outer = loop->parentBlock();
    auto init = Op::create(OpKind::ConvertLayout, {loop->operand(3 + i)}, {carried}, {}, loop->loc());
    loop->setOperand(3 + i, outer->insertBefore(loop, std::move(init))->result(0));
    Value* result = loop->result(i);
    result->setType(carried);
    auto exit = Op::create(OpKind::ConvertLayout, {result}, {original}, {}, loop->loc());
    Value* exitValue = outer->insertBefore(nextOp(loop), std::move(exit))->result(0);
    result->replaceAllUsesWith(exitValue);
    exitValue->definingOp()->setOperand(0, result);
  }

  // ---- cleanup: erase ops this pass made unused, and then what only they used.
  void eraseDeadOps() {
    std::vector<Op*> work(maybeDead_.begin(), maybeDead_.end());
    maybeDead_.clear();
    std::set<const Op*> erased;
    while (!work.empty()) {
      Op* op = work.back();
      work.pop_back();
      if (erased.count(op) || !op->info().has(ir::kPure) || op->numRegions() != 0) continue;
      auto results = op->results();
      if (std::any_of(results.begin(), results.end(), [](Value* r) { return r->hasUses(); })) continue;
      std::vector<Op*> operandDefs;
      for (Value* operand : op->operands())
        if (Op* def = operand->definingOp()) operandDefs.push_back(def);
      remat_.forget(op);
      op->parentBlock()->erase(op);
      erased.insert(op);
      work.insert(work.end(), operandDefs.begin(), operandDefs.end());
    }
  }

  std::set<Op*> maybeDead_;
  Rematerializer remat_;
};

}  // namespace

std::unique_ptr<Pass> createRemoveLayoutConversionsPass() { return std::make_unique<RemoveLayoutConversionsPass>(); }

}  // namespace tessera::transforms
