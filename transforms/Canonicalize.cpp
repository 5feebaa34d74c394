// Canonicalization: constant folding and exact algebraic simplification, iterated to a fixed point.
//
// Folding computes with the IR's scalar rules (ir/IntegerSemantics.h, ir/FloatSemantics.h, ir/FloatFormats.h),
// the ones the interpreter uses: integers wrap to their type, integer division by zero gives -1 / all-ones,
// shifts by at least the width give 0 (or the sign), floats are computed in double precision and rounded to the
// type. Only identities that hold for every input are used:
// `x * 0 -> 0` and `x - x -> 0` for integers only (NaN, infinities), and `x + c -> x` for floats only when c is
// -0.0 (because -0.0 + 0.0 is +0.0). Whenever the spec leaves a case open (negative shift amounts, fmin of
// zeros of different sign, NaN bit patterns under bitcast) nothing is folded.
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "ir/Builder.h"
#include "ir/FloatFormats.h"
#include "ir/FloatSemantics.h"
#include "ir/IntegerSemantics.h"
#include "transforms/PassManager.h"

namespace tessera::transforms {
namespace {

using ir::Attr;
using ir::Block;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

// ---------------------------------------------------------------- numeric helpers

int64_t wrapInt(Type t, uint64_t raw) { return ir::IntFormat(t).wrap(raw); }

// Rounds to float type t; nullopt for fp8 (constants of fp8 types do not exist, so nothing folds to them).
std::optional<double> roundToType(Type t, double v) {
  if (t.isFP8()) return std::nullopt;
  return ir::roundToFloat(t.scalarKind(), v);
}

std::optional<double> intToFloat(Type dst, int64_t v, bool isUnsigned) {
  if (dst.isFP8()) return std::nullopt;
  return ir::intToFloat(v, isUnsigned, dst.scalarKind());
}

// ---------------------------------------------------------------- constants

// A constant's element value in canonical form: ints wrapped to their type, floats rounded to theirs.
struct Scalar {
  bool isFloat = false;
  int64_t i = 0;
  double f = 0;

