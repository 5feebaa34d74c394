// Internal to the interpreter: the semantics of the binary arithmetic ops (add ... umulhi) on one pair of
// canonical elements, as functors. withIntBinary/withFloatBinary switch on the op kind once and hand the
// matching functor to a loop, so element-wise ops, atomics and reduce/scan folds share one definition and
// pay no per-element dispatch.
#pragma once

#include <algorithm>
#include <cmath>

#include "backends/interpreter/OpImpl.h"

namespace tessera::interp::detail {

inline int64_t signedDiv(int64_t a, int64_t b) {
  if (b == 0) return -1;                                                    // what NVIDIA hardware gives
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));  // MIN / -1 wraps to MIN
  return a / b;
}

inline int64_t signedRem(int64_t a, int64_t b) {
  if (b == 0) return a;
  if (b == -1) return 0;  // avoids the MIN % -1 overflow
  return a % b;
}

// High half of the full unsigned product of two values of `width` (32 or 64) bits.
inline uint64_t unsignedMulHigh(uint64_t a, uint64_t b, int width, uint64_t mask) {
  if (width == 64) return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
  return ((a & mask) * (b & mask)) >> width;
}

// Calls fn(f) with f(int64_t a, int64_t b) -> int64_t computing `kind` on canonical values of `element`.
template <class Fn>
void withIntBinary(const ir::Op& op, const ProgramContext& ctx, ir::OpKind kind, ir::Type element, Fn&& fn) {
  using ir::OpKind;
  const IntCanon canon(element);
  const bool isSigned = element.isSigned();
  const uint64_t width = static_cast<uint64_t>(canon.width);
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  switch (kind) {
    case OpKind::Add: fn([=](int64_t a, int64_t b) { return canon(u(a) + u(b)); }); return;
    case OpKind::Sub: fn([=](int64_t a, int64_t b) { return canon(u(a) - u(b)); }); return;
    case OpKind::Mul: fn([=](int64_t a, int64_t b) { return canon(u(a) * u(b)); }); return;
    case OpKind::Div:
      if (isSigned)
        fn([=](int64_t a, int64_t b) { return canon(u(signedDiv(a, b))); });
      else  // unsigned division by zero gives all ones
        fn([=](int64_t a, int64_t b) { return b == 0 ? canon(~uint64_t(0)) : canon(u(a) / u(b)); });
      return;
    case OpKind::Rem:
      if (isSigned)
        fn([=](int64_t a, int64_t b) { return canon(u(signedRem(a, b))); });
      else
        fn([=](int64_t a, int64_t b) { return b == 0 ? a : canon(u(a) % u(b)); });
      return;
    case OpKind::Min:
      if (isSigned)
        fn([](int64_t a, int64_t b) { return std::min(a, b); });
      else  // canonical unsigned values (u64 included) order correctly as uint64
        fn([=](int64_t a, int64_t b) { return static_cast<int64_t>(std::min(u(a), u(b))); });
      return;
    case OpKind::Max:
      if (isSigned)
        fn([](int64_t a, int64_t b) { return std::max(a, b); });
      else
        fn([=](int64_t a, int64_t b) { return static_cast<int64_t>(std::max(u(a), u(b))); });
      return;
    case OpKind::And: fn([](int64_t a, int64_t b) { return a & b; }); return;
    case OpKind::Or: fn([](int64_t a, int64_t b) { return a | b; }); return;
    case OpKind::Xor: fn([](int64_t a, int64_t b) { return a ^ b; }); return;
    case OpKind::Shl:
      if (element.isBool()) fail(op, ctx, "shifts are not defined on i1");
      // A negative amount reads as a huge unsigned one, i.e. >= the width.
      fn([=](int64_t a, int64_t b) { return u(b) >= width ? 0 : canon(u(a) << u(b)); });
      return;
    case OpKind::Shr:
      if (element.isBool()) fail(op, ctx, "shifts are not defined on i1");
      if (isSigned)  // canonical signed values are sign-extended, so the int64 arithmetic shift is exact
        fn([=](int64_t a, int64_t b) { return u(b) >= width ? (a < 0 ? -1 : 0) : a >> u(b); });
      else
        fn([=](int64_t a, int64_t b) { return u(b) >= width ? 0 : canon(u(a) >> u(b)); });
      return;
    case OpKind::UMulHi:
      if (width != 32 && width != 64) fail(op, ctx, "umulhi is defined on 32- and 64-bit integers only");
      fn([=](int64_t a, int64_t b) { return canon(unsignedMulHigh(u(a), u(b), canon.width, canon.mask)); });
      return;
    default:
      fail(op, ctx, std::string("'") + ir::opName(kind) + "' is not a binary integer operation");
  }
}

// Calls fn(f) with f(double a, double b) -> double computing `kind` on values of float type `element`
// (computed in double, rounded once to the type).
template <class Fn>
void withFloatBinary(const ir::Op& op, const ProgramContext& ctx, ir::OpKind kind, ir::Type element, Fn&& fn) {
  using ir::OpKind;
  const FloatRound round(element);
  switch (kind) {
    case OpKind::Add: fn([=](double a, double b) { return round(a + b); }); return;
    case OpKind::Sub: fn([=](double a, double b) { return round(a - b); }); return;
    case OpKind::Mul: fn([=](double a, double b) { return round(a * b); }); return;
    case OpKind::Div: fn([=](double a, double b) { return round(a / b); }); return;
    case OpKind::Rem: fn([=](double a, double b) { return round(std::fmod(a, b)); }); return;
    case OpKind::Min: fn([](double a, double b) { return std::fmin(a, b); }); return;  // NaN loses
    case OpKind::Max: fn([](double a, double b) { return std::fmax(a, b); }); return;
    default:
      fail(op, ctx, std::string("'") + ir::opName(kind) + "' is not defined on floating-point type " +
                        element.element().str());
  }
}

}  // namespace tessera::interp::detail
