#include "ir/IntegerSemantics.h"

#include <cmath>

namespace tessera::ir {

IntFormat::IntFormat(Type t) {
  if (t.isPtr()) return;
  width = t.bitWidth();
  isSigned = t.isSigned();
  if (width < 64) mask = (uint64_t(1) << width) - 1;
}

bool intBinaryDefined(OpKind kind, Type element) {
  switch (kind) {
    case OpKind::Shl:
    case OpKind::Shr: return !element.isBool();
    case OpKind::UMulHi: return element.bitWidth() == 32 || element.bitWidth() == 64;
    default: return withIntBinaryRule(kind, IntFormat(element), [](auto) {});
  }
}

std::optional<int64_t> evalIntBinary(OpKind kind, Type element, int64_t a, int64_t b) {
  if (!intBinaryDefined(kind, element)) return std::nullopt;
  int64_t result = 0;
  withIntBinaryRule(kind, IntFormat(element), [&](auto rule) { result = rule(a, b); });
  return result;
}

std::optional<int64_t> evalIntUnary(OpKind kind, Type element, int64_t a) {
  std::optional<int64_t> result;
  withIntUnaryRule(kind, IntFormat(element), [&](auto rule) { result = rule(a); });
  return result;
}

int64_t floatToInt(double v, const IntFormat& f) {
  if (std::isnan(v)) return 0;
  const double t = std::trunc(v);
  if (f.isSigned) {
    const double bound = std::ldexp(1.0, f.width - 1);  // 2^(w-1): the first value above the maximum
    if (t >= bound) return f.maxValue();
    if (t < -bound) return f.minValue();
    return static_cast<int64_t>(t);
  }
  if (t <= 0) return 0;
  if (t >= std::ldexp(1.0, f.width)) return f.maxValue();
  return static_cast<int64_t>(static_cast<uint64_t>(t));
}

}  // namespace tessera::ir
