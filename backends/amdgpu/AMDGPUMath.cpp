#include "backends/amdgpu/AMDGPUMath.h"

#include <llvm/IR/IntrinsicsAMDGPU.h>

#include "backends/common/ScalarMath.h"

namespace tessera::backends::amdgpu {

using ir::OpKind;

namespace {

llvm::Value* f32(IRBuilder& b, double v) { return llvm::ConstantFP::get(b.getFloatTy(), v); }

// c[0] + z * (c[1] + z * (c[2] + ...)), by Horner's rule with FMAs.
llvm::Value* horner(IRBuilder& b, llvm::Value* z, std::initializer_list<double> coefficients) {
  std::vector<double> c(coefficients);
  llvm::Value* acc = f32(b, c.back());
  for (size_t i = c.size() - 1; i-- > 0;) acc = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {acc, z, f32(b, c[i])});
  return acc;
}

llvm::Value* unary(IRBuilder& b, llvm::Intrinsic::ID id, llvm::Value* x) { return b.CreateUnaryIntrinsic(id, x); }

// tanh: an odd Taylor polynomial near zero (where 1 - 2/(e^2x + 1) cancels), the exponential form elsewhere.
llvm::Value* tanhF32(IRBuilder& b, llvm::Value* x) {
  llvm::Value* ax = unary(b, llvm::Intrinsic::fabs, x);
  llvm::Value* x2 = b.CreateFMul(x, x);
  llvm::Value* poly = b.CreateFMul(x, horner(b, x2, {1.0, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835}));
  llvm::Value* t = unary(b, llvm::Intrinsic::exp, b.CreateFMul(ax, f32(b, 2.0)));
  llvm::Value* big = b.CreateFSub(f32(b, 1.0), b.CreateFDiv(f32(b, 2.0), b.CreateFAdd(t, f32(b, 1.0))));
  big = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
  return b.CreateSelect(b.CreateFCmpOLT(ax, f32(b, 0.25)), poly, big);
}

// erf: Taylor near zero (relative accuracy for tiny x), Abramowitz-Stegun 7.1.26 elsewhere.
llvm::Value* erfF32(IRBuilder& b, llvm::Value* x) {
  llvm::Value* ax = unary(b, llvm::Intrinsic::fabs, x);
  llvm::Value* x2 = b.CreateFMul(x, x);
  const double twoOverSqrtPi = 1.1283791670955126;
  llvm::Value* poly = b.CreateFMul(
      x, horner(b, x2, {twoOverSqrtPi, -twoOverSqrtPi / 3, twoOverSqrtPi / 10, -twoOverSqrtPi / 42,
                        twoOverSqrtPi / 216, -twoOverSqrtPi / 1320}));
  llvm::Value* t = b.CreateFDiv(f32(b, 1.0), b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()},
                                                              {ax, f32(b, 0.3275911), f32(b, 1.0)}));
  llvm::Value* p = b.CreateFMul(t, horner(b, t, {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429}));
  llvm::Value* e = unary(b, llvm::Intrinsic::exp, b.CreateFNeg(b.CreateFMul(ax, ax)));
  llvm::Value* big = b.CreateFSub(f32(b, 1.0), b.CreateFMul(p, e));
  big = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
  return b.CreateSelect(b.CreateFCmpOLT(ax, f32(b, 0.5)), poly, big);
}

}  // namespace

