// Every access to memory the runtime checks and counts (global and shared memory, and generic pointers to them)
// becomes one runtime call per instruction, a vector access included, with the instruction's site. Accesses
// whose every possible target is a stack slot of the thread or a constant global stay native, as do reads of
// the AMDGPU dispatch packet and implicit arguments (runtime-provided constants, scalar loads on the hardware).
// Atomic loads and stores become read-modify-writes (or 0, exchange): SimABI.h has no separate atomic access.
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>

#include "jit/sim/RewriteContext.h"

namespace tessera::sim {

namespace {

// The dispatch packet or the implicit arguments, before or after their intrinsic became a runtime call.
bool isRuntimeConstantBlock(const llvm::Value* v) {
  const auto* call = llvm::dyn_cast<llvm::CallInst>(v);
  const llvm::Function* callee = call ? call->getCalledFunction() : nullptr;
  if (!callee) return false;
  const llvm::StringRef name = callee->getName();
  return callee->getIntrinsicID() == llvm::Intrinsic::amdgcn_dispatch_ptr ||
         callee->getIntrinsicID() == llvm::Intrinsic::amdgcn_implicitarg_ptr || name == "__tsim_dispatch_ptr" ||
         name == "__tsim_implicitarg_ptr";
}

// Whether every object `ptr` may point into is one the host reads and writes itself (see above).
bool isLocalMemory(const llvm::Value* ptr) {
  llvm::SmallVector<const llvm::Value*, 4> objects;
  llvm::getUnderlyingObjects(ptr, objects, nullptr, 0);
  for (const llvm::Value* object : objects) {
    const auto* global = llvm::dyn_cast<llvm::GlobalVariable>(object);
    if (!llvm::isa<llvm::AllocaInst>(object) && !(global && global->isConstant()) && !isRuntimeConstantBlock(object))
      return false;
  }
  return !objects.empty();
}

AddressSpace spaceOf(RewriteContext& rc, const llvm::Instruction& at, unsigned space) {
  switch (space) {
    case 0: return AddressSpace::Generic;
    case 1: return AddressSpace::Global;
    case 3: return AddressSpace::Shared;
    case 4: return AddressSpace::Constant;
    default: rc.fail(at, "a memory access in address space " + std::to_string(space) + " is not modelled");
  }
}

// The access width on the GPU, which must be the host's too (32-bit shared/private pointers would not be).
uint32_t accessBytes(RewriteContext& rc, const llvm::Instruction& at, llvm::Type* type) {
  const uint64_t gpu = rc.gpuLayout.getTypeStoreSize(type), host = rc.module.getDataLayout().getTypeStoreSize(type);
  if (gpu != host)
    rc.fail(at, "a " + std::to_string(gpu) + "-byte value in memory is " + std::to_string(host) +
                    " bytes on the host (32-bit pointers to shared or private memory are not modelled in memory)");
  return static_cast<uint32_t>(gpu);
}

// A value of at most 8 bytes as the raw bits SimABI.h's atomics take (zero extended), and back.
llvm::Value* toRaw(llvm::IRBuilder<>& b, llvm::Value* v) {
  llvm::Type* t = v->getType();
  if (t->isPointerTy()) return b.CreatePtrToInt(v, b.getInt64Ty());
  if (!t->isIntegerTy()) v = b.CreateBitCast(v, b.getIntNTy(static_cast<unsigned>(t->getPrimitiveSizeInBits())));
  return b.CreateZExt(v, b.getInt64Ty());
}
llvm::Value* fromRaw(llvm::IRBuilder<>& b, llvm::Value* raw, llvm::Type* t) {
  if (t->isPointerTy()) return b.CreateIntToPtr(raw, t);
  llvm::Value* bits = b.CreateTrunc(raw, b.getIntNTy(static_cast<unsigned>(t->getPrimitiveSizeInBits())));
  return t->isIntegerTy() ? bits : b.CreateBitCast(bits, t);
}

void checkAtomicType(RewriteContext& rc, const llvm::Instruction& at, llvm::Type* t) {
  const bool scalar = t->isIntegerTy() || t->isPointerTy() || t->isHalfTy() || t->isFloatTy() || t->isDoubleTy();
  const uint64_t bits = scalar ? rc.gpuLayout.getTypeSizeInBits(t) : 0;
  if (!scalar || bits < 8 || bits > 64 || bits % 8 != 0) {
    std::string name;
    llvm::raw_string_ostream os(name);
    t->print(os);
    rc.fail(at, "an atomic on " + os.str() + " is not modelled (SimABI.h: 1..8-byte integers, f16, f32, f64)");
  }
}

AtomicOp atomicOp(RewriteContext& rc, const llvm::AtomicRMWInst& rmw) {
  using B = llvm::AtomicRMWInst;
  switch (rmw.getOperation()) {
    case B::Xchg: return kAtomicXchg;
    case B::Add: return kAtomicAdd;
    case B::Sub: return kAtomicSub;
    case B::And: return kAtomicAnd;
    case B::Or: return kAtomicOr;
    case B::Xor: return kAtomicXor;
    case B::Max: return kAtomicMax;
    case B::Min: return kAtomicMin;
    case B::UMax: return kAtomicUMax;
    case B::UMin: return kAtomicUMin;
    case B::FAdd: return kAtomicFAdd;
    case B::FMax: return kAtomicFMax;
    case B::FMin: return kAtomicFMin;
    default: rc.fail(rmw, "atomicrmw " + B::getOperationName(rmw.getOperation()).str() + " is not in SimABI.h");
  }
}

llvm::Value* atomicRmw(RewriteContext& rc, llvm::IRBuilder<>& b, const llvm::Instruction& at, AtomicOp op,
                       llvm::Value* ptr, llvm::Value* value, unsigned space, llvm::Align align) {
  checkAtomicType(rc, at, value->getType());
  const uint32_t bytes = accessBytes(rc, at, value->getType());
  llvm::ConstantInt* site =
      rc.site(at, SiteKind::AtomicRMW, spaceOf(rc, at, space), bytes, static_cast<uint32_t>(align.value()));
  llvm::Value* old = rc.call(b, TSIM_FUNCTION(__tsim_atomic_rmw),
                             {b.getInt32(op), hostAddress(b, ptr), toRaw(b, value), b.getInt32(bytes), site});
  return fromRaw(b, old, value->getType());
}

void rewriteLoad(RewriteContext& rc, llvm::LoadInst& load) {
  llvm::IRBuilder<> b(&load);
  llvm::Type* t = load.getType();
  llvm::Value* result;
  if (load.isAtomic()) {
    result = atomicRmw(rc, b, load, kAtomicOr, load.getPointerOperand(), llvm::Constant::getNullValue(t),
                       load.getPointerAddressSpace(), load.getAlign());
  } else {
    const uint32_t bytes = accessBytes(rc, load, t);
    llvm::ConstantInt* site = rc.site(load, SiteKind::Load, spaceOf(rc, load, load.getPointerAddressSpace()), bytes,
                                      static_cast<uint32_t>(load.getAlign().value()));
    llvm::AllocaInst* slot = rc.scratch(*load.getFunction(), t);
    rc.call(b, TSIM_FUNCTION(__tsim_load), {slot, hostAddress(b, load.getPointerOperand()), b.getInt32(bytes), site});
    result = b.CreateLoad(t, slot);
  }
  result->takeName(&load);
  load.replaceAllUsesWith(result);
  load.eraseFromParent();
}

void rewriteStore(RewriteContext& rc, llvm::StoreInst& store) {
  llvm::IRBuilder<> b(&store);
  llvm::Value* value = store.getValueOperand();
  if (store.isAtomic()) {
    atomicRmw(rc, b, store, kAtomicXchg, store.getPointerOperand(), value, store.getPointerAddressSpace(),
              store.getAlign());
  } else {
    const uint32_t bytes = accessBytes(rc, store, value->getType());
    llvm::ConstantInt* site = rc.site(store, SiteKind::Store, spaceOf(rc, store, store.getPointerAddressSpace()), bytes,
                                      static_cast<uint32_t>(store.getAlign().value()));
    llvm::AllocaInst* slot = rc.scratch(*store.getFunction(), value->getType());
    b.CreateStore(value, slot);
    rc.call(b, TSIM_FUNCTION(__tsim_store), {hostAddress(b, store.getPointerOperand()), slot, b.getInt32(bytes), site});
  }
  store.eraseFromParent();
}

void rewriteCmpXchg(RewriteContext& rc, llvm::AtomicCmpXchgInst& cas) {
  llvm::IRBuilder<> b(&cas);
  llvm::Type* t = cas.getCompareOperand()->getType();
  checkAtomicType(rc, cas, t);
  const uint32_t bytes = accessBytes(rc, cas, t);
  llvm::ConstantInt* site = rc.site(cas, SiteKind::AtomicCAS, spaceOf(rc, cas, cas.getPointerAddressSpace()), bytes,
                                    static_cast<uint32_t>(cas.getAlign().value()));
  llvm::Value* expected = toRaw(b, cas.getCompareOperand());
  llvm::Value* old = rc.call(b, TSIM_FUNCTION(__tsim_atomic_cas),
                             {hostAddress(b, cas.getPointerOperand()), expected, toRaw(b, cas.getNewValOperand()),
                              b.getInt32(bytes), site});
  llvm::Value* result = b.CreateInsertValue(llvm::PoisonValue::get(cas.getType()), fromRaw(b, old, t), {0});
  result = b.CreateInsertValue(result, b.CreateICmpEQ(old, expected), {1});
  result->takeName(&cas);
  cas.replaceAllUsesWith(result);
  cas.eraseFromParent();
}

}  // namespace

void rewriteMemoryAccess(RewriteContext& rc, llvm::Instruction& inst) {
  if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
    if (!isLocalMemory(load->getPointerOperand())) rewriteLoad(rc, *load);
  } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
    if (!isLocalMemory(store->getPointerOperand())) rewriteStore(rc, *store);
  } else if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&inst)) {
    if (isLocalMemory(rmw->getPointerOperand())) return;
    llvm::IRBuilder<> b(rmw);
    llvm::Value* old = atomicRmw(rc, b, *rmw, atomicOp(rc, *rmw), rmw->getPointerOperand(), rmw->getValOperand(),
                                 rmw->getPointerAddressSpace(), rmw->getAlign());
    old->takeName(rmw);
    rmw->replaceAllUsesWith(old);
    rmw->eraseFromParent();
  } else if (auto* cas = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&inst)) {
    if (!isLocalMemory(cas->getPointerOperand())) rewriteCmpXchg(rc, *cas);
  }
}

