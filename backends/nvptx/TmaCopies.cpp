// NVPTXHooks' TMA copies and mbarriers (sm_90): mbarrier.init through its LLVM intrinsic, and the inline asm of
// InlineAsmTable.h for what LLVM 19 has no intrinsic for: fence.proxy.async, mbarrier.arrive.expect_tx,
// cp.async.bulk.tensor and mbarrier.try_wait.parity; and warp specialization's arrivals, named barriers and
// setmaxnreg, through their intrinsics. The asm takes shared addresses as 32-bit integers (the shared
// window is 32-bit), and only strings of the table, which the emulator (jit/sim) implements by name.
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "backends/nvptx/NVPTXHooks.h"
#include "backends/nvptx/TableAsm.h"
#include "ir/Error.h"

namespace tessera::backends::nvptx {

namespace {

// A shared-memory pointer as the 32-bit shared address the asm takes.
llvm::Value* sharedAddress(IRBuilder& b, llvm::Value* sharedPtr) { return b.CreatePtrToInt(sharedPtr, b.getInt32Ty()); }

}  // namespace

void NVPTXHooks::mbarrierInit(IRBuilder& b, llvm::Value* barrier, int64_t count) {
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_mbarrier_init_shared, {},
                    {barrier, b.getInt32(static_cast<uint32_t>(count))});
}

void NVPTXHooks::fenceMbarrierInit(IRBuilder& b) {
  callTableAsm(b, "fence.proxy.async.shared::cta", b.getVoidTy(), {});
}

void NVPTXHooks::mbarrierArriveExpectTx(IRBuilder& b, llvm::Value* barrier, int64_t bytes) {
  callTableAsm(b, "mbarrier.arrive.expect_tx", b.getVoidTy(),
               {sharedAddress(b, barrier), b.getInt32(static_cast<uint32_t>(bytes))});
}

void NVPTXHooks::tensorCopyToShared(IRBuilder& b, llvm::Value* sharedDst, llvm::Value* tensorMap,
                                    const std::vector<llvm::Value*>& coordinates, llvm::Value* barrier) {
  if (coordinates.empty() || coordinates.size() > 5)
    throw Error("cp.async.bulk.tensor copies boxes of 1 to 5 dimensions, not " + std::to_string(coordinates.size()));
  std::vector<llvm::Value*> args = {sharedAddress(b, sharedDst), tensorMap};
  args.insert(args.end(), coordinates.begin(), coordinates.end());
  args.push_back(sharedAddress(b, barrier));
  callTableAsm(b, "cp.async.bulk.tensor." + std::to_string(coordinates.size()) + "d", b.getVoidTy(), args);
}

void NVPTXHooks::fenceSharedForAsyncProxy(IRBuilder& b) {
  callTableAsm(b, "fence.proxy.async.shared::cta", b.getVoidTy(), {});
}

void NVPTXHooks::tensorStoreFromShared(IRBuilder& b, llvm::Value* sharedSrc, llvm::Value* tensorMap,
                                       const std::vector<llvm::Value*>& coordinates) {
  if (coordinates.empty() || coordinates.size() > 5)
    throw Error("cp.async.bulk.tensor stores boxes of 1 to 5 dimensions, not " + std::to_string(coordinates.size()));
  std::vector<llvm::Value*> args = {tensorMap};
  args.insert(args.end(), coordinates.begin(), coordinates.end());
  args.push_back(sharedAddress(b, sharedSrc));
  callTableAsm(b, "cp.async.bulk.tensor.store." + std::to_string(coordinates.size()) + "d", b.getVoidTy(), args);
}

void NVPTXHooks::waitBulkStoresRead(IRBuilder& b) {
  callTableAsm(b, "cp.async.bulk.commit_group", b.getVoidTy(), {});
  callTableAsm(b, "cp.async.bulk.wait_group.read.0", b.getVoidTy(), {});
}

// try_wait suspends the thread for a while when the phase is not complete yet; the loop asks again until it is.
void NVPTXHooks::mbarrierWaitParity(IRBuilder& b, llvm::Value* barrier, llvm::Value* parity) {
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* wait = llvm::BasicBlock::Create(b.getContext(), "mbarrier.wait", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b.getContext(), "mbarrier.done", f);
  llvm::Value* address = sharedAddress(b, barrier);
  b.CreateBr(wait);
  b.SetInsertPoint(wait);
  llvm::Value* completed = callTableAsm(b, "mbarrier.try_wait.parity", b.getInt32Ty(), {address, parity});
  b.CreateCondBr(b.CreateICmpNE(completed, b.getInt32(0)), done, wait);
  b.SetInsertPoint(done);
}

void NVPTXHooks::mbarrierArrive(IRBuilder& b, llvm::Value* barrier) {
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_mbarrier_arrive_shared, {}, {barrier});
}

namespace {

// A named barrier's id (1 to 15 where it is a constant) and count (whole warps), or the reason they are not.
void checkNamedBarrier(const char* instruction, llvm::Value* id, int64_t threads, int64_t warpSize) {
  const auto* constant = llvm::dyn_cast<llvm::ConstantInt>(id);
  const bool badId = constant && (constant->getZExtValue() < 1 || constant->getZExtValue() > 15);
  if (badId || threads <= 0 || threads % warpSize)
    throw Error(std::string(instruction) + " " + (constant ? std::to_string(constant->getZExtValue()) : "%id") +
                ", " + std::to_string(threads) + ": a named barrier is 1 to 15 and counts whole warps");
}

}  // namespace

void NVPTXHooks::namedBarrier(IRBuilder& b, llvm::Value* id, int64_t threads) {
  checkNamedBarrier("bar.sync", id, threads, warpSize());
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier_sync_cnt, {}, {id, b.getInt32(static_cast<uint32_t>(threads))});
}

// LLVM 19 has no intrinsic for bar.arrive: the table's inline asm (InlineAsmTable.h).
void NVPTXHooks::namedBarrierArrive(IRBuilder& b, llvm::Value* id, int64_t threads) {
  checkNamedBarrier("bar.arrive", id, threads, warpSize());
  callTableAsm(b, "bar.arrive", b.getVoidTy(), {id, b.getInt32(static_cast<uint32_t>(threads))});
}

void NVPTXHooks::setMaxRegisters(IRBuilder& b, bool increase, int64_t registers) {
  if (!asyncDots_) throw Error("setmaxnreg needs sm_90a (warp specialization)");
  b.CreateIntrinsic(increase ? llvm::Intrinsic::nvvm_setmaxnreg_inc_sync_aligned_u32
                             : llvm::Intrinsic::nvvm_setmaxnreg_dec_sync_aligned_u32,
                    {}, {b.getInt32(static_cast<uint32_t>(registers))});
}

}  // namespace tessera::backends::nvptx
