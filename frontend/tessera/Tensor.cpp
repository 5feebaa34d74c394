#include "tessera/Tensor.h"

#include "backends/interpreter/Tile.h"
#include "tessera/Language.h"
#include "tessera/Promotion.h"

namespace tessera {

using detail::Context;
using detail::Mode;
using ir::OpKind;
using ir::Type;

// ---------------------------------------------------------------- variables

Tensor::Tensor(const Tensor& other) {
  if (other.tile_) {
    tile_ = other.tile_;
    return;
  }
  if (other.defs_.empty()) return;  // copying an undefined variable gives an undefined one
  Context* ctx = Context::currentOrNull();
  if (!ctx || ctx->mode() != Mode::Trace) return;
  ctx->define(*this, ctx->read(other, SourceLoc::current()));
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this == &other) return *this;
  assignFrom(other, SourceLoc::current());
  return *this;
}

void Tensor::assignFrom(const Tensor& other, const SourceLoc& loc) {
  if (other.tile_) {
    tile_ = other.tile_;
    return;
  }
  Context& ctx = Context::current(loc);
  if (ctx.mode() == Mode::Eager) throw Error("assigning a traced Tensor in eager mode", detail::toLocation(loc));
  ctx.write(*this, ctx.read(other, loc));
}

Tensor::~Tensor() {
  if (!registered_) return;
  if (Context* ctx = Context::currentOrNull(); ctx && ctx->mode() == Mode::Trace) ctx->forget(*this);
}

bool Tensor::defined() const { return tile_ != nullptr || !defs_.empty(); }

Type Tensor::type() const {
  if (tile_) return tile_->type;
  if (defs_.empty()) throw Error("use of a Tensor that was never assigned");
  return defs_.back().value->type();
}

ir::Value* Tensor::traced(const SourceLoc& loc) const { return Context::current(loc).read(*this, loc); }

Tensor Tensor::fromTraced(ir::Value* v) {
  Tensor t;
  Context::current(SourceLoc::current()).define(t, v);
  return t;
}

Tensor Tensor::fromTile(interp::Tile tile) {
  Tensor t;
  t.tile_ = std::make_shared<const interp::Tile>(std::move(tile));
  return t;
}

const interp::Tile& Tensor::value(SourceLoc loc) const {
  if (!tile_)
    throw Error("Tensor::value() is only available in eager mode (the kernel is being traced)", detail::toLocation(loc));
  return *tile_;
}

std::string Tensor::str() const {
  if (tile_) return tile_->str();
  if (defs_.empty()) return "<undefined>";
  return "<traced " + type().str() + ">";
}

#define TESSERA_COMPOUND(op)                 \
  Tensor& Tensor::operator op##=(const TArg& o) { \
    Tensor r = TArg(*this, o.loc()) op o;    \
    assignFrom(r, o.loc());                  \
    return *this;                            \
  }
TESSERA_COMPOUND(+)
TESSERA_COMPOUND(-)
TESSERA_COMPOUND(*)
TESSERA_COMPOUND(/)
TESSERA_COMPOUND(%)
TESSERA_COMPOUND(&)
TESSERA_COMPOUND(|)
TESSERA_COMPOUND(^)
TESSERA_COMPOUND(<<)
TESSERA_COMPOUND(>>)
#undef TESSERA_COMPOUND

// ---------------------------------------------------------------- binary operators

