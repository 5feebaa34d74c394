#include "transforms/Rematerialize.h"

#include <algorithm>
#include <iterator>

namespace tessera::transforms {

using ir::Layout;
using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

std::optional<Layout> layoutOf(const Value* v) { return Layout::ofType(v->type()); }

// The layout a broadcast's operand takes for the result to have `layout`: the same one, except that a linear
// layout is over one shape: over the operand's, its coordinates along the broadcast dimensions are 0 (replicated).
Layout operandOfBroadcast(const Layout& layout, const std::vector<int64_t>& shape) {
  if (layout.kind() != Layout::Kind::Linear || layout.linearLayout().outShape() == shape) return layout;
  const ir::LinearLayout& linear = layout.linearLayout();
  std::vector<ir::LinearLayout::InDim> ins = linear.inDims();
  for (ir::LinearLayout::InDim& in : ins)
    for (ir::LinearLayout::Basis& basis : in.bases)
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] == 1) basis[d] = 0;
  std::vector<ir::LinearLayout::OutDim> outs;
  for (size_t d = 0; d < shape.size(); ++d) outs.push_back({ir::tensorDimName(static_cast<int>(d)), shape[d]});
  return Layout::linear(ir::LinearLayout(std::move(ins), std::move(outs)));
}

Op* nextOp(Op* op) {
  ir::Block* block = op->parentBlock();
  auto it = std::find_if(block->ops().begin(), block->ops().end(), [&](const auto& o) { return o.get() == op; });
  return std::next(it) == block->ops().end() ? nullptr : std::next(it)->get();
}

}  // namespace

bool Rematerializer::possible(const Value* v, const Layout& layout, int& budget) {
  if (layoutOf(v) == layout) return true;
  const Op* def = v->definingOp();
  if (!def || def->numResults() != 1 || def->numRegions() != 0 || --budget < 0) return false;
  switch (def->kind()) {
    case OpKind::Constant:
    case OpKind::Arange: return true;
    case OpKind::Splat: return true;  // from a scalar: any layout is free
    case OpKind::ConvertLayout: return possible(def->operand(0), layout, budget);
    case OpKind::ExpandDims:
      return !def->operand(0)->type().isTile() ||
             possible(def->operand(0), Layout::slice(static_cast<int>(def->intAttr("axis")), layout), budget);
    case OpKind::Broadcast:
      return possible(def->operand(0), operandOfBroadcast(layout, def->operand(0)->type().shape()), budget);
    case OpKind::Hint: return possible(def->operand(0), layout, budget);
    default: break;
  }
  if (!def->info().has(ir::kElementwise) || !def->info().has(ir::kPure)) return false;
  for (const Value* operand : def->operands())
    if (operand->type().isTile() && !possible(operand, layout, budget)) return false;
  return true;
}

Value* Rematerializer::recompute(Value* v, const Layout& layout, std::set<Op*>& copied) {
  if (layoutOf(v) == layout) return v;
  auto key = std::make_pair(v, layout.str());
  if (auto it = copies_.find(key); it != copies_.end()) return it->second;
  Op* def = v->definingOp();
  if (def->is(OpKind::ConvertLayout)) return copies_[key] = recompute(def->operand(0), layout, copied);
  std::vector<Value*> operands;
  for (Value* operand : def->operands()) {
    if (!operand->type().isTile()) {
      operands.push_back(operand);
    } else if (def->is(OpKind::ExpandDims)) {
      operands.push_back(recompute(operand, Layout::slice(static_cast<int>(def->intAttr("axis")), layout), copied));
    } else if (def->is(OpKind::Broadcast)) {
      operands.push_back(recompute(operand, operandOfBroadcast(layout, operand->type().shape()), copied));
    } else {
      operands.push_back(recompute(operand, layout, copied));
    }
  }
  auto copy = Op::create(def->kind(), operands, {layout.apply(v->type())}, def->attrs(), def->loc());
  copy->result(0)->setNameHint(v->nameHint());
  Value* result = def->parentBlock()->insertBefore(nextOp(def), std::move(copy))->result(0);
  copied.insert(def);
  return copies_[key] = result;
}

void Rematerializer::forget(const Op* erased) {
  for (auto it = copies_.begin(); it != copies_.end();) {
    bool stale = it->first.first->definingOp() == erased || it->second->definingOp() == erased;
    it = stale ? copies_.erase(it) : std::next(it);
  }
}

}  // namespace tessera::transforms
