#include "transforms/analysis/AxisInfo.h"

#include <algorithm>
#include <bit>
#include <numeric>

#include "ir/IntegerSemantics.h"

namespace tessera::transforms {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {

int64_t highestPow2Divisor(int64_t v) {
  if (v == 0) return kMaxDivisibility;
  uint64_t u = static_cast<uint64_t>(v);
  uint64_t lowest = u & (~u + 1);
  return lowest >= static_cast<uint64_t>(kMaxDivisibility) ? kMaxDivisibility : static_cast<int64_t>(lowest);
}

int64_t floorPow2(int64_t v) {
  if (v < 1) return 1;
  int64_t p = 1;
  while (p <= v / 2) p *= 2;
  return p;
}

// Product of two divisibilities, saturating at kMaxDivisibility.
int64_t saturatingMul(int64_t a, int64_t b) { return a >= kMaxDivisibility / b ? kMaxDivisibility : a * b; }

std::vector<int64_t> shapeOf(const Value* v) {
  std::vector<int64_t> s = v->type().shape();
  return s.empty() ? std::vector<int64_t>{1} : s;
}

bool isIntOrPtr(Type t) { return t.element().isInt() || t.element().isPtr(); }

std::string joined(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Makes `info` consistent with the value's shape: a known constant is constant everywhere; contiguity and
// constancy never exceed a dimension (and are 1 along size-1 dimensions).
AxisInfo normalized(AxisInfo info, const std::vector<int64_t>& shape, Type type) {
  bool tracksIntegers = isIntOrPtr(type);
  info.elementBytes = type.element().isPtr() ? type.pointee().storageBytes() : 1;
  for (int d = 0; d < info.rank(); ++d) {
    if (info.constantValue) {
      info.contiguity[d] = 1;
      info.constancy[d] = shape[d];
      info.divisibility[d] = highestPow2Divisor(*info.constantValue);
    }
    if (!tracksIntegers) {
      info.contiguity[d] = 1;
      info.divisibility[d] = 1;
    }
    info.contiguity[d] = std::clamp<int64_t>(info.contiguity[d], 1, shape[d]);
    info.constancy[d] = std::clamp<int64_t>(info.constancy[d], 1, shape[d]);
    info.divisibility[d] = std::clamp<int64_t>(info.divisibility[d], 1, kMaxDivisibility);
  }
  return info;
}

// Divisibility every single element of `info` has (the best over dimensions of block length 1).
int64_t elementDivisibility(const AxisInfo& info) {
  int64_t best = 1;
  for (int d = 0; d < info.rank(); ++d) best = std::max(best, info.divisibilityAt(d, 1));
  return best;
}

std::optional<int64_t> constantAttrValue(const Op& op) {
  if (!op.hasAttr("value")) return std::nullopt;
  const ir::Attr& a = op.attr("value");
  if (a.isInt()) return a.getInt();
  if (a.isBool()) return a.getBool() ? 1 : 0;
  return std::nullopt;
}

// ---- transfer functions of element-wise integer ops; `a`, `b` are the operands' facts, same rank as the result.
// They derive runs, divisibility and constancy; the value of constant results is folded by the caller with the
// IR's integer rules.

AxisInfo addSub(const AxisInfo& a, const AxisInfo& b, bool isSub) {
  AxisInfo r = AxisInfo::unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    // A run stays a run when the other side is constant over it; x - run is decreasing, so sub only keeps a's.
    int64_t c = std::min(a.contiguity[d], b.constancy[d]);
    if (!isSub) c = std::max(c, std::min(a.constancy[d], b.contiguity[d]));
    r.contiguity[d] = c;
    r.divisibility[d] = std::min(a.divisibilityAt(d, c), b.divisibilityAt(d, c));
    r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
  }
  return r;
}

AxisInfo mul(const AxisInfo& a, const AxisInfo& b) {
  AxisInfo r = AxisInfo::unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    int64_t c = 1;
    if (a.constantValue == 1) c = b.contiguity[d];
    if (b.constantValue == 1) c = a.contiguity[d];
    r.contiguity[d] = c;
    r.divisibility[d] = saturatingMul(a.divisibilityAt(d, c), b.divisibilityAt(d, c));
    r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
  }
  if (a.constantValue == 0 || b.constantValue == 0) r.constantValue = 0;
  return r;
}

AxisInfo divide(const AxisInfo& a, const AxisInfo& b) {
  if (b.constantValue == 1) return a;
  AxisInfo r = AxisInfo::unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
    // An exact division by a power of two keeps the remaining factors of two (also for negative values).
    if (b.constantValue && *b.constantValue > 0 && highestPow2Divisor(*b.constantValue) == *b.constantValue &&
        a.divisibilityAt(d, 1) >= *b.constantValue)
      r.divisibility[d] = a.divisibilityAt(d, 1) / *b.constantValue;
  }
  return r;
}

