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
