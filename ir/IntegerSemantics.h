// The integer semantics of the IR's element-wise ops and casts (docs/IR.md), in one place: constant folding
// (transforms/Canonicalize), the interpreter and the axis analysis compute with these, so they cannot disagree.
//
// Values are in canonical form: an integer of type T lives in an int64_t, sign-extended for signed types and
// zero-extended for unsigned ones and i1 (u64 keeps its bit pattern); pointers are their address. Arithmetic
// wraps to the type (two's complement); division by zero gives all ones (-1 signed, the maximum unsigned),
// `MIN / -1` wraps to MIN and its remainder is 0; a remainder by zero gives the dividend; shift amounts at least
// the width give 0 (all sign bits for an arithmetic shr). A negative amount of a signed type is read as a huge
// unsigned one (what the hardware does); docs/IR.md leaves it open, so constant folding does not fold it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "ir/OpInfo.h"
#include "ir/Types.h"

namespace tessera::ir {

// Width and signedness of an integer element type (a pointer counts as a 64-bit unsigned address), with the
// wrap into canonical form. Built once per op, so loops over elements do not inspect the type.
struct IntFormat {
  int width = 64;
  bool isSigned = false;
  uint64_t mask = ~uint64_t(0);  // the low `width` bits

  explicit IntFormat(Type t);

