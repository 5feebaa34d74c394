#include "tessera/Language.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tessera/Promotion.h"

namespace tessera {

using detail::Context;
using detail::fail;
using detail::materialize;
using detail::shapeStr;
using detail::typeOf;
using ir::Attr;
using ir::OpKind;
using ir::Type;

namespace {

Tensor asTensor(const TArg& x, const SourceLoc& loc) { return materialize(x, Type(), typeOf(x).shape(), loc); }

void checkAxis(int axis, int rank, const char* op, const SourceLoc& loc, bool inclusive = false) {
  int limit = inclusive ? rank : rank - 1;
  if (axis < 0 || axis > limit)
    fail(std::string("'") + op + "': axis " + std::to_string(axis) + " is out of range for a rank-" +
             std::to_string(rank) + " value",
         loc);
}

void checkShape(const Shape& shape, const SourceLoc& loc) {
  if (auto err = Type::checkTileShape(shape)) fail(*err + " (shape " + shapeStr(shape) + ")", loc);
}

Tensor unaryMath(OpKind kind, const char* name, const TArg& x, const SourceLoc& loc) {
  Type t = typeOf(x);
  if (t.isFP8()) fail(std::string("'") + name + "': fp8 values are storage-only; cast them to f16 or f32 first", loc);
  if (t.isPtr()) fail(std::string("'") + name + "' needs a number, got " + t.str(), loc);
  // Integer inputs to transcendental functions compute in f32 (abs keeps integers).
  Type elem = (t.isFloat() || kind == OpKind::Abs) ? t.element() : Type::f32();
  if (kind == OpKind::Abs && t.isBool()) elem = Type::i32();
  Tensor v = materialize(x, elem, t.shape(), loc);
  return Context::current(loc).emit1(kind, {v}, v.type(), {}, loc);
}

Tensor elementwise2(OpKind kind, const char* name, const TArg& a, const TArg& b, const SourceLoc& loc) {
  Type elem = detail::promote(a, b, name);
  if (elem.isPtr()) fail(std::string("'") + name + "' is not defined on pointers", loc);
  if (elem.isBool()) elem = Type::i32();
  auto shape = detail::broadcastShapes(typeOf(a).shape(), typeOf(b).shape(), name, loc);
  Tensor x = materialize(a, elem, shape, loc), y = materialize(b, elem, shape, loc);
  return Context::current(loc).emit1(kind, {x, y}, x.type(), {}, loc);
}

Tensor maskFor(const Tensor& mask, const std::vector<int64_t>& shape, const char* op, const SourceLoc& loc) {
  if (!mask.defined()) return Tensor();
  if (!mask.dtype().isBool()) fail(std::string("'") + op + "': the mask must be boolean (i1), got " + mask.type().str(), loc);
  auto s = detail::broadcastShapes(mask.shape(), shape, op, loc);
  if (s != shape)
    fail(std::string("'") + op + "': mask shape " + shapeStr(mask.shape()) + " does not fit pointer shape " +
             shapeStr(shape),
         loc);
  return detail::broadcastTo(mask, shape, loc);
}

Tensor checkPointer(const Tensor& ptr, const char* op, const SourceLoc& loc) {
  if (!ptr.defined()) fail(std::string("'") + op + "': the pointer Tensor was never assigned", loc);
  if (!ptr.dtype().isPtr()) fail(std::string("'") + op + "' needs a pointer, got " + ptr.type().str(), loc);
  return ptr;
}

// The value operand of a store or atomic: converted to the pointee type and broadcast to the pointer's shape.
Tensor valueFor(const Tensor& ptr, const TArg& value, const char* op, const SourceLoc& loc) {
  Type vt = typeOf(value);
  if (vt.isPtr()) fail(std::string("'") + op + "': cannot store pointers", loc);
  auto s = detail::broadcastShapes(vt.shape(), ptr.shape(), op, loc);
  if (s != ptr.shape())
    fail(std::string("'") + op + "': value shape " + shapeStr(vt.shape()) + " does not fit pointer shape " +
             shapeStr(ptr.shape()),
         loc);
  return materialize(value, ptr.dtype().pointee(), ptr.shape(), loc);
}

}  // namespace

// ---------------------------------------------------------------- ids and ranges

Tensor program_id(int axis, SourceLoc loc) {
  if (axis < 0 || axis > 2) fail("program_id axis must be 0, 1 or 2, got " + std::to_string(axis), loc);
  return Context::current(loc).emit1(OpKind::ProgramId, {}, Type::i32(), {{"axis", Attr::integer(axis)}}, loc);
}

Tensor num_programs(int axis, SourceLoc loc) {
  if (axis < 0 || axis > 2) fail("num_programs axis must be 0, 1 or 2, got " + std::to_string(axis), loc);
  return Context::current(loc).emit1(OpKind::NumPrograms, {}, Type::i32(), {{"axis", Attr::integer(axis)}}, loc);
}

Tensor arange(int64_t start, int64_t end, SourceLoc loc) {
  int64_t n = end - start;
  if (n <= 0 || (n & (n - 1)) != 0)
    fail("arange(" + std::to_string(start) + ", " + std::to_string(end) + "): the length must be a positive power of two",
         loc);
  checkShape({n}, loc);
  return Context::current(loc).emit1(OpKind::Arange, {}, Type::tile({n}, Type::i32()),
                                     {{"start", Attr::integer(start)}, {"end", Attr::integer(end)}}, loc);
}

Tensor arange(const Tensor&, const TArg&, SourceLoc loc) {
  fail("arange bounds must be compile-time constants (Const<int> parameters or integer literals), not Tensors", loc);
}

Tensor full(const Shape& shape, const TArg& value, Type dtype, SourceLoc loc) {
  checkShape(shape, loc);
  if (value.kind() == TArg::Kind::Tensor) {
    Tensor v = detail::castTo(*value.tensor(), dtype, loc);
    if (v.rank() != 0) fail("full: the fill value must be a scalar", loc);
    return detail::broadcastTo(v, shape, loc);
  }
  return detail::constant(Type::tile(shape, dtype), value, loc);
}

// ---------------------------------------------------------------- shapes

Tensor expand_dims(const TArg& x, int axis, SourceLoc loc) {
  Tensor v = asTensor(x, loc);
  checkAxis(axis, v.rank(), "expand_dims", loc, /*inclusive=*/true);
  Shape s = v.shape();
  s.insert(s.begin() + axis, 1);
  checkShape(s, loc);
  return Context::current(loc).emit1(OpKind::ExpandDims, {v}, Type::tile(s, v.dtype()), {{"axis", Attr::integer(axis)}}, loc);
}

Tensor broadcast_to(const TArg& x, const Shape& shape, SourceLoc loc) {
  checkShape(shape, loc);
  return detail::broadcastTo(asTensor(x, loc), shape, loc);
}

Tensor reshape(const TArg& x, const Shape& shape, SourceLoc loc) {
  Tensor v = asTensor(x, loc);
  checkShape(shape, loc);
  int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<>());
  if (n != v.type().numElements())
    fail("reshape: cannot reshape " + shapeStr(v.shape()) + " (" + std::to_string(v.type().numElements()) +
             " elements) to " + shapeStr(shape),
         loc);
  if (shape.empty()) fail("reshape: the result must be a tile (rank >= 1)", loc);
  if (v.rank() == 0) return detail::broadcastTo(v, shape, loc);
  return Context::current(loc).emit1(OpKind::Reshape, {v}, Type::tile(shape, v.dtype()), {}, loc);
}

