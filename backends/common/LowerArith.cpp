// Element-wise ops with the exact semantics of docs/IR.md: integer division/remainder by zero, shifts by at
// least the width, fmin/fmax NaN rules, saturating float->int casts, and fp8 conversions done in software (the
// formats are storage-only, held as i8 in registers).
#include "backends/common/KernelLowering.h"
#include "backends/common/FP8Conversions.h"
#include "ir/FloatFormats.h"

#include <cmath>

#include <llvm/Analysis/SimplifyQuery.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Intrinsics.h>

namespace tessera::backends {

using ir::OpKind;

namespace {

bool isHalfLike(llvm::Type* t) { return t->isHalfTy() || t->isBFloatTy(); }

}  // namespace

llvm::Value* decodeFP8(IRBuilder& b, llvm::Value* byte, ir::Type from) {
  if (from.element().scalarKind() == ir::ScalarKind::F8E5M2) {
    // e5m2 is the top byte of an f16.
    llvm::Value* h = b.CreateShl(b.CreateZExt(byte, b.getInt16Ty()), b.getInt16(8));
    return b.CreateFPExt(b.CreateBitCast(h, b.getHalfTy()), b.getFloatTy());
  }
  // e4m3: place exponent and mantissa in an f16 (bias 15 instead of 7) and scale by 2^8; this also maps the
  // subnormals exactly. S.1111.111 is the only NaN, there are no infinities.
  llvm::Value* mag = b.CreateAnd(byte, b.getInt8(0x7F));
  llvm::Value* h = b.CreateShl(b.CreateZExt(mag, b.getInt16Ty()), b.getInt16(7));
  llvm::Value* v = b.CreateFMul(b.CreateFPExt(b.CreateBitCast(h, b.getHalfTy()), b.getFloatTy()),
                                llvm::ConstantFP::get(b.getFloatTy(), 256.0));
  v = b.CreateSelect(b.CreateICmpEQ(mag, b.getInt8(0x7F)),
                     llvm::ConstantFP::getNaN(b.getFloatTy()), v);
  return b.CreateSelect(b.CreateICmpNE(b.CreateAnd(byte, b.getInt8(0x80)), b.getInt8(0)), b.CreateFNeg(v), v);
}

llvm::Value* encodeFP8(IRBuilder& b, llvm::Value* x, ir::Type to) {
  const ir::NarrowFloatFormat& f = ir::narrowFloatFormat(to.element().scalarKind());
  llvm::Type* ft = x->getType();
  const bool isDouble = ft->isDoubleTy();
  const int fracBits = isDouble ? 52 : 23, expBias = isDouble ? 1023 : 127, width = isDouble ? 64 : 32;
  llvm::Type* it = b.getIntNTy(width);
  auto ic = [&](int64_t v) { return llvm::ConstantInt::get(it, static_cast<uint64_t>(v), true); };
  llvm::Value* bits = b.CreateBitCast(x, it);
  llvm::Value* sign = b.CreateTrunc(b.CreateLShr(bits, ic(width - 1)), b.getInt8Ty());
  llvm::Value* a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* isNan = b.CreateFCmpUNO(a, a);
  // Quantum of a's binade in the target format (the subnormal quantum below the smallest normal binade).
  llvm::Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(b.CreateBitCast(a, it), ic(fracBits)), ic((1 << (width == 64 ? 11 : 8)) - 1)),
                               ic(expBias));
  const int eMin = 1 - f.bias;
  e = b.CreateSelect(b.CreateICmpSLT(e, ic(eMin)), ic(eMin), e);
  llvm::Value* quantum = b.CreateBitCast(b.CreateShl(b.CreateAdd(b.CreateSub(e, ic(f.mantissaBits)), ic(expBias)), ic(fracBits)), ft);
  llvm::Value* q = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, b.CreateFDiv(a, quantum));
  llvm::Value* r = b.CreateFMul(q, quantum);
  llvm::Value* maxFinite = llvm::ConstantFP::get(ft, f.maxFinite);
  r = b.CreateSelect(b.CreateFCmpOGT(r, maxFinite), maxFinite, r);  // also catches +inf
  // Encode r (exactly representable now): subnormals are their quantum count, normals come from r's bits.
  llvm::Value* rBits = b.CreateBitCast(r, it);
  llvm::Value* rExp = b.CreateSub(b.CreateLShr(rBits, ic(fracBits)), ic(expBias));
  llvm::Value* normal = b.CreateOr(b.CreateShl(b.CreateAdd(rExp, ic(f.bias)), ic(f.mantissaBits)),
                                   b.CreateAnd(b.CreateLShr(rBits, ic(fracBits - f.mantissaBits)), ic((1 << f.mantissaBits) - 1)));
  llvm::Value* smallestNormal = llvm::ConstantFP::get(ft, std::ldexp(1.0, eMin));
  llvm::Value* subnormalQuantum = llvm::ConstantFP::get(ft, std::ldexp(1.0, eMin - f.mantissaBits));
  llvm::Value* subnormal = b.CreateFPToUI(b.CreateFDiv(r, subnormalQuantum), it);
  llvm::Value* code = b.CreateSelect(b.CreateFCmpOLT(r, smallestNormal), subnormal, normal);
  code = b.CreateSelect(isNan, ic(f.nanBits), code);
  return b.CreateOr(b.CreateTrunc(code, b.getInt8Ty()), b.CreateShl(sign, b.getInt8(7)));
}

