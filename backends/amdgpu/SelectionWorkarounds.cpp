#include "backends/amdgpu/SelectionWorkarounds.h"

#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>

namespace tessera::backends::amdgpu {

void rewriteUnselectableIR(llvm::Module& m) {
  std::vector<llvm::CastInst*> boolToBFloat16;
  for (llvm::Function& f : m)
    for (llvm::Instruction& i : llvm::instructions(f))
      if (auto* cast = llvm::dyn_cast<llvm::CastInst>(&i);
          cast && (llvm::isa<llvm::UIToFPInst>(cast) || llvm::isa<llvm::SIToFPInst>(cast)) &&
          cast->getSrcTy()->getScalarType()->isIntegerTy(1) && cast->getDestTy()->getScalarType()->isBFloatTy())
        boolToBFloat16.push_back(cast);
  for (llvm::CastInst* cast : boolToBFloat16) {
    llvm::IRBuilder<> b(cast);
    llvm::Type* f32 = b.getFloatTy();
    if (auto* v = llvm::dyn_cast<llvm::VectorType>(cast->getDestTy())) f32 = llvm::VectorType::get(f32, v->getElementCount());
    llvm::Value* wide = b.CreateCast(cast->getOpcode(), cast->getOperand(0), f32);
    cast->replaceAllUsesWith(b.CreateFPTrunc(wide, cast->getDestTy()));
    cast->eraseFromParent();
  }
}

}  // namespace tessera::backends::amdgpu
