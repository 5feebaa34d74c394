// Builder: creates ops at an insertion point. Typed helpers infer result types from operands (they assume
// operands already have matching types and shapes: type promotion and broadcasting are the frontend's job,
// and anything left ill-formed is caught by the verifier, not here).
#pragma once

#include <functional>
#include <vector>

#include "ir/IR.h"

namespace tessera::ir {

class Builder {
 public:
  Builder() = default;
  explicit Builder(Block* block, Op* before = nullptr) : block_(block), before_(before) {}

  void setInsertionPointToEnd(Block* b) { block_ = b; before_ = nullptr; }
  void setInsertionPoint(Op* before) { block_ = before->parentBlock(); before_ = before; }
  Block* block() const { return block_; }
  Op* insertionPoint() const { return before_; }
  void setLoc(Location l) { loc_ = std::move(l); }
  const Location& loc() const { return loc_; }

  // Generic creation; every helper below goes through here.
  Op* create(OpKind kind, const std::vector<Value*>& operands, const std::vector<Type>& resultTypes,
             AttrDict attrs = {});
  Value* create1(OpKind kind, const std::vector<Value*>& operands, Type resultType, AttrDict attrs = {}) {
    return create(kind, operands, {resultType}, std::move(attrs))->result(0);
  }

  // Constants (scalar, or a tile filled with one value).
  Value* constantInt(int64_t v, Type t);
  Value* constantFloat(double v, Type t);
  Value* constantBool(bool v, Type t = Type::i1());

  Value* programId(int axis);
  Value* numPrograms(int axis);
  Value* arange(int64_t start, int64_t end);

  Value* splat(Value* scalar, const std::vector<int64_t>& shape);
  Value* broadcast(Value* v, const std::vector<int64_t>& shape);
  Value* expandDims(Value* v, int axis);
  Value* reshape(Value* v, const std::vector<int64_t>& shape);
  Value* trans(Value* v, const std::vector<int64_t>& perm);
  Value* cat(Value* a, Value* b);
  Value* join(Value* a, Value* b);
  std::pair<Value*, Value*> split(Value* v);

  Value* binary(OpKind kind, Value* a, Value* b);  // result type = a's type
  Value* unary(OpKind kind, Value* a);             // result type = a's type
  Value* fma(Value* a, Value* b, Value* c);
  Value* cmp(const std::string& pred, Value* a, Value* b);  // eq ne lt le gt ge
  Value* select(Value* cond, Value* a, Value* b);
  Value* cast(Value* v, Type elementType);     // keeps the shape
  Value* bitcast(Value* v, Type elementType);  // keeps the shape
  Value* addptr(Value* ptr, Value* offset);

  Value* load(Value* ptr, Value* mask = nullptr, Value* other = nullptr);
  Op* store(Value* ptr, Value* value, Value* mask = nullptr);
  Value* atomicRMW(const std::string& rmwKind, Value* ptr, Value* val, Value* mask = nullptr,
                   const std::string& sem = "acq_rel", const std::string& scope = "gpu");
  Value* atomicCAS(Value* ptr, Value* cmp, Value* val, const std::string& sem = "acq_rel",
                   const std::string& scope = "gpu");
  // A tensor descriptor's block at `offsets` (i32 scalars, one per dimension), and one of its fields:
  // the base pointer ("base"), or shape[dim] / strides[dim] as i64 ("shape", "stride"; ir/TensorDescriptor.h).
  Value* descLoad(Value* desc, const std::vector<Value*>& offsets);
  Op* descStore(Value* desc, const std::vector<Value*>& offsets, Value* value);
  Value* descField(Value* desc, const std::string& field, int dim = -1);

  // Reduce/scan: `combine` fills the region (given its 2N scalar arguments: accumulators then new elements)
  // and returns the N values to yield.
  using CombineFn = std::function<std::vector<Value*>(Builder&, const std::vector<Value*>&)>;
  Op* reduce(const std::vector<Value*>& inputs, int axis, const CombineFn& combine);
  Op* scan(const std::vector<Value*>& inputs, int axis, bool reverse, const CombineFn& combine);
  Value* dot(Value* a, Value* b, Value* acc, const std::string& inputPrecision = "ieee");

  // Control flow. The region bodies are filled by the caller (insertion point inside region(i)).
  Op* forOp(Value* lb, Value* ub, Value* step, const std::vector<Value*>& inits);  // region args: iv, carried...
  Op* ifOp(Value* cond, const std::vector<Type>& resultTypes);
  Op* whileOp(const std::vector<Value*>& inits);  // both regions get one argument per init
  Op* yield(const std::vector<Value*>& values);
  Op* ret();

  Op* debugPrint(const std::string& prefix, const std::vector<Value*>& values);
  Op* deviceAssert(Value* cond, const std::string& message);
  Value* hint(Value* v, AttrDict hints);

 private:
  Block* block_ = nullptr;
  Op* before_ = nullptr;
  Location loc_;
};

// Result-shape rules shared by the builder, the verifier and the frontend.
std::vector<int64_t> reducedShape(const std::vector<int64_t>& shape, int axis);

}  // namespace tessera::ir
