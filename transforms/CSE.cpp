// Common subexpression elimination: a pure op equal to an earlier one that dominates it (same kind, operands,
// attributes and result types; reduce/scan also need structurally identical combine regions) is replaced by
// that earlier op. Scopes follow the region nesting: an op inside a `for`/`if`/`while` region may reuse an
// equivalent op from an enclosing block, never the reverse. Reduce/scan regions are isolated (they may only
// use their own values), so they start from an empty scope.
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <vector>

#include "transforms/PassManager.h"

namespace tessera::transforms {
namespace {

using ir::Block;
using ir::Op;
using ir::OpKind;
using ir::Value;

bool isCombineOp(const Op& op) { return op.is(OpKind::Reduce) || op.is(OpKind::Scan); }

bool isCSECandidate(const Op& op) {
  if (!op.info().has(ir::kPure) || op.numResults() == 0) return false;
  return op.numRegions() == 0 || isCombineOp(op);
}

// Operands in matching order: commutative ops compare their two operands as an unordered pair.
std::vector<Value*> matchOperands(const Op& op) {
  std::vector<Value*> vs = op.operands();
  if (op.info().has(ir::kCommutative) && vs.size() == 2 && std::less<Value*>()(vs[1], vs[0])) std::swap(vs[0], vs[1]);
  return vs;
}

bool sameHeader(const Op& a, const Op& b) {
  if (a.kind() != b.kind() || a.numResults() != b.numResults() || a.numRegions() != b.numRegions()) return false;
  for (unsigned i = 0; i < a.numResults(); ++i)
    if (a.result(i)->type() != b.result(i)->type()) return false;
  return a.attrs() == b.attrs();
}

// Structural equality of two blocks, mapping a's values onto b's (`map` holds the correspondences so far).
bool sameBlock(const Block& a, const Block& b, std::unordered_map<const Value*, const Value*>& map);

bool sameOpStructure(const Op& a, const Op& b, std::unordered_map<const Value*, const Value*>& map) {
  if (!sameHeader(a, b) || a.numOperands() != b.numOperands()) return false;
  for (unsigned i = 0; i < a.numOperands(); ++i) {
    auto it = map.find(a.operand(i));
    const Value* expected = it == map.end() ? a.operand(i) : it->second;
    if (expected != b.operand(i)) return false;
  }
  for (unsigned r = 0; r < a.numRegions(); ++r)
    if (!sameBlock(*a.region(r), *b.region(r), map)) return false;
  for (unsigned i = 0; i < a.numResults(); ++i) map[a.result(i)] = b.result(i);
  return true;
}

bool sameBlock(const Block& a, const Block& b, std::unordered_map<const Value*, const Value*>& map) {
  if (a.numArguments() != b.numArguments() || a.ops().size() != b.ops().size()) return false;
  for (unsigned i = 0; i < a.numArguments(); ++i) {
    if (a.argument(i)->type() != b.argument(i)->type()) return false;
    map[a.argument(i)] = b.argument(i);
  }
  for (auto ia = a.ops().begin(), ib = b.ops().begin(); ia != a.ops().end(); ++ia, ++ib)
    if (!sameOpStructure(**ia, **ib, map)) return false;
  return true;
}

bool equivalent(const Op& a, const Op& b) {
  if (!sameHeader(a, b) || matchOperands(a) != matchOperands(b)) return false;
  std::unordered_map<const Value*, const Value*> map;
  for (unsigned r = 0; r < a.numRegions(); ++r)
    if (!sameBlock(*a.region(r), *b.region(r), map)) return false;
  return true;
}

size_t hashCombine(size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2)); }

// Hash over what `equivalent` compares except region contents (equal ops must hash equally).
size_t hashOp(const Op& op) {
  size_t h = std::hash<int>()(static_cast<int>(op.kind()));
  for (Value* v : matchOperands(op)) h = hashCombine(h, std::hash<const void*>()(v));
  for (unsigned i = 0; i < op.numResults(); ++i) h = hashCombine(h, ir::TypeHash()(op.result(i)->type()));
  for (const auto& [key, attr] : op.attrs()) h = hashCombine(hashCombine(h, std::hash<std::string>()(key)), attr.hash());
  return h;
}

class ScopedCSE {
 public:
  bool run(ir::Function& f) {
    scopes_.clear();
    processBlock(f.body());
    return changed_;
  }

 private:
  using Scope = std::unordered_multimap<size_t, Op*>;

  Op* lookup(const Op& op, size_t h) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto [begin, end] = scope->equal_range(h);
      for (auto it = begin; it != end; ++it)
        if (equivalent(*it->second, op)) return it->second;
    }
    return nullptr;
  }

  void processBlock(Block* block) {
    scopes_.emplace_back();
    std::vector<Op*> ops;
    for (auto& op : block->ops()) ops.push_back(op.get());
    for (Op* op : ops) {
      if (isCombineOp(*op)) {
        // The combine region sees none of the enclosing values: give it a fresh scope stack.
        std::vector<Scope> saved;
        saved.swap(scopes_);
        for (unsigned r = 0; r < op->numRegions(); ++r) processBlock(op->region(r));
        scopes_.swap(saved);
      } else {
        for (unsigned r = 0; r < op->numRegions(); ++r) processBlock(op->region(r));
      }
      if (!isCSECandidate(*op)) continue;
      size_t h = hashOp(*op);
      if (Op* existing = lookup(*op, h)) {
        for (unsigned i = 0; i < op->numResults(); ++i) op->result(i)->replaceAllUsesWith(existing->result(i));
        block->erase(op);
        changed_ = true;
      } else {
        scopes_.back().emplace(h, op);
      }
    }
    scopes_.pop_back();
  }

  std::vector<Scope> scopes_;
  bool changed_ = false;
};

class CSEPass : public Pass {
 public:
  const char* name() const override { return "cse"; }
  void run(ir::Function& f) override {
    // One pre-order sweep suffices: uses are redirected as soon as an op is merged, so later ops already see
    // the surviving operands when they are looked up.
    ScopedCSE cse;
    cse.run(f);
  }
};

}  // namespace

std::unique_ptr<Pass> createCSEPass() { return std::make_unique<CSEPass>(); }

}  // namespace tessera::transforms