AxisInfo remainder(const AxisInfo& a, const AxisInfo& b, bool isUnsigned) {
  AxisInfo r = AxisInfo::unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
    // a - q*b is a multiple of anything dividing both.
    r.divisibility[d] = std::min(a.divisibilityAt(d, 1), b.divisibilityAt(d, 1));
    // Unsigned x % 2^k keeps runs that do not cross a multiple of 2^k (signed remainders of negative values
    // would break runs at zero, so they are not assumed).
    if (isUnsigned && b.constantValue && *b.constantValue > 0 &&
        highestPow2Divisor(*b.constantValue) == *b.constantValue) {
      int64_t c = std::min(a.contiguity[d], *b.constantValue);
      if (a.divisibilityAt(d, c) >= c) {
        r.contiguity[d] = c;
        r.divisibility[d] = std::min(a.divisibilityAt(d, c), *b.constantValue);
      }
    }
  }
  return r;
}

AxisInfo shift(const AxisInfo& a, const AxisInfo& b, bool left) {
  AxisInfo r = AxisInfo::unknown(a.rank());
  std::optional<int64_t> amount = b.constantValue;
  for (int d = 0; d < a.rank(); ++d) {
    r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
    if (amount == 0) {
      r.contiguity[d] = a.contiguity[d];
      r.divisibility[d] = a.divisibility[d];
    } else if (amount && *amount > 0 && *amount < 62) {
      int64_t elementDiv = a.divisibilityAt(d, 1);
      r.divisibility[d] = left ? saturatingMul(elementDiv, int64_t(1) << *amount)
                               : std::max<int64_t>(1, elementDiv >> *amount);
      if (!left && elementDiv == kMaxDivisibility) r.divisibility[d] = kMaxDivisibility;  // 0 stays 0
    }
  }
  return r;
}

// Bitwise and/or/xor, min/max: no runs survive; constancy and divisibility combine per element.
AxisInfo bitwiseOrMinMax(const AxisInfo& a, const AxisInfo& b, bool isAnd) {
  AxisInfo r = AxisInfo::unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
    int64_t da = a.divisibilityAt(d, 1), db = b.divisibilityAt(d, 1);
    // x & y has every low zero bit of either; |, ^, min and max only those common to both.
    r.divisibility[d] = isAnd ? std::max(da, db) : std::min(da, db);
  }
  return r;
}

AxisInfo compare(const AxisInfo& a, const AxisInfo& b, const std::string& pred) {
  AxisInfo r = AxisInfo::unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    int64_t k = std::min(a.constancy[d], b.constancy[d]);
    // run < bound (or >=) is constant over aligned blocks where both the run's start and the bound are multiples
    // of the block length: the block lies entirely on one side of the bound.
    auto runVersusBound = [&](const AxisInfo& run, const AxisInfo& bound) {
      return std::min({run.contiguity[d], run.divisibility[d], bound.constancy[d], bound.divisibilityAt(d, 1)});
    };
    if (pred == "lt" || pred == "ge") k = std::max(k, runVersusBound(a, b));
    if (pred == "gt" || pred == "le") k = std::max(k, runVersusBound(b, a));
    r.constancy[d] = k;
  }
  return r;
}

AxisInfo select(const AxisInfo& cond, const AxisInfo& a, const AxisInfo& b) {
  if (cond.constantValue) return *cond.constantValue ? a : b;
  AxisInfo r = AxisInfo::unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    int64_t c = std::min({cond.constancy[d], a.contiguity[d], b.contiguity[d]});
    r.contiguity[d] = c;
    r.divisibility[d] = std::min(a.divisibilityAt(d, c), b.divisibilityAt(d, c));
    r.constancy[d] = std::min({cond.constancy[d], a.constancy[d], b.constancy[d]});
  }
  if (a.constantValue && a.constantValue == b.constantValue) r.constantValue = a.constantValue;
  return r;
}

