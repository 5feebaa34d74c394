// assign-layouts: every tile value gets a distributed layout (its type's encoding).
//
//  1. The layout policy's preferences (dot operands, ...) become anchors: convert_layout ops around the op. A dot
//     whose A operand the target takes from registers (LayoutPolicy::dotOperandARegisterLayout) is marked so.
//  2. Values that must share one layout are grouped (union-find): the operands and results of element-wise
//     ops, memory ops, broadcast, hint and scan; dot's accumulator and result; a loop's init, region argument,
//     yielded value and result; an if's yields and result. reduce and expand_dims relate two groups by a slice:
//     reduce(x, axis) is slice(axis, layout(x)); expand_dims(y, axis) needs y in slice(axis, layout(result)).
//  3. Each group takes a layout: an encoding one of its values already has (coalesced memory ops are anchors);
//     else one derived through a slice relation (also an expand_dims result's from its operand's, where no
//     broadcast widens the new dimension); else the layout of a convert_layout it is connected to (so
//     that convert becomes redundant); else defaultBlockedLayout of its largest shape.
//  4. Where an op still sees a layout other than the one it needs (conflicting anchors, slices), a
//     convert_layout is inserted. remove-layout-conversions then removes what is redundant.
#include "transforms/AssignLayouts.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <unordered_map>

#include "ir/Builder.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::transforms {

using ir::Layout;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

std::optional<Layout> DefaultLayoutPolicy::operandLayout(const Op& op, unsigned index) const {
  // Only the accumulator: every dot lowering stages a and b through shared memory by their coordinates, from any
  // layout, so a preference there would only add a conversion (another shared-memory round trip and the
  // registers of a second copy) in front of the staging.
  if (!op.is(OpKind::Dot) || index != 2 || index >= op.numOperands() || !op.operand(index)->type().isTile())
    return std::nullopt;
  return ir::defaultBlockedLayout(op.operand(index)->type().shape(), options_.numWarps, options_.warpSize);
}

std::optional<Layout> DefaultLayoutPolicy::resultLayout(const Op& op, unsigned index) const {
  if (!op.is(OpKind::Dot) || index >= op.numResults() || !op.result(index)->type().isTile()) return std::nullopt;
  return ir::defaultBlockedLayout(op.result(index)->type().shape(), options_.numWarps, options_.warpSize);
}

namespace {

// The op right after `op` in its block (null at the end): where "insert after op" inserts.
Op* nextOp(Op* op) {
  ir::Block* block = op->parentBlock();
  auto it = std::find_if(block->ops().begin(), block->ops().end(), [&](const auto& o) { return o.get() == op; });
  return std::next(it) == block->ops().end() ? nullptr : std::next(it)->get();
}

Value* convertBefore(Op* before, Value* v, Type to) {
  ir::Builder b;
  b.setInsertionPoint(before);
  b.setLoc(before->loc());
  return b.create1(OpKind::ConvertLayout, {v}, to);
}

// Gives result `r` of `op` the type `to` and converts it back after `op` for its existing users.
void retypeResultWithConvertBack(Op* op, Value* r, Type to) {
  Type original = r->type();
  if (original == to) return;
  r->setType(to);
  ir::Builder b(op->parentBlock(), nextOp(op));
  b.setLoc(op->loc());
  Value* back = b.create1(OpKind::ConvertLayout, {r}, original);
  r->replaceAllUsesWith(back);
  back->definingOp()->setOperand(0, r);
}

std::optional<Layout> layoutOf(const Value* v) { return Layout::ofType(v->type()); }

// The layout of expand_dims(x, axis) for x of `shape` in `layout` that holds every element where x holds it: its
// slice at `axis` is `layout` (as linear layouts). A blocked layout stays blocked (the new dimension slowest).
Layout withUnitDimension(const Layout& layout, const std::vector<int64_t>& shape, int axis) {
  if (layout.kind() == Layout::Kind::Blocked) {
    auto insertOne = [&](std::vector<int64_t> v) {
      v.insert(v.begin() + axis, 1);
      return v;
    };
    std::vector<int64_t> order;
    for (int64_t d : layout.order()) order.push_back(d >= axis ? d + 1 : d);
    order.push_back(axis);
    return Layout::blocked(insertOne(layout.sizePerThread()), insertOne(layout.threadsPerWarp()),
                           insertOne(layout.warpsPerCTA()), order);
  }
  const ir::LinearLayout linear = layout.toLinear(shape);
  std::vector<ir::LinearLayout::InDim> ins = linear.inDims();
  for (ir::LinearLayout::InDim& in : ins)
    for (ir::LinearLayout::Basis& basis : in.bases) basis.insert(basis.begin() + axis, 0);
  std::vector<ir::LinearLayout::OutDim> outs;
  std::vector<int64_t> expanded = shape;
  expanded.insert(expanded.begin() + axis, 1);
  for (size_t d = 0; d < expanded.size(); ++d) outs.push_back({ir::tensorDimName(static_cast<int>(d)), expanded[d]});
  return Layout::linear(ir::LinearLayout(std::move(ins), std::move(outs)));
}

// Ops whose tile operands and results all share one layout.
bool sharesOneLayout(const Op& op) {
  switch (op.kind()) {
    case OpKind::Load:
    case OpKind::Store:
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS:
    case OpKind::Broadcast:
    case OpKind::Hint:
    case OpKind::Scan: return true;
    default: return op.info().has(ir::kElementwise);
  }
}

class AssignLayoutsPass : public Pass {
 public:
  AssignLayoutsPass(const PassOptions& options, std::shared_ptr<const LayoutPolicy> policy)
      : options_(options), policy_(std::move(policy)) {}
  const char* name() const override { return "assign-layouts"; }

