// NVPTXHooks::predicatedGlobalStore and predicatedGlobalLoad: a masked store as `@p st.global`, a masked load as
// `@p ld.global` over its fallback (inline asm of InlineAsmTable.h, as LLVM 19 has no predicated access for NVPTX:
// it branches around each one), the value passed as 16-bit or 32-bit words.
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

bool NVPTXHooks::predicatedGlobalStore(IRBuilder& b, const std::vector<llvm::Value*>& elements, llvm::Value* ptr,
                                       llvm::Value* pred) {
  if (elements.empty() || !computedIn(pred, b.GetInsertBlock())) return false;
  llvm::Type* type = elements[0]->getType();
  if (!ptr->getType()->isPointerTy() || ptr->getType()->getPointerAddressSpace() != 1 || type->isPtrOrPtrVectorTy())
    return false;
  const llvm::DataLayout& layout = module(b).getDataLayout();
  const uint64_t elementBytes = layout.getTypeStoreSize(type).getFixedValue();
  if (layout.getTypeSizeInBits(type) != elementBytes * 8) return false;  // i1, i4...: not whole bytes
  const uint64_t bytes = elementBytes * elements.size();
  std::vector<llvm::Value*> args{pred, ptr};
  // Packs consecutive elements into one integer of their total width.
  auto pack = [&](size_t first, size_t count, llvm::Type* word) {
    if (count == 1) return b.CreateBitCast(elements[first], word);
    llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(type, static_cast<unsigned>(count)));
    for (size_t j = 0; j < count; ++j) v = b.CreateInsertElement(v, elements[first + j], b.getInt64(j));
    return b.CreateBitCast(v, word);
  };
  if (bytes == 2) {
    args.push_back(pack(0, elements.size(), b.getInt16Ty()));
    callTableAsm(b, "st.global.pred.b16", b.getVoidTy(), args);
    return true;
  }
  if (bytes != 4 && bytes != 8 && bytes != 16) return false;
  // The 32-bit words, from the elements directly (a 4-byte element is one word; narrower ones are packed, wider
  // ones split), so that no vector of the whole store is built only to be taken apart again.
  if (elementBytes == 4) {
    for (llvm::Value* e : elements) args.push_back(b.CreateBitCast(e, b.getInt32Ty()));
  } else if (elementBytes < 4) {
    const size_t perWord = 4 / elementBytes;
    for (size_t w = 0; w < elements.size(); w += perWord) args.push_back(pack(w, perWord, b.getInt32Ty()));
  } else {
    const unsigned perElement = static_cast<unsigned>(elementBytes / 4);
    for (llvm::Value* e : elements) {
      llvm::Value* words = b.CreateBitCast(e, llvm::FixedVectorType::get(b.getInt32Ty(), perElement));
      for (unsigned w = 0; w < perElement; ++w) args.push_back(b.CreateExtractElement(words, b.getInt64(w)));
    }
  }
  const size_t words = args.size() - 2;
  callTableAsm(b, words == 1 ? "st.global.pred.b32" : words == 2 ? "st.global.pred.v2.b32" : "st.global.pred.v4.b32",
               b.getVoidTy(), args);
  return true;
}

llvm::Value* NVPTXHooks::predicatedGlobalLoad(IRBuilder& b, llvm::Type* type, llvm::Value* ptr, llvm::Value* pred,
                                              llvm::Value* fallback) {
  if (!computedIn(pred, b.GetInsertBlock()) || !ptr->getType()->isPointerTy() ||
      ptr->getType()->getPointerAddressSpace() != 1 || type->isPtrOrPtrVectorTy())
    return nullptr;
  const llvm::DataLayout& layout = module(b).getDataLayout();
  const uint64_t bytes = layout.getTypeStoreSize(type).getFixedValue();
  if (layout.getTypeSizeInBits(type) != bytes * 8) return nullptr;  // i1, i4...: not whole bytes
  if (bytes == 2) {
    llvm::Value* word = callTableAsm(b, "ld.global.pred.b16", b.getInt16Ty(),
                                     {pred, ptr, b.CreateBitCast(fallback, b.getInt16Ty())});
    return b.CreateBitCast(word, type);
  }
  if (bytes != 4 && bytes != 8 && bytes != 16) return nullptr;
  const unsigned words = static_cast<unsigned>(bytes / 4);
  llvm::Type* wordsTy = words == 1 ? static_cast<llvm::Type*>(b.getInt32Ty()) : llvm::FixedVectorType::get(b.getInt32Ty(), words);
  llvm::Value* fallbackWords = b.CreateBitCast(fallback, wordsTy);
  std::vector<llvm::Value*> args{pred, ptr};
  for (unsigned w = 0; w < words; ++w)
    args.push_back(words == 1 ? fallbackWords : b.CreateExtractElement(fallbackWords, b.getInt64(w)));
  if (words == 1) return b.CreateBitCast(callTableAsm(b, "ld.global.pred.b32", b.getInt32Ty(), args), type);
  llvm::Type* resultTy = llvm::StructType::get(b.getContext(), std::vector<llvm::Type*>(words, b.getInt32Ty()));
  llvm::Value* result = callTableAsm(b, words == 2 ? "ld.global.pred.v2.b32" : "ld.global.pred.v4.b32", resultTy, args);
  llvm::Value* loaded = llvm::PoisonValue::get(wordsTy);
  for (unsigned w = 0; w < words; ++w)
    loaded = b.CreateInsertElement(loaded, b.CreateExtractValue(result, {w}), b.getInt64(w));
  return b.CreateBitCast(loaded, type);
}

}  // namespace tessera::backends::nvptx
