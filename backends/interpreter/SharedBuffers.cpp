// Shared buffers and asynchronous copies. Programs run one at a time, so a copy lands at once: async_copy is a
// masked load (masked-off elements read as 0, as cp.async's zero fill) stored into its stage, async_tma_copy the
// descriptor's block (desc_load's semantics) stored into its stage, and the commit and wait groups, mbarriers and
// their waits only produce tokens. A buffer value is a handle: its index in ProgramContext::sharedBuffers.
#include "backends/interpreter/OpImpl.h"

namespace tessera::interp::detail {

using ir::OpKind;

namespace {

Tile handle(ir::Type type, int64_t index) {
  Tile t;
  t.type = type;
  t.ints = {index};
  return t;
}

// The stage a (buffer, stage index) operand pair names; fails on an index outside the buffer.
Tile& stageOf(const ir::Op& op, const Tile& buffer, const Tile& stage, ProgramContext& ctx) {
  if (!buffer.type.isSharedBuffer() || buffer.ints.size() != 1 ||
      buffer.ints[0] >= static_cast<int64_t>(ctx.sharedBuffers.size()))
    fail(op, ctx, "operand is not a shared buffer made by local_alloc in this program");
  std::vector<Tile>& stages = ctx.sharedBuffers[buffer.ints[0]];
  const int64_t s = stage.ints.at(0);
  if (s < 0 || s >= static_cast<int64_t>(stages.size()))
    fail(op, ctx, "stage index " + std::to_string(s) + " is outside the buffer's " + std::to_string(stages.size()) +
                      " stages");
  return stages[s];
}

}  // namespace

Tile evalSharedBufferOp(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  ProgramContext& ctx = env.ctx;
  const ir::Type result = op.result(0)->type();
  switch (op.kind()) {
    case OpKind::LocalAlloc:
      ctx.sharedBuffers.emplace_back(result.stages(), Tile(result.stageTile()));
      return handle(result, static_cast<int64_t>(ctx.sharedBuffers.size()) - 1);
    case OpKind::AsyncCopy: {
      Tile& stage = stageOf(op, *operands[1], *operands[2], ctx);
      const Tile* mask = operands.size() > 3 ? operands[3] : nullptr;
      stage = loadElements(op, *operands[0], mask, nullptr, stage.type, ctx);
      return handle(result, 0);
    }
    case OpKind::AsyncTmaCopy: {
      // Operands: the descriptor, one offset per dimension, the buffer, the stage, the barriers, the predicate.
      const size_t rank = op.operand(0)->type().blockShape().size();
      const bool issued = operands.size() == rank + 4 || operands[rank + 4]->ints.at(0) != 0;
      if (issued) {
        Tile& stage = stageOf(op, *operands[rank + 1], *operands[rank + 2], ctx);
        stage = loadDescriptorBlock(op, operands.first(rank + 1), stage.type, env);
      }
      return handle(result, 0);
    }
    case OpKind::MbarrierAlloc:  // copies land at once: nothing waits on the barriers
    case OpKind::MbarrierWait:
    case OpKind::AsyncCommitGroup:
    case OpKind::AsyncWait:
      return handle(result, 0);
    case OpKind::LocalStore: {
      Tile& stage = stageOf(op, *operands[1], *operands[2], ctx);
      const ir::Type stageType = stage.type;
      stage = *operands[0];
      stage.type = stageType;  // the value's elements, in the stage's type
      return handle(result, 0);
    }
    case OpKind::LocalLoad: {
      Tile r = stageOf(op, *operands[0], *operands[1], ctx);
      r.type = result;  // the stage's elements, in the result's layout
      return r;
    }
    default:
      fail(op, ctx, "is not a shared-buffer op");
  }
}

}  // namespace tessera::interp::detail