  void run(ir::Function& f) override {
    applyPolicy(f);
    collectValues(f);
    groupValues(f);
    chooseLayouts(f);
    applyLayouts();
    insertRequiredConversions(f);
    checkEveryTileHasLayout(f);
  }

 private:
  // ---- 1. policy anchors
  void applyPolicy(ir::Function& f) {
    std::vector<Op*> ops;
    f.walk([&](Op* op) { ops.push_back(op); });
    for (Op* op : ops) {
      for (unsigned i = 0; i < op->numOperands(); ++i) {
        Value* v = op->operand(i);
        if (!v->type().isTile()) continue;
        if (std::optional<Layout> want = policy_->operandLayout(*op, i); want && layoutOf(v) != want)
          op->setOperand(i, convertBefore(op, v, want->apply(v->type())));
      }
      for (unsigned i = 0; i < op->numResults(); ++i) {
        Value* r = op->result(i);
        if (!r->type().isTile()) continue;
        std::optional<Layout> want = policy_->resultLayout(*op, i);
        if (!want || layoutOf(r) == want) continue;
        // A result without a layout simply takes the wanted one: it then anchors its users' group, which otherwise
        // could take a layout propagated from unrelated index arithmetic (through slices) and convert every time.
        if (!layoutOf(r))
          r->setType(want->apply(r->type()));
        else
          retypeResultWithConvertBack(op, r, want->apply(r->type()));
      }
      if (!op->is(OpKind::Dot)) continue;
      if (std::optional<Layout> fragments = policy_->dotOperandARegisterLayout(*op)) {
        Value* a = op->operand(0);
        if (layoutOf(a) != fragments) op->setOperand(0, convertBefore(op, a, fragments->apply(a->type())));
        op->setAttr(kDotAInRegisters, ir::Attr::boolean(true));
      }
    }
  }

  // ---- 2. grouping
  void collectValues(ir::Function& f) {
    values_.clear();
    index_.clear();
    auto add = [&](Value* v) {
      if (v->type().isTile() && !index_.count(v)) {
        index_[v] = values_.size();
        values_.push_back(v);
      }
    };
    for (unsigned i = 0; i < f.numArguments(); ++i) add(f.argument(i));
    f.walk([&](Op* op) {
      for (unsigned r = 0; r < op->numRegions(); ++r)
        for (Value* a : op->region(r)->arguments()) add(a);
      for (Value* r : op->results()) add(r);
    });
    parent_.resize(values_.size());
    std::iota(parent_.begin(), parent_.end(), size_t(0));
    sliceEdges_.clear();
  }

