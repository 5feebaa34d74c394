// The predicated global stores of backends/nvptx/InlineAsmTable.h (`@p st.global`, masked tile stores) as what they
// do: a branch around an ordinary store of the words, naturally aligned, at the asm's source line. Run before any
// other step, so that the store is checked, and its findings reported, as every other store is.
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "backends/nvptx/InlineAsmTable.h"
#include "jit/sim/RewriteContext.h"

namespace tessera::sim {

namespace {

// The entry of a predicated store `call` is, or null.
const backends::nvptx::InlineAsmEntry* predicatedStoreOf(const llvm::CallInst& call) {
  const auto* asmValue = llvm::dyn_cast<llvm::InlineAsm>(call.getCalledOperand());
  if (!asmValue) return nullptr;
  const backends::nvptx::InlineAsmEntry* entry =
      backends::nvptx::findInlineAsm(asmValue->getAsmString(), asmValue->getConstraintString());
  return entry && entry->operation.starts_with("st.global.pred.") ? entry : nullptr;
}

void expand(llvm::CallInst& call) {
  // Operands: the predicate (i1), the address, then the words (one i16, or one, two or four i32).
  llvm::IRBuilder<> b(&call);
  std::vector<llvm::Value*> words(call.arg_begin() + 2, call.arg_end());
  llvm::Value* value = words[0];
  if (words.size() > 1) {
    value = llvm::PoisonValue::get(llvm::FixedVectorType::get(b.getInt32Ty(), static_cast<unsigned>(words.size())));
    for (size_t i = 0; i < words.size(); ++i) value = b.CreateInsertElement(value, words[i], b.getInt64(i));
  }
  llvm::Instruction* then = llvm::SplitBlockAndInsertIfThen(call.getArgOperand(0), call.getIterator(), /*Unreachable=*/false);
  b.SetInsertPoint(then);
  const uint64_t bytes = call.getModule()->getDataLayout().getTypeStoreSize(value->getType()).getFixedValue();
  b.CreateAlignedStore(value, call.getArgOperand(1), llvm::Align(bytes));
  call.eraseFromParent();
}

}  // namespace

void expandPredicatedStores(RewriteContext& rc) {
  std::vector<llvm::CallInst*> stores;
  for (llvm::Function& f : rc.module)
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& inst : block)
        if (auto* call = llvm::dyn_cast<llvm::CallInst>(&inst); call && predicatedStoreOf(*call)) stores.push_back(call);
  for (llvm::CallInst* call : stores) expand(*call);
}

}  // namespace tessera::sim