llvm::Value* unaryMath(IRBuilder& b, OpKind op, llvm::Value* x, bool fast) {
  llvm::Type* t = x->getType();
  if (t->isDoubleTy()) {
    if (op == OpKind::Rsqrt) return b.CreateFDiv(llvm::ConstantFP::get(t, 1.0), unary(b, llvm::Intrinsic::sqrt, x));
    return expandF64Math(b, op, x);  // portable inline expansions (no ocml); `fast` does not apply to them
  }
  if (!t->isFloatTy()) return nullptr;
  if (fast) {
    switch (op) {
      case OpKind::Exp2: return unary(b, llvm::Intrinsic::amdgcn_exp2, x);
      case OpKind::Exp: return unary(b, llvm::Intrinsic::amdgcn_exp2, b.CreateFMul(x, f32(b, 1.4426950408889634)));
      case OpKind::Log2: return unary(b, llvm::Intrinsic::amdgcn_log, x);
      case OpKind::Log: return b.CreateFMul(unary(b, llvm::Intrinsic::amdgcn_log, x), f32(b, 0.6931471805599453));
      case OpKind::Rsqrt: return unary(b, llvm::Intrinsic::amdgcn_rsq, x);
      default: break;
    }
  }
  switch (op) {
    case OpKind::Exp: return unary(b, llvm::Intrinsic::exp, x);
    case OpKind::Exp2: return unary(b, llvm::Intrinsic::exp2, x);
    case OpKind::Log: return unary(b, llvm::Intrinsic::log, x);
    case OpKind::Log2: return unary(b, llvm::Intrinsic::log2, x);
    case OpKind::Rsqrt: return b.CreateFDiv(f32(b, 1.0), unary(b, llvm::Intrinsic::sqrt, x));
    case OpKind::Sin: return unary(b, llvm::Intrinsic::sin, x);
    case OpKind::Cos: return unary(b, llvm::Intrinsic::cos, x);
    case OpKind::Tanh: return tanhF32(b, x);
    case OpKind::Erf: return erfF32(b, x);
    default: return nullptr;
  }
}

// fmod by exact long division: while r >= |y|, subtract the largest |y| * 2^k not above r. Each subtraction is
// exact (Sterbenz: r/2 < |y| * 2^k <= r), and there are at most (exponent difference + 1) of them.
llvm::Value* exactFmod(IRBuilder& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  if (!t->isFloatTy() && !t->isDoubleTy()) return nullptr;
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::Value* ax = unary(b, llvm::Intrinsic::fabs, x);
  llvm::Value* ay = unary(b, llvm::Intrinsic::fabs, y);
  llvm::Value* inf = llvm::ConstantFP::getInfinity(t);
  // NaN operands, x infinite or y zero: NaN. (Unordered compares are true for NaN.)
  llvm::Value* invalid = b.CreateOr(b.CreateOr(b.CreateFCmpUEQ(ax, inf), b.CreateFCmpUEQ(ay, llvm::ConstantFP::get(t, 0.0))),
                                    b.CreateFCmpUNO(ax, ay));
  llvm::BasicBlock* entry = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "fmod.loop", f);
  llvm::BasicBlock* step = llvm::BasicBlock::Create(ctx, "fmod.step", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "fmod.done", f);
  // Invalid inputs skip the loop (the select below makes the result NaN): with y zero, r >= |y| would hold
  // forever.
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* r = b.CreatePHI(t, 2, "fmod.r");
  r->addIncoming(ax, entry);
  b.CreateCondBr(b.CreateAnd(b.CreateNot(invalid), b.CreateFCmpOGE(r, ay)), step, done);
  b.SetInsertPoint(step);
  llvm::Type* i32 = b.getInt32Ty();
  auto exponentOf = [&](llvm::Value* v) {
    return b.CreateExtractValue(b.CreateIntrinsic(llvm::Intrinsic::frexp, {t, i32}, {v}), 1);
  };
  llvm::Value* e = b.CreateSub(exponentOf(r), exponentOf(ay));
  llvm::Value* s = b.CreateIntrinsic(llvm::Intrinsic::ldexp, {t, i32}, {ay, e});
  s = b.CreateSelect(b.CreateFCmpOGT(s, r), b.CreateFMul(s, llvm::ConstantFP::get(t, 0.5)), s);
  llvm::Value* next = b.CreateFSub(r, s);
  r->addIncoming(next, step);
  b.CreateBr(loop);
  b.SetInsertPoint(done);
  llvm::Value* result = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
  return b.CreateSelect(invalid, llvm::ConstantFP::getNaN(t), result);
}

}  // namespace tessera::backends::amdgpu