llvm::Value* KernelLowering::castScalar(llvm::Value* v, ir::Type from, ir::Type to) {
  from = from.element();
  to = to.element();
  if (from == to) return v;
  llvm::Type* toTy = regType(to);
  if (from.isPtr() || to.isPtr()) {
    if (from.isPtr() && to.isPtr())
      return from.addrSpace() == to.addrSpace() ? v : b_.CreateAddrSpaceCast(v, toTy);
    if (to.isBool()) return b_.CreateICmpNE(b_.CreatePtrToInt(v, b_.getInt64Ty()), b_.getInt64(0));
    if (from.isPtr()) return b_.CreateZExtOrTrunc(b_.CreatePtrToInt(v, b_.getInt64Ty()), toTy);
    return b_.CreateIntToPtr(b_.CreateZExtOrTrunc(v, b_.getInt64Ty()), toTy);
  }
  // fp8 sources decode to f32 first (exact); fp8 destinations encode from f32/f64.
  if (from.isFP8()) {
    v = decodeFP8(b_, v, from);
    from = ir::Type::f32();
    if (from == to) return v;
  }
  if (to.isFP8()) {
    if (from.isInt()) v = from.isSigned() ? b_.CreateSIToFP(v, b_.getDoubleTy()) : b_.CreateUIToFP(v, b_.getDoubleTy());
    else if (isHalfLike(v->getType())) v = b_.CreateFPExt(v, b_.getFloatTy());
    return encodeFP8(b_, v, to);
  }
  if (to.isBool()) {
    if (from.isFloat()) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (from.isInt() && to.isInt()) return b_.CreateIntCast(v, toTy, from.isSigned());
  if (from.isInt()) return from.isSigned() ? b_.CreateSIToFP(v, toTy) : b_.CreateUIToFP(v, toTy);
  if (to.isInt()) {
    if (isHalfLike(v->getType())) v = b_.CreateFPExt(v, b_.getFloatTy());
    auto id = to.isSigned() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {toTy, v->getType()}, {v});
  }
  // float -> float: round to nearest even. bf16 <-> f16 goes through f32 (exact widening).
  if (isHalfLike(v->getType()) && isHalfLike(toTy)) v = b_.CreateFPExt(v, b_.getFloatTy());
  if (v->getType()->getPrimitiveSizeInBits() < toTy->getPrimitiveSizeInBits()) return b_.CreateFPExt(v, toTy);
  return b_.CreateFPTrunc(v, toTy);
}

