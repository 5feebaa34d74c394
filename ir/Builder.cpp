#include "ir/Builder.h"

#include <cassert>

namespace tessera::ir {

std::vector<int64_t> reducedShape(const std::vector<int64_t>& shape, int axis) {
  std::vector<int64_t> out = shape;
  out.erase(out.begin() + axis);
  return out;
}

Op* Builder::create(OpKind kind, const std::vector<Value*>& operands, const std::vector<Type>& resultTypes,
                    AttrDict attrs) {
  assert(block_ && "builder has no insertion point");
  return block_->insertBefore(before_, Op::create(kind, operands, resultTypes, std::move(attrs), loc_));
}

Value* Builder::constantInt(int64_t v, Type t) { return create1(OpKind::Constant, {}, t, {{"value", Attr::integer(v)}}); }
Value* Builder::constantFloat(double v, Type t) {
  return create1(OpKind::Constant, {}, t, {{"value", Attr::floating(v)}});
}
Value* Builder::constantBool(bool v, Type t) { return create1(OpKind::Constant, {}, t, {{"value", Attr::boolean(v)}}); }

Value* Builder::programId(int axis) { return create1(OpKind::ProgramId, {}, Type::i32(), {{"axis", Attr::integer(axis)}}); }
Value* Builder::numPrograms(int axis) {
  return create1(OpKind::NumPrograms, {}, Type::i32(), {{"axis", Attr::integer(axis)}});
}
Value* Builder::arange(int64_t start, int64_t end) {
  return create1(OpKind::Arange, {}, Type::tile({end - start}, Type::i32()),
                 {{"start", Attr::integer(start)}, {"end", Attr::integer(end)}});
}

Value* Builder::splat(Value* s, const std::vector<int64_t>& shape) {
  return create1(OpKind::Splat, {s}, Type::tile(shape, s->type()));
}
Value* Builder::broadcast(Value* v, const std::vector<int64_t>& shape) {
  return create1(OpKind::Broadcast, {v}, v->type().withShape(shape));
}
Value* Builder::expandDims(Value* v, int axis) {
  std::vector<int64_t> s = v->type().shape();
  s.insert(s.begin() + axis, 1);
  return create1(OpKind::ExpandDims, {v}, Type::tile(s, v->type().element()), {{"axis", Attr::integer(axis)}});
}
Value* Builder::reshape(Value* v, const std::vector<int64_t>& shape) {
  return create1(OpKind::Reshape, {v}, Type::tile(shape, v->type().element()));
}
Value* Builder::trans(Value* v, const std::vector<int64_t>& perm) {
  std::vector<int64_t> s;
  for (int64_t p : perm) s.push_back(v->type().shape()[p]);
  return create1(OpKind::Trans, {v}, Type::tile(s, v->type().element()), {{"perm", Attr::intArray(perm)}});
}
Value* Builder::cat(Value* a, Value* b) {
  std::vector<int64_t> s = a->type().shape();
  s[0] *= 2;
  return create1(OpKind::Cat, {a, b}, Type::tile(s, a->type().element()));
}
Value* Builder::join(Value* a, Value* b) {
  std::vector<int64_t> s = a->type().shape();
  s.push_back(2);
  return create1(OpKind::Join, {a, b}, Type::tile(s, a->type().element()));
}
std::pair<Value*, Value*> Builder::split(Value* v) {
  std::vector<int64_t> s = v->type().shape();
  s.pop_back();
  Type t = Type::tile(s, v->type().element());
  Op* op = create(OpKind::Split, {v}, {t, t});
  return {op->result(0), op->result(1)};
}

Value* Builder::binary(OpKind kind, Value* a, Value* b) { return create1(kind, {a, b}, a->type()); }
Value* Builder::unary(OpKind kind, Value* a) { return create1(kind, {a}, a->type()); }
Value* Builder::fma(Value* a, Value* b, Value* c) { return create1(OpKind::Fma, {a, b, c}, a->type()); }
Value* Builder::cmp(const std::string& pred, Value* a, Value* b) {
  return create1(OpKind::Cmp, {a, b}, a->type().withElement(Type::i1()), {{"pred", Attr::string(pred)}});
}
Value* Builder::select(Value* c, Value* a, Value* b) { return create1(OpKind::Select, {c, a, b}, a->type()); }
Value* Builder::cast(Value* v, Type elem) { return create1(OpKind::Cast, {v}, v->type().withElement(elem)); }
Value* Builder::bitcast(Value* v, Type elem) { return create1(OpKind::Bitcast, {v}, v->type().withElement(elem)); }
Value* Builder::addptr(Value* p, Value* off) { return create1(OpKind::AddPtr, {p, off}, p->type()); }

Value* Builder::descLoad(Value* desc, const std::vector<Value*>& offsets) {
  std::vector<Value*> ops{desc};
  ops.insert(ops.end(), offsets.begin(), offsets.end());
  const Type t = desc->type();
  return create1(OpKind::DescLoad, ops, Type::tile(t.blockShape(), t.element()));
}

Op* Builder::descStore(Value* desc, const std::vector<Value*>& offsets, Value* value) {
  std::vector<Value*> ops{desc};
  ops.insert(ops.end(), offsets.begin(), offsets.end());
  ops.push_back(value);
  return create(OpKind::DescStore, ops, {});
}

Value* Builder::descField(Value* desc, const std::string& field, int dim) {
  AttrDict attrs{{"field", Attr::string(field)}};
  if (dim >= 0) attrs["dim"] = Attr::integer(dim);
  const Type result = dim >= 0 ? Type::i64() : Type::ptr(desc->type().element());
  return create1(OpKind::DescField, {desc}, result, std::move(attrs));
}

Value* Builder::load(Value* ptr, Value* mask, Value* other) {
  std::vector<Value*> ops{ptr};
  if (mask) ops.push_back(mask);
  if (other) {
    assert(mask && "load: 'other' requires a mask");
    ops.push_back(other);
  }
  return create1(OpKind::Load, ops, ptr->type().withElement(ptr->type().pointee()));
}
Op* Builder::store(Value* ptr, Value* value, Value* mask) {
  std::vector<Value*> ops{ptr, value};
  if (mask) ops.push_back(mask);
  return create(OpKind::Store, ops, {});
}
Value* Builder::atomicRMW(const std::string& k, Value* ptr, Value* val, Value* mask, const std::string& sem,
                          const std::string& scope) {
  std::vector<Value*> ops{ptr, val};
  if (mask) ops.push_back(mask);
  return create1(OpKind::AtomicRMW, ops, val->type(),
                 {{"kind", Attr::string(k)}, {"sem", Attr::string(sem)}, {"scope", Attr::string(scope)}});
}
Value* Builder::atomicCAS(Value* ptr, Value* c, Value* val, const std::string& sem, const std::string& scope) {
  return create1(OpKind::AtomicCAS, {ptr, c, val}, val->type(),
                 {{"sem", Attr::string(sem)}, {"scope", Attr::string(scope)}});
}

static Op* buildCombineOp(Builder& self, OpKind kind, const std::vector<Value*>& inputs,
                          const std::vector<Type>& resultTypes, AttrDict attrs, const Builder::CombineFn& combine) {
  Op* op = self.create(kind, inputs, resultTypes, std::move(attrs));
  Block* body = op->region(0);
  std::vector<Value*> args;
  for (int pass = 0; pass < 2; ++pass)
    for (Value* in : inputs) args.push_back(body->addArgument(in->type().element()));
  Builder inner(body);
  inner.setLoc(self.loc());
  inner.yield(combine(inner, args));
  return op;
}

Op* Builder::reduce(const std::vector<Value*>& inputs, int axis, const CombineFn& combine) {
  std::vector<Type> types;
  for (Value* in : inputs) types.push_back(Type::tile(reducedShape(in->type().shape(), axis), in->type().element()));
  return buildCombineOp(*this, OpKind::Reduce, inputs, types, {{"axis", Attr::integer(axis)}}, combine);
}

Op* Builder::scan(const std::vector<Value*>& inputs, int axis, bool reverse, const CombineFn& combine) {
  std::vector<Type> types;
  for (Value* in : inputs) types.push_back(in->type().withoutEncoding());
  return buildCombineOp(*this, OpKind::Scan, inputs, types,
                        {{"axis", Attr::integer(axis)}, {"reverse", Attr::boolean(reverse)}}, combine);
}

Value* Builder::dot(Value* a, Value* b, Value* acc, const std::string& inputPrecision) {
  return create1(OpKind::Dot, {a, b, acc}, acc->type(), {{"input_precision", Attr::string(inputPrecision)}});
}

Op* Builder::forOp(Value* lb, Value* ub, Value* step, const std::vector<Value*>& inits) {
  std::vector<Value*> ops{lb, ub, step};
  std::vector<Type> types;
  for (Value* v : inits) {
    ops.push_back(v);
    types.push_back(v->type());
  }
  Op* op = create(OpKind::For, ops, types);
  op->region(0)->addArgument(lb->type());
  for (Type t : types) op->region(0)->addArgument(t);
  return op;
}

Op* Builder::ifOp(Value* cond, const std::vector<Type>& resultTypes) {
  return create(OpKind::If, {cond}, resultTypes);
}

Op* Builder::whileOp(const std::vector<Value*>& inits) {
  std::vector<Type> types;
  for (Value* v : inits) types.push_back(v->type());
  Op* op = create(OpKind::While, inits, types);
  for (Type t : types) {
    op->region(0)->addArgument(t);
    op->region(1)->addArgument(t);
  }
  return op;
}

Op* Builder::yield(const std::vector<Value*>& values) { return create(OpKind::Yield, values, {}); }
Op* Builder::ret() { return create(OpKind::Return, {}, {}); }

Op* Builder::debugPrint(const std::string& prefix, const std::vector<Value*>& values) {
  return create(OpKind::DebugPrint, values, {}, {{"prefix", Attr::string(prefix)}});
}
Op* Builder::deviceAssert(Value* cond, const std::string& message) {
  return create(OpKind::DeviceAssert, {cond}, {}, {{"msg", Attr::string(message)}});
}
Value* Builder::hint(Value* v, AttrDict hints) { return create1(OpKind::Hint, {v}, v->type(), std::move(hints)); }

}  // namespace tessera::ir