  static Scalar ofInt(int64_t v) { return Scalar{false, v, 0}; }
  static Scalar ofFloat(double v) { return Scalar{true, 0, v}; }
  static std::optional<Scalar> ofFloat(std::optional<double> v) {
    return v ? std::optional<Scalar>(ofFloat(*v)) : std::nullopt;
  }
  bool operator==(const Scalar& o) const {
    return isFloat == o.isFloat && (isFloat ? std::memcmp(&f, &o.f, sizeof f) == 0 : i == o.i);
  }
};

std::optional<Scalar> constantValue(const Value* v) {
  const Op* def = v->definingOp();
  if (!def || !def->is(OpKind::Constant) || !def->hasAttr("value")) return std::nullopt;
  Type t = v->type();
  if (t.isPtr() || t.isFP8()) return std::nullopt;
  const Attr& a = def->attr("value");
  if (t.isFloat()) {
    if (a.isFloat()) return Scalar::ofFloat(roundToType(t, a.getFloat()));
    if (a.isInt()) return Scalar::ofFloat(intToFloat(t, a.getInt(), false));
    return std::nullopt;
  }
  if (a.isInt()) return Scalar::ofInt(wrapInt(t, static_cast<uint64_t>(a.getInt())));
  if (a.isBool()) return Scalar::ofInt(a.getBool() ? wrapInt(t, 1) : 0);
  return std::nullopt;
}

Attr constantAttr(Type t, const Scalar& s) {
  if (t.isBool()) return Attr::boolean(s.i != 0);
  if (t.isInt()) return Attr::integer(s.i);
  return Attr::floating(s.f);
}

bool isIntConstant(const Value* v, int64_t expected) {
  auto c = constantValue(v);
  return c && !c->isFloat && c->i == expected;
}
bool isFloatConstant(const Value* v, double expected) {
  auto c = constantValue(v);
  return c && c->isFloat && c->f == expected && std::signbit(c->f) == std::signbit(expected);
}
bool isAllOnes(const Value* v) { return v->type().isInt() && isIntConstant(v, wrapInt(v->type(), ~uint64_t(0))); }
bool isZero(const Value* v) { return v->type().isInt() ? isIntConstant(v, 0) : false; }
bool isOne(const Value* v) {
  if (v->type().isInt()) return isIntConstant(v, 1);
  return v->type().isArithmeticFloat() && isFloatConstant(v, 1.0);
}

// ---------------------------------------------------------------- scalar folding

std::optional<Scalar> foldIntBinary(OpKind kind, Type t, int64_t a, int64_t b) {
  // A negative amount of a signed type is left open by the spec: leave it to the target.
  if ((kind == OpKind::Shl || kind == OpKind::Shr) && t.isSigned() && b < 0) return std::nullopt;
  std::optional<int64_t> r = ir::evalIntBinary(kind, t, a, b);
  return r ? std::optional<Scalar>(Scalar::ofInt(*r)) : std::nullopt;
}

std::optional<Scalar> foldFloatBinary(OpKind kind, Type t, double a, double b) {
  // fmin/fmax of +0.0 and -0.0 may return either: leave it to the target.
  if ((kind == OpKind::Min || kind == OpKind::Max) && a == 0 && b == 0 && std::signbit(a) != std::signbit(b))
    return std::nullopt;
  std::optional<Scalar> folded;
  ir::withFloatBinaryRule(kind, [&](auto rule) { folded = Scalar::ofFloat(roundToType(t, rule(a, b))); });
  return folded;
}

std::optional<Scalar> foldUnary(OpKind kind, Type t, const Scalar& x) {
  if (!x.isFloat) {
    std::optional<int64_t> r = ir::evalIntUnary(kind, t, x.i);
    return r ? std::optional<Scalar>(Scalar::ofInt(*r)) : std::nullopt;
  }
  std::optional<Scalar> folded;
  ir::withFloatUnaryRule(kind, [&](auto rule) { folded = Scalar::ofFloat(roundToType(t, rule(x.f))); });
  return folded;
}

std::optional<bool> foldCmp(const std::string& pred, Type t, const Scalar& a, const Scalar& b) {
  auto compare = [&](auto x, auto y) -> std::optional<bool> {
    if (pred == "eq") return x == y;
    if (pred == "ne") return x != y;
    if (pred == "lt") return x < y;
    if (pred == "le") return x <= y;
    if (pred == "gt") return x > y;
    if (pred == "ge") return x >= y;
    return std::nullopt;
  };
  if (a.isFloat) return compare(a.f, b.f);  // C++ comparisons with NaN are false except !=, as the spec says
  if (t.isSigned()) return compare(a.i, b.i);
  return compare(static_cast<uint64_t>(a.i), static_cast<uint64_t>(b.i));
}

std::optional<Scalar> foldCast(Type src, Type dst, const Scalar& x) {
  if (dst.isPtr() || dst.isFP8()) return std::nullopt;
  if (dst.isBool()) return Scalar::ofInt(x.isFloat ? x.f != 0 : x.i != 0);
  if (!x.isFloat) {
    if (dst.isInt()) return Scalar::ofInt(wrapInt(dst, static_cast<uint64_t>(x.i)));
    return Scalar::ofFloat(intToFloat(dst, x.i, src.isUnsigned()));
  }
  if (dst.isFloat()) return Scalar::ofFloat(roundToType(dst, x.f));
  return Scalar::ofInt(ir::floatToInt(x.f, ir::IntFormat(dst)));
}

// NaN payloads are not kept by constants, so bit patterns of NaNs are not folded.
std::optional<uint64_t> floatBits(Type t, double v) {
  if (std::isnan(v) || t.isFP8()) return std::nullopt;
  return ir::encodeFloat(t.scalarKind(), v);
}
std::optional<double> floatFromBits(Type t, uint64_t bits) {
  if (t.isFP8()) return std::nullopt;
  double v = ir::decodeFloat(t.scalarKind(), bits);
  if (std::isnan(v)) return std::nullopt;
  return v;
}

std::optional<Scalar> foldBitcast(Type src, Type dst, const Scalar& x) {
  if (src.isPtr() || dst.isPtr() || src.isBool() || dst.isBool() || src.bitWidth() != dst.bitWidth())
    return std::nullopt;
  std::optional<uint64_t> bits = x.isFloat ? floatBits(src, x.f) : std::optional<uint64_t>(static_cast<uint64_t>(x.i));
  if (!bits) return std::nullopt;
  if (dst.isInt()) return Scalar::ofInt(wrapInt(dst, *bits));
  return Scalar::ofFloat(floatFromBits(dst, *bits));
}

// ---------------------------------------------------------------- op-level rewrites

// An all-int array attribute, or nullopt when it is missing or malformed (passes may run unverified).
std::optional<std::vector<int64_t>> intArrayAttr(const Op& op, const std::string& name) {
  if (!op.hasAttr(name) || !op.attr(name).isArray()) return std::nullopt;
  for (const Attr& a : op.attr(name).getArray())
    if (!a.isInt()) return std::nullopt;
  return op.attr(name).getIntArray();
}

// The value of op's single result if it folds to a constant (operands constant, or an identity such as
// `x - x` for integers). The result type decides the constant's type.
std::optional<Scalar> foldToConstant(const Op& op) {
  if (op.numResults() != 1 || op.numRegions() != 0 || !op.info().has(ir::kPure) || op.is(OpKind::Constant))
    return std::nullopt;
  Type resultType = op.result(0)->type();
  if (resultType.isPtr() || resultType.isFP8()) return std::nullopt;
  std::vector<std::optional<Scalar>> c;
  bool allConstant = true;
  for (Value* v : op.operands()) {
    c.push_back(constantValue(v));
    allConstant &= c.back().has_value();
  }
  OpKind k = op.kind();
  const ir::OpInfo& info = op.info();
  Type operandType = op.numOperands() > 0 ? op.operand(0)->type() : Type();

  // Identities that produce a constant whatever the (integer) operand is.
  if (op.numOperands() == 2 && operandType.isInt() && !operandType.isPtr()) {
    Value* a = op.operand(0);
    Value* b = op.operand(1);
    if ((k == OpKind::Sub || k == OpKind::Xor) && a == b) return Scalar::ofInt(0);
    if ((k == OpKind::Mul || k == OpKind::And) && (isZero(a) || isZero(b))) return Scalar::ofInt(0);
    if (k == OpKind::Or && (isAllOnes(a) || isAllOnes(b))) return Scalar::ofInt(wrapInt(resultType, ~uint64_t(0)));
    if (k == OpKind::Cmp && a == b && op.hasAttr("pred") && op.attr("pred").isString()) {
      const std::string& pred = op.stringAttr("pred");
      if (pred == "eq" || pred == "le" || pred == "ge") return Scalar::ofInt(1);
      if (pred == "ne" || pred == "lt" || pred == "gt") return Scalar::ofInt(0);
    }
  }
  if (!allConstant || op.numOperands() == 0) return std::nullopt;

  if (info.has(ir::kElementwise) && operandType.isPtr()) return std::nullopt;
  switch (k) {
    case OpKind::Splat:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Trans:
      return c[0];  // every element of a splat stays the same value
    case OpKind::Cat:
    case OpKind::Join:
      if (*c[0] == *c[1]) return c[0];
      return std::nullopt;
    case OpKind::Cmp:
      if (!op.hasAttr("pred") || !op.attr("pred").isString()) return std::nullopt;
      if (auto r = foldCmp(op.stringAttr("pred"), operandType, *c[0], *c[1])) return Scalar::ofInt(*r);
      return std::nullopt;
    case OpKind::Cast: return foldCast(operandType.element(), resultType.element(), *c[0]);
    case OpKind::Bitcast: return foldBitcast(operandType.element(), resultType.element(), *c[0]);
    default: break;
  }
  if (!info.has(ir::kElementwise) || operandType.element() != resultType.element()) return std::nullopt;
  if (op.numOperands() == 1) return foldUnary(k, resultType, *c[0]);
  if (op.numOperands() == 2) {
    if (c[0]->isFloat != c[1]->isFloat) return std::nullopt;
    return c[0]->isFloat ? foldFloatBinary(k, resultType, c[0]->f, c[1]->f)
                         : foldIntBinary(k, resultType, c[0]->i, c[1]->i);
  }
  return std::nullopt;
}

// An existing value that op's single result always equals, if any.
Value* simplifyToExisting(const Op& op) {
  if (op.numResults() != 1 || op.numRegions() != 0) return nullptr;
  Type resultType = op.result(0)->type();
  auto sameType = [&](Value* v) { return v->type() == resultType ? v : nullptr; };
  OpKind k = op.kind();
  bool commutative = op.info().has(ir::kCommutative);
  if (op.numOperands() == 2 && k != OpKind::AddPtr) {
    Value* a = op.operand(0);
    Value* b = op.operand(1);
    // `rhsNeutral(x)`: is x a right identity of the op; commutative ops also try the left side.
    auto withNeutral = [&](auto rhsNeutral) -> Value* {
      if (rhsNeutral(b)) return sameType(a);
      if (commutative && rhsNeutral(a)) return sameType(b);
      return nullptr;
    };
    bool isFloat = resultType.isFloat();
    switch (k) {
      case OpKind::Add:
        // x + (-0.0) == x for every float x; x + 0.0 is not (-0.0 + 0.0 is +0.0).
        return withNeutral([&](Value* v) { return isFloat ? isFloatConstant(v, -0.0) : isZero(v); });
      case OpKind::Sub: return withNeutral([&](Value* v) { return isFloat ? isFloatConstant(v, 0.0) : isZero(v); });
      case OpKind::Mul:
      case OpKind::Div: return withNeutral([&](Value* v) { return isOne(v); });
      case OpKind::Or: return a == b ? sameType(a) : withNeutral([&](Value* v) { return isZero(v); });
      case OpKind::Xor: return withNeutral([&](Value* v) { return isZero(v); });
      case OpKind::And: return a == b ? sameType(a) : withNeutral([&](Value* v) { return isAllOnes(v); });
      case OpKind::Shl:
      case OpKind::Shr: return isZero(b) ? sameType(a) : nullptr;
      case OpKind::Min:
      case OpKind::Max: return a == b ? sameType(a) : nullptr;
      default: break;
    }
  }
  if (k == OpKind::AddPtr && op.numOperands() == 2 && isZero(op.operand(1))) return sameType(op.operand(0));
  if (k == OpKind::Select && op.numOperands() == 3) {
    if (op.operand(1) == op.operand(2)) return sameType(op.operand(1));
    if (auto cond = constantValue(op.operand(0))) return sameType(op.operand(cond->i != 0 ? 1 : 2));
  }
  if (op.numOperands() == 1) {
    Value* x = op.operand(0);
    switch (k) {
      case OpKind::Cast:
      case OpKind::Bitcast:
      case OpKind::Broadcast:
      case OpKind::Reshape: return sameType(x);
      case OpKind::Trans: {
        auto perm = intArrayAttr(op, "perm");
        if (!perm) return nullptr;
        for (size_t i = 0; i < perm->size(); ++i)
          if ((*perm)[i] != static_cast<int64_t>(i)) return nullptr;
        return sameType(x);
      }
      case OpKind::Neg:
      case OpKind::Not: {
        const Op* inner = x->definingOp();
        if (inner && inner->is(k) && inner->numOperands() == 1) return sameType(inner->operand(0));
        return nullptr;
      }
      default: break;
    }
  }
  return nullptr;
}

// In-place rewrites of shape chains: reshape(reshape|expand_dims(x)) -> reshape(x),
// broadcast(broadcast(x)) -> broadcast(x), trans(trans(x)) -> trans(x) with the composed permutation.
bool collapseShapeChain(Op& op) {
  if (op.numOperands() != 1) return false;
  Op* inner = op.operand(0)->definingOp();
  if (!inner || inner->numOperands() != 1) return false;
  Value* source = inner->operand(0);
  if (op.is(OpKind::Reshape) && (inner->is(OpKind::Reshape) || inner->is(OpKind::ExpandDims)) &&
      source->type().isTile()) {
    op.setOperand(0, source);
    return true;
  }
  if (op.is(OpKind::Broadcast) && inner->is(OpKind::Broadcast)) {
    op.setOperand(0, source);
    return true;
  }
  if (op.is(OpKind::Trans) && inner->is(OpKind::Trans)) {
    auto outer = intArrayAttr(op, "perm"), first = intArrayAttr(*inner, "perm");
    if (!outer || !first || outer->size() != first->size()) return false;
    std::vector<int64_t> composed;
    for (int64_t p : *outer) {
      if (p < 0 || p >= static_cast<int64_t>(first->size())) return false;
      composed.push_back((*first)[p]);
    }
    op.setAttr("perm", Attr::intArray(composed));
    op.setOperand(0, source);
    return true;
  }
  return false;
}

class Canonicalizer {
 public:
  // One sweep over the function; true if anything changed.
  bool sweep(ir::Function& f) {
    changed_ = false;
    sweepBlock(f.body());
    eraseDeadPureOps(f.body());
    return changed_;
  }