AxisInfo addPtr(const AxisInfo& p, const AxisInfo& off, int64_t elemBytes) {
  AxisInfo r = AxisInfo::unknown(p.rank());
  for (int d = 0; d < p.rank(); ++d) {
    int64_t c = std::max(std::min(p.contiguity[d], off.constancy[d]), std::min(p.constancy[d], off.contiguity[d]));
    r.contiguity[d] = c;
    r.divisibility[d] = std::min(p.divisibilityAt(d, c), saturatingMul(off.divisibilityAt(d, c), elemBytes));
    r.constancy[d] = std::min(p.constancy[d], off.constancy[d]);
  }
  return r;
}

AxisInfo cast(const AxisInfo& a, Type from, Type to) {
  Type src = from.element(), dst = to.element();
  if (src.isPtr() || dst.isPtr()) return a;  // pointer <-> integer keeps the address
  AxisInfo r = AxisInfo::unknown(a.rank());
  r.constancy = a.constancy;
  if (!src.isInt() || !dst.isInt()) return r;
  bool sameValues = src.isBool() || (dst.bitWidth() >= src.bitWidth() && src.isSigned() == dst.isSigned());
  if (sameValues) {
    AxisInfo kept = a;
    if (dst.isBool()) kept.constantValue.reset();
    return kept;
  }
  // Truncation or a signedness change keeps the low bits (so divisibility up to the width) but not runs.
  int64_t widthLimit = dst.bitWidth() >= 31 ? kMaxDivisibility : int64_t(1) << dst.bitWidth();
  for (int d = 0; d < a.rank(); ++d) r.divisibility[d] = std::min(a.divisibilityAt(d, 1), widthLimit);
  return r;
}

std::vector<int64_t> hintValues(const ir::Attr& a, int rank) {
  if (a.isInt()) return std::vector<int64_t>(rank, a.getInt());
  if (a.isArray()) {
    std::vector<int64_t> v = a.getIntArray();
    if (static_cast<int>(v.size()) == rank) return v;
  }
  throw Error("hint: expected an int or an array of " + std::to_string(rank) + " ints, got " + a.str());
}

}  // namespace

// ---------------------------------------------------------------------------------------------- AxisInfo

AxisInfo AxisInfo::unknown(int rank) {
  AxisInfo info;
  info.contiguity.assign(rank, 1);
  info.divisibility.assign(rank, 1);
  info.constancy.assign(rank, 1);
  return info;
}

AxisInfo AxisInfo::meet(const AxisInfo& a, const AxisInfo& b) {
  AxisInfo r = unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    int64_t c = std::min(a.contiguity[d], b.contiguity[d]);
    r.contiguity[d] = c;
    r.divisibility[d] = std::min(a.divisibilityAt(d, c), b.divisibilityAt(d, c));
    r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
  }
  if (a.constantValue == b.constantValue) r.constantValue = a.constantValue;
  return r;
}

int64_t AxisInfo::divisibilityAt(int d, int64_t blockLen) const {
  if (blockLen >= contiguity[d]) return divisibility[d];
  return std::min(divisibility[d], blockLen * elementBytes);  // blocks start at run start + k * blockLen steps
}

std::string AxisInfo::str() const {
  std::string s = "{contiguity = " + joined(contiguity) + ", divisibility = " + joined(divisibility) +
                  ", constancy = " + joined(constancy);
  if (constantValue) s += ", value = " + std::to_string(*constantValue);
  return s + "}";
}

// ---------------------------------------------------------------------------------------------- analysis

AxisInfoAnalysis::AxisInfoAnalysis(const ir::Function& f) {
  for (unsigned i = 0; i < f.numArguments(); ++i) {
    const Value* arg = f.argument(i);
    Type t = arg->type();
    AxisInfo info = AxisInfo::unknown(std::max(1, t.rank()));
    if (t.isPtr()) std::fill(info.divisibility.begin(), info.divisibility.end(), t.pointee().storageBytes());
    const ir::AttrDict& attrs = f.argAttrs(i);
    if (auto it = attrs.find("divisibility"); it != attrs.end() && it->second.isInt() && isIntOrPtr(t))
      std::fill(info.divisibility.begin(), info.divisibility.end(), highestPow2Divisor(it->second.getInt()));
    if (auto it = attrs.find("equal_to_1"); it != attrs.end() && it->second.isBool() && it->second.getBool() &&
                                            t.element().isInt())
      info.constantValue = 1;
    set(arg, info);
  }
  analyzeBlock(*f.body());
}