namespace {

llvm::Value* intBinary(IRBuilder& b, OpKind kind, llvm::Value* x, llvm::Value* y, bool isSigned) {
  llvm::Type* t = x->getType();
  const unsigned width = t->getIntegerBitWidth();
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(t, static_cast<uint64_t>(v), true); };
  switch (kind) {
    case OpKind::Add: return b.CreateAdd(x, y);
    case OpKind::Sub: return b.CreateSub(x, y);
    case OpKind::Mul: return b.CreateMul(x, y);
    case OpKind::Div:
    case OpKind::Rem: {
      // A constant divisor other than 0 and -1 needs no guard (the tile programs' `(M + BM - 1) / BM`): the
      // guards' selects would sit under every address computed from the quotient, where each of LLVM's known-bits
      // queries walks them again.
      if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(y); k && !k->isZero() && !(isSigned && k->isMinusOne())) {
        if (kind == OpKind::Div) return isSigned ? b.CreateSDiv(x, y) : b.CreateUDiv(x, y);
        return isSigned ? b.CreateSRem(x, y) : b.CreateURem(x, y);
      }
      // LLVM leaves x/0 and MIN/-1 undefined; the IR defines them, so guard the divisor. A dividend known not
      // to be negative (a program id's quotient or remainder) is never MIN: only 0 needs the guard.
      llvm::Value* zero = b.CreateICmpEQ(y, c(0));
      llvm::Value* safeY = b.CreateSelect(zero, c(1), y);
      const llvm::DataLayout& layout = b.GetInsertBlock()->getModule()->getDataLayout();
      if (isSigned && llvm::isKnownNonNegative(x, llvm::SimplifyQuery(layout))) {
        if (kind == OpKind::Div) return b.CreateSelect(zero, c(-1), b.CreateSDiv(x, safeY));
        return b.CreateSelect(zero, x, b.CreateSRem(x, safeY));
      }
      if (!isSigned) {
        if (kind == OpKind::Div) return b.CreateSelect(zero, c(-1), b.CreateUDiv(x, safeY));
        return b.CreateSelect(zero, x, b.CreateURem(x, safeY));
      }
      llvm::Value* minusOne = b.CreateICmpEQ(y, c(-1));
      safeY = b.CreateSelect(minusOne, c(1), safeY);
      if (kind == OpKind::Div) {
        llvm::Value* q = b.CreateSDiv(x, safeY);
        q = b.CreateSelect(minusOne, b.CreateNeg(x), q);  // wraps: MIN / -1 = MIN
        return b.CreateSelect(zero, c(-1), q);
      }
      llvm::Value* r = b.CreateSRem(x, safeY);
      r = b.CreateSelect(minusOne, c(0), r);
      return b.CreateSelect(zero, x, r);
    }
    case OpKind::Min:
      return b.CreateBinaryIntrinsic(isSigned ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, x, y);
    case OpKind::Max:
      return b.CreateBinaryIntrinsic(isSigned ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, x, y);
    case OpKind::And: return b.CreateAnd(x, y);
    case OpKind::Or: return b.CreateOr(x, y);
    case OpKind::Xor: return b.CreateXor(x, y);
    case OpKind::Shl:
    case OpKind::Shr: {
      // Amounts read as unsigned; >= width gives 0 (or all sign bits for an arithmetic right shift).
      if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(y); k && k->getValue().ult(width))
        return kind == OpKind::Shl ? b.CreateShl(x, y) : isSigned ? b.CreateAShr(x, y) : b.CreateLShr(x, y);
      llvm::Value* tooFar = b.CreateICmpUGE(y, c(width));
      if (kind == OpKind::Shr && isSigned)
        return b.CreateAShr(x, b.CreateSelect(tooFar, c(width - 1), y));
      llvm::Value* safe = b.CreateSelect(tooFar, c(0), y);
      llvm::Value* r = kind == OpKind::Shl ? b.CreateShl(x, safe) : b.CreateLShr(x, safe);
      return b.CreateSelect(tooFar, c(0), r);
    }
    case OpKind::UMulHi: {
      llvm::Type* wide = b.getIntNTy(width * 2);
      llvm::Value* p = b.CreateMul(b.CreateZExt(x, wide), b.CreateZExt(y, wide));
      return b.CreateTrunc(b.CreateLShr(p, llvm::ConstantInt::get(wide, width)), t);
    }
    default:
      return nullptr;
  }
}

}  // namespace

