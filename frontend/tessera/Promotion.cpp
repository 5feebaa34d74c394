#include "tessera/Promotion.h"

#include <cmath>
#include <sstream>

#include "ir/IntegerSemantics.h"

namespace tessera::detail {

using ir::ScalarKind;
using ir::Type;

const char* const kUndefinedTensor =
    "use of a Tensor that has no value here: it was never assigned, or it was defined inside a traced loop or "
    "branch and used after it (declare it before the loop or branch and assign to it inside)";

void fail(const std::string& message, const SourceLoc& loc) { throw Error(message, toLocation(loc)); }

std::string shapeStr(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

Type typeOf(const TArg& a) {
  switch (a.kind()) {
    case TArg::Kind::Tensor: {
      if (!a.tensor()->defined()) fail(kUndefinedTensor, a.loc());
      return a.tensor()->type();
    }
    case TArg::Kind::Int: return Type::i32();
    case TArg::Kind::Float: return Type::f32();
    case TArg::Kind::Bool: return Type::i1();
  }
  return Type();
}

static int floatRank(ScalarKind k) {
  switch (k) {
    case ScalarKind::F16: case ScalarKind::BF16: return 1;
    case ScalarKind::F32: return 2;
    case ScalarKind::F64: return 3;
    default: return 0;
  }
}

static Type promoteTyped(Type a, Type b, const char* opName, const SourceLoc& loc) {
  if (a.isFP8() || b.isFP8())
    fail(std::string("'") + opName + "': fp8 values are storage-only; cast them to f16 or f32 first", loc);
  if (a.isPtr() || b.isPtr()) {
    if (a == b) return a;
    fail(std::string("'") + opName + "': cannot combine " + a.str() + " and " + b.str(), loc);
  }
  if (a == b) return a;
  if (a.isFloat() && b.isFloat()) {
    ScalarKind ka = a.scalarKind(), kb = b.scalarKind();
    if (floatRank(ka) == floatRank(kb)) return Type::f32();  // f16 with bf16
    return floatRank(ka) > floatRank(kb) ? a : b;
  }
  if (a.isFloat()) return a;
  if (b.isFloat()) return b;
  // Two different integer types.
  if (a.isBool()) return b;
  if (b.isBool()) return a;
  if (a.isSigned() == b.isSigned()) return a.bitWidth() >= b.bitWidth() ? a : b;
  Type u = a.isSigned() ? b : a, s = a.isSigned() ? a : b;
  return u.bitWidth() >= s.bitWidth() ? u : s;
}

Type promote(const TArg& a, const TArg& b, const char* opName) {
  bool aLit = a.kind() != TArg::Kind::Tensor, bLit = b.kind() != TArg::Kind::Tensor;
  if (aLit && bLit) return promoteTyped(typeOf(a), typeOf(b), opName, a.loc());
  if (aLit || bLit) {
    const TArg& lit = aLit ? a : b;
    Type t = typeOf(aLit ? b : a).element();
    if (t.isFP8()) fail(std::string("'") + opName + "': fp8 values are storage-only; cast them to f16 or f32 first", lit.loc());
    if (t.isPtr()) return t;
    if (lit.kind() == TArg::Kind::Float && !t.isFloat()) return Type::f32();
    return t;  // weak literal adopts the tensor's type
  }
  return promoteTyped(typeOf(a).element(), typeOf(b).element(), opName, a.loc());
}

Type promote(Type a, const TArg& b, const char* opName) {
  if (b.kind() != TArg::Kind::Tensor) {
    if (b.kind() == TArg::Kind::Float && !a.isFloat()) return Type::f32();
    return a;
  }
  return promoteTyped(a, typeOf(b).element(), opName, b.loc());
}

std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const char* opName,
                                     const SourceLoc& loc) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      fail(std::string("'") + opName + "': incompatible shapes " + shapeStr(a) + " and " + shapeStr(b), loc);
    out[i] = std::max(da, db);
  }
  return out;
}