AxisInfo AxisInfoAnalysis::get(const Value* v) const {
  auto it = info_.find(v);
  if (it != info_.end()) return it->second;
  return AxisInfo::unknown(std::max(1, v->type().rank()));
}

std::vector<int64_t> AxisInfoAnalysis::contiguityOrder(const Value* ptr) const {
  AxisInfo info = get(ptr);
  std::vector<int64_t> order(info.rank());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    if (info.contiguity[x] != info.contiguity[y]) return info.contiguity[x] > info.contiguity[y];
    return x > y;
  });
  return order;
}

int64_t AxisInfoAnalysis::widestAccess(const Value* ptr, const Value* mask, int d, int64_t maxElements) const {
  const AxisInfo info = get(ptr);
  int64_t width = std::min(maxElements, info.contiguity[d]);
  if (mask && mask->type().isTile()) width = std::min(width, get(mask).constancy[d]);
  width = std::bit_floor(static_cast<uint64_t>(std::max<int64_t>(width, 1)));
  while (width > 1 && info.divisibilityAt(d, width) % (width * info.elementBytes) != 0) width /= 2;
  return width;
}

void AxisInfoAnalysis::set(const Value* v, AxisInfo info) {
  info_[v] = normalized(std::move(info), shapeOf(v), v->type());
}

void AxisInfoAnalysis::analyzeBlock(const ir::Block& b) {
  for (const auto& op : b.ops()) analyzeOp(*op);
}

void AxisInfoAnalysis::analyzeOp(const Op& op) {
  switch (op.kind()) {
    case OpKind::Constant: case OpKind::Arange: case OpKind::Splat:
      set(op.result(0), constantLikeInfo(op));
      return;
    case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Trans: case OpKind::Reshape: case OpKind::Cat:
    case OpKind::ConvertLayout: case OpKind::Hint:
      set(op.result(0), shapeOpInfo(op));
      return;
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem: case OpKind::Shl:
    case OpKind::Shr: case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Min: case OpKind::Max:
    case OpKind::Neg: case OpKind::Abs: case OpKind::Cmp: case OpKind::Select: case OpKind::Cast: case OpKind::AddPtr:
      set(op.result(0), arithmeticInfo(op));
      return;
    case OpKind::For: analyzeLoop(op); return;
    case OpKind::While: analyzeWhile(op); return;
    case OpKind::If: analyzeIf(op); return;
    default: analyzeOther(op); return;
  }
}

// constant, arange, splat: values known from attributes, or the same value everywhere.
AxisInfo AxisInfoAnalysis::constantLikeInfo(const Op& op) const {
  const std::vector<int64_t> shape = shapeOf(op.result(0));
  AxisInfo info = AxisInfo::unknown(static_cast<int>(shape.size()));
  switch (op.kind()) {
    case OpKind::Constant:
      info.constancy = shape;
      if (op.result(0)->type().element().isInt()) info.constantValue = constantAttrValue(op);
      return info;
    case OpKind::Arange: {
      int64_t start = op.intAttr("start");
      info.contiguity[0] = shape[0];
      info.divisibility[0] = highestPow2Divisor(start);
      if (shape[0] == 1) info.constantValue = start;
      return info;
    }
    default: {  // splat
      AxisInfo s = get(op.operand(0));
      info.constancy = shape;
      std::fill(info.divisibility.begin(), info.divisibility.end(), s.divisibilityAt(0, 1));
      info.constantValue = s.constantValue;
      return info;
    }
  }
}

