#include "transforms/analysis/ProgramIterations.h"

#include <algorithm>

namespace tessera::transforms {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {
constexpr const char* kIterationBaseAttr = "iteration_base";

// The ops of `block` after `op` (op in block): where the loop's next base is computed.
Op* nextOp(Op& op) {
  ir::Block* block = op.parentBlock();
  auto it = std::find_if(block->ops().begin(), block->ops().end(), [&](const auto& o) { return o.get() == &op; });
  return std::next(it) == block->ops().end() ? nullptr : std::next(it)->get();
}
}  // namespace

bool countsProgramIterations(const Op& loop) {
  if (!loop.is(OpKind::For)) return false;
  const ir::Function* f = loop.parentBlock()->parentFunction();
  return f && loop.parentBlock() == ir::programBody(*f);
}

Value* iterationBase(Op& loop) {
  if (!countsProgramIterations(loop))
    throw Error("internal error: iterationBase of a loop that is not in the program's body", loop.loc());
  Op* tiles = loop.parentOp();
  if (!tiles) return nullptr;  // the function's body: this is the program's only run of the loop
  ir::Block& tileBody = *tiles->region(0);
  if (loop.hasAttr(kIterationBaseAttr))
    return tileBody.argument(static_cast<unsigned>(loop.attr(kIterationBaseAttr).getInt()) + 1);

  const Type i32 = Type::i32();
  const unsigned index = tileBody.numArguments() - 1;  // the new carried value's
  ir::Builder before(tiles->parentBlock(), tiles);
  before.setLoc(loop.loc());
  tiles->addOperand(before.constantInt(0, i32));
  tiles->addResult(i32);
  Value* base = tileBody.addArgument(i32);
  base->setNameHint("iterations_before");

  // After the loop: base + its trip count.
  ir::Builder after(&tileBody, nextOp(loop));
  after.setLoc(loop.loc());
  Value* trips = tripCount(after, loop.operand(0), loop.operand(1), loop.operand(2));
  tileBody.terminator()->addOperand(after.binary(OpKind::Add, base, trips));
  loop.setAttr(kIterationBaseAttr, ir::Attr::integer(index));
  return base;
}

namespace {
// `loop`'s own iteration, an i32: (iv - lb) / step.
Value* ownIteration(ir::Builder& b, Op& loop) {
  Value* iv = loop.region(0)->argument(0);
  Value* iteration = b.binary(OpKind::Div, b.binary(OpKind::Sub, iv, loop.operand(0)), loop.operand(2));
  return iv->type() != Type::i32() ? b.cast(iteration, Type::i32()) : iteration;
}
}  // namespace

Value* programIteration(ir::Builder& b, Op& loop) {
  Value* base = iterationBase(loop);
  Value* iteration = ownIteration(b, loop);
  return base ? b.binary(OpKind::Add, base, iteration) : iteration;
}

bool isTileLoop(const Op& op) {
  if (!op.is(OpKind::For) || !op.hasAttr(ir::kPersistentTilesAttr)) return false;
  const ir::Function* f = op.parentBlock()->parentFunction();
  return f && op.parentBlock() == f->body();
}

Value* tileOfProgram(ir::Builder& b, Op& tiles) { return ownIteration(b, tiles); }

Value* tripCount(ir::Builder& b, Value* lb, Value* ub, Value* step) {
  const Type ivType = lb->type();
  // One statement per op: the order the IR gets them in must not be the compiler's argument order.
  Value* span = b.binary(OpKind::Sub, ub, lb);
  Value* spanAndStep = b.binary(OpKind::Add, span, step);
  Value* one = b.constantInt(1, ivType);
  Value* rounded = b.binary(OpKind::Sub, spanAndStep, one);
  Value* runs = b.cmp("gt", ub, lb);
  Value* quotient = b.binary(OpKind::Div, rounded, step);
  Value* zero = b.constantInt(0, ivType);
  Value* trips = b.select(runs, quotient, zero);
  return ivType != Type::i32() ? b.cast(trips, Type::i32()) : trips;
}

}  // namespace tessera::transforms
