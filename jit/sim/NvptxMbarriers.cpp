// NVPTX mbarriers and TMA as runtime calls: the LLVM intrinsics of mbarrier.init and mbarrier.arrive, and the
// inline asm of backends/nvptx/InlineAsmTable.h for what LLVM 19 has no intrinsic for (arrive.expect_tx,
// try_wait.parity, cp.async.bulk.tensor and its multicast, fence.proxy.async, and the arrival on another program
// of the cluster's mbarrier). The asm takes shared addresses as 32-bit integers,
// which the rewriting made offsets into the shared buffer (HostAddressSpaces.cpp): here they become host addresses
// again.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "jit/sim/RewriteContext.h"

namespace tessera::sim {

namespace {

namespace I = llvm::Intrinsic;

// A TMA copy; `multicast`: its last operand is the 16-bit mask of the cluster's programs it lands in.
llvm::Value* bulkTensorCopy(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, unsigned rank,
                            bool multicast) {
  std::vector<llvm::Value*> coordinates;
  for (unsigned d = 0; d < rank; ++d) coordinates.push_back(call.getArgOperand(2 + d));
  llvm::Value* array = wordArray(rc, b, coordinates, 0);
  std::vector<llvm::Value*> args = {sharedHostAddress(rc, b, call.getArgOperand(0)),
                                    b.CreateIntToPtr(call.getArgOperand(1), b.getPtrTy()), array, b.getInt32(rank),
                                    sharedHostAddress(rc, b, call.getArgOperand(2 + rank))};
  if (!multicast) {
    args.push_back(rc.site(call, SiteKind::BulkTensorCopy, AddressSpace::Shared));
    return rc.call(b, TSIM_FUNCTION(__tsim_bulk_tensor_copy), args);
  }
  args.push_back(b.CreateZExt(call.getArgOperand(3 + rank), b.getInt32Ty()));
  args.push_back(rc.site(call, SiteKind::BulkTensorCopy, AddressSpace::Shared));
  return rc.call(b, TSIM_FUNCTION(__tsim_bulk_tensor_copy_multicast), args);
}

llvm::Value* bulkTensorStore(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, unsigned rank) {
  std::vector<llvm::Value*> coordinates;
  for (unsigned d = 0; d < rank; ++d) coordinates.push_back(call.getArgOperand(1 + d));
  llvm::Value* array = wordArray(rc, b, coordinates, 0);
  return rc.call(b, TSIM_FUNCTION(__tsim_bulk_tensor_store),
                 {b.CreateIntToPtr(call.getArgOperand(0), b.getPtrTy()), array, b.getInt32(rank),
                  sharedHostAddress(rc, b, call.getArgOperand(1 + rank)),
                  rc.site(call, SiteKind::BulkTensorStore, AddressSpace::Global)});
}

}  // namespace

llvm::Value* nvptxMbarrierOperation(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call) {
  switch (call.getIntrinsicID()) {
    case I::nvvm_mbarrier_init: case I::nvvm_mbarrier_init_shared:
      return rc.call(b, TSIM_FUNCTION(__tsim_mbarrier_init),
                     {hostAddress(b, call.getArgOperand(0)), call.getArgOperand(1), rc.site(call, SiteKind::Mbarrier)});
    case I::nvvm_mbarrier_arrive: case I::nvvm_mbarrier_arrive_shared:
      return rc.call(b, TSIM_FUNCTION(__tsim_mbarrier_arrive),
                     {hostAddress(b, call.getArgOperand(0)), b.getInt32(1), b.getInt32(0),
                      rc.site(call, SiteKind::Mbarrier)});
    default: return nullptr;
  }
}

llvm::Value* nvptxMbarrierInlineAsm(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call,
                                    std::string_view operation) {
  if (operation == "mbarrier.arrive.expect_tx")
    return rc.call(b, TSIM_FUNCTION(__tsim_mbarrier_arrive),
                   {sharedHostAddress(rc, b, call.getArgOperand(0)), b.getInt32(1), call.getArgOperand(1),
                    rc.site(call, SiteKind::Mbarrier)});
  if (operation == "mbarrier.try_wait.parity")
    return rc.call(b, TSIM_FUNCTION(__tsim_mbarrier_try_wait_parity),
                   {sharedHostAddress(rc, b, call.getArgOperand(0)), call.getArgOperand(1),
                    rc.site(call, SiteKind::Mbarrier)});
  // The emulated copies read and write memory from the runtime, in one order with every thread's accesses: there
  // is no second proxy to order against, so the fence is a no-op (the call goes; its void value is never used).
  if (operation == "fence.proxy.async.shared::cta") return b.getTrue();
  if (operation == "mbarrier.arrive.cluster")
    return rc.call(b, TSIM_FUNCTION(__tsim_mbarrier_arrive_cluster),
                   {sharedHostAddress(rc, b, call.getArgOperand(0)), call.getArgOperand(1), b.getInt32(1),
                    rc.site(call, SiteKind::Mbarrier)});
  constexpr std::string_view kBulkTensor = "cp.async.bulk.tensor.", kBulkTensorStore = "cp.async.bulk.tensor.store.",
                             kMulticast = "cp.async.bulk.tensor.multicast.";
  if (operation.starts_with(kBulkTensor) && operation.size() == kBulkTensor.size() + 2)
    return bulkTensorCopy(rc, b, call, static_cast<unsigned>(operation[kBulkTensor.size()] - '0'), false);
  if (operation.starts_with(kMulticast) && operation.size() == kMulticast.size() + 2)
    return bulkTensorCopy(rc, b, call, static_cast<unsigned>(operation[kMulticast.size()] - '0'), true);
  if (operation.starts_with(kBulkTensorStore) && operation.size() == kBulkTensorStore.size() + 2)
    return bulkTensorStore(rc, b, call, static_cast<unsigned>(operation[kBulkTensorStore.size()] - '0'));
  // The emulator stores each box when it is issued (__tsim_bulk_tensor_store): the group is complete at once.
  if (operation == "cp.async.bulk.commit_group" || operation == "cp.async.bulk.wait_group.read.0") return b.getTrue();
  return nullptr;
}

}  // namespace tessera::sim