  // Truncates a 64-bit pattern to the width, then sign- or zero-extends it.
  int64_t wrap(uint64_t raw) const {
    if (width == 64) return static_cast<int64_t>(raw);
    raw &= mask;
    if (isSigned && (raw >> (width - 1)) != 0) raw |= ~mask;
    return static_cast<int64_t>(raw);
  }
  int64_t allOnes() const { return wrap(~uint64_t(0)); }
  int64_t minValue() const { return isSigned ? wrap(uint64_t(1) << (width - 1)) : 0; }
  int64_t maxValue() const { return isSigned ? wrap((uint64_t(1) << (width - 1)) - 1) : allOnes(); }
};

namespace intrules {

inline uint64_t bits(int64_t v) { return static_cast<uint64_t>(v); }

inline int64_t div(const IntFormat& f, int64_t a, int64_t b) {
  if (b == 0) return f.allOnes();
  if (!f.isSigned) return f.wrap(bits(a) / bits(b));
  if (b == -1) return f.wrap(0 - bits(a));  // MIN / -1 wraps to MIN (and avoids the int64 overflow)
  return f.wrap(bits(a / b));
}

inline int64_t rem(const IntFormat& f, int64_t a, int64_t b) {
  if (b == 0) return a;
  if (!f.isSigned) return f.wrap(bits(a) % bits(b));
  if (b == -1) return 0;  // avoids the MIN % -1 overflow
  return a % b;
}

// Canonical unsigned values (u64 included) order correctly as uint64.
inline int64_t min(const IntFormat& f, int64_t a, int64_t b) {
  return f.isSigned ? std::min(a, b) : static_cast<int64_t>(std::min(bits(a), bits(b)));
}
inline int64_t max(const IntFormat& f, int64_t a, int64_t b) {
  return f.isSigned ? std::max(a, b) : static_cast<int64_t>(std::max(bits(a), bits(b)));
}

inline int64_t shl(const IntFormat& f, int64_t a, int64_t amount) {
  return bits(amount) >= static_cast<uint64_t>(f.width) ? 0 : f.wrap(bits(a) << bits(amount));
}
// Arithmetic for signed types (canonical values are sign-extended, so the int64 shift is exact), else logical.
inline int64_t shr(const IntFormat& f, int64_t a, int64_t amount) {
  if (bits(amount) >= static_cast<uint64_t>(f.width)) return f.isSigned && a < 0 ? -1 : 0;
  return f.isSigned ? a >> bits(amount) : f.wrap(bits(a) >> bits(amount));
}

// High half of the full unsigned product (32- and 64-bit types).
inline int64_t mulHigh(const IntFormat& f, int64_t a, int64_t b) {
  if (f.width == 64) return static_cast<int64_t>((static_cast<unsigned __int128>(bits(a)) * bits(b)) >> 64);
  return f.wrap(((bits(a) & f.mask) * (bits(b) & f.mask)) >> f.width);
}

inline int64_t abs(const IntFormat& f, int64_t a) { return f.isSigned && a < 0 ? f.wrap(0 - bits(a)) : a; }

}  // namespace intrules

// Whether the binary op `kind` (add ... umulhi) is defined on integers of `element`: shifts are not defined on
// i1 and umulhi only on 32- and 64-bit types.
bool intBinaryDefined(OpKind kind, Type element);

// Calls fn(rule), rule(int64_t a, int64_t b) -> int64_t computing the binary op `kind` on canonical values of
// format `f`, and returns true; returns false without calling fn when `kind` is not a binary integer op. The
// switch on `kind` runs once, so a loop inside fn pays no per-element dispatch.
template <class Fn>
bool withIntBinaryRule(OpKind kind, const IntFormat& f, Fn&& fn) {
  using intrules::bits;
  switch (kind) {
    case OpKind::Add: fn([f](int64_t a, int64_t b) { return f.wrap(bits(a) + bits(b)); }); return true;
    case OpKind::Sub: fn([f](int64_t a, int64_t b) { return f.wrap(bits(a) - bits(b)); }); return true;
    case OpKind::Mul: fn([f](int64_t a, int64_t b) { return f.wrap(bits(a) * bits(b)); }); return true;
    case OpKind::Div: fn([f](int64_t a, int64_t b) { return intrules::div(f, a, b); }); return true;
    case OpKind::Rem: fn([f](int64_t a, int64_t b) { return intrules::rem(f, a, b); }); return true;
    case OpKind::Min: fn([f](int64_t a, int64_t b) { return intrules::min(f, a, b); }); return true;
    case OpKind::Max: fn([f](int64_t a, int64_t b) { return intrules::max(f, a, b); }); return true;
    case OpKind::And: fn([](int64_t a, int64_t b) { return a & b; }); return true;
    case OpKind::Or: fn([](int64_t a, int64_t b) { return a | b; }); return true;
    case OpKind::Xor: fn([](int64_t a, int64_t b) { return a ^ b; }); return true;
    case OpKind::Shl: fn([f](int64_t a, int64_t b) { return intrules::shl(f, a, b); }); return true;
    case OpKind::Shr: fn([f](int64_t a, int64_t b) { return intrules::shr(f, a, b); }); return true;
    case OpKind::UMulHi: fn([f](int64_t a, int64_t b) { return intrules::mulHigh(f, a, b); }); return true;
    default: return false;
  }
}

// Calls fn(rule), rule(int64_t a) -> int64_t computing neg, not or abs on canonical values of format `f`, and
// returns true; returns false without calling fn for other kinds.
template <class Fn>
bool withIntUnaryRule(OpKind kind, const IntFormat& f, Fn&& fn) {
  using intrules::bits;
  switch (kind) {
    case OpKind::Neg: fn([f](int64_t a) { return f.wrap(0 - bits(a)); }); return true;
    case OpKind::Not: fn([f](int64_t a) { return f.wrap(~bits(a)); }); return true;
    case OpKind::Abs: fn([f](int64_t a) { return intrules::abs(f, a); }); return true;
    default: return false;
  }
}

// One-off evaluation: the binary op `kind` on canonical values of integer type `element`, or nullopt when it is
// not a binary integer op defined on that type.
std::optional<int64_t> evalIntBinary(OpKind kind, Type element, int64_t a, int64_t b);
// neg, not, abs on a canonical value of integer type `element`; nullopt for other kinds.
std::optional<int64_t> evalIntUnary(OpKind kind, Type element, int64_t a);

// float -> integer `cast`: truncate toward zero, saturate at the type's bounds, NaN -> 0.
int64_t floatToInt(double v, const IntFormat& f);

}  // namespace tessera::ir