bool rewriteMemoryIntrinsic(RewriteContext& rc, llvm::CallInst& call) {
  auto* mem = llvm::dyn_cast<llvm::MemIntrinsic>(&call);
  if (!mem) return false;
  auto* transfer = llvm::dyn_cast<llvm::MemTransferInst>(mem);
  const bool destLocal = isLocalMemory(mem->getRawDest());
  if (destLocal && (!transfer || isLocalMemory(transfer->getRawSource()))) return true;
  llvm::IRBuilder<> b(mem);
  const auto* constantLength = llvm::dyn_cast<llvm::ConstantInt>(mem->getLength());
  const uint32_t bytes = constantLength ? static_cast<uint32_t>(constantLength->getZExtValue()) : 0;
  llvm::Value* length = b.CreateZExtOrTrunc(mem->getLength(), b.getInt64Ty());
  // The site's address space is the checked side's: the destination, or the source when it writes the stack.
  const unsigned space = destLocal ? transfer->getSourceAddressSpace() : mem->getDestAddressSpace();
  const uint32_t align = static_cast<uint32_t>((destLocal ? transfer->getSourceAlign() : mem->getDestAlign())
                                                   .valueOrOne().value());
  if (transfer) {
    llvm::ConstantInt* site = rc.site(*mem, SiteKind::MemCopy, spaceOf(rc, *mem, space), bytes, align);
    rc.call(b, TSIM_FUNCTION(__tsim_memcpy),
            {hostAddress(b, mem->getRawDest()), hostAddress(b, transfer->getRawSource()), length, site});
  } else {
    llvm::ConstantInt* site = rc.site(*mem, SiteKind::MemSet, spaceOf(rc, *mem, space), bytes, align);
    llvm::Value* value = b.CreateZExt(llvm::cast<llvm::MemSetInst>(mem)->getValue(), b.getInt32Ty());
    rc.call(b, TSIM_FUNCTION(__tsim_memset), {hostAddress(b, mem->getRawDest()), value, length, site});
  }
  mem->eraseFromParent();
  return true;
}

}  // namespace tessera::sim