Tensor permute(const TArg& x, const std::vector<int64_t>& perm, SourceLoc loc) {
  Tensor v = asTensor(x, loc);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(v.rank());
  std::iota(iota.begin(), iota.end(), 0);
  if (v.rank() == 0 || sorted != iota)
    fail("permute: " + shapeStr(perm) + " is not a permutation of the dimensions of a rank-" +
             std::to_string(v.rank()) + " tile",
         loc);
  Shape s;
  for (int64_t p : perm) s.push_back(v.shape()[p]);
  return Context::current(loc).emit1(OpKind::Trans, {v}, Type::tile(s, v.dtype()), {{"perm", Attr::intArray(perm)}}, loc);
}

Tensor trans(const TArg& x, SourceLoc loc) {
  int rank = typeOf(x).rank();
  std::vector<int64_t> perm;
  for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  return permute(x, perm, loc);
}

Tensor cat(const TArg& a, const TArg& b, SourceLoc loc) {
  Tensor x = asTensor(a, loc), y = asTensor(b, loc);
  if (x.type() != y.type()) fail("cat: operands must have the same type, got " + x.type().str() + " and " + y.type().str(), loc);
  if (x.rank() == 0) fail("cat: operands must be tiles", loc);
  Shape s = x.shape();
  s[0] *= 2;
  checkShape(s, loc);
  return Context::current(loc).emit1(OpKind::Cat, {x, y}, Type::tile(s, x.dtype()), {}, loc);
}

