#include "transforms/analysis/Liveness.h"

#include <algorithm>

namespace tessera::transforms {

using ir::Op;
using ir::OpKind;
using ir::Value;

OpNumbering::OpNumbering(ir::Function& f) { number(*f.body()); }

void OpNumbering::number(ir::Block& block) {
  for (auto& op : block.ops()) {
    int64_t start = next_++;
    for (unsigned i = 0; i < op->numRegions(); ++i) number(*op->region(i));
    int64_t end = op->numRegions() ? next_++ : start;
    numbers_[op.get()] = {start, end};
  }
}

int64_t OpNumbering::start(const Op* op) const {
  auto it = numbers_.find(op);
  if (it == numbers_.end()) throw Error("shared-memory liveness: " + op->describe() + " is not in the function");
  return it->second.first;
}

int64_t OpNumbering::end(const Op* op) const {
  auto it = numbers_.find(op);
  if (it == numbers_.end()) throw Error("shared-memory liveness: " + op->describe() + " is not in the function");
  return it->second.second;
}

namespace {
bool definedInside(const Value* v, const Op* region) {
  const Op* p = v->definingOp() ? v->definingOp()->parentOp() : v->ownerBlock()->parentOp();
  for (; p; p = p->parentOp())
    if (p == region) return true;
  return false;
}
}  // namespace

LiveInterval OpNumbering::valueInterval(const Value* v) const {
  const Op* owner = v->definingOp() ? v->definingOp() : v->ownerBlock()->parentOp();
  LiveInterval live;
  live.start = owner ? start(owner) : 0;  // function arguments are live from the entry
  live.end = live.start;
  for (const ir::Use& use : v->uses()) {
    live.end = std::max(live.end, start(use.user));
    for (const Op* p = use.user->parentOp(); p; p = p->parentOp())
      if ((p->is(OpKind::For) || p->is(OpKind::While)) && !definedInside(v, p)) live.end = std::max(live.end, end(p));
  }
  return live;
}

LiveInterval OpNumbering::bufferInterval(const Value* buffer) const {
  LiveInterval live = valueInterval(buffer);
  for (const ir::Use& use : buffer->uses())
    if (use.user->is(OpKind::LocalLoad)) live.end = std::max(live.end, valueInterval(use.user->result(0)).end);
  return live;
}

}  // namespace tessera::transforms
