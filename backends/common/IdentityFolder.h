// The lowering's IRBuilder folder: LLVM's ConstantFolder, plus the algebraic identities with a constant operand
// (x + 0, x - 0, x | 0, x ^ 0, x << 0, x >> 0, x * 1, x & -1, and 0 + x, 0 | x, 0 ^ x, 1 * x, -1 & x) answered with
// x itself. The linear layouts' index math is full of them: a coordinate is the thread's part XOR each register's
// constant, and for most registers of most dimensions that constant is 0. Folding them as they are built keeps
// them out of the lowered module (a fifth of a 128x128x64 matmul's instructions) instead of leaving them to
// instcombine. Unlike InstSimplifyFolder it needs no DataLayout (the module gets the target's only after lowering)
// and folds nothing else.
#pragma once

#include <llvm/IR/ConstantFolder.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilderFolder.h>

namespace tessera::backends {

class IdentityFolder final : public llvm::IRBuilderFolder {
 public:
  llvm::Value* FoldBinOp(llvm::Instruction::BinaryOps op, llvm::Value* lhs, llvm::Value* rhs) const override {
    if (llvm::Value* v = identity(op, lhs, rhs)) return v;
    return constants_.FoldBinOp(op, lhs, rhs);
  }
  llvm::Value* FoldExactBinOp(llvm::Instruction::BinaryOps op, llvm::Value* lhs, llvm::Value* rhs,
                              bool isExact) const override {
    if (llvm::Value* v = identity(op, lhs, rhs)) return v;
    return constants_.FoldExactBinOp(op, lhs, rhs, isExact);
  }
  llvm::Value* FoldNoWrapBinOp(llvm::Instruction::BinaryOps op, llvm::Value* lhs, llvm::Value* rhs, bool hasNUW,
                               bool hasNSW) const override {
    if (llvm::Value* v = identity(op, lhs, rhs)) return v;
    return constants_.FoldNoWrapBinOp(op, lhs, rhs, hasNUW, hasNSW);
  }
  llvm::Value* FoldBinOpFMF(llvm::Instruction::BinaryOps op, llvm::Value* lhs, llvm::Value* rhs,
                            llvm::FastMathFlags fmf) const override {
    return constants_.FoldBinOpFMF(op, lhs, rhs, fmf);
  }
  llvm::Value* FoldUnOpFMF(llvm::Instruction::UnaryOps op, llvm::Value* v, llvm::FastMathFlags fmf) const override {
    return constants_.FoldUnOpFMF(op, v, fmf);
  }
  llvm::Value* FoldCmp(llvm::CmpInst::Predicate p, llvm::Value* lhs, llvm::Value* rhs) const override {
    return constants_.FoldCmp(p, lhs, rhs);
  }
  llvm::Value* FoldGEP(llvm::Type* type, llvm::Value* ptr, llvm::ArrayRef<llvm::Value*> indices,
                       llvm::GEPNoWrapFlags flags) const override {
    return constants_.FoldGEP(type, ptr, indices, flags);
  }
  llvm::Value* FoldSelect(llvm::Value* c, llvm::Value* t, llvm::Value* f) const override {
    return constants_.FoldSelect(c, t, f);
  }
  llvm::Value* FoldExtractValue(llvm::Value* agg, llvm::ArrayRef<unsigned> indices) const override {
    return constants_.FoldExtractValue(agg, indices);
  }
  llvm::Value* FoldInsertValue(llvm::Value* agg, llvm::Value* v, llvm::ArrayRef<unsigned> indices) const override {
    return constants_.FoldInsertValue(agg, v, indices);
  }
  llvm::Value* FoldExtractElement(llvm::Value* vec, llvm::Value* index) const override {
    return constants_.FoldExtractElement(vec, index);
  }
  llvm::Value* FoldInsertElement(llvm::Value* vec, llvm::Value* element, llvm::Value* index) const override {
    return constants_.FoldInsertElement(vec, element, index);
  }
  llvm::Value* FoldShuffleVector(llvm::Value* a, llvm::Value* b, llvm::ArrayRef<int> mask) const override {
    return constants_.FoldShuffleVector(a, b, mask);
  }
  llvm::Value* FoldCast(llvm::Instruction::CastOps op, llvm::Value* v, llvm::Type* to) const override {
    return constants_.FoldCast(op, v, to);
  }
  llvm::Value* FoldBinaryIntrinsic(llvm::Intrinsic::ID id, llvm::Value* lhs, llvm::Value* rhs, llvm::Type* type,
                                   llvm::Instruction* fmfSource) const override {
    return constants_.FoldBinaryIntrinsic(id, lhs, rhs, type, fmfSource);
  }
  llvm::Value* CreatePointerCast(llvm::Constant* c, llvm::Type* to) const override {
    return constants_.CreatePointerCast(c, to);
  }
  llvm::Value* CreatePointerBitCastOrAddrSpaceCast(llvm::Constant* c, llvm::Type* to) const override {
    return constants_.CreatePointerBitCastOrAddrSpaceCast(c, to);
  }

 private:
  // x for `op` applied to x and its identity element (integers only; a float's x + 0.0 is not x for x = -0.0).
  static llvm::Value* identity(llvm::Instruction::BinaryOps op, llvm::Value* lhs, llvm::Value* rhs) {
    using Op = llvm::Instruction::BinaryOps;
    auto isInt = [](llvm::Value* v, int64_t k) {
      auto* c = llvm::dyn_cast<llvm::ConstantInt>(v);
      return c && (k == -1 ? c->isMinusOne() : c->getValue() == static_cast<uint64_t>(k));
    };
    switch (op) {
      case Op::Add:
      case Op::Or:
      case Op::Xor:
        if (isInt(rhs, 0)) return lhs;
        if (isInt(lhs, 0)) return rhs;
        return nullptr;
      case Op::Sub:
      case Op::Shl:
      case Op::LShr:
      case Op::AShr:
        return isInt(rhs, 0) ? lhs : nullptr;
      case Op::Mul:
        if (isInt(rhs, 1)) return lhs;
        if (isInt(lhs, 1)) return rhs;
        return nullptr;
      case Op::And:
        if (isInt(rhs, -1)) return lhs;
        if (isInt(lhs, -1)) return rhs;
        return nullptr;
      default:
        return nullptr;
    }
  }

  llvm::ConstantFolder constants_;
};

}  // namespace tessera::backends