Tensor join(const TArg& a, const TArg& b, SourceLoc loc) {
  Tensor x = asTensor(a, loc), y = asTensor(b, loc);
  if (x.type() != y.type()) fail("join: operands must have the same type, got " + x.type().str() + " and " + y.type().str(), loc);
  Shape s = x.shape();
  s.push_back(2);
  checkShape(s, loc);
  return Context::current(loc).emit1(OpKind::Join, {x, y}, Type::tile(s, x.dtype()), {}, loc);
}

std::pair<Tensor, Tensor> split(const TArg& x, SourceLoc loc) {
  Tensor v = asTensor(x, loc);
  if (v.rank() == 0 || v.shape().back() != 2)
    fail("split: the last dimension must have size 2, got shape " + shapeStr(v.shape()), loc);
  Shape s = v.shape();
  s.pop_back();
  Type t = Type::tile(s, v.dtype());
  auto rs = Context::current(loc).emit(OpKind::Split, {v}, {t, t}, {}, loc);
  return {rs[0], rs[1]};
}

// ---------------------------------------------------------------- element-wise

Tensor minimum(const TArg& a, const TArg& b, SourceLoc loc) { return elementwise2(OpKind::Min, "min", a, b, loc); }
Tensor maximum(const TArg& a, const TArg& b, SourceLoc loc) { return elementwise2(OpKind::Max, "max", a, b, loc); }

Tensor umulhi(const TArg& a, const TArg& b, SourceLoc loc) {
  Type elem = detail::promote(a, b, "umulhi");
  if (!elem.isInt() || elem.bitWidth() < 32) fail("umulhi needs 32- or 64-bit integers, got " + elem.str(), loc);
  return elementwise2(OpKind::UMulHi, "umulhi", a, b, loc);
}

Tensor where(const TArg& cond, const TArg& a, const TArg& b, SourceLoc loc) {
  Type ct = typeOf(cond);
  if (!ct.isBool()) fail("where: the condition must be boolean (i1), got " + ct.str(), loc);
  Type elem = detail::promote(a, b, "select");
  auto shape = detail::broadcastShapes(ct.shape(), detail::broadcastShapes(typeOf(a).shape(), typeOf(b).shape(), "select", loc),
                                       "select", loc);
  Tensor c = materialize(cond, Type::i1(), shape, loc);
  Tensor x = materialize(a, elem, shape, loc), y = materialize(b, elem, shape, loc);
  return Context::current(loc).emit1(OpKind::Select, {c, x, y}, x.type(), {}, loc);
}

Tensor fma(const TArg& a, const TArg& b, const TArg& c, SourceLoc loc) {
  Type elem = detail::promote(detail::promote(a, b, "fma"), c, "fma");
  if (!elem.isFloat()) elem = Type::f32();
  auto shape = detail::broadcastShapes(typeOf(a).shape(), detail::broadcastShapes(typeOf(b).shape(), typeOf(c).shape(), "fma", loc),
                                       "fma", loc);
  Tensor x = materialize(a, elem, shape, loc), y = materialize(b, elem, shape, loc), z = materialize(c, elem, shape, loc);
  return Context::current(loc).emit1(OpKind::Fma, {x, y, z}, x.type(), {}, loc);
}

