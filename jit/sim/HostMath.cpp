// GPU math intrinsics as host math. The approximate instructions (NVPTX ex2/lg2/rsqrt/rcp/div/sqrt/sin/cos
// .approx, AMDGPU v_exp/v_log/v_rsq/v_rcp/v_sqrt/v_sin/v_cos) become the exact operation on the host (libm
// or IEEE arithmetic, within 1 ulp): the emulator's result then differs from the hardware's by the
// instruction's documented approximation error (a few ulp in f32), which is why tests comparing the emulator
// with the interpreter keep the tolerances they use on a GPU. Round-to-nearest forms are exact on both; .ftz
// forms flush subnormal inputs and results to zero of the same sign, as the hardware does. Of the
// directed-rounding forms only fma.rz.f32 (libdevice uses it) is modelled, exactly; the others are unknown
// calls, which HostModule rejects. libdevice's bit moves (d2i.lo/hi, lohi.i2d), cvt.rni (f2i.rn) and the
// float-to-integral-float conversions (cvt.rni/rzi/rmi/rpi.f32.f32) are exact.
// Conversions to bf16 are computed inline too: the host's C runtime may lack their libcall (__truncsfbf2). So is
// bf16 arithmetic (which the host would promote to f32 and round through that libcall): in f32, then rounded to
// bf16, which is exact for + - * / sqrt (f32 has more than 2 * 8 + 2 bits); an fma can differ from the
// hardware's single rounding by one bf16 ulp in rare cases.
#include <llvm/ADT/APFloat.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "jit/sim/RewriteContext.h"

