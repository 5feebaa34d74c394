// Element-wise ops: arithmetic, comparisons, select, casts, bitcast, addptr (docs/IR.md "Element-wise
// arithmetic" and "Conversions"). Each op switches on its kind once and then loops over the elements.
#include <cmath>
#include <limits>

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

template <class F>
void mapFloats(const Tile& a, Tile& r, F f) {
  const FloatRound round(r.type);
  for (int64_t i = 0, n = r.size(); i < n; ++i) r.floats[i] = round(f(a.floats[i]));
}

Tile evalUnary(const ir::Op& op, OperandList operands, ir::Type type, const ProgramContext& ctx) {
  Tile r(type);
  const Tile& a = *operands[0];
  checkSameSize(op, ctx, a, r.size());
  if (a.type.element() != type.element() || type.isPtr())
    fail(op, ctx, "operand of type " + a.type.str() + " does not match the result type " + type.str());
  const int64_t n = r.size();
  if (!type.isFloat()) {
    const IntCanon canon(type);
    auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    switch (op.kind()) {
      case OpKind::Neg: for (int64_t i = 0; i < n; ++i) r.ints[i] = canon(0 - u(a.ints[i])); return r;
      case OpKind::Not: for (int64_t i = 0; i < n; ++i) r.ints[i] = canon(~u(a.ints[i])); return r;
      case OpKind::Abs:
        if (type.isUnsigned()) {  // identity (u64 values may look negative as int64)
          r.ints = a.ints;
          return r;
        }
        for (int64_t i = 0; i < n; ++i) r.ints[i] = a.ints[i] < 0 ? canon(0 - u(a.ints[i])) : a.ints[i];
        return r;
      default:
        fail(op, ctx, std::string("not defined on integer type ") + typeText(type));
    }
  }
  switch (op.kind()) {
    case OpKind::Neg: mapFloats(a, r, [](double x) { return -x; }); break;
    case OpKind::Abs: mapFloats(a, r, [](double x) { return std::fabs(x); }); break;
    case OpKind::Exp: mapFloats(a, r, [](double x) { return std::exp(x); }); break;
    case OpKind::Exp2: mapFloats(a, r, [](double x) { return std::exp2(x); }); break;
    case OpKind::Log: mapFloats(a, r, [](double x) { return std::log(x); }); break;
    case OpKind::Log2: mapFloats(a, r, [](double x) { return std::log2(x); }); break;
    case OpKind::Sqrt: mapFloats(a, r, [](double x) { return std::sqrt(x); }); break;
    case OpKind::Rsqrt: mapFloats(a, r, [](double x) { return 1.0 / std::sqrt(x); }); break;
    case OpKind::Sin: mapFloats(a, r, [](double x) { return std::sin(x); }); break;
    case OpKind::Cos: mapFloats(a, r, [](double x) { return std::cos(x); }); break;
    case OpKind::Tanh: mapFloats(a, r, [](double x) { return std::tanh(x); }); break;
    case OpKind::Erf: mapFloats(a, r, [](double x) { return std::erf(x); }); break;
    case OpKind::Floor: mapFloats(a, r, [](double x) { return std::floor(x); }); break;
    case OpKind::Ceil: mapFloats(a, r, [](double x) { return std::ceil(x); }); break;
    default: fail(op, ctx, std::string("not defined on floating-point type ") + typeText(type));
  }
  return r;
}

Tile evalFma(const ir::Op& op, OperandList operands, ir::Type type, const ProgramContext& ctx) {
  Tile r(type);
  if (!type.isFloat()) fail(op, ctx, "fma is defined on floating-point types only, not " + typeText(type));
  for (const Tile* t : operands) {
    checkSameSize(op, ctx, *t, r.size());
    if (t->type.element() != type.element()) fail(op, ctx, "operand type " + t->type.str() + " differs from " + type.str());
  }
  const FloatRound round(type);
  const auto &a = operands[0]->floats, &b = operands[1]->floats, &c = operands[2]->floats;
  for (int64_t i = 0, n = r.size(); i < n; ++i) r.floats[i] = round(std::fma(a[i], b[i], c[i]));
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

// Integer (canonical form) to double with round-to-odd to 53 bits, so that a second rounding to a narrower
// float type is correctly rounded (plain int64 -> double -> f32 could double-round).
double intToDoubleRoundOdd(uint64_t magnitude) {
  if (magnitude < (uint64_t(1) << 53)) return static_cast<double>(magnitude);
  int shift = 64 - __builtin_clzll(magnitude) - 53;
  uint64_t kept = magnitude >> shift;
  if ((magnitude & ((uint64_t(1) << shift) - 1)) != 0) kept |= 1;  // sticky bit
  return std::ldexp(static_cast<double>(kept), shift);
}

double intToFloat(int64_t v, bool fromUnsigned, ir::Type dst) {
  bool negative = !fromUnsigned && v < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (dst.scalarKind() == ir::ScalarKind::F64) {
    double d = static_cast<double>(magnitude);  // correctly rounded by the hardware
    return negative ? -d : d;
  }
  double d = intToDoubleRoundOdd(magnitude);
  return roundToFloat(dst, negative ? -d : d);
}

// float -> int: truncate toward zero, saturate at the type's bounds, NaN -> 0.
int64_t floatToInt(double v, ir::Type dst) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  int width = dst.bitWidth();
  if (dst.isSigned()) {
    double hi = std::ldexp(1.0, width - 1);  // 2^(w-1): first value above the max
    if (t >= hi) return static_cast<int64_t>((uint64_t(1) << (width - 1)) - 1);
    if (t < -hi) return canonicalInt(dst, static_cast<int64_t>(uint64_t(1) << (width - 1)));
    return static_cast<int64_t>(t);
  }
  double hi = std::ldexp(1.0, width);
  if (t <= 0) return 0;
  if (t >= hi) return canonicalInt(dst, -1);  // all ones
  return static_cast<int64_t>(static_cast<uint64_t>(t));
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
      for (int64_t i = 0; i < n; ++i) r.ints[i] = floatToInt(a.floats[i], dst);
    } else {  // canonical source values are already extended by the source's signedness
      const IntCanon canon(dst);
      for (int64_t i = 0; i < n; ++i) r.ints[i] = canon(static_cast<uint64_t>(a.ints[i]));
    }
  } else {  // dst is a float
    if (src.isPtr()) badCast();
    if (src.isFloat()) {
      const FloatRound round(dst);
      for (int64_t i = 0; i < n; ++i) r.floats[i] = round(a.floats[i]);
    } else {
      bool fromUnsigned = src.isUnsigned();
      for (int64_t i = 0; i < n; ++i) r.floats[i] = intToFloat(a.ints[i], fromUnsigned, dst);
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
  const uint64_t elementSize = static_cast<uint64_t>(storageBytes(type.pointee()));
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