Tensor exp(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Exp, "exp", x, loc); }
Tensor exp2(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Exp2, "exp2", x, loc); }
Tensor log(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Log, "log", x, loc); }
Tensor log2(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Log2, "log2", x, loc); }
Tensor sqrt(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Sqrt, "sqrt", x, loc); }
Tensor rsqrt(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Rsqrt, "rsqrt", x, loc); }
Tensor sin(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Sin, "sin", x, loc); }
Tensor cos(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Cos, "cos", x, loc); }
Tensor tanh(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Tanh, "tanh", x, loc); }
Tensor erf(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Erf, "erf", x, loc); }
Tensor abs(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Abs, "abs", x, loc); }
Tensor floor(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Floor, "floor", x, loc); }
Tensor ceil(const TArg& x, SourceLoc loc) { return unaryMath(OpKind::Ceil, "ceil", x, loc); }

Tensor sigmoid(const TArg& x, SourceLoc loc) {
  Tensor e = exp(-TArg(asTensor(x, loc), loc), loc);
  return TArg(1.0, loc) / (TArg(1.0, loc) + TArg(e, loc));
}

Tensor cdiv(const TArg& a, const TArg& b, SourceLoc loc) {
  Tensor sum = TArg(a) + b;
  Tensor num = TArg(sum, loc) - TArg(1, loc);
  return TArg(num, loc) / b;
}

// ---------------------------------------------------------------- conversions

Tensor cast(const TArg& x, Type dtype, SourceLoc loc) {
  Type t = typeOf(x);
  if (dtype.isTile()) fail("cast: the target must be an element type, got " + dtype.str(), loc);
  if (t.isPtr() != dtype.isPtr() && !(t.isPtr() ? (dtype.isInt() && dtype.bitWidth() == 64) : (t.isInt() && t.bitWidth() == 64)))
    fail("cast: cannot convert " + t.str() + " to " + dtype.str() + " (pointers convert only to and from 64-bit integers)", loc);
  Tensor v = asTensor(x, loc);
  return detail::castTo(v, dtype, loc);
}

Tensor bitcast(const TArg& x, Type dtype, SourceLoc loc) {
  Tensor v = asTensor(x, loc);
  if (v.dtype().isBool() || dtype.isBool()) fail("bitcast: i1 has no bit layout to reinterpret", loc);
  if (v.dtype().bitWidth() != dtype.bitWidth())
    fail("bitcast: " + v.dtype().str() + " and " + dtype.str() + " have different bit widths", loc);
  if (v.dtype() == dtype) return v;
  return Context::current(loc).emit1(OpKind::Bitcast, {v}, v.type().withElement(dtype), {}, loc);
}

// ---------------------------------------------------------------- memory

Tensor load(const Tensor& ptr, SourceLoc loc) { return load(ptr, Tensor(), TArg(0, loc), loc); }
Tensor load(const Tensor& ptr, const Tensor& mask, SourceLoc loc) { return load(ptr, mask, TArg(0, loc), loc); }

Tensor load(const Tensor& ptr, const Tensor& mask, const TArg& other, SourceLoc loc) {
  checkPointer(ptr, "load", loc);
  Type result = ptr.type().withElement(ptr.dtype().pointee());
  Tensor m = maskFor(mask, ptr.shape(), "load", loc);
  std::vector<Tensor> operands{ptr};
  if (m.defined()) {
    operands.push_back(m);
    bool zeroLiteral = other.kind() != TArg::Kind::Tensor &&
                       (other.kind() == TArg::Kind::Float ? other.floatValue() == 0 && !std::signbit(other.floatValue())
                                                          : other.intValue() == 0);
    if (!zeroLiteral) operands.push_back(valueFor(ptr, other, "load", loc));
  }
  return Context::current(loc).emit1(OpKind::Load, operands, result, {}, loc);
}

