#include "backends/amdgpu/AMDGPUHooks.h"

#include <llvm/IR/IntrinsicsAMDGPU.h>

#include "backends/amdgpu/AMDGPUMath.h"
#include "backends/amdgpu/PrintfBuffer.h"
#include "ir/Error.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::backends::amdgpu {

using ir::OpKind;

void AMDGPUHooks::configureKernel(llvm::Function& kernel, int numWarps) {
  kernel.setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
  // The launch always uses numWarps * 64 work-items in x; telling the backend lets it size registers for it.
  kernel.addFnAttr("amdgpu-flat-work-group-size", "1," + std::to_string(numWarps * warpSize()));
  kernel.addFnAttr("uniform-work-group-size", "true");
  kernel.addFnAttr(llvm::Attribute::NoUnwind);
}

void AMDGPUHooks::declareDescriptorParameter(llvm::Function& kernel, unsigned argNo, int64_t bytes, int64_t align) {
  llvm::LLVMContext& ctx = kernel.getContext();
  llvm::Argument* a = kernel.getArg(argNo);
  a->addAttr(llvm::Attribute::getWithByRefType(ctx, llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx), bytes)));
  a->addAttr(llvm::Attribute::getWithAlignment(ctx, llvm::Align(align)));
}

llvm::Value* AMDGPUHooks::threadId(IRBuilder& b) {
  return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workitem_id_x, {}, {});
}

llvm::Value* AMDGPUHooks::programId(IRBuilder& b, int axis) {
  static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::amdgcn_workgroup_id_x,
                                            llvm::Intrinsic::amdgcn_workgroup_id_y,
                                            llvm::Intrinsic::amdgcn_workgroup_id_z};
  return b.CreateIntrinsic(ids[axis], {}, {});
}

// HSA dispatch packets give the grid in work-items (u32 grid_size_{x,y,z} at byte 12) and the workgroup size
// (u16 workgroup_size_{x,y,z} at byte 4); the number of programs is their rounded-up quotient.
llvm::Value* AMDGPUHooks::numPrograms(IRBuilder& b, int axis) {
  llvm::Value* packet = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_dispatch_ptr, {}, {});
  auto field = [&](int offset, llvm::Type* ty) -> llvm::Value* {
    llvm::Value* p = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), packet, static_cast<uint64_t>(offset));
    llvm::LoadInst* load = b.CreateAlignedLoad(ty, p, llvm::Align(ty->getPrimitiveSizeInBits() / 8));
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
    return b.CreateZExt(load, b.getInt32Ty());
  };
  llvm::Value* grid = field(12 + 4 * axis, b.getInt32Ty());
  llvm::Value* group = field(4 + 2 * axis, b.getInt16Ty());
  return b.CreateUDiv(b.CreateAdd(grid, b.CreateSub(group, b.getInt32(1))), group);
}

llvm::Value* AMDGPUHooks::laneId(IRBuilder& b) {
  llvm::Value* lo = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {}, {b.getInt32(-1), b.getInt32(0)});
  return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_hi, {}, {b.getInt32(-1), lo});
}

// ds_bpermute reads the value of the lane whose byte address (lane * 4) this lane supplies.
llvm::Value* AMDGPUHooks::shuffleXorI32(IRBuilder& b, llvm::Value* v, int laneMask) {
  return shuffleIdxI32(b, v, b.CreateXor(laneId(b), b.getInt32(static_cast<uint32_t>(laneMask))));
}

llvm::Value* AMDGPUHooks::shuffleIdxI32(IRBuilder& b, llvm::Value* v, llvm::Value* lane) {
  return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_bpermute, {}, {b.CreateShl(lane, b.getInt32(2)), v});
}

// s_barrier alone does not order memory: the workgroup-scope release/acquire fences make LDS writes before the
// barrier visible to reads after it (they become s_waitcnt lgkmcnt(0) around s_barrier).
void AMDGPUHooks::barrier(IRBuilder& b) {
  llvm::SyncScope::ID workgroup = b.getContext().getOrInsertSyncScopeID("workgroup");
  b.CreateFence(llvm::AtomicOrdering::Release, workgroup);
  b.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, {}, {});
  b.CreateFence(llvm::AtomicOrdering::Acquire, workgroup);
}

llvm::Value* AMDGPUHooks::sharedMemoryBase(IRBuilder& b) {
  llvm::Module& m = *b.GetInsertBlock()->getModule();
  if (llvm::GlobalVariable* g = m.getNamedGlobal(kSharedMemorySymbol)) return g;
  auto* ty = llvm::ArrayType::get(b.getInt8Ty(), 0);
  auto* g = new llvm::GlobalVariable(m, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr, kSharedMemorySymbol,
                                     nullptr, llvm::GlobalValue::NotThreadLocal, kLdsAddrSpace);
  g->setAlignment(llvm::Align(transforms::kSharedAlignment));  // scratch offsets are multiples of it
  return g;
}

llvm::Value* AMDGPUHooks::unaryMath(IRBuilder& b, OpKind op, llvm::Value* x, bool fast) {
  return amdgpu::unaryMath(b, op, x, fast);
}

llvm::Value* AMDGPUHooks::fmod(IRBuilder& b, llvm::Value* x, llvm::Value* y) { return exactFmod(b, x, y); }

// Through the runtime's printf buffer (PrintfBuffer.h): the formats travel in the code object, the values in
// records the runtime prints on the host when the dispatch completes.
void AMDGPUHooks::print(IRBuilder& b, const std::string& format, const std::vector<llvm::Value*>& args) {
  unsigned id = registerPrintfFormat(*b.GetInsertBlock()->getModule(), format, args);
  writePrintfRecord(b, printfBufferPointer(b), id, args);
}

// The failing thread records the message through the printf buffer and traps (s_trap), which aborts the
// dispatch as HIP's own device assert does. The text is part of the format; only the ids are arguments.
void AMDGPUHooks::assertFail(IRBuilder& b, const std::string& message, const std::string& file, unsigned line,
                             const std::string& function) {
  auto literal = [](const std::string& text) {
    std::string s;
    for (char c : text) s += c == '%' ? "%%" : std::string(1, c);
    return s;
  };
  std::string format = literal(file) + ":" + std::to_string(line) + ": " + literal(function) +
                       ": block [%u,%u,%u], thread [%u]: Assertion `" + literal(message) + "` failed.\n";
  print(b, format, {programId(b, 0), programId(b, 1), programId(b, 2), threadId(b)});
  b.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
}

llvm::SyncScope::ID AMDGPUHooks::atomicScope(llvm::LLVMContext& ctx, const std::string& scope) {
  if (scope == "sys") return llvm::SyncScope::System;
  if (scope == "gpu") return ctx.getOrInsertSyncScopeID("agent");
  if (scope == "cta") return ctx.getOrInsertSyncScopeID("workgroup");
  throw Error("unknown atomic scope '" + scope + "' (expected cta, gpu or sys)");
}

}  // namespace tessera::backends::amdgpu
