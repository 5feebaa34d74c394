// AMDGPU operations as runtime calls: workitem and workgroup ids, the dispatch packet and implicit arguments,
// mbcnt (the lane id), ds_bpermute, s_barrier (its ordering fences dropped: the runtime's barrier orders
// memory) and MFMA.
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>

#include "jit/sim/RewriteContext.h"

namespace tessera::sim {

namespace {

using ID = llvm::Intrinsic::ID;
namespace I = llvm::Intrinsic;

struct MfmaIntrinsic {
  ID id;
  MmaKind kind;
  MatrixRegisters registers;  // 32-bit registers per lane of A, B and C (AMD ISA, v_mfma operands)
};
constexpr MfmaIntrinsic kMfmaIntrinsics[] = {
    {I::amdgcn_mfma_f32_16x16x16f16, kMfmaF32_16x16x16F16, {2, 2, 4}},
    {I::amdgcn_mfma_f32_16x16x16bf16_1k, kMfmaF32_16x16x16BF16, {2, 2, 4}},
    {I::amdgcn_mfma_f32_32x32x8f16, kMfmaF32_32x32x8F16, {2, 2, 16}},
    {I::amdgcn_mfma_f32_32x32x8bf16_1k, kMfmaF32_32x32x8BF16, {2, 2, 16}},
    {I::amdgcn_mfma_i32_16x16x32_i8, kMfmaI32_16x16x32I8, {2, 2, 4}},
    {I::amdgcn_mfma_i32_16x16x16i8, kMfmaI32_16x16x16I8, {1, 1, 4}},
};

llvm::Value* mfma(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, const MfmaIntrinsic& m) {
  // cbsz, abid and blgp broadcast blocks and permute B's lanes; the lowering never sets them.
  for (unsigned i = 3; i < 6; ++i)
    if (!llvm::cast<llvm::ConstantInt>(call.getArgOperand(i))->isZero())
      rc.fail(call, "MFMA with cbsz/abid/blgp modifiers is not modelled");
  return matrixMultiply(rc, b, call, m.kind, m.registers, 3);
}

// mbcnt_lo/hi(mask, acc) = acc + the number of set bits of `mask` (the low/high half of a wave64 mask) that
// belong to lanes below this one.
llvm::Value* mbcnt(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, bool high) {
  llvm::Value* lane = b.CreateZExt(rc.call(b, TSIM_FUNCTION(__tsim_lane_id), {}), b.getInt64Ty());
  llvm::Value* below = b.CreateSub(b.CreateShl(b.getInt64(1), lane), b.getInt64(1));
  if (high) below = b.CreateLShr(below, b.getInt64(32));
  llvm::Value* bits = b.CreateAnd(call.getArgOperand(0), b.CreateTrunc(below, b.getInt32Ty()));
  return b.CreateAdd(call.getArgOperand(1), b.CreateUnaryIntrinsic(I::ctpop, bits));
}

// The fence the lowering puts on one side of s_barrier, when nothing that touches memory separates them.
void dropBarrierFence(llvm::Instruction& barrier, bool after) {
  for (llvm::Instruction* i = after ? barrier.getNextNode() : barrier.getPrevNode(); i;
       i = after ? i->getNextNode() : i->getPrevNode()) {
    if (llvm::isa<llvm::FenceInst>(i)) {
      i->eraseFromParent();
      return;
    }
    if (i->mayReadOrWriteMemory()) return;
  }
}

}  // namespace

llvm::Value* amdgpuOperation(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call) {
  const ID id = call.getIntrinsicID();
  auto runtimePointer = [&](RuntimeFunction f) { return b.CreateAddrSpaceCast(rc.call(b, f, {}), call.getType()); };
  switch (id) {
    case I::amdgcn_workitem_id_x: return rc.call(b, TSIM_FUNCTION(__tsim_thread_id), {b.getInt32(0)});
    case I::amdgcn_workitem_id_y: return rc.call(b, TSIM_FUNCTION(__tsim_thread_id), {b.getInt32(1)});
    case I::amdgcn_workitem_id_z: return rc.call(b, TSIM_FUNCTION(__tsim_thread_id), {b.getInt32(2)});
    case I::amdgcn_workgroup_id_x: return rc.call(b, TSIM_FUNCTION(__tsim_program_id), {b.getInt32(0)});
    case I::amdgcn_workgroup_id_y: return rc.call(b, TSIM_FUNCTION(__tsim_program_id), {b.getInt32(1)});
    case I::amdgcn_workgroup_id_z: return rc.call(b, TSIM_FUNCTION(__tsim_program_id), {b.getInt32(2)});
    case I::amdgcn_dispatch_ptr: return runtimePointer(TSIM_FUNCTION(__tsim_dispatch_ptr));
    case I::amdgcn_implicitarg_ptr: return runtimePointer(TSIM_FUNCTION(__tsim_implicitarg_ptr));
    case I::amdgcn_mbcnt_lo: return mbcnt(rc, b, call, false);
    case I::amdgcn_mbcnt_hi: return mbcnt(rc, b, call, true);
    case I::amdgcn_ds_bpermute:
      return rc.call(b, TSIM_FUNCTION(__tsim_bpermute),
                     {call.getArgOperand(0), call.getArgOperand(1), rc.site(call, SiteKind::Bpermute)});
    case I::amdgcn_s_barrier:
      dropBarrierFence(call, false);
      dropBarrierFence(call, true);
      return rc.call(b, TSIM_FUNCTION(__tsim_barrier), {rc.site(call, SiteKind::Barrier)});
    default: break;
  }
  for (const MfmaIntrinsic& m : kMfmaIntrinsics)
    if (m.id == id) return mfma(rc, b, call, m);
  return nullptr;
}

}  // namespace tessera::sim
