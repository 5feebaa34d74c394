#include "transforms/analysis/ChainedDots.h"

#include <unordered_set>
#include <vector>

namespace tessera::transforms {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Value;

// Ops through which an element keeps its place in the tile (or is only replicated along a new dimension).
bool keepsElementsInPlace(const Op& op) {
  return op.info().has(ir::kElementwise) || op.is(OpKind::Broadcast) || op.is(OpKind::Hint) ||
         op.is(OpKind::ConvertLayout);
}

// The values a `for` hands `v` on as, when `v` is one of its carried values: yielded in its body, `v` is the next
// iteration's block argument and the loop's result; an init operand, the first iteration's block argument and the
// result (FlashAttention-3's next scores, carried to the iteration that folds them).
std::vector<const Value*> carriedOnAs(const ir::Use& use) {
  const Op* user = use.user;
  if (user->is(OpKind::Yield) && user->parentOp() && user->parentOp()->is(OpKind::For)) {
    const Op* loop = user->parentOp();
    return {loop->region(0)->argument(use.operandIndex + 1), loop->result(use.operandIndex)};
  }
  if (user->is(OpKind::For) && use.operandIndex >= 3)
    return {user->region(0)->argument(use.operandIndex - 2), user->result(use.operandIndex - 3)};
  return {};
}

// The values a carried value of a `for` comes from: its init operand and the value its body yields.
std::vector<const Value*> carriedFrom(const Value* v) {
  if (v->isBlockArg()) {
    const Op* loop = v->ownerBlock()->parentOp();
    if (!loop || !loop->is(OpKind::For) || v->index() == 0) return {};
    const unsigned i = v->index() - 1;
    const Op* yield = loop->region(0)->terminator();
    std::vector<const Value*> from{loop->operand(3 + i)};
    if (yield) from.push_back(yield->operand(i));
    return from;
  }
  const Op* def = v->definingOp();
  if (!def || !def->is(OpKind::For)) return {};
  for (unsigned i = 0; i < def->numResults(); ++i)
    if (def->result(i) == v) return {def->region(0)->terminator()->operand(i)};
  return {};
}

}  // namespace

bool feedsDotOperandA(const Op& dot) {
  if (!dot.is(OpKind::Dot)) return false;
  std::vector<const Value*> work = {dot.result(0)};
  std::unordered_set<const Value*> seen(work.begin(), work.end());
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    for (const ir::Use& u : v->uses()) {
      if (u.user->is(OpKind::Dot) && u.operandIndex == 0 && u.user != &dot) return true;
      if (u.user->is(OpKind::DotWait)) {  // result i is operand i, complete
        if (const Value* r = u.user->result(u.operandIndex); seen.insert(r).second) work.push_back(r);
        continue;
      }
      for (const Value* r : carriedOnAs(u))
        if (seen.insert(r).second) work.push_back(r);
      if (!keepsElementsInPlace(*u.user)) continue;
      for (const Value* r : u.user->results())
        if (seen.insert(r).second) work.push_back(r);
    }
  }
  return false;
}

bool operandAFromDot(const Op& dot) {
  if (!dot.is(OpKind::Dot)) return false;
  std::vector<const Value*> work = {dot.operand(0)};
  std::unordered_set<const Value*> seen(work.begin(), work.end());
  while (!work.empty()) {
    const Value* v = work.back();
    const Op* def = v->definingOp();
    work.pop_back();
    for (const Value* from : carriedFrom(v))
      if (from->type().isTile() && seen.insert(from).second) work.push_back(from);
    if (!def) continue;
    if (def->is(OpKind::Dot)) return def != &dot;
    if (def->is(OpKind::DotWait)) {  // result i is operand i, complete
      for (unsigned i = 0; i < def->numResults(); ++i)
        if (def->result(i) == v && seen.insert(def->operand(i)).second) work.push_back(def->operand(i));
      continue;
    }
    if (!keepsElementsInPlace(*def)) continue;
    for (const Value* operand : def->operands())
      if (operand->type().isTile() && seen.insert(operand).second) work.push_back(operand);
  }
  return false;
}

}  // namespace tessera::transforms