 private:
  void sweepBlock(Block* block) {
    std::vector<Op*> ops;
    for (auto& op : block->ops()) ops.push_back(op.get());
    // Each rewrite erases at most the op it is given, so the snapshot stays valid.
    for (Op* op : ops) {
      for (unsigned r = 0; r < op->numRegions(); ++r) sweepBlock(op->region(r));
      rewrite(op);
    }
  }

  void rewrite(Op* op) {
    if (op->is(OpKind::If)) return inlineConstantIf(op);
    if (op->is(OpKind::For)) return removeZeroTripFor(op);
    if (auto folded = foldToConstant(*op)) return replaceWithConstant(op, *folded);
    if (Value* existing = simplifyToExisting(*op)) return replaceOp(op, {existing});
    if (collapseShapeChain(*op)) changed_ = true;
  }

  void replaceOp(Op* op, const std::vector<Value*>& values) {
    for (unsigned i = 0; i < op->numResults(); ++i) op->result(i)->replaceAllUsesWith(values[i]);
    op->parentBlock()->erase(op);
    changed_ = true;
  }

  void replaceWithConstant(Op* op, const Scalar& value) {
    Type t = op->result(0)->type();
    ir::Builder b(op->parentBlock(), op);
    b.setLoc(op->loc());
    Value* c = b.create1(OpKind::Constant, {}, t, {{"value", constantAttr(t, value)}});
    c->setNameHint(op->result(0)->nameHint());
    replaceOp(op, {c});
  }