namespace tessera::sim {

namespace {

namespace I = llvm::Intrinsic;

enum class Math {
  Exp2, Log2, Sqrt, Rsqrt, Rcp, Div, Add, Mul, Fma, Fabs, Min, Max, Saturate, Sin, Cos,
  SinRevolutions, CosRevolutions,  // AMDGPU v_sin/v_cos take the angle in turns (sin(2 pi x))
  FrexpMantissa, FrexpExponent, Fract,
  FmaTowardZero,               // fma.rz.f32
  DoubleLow, DoubleHigh, DoubleFromHalves,  // the 32-bit halves of an f64's bits, and back
  FloatToIntNearestEven,       // cvt.rni.s32.f32 / .s32.f64 / .s64: saturating, NaN -> 0 (libdevice's sin uses d2i)
  RoundEven, Trunc, Floor, Ceil,  // cvt.rni / rzi / rmi / rpi to an integral float (libdevice's erff uses rni)
};

struct MathIntrinsic {
  llvm::Intrinsic::ID id;
  Math math;
  bool flushToZero = false;
};

const MathIntrinsic kMathIntrinsics[] = {
    // NVPTX
    {I::nvvm_ex2_approx_f, Math::Exp2}, {I::nvvm_ex2_approx_ftz_f, Math::Exp2, true}, {I::nvvm_ex2_approx_d, Math::Exp2},
    {I::nvvm_lg2_approx_f, Math::Log2}, {I::nvvm_lg2_approx_ftz_f, Math::Log2, true}, {I::nvvm_lg2_approx_d, Math::Log2},
    {I::nvvm_rsqrt_approx_f, Math::Rsqrt}, {I::nvvm_rsqrt_approx_ftz_f, Math::Rsqrt, true},
    {I::nvvm_rsqrt_approx_d, Math::Rsqrt}, {I::nvvm_rsqrt_approx_ftz_d, Math::Rsqrt, true},
    {I::nvvm_rcp_approx_ftz_f, Math::Rcp, true}, {I::nvvm_rcp_approx_ftz_d, Math::Rcp, true},
    {I::nvvm_rcp_rn_f, Math::Rcp}, {I::nvvm_rcp_rn_ftz_f, Math::Rcp, true}, {I::nvvm_rcp_rn_d, Math::Rcp},
    {I::nvvm_div_approx_f, Math::Div}, {I::nvvm_div_approx_ftz_f, Math::Div, true},
    {I::nvvm_div_rn_f, Math::Div}, {I::nvvm_div_rn_ftz_f, Math::Div, true}, {I::nvvm_div_rn_d, Math::Div},
    {I::nvvm_sqrt_f, Math::Sqrt}, {I::nvvm_sqrt_approx_f, Math::Sqrt}, {I::nvvm_sqrt_approx_ftz_f, Math::Sqrt, true},
    {I::nvvm_sqrt_rn_f, Math::Sqrt}, {I::nvvm_sqrt_rn_ftz_f, Math::Sqrt, true}, {I::nvvm_sqrt_rn_d, Math::Sqrt},
    {I::nvvm_add_rn_f, Math::Add}, {I::nvvm_add_rn_ftz_f, Math::Add, true}, {I::nvvm_add_rn_d, Math::Add},
    {I::nvvm_mul_rn_f, Math::Mul}, {I::nvvm_mul_rn_ftz_f, Math::Mul, true}, {I::nvvm_mul_rn_d, Math::Mul},
    {I::nvvm_fma_rn_f, Math::Fma}, {I::nvvm_fma_rn_ftz_f, Math::Fma, true}, {I::nvvm_fma_rn_d, Math::Fma},
    {I::nvvm_fabs_f, Math::Fabs}, {I::nvvm_fabs_ftz_f, Math::Fabs, true}, {I::nvvm_fabs_d, Math::Fabs},
    {I::nvvm_fmin_f, Math::Min}, {I::nvvm_fmin_ftz_f, Math::Min, true}, {I::nvvm_fmin_d, Math::Min},
    {I::nvvm_fmax_f, Math::Max}, {I::nvvm_fmax_ftz_f, Math::Max, true}, {I::nvvm_fmax_d, Math::Max},
    {I::nvvm_saturate_f, Math::Saturate}, {I::nvvm_saturate_ftz_f, Math::Saturate, true},
    {I::nvvm_saturate_d, Math::Saturate},
    {I::nvvm_sin_approx_f, Math::Sin}, {I::nvvm_sin_approx_ftz_f, Math::Sin, true},
    {I::nvvm_cos_approx_f, Math::Cos}, {I::nvvm_cos_approx_ftz_f, Math::Cos, true},
    {I::nvvm_fma_rz_f, Math::FmaTowardZero}, {I::nvvm_d2i_lo, Math::DoubleLow}, {I::nvvm_d2i_hi, Math::DoubleHigh},
    {I::nvvm_lohi_i2d, Math::DoubleFromHalves}, {I::nvvm_f2i_rn, Math::FloatToIntNearestEven},
    {I::nvvm_f2i_rn_ftz, Math::FloatToIntNearestEven, true}, {I::nvvm_d2i_rn, Math::FloatToIntNearestEven},
    {I::nvvm_f2ll_rn, Math::FloatToIntNearestEven}, {I::nvvm_d2ll_rn, Math::FloatToIntNearestEven},
    {I::nvvm_round_f, Math::RoundEven}, {I::nvvm_round_ftz_f, Math::RoundEven, true}, {I::nvvm_round_d, Math::RoundEven},
    {I::nvvm_trunc_f, Math::Trunc}, {I::nvvm_trunc_ftz_f, Math::Trunc, true}, {I::nvvm_trunc_d, Math::Trunc},
    {I::nvvm_floor_f, Math::Floor}, {I::nvvm_floor_ftz_f, Math::Floor, true}, {I::nvvm_floor_d, Math::Floor},
    {I::nvvm_ceil_f, Math::Ceil}, {I::nvvm_ceil_ftz_f, Math::Ceil, true}, {I::nvvm_ceil_d, Math::Ceil},
    // AMDGPU
    {I::amdgcn_exp2, Math::Exp2}, {I::amdgcn_log, Math::Log2}, {I::amdgcn_sqrt, Math::Sqrt},
    {I::amdgcn_rsq, Math::Rsqrt}, {I::amdgcn_rcp, Math::Rcp}, {I::amdgcn_fdiv_fast, Math::Div},
    {I::amdgcn_sin, Math::SinRevolutions}, {I::amdgcn_cos, Math::CosRevolutions},
    {I::amdgcn_frexp_mant, Math::FrexpMantissa},
    {I::amdgcn_frexp_exp, Math::FrexpExponent}, {I::amdgcn_fract, Math::Fract},
};

llvm::Value* constant(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

// Subnormal -> zero of the same sign.
llvm::Value* flush(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  if (!t->isFPOrFPVectorTy()) return x;
  llvm::Value* smallestNormal =
      llvm::ConstantFP::get(t, llvm::APFloat::getSmallestNormalized(t->getScalarType()->getFltSemantics()));
  llvm::Value* tiny = b.CreateFCmpOLT(b.CreateUnaryIntrinsic(I::fabs, x), smallestNormal);
  return b.CreateSelect(tiny, b.CreateBinaryIntrinsic(I::copysign, constant(t, 0.0), x), x);
}

// fma(a, b, c) on f32 rounded toward zero. a * b is exact in f64; s = a * b + c in f64 rounds, with the error e
// (s + e is exact, Knuth's two-sum). Rounding s to f32 and stepping one f32 toward zero when that rounded away
// from zero gives the truncation of s; e matters only when s is an f32 itself and e points toward zero, as it
// is too small to cross any other f32.
llvm::Value* fmaTowardZero(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  llvm::Type* f64 = b.getDoubleTy();
  llvm::Value* product = b.CreateFMul(b.CreateFPExt(x, f64), b.CreateFPExt(y, f64));
  llvm::Value* addend = b.CreateFPExt(z, f64);
  llvm::Value* s = b.CreateFAdd(product, addend);
  llvm::Value* addendPart = b.CreateFSub(s, product);
  llvm::Value* e = b.CreateFAdd(b.CreateFSub(product, b.CreateFSub(s, addendPart)), b.CreateFSub(addend, addendPart));
  llvm::Value* rounded = b.CreateFPTrunc(s, b.getFloatTy());
  llvm::Value* wide = b.CreateFPExt(rounded, f64);
  llvm::Value* awayFromZero = b.CreateFCmpOGT(b.CreateUnaryIntrinsic(I::fabs, wide), b.CreateUnaryIntrinsic(I::fabs, s));
  llvm::Value* zero = llvm::ConstantFP::get(f64, 0.0);
  llvm::Value* errorTowardZero = b.CreateOr(b.CreateAnd(b.CreateFCmpOLT(e, zero), b.CreateFCmpOGT(s, zero)),
                                            b.CreateAnd(b.CreateFCmpOGT(e, zero), b.CreateFCmpOLT(s, zero)));
  llvm::Value* exactWithErrorTowardZero = b.CreateAnd(b.CreateFCmpOEQ(wide, s), errorTowardZero);
  llvm::Value* step = b.CreateOr(awayFromZero, exactWithErrorTowardZero);
  // One f32 toward zero: the magnitude's bit pattern minus one (infinity becomes the largest finite value).
  llvm::Value* bits = b.CreateBitCast(rounded, b.getInt32Ty());
  llvm::Value* stepped = b.CreateBitCast(b.CreateSub(bits, b.getInt32(1)), b.getFloatTy());
  return b.CreateSelect(step, stepped, rounded);
}

llvm::Value* compute(llvm::IRBuilder<>& b, Math math, llvm::ArrayRef<llvm::Value*> x, llvm::Type* resultTy) {
  llvm::Type* t = x[0]->getType();
  const double twoPi = 6.283185307179586;
  switch (math) {
    case Math::Exp2: return b.CreateUnaryIntrinsic(I::exp2, x[0]);
    case Math::Log2: return b.CreateUnaryIntrinsic(I::log2, x[0]);
    case Math::Sqrt: return b.CreateUnaryIntrinsic(I::sqrt, x[0]);
    case Math::Rsqrt: return b.CreateFDiv(constant(t, 1.0), b.CreateUnaryIntrinsic(I::sqrt, x[0]));
    case Math::Rcp: return b.CreateFDiv(constant(t, 1.0), x[0]);
    case Math::Div: return b.CreateFDiv(x[0], x[1]);
    case Math::Add: return b.CreateFAdd(x[0], x[1]);
    case Math::Mul: return b.CreateFMul(x[0], x[1]);
    case Math::Fma: return b.CreateIntrinsic(I::fma, {t}, {x[0], x[1], x[2]});
    case Math::Fabs: return b.CreateUnaryIntrinsic(I::fabs, x[0]);
    case Math::Min: return b.CreateBinaryIntrinsic(I::minnum, x[0], x[1]);
    case Math::Max: return b.CreateBinaryIntrinsic(I::maxnum, x[0], x[1]);
    case Math::Saturate:  // NaN -> 0
      return b.CreateBinaryIntrinsic(I::minnum, b.CreateBinaryIntrinsic(I::maxnum, x[0], constant(t, 0.0)),
                                     constant(t, 1.0));
    case Math::Sin: return b.CreateUnaryIntrinsic(I::sin, x[0]);
    case Math::Cos: return b.CreateUnaryIntrinsic(I::cos, x[0]);
    case Math::SinRevolutions: return b.CreateUnaryIntrinsic(I::sin, b.CreateFMul(x[0], constant(t, twoPi)));
    case Math::CosRevolutions: return b.CreateUnaryIntrinsic(I::cos, b.CreateFMul(x[0], constant(t, twoPi)));
    case Math::FrexpMantissa:
      return b.CreateExtractValue(b.CreateIntrinsic(I::frexp, {t, b.getInt32Ty()}, {x[0]}), {0});
    case Math::FrexpExponent:
      return b.CreateSExtOrTrunc(b.CreateExtractValue(b.CreateIntrinsic(I::frexp, {t, b.getInt32Ty()}, {x[0]}), {1}),
                                 resultTy);
    case Math::Fract: {  // x - floor(x), below 1; NaN (and infinity) give NaN
      llvm::Value* d = b.CreateFSub(x[0], b.CreateUnaryIntrinsic(I::floor, x[0]));
      llvm::APFloat largestBelowOne = llvm::APFloat::getOne(t->getScalarType()->getFltSemantics());
      largestBelowOne.next(/*nextDown=*/true);
      llvm::Value* belowOne = llvm::ConstantFP::get(t, largestBelowOne);
      return b.CreateSelect(b.CreateFCmpUNO(d, d), d, b.CreateBinaryIntrinsic(I::minnum, d, belowOne));
    }
    case Math::FmaTowardZero: return fmaTowardZero(b, x[0], x[1], x[2]);
    case Math::DoubleLow: return b.CreateTrunc(b.CreateBitCast(x[0], b.getInt64Ty()), b.getInt32Ty());
    case Math::DoubleHigh:
      return b.CreateTrunc(b.CreateLShr(b.CreateBitCast(x[0], b.getInt64Ty()), b.getInt64(32)), b.getInt32Ty());
    case Math::DoubleFromHalves: {
      llvm::Value* high = b.CreateShl(b.CreateZExt(x[1], b.getInt64Ty()), b.getInt64(32));
      return b.CreateBitCast(b.CreateOr(high, b.CreateZExt(x[0], b.getInt64Ty())), b.getDoubleTy());
    }
    case Math::FloatToIntNearestEven:
      return b.CreateIntrinsic(I::fptosi_sat, {resultTy, t}, {b.CreateUnaryIntrinsic(I::rint, x[0])});
    case Math::RoundEven: return b.CreateUnaryIntrinsic(I::roundeven, x[0]);
    case Math::Trunc: return b.CreateUnaryIntrinsic(I::trunc, x[0]);
    case Math::Floor: return b.CreateUnaryIntrinsic(I::floor, x[0]);
    case Math::Ceil: return b.CreateUnaryIntrinsic(I::ceil, x[0]);
  }
  return nullptr;
}

}  // namespace

llvm::Value* hostMath(llvm::IRBuilder<>& b, llvm::CallInst& call) {
  const llvm::Intrinsic::ID id = call.getIntrinsicID();
  for (const MathIntrinsic& m : kMathIntrinsics) {
    if (m.id != id) continue;
    std::vector<llvm::Value*> args(call.arg_begin(), call.arg_end());
    if (m.flushToZero)
      for (llvm::Value*& a : args) a = flush(b, a);
    llvm::Value* result = compute(b, m.math, args, call.getType());
    return m.flushToZero ? flush(b, result) : result;
  }
  return nullptr;
}

namespace {

// f32 (or f64) -> bf16, rounding to nearest even, on scalars or vectors. An f64 is first rounded to f32 "to odd"
// (toward zero, lowest bit set when inexact), which makes the second rounding exact.
llvm::Value* truncateToBFloat16(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Type* resultTy) {
  llvm::Type* t = x->getType();
  auto like = [&](llvm::Type* scalar) -> llvm::Type* {
    if (auto* v = llvm::dyn_cast<llvm::VectorType>(t)) return llvm::VectorType::get(scalar, v->getElementCount());
    return scalar;
  };
  auto constant = [&](uint32_t v) { return llvm::ConstantInt::get(like(b.getInt32Ty()), v); };
  llvm::Value* f = x;
  if (t->getScalarType()->isDoubleTy()) {
    llvm::Value* nearest = b.CreateFPTrunc(x, like(b.getFloatTy()));
    llvm::Value* back = b.CreateFPExt(nearest, t);
    llvm::Value* bits = b.CreateBitCast(nearest, like(b.getInt32Ty()));
    llvm::Value* away = b.CreateFCmpOGT(b.CreateUnaryIntrinsic(I::fabs, back), b.CreateUnaryIntrinsic(I::fabs, x));
    llvm::Value* towardZero = b.CreateSelect(away, b.CreateSub(bits, constant(1)), bits);
    llvm::Value* odd = b.CreateSelect(b.CreateFCmpUNE(back, x), b.CreateOr(towardZero, constant(1)), bits);
    // NaN compares unequal to itself: keep it as rounded.
    odd = b.CreateSelect(b.CreateFCmpUNO(x, x), bits, odd);
    f = b.CreateBitCast(odd, like(b.getFloatTy()));
  }
  llvm::Value* bits = b.CreateBitCast(f, like(b.getInt32Ty()));
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(bits, constant(16)), constant(1));
  llvm::Value* rounded = b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(constant(0x7FFF), lsb)), constant(16));
  llvm::Value* quietNaN = b.CreateOr(b.CreateLShr(bits, constant(16)), constant(0x40));
  llvm::Value* result = b.CreateSelect(b.CreateFCmpUNO(f, f), quietNaN, rounded);
  return b.CreateBitCast(b.CreateTrunc(result, like(b.getInt16Ty())), resultTy);
}

}  // namespace

