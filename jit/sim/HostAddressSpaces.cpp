// Shared and private memory on the host. The shared-memory symbol becomes the program's shared buffer, whose
// address the runtime returns per calling thread; shared pointers are then host addresses inside that buffer.
// On the GPU a shared pointer converted to an integer is an offset into the shared window (AMD LDS pointers are
// 32-bit offsets), so those conversions subtract (or add) the buffer's address. Private allocas (AMDGPU's
// addrspace 5) become host allocas seen through an address-space cast, which the host treats as a no-op.
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/ReplaceConstant.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include "ir/Error.h"
#include "jit/sim/RewriteContext.h"

namespace tessera::sim {

namespace {

constexpr unsigned kSharedSpace = static_cast<unsigned>(AddressSpace::Shared);

// __tsim_shared_base() as a shared pointer, called once at the entry of each function that needs it.
class SharedBases {
 public:
  explicit SharedBases(RewriteContext& rc) : rc_(rc) {}
  llvm::Value* of(llvm::Function& f) {
    llvm::Value*& base = bases_[&f];
    if (!base) {
      llvm::IRBuilder<> b(&f.getEntryBlock(), f.getEntryBlock().getFirstInsertionPt());
      llvm::Value* host = rc_.call(b, TSIM_FUNCTION(__tsim_shared_base), {});
      base = b.CreateAddrSpaceCast(host, llvm::PointerType::get(rc_.ctx, kSharedSpace), "tsim.shared");
    }
    return base;
  }

 private:
  RewriteContext& rc_;
  std::map<llvm::Function*, llvm::Value*> bases_;
};

void replaceSharedSymbol(RewriteContext& rc, SharedBases& bases, const char* name) {
  llvm::GlobalVariable* smem = rc.module.getNamedGlobal(name);
  for (const llvm::GlobalVariable& g : rc.module.globals())
    if (g.getAddressSpace() == kSharedSpace && &g != smem)
      throw Error("sim: cannot emulate kernel '" + rc.kernel.getName().str() + "' (" + rc.targetName() +
                  "): shared-memory global '" + g.getName().str() + "' is not the kernel's shared-memory symbol '" +
                  name + "'");
  if (!smem) return;
  llvm::removeFromUsedLists(rc.module, [&](llvm::Constant* c) { return c == smem; });
  llvm::convertUsersOfConstantsToInstructions({smem});
  std::vector<llvm::Use*> uses;
  for (llvm::Use& u : smem->uses()) uses.push_back(&u);
  for (llvm::Use* u : uses) {
    auto* user = llvm::dyn_cast<llvm::Instruction>(u->getUser());
    if (!user)
      throw Error("sim: cannot emulate kernel '" + rc.kernel.getName().str() + "': the shared-memory symbol '" +
                  name + "' is used outside the code of a function");
    u->set(bases.of(*user->getFunction()));
  }
  smem->eraseFromParent();
}

// ptrtoint of a shared pointer: its offset in the buffer; inttoptr to a shared pointer: the buffer plus it.
void rewriteSharedPointerCasts(RewriteContext& rc, SharedBases& bases) {
  std::vector<llvm::CastInst*> casts;
  for (llvm::Function& f : rc.module)
    for (llvm::Instruction& i : llvm::instructions(f)) {
      if (auto* p2i = llvm::dyn_cast<llvm::PtrToIntInst>(&i); p2i && p2i->getPointerAddressSpace() == kSharedSpace)
        casts.push_back(p2i);
      if (auto* i2p = llvm::dyn_cast<llvm::IntToPtrInst>(&i); i2p && i2p->getAddressSpace() == kSharedSpace)
        casts.push_back(i2p);
    }
  for (llvm::CastInst* cast : casts) {
    llvm::IRBuilder<> b(cast);
    llvm::Value* base = bases.of(*cast->getFunction());
    llvm::Type* i64 = b.getInt64Ty();
    llvm::Type* wide = cast->getType()->isVectorTy()
                           ? llvm::VectorType::get(i64, llvm::cast<llvm::VectorType>(cast->getType())->getElementCount())
                           : i64;
    llvm::Value* result;
    if (llvm::isa<llvm::PtrToIntInst>(cast)) {
      llvm::Value* address = b.CreatePtrToInt(cast->getOperand(0), wide);
      llvm::Value* baseAddress = b.CreatePtrToInt(base, i64);
      if (wide->isVectorTy())
        baseAddress = b.CreateVectorSplat(llvm::cast<llvm::VectorType>(wide)->getElementCount(), baseAddress);
      result = b.CreateZExtOrTrunc(b.CreateSub(address, baseAddress), cast->getType(), "tsim.shared.offset");
    } else {
      llvm::Value* offset = b.CreateZExtOrTrunc(cast->getOperand(0), wide);
      result = b.CreateGEP(b.getInt8Ty(), base, offset, "tsim.shared.ptr");
    }
    cast->replaceAllUsesWith(result);
    cast->eraseFromParent();
  }
}

void hostAllocas(RewriteContext& rc) {
  std::vector<llvm::AllocaInst*> allocas;
  for (llvm::Function& f : rc.module)
    for (llvm::Instruction& i : llvm::instructions(f))
      if (auto* a = llvm::dyn_cast<llvm::AllocaInst>(&i); a && a->getAddressSpace() != 0) allocas.push_back(a);
  for (llvm::AllocaInst* a : allocas) {
    llvm::IRBuilder<> b(a);
    llvm::AllocaInst* host = b.CreateAlloca(a->getAllocatedType(), 0u, a->getArraySize(), a->getName() + ".host");
    host->setAlignment(a->getAlign());
    a->replaceAllUsesWith(b.CreateAddrSpaceCast(host, a->getType()));
    a->eraseFromParent();
  }
}

}  // namespace

void rewriteAddressSpaces(RewriteContext& rc, const char* sharedSymbol) {
  SharedBases bases(rc);
  replaceSharedSymbol(rc, bases, sharedSymbol);
  rewriteSharedPointerCasts(rc, bases);
  hostAllocas(rc);
}

}  // namespace tessera::sim