  void inlineConstantIf(Op* op) {
    auto cond = op->numOperands() == 1 ? constantValue(op->operand(0)) : std::nullopt;
    if (!cond || op->numRegions() != 2) return;
    Block* taken = op->region(cond->i != 0 ? 0 : 1);
    Op* yield = taken->terminator();
    if (!yield || !yield->is(OpKind::Yield) || yield->numOperands() != op->numResults()) return;
    std::vector<Value*> yielded = yield->operands();
    Block* parent = op->parentBlock();
    while (taken->front() != yield) parent->insertBefore(op, taken->remove(taken->front()));
    replaceOp(op, yielded);
  }

  void removeZeroTripFor(Op* op) {
    if (op->numOperands() < 3 || op->numOperands() - 3 != op->numResults()) return;
    auto lb = constantValue(op->operand(0)), ub = constantValue(op->operand(1));
    auto step = constantValue(op->operand(2));
    if (!lb || !ub || lb->isFloat || ub->isFloat) return;
    if (step && (step->isFloat || step->i <= 0)) return;  // keep the runtime error a bad step raises
    if (lb->i < ub->i) return;
    std::vector<Value*> inits(op->operands().begin() + 3, op->operands().end());
    replaceOp(op, inits);
  }

  // Pure region-free ops (and reduce/scan) whose results are unused; last first so chains go in one sweep.
  void eraseDeadPureOps(Block* block) {
    std::vector<Op*> ops;
    for (auto& op : block->ops()) ops.push_back(op.get());
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Op* op = *it;
      for (unsigned r = 0; r < op->numRegions(); ++r) eraseDeadPureOps(op->region(r));
      if (!op->info().has(ir::kPure)) continue;
      bool used = false;
      for (unsigned i = 0; i < op->numResults(); ++i) used |= op->result(i)->hasUses();
      if (!used) {
        block->erase(op);
        changed_ = true;
      }
    }
  }

