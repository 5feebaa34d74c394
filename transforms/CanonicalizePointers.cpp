// canonicalize-pointers: a `for` loop that carries a tile of pointers, advanced each iteration by one
// loop-invariant scalar step, carries one i32 scalar instead (the sum of the steps so far); the tile is rebuilt
// from the base pointer where the loop uses it. What the tutorial matmul's loop carries,
//
//   %ap0 = addptr (splat %a), %offs                       ; %a: a pointer argument with pointer_range = 32
//   %r = for ..., %ap0 { ^(%k, %ap): ... load %ap ...; yield (addptr %ap, (splat %step)) }
//
// becomes
//
//   %r32 = for ..., 0 { ^(%k, %sum): %ap = addptr (splat %a), (add %offs, (splat %sum)); ... load %ap ...;
//                       yield (add %sum, %step) }
//   %r = addptr (splat %a), (add %offs, (splat %r32))     ; only where the loop's result is used
//
// A tile of 64-bit pointers takes a register pair per element in every iteration; the i32 offsets are computed
// once outside the loop and the sum is one register, which is what keeps a ragged matmul (strides that are no
// multiple of 16, so no vectorized pointer arithmetic) from spilling.
//
// Exactness: `pointer_range = 32` (the JIT's offsets32 fact) says the memory behind the argument holds fewer than
// 2^31 elements, so the element offset of every address that is dereferenced fits an i32; i32 arithmetic wraps
// (docs/IR.md), so the wrapped sum of offsets and steps is that offset whenever the address is inside the memory.
// Addresses outside it (masked-off elements) may differ from the 64-bit ones, which no one reads.
//
// A tile of the same form whose sum may not fit an i32 (an argument without pointer_range = 32, as a launch with
// raw pointers or an array of 2^31 elements or more gets; i64 offsets that are not an i32 widened; any other
// initial tile) is carried as the i64 sum of its steps instead, and rebuilt as the initial tile advanced by it:
// exact with 64-bit pointer arithmetic, and no more registers than the carried tile, but its pointers are then a
// loop-invariant tile plus a scalar, which stage-copies-in-registers recomputes in the layouts its copies store
// best from (AMD; a carried tile it could only convert, so such a launch's copies went to LDS element by element).
//
// Left alone: steps that are not one scalar for the whole tile or that change from one iteration to the next, and
// pointer tiles the loop does not carry (recomputing per-iteration addresses, e.g. attention's K and V blocks, cost
// registers instead of saving them).
#include <functional>
#include <optional>
#include <vector>

#include "ir/Builder.h"
#include "transforms/PassManager.h"

namespace tessera::transforms {
namespace {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

constexpr int64_t kNarrowPointerRange = 32;  // the only pointer_range there is (ir/Verifier.cpp)

// A pointer tile as base + offsets: the base a function argument, the offsets an i32 tile of the pointers' shape
// built before the loop (null when the tile is the splatted base itself).
// One step a carried pointer tile advances by: a loop-invariant i32 scalar, or (scalar null) a constant.
struct Step {
  Value* scalar = nullptr;
  int64_t constant = 0;
};

struct BaseAndOffsets {
  Value* base = nullptr;
  Value* offsets = nullptr;
};

bool hasNarrowRange(const ir::Function& f, const Value* v) {
  if (!v->isBlockArg() || v->ownerBlock() != f.body()) return false;
  auto it = f.argAttrs(v->index()).find("pointer_range");
  return it != f.argAttrs(v->index()).end() && it->second.isInt() && it->second.getInt() == kNarrowPointerRange;
}

// Whether `v` is defined inside `loop` (so may change from one iteration to the next).
bool definedInside(const Value* v, const Op* loop) {
  const ir::Block* block = v->isBlockArg() ? v->ownerBlock() : v->definingOp()->parentBlock();
  for (const Op* parent = block->parentOp(); parent; parent = parent->parentBlock()->parentOp())
    if (parent == loop) return true;
  return false;
}

// Whether `v` has the same value in every iteration of `loop`: defined outside it, or (as the frontend traces
// `a_ptrs += BK * stride_ak`) computed in the loop's body by pure ops from such values. The body's own ops
// dominate its yield, where the sum is advanced; a value from a nested region would not, so those do not count.
bool loopInvariant(const Value* v, const Op* loop, int depth = 0) {
  constexpr int kMaxDepth = 16;  // the traced step is a product or two; deeper chains are not worth the walk
  if (!definedInside(v, loop)) return true;
  const Op* def = v->definingOp();
  if (!def || def->parentBlock() != loop->region(0) || !def->info().has(ir::kPure) || def->numRegions() != 0 ||
      depth >= kMaxDepth)
    return false;
  for (const Value* operand : def->operands())
    if (!loopInvariant(operand, loop, depth + 1)) return false;
  return true;
}

// `v` (integer, any shape) as an i32 value of the same value: itself, or the i32 it was widened from. Null when
// neither (an i64 computed as such cannot be proven narrow here).
Value* asI32(Value* v) {
  if (v->type().element() == Type::i32()) return v;
  Op* def = v->definingOp();
  if (def && def->is(OpKind::Cast) && def->operand(0)->type().element() == Type::i32() &&
      v->type().element() == Type::i64())
    return def->operand(0);
  return nullptr;
}

class CanonicalizePointersPass : public Pass {
 public:
  const char* name() const override { return "canonicalize-pointers"; }