// Shape ops, layout conversions and hints: the operand's facts, moved to the result's dimensions.
AxisInfo AxisInfoAnalysis::shapeOpInfo(const Op& op) const {
  const std::vector<int64_t> shape = shapeOf(op.result(0));
  const int resultRank = static_cast<int>(shape.size());
  AxisInfo a = get(op.operand(0));
  switch (op.kind()) {
    case OpKind::Broadcast: {
      std::vector<int64_t> inShape = shapeOf(op.operand(0));
      for (int d = 0; d < a.rank(); ++d)
        if (inShape[d] == 1 && shape[d] > 1) a.constancy[d] = shape[d];  // a size-1 dimension repeated
      return a;
    }
    case OpKind::ExpandDims: {
      if (op.operand(0)->type().rank() == 0) {
        AxisInfo info = AxisInfo::unknown(1);
        info.divisibility[0] = a.divisibilityAt(0, 1);
        info.constantValue = a.constantValue;
        return info;
      }
      int axis = static_cast<int>(op.intAttr("axis"));
      int64_t everyElement = elementDivisibility(a);
      a.contiguity.insert(a.contiguity.begin() + axis, 1);
      a.constancy.insert(a.constancy.begin() + axis, 1);
      a.divisibility.insert(a.divisibility.begin() + axis, everyElement);
      return a;
    }
    case OpKind::Trans: {
      AxisInfo info = AxisInfo::unknown(resultRank);
      std::vector<int64_t> perm = op.attr("perm").getIntArray();
      for (int i = 0; i < resultRank; ++i) {
        info.contiguity[i] = a.contiguity[perm[i]];
        info.divisibility[i] = a.divisibility[perm[i]];
        info.constancy[i] = a.constancy[perm[i]];
      }
      info.constantValue = a.constantValue;
      return info;
    }
    case OpKind::Reshape: {
      AxisInfo info = AxisInfo::unknown(resultRank);
      std::fill(info.divisibility.begin(), info.divisibility.end(), elementDivisibility(a));
      info.constantValue = a.constantValue;
      if (a.constancy == shapeOf(op.operand(0))) info.constancy = shape;  // constant everywhere stays so
      return info;
    }
    case OpKind::Cat: return AxisInfo::meet(a, get(op.operand(1)));
    case OpKind::Hint: {
      int rank = a.rank();
      auto raise = [&](const char* key, std::vector<int64_t>& field, bool isDivisibility) {
        if (!op.hasAttr(key)) return;
        std::vector<int64_t> v = hintValues(op.attr(key), rank);
        for (int d = 0; d < rank; ++d)
          field[d] = std::max(field[d], isDivisibility ? highestPow2Divisor(v[d]) : floorPow2(v[d]));
      };
      raise("multiple_of", a.divisibility, true);
      raise("max_contiguous", a.contiguity, false);
      raise("max_constancy", a.constancy, false);
      return a;
    }
    default: return a;  // convert_layout
  }
}

// Element-wise integer and pointer ops (and select, cmp, cast): the transfer functions above, and a constant
// result when both operands of an integer op are constants.
AxisInfo AxisInfoAnalysis::arithmeticInfo(const Op& op) const {
  auto in = [&](unsigned i) { return get(op.operand(i)); };
  const Type type = op.result(0)->type();
  const bool isUnsigned = type.element().isInt() && type.isUnsigned();
  AxisInfo info;
  switch (op.kind()) {
    case OpKind::Add: info = addSub(in(0), in(1), false); break;
    case OpKind::Sub: info = addSub(in(0), in(1), true); break;
    case OpKind::Mul: info = mul(in(0), in(1)); break;
    case OpKind::Div: info = divide(in(0), in(1)); break;
    case OpKind::Rem: info = remainder(in(0), in(1), isUnsigned); break;
    case OpKind::Shl: info = shift(in(0), in(1), true); break;
    case OpKind::Shr: info = shift(in(0), in(1), false); break;
    case OpKind::And: info = bitwiseOrMinMax(in(0), in(1), true); break;
    case OpKind::Or:
    case OpKind::Xor:
    case OpKind::Min:
    case OpKind::Max: info = bitwiseOrMinMax(in(0), in(1), false); break;
    case OpKind::Neg:
    case OpKind::Abs: {
      AxisInfo a = in(0);
      info = AxisInfo::unknown(a.rank());
      info.constancy = a.constancy;
      for (int d = 0; d < a.rank(); ++d) info.divisibility[d] = a.divisibilityAt(d, 1);
      break;
    }
    case OpKind::Cmp: info = compare(in(0), in(1), op.stringAttr("pred")); break;
    case OpKind::Select: info = select(in(0), in(1), in(2)); break;
    case OpKind::Cast: info = cast(in(0), op.operand(0)->type(), type); break;
    default: info = addPtr(in(0), in(1), op.operand(0)->type().pointee().storageBytes()); break;  // addptr
  }
  switch (op.kind()) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem: case OpKind::Shl:
    case OpKind::Shr: {
      std::optional<int64_t> a = in(0).constantValue, b = in(1).constantValue;
      if (a && b && type.element().isInt()) info.constantValue = ir::evalIntBinary(op.kind(), type.element(), *a, *b);
      break;
    }
    default: break;
  }
  return info;
}