namespace {

// A descriptor op's first operands: the descriptor, then its offsets (one integer scalar per dimension, as i32).
std::vector<Tensor> descriptorOperands(const TensorDescBase& desc, std::initializer_list<TArg> offsets, const char* op,
                                       const SourceLoc& loc) {
  const Tensor& d = desc.value();
  if (!d.defined()) fail(std::string("'") + op + "': the tensor descriptor was never assigned", loc);
  const Type t = d.type();
  const std::vector<int64_t>& block = t.blockShape();
  if (offsets.size() != block.size())
    fail(std::string("'") + op + "': a descriptor of " + t.str() + " takes " + std::to_string(block.size()) +
             " offsets (one per dimension), got " + std::to_string(offsets.size()),
         loc);
  if (auto err = Type::checkTileShape(block))
    fail(std::string("'") + op + "': the blocks of " + t.str() + " do not fit in a tile: " + *err, loc);
  std::vector<Tensor> operands{d};
  for (const TArg& offset : offsets) {
    const Type ot = typeOf(offset);
    if (!ot.isScalar() || !ot.isInt() || ot.isBool())
      fail(std::string("'") + op + "': descriptor offset #" + std::to_string(operands.size() - 1) +
               " must be an integer scalar, got " + ot.str(),
           loc);
    operands.push_back(materialize(offset, Type::i32(), {}, loc));
  }
  return operands;
}

}  // namespace

Tensor load(const TensorDescBase& desc, std::initializer_list<TArg> offsets, SourceLoc loc) {
  std::vector<Tensor> operands = descriptorOperands(desc, offsets, "load", loc);
  const Type t = operands[0].type();
  return Context::current(loc).emit1(OpKind::DescLoad, operands, Type::tile(t.blockShape(), t.element()), {}, loc);
}

void store(const TensorDescBase& desc, std::initializer_list<TArg> offsets, const TArg& value, SourceLoc loc) {
  std::vector<Tensor> operands = descriptorOperands(desc, offsets, "store", loc);
  const Type t = operands[0].type();
  const Type vt = typeOf(value);
  if (vt.isPtr()) fail("'store': cannot store pointers", loc);
  if (detail::broadcastShapes(vt.shape(), t.blockShape(), "store", loc) != t.blockShape())
    fail("'store': value shape " + shapeStr(vt.shape()) + " does not fit the blocks of " + t.str(), loc);
  operands.push_back(materialize(value, t.element(), t.blockShape(), loc));
  Context::current(loc).emit(OpKind::DescStore, operands, {}, {}, loc);
}

void store(const Tensor& ptr, const TArg& value, SourceLoc loc) { store(ptr, value, Tensor(), loc); }

void store(const Tensor& ptr, const TArg& value, const Tensor& mask, SourceLoc loc) {
  checkPointer(ptr, "store", loc);
  std::vector<Tensor> operands{ptr, valueFor(ptr, value, "store", loc)};
  Tensor m = maskFor(mask, ptr.shape(), "store", loc);
  if (m.defined()) operands.push_back(m);
  Context::current(loc).emit(OpKind::Store, operands, {}, {}, loc);
}