void KernelLowering::lowerElementwise(const ir::Op& op) {
  ir::Type resultType = op.result(0)->type();
  ir::Type elem = resultType.element();
  std::vector<const Regs*> in;
  for (const ir::Value* v : op.operands()) in.push_back(&get(v));
  const size_t n = in[0]->size();
  for (const Regs* r : in)
    if (r->size() != n) fail(op, "operands have different register counts (mismatched layouts)");
  ir::Type operandElem = op.operand(0)->type().element();
  Regs out;
  out.reserve(n);

  // Float math on f16/bf16 is done in f32 (exact widening, one rounding back).
  auto unaryFloat = [&](llvm::Value* x) -> llvm::Value* {
    llvm::Type* t = x->getType();
    llvm::Value* wide = isHalfLike(t) ? b_.CreateFPExt(x, b_.getFloatTy()) : x;
    llvm::Value* r = nullptr;
    switch (op.kind()) {
      case OpKind::Neg: return b_.CreateFNeg(x);
      case OpKind::Abs: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      case OpKind::Floor: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
      case OpKind::Ceil: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
      case OpKind::Sqrt:
        r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, wide);
        break;
      default:
        r = hooks_.unaryMath(b_, op.kind(), wide, opts_.fastMath);
        if (!r) fail(op, "the target has no lowering for this function on " + elem.str());
    }
    return isHalfLike(t) ? b_.CreateFPTrunc(r, t) : r;
  };

  // A register holding the same element as an earlier one (a dimension the layout replicates in registers) takes
  // that register's result: the element's operands are the same there.
  const std::vector<int64_t>& first = mapOf(resultType, op.name()).regFirst;
  for (size_t i = 0; i < n; ++i) {
    if (first.size() == n && first[i] != static_cast<int64_t>(i)) {
      out.push_back(out[first[i]]);
      continue;
    }
    llvm::Value* x = (*in[0])[i];
    llvm::Value* y = in.size() > 1 ? (*in[1])[i] : nullptr;
    llvm::Value* r = nullptr;
    switch (op.kind()) {
      case OpKind::Cast: r = castScalar(x, operandElem, elem); break;
      case OpKind::Bitcast: {
        llvm::Type* toTy = regType(elem);
        if (operandElem.isPtr() && elem.isPtr()) r = x;
        else if (operandElem.isPtr()) r = b_.CreatePtrToInt(x, toTy);
        else if (elem.isPtr()) r = b_.CreateIntToPtr(x, toTy);
        else if (x->getType()->isFloatingPointTy() && toTy->isFloatingPointTy())
          // Through the integer of that width: NVPTX cannot select a bitcast between two float types (f16 and
          // bf16) of a constant, which the DAG does not fold (a tessera-fuzz finding).
          r = b_.CreateBitCast(b_.CreateBitCast(x, b_.getIntNTy(x->getType()->getPrimitiveSizeInBits())), toTy);
        else r = b_.CreateBitCast(x, toTy);
        break;
      }
      case OpKind::AddPtr: {
        ir::Type offElem = op.operand(1)->type().element();
        llvm::Value* off = b_.CreateIntCast(y, b_.getInt64Ty(), offElem.isSigned());
        r = b_.CreateGEP(memType(elem.pointee()), x, off);
        break;
      }
      case OpKind::Cmp: {
        const std::string& pred = op.stringAttr("pred");
        if (operandElem.isFloat()) {
          if (operandElem.isFP8()) fail(op, "fp8 values must be cast before comparing");
          llvm::CmpInst::Predicate p = pred == "eq" ? llvm::CmpInst::FCMP_OEQ
                                       : pred == "ne" ? llvm::CmpInst::FCMP_UNE
                                       : pred == "lt" ? llvm::CmpInst::FCMP_OLT
                                       : pred == "le" ? llvm::CmpInst::FCMP_OLE
                                       : pred == "gt" ? llvm::CmpInst::FCMP_OGT
                                       : pred == "ge" ? llvm::CmpInst::FCMP_OGE
                                                      : llvm::CmpInst::BAD_FCMP_PREDICATE;
          if (p == llvm::CmpInst::BAD_FCMP_PREDICATE) fail(op, "unknown predicate '" + pred + "'");
          r = b_.CreateFCmp(p, x, y);
        } else {
          bool s = operandElem.isSigned();
          if (operandElem.isPtr()) {
            x = b_.CreatePtrToInt(x, b_.getInt64Ty());
            y = b_.CreatePtrToInt(y, b_.getInt64Ty());
          }
          llvm::CmpInst::Predicate p = pred == "eq" ? llvm::CmpInst::ICMP_EQ
                                       : pred == "ne" ? llvm::CmpInst::ICMP_NE
                                       : pred == "lt" ? (s ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_ULT)
                                       : pred == "le" ? (s ? llvm::CmpInst::ICMP_SLE : llvm::CmpInst::ICMP_ULE)
                                       : pred == "gt" ? (s ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_UGT)
                                       : pred == "ge" ? (s ? llvm::CmpInst::ICMP_SGE : llvm::CmpInst::ICMP_UGE)
                                                      : llvm::CmpInst::BAD_ICMP_PREDICATE;
          if (p == llvm::CmpInst::BAD_ICMP_PREDICATE) fail(op, "unknown predicate '" + pred + "'");
          r = b_.CreateICmp(p, x, y);
        }
        break;
      }
      case OpKind::Select: r = b_.CreateSelect(x, y, (*in[2])[i]); break;
      case OpKind::Fma:
        if (!elem.isArithmeticFloat()) fail(op, "fma needs a float type, got " + elem.str());
        r = b_.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, (*in[2])[i]});
        break;
      default:
        if (elem.isFP8()) fail(op, "fp8 is storage-only; cast to an arithmetic type first");
        if (elem.isPtr()) fail(op, "arithmetic is not defined on pointers (use addptr)");
        if (op.numOperands() == 2 && elem.isInt()) {
          r = intBinary(b_, op.kind(), x, y, elem.isSigned());
        } else if (op.numOperands() == 2) {
          switch (op.kind()) {
            case OpKind::Add: r = b_.CreateFAdd(x, y); break;
            case OpKind::Sub: r = b_.CreateFSub(x, y); break;
            case OpKind::Mul: r = b_.CreateFMul(x, y); break;
            case OpKind::Div: r = b_.CreateFDiv(x, y); break;
            case OpKind::Min: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, y); break;
            case OpKind::Max: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, y); break;
            case OpKind::Rem: {
              llvm::Type* t = x->getType();
              bool narrow = isHalfLike(t);
              llvm::Value* wx = narrow ? b_.CreateFPExt(x, b_.getFloatTy()) : x;
              llvm::Value* wy = narrow ? b_.CreateFPExt(y, b_.getFloatTy()) : y;
              r = hooks_.fmod(b_, wx, wy);
              if (!r) fail(op, "the target has no fmod for " + elem.str());
              if (narrow) r = b_.CreateFPTrunc(r, t);  // exact: fmod's result is representable
              break;
            }
            default: break;
          }
        } else if (elem.isInt()) {
          switch (op.kind()) {
            case OpKind::Neg: r = b_.CreateNeg(x); break;
            case OpKind::Not: r = b_.CreateNot(x); break;
            case OpKind::Abs:
              r = elem.isSigned() ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse()) : x;
              break;
            default: break;
          }
        } else {
          r = unaryFloat(x);
        }
        if (!r) fail(op, "not defined on " + elem.str());
    }
    out.push_back(r);
  }
  set(op.result(0), std::move(out));
}

}  // namespace tessera::backends
