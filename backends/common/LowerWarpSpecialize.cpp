// warp_specialize {producer_warps, producer_registers, consumer_registers} { producer } { consumers }. The
// program's first num_warps warps are the consumers (the warps every layout was planned for); the producer_warps
// after them are the producers:
//
//   tid >= consumers: setmaxnreg.dec producer_registers; thread `consumers` alone runs the producer region
//   tid <  consumers: setmaxnreg.inc consumer_registers; the consumer region, whose barriers are
//                     bar.sync 1, consumers (the producers never arrive at them, and may have exited)
//
// setmaxnreg is executed by whole warpgroups (.sync.aligned), so it comes before the producers narrow to one
// thread. Both paths meet again before the function's return.
//
// turn_wait / turn_pass {groups = G} (order-consumer-groups) split the consumers into G groups of consecutive warps;
// group g's turn is barrier 2 + g, of two groups' threads: g waits there (bar.sync) and the group before it, g - 1
// mod G, arrives (bar.arrive) to hand it the turn. only_group restricts the op to that group.
#include "backends/common/KernelLowering.h"

namespace tessera::backends {

namespace {

// The consumers' named barrier (barrier 0 is every thread's), then one per consumer group for its turn.
constexpr int kConsumerBarrier = 1;
constexpr int kFirstTurnBarrier = 2;
constexpr int kNamedBarriers = 16;

}  // namespace

void KernelLowering::lowerWarpSpecialize(const ir::Op& op) {
  if (role_ != WarpRole::All) fail(op, "cannot be nested in another warp_specialize");
  const int64_t consumers = int64_t{opts_.numWarps} * warpSize_;
  llvm::Value* tid = hooks_.threadId(b_);
  llvm::Value* isProducer = b_.CreateICmpUGE(tid, b_.getInt32(static_cast<uint32_t>(consumers)), "producer");
  auto inRole = [&](WarpRole role, const ir::Block& region) {
    role_ = role;
    lowerRegion(region);  // the regions yield nothing
    role_ = WarpRole::All;
  };
  predicated(isProducer, [&]() -> llvm::Value* {
    hooks_.setMaxRegisters(b_, /*increase=*/false, op.intAttr("producer_registers"));
    predicated(b_.CreateICmpEQ(tid, b_.getInt32(static_cast<uint32_t>(consumers))), [&]() -> llvm::Value* {
      inRole(WarpRole::Producer, *op.region(0));
      return nullptr;
    }, nullptr);
    return nullptr;
  }, nullptr);
  predicated(b_.CreateNot(isProducer), [&]() -> llvm::Value* {
    hooks_.setMaxRegisters(b_, /*increase=*/true, op.intAttr("consumer_registers"));
    inRole(WarpRole::Consumers, *op.region(1));
    return nullptr;
  }, nullptr);
}

void KernelLowering::lowerTurn(const ir::Op& op) {
  if (role_ != WarpRole::Consumers) fail(op, "must be in a warp_specialize's consumer region");
  const int64_t groups = op.intAttr("groups");
  if (opts_.numWarps % groups || kFirstTurnBarrier + groups > kNamedBarriers)
    fail(op, "cannot split " + std::to_string(opts_.numWarps) + " consumer warps into " + std::to_string(groups) +
                 " groups of whole warps, each with its own barrier (" +
                 std::to_string(kNamedBarriers - kFirstTurnBarrier) + " at most)");
  const int64_t groupThreads = int64_t{opts_.numWarps} / groups * warpSize_;
  const bool wait = op.is(ir::OpKind::TurnWait);
  // The barrier of the group taking its turn: this group's own when it waits, the next one's when it passes.
  auto turnBarrier = [&](llvm::Value* group) {
    llvm::Value* taker = wait ? group : b_.CreateURem(b_.CreateAdd(group, b_.getInt32(1)),
                                                      b_.getInt32(static_cast<uint32_t>(groups)));
    return b_.CreateAdd(taker, b_.getInt32(kFirstTurnBarrier));
  };
  auto emit = [&](llvm::Value* group) -> llvm::Value* {
    try {
      if (wait) hooks_.namedBarrier(b_, turnBarrier(group), 2 * groupThreads);
      else hooks_.namedBarrierArrive(b_, turnBarrier(group), 2 * groupThreads);
    } catch (const Error& e) {
      fail(op, e.message());
    }
    return nullptr;
  };
  llvm::Value* group = b_.CreateUDiv(hooks_.threadId(b_), b_.getInt32(static_cast<uint32_t>(groupThreads)), "group");
  if (!op.hasAttr("only_group")) {
    emit(group);
    return;
  }
  llvm::Value* only = b_.getInt32(static_cast<uint32_t>(op.intAttr("only_group")));
  predicated(b_.CreateICmpEQ(group, only), [&] { return emit(only); }, nullptr);
}

void KernelLowering::barrier() {
  switch (role_) {
    case WarpRole::All: hooks_.barrier(b_); return;
    case WarpRole::Consumers:
      hooks_.namedBarrier(b_, b_.getInt32(kConsumerBarrier), int64_t{opts_.numWarps} * warpSize_);
      return;
    case WarpRole::Producer:
      throw Error("a barrier in a warp_specialize producer region, which one thread runs");
  }
}

llvm::Value* KernelLowering::issuingThread() {
  if (role_ == WarpRole::Producer) return b_.getTrue();
  return b_.CreateICmpEQ(hooks_.threadId(b_), b_.getInt32(0));
}

}  // namespace tessera::backends
