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
#include "backends/common/KernelLowering.h"

namespace tessera::backends {

namespace {

// The consumers' named barrier (barrier 0 is every thread's).
constexpr int kConsumerBarrier = 1;

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

void KernelLowering::barrier() {
  switch (role_) {
    case WarpRole::All: hooks_.barrier(b_); return;
    case WarpRole::Consumers: hooks_.namedBarrier(b_, kConsumerBarrier, int64_t{opts_.numWarps} * warpSize_); return;
    case WarpRole::Producer:
      throw Error("a barrier in a warp_specialize producer region, which one thread runs");
  }
}

llvm::Value* KernelLowering::issuingThread() {
  if (role_ == WarpRole::Producer) return b_.getTrue();
  return b_.CreateICmpEQ(hooks_.threadId(b_), b_.getInt32(0));
}

}  // namespace tessera::backends
