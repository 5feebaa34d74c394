#include "backends/common/AxisFacts.h"

#include <algorithm>
#include <numeric>

namespace tessera::backends {

using ir::OpKind;

namespace {

constexpr int64_t kHuge = int64_t(1) << 30;  // "divisible by anything we care about" (e.g. the constant 0)

int64_t largestPowerOfTwoDividing(int64_t v) {
  if (v == 0) return kHuge;
  uint64_t u = static_cast<uint64_t>(v < 0 ? -v : v);
  return static_cast<int64_t>(std::min<uint64_t>(u & (~u + 1), kHuge));
}

int64_t gcd(int64_t a, int64_t b) { return std::gcd(a, b); }

size_t dims(const ir::Value* v) { return std::max<size_t>(1, v->type().shape().size()); }

AxisFacts unknown(size_t n) { return {std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1)}; }

// Divisibility that holds for every element (not only run starts).
int64_t everyElementDivisibility(const AxisFacts& f) {
  int64_t d = kHuge;
  for (size_t i = 0; i < f.contiguity.size(); ++i) d = std::min(d, f.contiguity[i] > 1 ? 1 : f.divisibility[i]);
  return d;
}

int64_t elementBytes(ir::Type pointee) { return pointee.isBool() ? 1 : std::max(1, pointee.bitWidth() / 8); }

}  // namespace

const AxisFacts& AxisAnalysis::get(const ir::Value* v) {
  auto it = memo_.find(v);
  if (it != memo_.end()) return it->second;
  AxisFacts f = compute(v);
  return memo_.emplace(v, std::move(f)).first->second;
}