void expandBFloat16Arithmetic(llvm::Module& m) {
  auto isBFloat16 = [](const llvm::Value* v) { return v->getType()->getScalarType()->isBFloatTy(); };
  auto inF32 = [&](llvm::Type* t) -> llvm::Type* {
    if (!t->getScalarType()->isBFloatTy()) return t;
    llvm::Type* f32 = llvm::Type::getFloatTy(m.getContext());
    if (auto* v = llvm::dyn_cast<llvm::VectorType>(t)) return llvm::VectorType::get(f32, v->getElementCount());
    return f32;
  };
  // Arithmetic that rounds: binary operators, and intrinsics whose every floating-point operand is bf16 (their f32
  // overload computes the same function).
  std::vector<std::pair<llvm::Instruction*, llvm::Function*>> arithmetic;
  for (llvm::Function& f : m)
    for (llvm::Instruction& i : llvm::instructions(f)) {
      if (!isBFloat16(&i)) continue;
      if (llvm::isa<llvm::BinaryOperator>(i)) {
        arithmetic.emplace_back(&i, nullptr);
        continue;
      }
      auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&i);
      if (!call || llvm::any_of(call->args(), [&](const llvm::Use& a) {
            return a->getType()->isFPOrFPVectorTy() && !isBFloat16(a.get());
          }))
        continue;
      llvm::SmallVector<llvm::Type*> argTypes, overloads;
      for (llvm::Value* a : call->args()) argTypes.push_back(inF32(a->getType()));
      if (!llvm::Intrinsic::getIntrinsicSignature(
              call->getIntrinsicID(), llvm::FunctionType::get(inF32(i.getType()), argTypes, false), overloads))
        continue;  // not overloaded on its type: the host compile names what it cannot do
      arithmetic.emplace_back(&i, llvm::Intrinsic::getDeclaration(&m, call->getIntrinsicID(), overloads));
    }
  for (auto [i, f32Intrinsic] : arithmetic) {
    llvm::IRBuilder<> b(i);
    llvm::Instruction* wide = i->clone();
    for (llvm::Use& operand : wide->operands())
      if (isBFloat16(operand.get())) operand.set(b.CreateFPExt(operand.get(), inF32(operand->getType())));
    wide->mutateType(inF32(i->getType()));
    if (f32Intrinsic) llvm::cast<llvm::CallInst>(wide)->setCalledFunction(f32Intrinsic);
    b.Insert(wide);
    i->replaceAllUsesWith(b.CreateFPTrunc(wide, i->getType()));
    i->eraseFromParent();
  }
}

void expandBFloat16Truncations(llvm::Module& m) {
  std::vector<llvm::FPTruncInst*> truncations;
  for (llvm::Function& f : m)
    for (llvm::Instruction& i : llvm::instructions(f))
      if (auto* trunc = llvm::dyn_cast<llvm::FPTruncInst>(&i); trunc && trunc->getType()->getScalarType()->isBFloatTy())
        truncations.push_back(trunc);
  for (llvm::FPTruncInst* trunc : truncations) {
    llvm::IRBuilder<> b(trunc);
    trunc->replaceAllUsesWith(truncateToBFloat16(b, trunc->getOperand(0), trunc->getType()));
    trunc->eraseFromParent();
  }
}

}  // namespace tessera::sim
