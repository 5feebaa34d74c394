// NVPTXHooks' asynchronous copies: cp.async (sm_80+) with a source size, so masked-off copies write zeros without
// reading global memory, and its commit/wait groups. 16-byte copies bypass L1 (.cg), smaller ones may not (.ca).
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "backends/nvptx/NVPTXHooks.h"

namespace tessera::backends::nvptx {

bool NVPTXHooks::asyncCopy(IRBuilder& b, llvm::Value* sharedDst, llvm::Value* globalSrc, int64_t bytes,
                           llvm::Value* pred) {
  llvm::Intrinsic::ID id;
  switch (bytes) {
    case 16: id = llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s; break;
    case 8: id = llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s; break;
    case 4: id = llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s; break;
    default: return false;
  }
  llvm::Value* sourceBytes = b.CreateSelect(pred, b.getInt32(static_cast<uint32_t>(bytes)), b.getInt32(0));
  b.CreateIntrinsic(id, {}, {sharedDst, globalSrc, sourceBytes});
  return true;
}

void NVPTXHooks::asyncCommitGroup(IRBuilder& b) {
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
}

void NVPTXHooks::asyncWait(IRBuilder& b, int64_t pending) {
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {b.getInt32(static_cast<uint32_t>(pending))});
}

}  // namespace tessera::backends::nvptx