Tensor atomic_rmw(const std::string& kind, const Tensor& ptr, const TArg& value, const Tensor& mask, SourceLoc loc) {
  checkPointer(ptr, "atomic_rmw", loc);
  static const char* kKinds[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
  if (std::find(std::begin(kKinds), std::end(kKinds), kind) == std::end(kKinds))
    fail("atomic_rmw: unknown kind '" + kind + "' (expected add, max, min, and, or, xor or xchg)", loc);
  Tensor v = valueFor(ptr, value, "atomic_rmw", loc);
  std::vector<Tensor> operands{ptr, v};
  Tensor m = maskFor(mask, ptr.shape(), "atomic_rmw", loc);
  if (m.defined()) operands.push_back(m);
  return Context::current(loc).emit1(
      OpKind::AtomicRMW, operands, v.type(),
      {{"kind", Attr::string(kind)}, {"sem", Attr::string("acq_rel")}, {"scope", Attr::string("gpu")}}, loc);
}

Tensor atomic_add(const Tensor& p, const TArg& v, const Tensor& m, SourceLoc loc) { return atomic_rmw("add", p, v, m, loc); }
Tensor atomic_max(const Tensor& p, const TArg& v, const Tensor& m, SourceLoc loc) { return atomic_rmw("max", p, v, m, loc); }
Tensor atomic_min(const Tensor& p, const TArg& v, const Tensor& m, SourceLoc loc) { return atomic_rmw("min", p, v, m, loc); }
Tensor atomic_xchg(const Tensor& p, const TArg& v, const Tensor& m, SourceLoc loc) { return atomic_rmw("xchg", p, v, m, loc); }

Tensor atomic_cas(const Tensor& ptr, const TArg& cmp, const TArg& value, SourceLoc loc) {
  checkPointer(ptr, "atomic_cas", loc);
  Tensor c = valueFor(ptr, cmp, "atomic_cas", loc);
  Tensor v = valueFor(ptr, value, "atomic_cas", loc);
  return Context::current(loc).emit1(OpKind::AtomicCAS, {ptr, c, v}, v.type(),
                                     {{"sem", Attr::string("acq_rel")}, {"scope", Attr::string("gpu")}}, loc);
}

// ---------------------------------------------------------------- reductions

namespace {

// Traces `combine` into the region of a reduce/scan op, in a nested tracing context (so the combine function
// can only see its arguments, whatever mode the kernel runs in).
void fillCombineRegion(ir::Op* op, const std::vector<Type>& elemTypes, const MultiCombine& combine, const SourceLoc& loc) {
  ir::Block* body = op->region(0);
  for (int pass = 0; pass < 2; ++pass)
    for (Type t : elemTypes) body->addArgument(t);
  ir::Function* fn = op->parentBlock() ? op->parentBlock()->parentFunction() : nullptr;
  detail::Context inner(fn, body);
  std::vector<Tensor> acc, x;
  size_t n = elemTypes.size();
  for (size_t i = 0; i < n; ++i) acc.push_back(Tensor::fromTraced(body->argument(i)));
  for (size_t i = 0; i < n; ++i) x.push_back(Tensor::fromTraced(body->argument(n + i)));
  std::vector<Tensor> out = combine(acc, x);
  if (out.size() != n)
    fail("the combine function returned " + std::to_string(out.size()) + " values, expected " + std::to_string(n), loc);
  std::vector<ir::Value*> yields;
  for (size_t i = 0; i < n; ++i) {
    Tensor v = detail::castTo(out[i], elemTypes[i], loc);
    if (v.rank() != 0) fail("the combine function must return scalars", loc);
    yields.push_back(inner.read(v, loc));
  }
  inner.builder().setLoc(detail::toLocation(loc));
  inner.builder().yield(yields);
  inner.checkPendingError();
}

std::vector<Tensor> combineOp(OpKind kind, const std::vector<Tensor>& xs, int axis, bool reverse,
                              const MultiCombine& combine, const SourceLoc& loc) {
  const char* name = kind == OpKind::Reduce ? "reduce" : "scan";
  if (xs.empty()) fail(std::string(name) + ": needs at least one input", loc);
  for (const Tensor& x : xs) {
    if (!x.defined()) fail(std::string(name) + ": input Tensor was never assigned", loc);
    if (x.shape() != xs[0].shape())
      fail(std::string(name) + ": inputs must have one shape, got " + shapeStr(xs[0].shape()) + " and " + shapeStr(x.shape()), loc);
  }
  if (xs[0].rank() == 0) fail(std::string(name) + ": the input must be a tile, not a scalar", loc);
  checkAxis(axis, xs[0].rank(), name, loc);
  std::vector<Type> elemTypes, resultTypes;
  for (const Tensor& x : xs) {
    elemTypes.push_back(x.dtype());
    Shape s = x.shape();
    if (kind == OpKind::Reduce) s.erase(s.begin() + axis);
    resultTypes.push_back(Type::tile(s, x.dtype()));
  }
  ir::AttrDict attrs{{"axis", Attr::integer(axis)}};
  if (kind == OpKind::Scan) attrs["reverse"] = Attr::boolean(reverse);
  return Context::current(loc).emit(kind, xs, resultTypes, attrs, loc,
                                    [&](ir::Op* op) { fillCombineRegion(op, elemTypes, combine, loc); });
}

MultiCombine single(const Combine& f) {
  return [f](const std::vector<Tensor>& a, const std::vector<Tensor>& b) { return std::vector<Tensor>{f(a[0], b[0])}; };
}

Tensor reduceNumeric(const TArg& x, int axis, const char* name, const Combine& f, const SourceLoc& loc) {
  Tensor v = asTensor(x, loc);
  if (v.dtype().isFP8() || v.dtype().isPtr()) fail(std::string(name) + ": needs numbers, got " + v.type().str(), loc);
  return combineOp(OpKind::Reduce, {v}, axis, false, single(f), loc)[0];
}

Tensor argReduce(const TArg& x, int axis, bool isMax, const SourceLoc& loc) {
  Tensor v = asTensor(x, loc);
  if (v.rank() == 0) fail(isMax ? "argmax: the input must be a tile" : "argmin: the input must be a tile", loc);
  checkAxis(axis, v.rank(), isMax ? "argmax" : "argmin", loc);
  // Index tile along `axis`, broadcast to the input's shape.
  Shape s = v.shape();
  Tensor idx = arange(0, s[axis], loc);
  for (int d = 0; d < v.rank(); ++d)
    if (d != axis) idx = expand_dims(idx, d, loc);
  idx = detail::broadcastTo(idx, s, loc);
  auto combine = [isMax](const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    // Keep a unless b is strictly better, or equally good with a smaller index (first of ties wins).
    Tensor better = isMax ? (b[0] > a[0]) : (b[0] < a[0]);
    Tensor tie = (b[0] == a[0]) & (b[1] < a[1]);
    Tensor takeB = better | tie;
    return std::vector<Tensor>{where(takeB, b[0], a[0]), where(takeB, b[1], a[1])};
  };
  return combineOp(OpKind::Reduce, {v, idx}, axis, false, combine, loc)[1];
}

}  // namespace

Tensor reduce(const TArg& x, int axis, const Combine& combine, SourceLoc loc) {
  return combineOp(OpKind::Reduce, {asTensor(x, loc)}, axis, false, single(combine), loc)[0];
}

std::vector<Tensor> reduce(const std::vector<Tensor>& xs, int axis, const MultiCombine& combine, SourceLoc loc) {
  return combineOp(OpKind::Reduce, xs, axis, false, combine, loc);
}

Tensor sum(const TArg& x, int axis, SourceLoc loc) {
  return reduceNumeric(x, axis, "sum", [](const Tensor& a, const Tensor& b) { return a + b; }, loc);
}
Tensor max(const TArg& x, int axis, SourceLoc loc) {
  return reduceNumeric(x, axis, "max", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }, loc);
}
Tensor min(const TArg& x, int axis, SourceLoc loc) {
  return reduceNumeric(x, axis, "min", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }, loc);
}
Tensor argmax(const TArg& x, int axis, SourceLoc loc) { return argReduce(x, axis, true, loc); }
Tensor argmin(const TArg& x, int axis, SourceLoc loc) { return argReduce(x, axis, false, loc); }