  bool changed_ = false;
};

// An integer argument the launch specialized as `equal_to_1` (jit/Specialization.h) is the constant 1 in this
// compile, as Triton treats such arguments: `offs * stride` with a unit stride folds here, before the passes and
// the lowering see a multiplication per element.
void replaceUnitArguments(ir::Function& f) {
  for (unsigned i = 0; i < f.numArguments(); ++i) {
    Value* arg = f.argument(i);
    auto it = f.argAttrs(i).find("equal_to_1");
    if (it == f.argAttrs(i).end() || !it->second.isBool() || !it->second.getBool()) continue;
    if (!arg->type().isInt() || !arg->hasUses()) continue;
    ir::Builder b(f.body(), f.body()->front());
    b.setLoc(f.loc());
    Value* one = b.create1(OpKind::Constant, {}, arg->type(), {{"value", constantAttr(arg->type(), Scalar::ofInt(1))}});
    one->setNameHint(arg->nameHint());
    arg->replaceAllUsesWith(one);
  }
}

class CanonicalizePass : public Pass {
 public:
  const char* name() const override { return "canonicalize"; }
  void run(ir::Function& f) override {
    replaceUnitArguments(f);
    Canonicalizer c;
    // Every rewrite removes an op or replaces it with a constant, so this terminates quickly; the bound is a
    // guard against a rewrite pair undoing each other.
    for (int sweep = 0; sweep < 64 && c.sweep(f); ++sweep) {
    }
  }
};

}  // namespace

std::unique_ptr<Pass> createCanonicalizePass() { return std::make_unique<CanonicalizePass>(); }

}  // namespace tessera::transforms
