// transpose-loads: a `trans` of a loaded tile becomes a load at transposed addresses, so that the transpose costs
// nothing. What a kernel gets when it writes attention's scores as Triton's tutorials do, `dot(q, trans(k))` with K
// loaded in its own row-major [BN, d] blocks:
//
//   %kp = addptr (splat %k), (add (broadcast (mul (expand_dims %n, 1), ..)), (broadcast (expand_dims %d, 0)))
//   %kb = load %kp, %mask : tile<64x128xf16>
//   %kt = trans %kb {perm = [1, 0]} : tile<128x64xf16>
//   %s  = dot %q, %kt, %acc
//
// becomes a load of K^T directly,
//
//   %kp' = addptr (splat %k), (add (broadcast (mul (expand_dims %n, 0), ..)), (broadcast (expand_dims %d, 1)))
//   %kt  = load %kp', %mask' : tile<128x64xf16>
//   %s   = dot %q, %kt, %acc
//
// the load that async-copy-dot-operands turns into a copy into the shared buffer the dot reads (a `trans` between
// them kept the operand in registers, exchanged it through shared memory every iteration and never pipelined its
// loads: up to 255 registers and 56 spilled bytes in sm_90a attention). coalesce then lays the load out along its
// contiguous dimension, now dimension 0.
//
// Only a transpose that feeds a dot operand (directly or through casts) is rewritten: that is where the load can
// then skip registers. A load with other users is rewritten only when they too are dot operands (the attention
// backward's Q and dO, each an operand of one product and, transposed, of another): the block is then read twice,
// once per orientation, the second time mostly from cache, and each read goes by an asynchronous copy to the buffer
// its dot reads, where the trans would hold the block in registers and exchange it through shared memory every
// iteration (and, on NVPTX, keep its dots off wgmma). Any other user keeps the load and its trans as they are.
// Elsewhere (a transposing copy) the trans's own exchange, its buffer padded for transposes, stays: the load at
// transposed addresses would need a convert_layout to the consumer's layout instead, whose exchange the emulator
// finds bank conflicts in at 64x128 and 128x128 blocks (tessera-gpu-check's transposes).
//
// The addresses (and the mask and `other`) are transposed by rebuilding their expressions with permuted shapes,
// down to leaves whose transposes are free: splats and uniform constants (any shape), expand_dims (the inserted
// unit dimension moves), broadcasts, element-wise ops, hints (their per-dimension facts permuted) and other
// `trans` ops (composed). An expression that reaches anything else (a block argument, a load, a reduction, a
// reshape) is left alone, and so is the load: a `trans` of addresses would only move the exchange. The rewrite
// copies what it transposes (the originals keep their other users; dce drops the rest) and gives up past
// kBudget new ops. Runs before the layout passes (its tiles have no layouts) and after canonicalize-pointers,
// whose rebuilt loop addresses (a splatted base plus offsets) transpose freely where loop-carried pointers would not.
#include <map>
#include <vector>

#include "ir/Builder.h"
#include "transforms/PassManager.h"

