// Element-wise ops: arithmetic, comparisons, select, casts, bitcast, addptr (docs/IR.md "Element-wise
// arithmetic" and "Conversions"). Each op switches on its kind once and then loops over the elements.
#include <cmath>

#include "backends/interpreter/BinaryOps.h"
#include "backends/interpreter/ElementBits.h"

namespace tessera::interp::detail {

using ir::OpKind;

namespace {

std::string typeText(ir::Type t) { return t.element().str(); }

void checkSameSize(const ir::Op& op, const ProgramContext& ctx, const Tile& operand, int64_t n) {
  if (operand.size() != n)
    fail(op, ctx, "operand of type " + operand.type.str() + " does not match the result's " + std::to_string(n) +
                      " elements");
}

}  // namespace

bool isBinaryArithmetic(OpKind kind) {
  switch (kind) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
    case OpKind::Min: case OpKind::Max: case OpKind::And: case OpKind::Or: case OpKind::Xor:
    case OpKind::Shl: case OpKind::Shr: case OpKind::UMulHi:
      return true;
    default:
      return false;
  }
}

void binaryIntKernel(const ir::Op& op, const ProgramContext& ctx, OpKind kind, ir::Type element,
                     const int64_t* a, const int64_t* b, int64_t* out, int64_t n) {
  withIntBinary(op, ctx, kind, element, [&](auto f) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  });
}

void binaryFloatKernel(const ir::Op& op, const ProgramContext& ctx, OpKind kind, ir::Type element,
                       const double* a, const double* b, double* out, int64_t n) {
  withFloatBinary(op, ctx, kind, element, [&](auto f) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  });
}