AxisFacts AxisAnalysis::compute(const ir::Value* v) {
  const size_t n = dims(v);
  const std::vector<int64_t>& shape = v->type().shape();
  auto full = [&](size_t d) { return shape.empty() ? int64_t(1) : shape[d]; };
  if (v->isBlockArg()) {
    AxisFacts f = unknown(n);
    if (v->ownerBlock() == func_.body()) {
      const ir::AttrDict& attrs = func_.argAttrs(v->index());
      auto it = attrs.find("divisibility");
      if (it != attrs.end() && it->second.isInt() && it->second.getInt() > 0)
        f.divisibility[0] = largestPowerOfTwoDividing(it->second.getInt());
    }
    return f;
  }
  const ir::Op& op = *v->definingOp();
  auto operandFacts = [&](unsigned i) -> const AxisFacts& { return get(op.operand(i)); };
  switch (op.kind()) {
    case OpKind::Constant: {
      AxisFacts f = unknown(n);
      const ir::Attr& a = op.attr("value");
      if (a.isInt()) std::fill(f.divisibility.begin(), f.divisibility.end(), largestPowerOfTwoDividing(a.getInt()));
      for (size_t d = 0; d < n; ++d) f.constancy[d] = full(d);
      return f;
    }
    case OpKind::Arange: {
      AxisFacts f = unknown(1);
      f.contiguity[0] = full(0);
      f.divisibility[0] = largestPowerOfTwoDividing(op.intAttr("start"));
      return f;
    }
    case OpKind::Splat: {
      AxisFacts f = unknown(n);
      const AxisFacts& s = operandFacts(0);
      for (size_t d = 0; d < n; ++d) {
        f.constancy[d] = full(d);
        f.divisibility[d] = everyElementDivisibility(s);
      }
      return f;
    }
    case OpKind::Broadcast: {
      AxisFacts f = operandFacts(0);
      const std::vector<int64_t>& in = op.operand(0)->type().shape();
      for (size_t d = 0; d < in.size(); ++d)
        if (in[d] == 1 && shape[d] != 1) {
          f.contiguity[d] = 1;
          f.constancy[d] = shape[d];
        }
      return f;
    }
    case OpKind::ExpandDims: {
      const AxisFacts& s = operandFacts(0);
      if (op.operand(0)->type().isScalar()) {
        AxisFacts f = unknown(n);
        std::fill(f.divisibility.begin(), f.divisibility.end(), everyElementDivisibility(s));
        return f;
      }
      AxisFacts f = s;
      size_t axis = static_cast<size_t>(op.intAttr("axis"));
      f.contiguity.insert(f.contiguity.begin() + axis, 1);
      f.constancy.insert(f.constancy.begin() + axis, 1);
      f.divisibility.insert(f.divisibility.begin() + axis, everyElementDivisibility(s));
      return f;
    }
    case OpKind::ConvertLayout:
      return operandFacts(0);
    case OpKind::Hint: {
      AxisFacts f = operandFacts(0);
      auto apply = [&](const char* key, std::vector<int64_t>& field, bool isDivisibility) {
        if (!op.hasAttr(key)) return;
        const ir::Attr& a = op.attr(key);
        std::vector<int64_t> vals = a.isInt() ? std::vector<int64_t>{a.getInt()} : a.getIntArray();
        for (size_t d = 0; d < std::min(vals.size(), field.size()); ++d)
          field[d] = std::max(field[d], isDivisibility ? largestPowerOfTwoDividing(vals[d])
                                                       : largestPowerOfTwoDividing(vals[d]) == vals[d] ? vals[d] : 1);
      };
      apply("multiple_of", f.divisibility, true);
      apply("max_contiguous", f.contiguity, false);
      apply("max_constancy", f.constancy, false);
      return f;
    }
    case OpKind::Cast: {
      ir::Type from = op.operand(0)->type().element(), to = v->type().element();
      if (from.isInt() && to.isInt() && to.bitWidth() >= from.bitWidth() && !to.isBool()) return operandFacts(0);
      AxisFacts f = unknown(n);
      f.constancy = operandFacts(0).constancy;
      return f;
    }
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::AddPtr: {
      if (!v->type().element().isInt() && !v->type().element().isPtr()) break;
      const AxisFacts& a = operandFacts(0);
      AxisFacts bf = operandFacts(1);
      if (op.is(OpKind::AddPtr)) {
        int64_t bytes = elementBytes(v->type().element().pointee());
        for (int64_t& d : bf.divisibility) d = std::min(kHuge, d * bytes);
      }
      AxisFacts f = unknown(n);
      for (size_t d = 0; d < n; ++d) {
        f.constancy[d] = gcd(a.constancy[d], bf.constancy[d]);
        f.contiguity[d] = gcd(a.contiguity[d], bf.constancy[d]);
        if (!op.is(OpKind::Sub)) f.contiguity[d] = std::max(f.contiguity[d], gcd(a.constancy[d], bf.contiguity[d]));
        f.divisibility[d] = gcd(a.divisibility[d], bf.divisibility[d]);
      }
      return f;
    }
    case OpKind::Mul: {
      if (!v->type().element().isInt()) break;
      const AxisFacts& a = operandFacts(0);
      const AxisFacts& bf = operandFacts(1);
      AxisFacts f = unknown(n);
      int64_t div = std::min(kHuge, everyElementDivisibility(a) * everyElementDivisibility(bf));
      for (size_t d = 0; d < n; ++d) {
        f.constancy[d] = gcd(a.constancy[d], bf.constancy[d]);
        f.divisibility[d] = div;
      }
      return f;
    }
    case OpKind::Cmp: {
      const AxisFacts& a = operandFacts(0);
      const AxisFacts& bf = operandFacts(1);
      const std::string& pred = op.stringAttr("pred");
      AxisFacts f = unknown(n);
      for (size_t d = 0; d < n; ++d) {
        f.constancy[d] = gcd(a.constancy[d], bf.constancy[d]);
        // x < c and x >= c are constant over a run of x that starts at a multiple of a power of two dividing c.
        if ((pred == "lt" || pred == "ge") && bf.constancy[d] >= a.contiguity[d])
          f.constancy[d] = std::max(f.constancy[d], gcd(a.contiguity[d], gcd(a.divisibility[d], bf.divisibility[d])));
        if ((pred == "gt" || pred == "le") && a.constancy[d] >= bf.contiguity[d])
          f.constancy[d] = std::max(f.constancy[d], gcd(bf.contiguity[d], gcd(bf.divisibility[d], a.divisibility[d])));
      }
      return f;
    }
    case OpKind::And:
    case OpKind::Or:
    case OpKind::Xor:
    case OpKind::Select: {
      AxisFacts f = unknown(n);
      for (size_t d = 0; d < n; ++d) {
        f.constancy[d] = full(d);
        for (unsigned i = 0; i < op.numOperands(); ++i) f.constancy[d] = gcd(f.constancy[d], operandFacts(i).constancy[d]);
      }
      return f;
    }
    default:
      break;
  }
  return unknown(n);
}

}  // namespace tessera::backends
