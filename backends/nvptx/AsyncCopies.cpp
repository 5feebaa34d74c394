// NVPTXHooks' asynchronous copies: cp.async (sm_80+) with a source size, so masked-off copies write zeros without
// reading global memory, and its commit/wait groups. 16-byte copies bypass L1 (.cg), smaller ones may not (.ca).
// Narrower copies go through registers in rounds.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "backends/nvptx/NVPTXHooks.h"

namespace tessera::backends::nvptx {

namespace {
// One f16 operand's K step at 128x128x64 with 4 warps, at 2-byte alignment: the loads of one round stay in flight
// together, and a round's worth beside 128 accumulators still fits 255 registers (247 on sm_90a, 253 on sm_80).
constexpr int64_t kCopyRoundRegisters = 64;
}  // namespace

bool NVPTXHooks::asyncCopy(IRBuilder& b, llvm::Value* sharedDst, llvm::Value* globalSrc, int64_t bytes,
                           llvm::Value* pred) {
  if (!hasAsyncCopy(bytes)) return false;
  const llvm::Intrinsic::ID id = bytes == 16 ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
                                 : bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
                                              : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
  llvm::Value* sourceBytes = b.CreateSelect(pred, b.getInt32(static_cast<uint32_t>(bytes)), b.getInt32(0));
  b.CreateIntrinsic(id, {}, {sharedDst, globalSrc, sourceBytes});
  return true;
}

// ptxas issues every load of a K step's copies before their stores unless something orders them: at 2-byte
// alignment, 128x128x64 with 4 warps, 128 loads in flight beside the 128 accumulators spilled. It issues no load
// after bar.warp.sync before the accesses ahead of it.
int64_t NVPTXHooks::copyRoundRegisters() const { return kCopyRoundRegisters; }

void NVPTXHooks::endCopyRound(IRBuilder& b) {
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {b.getInt32(-1)});
}

void NVPTXHooks::asyncCommitGroup(IRBuilder& b) {
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
}

void NVPTXHooks::asyncWait(IRBuilder& b, int64_t pending) {
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {b.getInt32(static_cast<uint32_t>(pending))});
}

}  // namespace tessera::backends::nvptx