Tensor scan(const TArg& x, int axis, const Combine& combine, bool reverse, SourceLoc loc) {
  return combineOp(OpKind::Scan, {asTensor(x, loc)}, axis, reverse, single(combine), loc)[0];
}

Tensor cumsum(const TArg& x, int axis, bool reverse, SourceLoc loc) {
  return scan(x, axis, [](const Tensor& a, const Tensor& b) { return a + b; }, reverse, loc);
}

// ---------------------------------------------------------------- dot

Tensor dot(const TArg& a, const TArg& b, SourceLoc loc) {
  Type ta = typeOf(a);
  Type accElem = ta.isInt() ? Type::i32() : Type::f32();
  if (ta.rank() != 2 || typeOf(b).rank() != 2)
    fail("dot: operands must be rank-2 tiles, got " + ta.str() + " and " + typeOf(b).str(), loc);
  Tensor acc = full({ta.shape()[0], typeOf(b).shape()[1]}, TArg(0, loc), accElem, loc);
  return dot(a, b, acc, loc);
}

Tensor dot(const TArg& a, const TArg& b, const TArg& acc, SourceLoc loc) {
  return dot(a, b, acc, InputPrecision::IEEE, loc);
}

Tensor dot(const TArg& a, const TArg& b, const TArg& acc, InputPrecision precision, SourceLoc loc) {
  Tensor x = asTensor(a, loc), y = asTensor(b, loc), c = asTensor(acc, loc);
  if (x.rank() != 2 || y.rank() != 2 || c.rank() != 2)
    fail("dot: operands must be rank-2 tiles, got " + x.type().str() + ", " + y.type().str() + " and " + c.type().str(), loc);
  if (x.shape()[1] != y.shape()[0])
    fail("dot: inner dimensions differ: " + shapeStr(x.shape()) + " times " + shapeStr(y.shape()), loc);
  if (c.shape() != Shape{x.shape()[0], y.shape()[1]})
    fail("dot: accumulator shape " + shapeStr(c.shape()) + " should be " + shapeStr({x.shape()[0], y.shape()[1]}), loc);
  if (x.dtype() != y.dtype() && !(x.dtype().isFP8() && y.dtype().isFP8()))
    fail("dot: operands must have the same element type (or both be fp8: e4m3 and e5m2 mix), got " +
             x.dtype().str() + " and " + y.dtype().str(),
         loc);
  const char* precisionName = precision == InputPrecision::TF32 ? "tf32" : "ieee";
  return Context::current(loc).emit1(OpKind::Dot, {x, y, c}, c.type(), {{"input_precision", Attr::string(precisionName)}},
                                     loc);
}

