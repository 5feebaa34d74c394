// NVPTXHooks::predicatedGlobalStore: a masked store as `@p st.global` (inline asm of InlineAsmTable.h, as LLVM 19
// has no predicated-store intrinsic for NVPTX), the value passed as 16-bit or 32-bit words.
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Module.h>

#include "backends/nvptx/NVPTXHooks.h"
#include "backends/nvptx/TableAsm.h"

namespace tessera::backends::nvptx {

namespace {

// Whether the predicate is computed in `block` (or is a constant or an argument), looking through the i1 `and`s
// that combine masks. A predicate computed earlier, e.g. a row mask computed before the loops that a load and this
// store share, would stay live in a predicate register across the loops (ptxas has 7), where a branch lets
// CodeGenPrepare compute the compare again beside it: such a store keeps its branch.
bool computedIn(const llvm::Value* pred, const llvm::BasicBlock* block, int depth = 3) {
  const auto* inst = llvm::dyn_cast<llvm::Instruction>(pred);
  if (!inst) return true;
  if (inst->getParent() != block) return false;
  if (inst->getOpcode() != llvm::Instruction::And || depth == 0) return true;
  return computedIn(inst->getOperand(0), block, depth - 1) && computedIn(inst->getOperand(1), block, depth - 1);
}

}  // namespace

bool NVPTXHooks::predicatedGlobalStore(IRBuilder& b, llvm::Value* value, llvm::Value* ptr, llvm::Value* pred) {
  if (!computedIn(pred, b.GetInsertBlock())) return false;
  llvm::Type* type = value->getType();
  if (!ptr->getType()->isPointerTy() || ptr->getType()->getPointerAddressSpace() != 1 || type->isPtrOrPtrVectorTy())
    return false;
  const uint64_t bytes = module(b).getDataLayout().getTypeStoreSize(type).getFixedValue();
  if (module(b).getDataLayout().getTypeSizeInBits(type) != bytes * 8) return false;  // i1, i4...: not whole bytes
  std::vector<llvm::Value*> args{pred, ptr};
  if (bytes == 2) {
    args.push_back(b.CreateBitCast(value, b.getInt16Ty()));
    callTableAsm(b, "st.global.pred.b16", b.getVoidTy(), args);
    return true;
  }
  if (bytes != 4 && bytes != 8 && bytes != 16) return false;
  const unsigned words = static_cast<unsigned>(bytes / 4);
  llvm::Value* packed = b.CreateBitCast(value, words == 1 ? b.getInt32Ty()
                                                          : static_cast<llvm::Type*>(llvm::FixedVectorType::get(b.getInt32Ty(), words)));
  for (unsigned w = 0; w < words; ++w) args.push_back(words == 1 ? packed : b.CreateExtractElement(packed, b.getInt64(w)));
  callTableAsm(b, words == 1 ? "st.global.pred.b32" : words == 2 ? "st.global.pred.v2.b32" : "st.global.pred.v4.b32",
               b.getVoidTy(), args);
  return true;
}

}  // namespace tessera::backends::nvptx
