// The floating-point semantics of the IR's element-wise ops (docs/IR.md), in one place for constant folding and
// the interpreter: every op is computed in double precision on values of the element type, and the caller rounds
// the result once to that type (roundToFloat in FloatFormats.h). rem is C fmod; min and max return the other
// operand when one is NaN (C fmin/fmax).
#pragma once

#include <cmath>

#include "ir/OpInfo.h"

namespace tessera::ir {

// Calls fn(rule), rule(double a, double b) -> double computing the binary op `kind` unrounded, and returns true;
// returns false without calling fn when `kind` is not defined on floats. The switch runs once per call.
template <class Fn>
bool withFloatBinaryRule(OpKind kind, Fn&& fn) {
  switch (kind) {
    case OpKind::Add: fn([](double a, double b) { return a + b; }); return true;
    case OpKind::Sub: fn([](double a, double b) { return a - b; }); return true;
    case OpKind::Mul: fn([](double a, double b) { return a * b; }); return true;
    case OpKind::Div: fn([](double a, double b) { return a / b; }); return true;
    case OpKind::Rem: fn([](double a, double b) { return std::fmod(a, b); }); return true;
    case OpKind::Min: fn([](double a, double b) { return std::fmin(a, b); }); return true;
    case OpKind::Max: fn([](double a, double b) { return std::fmax(a, b); }); return true;
    default: return false;
  }
}

// The same for the unary ops (neg abs exp exp2 log log2 sqrt rsqrt sin cos tanh erf floor ceil).
template <class Fn>
bool withFloatUnaryRule(OpKind kind, Fn&& fn) {
  switch (kind) {
    case OpKind::Neg: fn([](double x) { return -x; }); return true;
    case OpKind::Abs: fn([](double x) { return std::fabs(x); }); return true;
    case OpKind::Exp: fn([](double x) { return std::exp(x); }); return true;
    case OpKind::Exp2: fn([](double x) { return std::exp2(x); }); return true;
    case OpKind::Log: fn([](double x) { return std::log(x); }); return true;
    case OpKind::Log2: fn([](double x) { return std::log2(x); }); return true;
    case OpKind::Sqrt: fn([](double x) { return std::sqrt(x); }); return true;
    case OpKind::Rsqrt: fn([](double x) { return 1.0 / std::sqrt(x); }); return true;
    case OpKind::Sin: fn([](double x) { return std::sin(x); }); return true;
    case OpKind::Cos: fn([](double x) { return std::cos(x); }); return true;
    case OpKind::Tanh: fn([](double x) { return std::tanh(x); }); return true;
    case OpKind::Erf: fn([](double x) { return std::erf(x); }); return true;
    case OpKind::Floor: fn([](double x) { return std::floor(x); }); return true;
    case OpKind::Ceil: fn([](double x) { return std::ceil(x); }); return true;
    default: return false;
  }
}

}  // namespace tessera::ir