  void run(ir::Function& f) override {
    function_ = &f;
    std::vector<Op*> loops;
    f.walk([&](Op* op) {
      if (op->is(OpKind::For)) loops.push_back(op);
    });
    for (Op* loop : loops)
      for (unsigned i = 0; i < loop->numResults(); ++i) rewriteCarried(*loop, i);
  }

 private:
  // The loop's i-th carried value, if it is a pointer tile of the form in the file comment.
  void rewriteCarried(Op& loop, unsigned i) {
    Value* init = loop.operand(3 + i);
    // Before layouts only: the tiles built here have none.
    if (!init->type().isTile() || !init->type().isPtr() || init->type().encoding()) return;
    ir::Block* body = loop.region(0);
    Value* carried = body->argument(1 + i);
    Op* yield = body->terminator();
    if (!yield || !yield->is(OpKind::Yield)) return;
    // The yielded value: `carried` advanced by addptrs of loop-invariant uniform steps.
    std::vector<Step> steps;
    Value* advanced = yield->operand(i);
    while (advanced != carried) {
      Op* def = advanced->definingOp();
      if (!def || !def->is(OpKind::AddPtr) || def->parentBlock() != body) return;
      std::optional<Step> step = uniformStep(def->operand(1), loop);
      if (!step) return;
      steps.push_back(*step);
      advanced = def->operand(0);
    }
    if (steps.empty()) return;  // not advanced: nothing carried per iteration to save

    ir::Builder before(loop.parentBlock(), &loop);
    before.setLoc(loop.loc());
    if (!decomposable(init)) {
      // The sum may not fit an i32: carry it as an i64, and the tile as the init advanced by it. Exact with no fact
      // about the pointers (64-bit pointer arithmetic, as before), and the tile is loop-invariant pointers plus a
      // scalar, which later passes can rebuild in another layout (stage-copies-in-registers' loads on AMD) where a
      // carried tile can only be converted.
      carrySum(loop, i, steps, Type::i64(), [init](ir::Builder& b, Value* sum) {
        return b.addptr(init, b.splat(sum, init->type().shape()));
      });
      return;
    }
    // The init as base + offsets, built right before the loop; the tile rebuilt as base + (offsets + sum).
    const BaseAndOffsets split = decompose(before, init);
    const Type tile = init->type();
    Value* offsets = split.offsets ? split.offsets : before.constantInt(0, tile.withElement(Type::i32()));
    Value* splatBase = before.splat(split.base, tile.shape());
    carrySum(loop, i, steps, Type::i32(), [splatBase, offsets](ir::Builder& b, Value* sum) {
      return b.addptr(splatBase, b.binary(OpKind::Add, offsets, b.splat(sum, offsets->type().shape())));
    });
  }

