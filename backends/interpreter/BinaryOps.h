// Internal to the interpreter: the binary arithmetic ops (add ... umulhi) on one pair of canonical elements, as
// functors over the IR's scalar rules (ir/IntegerSemantics.h, ir/FloatSemantics.h). withIntBinary and
// withFloatBinary switch on the op kind once and hand the matching functor to a loop, so element-wise ops,
// atomics and reduce/scan folds share one definition and pay no per-element dispatch.
#pragma once

#include "backends/interpreter/OpImpl.h"
#include "ir/FloatFormats.h"
#include "ir/FloatSemantics.h"
#include "ir/IntegerSemantics.h"

namespace tessera::interp::detail {

// Calls fn(f) with f(int64_t a, int64_t b) -> int64_t computing `kind` on canonical values of `element`.
template <class Fn>
void withIntBinary(const ir::Op& op, const ProgramContext& ctx, ir::OpKind kind, ir::Type element, Fn&& fn) {
  using ir::OpKind;
  if ((kind == OpKind::Shl || kind == OpKind::Shr) && !ir::intBinaryDefined(kind, element))
    fail(op, ctx, "shifts are not defined on i1");
  if (kind == OpKind::UMulHi && !ir::intBinaryDefined(kind, element))
    fail(op, ctx, "umulhi is defined on 32- and 64-bit integers only");
  if (!ir::withIntBinaryRule(kind, ir::IntFormat(element), fn))
    fail(op, ctx, std::string("'") + ir::opName(kind) + "' is not a binary integer operation");
}

// Calls fn(f) with f(double a, double b) -> double computing `kind` on values of float type `element`
// (computed in double, rounded once to the type).
template <class Fn>
void withFloatBinary(const ir::Op& op, const ProgramContext& ctx, ir::OpKind kind, ir::Type element, Fn&& fn) {
  const ir::ScalarKind type = element.scalarKind();
  bool defined = ir::withFloatBinaryRule(kind, [&](auto rule) {
    fn([type, rule](double a, double b) { return ir::roundToFloat(type, rule(a, b)); });
  });
  if (!defined)
    fail(op, ctx, std::string("'") + ir::opName(kind) + "' is not defined on floating-point type " +
                      element.element().str());
}

}  // namespace tessera::interp::detail