namespace {

bool isPtrOperand(const TArg& a) { return a.kind() == TArg::Kind::Tensor && detail::typeOf(a).isPtr(); }

Tensor pointerArith(const TArg& p, const TArg& off, bool subtract, const SourceLoc& loc) {
  Type offType = detail::typeOf(off);
  if (!offType.isInt() || offType.isBool())
    detail::fail("pointer arithmetic needs an integer offset, got " + offType.str(), loc);
  Type elem = off.kind() == TArg::Kind::Tensor ? offType.element() : Type::i32();
  auto shape = detail::broadcastShapes(detail::typeOf(p).shape(), offType.shape(), "addptr", loc);
  Tensor ptr = detail::materialize(p, Type(), shape, loc);
  Tensor o = detail::materialize(off, elem, shape, loc);
  if (subtract) o = -o;
  return Context::current(loc).emit1(OpKind::AddPtr, {ptr, o}, ptr.type(), {}, loc);
}

Tensor binary(OpKind kind, const char* name, const TArg& a, const TArg& b) {
  const SourceLoc& loc = a.kind() == TArg::Kind::Tensor ? a.loc() : b.loc();
  if (kind == OpKind::Add || kind == OpKind::Sub) {
    if (isPtrOperand(a) && !isPtrOperand(b)) return pointerArith(a, b, kind == OpKind::Sub, loc);
    if (isPtrOperand(b) && kind == OpKind::Add) return pointerArith(b, a, false, loc);
  }
  Type elem = detail::promote(a, b, name);
  if (elem.isPtr()) detail::fail(std::string("'") + name + "' is not defined on pointers", loc);
  bool bitwise = kind == OpKind::And || kind == OpKind::Or || kind == OpKind::Xor;
  bool intOnly = bitwise || kind == OpKind::Shl || kind == OpKind::Shr;
  if (intOnly && elem.isFloat())
    detail::fail(std::string("'") + name + "' needs integer operands, got " + elem.str(), loc);
  if (elem.isBool() && !bitwise) elem = Type::i32();  // arithmetic on booleans
  auto shape = detail::broadcastShapes(detail::typeOf(a).shape(), detail::typeOf(b).shape(), name, loc);
  Tensor x = detail::materialize(a, elem, shape, loc);
  Tensor y = detail::materialize(b, elem, shape, loc);
  return Context::current(loc).emit1(kind, {x, y}, x.type(), {}, loc);
}

Tensor compare(const char* pred, const TArg& a, const TArg& b) {
  const SourceLoc& loc = a.kind() == TArg::Kind::Tensor ? a.loc() : b.loc();
  Type elem = detail::promote(a, b, pred);
  auto shape = detail::broadcastShapes(detail::typeOf(a).shape(), detail::typeOf(b).shape(), "cmp", loc);
  Tensor x = detail::materialize(a, elem, shape, loc);
  Tensor y = detail::materialize(b, elem, shape, loc);
  return Context::current(loc).emit1(OpKind::Cmp, {x, y}, x.type().withElement(Type::i1()),
                                     {{"pred", ir::Attr::string(pred)}}, loc);
}

}  // namespace

Tensor operator+(const TArg& a, const TArg& b) { return binary(OpKind::Add, "add", a, b); }
Tensor operator-(const TArg& a, const TArg& b) { return binary(OpKind::Sub, "sub", a, b); }
Tensor operator*(const TArg& a, const TArg& b) { return binary(OpKind::Mul, "mul", a, b); }
Tensor operator/(const TArg& a, const TArg& b) { return binary(OpKind::Div, "div", a, b); }
Tensor operator%(const TArg& a, const TArg& b) { return binary(OpKind::Rem, "rem", a, b); }
Tensor operator&(const TArg& a, const TArg& b) { return binary(OpKind::And, "and", a, b); }
Tensor operator|(const TArg& a, const TArg& b) { return binary(OpKind::Or, "or", a, b); }
Tensor operator^(const TArg& a, const TArg& b) { return binary(OpKind::Xor, "xor", a, b); }
Tensor operator<<(const TArg& a, const TArg& b) { return binary(OpKind::Shl, "shl", a, b); }
Tensor operator>>(const TArg& a, const TArg& b) { return binary(OpKind::Shr, "shr", a, b); }
Tensor operator==(const TArg& a, const TArg& b) { return compare("eq", a, b); }
Tensor operator!=(const TArg& a, const TArg& b) { return compare("ne", a, b); }
Tensor operator<(const TArg& a, const TArg& b) { return compare("lt", a, b); }
Tensor operator<=(const TArg& a, const TArg& b) { return compare("le", a, b); }
Tensor operator>(const TArg& a, const TArg& b) { return compare("gt", a, b); }
Tensor operator>=(const TArg& a, const TArg& b) { return compare("ge", a, b); }

Tensor operator-(const TArg& a) {
  Type t = detail::typeOf(a);
  if (t.isFP8()) detail::fail("'neg': fp8 values are storage-only; cast them to f16 or f32 first", a.loc());
  if (t.isBool() || t.isPtr()) detail::fail("'neg' needs a number, got " + t.str(), a.loc());
  Tensor x = detail::materialize(a, Type(), t.shape(), a.loc());
  return Context::current(a.loc()).emit1(OpKind::Neg, {x}, x.type(), {}, a.loc());
}

Tensor operator~(const TArg& a) {
  Type t = detail::typeOf(a);
  if (!t.isInt()) detail::fail("'not' needs an integer or boolean, got " + t.str(), a.loc());
  Tensor x = detail::materialize(a, Type(), t.shape(), a.loc());
  return Context::current(a.loc()).emit1(OpKind::Not, {x}, x.type(), {}, a.loc());
}

Tensor operator!(const TArg& a) { return compare("eq", a, TArg(0, a.loc())); }

}  // namespace tessera