  // The loop's i-th carried pointer tile (advanced by `steps`, innermost first) replaced by the sum of the steps so
  // far, of type `sumType` and from 0: `tileOf` rebuilds the tile from it where the loop (or its result's user)
  // reads it.
  static void carrySum(Op& loop, unsigned i, const std::vector<Step>& steps, Type sumType,
                       const std::function<Value*(ir::Builder&, Value*)>& tileOf) {
    ir::Block* body = loop.region(0);
    Value* carried = body->argument(1 + i);
    Op* yield = body->terminator();
    ir::Builder before(loop.parentBlock(), &loop);
    before.setLoc(loop.loc());
    const std::vector<ir::Use> carriedUses = carried->uses();
    const std::vector<ir::Use> resultUses = loop.result(i)->uses();
    loop.setOperand(3 + i, before.constantInt(0, sumType));
    carried->setType(sumType);
    loop.result(i)->setType(sumType);

    ir::Builder inBody(body, body->front());
    inBody.setLoc(loop.loc());
    Value* pointers = tileOf(inBody, carried);
    for (const ir::Use& use : carriedUses) use.user->setOperand(use.operandIndex, pointers);

    ir::Builder atYield(body, yield);
    atYield.setLoc(loop.loc());
    Value* sum = carried;
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      Value* step = !it->scalar                      ? before.constantInt(it->constant, sumType)
                    : it->scalar->type() == sumType ? it->scalar
                                                    : atYield.cast(it->scalar, sumType);
      sum = atYield.binary(OpKind::Add, sum, step);
    }
    yield->setOperand(i, sum);

    if (!resultUses.empty()) {
      ir::Builder after(loop.parentBlock(), nextOp(loop));
      after.setLoc(loop.loc());
      Value* finalPointers = tileOf(after, loop.result(i));
      for (const ir::Use& use : resultUses) use.user->setOperand(use.operandIndex, finalPointers);
    }
  }

  // The op after `loop` in its block (a `for` is never the terminator, so something follows it).
  static Op* nextOp(Op& loop) {
    auto& ops = loop.parentBlock()->ops();
    for (auto it = ops.begin(); it != ops.end(); ++it)
      if (it->get() == &loop) return std::next(it)->get();
    return ops.back().get();
  }

  // What every element of an addptr's offset tile is, when that is the same in every iteration of `loop`: a
  // scalar splatted (possibly then broadcast), or an integer constant. Nullopt otherwise.
  static std::optional<Step> uniformStep(Value* offset, const Op& loop) {
    Op* def = offset->definingOp();
    while (def && def->is(OpKind::Broadcast)) def = def->operand(0)->definingOp();
    if (!def) return std::nullopt;
    if (def->is(OpKind::Splat)) {
      Value* scalar = asI32(def->operand(0));
      if (!scalar || !loopInvariant(scalar, &loop)) return std::nullopt;
      return Step{scalar, 0};
    }
    if (def->is(OpKind::Constant) && def->hasAttr("value") && def->attr("value").isInt()) {
      const int64_t value = def->intAttr("value");
      if (value != static_cast<int32_t>(value)) return std::nullopt;
      return Step{nullptr, value};
    }
    return std::nullopt;
  }

  // Whether decompose() can split `ptrs`: a chain of addptr (i32 offsets), broadcast and expand_dims over the
  // splat of a pointer argument with pointer_range = 32.
  bool decomposable(const Value* ptrs) const {
    const Op* def = ptrs->definingOp();
    if (!def) return false;
    switch (def->kind()) {
      case OpKind::Splat: return hasNarrowRange(*function_, def->operand(0));
      case OpKind::AddPtr:
        return def->operand(1)->type().isTile() && asI32(def->operand(1)) && decomposable(def->operand(0));
      case OpKind::Broadcast:
      case OpKind::ExpandDims: return def->operand(0)->type().isTile() && decomposable(def->operand(0));
      default: return false;
    }
  }

  // `ptrs` (decomposable) as base + offsets, the offsets built with `b`.
  BaseAndOffsets decompose(ir::Builder& b, Value* ptrs) {
    Op* def = ptrs->definingOp();
    if (def->is(OpKind::Splat)) return {def->operand(0), nullptr};
    BaseAndOffsets inner = decompose(b, def->operand(0));
    if (def->is(OpKind::AddPtr)) {
      Value* offset = asI32(def->operand(1));
      inner.offsets = inner.offsets ? b.binary(OpKind::Add, inner.offsets, offset) : offset;
    } else if (inner.offsets && def->is(OpKind::Broadcast)) {
      inner.offsets = b.broadcast(inner.offsets, ptrs->type().shape());
    } else if (inner.offsets && def->is(OpKind::ExpandDims)) {
      inner.offsets = b.expandDims(inner.offsets, static_cast<int>(def->intAttr("axis")));
    }
    return inner;
  }

  const ir::Function* function_ = nullptr;
};

}  // namespace

std::unique_ptr<Pass> createCanonicalizePointersPass() { return std::make_unique<CanonicalizePointersPass>(); }

}  // namespace tessera::transforms
