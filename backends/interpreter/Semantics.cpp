// evaluateOp: one op's semantics on concrete values (docs/IR.md). Dispatches to the op groups and implements
// the small ops (constants, ids, arange, debug_print, device_assert, hint) itself.
#include <iostream>

#include "backends/interpreter/OpImpl.h"

namespace tessera::interp {

namespace detail {

using ir::OpKind;

ir::Type resultType(const ir::Op& op, unsigned i, const EvalEnv& env) {
  if (i >= op.numResults()) fail(op, env.ctx, "is missing result " + std::to_string(i));
  ir::Type declared = op.result(i)->type();
  return env.laneShape ? ir::Type::tile(*env.laneShape, declared.element()) : declared;
}

std::string programTag(const ProgramContext& ctx) {
  return "program (" + std::to_string(ctx.programId[0]) + ", " + std::to_string(ctx.programId[1]) + ", " +
         std::to_string(ctx.programId[2]) + ")";
}

void fail(const ir::Op& op, const ProgramContext& ctx, const std::string& message) {
  throw Error(std::string("'") + op.name() + "': " + message + " in " + programTag(ctx), op.loc());
}

namespace {

Tile evalConstant(const ir::Op& op, const EvalEnv& env) {
  Tile r(resultType(op, 0, env));
  const ir::Attr& value = op.attr("value");
  ir::Type element = r.type.element();
  if (element.isPtr() || element.isFP8()) fail(op, env.ctx, "constants of type " + element.str() + " are not allowed");
  if (element.isFloat()) {
    double v;
    if (value.isFloat()) v = value.getFloat();
    else if (value.isInt()) v = static_cast<double>(value.getInt());
    else fail(op, env.ctx, "'value' must be a number for type " + element.str());
    std::fill(r.floats.begin(), r.floats.end(), ir::roundToFloat(element.scalarKind(), v));
  } else {
    int64_t v;
    if (value.isInt()) v = value.getInt();
    else if (value.isBool()) v = value.getBool() ? 1 : 0;
    else fail(op, env.ctx, "'value' must be an integer or bool for type " + element.str());
    std::fill(r.ints.begin(), r.ints.end(), ir::IntFormat(element).wrap(static_cast<uint64_t>(v)));
  }
  return r;
}

int axisAttr(const ir::Op& op, const ProgramContext& ctx) {
  int64_t axis = op.intAttr("axis");
  if (axis < 0 || axis > 2) fail(op, ctx, "axis " + std::to_string(axis) + " is not 0, 1 or 2");
  return static_cast<int>(axis);
}

Tile evalArange(const ir::Op& op, const EvalEnv& env) {
  Tile r(resultType(op, 0, env));
  int64_t start = op.intAttr("start");
  int64_t end = op.intAttr("end");
  if (end - start != r.size() || !r.type.isInt())
    fail(op, env.ctx, "range [" + std::to_string(start) + ", " + std::to_string(end) + ") does not fit " + r.type.str());
  const ir::IntFormat canon(r.type);
  for (int64_t i = 0, n = r.size(); i < n; ++i) r.ints[i] = canon.wrap(static_cast<uint64_t>(start + i));
  return r;
}

void evalDebugPrint(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  std::string line = "pid (" + std::to_string(env.ctx.programId[0]) + ", " + std::to_string(env.ctx.programId[1]) +
                     ", " + std::to_string(env.ctx.programId[2]) + ") ";
  if (op.hasAttr("prefix")) line += op.stringAttr("prefix");
  for (size_t i = 0; i < operands.size(); ++i) {
    if (i) line += ' ';
    line += operands[i]->str();
  }
  line += '\n';
  std::ostream& out = env.ctx.out ? *env.ctx.out : std::cout;
  out << line;
  out.flush();
}

void evalDeviceAssert(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  const Tile& cond = *operands[0];
  if (!cond.type.isBool()) fail(op, env.ctx, "condition must be i1, not " + cond.type.str());
  for (int64_t i = 0; i < cond.size(); ++i) {
    if (cond.ints[i] != 0) continue;
    std::string msg = op.hasAttr("msg") ? op.stringAttr("msg") : std::string();
    std::string where = cond.size() > 1 ? " (element " + std::to_string(i) + ")" : "";
    throw Error("device_assert failed: " + msg + where + " in " + programTag(env.ctx), op.loc());
  }
}

void checkOperandCount(const ir::Op& op, OperandList operands, const ProgramContext& ctx) {
  const ir::OpInfo& info = op.info();
  if (info.numOperands != ir::kVariadic && static_cast<int>(operands.size()) != info.numOperands)
    fail(op, ctx, "expects " + std::to_string(info.numOperands) + " operands, got " + std::to_string(operands.size()));
  if (info.numResults != ir::kVariadic && static_cast<int>(op.numResults()) != info.numResults)
    fail(op, ctx, "expects " + std::to_string(info.numResults) + " results, has " + std::to_string(op.numResults()));
  for (const Tile* t : operands)
    if (!t->type) fail(op, ctx, "an operand has no value");
}

}  // namespace

std::vector<Tile> evaluate(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  checkOperandCount(op, operands, env.ctx);
  switch (op.kind()) {
    case OpKind::Constant: return {evalConstant(op, env)};
    case OpKind::ProgramId:
    case OpKind::NumPrograms: {
      int axis = axisAttr(op, env.ctx);
      int64_t v = op.is(OpKind::ProgramId) ? env.ctx.programId[axis] : env.ctx.numPrograms[axis];
      Tile r(resultType(op, 0, env));
      if (!r.type.isInt()) fail(op, env.ctx, "result must be an integer");
      std::fill(r.ints.begin(), r.ints.end(), ir::IntFormat(r.type).wrap(static_cast<uint64_t>(v)));
      return {std::move(r)};
    }
    case OpKind::ConsumerGroup: {
      Tile r(resultType(op, 0, env));
      std::fill(r.ints.begin(), r.ints.end(), env.ctx.consumerGroup);
      return {std::move(r)};
    }
    case OpKind::Arange: return {evalArange(op, env)};

    case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Reshape:
    case OpKind::Trans: case OpKind::Cat: case OpKind::Join: case OpKind::Split:
      return evalShapeOp(op, operands, env);

    case OpKind::Load: case OpKind::AtomicRMW: case OpKind::AtomicCAS:
      return {evalMemoryOp(op, operands, env)};
    case OpKind::Store:
      evalMemoryOp(op, operands, env);
      return {};

    case OpKind::DescLoad: case OpKind::DescField: return {evalDescriptorOp(op, operands, env)};
    case OpKind::DescStore:
      evalDescriptorOp(op, operands, env);
      return {};

    case OpKind::LocalAlloc: case OpKind::AsyncCopy: case OpKind::AsyncCommitGroup: case OpKind::AsyncWait:
    case OpKind::LocalLoad: case OpKind::LocalStore: case OpKind::MbarrierAlloc: case OpKind::AsyncTmaCopy:
    case OpKind::MbarrierWait:
      return {evalSharedBufferOp(op, operands, env)};
    case OpKind::MbarrierArrive:  // copies land at once: nothing waits on the barriers
      return {};
    case OpKind::TurnWait: case OpKind::TurnPass:  // the consumers run as one: no turns to take
      return {};

    case OpKind::Reduce: case OpKind::Scan: return evalReduceOrScan(op, operands, env);
    case OpKind::Dot: return {evalDot(op, operands, env)};

    case OpKind::For: case OpKind::If: case OpKind::While: case OpKind::WarpSpecialize: case OpKind::Yield:
    case OpKind::Return:
      fail(op, env.ctx, "control flow is executed by the interpreter's run(), not evaluateOp");

    case OpKind::DebugPrint: evalDebugPrint(op, operands, env); return {};
    case OpKind::DeviceAssert: evalDeviceAssert(op, operands, env); return {};
    case OpKind::ConvertLayout: {  // only the layout encoding changes; the values are the same
      Tile r = *operands[0];
      ir::Type type = resultType(op, 0, env);
      if (type.numElements() != r.size() || type.element() != r.type.element())
        fail(op, env.ctx, "cannot convert " + r.type.str() + " to " + type.str());
      r.type = type;
      return {std::move(r)};
    }
    case OpKind::Barrier: return {};  // programs run one at a time: nothing to synchronize
    case OpKind::Hint: {
      Tile r = *operands[0];
      if (env.laneShape) r.type = resultType(op, 0, env);
      return {std::move(r)};
    }
    case OpKind::DotWait: {  // dots are synchronous here: nothing is pending
      std::vector<Tile> results;
      for (unsigned i = 0; i < op.numResults(); ++i) {
        results.push_back(*operands[i]);
        if (env.laneShape) results.back().type = resultType(op, i, env);
      }
      return results;
    }
    default:
      if (op.info().has(ir::kElementwise)) return {evalElementwise(op, operands, env)};
      fail(op, env.ctx, "has no interpreter semantics");
  }
}

}  // namespace detail

std::vector<Tile> evaluateOp(const ir::Op& op, const std::vector<Tile>& operands, ProgramContext& ctx) {
  std::vector<const Tile*> pointers;
  pointers.reserve(operands.size());
  for (const Tile& t : operands) pointers.push_back(&t);
  return detail::evaluate(op, detail::OperandList(pointers.data(), pointers.size()), detail::EvalEnv{ctx, nullptr});
}

}  // namespace tessera::interp