namespace {

Tile evalBinary(const ir::Op& op, OperandList operands, ir::Type type, const ProgramContext& ctx) {
  Tile r(type);
  const Tile& a = *operands[0];
  const Tile& b = *operands[1];
  checkSameSize(op, ctx, a, r.size());
  checkSameSize(op, ctx, b, r.size());
  if (a.type.element() != type.element() || b.type.element() != type.element())
    fail(op, ctx, "operands of types " + a.type.str() + " and " + b.type.str() + " do not match the result type " +
                      type.str());
  if (type.isPtr()) fail(op, ctx, "arithmetic is not defined on pointers (use addptr)");
  if (type.isFloat())
    binaryFloatKernel(op, ctx, op.kind(), type.element(), a.floats.data(), b.floats.data(), r.floats.data(),
                      r.size());
  else
    binaryIntKernel(op, ctx, op.kind(), type.element(), a.ints.data(), b.ints.data(), r.ints.data(), r.size());
  return r;
}

Tile evalUnary(const ir::Op& op, OperandList operands, ir::Type type, const ProgramContext& ctx) {
  Tile r(type);
  const Tile& a = *operands[0];
  checkSameSize(op, ctx, a, r.size());
  if (a.type.element() != type.element() || type.isPtr())
    fail(op, ctx, "operand of type " + a.type.str() + " does not match the result type " + type.str());
  const int64_t n = r.size();
  bool defined;
  if (type.isFloat()) {
    const ir::ScalarKind kind = type.scalarKind();
    defined = ir::withFloatUnaryRule(op.kind(), [&](auto rule) {
      for (int64_t i = 0; i < n; ++i) r.floats[i] = ir::roundToFloat(kind, rule(a.floats[i]));
    });
  } else {
    defined = ir::withIntUnaryRule(op.kind(), ir::IntFormat(type), [&](auto rule) {
      for (int64_t i = 0; i < n; ++i) r.ints[i] = rule(a.ints[i]);
    });
  }
  if (!defined)
    fail(op, ctx, std::string("not defined on ") + (type.isFloat() ? "floating-point" : "integer") + " type " +
                      typeText(type));
  return r;
}

Tile evalFma(const ir::Op& op, OperandList operands, ir::Type type, const ProgramContext& ctx) {
  Tile r(type);
  if (!type.isFloat()) fail(op, ctx, "fma is defined on floating-point types only, not " + typeText(type));
  for (const Tile* t : operands) {
    checkSameSize(op, ctx, *t, r.size());
    if (t->type.element() != type.element()) fail(op, ctx, "operand type " + t->type.str() + " differs from " + type.str());
  }
  const ir::ScalarKind kind = type.scalarKind();
  const auto &a = operands[0]->floats, &b = operands[1]->floats, &c = operands[2]->floats;
  for (int64_t i = 0, n = r.size(); i < n; ++i) r.floats[i] = ir::roundToFloat(kind, std::fma(a[i], b[i], c[i]));
  return r;
}

enum class Pred { Eq, Ne, Lt, Le, Gt, Ge };

Pred parsePred(const ir::Op& op, const ProgramContext& ctx) {
  const std::string& p = op.stringAttr("pred");
  if (p == "eq") return Pred::Eq;
  if (p == "ne") return Pred::Ne;
  if (p == "lt") return Pred::Lt;
  if (p == "le") return Pred::Le;
  if (p == "gt") return Pred::Gt;
  if (p == "ge") return Pred::Ge;
  fail(op, ctx, "unknown predicate '" + p + "'");
}

template <class T>
void compareAll(Pred pred, const T* a, const T* b, int64_t* out, int64_t n) {
  switch (pred) {
    case Pred::Eq: for (int64_t i = 0; i < n; ++i) out[i] = a[i] == b[i]; return;
    case Pred::Ne: for (int64_t i = 0; i < n; ++i) out[i] = a[i] != b[i]; return;
    case Pred::Lt: for (int64_t i = 0; i < n; ++i) out[i] = a[i] < b[i]; return;
    case Pred::Le: for (int64_t i = 0; i < n; ++i) out[i] = a[i] <= b[i]; return;
    case Pred::Gt: for (int64_t i = 0; i < n; ++i) out[i] = a[i] > b[i]; return;
    case Pred::Ge: for (int64_t i = 0; i < n; ++i) out[i] = a[i] >= b[i]; return;
  }
}

Tile evalCmp(const ir::Op& op, OperandList operands, ir::Type type, const ProgramContext& ctx) {
  Tile r(type);
  const Tile& a = *operands[0];
  const Tile& b = *operands[1];
  checkSameSize(op, ctx, a, r.size());
  checkSameSize(op, ctx, b, r.size());
  if (a.type.element() != b.type.element())
    fail(op, ctx, "operand types " + a.type.str() + " and " + b.type.str() + " differ");
  Pred pred = parsePred(op, ctx);
  const int64_t n = r.size();
  ir::Type element = a.type.element();
  if (element.isFloat()) {  // C comparisons: false with a NaN, except !=
    compareAll(pred, a.floats.data(), b.floats.data(), r.ints.data(), n);
  } else if (element.isSigned()) {
    compareAll(pred, a.ints.data(), b.ints.data(), r.ints.data(), n);
  } else {  // unsigned ints, i1 and pointers: canonical values compare as unsigned 64-bit
    static_assert(sizeof(uint64_t) == sizeof(int64_t));
    compareAll(pred, reinterpret_cast<const uint64_t*>(a.ints.data()),
               reinterpret_cast<const uint64_t*>(b.ints.data()), r.ints.data(), n);
  }
  return r;
}

Tile evalSelect(const ir::Op& op, OperandList operands, ir::Type type, const ProgramContext& ctx) {
  Tile r(type);
  const Tile& cond = *operands[0];
  const Tile& a = *operands[1];
  const Tile& b = *operands[2];
  if (!cond.type.isBool()) fail(op, ctx, "condition must be i1, not " + cond.type.str());
  checkSameSize(op, ctx, a, r.size());
  checkSameSize(op, ctx, b, r.size());
  if (cond.size() != r.size() && cond.size() != 1) fail(op, ctx, "condition shape does not match the values");
  const int64_t condStride = cond.size() == 1 ? 0 : 1;
  const int64_t n = r.size();
  if (r.usesFloats())
    for (int64_t i = 0; i < n; ++i) r.floats[i] = cond.ints[i * condStride] != 0 ? a.floats[i] : b.floats[i];
  else
    for (int64_t i = 0; i < n; ++i) r.ints[i] = cond.ints[i * condStride] != 0 ? a.ints[i] : b.ints[i];
  return r;
}

Tile evalCast(const ir::Op& op, OperandList operands, ir::Type type, const ProgramContext& ctx) {
  Tile r(type);
  const Tile& a = *operands[0];
  checkSameSize(op, ctx, a, r.size());
  ir::Type src = a.type.element();
  ir::Type dst = type.element();
  const int64_t n = r.size();
  auto badCast = [&]() { fail(op, ctx, "cannot cast " + src.str() + " to " + dst.str()); };
  if (dst.isBool()) {  // anything -> i1 is x != 0 (a NaN is != 0)
    for (int64_t i = 0; i < n; ++i) r.ints[i] = src.isFloat() ? a.floats[i] != 0 : a.ints[i] != 0;
  } else if (dst.isPtr()) {
    if (src.isFloat()) badCast();
    for (int64_t i = 0; i < n; ++i) r.ints[i] = a.ints[i];  // pointer or integer value is the address
  } else if (dst.isInt()) {
    if (src.isFloat()) {
      const ir::IntFormat format(dst);
      for (int64_t i = 0; i < n; ++i) r.ints[i] = ir::floatToInt(a.floats[i], format);
    } else {  // canonical source values are already extended by the source's signedness
      const ir::IntFormat format(dst);
      for (int64_t i = 0; i < n; ++i) r.ints[i] = format.wrap(static_cast<uint64_t>(a.ints[i]));
    }
  } else {  // dst is a float
    if (src.isPtr()) badCast();
    const ir::ScalarKind kind = dst.scalarKind();
    if (src.isFloat()) {
      for (int64_t i = 0; i < n; ++i) r.floats[i] = ir::roundToFloat(kind, a.floats[i]);
    } else {
      const bool fromUnsigned = src.isUnsigned();
      for (int64_t i = 0; i < n; ++i) r.floats[i] = ir::intToFloat(a.ints[i], fromUnsigned, kind);
    }
  }
  return r;
}

Tile evalBitcast(const ir::Op& op, OperandList operands, ir::Type type, const ProgramContext& ctx) {
  Tile r(type);
  const Tile& a = *operands[0];
  checkSameSize(op, ctx, a, r.size());
  ir::Type src = a.type.element();
  ir::Type dst = type.element();
  if (src.bitWidth() != dst.bitWidth() || src.isBool() || dst.isBool())
    fail(op, ctx, "cannot bitcast " + src.str() + " to " + dst.str() + " (bit widths must match; i1 is excluded)");
  const ElementCodec from(src), to(dst);
  const bool srcFloat = from.isFloat();
  for (int64_t i = 0, n = r.size(); i < n; ++i) {
    uint64_t bits = from.toBits(srcFloat ? 0 : a.ints[i], srcFloat ? a.floats[i] : 0.0);
    if (to.isFloat())
      r.floats[i] = to.toFloat(bits);
    else
      r.ints[i] = to.toInt(bits);
  }
  return r;
}

Tile evalAddPtr(const ir::Op& op, OperandList operands, ir::Type type, const ProgramContext& ctx) {
  Tile r(type);
  const Tile& ptr = *operands[0];
  const Tile& offset = *operands[1];
  checkSameSize(op, ctx, ptr, r.size());
  checkSameSize(op, ctx, offset, r.size());
  if (!type.isPtr() || !ptr.type.isPtr()) fail(op, ctx, "the first operand and the result must be pointers");
  if (!offset.type.isInt()) fail(op, ctx, "the offset must be an integer, not " + offset.type.str());
  const uint64_t elementSize = static_cast<uint64_t>(type.pointee().storageBytes());
  for (int64_t i = 0, n = r.size(); i < n; ++i)
    r.ints[i] = static_cast<int64_t>(static_cast<uint64_t>(ptr.ints[i]) +
                                     static_cast<uint64_t>(offset.ints[i]) * elementSize);
  return r;
}

}  // namespace

Tile evalElementwise(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  ir::Type type = resultType(op, 0, env);
  const ProgramContext& ctx = env.ctx;
  switch (op.kind()) {
    case OpKind::Fma: return evalFma(op, operands, type, ctx);
    case OpKind::Cmp: return evalCmp(op, operands, type, ctx);
    case OpKind::Select: return evalSelect(op, operands, type, ctx);
    case OpKind::Cast: return evalCast(op, operands, type, ctx);
    case OpKind::Bitcast: return evalBitcast(op, operands, type, ctx);
    case OpKind::AddPtr: return evalAddPtr(op, operands, type, ctx);
    default: break;
  }
  if (isBinaryArithmetic(op.kind())) return evalBinary(op, operands, type, ctx);
  return evalUnary(op, operands, type, ctx);
}

}  // namespace tessera::interp::detail