void AxisInfoAnalysis::analyzeIf(const Op& op) {
  analyzeBlock(*op.region(0));
  analyzeBlock(*op.region(1));
  Op* thenYield = op.region(0)->terminator();
  Op* elseYield = op.region(1)->terminator();
  for (unsigned i = 0; i < op.numResults(); ++i) {
    AxisInfo info = AxisInfo::unknown(std::max(1, op.result(i)->type().rank()));
    if (thenYield && elseYield && i < thenYield->numOperands() && i < elseYield->numOperands())
      info = AxisInfo::meet(get(thenYield->operand(i)), get(elseYield->operand(i)));
    set(op.result(i), info);
  }
}

// Everything else: element-wise ops keep the constancy their operands share; other results are unknown. Values
// inside other regions (reduce/scan combiners) are analyzed with unknown arguments.
void AxisInfoAnalysis::analyzeOther(const Op& op) {
  for (unsigned r = 0; r < op.numRegions(); ++r) analyzeBlock(*op.region(r));
  for (unsigned i = 0; i < op.numResults(); ++i) {
    AxisInfo info = AxisInfo::unknown(std::max(1, op.result(i)->type().rank()));
    if (op.info().has(ir::kElementwise) && op.numOperands() > 0) {
      info.constancy = shapeOf(op.result(i));
      for (Value* operand : op.operands()) {
        AxisInfo a = get(operand);
        for (int d = 0; d < info.rank() && d < a.rank(); ++d) info.constancy[d] = std::min(info.constancy[d], a.constancy[d]);
      }
    }
    set(op.result(i), info);
  }
}

// Loop-carried values start as their inits and are met with what each iteration yields, until nothing changes.
// Facts only ever shrink (each is a power of two, bounded below by 1), so this terminates; the bound below only
// guards against a bug turning into a hang.
void AxisInfoAnalysis::analyzeLoop(const Op& op) {
  ir::Block* body = op.region(0);
  AxisInfo lb = get(op.operand(0)), step = get(op.operand(2));
  AxisInfo iv = AxisInfo::unknown(1);
  iv.divisibility[0] = std::min(lb.divisibilityAt(0, 1), step.divisibilityAt(0, 1));
  set(body->argument(0), iv);
  unsigned numCarried = op.numOperands() - 3;
  for (unsigned i = 0; i < numCarried; ++i) set(body->argument(i + 1), get(op.operand(i + 3)));
  for (int iteration = 0;; ++iteration) {
    analyzeBlock(*body);
    Op* yield = body->terminator();
    bool changed = false;
    for (unsigned i = 0; i < numCarried; ++i) {
      AxisInfo current = get(body->argument(i + 1));
      AxisInfo next = yield && i < yield->numOperands() ? AxisInfo::meet(current, get(yield->operand(i)))
                                                        : AxisInfo::unknown(current.rank());
      if (iteration > 64) next = AxisInfo::unknown(current.rank());
      set(body->argument(i + 1), next);
      changed |= get(body->argument(i + 1)) != current;
    }
    if (!changed) break;
  }
  for (unsigned i = 0; i < op.numResults() && i < numCarried; ++i) set(op.result(i), get(body->argument(i + 1)));
}

// `while`: the before region's arguments are the inits met with every after-region yield; the after region
// receives the same values, and the results are what the before region saw last.
void AxisInfoAnalysis::analyzeWhile(const Op& op) {
  ir::Block* before = op.region(0);
  ir::Block* after = op.region(1);
  unsigned n = op.numOperands();
  for (unsigned i = 0; i < n && i < before->numArguments(); ++i) set(before->argument(i), get(op.operand(i)));
  for (int iteration = 0;; ++iteration) {
    analyzeBlock(*before);
    for (unsigned i = 0; i < n && i < after->numArguments() && i < before->numArguments(); ++i)
      set(after->argument(i), get(before->argument(i)));
    analyzeBlock(*after);
    Op* yield = after->terminator();
    bool changed = false;
    for (unsigned i = 0; i < n && i < before->numArguments(); ++i) {
      AxisInfo current = get(before->argument(i));
      AxisInfo next = yield && i < yield->numOperands() ? AxisInfo::meet(current, get(yield->operand(i)))
                                                        : AxisInfo::unknown(current.rank());
      if (iteration > 64) next = AxisInfo::unknown(current.rank());
      set(before->argument(i), next);
      changed |= get(before->argument(i)) != current;
    }
    if (!changed) break;
  }
  for (unsigned i = 0; i < op.numResults() && i < before->numArguments(); ++i)
    set(op.result(i), get(before->argument(i)));
}

}  // namespace tessera::transforms