  size_t find(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  size_t groupOf(const Value* v) { return find(index_.at(v)); }
  void unite(const Value* a, const Value* b) {
    if (!a->type().isTile() || !b->type().isTile()) return;
    size_t x = groupOf(a), y = groupOf(b);
    if (x == y) return;
    if (x > y) std::swap(x, y);
    parent_[y] = x;  // the earlier value stays the root: groups are ordered by their first value
  }

  void groupValues(ir::Function& f) {
    f.walk([&](Op* op) {
      if (sharesOneLayout(*op)) {
        std::vector<Value*> tiles;
        for (Value* v : op->operands()) tiles.push_back(v);
        for (Value* v : op->results()) tiles.push_back(v);
        for (size_t i = 1; i < tiles.size(); ++i) unite(tiles[0], tiles[i]);
        return;
      }
      switch (op->kind()) {
        case OpKind::Dot: unite(op->operand(2), op->result(0)); break;
        case OpKind::Cat:
        case OpKind::Join: unite(op->operand(0), op->operand(1)); break;  // one operand type (their results differ)
        case OpKind::Reduce: {
          unsigned n = op->numResults();
          for (unsigned i = 1; i < n; ++i) {
            unite(op->operand(0), op->operand(i));
            unite(op->result(0), op->result(i));
          }
          if (op->result(0)->type().isTile())
            sliceEdges_.push_back({op->result(0), static_cast<int>(op->intAttr("axis")), op->operand(0)});
          break;
        }
        case OpKind::ExpandDims:
          if (op->operand(0)->type().isTile())
            sliceEdges_.push_back({op->operand(0), static_cast<int>(op->intAttr("axis")), op->result(0)});
          break;
        case OpKind::For: {
          ir::Block* body = op->region(0);
          Op* yield = body->terminator();
          for (unsigned i = 0; i < op->numResults(); ++i) {
            unite(op->operand(3 + i), body->argument(1 + i));
            unite(op->operand(3 + i), op->result(i));
            if (yield) unite(op->operand(3 + i), yield->operand(i));
          }
          break;
        }
        case OpKind::If:
          for (unsigned r = 0; r < 2; ++r)
            if (Op* yield = op->region(r)->terminator())
              for (unsigned i = 0; i < op->numResults(); ++i) unite(op->result(i), yield->operand(i));
          break;
        case OpKind::While: {
          Op* afterYield = op->region(1)->terminator();
          for (unsigned i = 0; i < op->numOperands(); ++i) {
            unite(op->operand(i), op->region(0)->argument(i));
            unite(op->operand(i), op->region(1)->argument(i));
            unite(op->operand(i), op->result(i));
            if (afterYield) unite(op->operand(i), afterYield->operand(i));
          }
          break;
        }
        default: break;
      }
    });
  }

  // ---- 3. choosing each group's layout
  std::optional<Layout> knownLayout(const Value* v) {
    if (std::optional<Layout> own = layoutOf(v)) return own;
    auto it = groupLayout_.find(groupOf(v));
    return it == groupLayout_.end() ? std::nullopt : std::optional<Layout>(it->second);
  }

  void chooseLayouts(ir::Function& f) {
    groupLayout_.clear();
    // Anchors: the first value of each group that already has an encoding.
    for (Value* v : values_) {
      std::optional<Layout> own = layoutOf(v);
      if (!own) continue;
      if (!own->isDistributed())
        throw Error("assign-layouts: tile value of type " + v->type().str() +
                    " has a shared-memory layout; values in registers need distributed layouts");
      groupLayout_.emplace(groupOf(v), *own);
    }
    std::vector<Op*> converts;
    f.walk([&](Op* op) {
      if (op->is(OpKind::ConvertLayout)) converts.push_back(op);
    });
    for (;;) {
      propagateThroughSlices();
      std::optional<size_t> pending;
      for (Value* v : values_)
        if (!groupLayout_.count(groupOf(v))) {
          pending = groupOf(v);
          break;
        }
      if (!pending) return;
      if (assignFromConversions(converts)) continue;
      groupLayout_.emplace(*pending, defaultFor(*pending));
    }
  }

  // reduce results and expand_dims operands are slices of their partner's layout, in both directions.
  void propagateThroughSlices() {
    for (bool changed = true; changed;) {
      changed = false;
      for (const SliceEdge& e : sliceEdges_) {
        size_t sliceGroup = groupOf(e.sliced), parentGroup = groupOf(e.parent);
        auto s = groupLayout_.find(sliceGroup), p = groupLayout_.find(parentGroup);
        if (s == groupLayout_.end() && p != groupLayout_.end()) {
          groupLayout_.emplace(sliceGroup, Layout::slice(e.axis, p->second));
          changed = true;
        } else if (p == groupLayout_.end() && s != groupLayout_.end() && s->second.kind() == Layout::Kind::Slice &&
                   s->second.sliceDim() == e.axis) {
          groupLayout_.emplace(parentGroup, s->second.parent());
          changed = true;
        } else if (p == groupLayout_.end() && s != groupLayout_.end() && s->second.isDistributed() &&
                   everyValueHasShape(parentGroup, e.parent->type().shape())) {
          // No broadcast widens the unit dimension (that would spread threads over it): hold the elements where
          // the operand holds them, so that the expand_dims moves nothing (a lower-rank tile stored through a
          // descriptor keeps the dot's layout instead of going through shared memory to a default one).
          groupLayout_.emplace(parentGroup, withUnitDimension(s->second, e.sliced->type().shape(), e.axis));
          changed = true;
        }
      }
    }
  }

  bool everyValueHasShape(size_t group, const std::vector<int64_t>& shape) {
    return std::all_of(values_.begin(), values_.end(),
                       [&](Value* v) { return groupOf(v) != group || v->type().shape() == shape; });
  }

  // The first group (in program order) without a layout that is connected by a convert_layout to a value
  // whose layout is known takes the most common such layout. Returns false if there is no such group.
  bool assignFromConversions(const std::vector<Op*>& converts) {
    std::map<size_t, std::vector<Layout>> candidates;
    for (Op* c : converts) {
      Value* src = c->operand(0);
      Value* dst = c->result(0);
      if (!index_.count(src) || !index_.count(dst)) continue;
      if (!groupLayout_.count(groupOf(src)) && !layoutOf(src))
        if (std::optional<Layout> l = knownLayout(dst)) candidates[groupOf(src)].push_back(*l);
      if (!groupLayout_.count(groupOf(dst)) && !layoutOf(dst))
        if (std::optional<Layout> l = knownLayout(src)) candidates[groupOf(dst)].push_back(*l);
    }
    if (candidates.empty()) return false;
    auto& [group, layouts] = *candidates.begin();  // lowest root index = earliest in program order
    const Layout* best = &layouts.front();
    size_t bestCount = 0;
    for (const Layout& l : layouts) {
      size_t count = std::count(layouts.begin(), layouts.end(), l);
      if (count > bestCount) {
        best = &l;
        bestCount = count;
      }
    }
    groupLayout_.emplace(group, *best);
    return true;
  }

  Layout defaultFor(size_t group) {
    const Value* largest = nullptr;
    for (Value* v : values_)
      if (groupOf(v) == group && (!largest || v->type().numElements() > largest->type().numElements())) largest = v;
    return ir::defaultBlockedLayout(largest->type().shape(), options_.numWarps, options_.warpSize);
  }

  void applyLayouts() {
    for (Value* v : values_)
      if (!layoutOf(v)) v->setType(groupLayout_.at(groupOf(v)).apply(v->type()));
  }

  // ---- 4. conversions where an op needs a layout its operand does not have
  void insertRequiredConversions(ir::Function& f) {
    std::vector<Op*> ops;
    f.walk([&](Op* op) { ops.push_back(op); });
    for (Op* op : ops) {
      if (sharesOneLayout(*op)) {
        // The op's layout is its result's (store: its pointers'); scalar ops have none.
        Value* reference = op->numResults() ? op->result(0) : op->operand(0);
        if (reference->type().isTile()) convertOperands(op, 0, op->numOperands(), *layoutOf(reference));
        continue;
      }
      switch (op->kind()) {
        case OpKind::Dot: convertOperands(op, 2, 3, *layoutOf(op->result(0))); break;
        case OpKind::Cat:
        case OpKind::Join: convertOperands(op, 1, 2, *layoutOf(op->operand(0))); break;
        case OpKind::ExpandDims:
          if (Value* x = op->operand(0); x->type().isTile()) {
            const Layout wanted = Layout::slice(static_cast<int>(op->intAttr("axis")), *layoutOf(op->result(0)));
            // An operand held as the slice holds it (withUnitDimension) needs no conversion, only other names.
            if (layoutOf(x)->toLinear(x->type().shape()) != wanted.toLinear(x->type().shape()))
              convertOperandTo(op, 0, wanted.apply(x->type()));
          }
          break;
        case OpKind::Reduce: {
          Layout input = *layoutOf(op->operand(0));
          convertOperands(op, 0, op->numOperands(), input);
          for (Value* r : op->results())
            if (r->type().isTile())
              retypeResultWithConvertBack(op, r, Layout::slice(static_cast<int>(op->intAttr("axis")), input).apply(r->type()));
          break;
        }
        case OpKind::For: {
          ir::Block* body = op->region(0);
          for (unsigned i = 0; i < op->numResults(); ++i) {
            Type carried = body->argument(1 + i)->type();
            if (!carried.isTile()) continue;
            convertOperandTo(op, 3 + i, carried);
            if (Op* yield = body->terminator()) convertOperandTo(yield, i, carried);
            retypeResultWithConvertBack(op, op->result(i), carried);
          }
          break;
        }
        case OpKind::If:
          for (unsigned i = 0; i < op->numResults(); ++i) {
            if (!op->result(i)->type().isTile()) continue;
            for (unsigned r = 0; r < 2; ++r)
              if (Op* yield = op->region(r)->terminator()) convertOperandTo(yield, i, op->result(i)->type());
          }
          break;
        case OpKind::While: {
          ir::Block* before = op->region(0);
          ir::Block* after = op->region(1);
          for (unsigned i = 0; i < op->numOperands(); ++i) {
            Type carried = before->argument(i)->type();
            if (!carried.isTile()) continue;
            convertOperandTo(op, i, carried);
            after->argument(i)->setType(carried);  // its users are visited later and convert as needed
            if (Op* yield = after->terminator()) convertOperandTo(yield, i, carried);
            retypeResultWithConvertBack(op, op->result(i), carried);
          }
          break;
        }
        default: break;
      }
    }
  }

  void convertOperands(Op* op, unsigned first, unsigned end, const Layout& layout) {
    for (unsigned i = first; i < end; ++i)
      if (op->operand(i)->type().isTile()) convertOperandTo(op, i, layout.apply(op->operand(i)->type()));
  }

  static void convertOperandTo(Op* op, unsigned i, Type to) {
    if (op->operand(i)->type() != to) op->setOperand(i, convertBefore(op, op->operand(i), to));
  }

  static void checkEveryTileHasLayout(ir::Function& f) {
    auto check = [](const Value* v) {
      if (v->type().isTile() && !v->type().encoding())
        throw Error("assign-layouts: internal error: a value of type " + v->type().str() + " got no layout");
    };
    for (unsigned i = 0; i < f.numArguments(); ++i) check(f.argument(i));
    f.walk([&](Op* op) {
      for (Value* r : op->results()) check(r);
      for (unsigned r = 0; r < op->numRegions(); ++r)
        for (Value* a : op->region(r)->arguments()) check(a);
    });
  }

  struct SliceEdge {
    const Value* sliced;  // its layout is slice(axis, parent's layout)
    int axis;
    const Value* parent;
  };

  PassOptions options_;
  std::shared_ptr<const LayoutPolicy> policy_;
  std::vector<Value*> values_;  // every tile value, in program order
  std::unordered_map<const Value*, size_t> index_;
  std::vector<size_t> parent_;  // union-find over values_
  std::vector<SliceEdge> sliceEdges_;
  std::map<size_t, Layout> groupLayout_;  // group root -> layout
};

}  // namespace

std::unique_ptr<Pass> createAssignLayoutsPass(const PassOptions& options, std::shared_ptr<const LayoutPolicy> policy) {
  if (!policy) policy = std::make_shared<DefaultLayoutPolicy>(options);
  return std::make_unique<AssignLayoutsPass>(options, std::move(policy));
}

std::unique_ptr<Pass> createAssignLayoutsPass(const PassOptions& options) {
  return createAssignLayoutsPass(options, nullptr);
}

}  // namespace tessera::transforms