namespace tessera::transforms {
namespace {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;
using Perm = std::vector<int64_t>;

constexpr int kBudget = 64;  // new ops per load: address expressions are a few ops per dimension

bool isIdentity(const Perm& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// S'[i] = S[perm[i]] (docs/IR.md, `trans`).
std::vector<int64_t> permuted(const std::vector<int64_t>& v, const Perm& perm) {
  std::vector<int64_t> out;
  for (int64_t p : perm) out.push_back(v[static_cast<size_t>(p)]);
  return out;
}

Type transposedType(Type t, const Perm& perm) { return Type::tile(permuted(t.shape(), perm), t.element()); }

// Builds transposes of values by rebuilding their expressions (the file comment's leaves), each new op right
// before the op it copies, so that it sees the same operands and stays as loop-invariant as the original.
class Transposer {
 public:
  // The transpose of `v` by `perm`, or null where it is not free (nothing is built then, see possible()).
  Value* transpose(Value* v, const Perm& perm) {
    if (isIdentity(perm)) return v;
    const auto key = std::make_pair(v, perm);
    if (auto it = built_.find(key); it != built_.end()) return it->second;
    Value* result = build(v, perm);
    built_[key] = result;
    return result;
  }

  // Whether transpose() succeeds for `v` within the budget, without building anything.
  bool possible(Value* v, const Perm& perm) {
    int ops = 0;
    std::map<std::pair<Value*, Perm>, bool> seen;
    return check(v, perm, ops, seen);
  }

 private:
  // ExpandDims at `axis` transposed by `perm`: the unit dimension lands where perm names `axis`, and the operand is
  // transposed by what perm does to the other dimensions.
  static std::pair<int64_t, Perm> splitExpandDims(int64_t axis, const Perm& perm) {
    int64_t unit = 0;
    Perm inner;
    for (size_t j = 0; j < perm.size(); ++j) {
      if (perm[j] == axis) unit = static_cast<int64_t>(j);
      else inner.push_back(perm[j] - (perm[j] > axis ? 1 : 0));
    }
    return {unit, inner};
  }

  // trans(trans(x, inner), outer) = trans(x, c) with c[i] = inner[outer[i]].
  static Perm compose(const Perm& inner, const Perm& outer) {
    Perm c;
    for (int64_t o : outer) c.push_back(inner[static_cast<size_t>(o)]);
    return c;
  }

  static bool freeLeaf(const Op& op) {
    return op.is(OpKind::Splat) || (op.is(OpKind::Constant) && op.numOperands() == 0);
  }

  bool check(Value* v, const Perm& perm, int& ops, std::map<std::pair<Value*, Perm>, bool>& seen) {
    if (isIdentity(perm)) return true;
    const auto key = std::make_pair(v, perm);
    if (auto it = seen.find(key); it != seen.end()) return it->second;
    bool ok = false;
    const Op* def = v->definingOp();
    if (def && v->type().isTile() && !v->type().encoding() && ++ops <= kBudget) {
      if (freeLeaf(*def)) {
        ok = true;
      } else if (def->is(OpKind::ExpandDims)) {
        ok = check(def->operand(0), splitExpandDims(def->intAttr("axis"), perm).second, ops, seen);
      } else if (def->is(OpKind::Broadcast) || def->is(OpKind::Hint)) {
        ok = check(def->operand(0), perm, ops, seen);
      } else if (def->is(OpKind::Trans)) {
        ok = check(def->operand(0), compose(def->attr("perm").getIntArray(), perm), ops, seen);
      } else if (def->info().has(ir::kElementwise) && def->numResults() == 1) {
        ok = true;
        for (Value* operand : def->operands())
          ok = ok && (!operand->type().isTile() || check(operand, perm, ops, seen));
      }
    }
    seen[key] = ok;
    return ok;
  }

  Value* build(Value* v, const Perm& perm) {
    Op* def = v->definingOp();
    ir::Builder b(def->parentBlock(), def);
    b.setLoc(def->loc());
    const Type type = transposedType(v->type(), perm);
    if (def->is(OpKind::Splat) || def->is(OpKind::Constant))
      return b.create1(def->kind(), def->operands(), type, def->attrs());
    if (def->is(OpKind::ExpandDims)) {
      const auto [unit, inner] = splitExpandDims(def->intAttr("axis"), perm);
      return b.create1(OpKind::ExpandDims, {transpose(def->operand(0), inner)}, type,
                       {{"axis", ir::Attr::integer(unit)}});
    }
    if (def->is(OpKind::Broadcast)) return b.create1(OpKind::Broadcast, {transpose(def->operand(0), perm)}, type);
    if (def->is(OpKind::Trans)) return transpose(def->operand(0), compose(def->attr("perm").getIntArray(), perm));
    if (def->is(OpKind::Hint)) {
      ir::AttrDict facts = def->attrs();  // one entry per dimension, permuted with them
      for (auto& [name, fact] : facts)
        if (fact.isArray()) fact = ir::Attr::intArray(permuted(fact.getIntArray(), perm));
      return b.create1(OpKind::Hint, {transpose(def->operand(0), perm)}, type, facts);
    }
    std::vector<Value*> operands;  // element-wise: scalar operands as they are
    for (Value* operand : def->operands())
      operands.push_back(operand->type().isTile() ? transpose(operand, perm) : operand);
    return b.create1(def->kind(), operands, Type::tile(type.shape(), def->result(0)->type().element()),
                     def->attrs());
  }

  std::map<std::pair<Value*, Perm>, Value*> built_;
};

class TransposeLoadsPass : public Pass {
 public:
  const char* name() const override { return "transpose-loads"; }

  void run(ir::Function& f) override {
    std::vector<Op*> transposes;
    f.walk([&](Op* op) {
      if (op->is(OpKind::Trans)) transposes.push_back(op);
    });
    for (Op* trans : transposes) rewrite(*trans);
  }

 private:
  // Whether `v` is a dot's A or B, directly or through casts (each its operand's only user).
  static bool feedsDotOperand(const Value* v) {
    while (v->uses().size() == 1) {
      const ir::Use& use = v->uses()[0];
      if (use.user->is(OpKind::Dot)) return use.operandIndex < 2;
      if (!use.user->is(OpKind::Cast)) return false;
      v = use.user->result(0);
    }
    return false;
  }

  // Whether every user of `loaded` but `trans` reads it as a dot operand (directly or through casts).
  static bool othersFeedDots(const Value* loaded, const Op& trans) {
    for (const ir::Use& use : loaded->uses())
      if (use.user != &trans && !(use.user->is(OpKind::Dot) && use.operandIndex < 2) &&
          !(use.user->is(OpKind::Cast) && feedsDotOperand(use.user->result(0))))
        return false;
    return true;
  }

  static void rewrite(Op& trans) {
    Value* loaded = trans.operand(0);
    Op* load = loaded->definingOp();
    if (!load || !load->is(OpKind::Load) || loaded->type().encoding()) return;
    if (!feedsDotOperand(trans.result(0)) || !othersFeedDots(loaded, trans)) return;
    const Perm perm = trans.attr("perm").getIntArray();
    Transposer transposer;
    for (Value* operand : load->operands())
      if (operand->type().isTile() && !transposer.possible(operand, perm)) return;
    std::vector<Value*> operands;
    for (Value* operand : load->operands())
      operands.push_back(operand->type().isTile() ? transposer.transpose(operand, perm) : operand);
    ir::Builder b(load->parentBlock(), load);
    b.setLoc(load->loc());
    Value* transposedLoad = b.create1(OpKind::Load, operands, trans.result(0)->type(), load->attrs());
    trans.result(0)->replaceAllUsesWith(transposedLoad);
    trans.parentBlock()->erase(&trans);
    if (loaded->uses().empty()) load->parentBlock()->erase(load);
  }
};

}  // namespace

std::unique_ptr<Pass> createTransposeLoadsPass() { return std::make_unique<TransposeLoadsPass>(); }

}  // namespace tessera::transforms
