// warp_specialize {producer_warps, producer_registers, consumer_registers[, consumer_groups = G]} { producer }
// { consumers }. The program's first num_warps warps are the consumers (the warps every layout was planned for),
// or G groups of num_warps warps each running the consumer region side by side (ping-pong-consumers: each group its
// own tiles, its warps numbered from 0 for the layouts); the producer_warps after them are the producers:
//
//   tid >= consumers: setmaxnreg.dec producer_registers; thread `consumers` alone runs the producer region
//   tid <  consumers: setmaxnreg.inc consumer_registers; the consumer region, whose barriers are
//                     bar.sync 1 + group, num_warps * 32 (the producers never arrive at them, and may have exited;
//                     each group has its own)
//
// setmaxnreg is executed by whole warpgroups (.sync.aligned), so it comes before the producers narrow to one
// thread. Both paths meet again before the function's return.
//
// turn_wait / turn_pass {groups = T, sequence = s} (order-consumer-groups, ping-pong-consumers) split the consumer
// threads into T turn groups of consecutive warps; group g's turn in sequence s is barrier 1 + G + s * T + g, of
// two groups' threads: g waits there (bar.sync) and the group before it, g - 1 mod T, arrives (bar.arrive) to hand
// it the turn. only_group restricts the op to that group.
#include "backends/common/KernelLowering.h"

namespace tessera::backends {

namespace {

// The consumers' named barriers (barrier 0 is every thread's): one per consumer group, then the turns'.
constexpr int kFirstConsumerBarrier = 1;
constexpr int kNamedBarriers = 16;

}  // namespace

void KernelLowering::lowerWarpSpecialize(const ir::Op& op) {
  if (role_ != WarpRole::All) fail(op, "cannot be nested in another warp_specialize");
  const int64_t consumers = groupThreads() * consumerGroups_;
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

int64_t KernelLowering::groupThreads() const { return int64_t{opts_.numWarps} * warpSize_; }

llvm::Value* KernelLowering::consumerGroup(const ir::Op& op) {
  if (role_ != WarpRole::Consumers) fail(op, "must be in a warp_specialize's consumer region");
  if (consumerGroups_ == 1) return b_.getInt32(0);
  return b_.CreateUDiv(hooks_.threadId(b_), b_.getInt32(static_cast<uint32_t>(groupThreads())), "consumer.group");
}

void KernelLowering::lowerTurn(const ir::Op& op) {
  if (role_ != WarpRole::Consumers) fail(op, "must be in a warp_specialize's consumer region");
  const int64_t groups = op.intAttr("groups");
  const int64_t sequence = op.hasAttr("sequence") ? op.intAttr("sequence") : 0;
  const int64_t consumerWarps = int64_t{opts_.numWarps} * consumerGroups_;
  const int64_t firstTurnBarrier = kFirstConsumerBarrier + consumerGroups_ + sequence * groups;
  if (consumerWarps % groups || firstTurnBarrier + groups > kNamedBarriers)
    fail(op, "cannot split " + std::to_string(consumerWarps) + " consumer warps into " + std::to_string(groups) +
                 " groups of whole warps, each with its own barrier (" +
                 std::to_string(kNamedBarriers - firstTurnBarrier) + " at most)");
  const int64_t turnThreads = consumerWarps / groups * warpSize_;
  const bool wait = op.is(ir::OpKind::TurnWait);
  // The barrier of the group taking its turn: this group's own when it waits, the next one's when it passes.
  auto turnBarrier = [&](llvm::Value* group) {
    llvm::Value* taker = wait ? group : b_.CreateURem(b_.CreateAdd(group, b_.getInt32(1)),
                                                      b_.getInt32(static_cast<uint32_t>(groups)));
    return b_.CreateAdd(taker, b_.getInt32(static_cast<uint32_t>(firstTurnBarrier)));
  };
  auto emit = [&](llvm::Value* group) -> llvm::Value* {
    try {
      if (wait) hooks_.namedBarrier(b_, turnBarrier(group), 2 * turnThreads);
      else hooks_.namedBarrierArrive(b_, turnBarrier(group), 2 * turnThreads);
    } catch (const Error& e) {
      fail(op, e.message());
    }
    return nullptr;
  };
  llvm::Value* group = b_.CreateUDiv(hooks_.threadId(b_), b_.getInt32(static_cast<uint32_t>(turnThreads)), "group");
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
    case WarpRole::Consumers: {  // the group's own barrier
      llvm::Value* id = b_.getInt32(kFirstConsumerBarrier);
      if (consumerGroups_ > 1)
        id = b_.CreateAdd(id, b_.CreateUDiv(hooks_.threadId(b_), b_.getInt32(static_cast<uint32_t>(groupThreads()))));
      hooks_.namedBarrier(b_, id, groupThreads());
      return;
    }
    case WarpRole::Producer:
      throw Error("a barrier in a warp_specialize producer region, which one thread runs");
  }
}

llvm::Value* KernelLowering::issuingThread() {
  if (role_ == WarpRole::Producer) return b_.getTrue();
  llvm::Value* tid = hooks_.threadId(b_);
  if (role_ == WarpRole::Consumers && consumerGroups_ > 1)  // each group issues its own
    tid = b_.CreateURem(tid, b_.getInt32(static_cast<uint32_t>(groupThreads())));
  return b_.CreateICmpEQ(tid, b_.getInt32(0));
}

}  // namespace tessera::backends
