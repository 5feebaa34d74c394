// The predicated global accesses of backends/nvptx/InlineAsmTable.h as what they do: `@p st.global` (masked tile
// stores) a branch around an ordinary store of the words, `@p ld.global` (masked tile loads) a branch around an
// ordinary load of the words, the fallback words where the predicate is false, both naturally aligned, at the
// asm's source line. Run before any other step, so that the access is checked, and its findings reported, as
// every other load and store is.
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "backends/nvptx/InlineAsmTable.h"
#include "jit/sim/RewriteContext.h"

namespace tessera::sim {

namespace {

// The entry of a predicated access `call` is, or null.
const backends::nvptx::InlineAsmEntry* predicatedAccessOf(const llvm::CallInst& call) {
  const auto* asmValue = llvm::dyn_cast<llvm::InlineAsm>(call.getCalledOperand());
  if (!asmValue) return nullptr;
  const backends::nvptx::InlineAsmEntry* entry =
      backends::nvptx::findInlineAsm(asmValue->getAsmString(), asmValue->getConstraintString());
  return entry && (entry->operation.starts_with("st.global.pred.") || entry->operation.starts_with("ld.global.pred."))
             ? entry
             : nullptr;
}

// One i16 or i32 word as it is, several as a vector of them.
llvm::Value* wordsValue(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& words) {
  if (words.size() == 1) return words[0];
  llvm::Value* value = llvm::PoisonValue::get(llvm::FixedVectorType::get(b.getInt32Ty(), static_cast<unsigned>(words.size())));
  for (size_t i = 0; i < words.size(); ++i) value = b.CreateInsertElement(value, words[i], b.getInt64(i));
  return value;
}

uint64_t storeSize(const llvm::CallInst& call, llvm::Type* type) {
  return call.getModule()->getDataLayout().getTypeStoreSize(type).getFixedValue();
}

void expandStore(llvm::CallInst& call) {
  // Operands: the predicate (i1), the address, then the words (one i16, or one, two or four i32).
  llvm::IRBuilder<> b(&call);
  llvm::Value* value = wordsValue(b, std::vector<llvm::Value*>(call.arg_begin() + 2, call.arg_end()));
  llvm::Instruction* then = llvm::SplitBlockAndInsertIfThen(call.getArgOperand(0), call.getIterator(), /*Unreachable=*/false);
  b.SetInsertPoint(then);
  b.CreateAlignedStore(value, call.getArgOperand(1), llvm::Align(storeSize(call, value->getType())));
  call.eraseFromParent();
}

void expandLoad(llvm::CallInst& call) {
  // Operands: the predicate (i1), the address, then the fallback words; the result is the word (i16 or i32) or a
  // struct of two or four i32.
  llvm::IRBuilder<> b(&call);
  const std::vector<llvm::Value*> fallbackWords(call.arg_begin() + 2, call.arg_end());
  llvm::Value* fallback = wordsValue(b, fallbackWords);
  llvm::BasicBlock* before = call.getParent();
  llvm::Instruction* then = llvm::SplitBlockAndInsertIfThen(call.getArgOperand(0), call.getIterator(), /*Unreachable=*/false);
  b.SetInsertPoint(then);
  llvm::Value* loaded = b.CreateAlignedLoad(fallback->getType(), call.getArgOperand(1),
                                            llvm::Align(storeSize(call, fallback->getType())));
  b.SetInsertPoint(&call);
  llvm::PHINode* value = b.CreatePHI(fallback->getType(), 2);
  value->addIncoming(loaded, then->getParent());
  value->addIncoming(fallback, before);
  llvm::Value* result = value;
  if (fallbackWords.size() > 1) {
    result = llvm::PoisonValue::get(call.getType());
    for (unsigned i = 0; i < fallbackWords.size(); ++i)
      result = b.CreateInsertValue(result, b.CreateExtractElement(value, b.getInt64(i)), {i});
  }
  call.replaceAllUsesWith(result);
  call.eraseFromParent();
}

}  // namespace

void expandPredicatedAccesses(RewriteContext& rc) {
  std::vector<std::pair<llvm::CallInst*, bool>> accesses;  // (call, is a load)
  for (llvm::Function& f : rc.module)
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& inst : block)
        if (auto* call = llvm::dyn_cast<llvm::CallInst>(&inst))
          if (const backends::nvptx::InlineAsmEntry* entry = predicatedAccessOf(*call))
            accesses.emplace_back(call, entry->operation.starts_with("ld."));
  for (auto [call, load] : accesses) load ? expandLoad(*call) : expandStore(*call);
}

}  // namespace tessera::sim