Tensor constant(Type type, const TArg& value, const SourceLoc& loc) {
  Context& ctx = Context::current(loc);
  if (auto err = Type::checkTileShape(type.shape())) fail(*err, loc);
  if (type.isPtr()) fail("cannot make a pointer constant from a number", loc);
  if (type.isFP8()) fail("fp8 constants are not supported: make an f16/f32 constant and cast it", loc);
  ir::Attr attr;
  if (type.isFloat()) {
    attr = ir::Attr::floating(value.kind() == TArg::Kind::Float ? value.floatValue()
                                                                : static_cast<double>(value.intValue()));
  } else if (type.isBool()) {
    double v = value.kind() == TArg::Kind::Float ? value.floatValue() : static_cast<double>(value.intValue());
    attr = ir::Attr::boolean(v != 0);
  } else {
    if (value.kind() == TArg::Kind::Float) {
      // C++ truncation, as the literal would convert; where C++ leaves the result undefined (NaN, infinities,
      // values outside the type), the author gets an error instead of an arbitrary constant.
      double v = std::trunc(value.floatValue());
      int64_t i = v >= -0x1p63 && v < 0x1p63 ? static_cast<int64_t>(v) : 0;
      if (static_cast<double>(i) != v || ir::IntFormat(type).wrap(static_cast<uint64_t>(i)) != i || (type.isUnsigned() && i < 0)) {
        std::ostringstream text;
        text << value.floatValue();
        fail("cannot make a " + type.element().str() + " constant from " + text.str() + ": out of its range", loc);
      }
      attr = ir::Attr::integer(i);
    } else {
      attr = ir::Attr::integer(ir::IntFormat(type).wrap(static_cast<uint64_t>(value.intValue())));
    }
  }
  return ctx.emit1(ir::OpKind::Constant, {}, type, {{"value", attr}}, loc);
}

Tensor castTo(const Tensor& t, Type elem, const SourceLoc& loc) {
  if (t.dtype() == elem) return t;
  return Context::current(loc).emit1(ir::OpKind::Cast, {t}, t.type().withElement(elem), {}, loc);
}

Tensor broadcastTo(const Tensor& t, const std::vector<int64_t>& shape, const SourceLoc& loc) {
  Context& ctx = Context::current(loc);
  const std::vector<int64_t>& s = t.shape();
  if (s == shape) return t;
  if (shape.empty()) fail("cannot broadcast a tile of shape " + shapeStr(s) + " to a scalar", loc);
  if (s.empty()) return ctx.emit1(ir::OpKind::Splat, {t}, Type::tile(shape, t.dtype()), {}, loc);
  if (s.size() > shape.size())
    fail("cannot broadcast shape " + shapeStr(s) + " to " + shapeStr(shape) + " (higher rank)", loc);
  Tensor cur = t;
  while (cur.rank() < static_cast<int>(shape.size())) {  // leading size-1 dimensions
    std::vector<int64_t> ns = cur.shape();
    ns.insert(ns.begin(), 1);
    cur = ctx.emit1(ir::OpKind::ExpandDims, {cur}, Type::tile(ns, cur.dtype()), {{"axis", ir::Attr::integer(0)}}, loc);
  }
  for (size_t i = 0; i < shape.size(); ++i)
    if (cur.shape()[i] != shape[i] && cur.shape()[i] != 1)
      fail("cannot broadcast shape " + shapeStr(s) + " to " + shapeStr(shape), loc);
  if (cur.shape() == shape) return cur;
  return ctx.emit1(ir::OpKind::Broadcast, {cur}, Type::tile(shape, cur.dtype()), {}, loc);
}

Tensor materialize(const TArg& a, Type elem, const std::vector<int64_t>& shape, const SourceLoc& loc) {
  if (a.kind() != TArg::Kind::Tensor) return constant(Type::tile(shape, elem ? elem : typeOf(a)), a, loc);
  const Tensor& t = *a.tensor();
  if (!t.defined()) fail(kUndefinedTensor, loc);
  Tensor c = elem ? castTo(t, elem, loc) : t;
  return broadcastTo(c, shape, loc);
}

}  // namespace tessera::detail