// ---------------------------------------------------------------- debugging and hints

void debug_print(const std::string& prefix, const std::vector<Tensor>& values, SourceLoc loc) {
  for (const Tensor& v : values)
    if (!v.defined()) fail("debug_print: a Tensor was never assigned", loc);
  Context::current(loc).emit(OpKind::DebugPrint, values, {}, {{"prefix", Attr::string(prefix)}}, loc);
}

void device_assert(const TArg& cond, const std::string& message, SourceLoc loc) {
  Type t = typeOf(cond);
  if (!t.isBool()) fail("device_assert: the condition must be boolean (i1), got " + t.str(), loc);
  Context::current(loc).emit(OpKind::DeviceAssert, {asTensor(cond, loc)}, {}, {{"msg", Attr::string(message)}}, loc);
}

// multiple_of applies to every dimension; max_contiguous to the last (fastest-varying) one.
static Tensor hintOp(const TArg& x, const char* key, int64_t n, SourceLoc loc) {
  Tensor v = asTensor(x, loc);
  if (n <= 0) fail(std::string(key) + ": the hint must be positive", loc);
  Attr a = Attr::integer(n);
  if (v.rank() > 0) {
    bool everyDim = std::string(key) == "multiple_of";
    std::vector<int64_t> per(v.rank(), everyDim ? n : 1);
    per.back() = n;
    a = Attr::intArray(per);
  }
  return Context::current(loc).emit1(OpKind::Hint, {v}, v.type(), {{key, a}}, loc);
}

Tensor multiple_of(const TArg& x, int64_t n, SourceLoc loc) { return hintOp(x, "multiple_of", n, loc); }
Tensor max_contiguous(const TArg& x, int64_t n, SourceLoc loc) { return hintOp(x, "max_contiguous", n, loc); }

}  // namespace tessera
