#include "backends/common/ScalarMath.h"

#include <vector>

namespace tessera::backends {

using ir::OpKind;

namespace {

// Constants (computed with 400-bit arithmetic). The pairs hi + lo represent the real constant to about 2^-106.
constexpr double kLn2Hi = 0x1.62e42fefa39efp-1;     // ln 2 rounded to double
constexpr double kLn2Lo = 0x1.abc9e3b39803fp-56;    // ln 2 - kLn2Hi
constexpr double kLn2Hi42 = 0x1.62e42fefa3800p-1;   // ln 2 truncated to 42 bits: e * kLn2Hi42 is exact for |e| < 2^11
constexpr double kLn2Lo42 = 0x1.ef35793c76730p-45;  // ln 2 - kLn2Hi42
constexpr double kLog2eHi = 0x1.71547652b82fep+0;   // 1 / ln 2
constexpr double kLog2eLo = 0x1.777d0ffda0d24p-56;
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
constexpr double kPio2_1 = 0x1.921fb54442d18p+0;    // pi/2 = kPio2_1 + kPio2_2 + kPio2_3 + O(2^-163)
constexpr double kPio2_2 = 0x1.1a62633145c07p-54;
constexpr double kPio2_3 = -0x1.f1976b7ed8fbcp-110;
constexpr double kTwoOverSqrtPiHi = 0x1.20dd750429b6dp+0;  // 2 / sqrt(pi)
constexpr double kTwoOverSqrtPiLo = 0x1.1ae3a914fed80p-56;

// Series coefficients, computed from their definitions in long double (64-bit significand) and rounded once.
// coefficients(first, count, term) = {term(first), term(first + 1), ...}.
template <class Term>
std::vector<double> coefficients(int first, int count, Term term) {
  std::vector<double> c;
  for (int n = first; n < first + count; ++n) c.push_back(static_cast<double>(term(n)));
  return c;
}
long double inverseFactorial(int n) {
  long double f = 1;
  for (int i = 2; i <= n; ++i) f *= i;
  return 1 / f;
}

// A thin layer over the builder for f64 arithmetic; every operation is one correctly rounded IEEE operation.
struct F64 {
  IRBuilder& b;
  llvm::Type* t;
  llvm::Type* i32;

  explicit F64(IRBuilder& builder) : b(builder), t(builder.getDoubleTy()), i32(builder.getInt32Ty()) {}

  llvm::Value* c(double v) const { return llvm::ConstantFP::get(t, v); }
  llvm::Value* add(llvm::Value* x, llvm::Value* y) { return b.CreateFAdd(x, y); }
  llvm::Value* sub(llvm::Value* x, llvm::Value* y) { return b.CreateFSub(x, y); }
  llvm::Value* mul(llvm::Value* x, llvm::Value* y) { return b.CreateFMul(x, y); }
  llvm::Value* div(llvm::Value* x, llvm::Value* y) { return b.CreateFDiv(x, y); }
  llvm::Value* neg(llvm::Value* x) { return b.CreateFNeg(x); }
  llvm::Value* fma(llvm::Value* x, llvm::Value* y, llvm::Value* z) {
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {t}, {x, y, z});
  }
  llvm::Value* unary(llvm::Intrinsic::ID id, llvm::Value* x) { return b.CreateUnaryIntrinsic(id, x); }
  llvm::Value* abs(llvm::Value* x) { return unary(llvm::Intrinsic::fabs, x); }
  llvm::Value* rint(llvm::Value* x) { return unary(llvm::Intrinsic::rint, x); }
  llvm::Value* copysign(llvm::Value* mag, llvm::Value* sign) {
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sign);
  }
  // lo <= x <= hi, and NaN -> lo (minnum/maxnum return the non-NaN operand): callers select NaN back in.
  llvm::Value* clamp(llvm::Value* x, double lo, double hi) {
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, c(lo)),
                                   c(hi));
  }
  llvm::Value* ldexp(llvm::Value* x, llvm::Value* e) {
    return b.CreateIntrinsic(llvm::Intrinsic::ldexp, {t, i32}, {x, e});
  }
  llvm::Value* select(llvm::Value* cond, llvm::Value* x, llvm::Value* y) { return b.CreateSelect(cond, x, y); }
  llvm::Value* isNaN(llvm::Value* x) { return b.CreateFCmpUNO(x, x); }
  // NaN inputs give NaN (x + x quiets a signaling NaN).
  llvm::Value* nanPassThrough(llvm::Value* x, llvm::Value* result) { return select(isNaN(x), add(x, x), result); }

  // c[0] + z * (c[1] + z * (c[2] + ...)), one rounding per step (FMA).
  llvm::Value* horner(llvm::Value* z, const std::vector<double>& coeffs) {
    llvm::Value* acc = c(coeffs.back());
    for (size_t i = coeffs.size() - 1; i-- > 0;) acc = fma(acc, z, c(coeffs[i]));
    return acc;
  }
};

// hi + lo == x + y exactly, hi = fl(x + y) (Knuth's TwoSum, no precondition).
struct Pair {
  llvm::Value* hi;
  llvm::Value* lo;
};
Pair twoSum(F64& f, llvm::Value* x, llvm::Value* y) {
  llvm::Value* s = f.add(x, y);
  llvm::Value* yy = f.sub(s, x);
  llvm::Value* xx = f.sub(s, yy);
  return {s, f.add(f.sub(x, xx), f.sub(y, yy))};
}
// The same when |x| >= |y| or x == 0 (Dekker's Fast2Sum).
Pair fastTwoSum(F64& f, llvm::Value* x, llvm::Value* y) {
  llvm::Value* s = f.add(x, y);
  return {s, f.sub(y, f.sub(s, x))};
}

// ---- exp family ----------------------------------------------------------------------------------------------

// exp(r + rlo) - 1 = r + tail.hi + tail.lo, for |r| <= ln2/2 (+ a few ulp) and |rlo| <= ulp(r). Taylor series
// through r^14/14!: the first omitted term is below 2^-61 relative to r. tail.hi = r^2/2 rounded, and tail.lo
// holds its exact rounding error (FMA) plus the terms from r^3/6 on (at most 0.007): their rounding errors stay
// below 2^-59 of the result. rlo enters to first order, rlo (1 + r) (the dropped rlo r^2/2 is below 2^-56 ulp).
Pair expm1Tail(F64& f, llvm::Value* r, llvm::Value* rlo) {
  static const std::vector<double> q = coefficients(3, 12, inverseFactorial);  // 1/3!, 1/4!, ..., 1/14!
  llvm::Value* r2 = f.mul(r, r);
  llvm::Value* r2lo = f.fma(r, r, f.neg(r2));
  llvm::Value* lo = f.fma(f.mul(r2, r), f.horner(r, q), f.fma(rlo, r, rlo));
  return {f.mul(r2, f.c(0.5)), f.fma(r2lo, f.c(0.5), lo)};
}

// Reduces x + xlo = k ln2 + r + rlo with k = rint(x / ln2), for x within the callers' clamps (|k| < 2^11).
// x - k * kLn2Hi is exact: both are multiples of 2^-54 once k != 0 (|x| > 0.34), and |r| < 0.35 needs 53 bits.
// The low part (up to 2^-45 with k * kLn2Lo) is folded into r with Fast2Sum, leaving |rlo| <= ulp(r) / 2.
struct Reduced {
  llvm::Value* k;  // i32
  llvm::Value* r;
  llvm::Value* rlo;
};
Reduced reduceLn2(F64& f, llvm::Value* x, llvm::Value* xlo) {
  llvm::Value* kd = f.rint(f.mul(x, f.c(kLog2eHi)));
  llvm::Value* r = f.fma(f.neg(kd), f.c(kLn2Hi), x);
  Pair rr = fastTwoSum(f, r, f.fma(f.neg(kd), f.c(kLn2Lo), xlo));
  return {f.b.CreateFPToSI(kd, f.i32), rr.hi, rr.lo};
}

// exp(r + rlo) = 1 + r + r^2/2 + tail.lo as an unrounded hi + lo: the three large terms are added exactly
// (Fast2Sum twice: 1 > |r| > r^2/2), so the only rounding errors are the tail's, below 2^-59 of the result.
Pair expMantissa(F64& f, const Reduced& red) {
  Pair tail = expm1Tail(f, red.r, red.rlo);
  Pair one = fastTwoSum(f, f.c(1.0), red.r);
  Pair two = fastTwoSum(f, one.hi, tail.hi);
  return fastTwoSum(f, two.hi, f.add(f.add(one.lo, two.lo), tail.lo));
}

// 2^k (p.hi + p.lo), rounded once. For a normal result that is ldexp(p.hi). A subnormal result has fewer bits, so
// ldexp(p.hi) rounds a second time; the exact remainder of that rounding plus p.lo, scaled and rounded to the
// same subnormal grid, corrects it to the correctly rounded value of 2^k (p.hi + p.lo).
llvm::Value* scaledExp(F64& f, const Reduced& red) {
  Pair p = expMantissa(f, red);
  llvm::Value* q = f.ldexp(p.hi, red.k);
  llvm::Value* rest = f.add(f.sub(p.hi, f.ldexp(q, f.b.CreateNeg(red.k))), p.lo);
  // Below 2^-1021 the grid is uniform (2^-1074), so q + the rounded correction is exact; above, q is right as is
  // (and the correction would be meaningless for an overflowed q).
  llvm::Value* subnormal = f.b.CreateFCmpOLT(q, f.c(0x1p-1021));
  return f.select(subnormal, f.add(q, f.ldexp(rest, red.k)), q);
}

// exp(x). Clamping to [-746, 710] keeps k in i32 range (and never NaN) without changing the result: exp(710)
// overflows to +inf and exp(-746) underflows to 0 in the final ldexp.
llvm::Value* expF64(F64& f, llvm::Value* x) {
  llvm::Value* xc = f.clamp(x, -746.0, 710.0);
  return f.nanPassThrough(x, scaledExp(f, reduceLn2(f, xc, f.c(0.0))));
}

// exp2(x) = 2^k * exp(g ln2), k = rint(x), g = x - k exact, |g| <= 1/2. g ln2 is formed as an exact FMA product
// split hi + lo, so the reduction adds no error.
llvm::Value* exp2F64(F64& f, llvm::Value* x) {
  llvm::Value* xc = f.clamp(x, -1080.0, 1030.0);
  llvm::Value* kd = f.rint(xc);
  llvm::Value* g = f.sub(xc, kd);
  llvm::Value* h = f.mul(g, f.c(kLn2Hi));
  llvm::Value* hlo = f.fma(g, f.c(kLn2Lo), f.fma(g, f.c(kLn2Hi), f.neg(h)));
  Reduced red{f.b.CreateFPToSI(kd, f.i32), h, hlo};
  return f.nanPassThrough(x, scaledExp(f, red));
}

// tanh(|x|) = e / (e + 2) with e = expm1(2|x|), for every |x| (no cancellation: e >= 0). expm1(y) = (2^k - 1) +
// 2^k r + 2^k r^2/2 + 2^k tail.lo is kept unrounded as hi + lo (the first three terms added exactly with TwoSum;
// 2^k - 1 is exact for k <= 53, and for larger k the rounding of 1 is far below an ulp of the result), and the
// quotient is corrected with the exact remainder (FMA), so the final rounding dominates the error.
// |x| is clamped to 22, where tanh rounds to 1 (1 - tanh(19.1) < 2^-54).
llvm::Value* tanhF64(F64& f, llvm::Value* x) {
  llvm::Value* ax = f.clamp(f.abs(x), 0.0, 22.0);
  llvm::Value* y = f.add(ax, ax);
  Reduced red = reduceLn2(f, y, f.c(0.0));
  Pair tail = expm1Tail(f, red.r, red.rlo);
  llvm::Value* scale = f.ldexp(f.c(1.0), red.k);
  Pair head = twoSum(f, f.sub(scale, f.c(1.0)), f.ldexp(red.r, red.k));
  Pair head2 = twoSum(f, head.hi, f.ldexp(tail.hi, red.k));
  llvm::Value* low = f.add(f.add(head.lo, head2.lo), f.ldexp(tail.lo, red.k));
  Pair e = fastTwoSum(f, head2.hi, low);  // e.hi + e.lo = expm1(y), unrounded
  Pair d = twoSum(f, e.hi, f.c(2.0));
  d.lo = f.add(d.lo, e.lo);
  llvm::Value* q0 = f.div(e.hi, d.hi);
  // (e.hi + e.lo) - q0 * (d.hi + d.lo), the first product exact
  llvm::Value* rem = f.add(f.fma(f.neg(q0), d.hi, e.hi), f.fma(f.neg(q0), d.lo, e.lo));
  llvm::Value* t = f.add(q0, f.div(rem, d.hi));
  return f.nanPassThrough(x, f.copysign(t, x));
}

// ---- log family ----------------------------------------------------------------------------------------------

// x = 2^e * (1 + g), 1 + g in [sqrt(1/2), sqrt(2)), g exact (Sterbenz). With s = g / (2 + g),
// log(1 + g) = 2 atanh(s) = 2s + s R(s^2), R = sum_{n>=1} 2 s^2n / (2n + 1). s is computed as s0 + s1 to about
// 2^-104 relative (the rounded quotient plus the exact remainder of 2 + g and of the division), so 2 s0 is exact
// and the rest, at most 1% of the value (|s| <= 0.1716, R <= 0.02), adds only a few thousandths of an ulp of
// rounding error. R through n = 10 leaves an error below 2^-57 relative.
struct LogParts {
  llvm::Value* e;    // exponent, f64 (exact)
  llvm::Value* hi;   // 2 s0 (exact)
  llvm::Value* low;  // 2 s1 + s0 R: log(1 + g) = hi + low
};
LogParts logParts(F64& f, llvm::Value* x) {
  llvm::Value* fr = f.b.CreateIntrinsic(llvm::Intrinsic::frexp, {f.t, f.i32}, {x});  // handles subnormals
  llvm::Value* m = f.b.CreateExtractValue(fr, 0);                                       // [1/2, 1)
  llvm::Value* ei = f.b.CreateExtractValue(fr, 1);
  llvm::Value* small = f.b.CreateFCmpOLT(m, f.c(0x1.6a09e667f3bcdp-1));  // sqrt(1/2)
  m = f.select(small, f.add(m, m), m);
  ei = f.select(small, f.b.CreateSub(ei, f.b.getInt32(1)), ei);
  llvm::Value* g = f.sub(m, f.c(1.0));
  Pair d = twoSum(f, f.c(2.0), g);
  llvm::Value* s0 = f.div(g, d.hi);
  llvm::Value* s1 = f.div(f.sub(f.fma(f.neg(s0), d.hi, g), f.mul(s0, d.lo)), d.hi);  // (g - s0 (2 + g)) / (2 + g)
  llvm::Value* z = f.mul(s0, s0);
  static const std::vector<double> rc = coefficients(1, 10, [](int n) { return 2.0L / (2 * n + 1); });
  llvm::Value* R = f.mul(z, f.horner(z, rc));
  return {f.b.CreateSIToFP(ei, f.t), f.add(s0, s0), f.fma(s0, R, f.add(s1, s1))};
}

// Special inputs: +inf -> +inf, 0 -> -inf, x < 0 -> NaN, NaN -> NaN.
llvm::Value* logSpecials(F64& f, llvm::Value* x, llvm::Value* result) {
  llvm::Value* inf = llvm::ConstantFP::getInfinity(f.t);
  result = f.select(f.b.CreateFCmpOEQ(x, inf), inf, result);
  result = f.select(f.b.CreateFCmpOEQ(x, f.c(0.0)), llvm::ConstantFP::getInfinity(f.t, true), result);
  result = f.select(f.b.CreateFCmpOLT(x, f.c(0.0)), llvm::ConstantFP::getNaN(f.t), result);
  return f.nanPassThrough(x, result);
}

// log x = e ln2 + log(1 + g). e * kLn2Hi42 is exact and larger than |2 s0| <= 0.35 when e != 0, so Fast2Sum adds
// the two large terms exactly; the rest is small and goes to the low part: the final rounding dominates the
// error, even where e ln2 and log(1 + g) cancel (x just below 1/sqrt(2)).
llvm::Value* logF64(F64& f, llvm::Value* x) {
  LogParts p = logParts(f, x);
  Pair head = fastTwoSum(f, f.mul(p.e, f.c(kLn2Hi42)), p.hi);
  llvm::Value* low = f.add(head.lo, f.fma(p.e, f.c(kLn2Lo42), p.low));
  return logSpecials(f, x, f.add(head.hi, low));
}

// log2 x = e + log(1 + g) / ln2: log(1 + g) is formed as hi + lo (as in log), multiplied by log2(e) = kLog2eHi +
// kLog2eLo with an exact FMA product, and added to the integer e with Fast2Sum (|e| >= 1 > |product| unless
// e == 0).
llvm::Value* log2F64(F64& f, llvm::Value* x) {
  LogParts p = logParts(f, x);
  Pair l{p.hi, p.low};
  llvm::Value* ph = f.mul(l.hi, f.c(kLog2eHi));
  llvm::Value* pl = f.fma(l.hi, f.c(kLog2eHi), f.neg(ph));
  pl = f.add(pl, f.fma(l.hi, f.c(kLog2eLo), f.mul(l.lo, f.c(kLog2eHi))));
  Pair head = fastTwoSum(f, p.e, ph);
  return logSpecials(f, x, f.add(head.hi, f.add(head.lo, pl)));
}

// ---- sin, cos ------------------------------------------------------------------------------------------------

// Reduction for sin/cos: r.hi + r.lo = x - k pi/2 for k = rint(x * 2/pi) (Cody-Waite, pi/2 in three parts).
// x - k kPio2_1 is exact (FMA; both are multiples of ulp(x) or 2^-53 and the difference is below 1); k kPio2_2 is
// an exact FMA product, subtracted with TwoSum; k kPio2_3 only feeds the low part. The reduction therefore has an
// absolute error near |k| 2^-163 + 2^-106 |r|, small against |r| while |k| stays moderate.
// There is no Payne-Hanek reduction: x * 2/pi is rounded, so from |x| ~ 2^51 on k is no longer the nearest
// integer, |r| exceeds the polynomials' range and results are meaningless (the caller clamps them to [-1, 1]);
// accuracy is measured, and asserted by the test, for |x| < 2^50.
Pair reduceHalfPi(F64& f, llvm::Value* x, llvm::Value* k) {
  llvm::Value* nk = f.neg(k);
  llvm::Value* r1 = f.fma(nk, f.c(kPio2_1), x);
  llvm::Value* t = f.mul(k, f.c(kPio2_2));
  llvm::Value* tlo = f.fma(k, f.c(kPio2_2), f.neg(t));
  Pair hi = twoSum(f, r1, f.neg(t));
  llvm::Value* lo = f.fma(nk, f.c(kPio2_3), f.sub(hi.lo, tlo));
  return fastTwoSum(f, hi.hi, lo);
}

// sin(r.hi + r.lo), |r| <= pi/4 (+ a little): Taylor through r^17/17! (first omitted term below 2^-60 relative).
// r - r^3/6 is formed with an exact cube (FMA), a two-part 1/6 and Fast2Sum; the remaining terms are at most
// 0.3% of the value, so their rounding errors are negligible. r.lo enters to first order, r.lo cos r.
llvm::Value* sinPoly(F64& f, Pair r) {
  static const std::vector<double> sc = coefficients(2, 7, [](int n) {  // (-1)^n / (2n+1)!, n = 2..8
    return (n % 2 ? -1 : 1) * inverseFactorial(2 * n + 1);
  });
  const double sixthHi = 1.0 / 6, sixthLo = static_cast<double>(1.0L / 6 - sixthHi);
  llvm::Value* z = f.mul(r.hi, r.hi);
  llvm::Value* zlo = f.fma(r.hi, r.hi, f.neg(z));
  llvm::Value* r3 = f.mul(r.hi, z);
  llvm::Value* r3lo = f.fma(r.hi, zlo, f.fma(r.hi, z, f.neg(r3)));
  llvm::Value* t3 = f.mul(r3, f.c(-sixthHi));
  llvm::Value* t3lo = f.fma(r3, f.c(-sixthHi), f.neg(t3));  // the rounding error of t3, exactly
  t3lo = f.add(t3lo, f.fma(r3lo, f.c(-sixthHi), f.mul(r3, f.c(-sixthLo))));
  Pair head = fastTwoSum(f, r.hi, t3);
  llvm::Value* low = f.fma(f.mul(r3, z), f.horner(z, sc), f.mul(r.lo, f.fma(z, f.c(-0.5), f.c(1.0))));
  return f.add(head.hi, f.add(f.add(head.lo, t3lo), low));
}

// cos(r.hi + r.lo), |r| <= pi/4 (+ a little): Taylor through r^20/20!. 1 - r^2/2 is formed with the exact square
// (FMA) and Fast2Sum; the r^4 terms are at most 2.2% of the value. r.lo enters to first order, -r.lo sin r.
llvm::Value* cosPoly(F64& f, Pair r) {
  static const std::vector<double> cc = coefficients(2, 9, [](int n) {  // (-1)^n / (2n)!, n = 2..10
    return (n % 2 ? -1 : 1) * inverseFactorial(2 * n);
  });
  llvm::Value* z = f.mul(r.hi, r.hi);
  llvm::Value* zlo = f.fma(r.hi, r.hi, f.neg(z));
  Pair w = fastTwoSum(f, f.c(1.0), f.neg(f.mul(z, f.c(0.5))));
  llvm::Value* low = f.fma(f.mul(z, z), f.horner(z, cc), f.sub(w.lo, f.fma(zlo, f.c(0.5), f.mul(r.hi, r.lo))));
  return f.add(w.hi, low);
}

// sin x or cos x (`cosine`): sin x = sin r, cos r, -sin r, -cos r for k mod 4 = 0..3; cos x is the same one
// quadrant later.
llvm::Value* sinCosF64(F64& f, llvm::Value* x, bool cosine) {
  IRBuilder& b = f.b;
  llvm::Value* ax = f.abs(x);
  // Out of the range where k fits in i64 (and for inf/NaN) reduce nothing; the result is replaced or meaningless.
  llvm::Value* xr = f.select(b.CreateFCmpOLT(ax, f.c(0x1p62)), x, f.c(0.0));
  llvm::Value* k = f.rint(f.mul(xr, f.c(kTwoOverPi)));
  Pair r = reduceHalfPi(f, xr, k);
  llvm::Value* q = b.CreateAnd(b.CreateFPToSI(k, b.getInt64Ty()), b.getInt64(3));
  if (cosine) q = b.CreateAnd(b.CreateAdd(q, b.getInt64(1)), b.getInt64(3));
  llvm::Value* odd = b.CreateICmpEQ(b.CreateAnd(q, b.getInt64(1)), b.getInt64(1));
  llvm::Value* negate = b.CreateICmpUGE(q, b.getInt64(2));
  llvm::Value* v = f.select(odd, cosPoly(f, r), sinPoly(f, r));
  v = f.select(negate, f.neg(v), v);
  v = f.clamp(v, -1.0, 1.0);  // only matters out of the accurate range: keeps meaningless results bounded
  if (!cosine) v = f.select(b.CreateFCmpOLT(ax, f.c(0x1p-27)), x, v);  // sin x = x (also keeps -0)
  v = f.select(b.CreateFCmpOEQ(ax, llvm::ConstantFP::getInfinity(f.t)), llvm::ConstantFP::getNaN(f.t), v);
  return f.nanPassThrough(x, v);
}

// ---- erf -----------------------------------------------------------------------------------------------------

constexpr double kErfSeriesEnd = 2.0;  // the series below, the continued fraction from here
constexpr int kErfSeriesTerms = 31;    // enough for x^2 <= 4 (first omitted term < 2^-57 of the sum)
constexpr int kErfSeriesOuter = 10;    // of which the first ones are summed in double-double
constexpr int kErfFractionDepth = 26;  // enough for x >= 2 (truncation error 2.4e-16 relative to erfc, 0.01 ulp of erf)

// |x| < 2: erf x = 2/sqrt(pi) x e^(-y) M(y), y = x^2, M(y) = sum_n (2y)^n / (1 3 5 ... (2n+1)). Every term is
// positive, but near y = 4 the sum is dominated by terms of degree ~4-8, so plain Horner would accumulate a
// rounding error per step (several ulps). The first kErfSeriesOuter steps therefore run in double-double (exact
// FMA products, TwoSum, coefficients as hi + lo); the inner steps carry < 0.5% of the sum. e^(-y) and the final
// products are kept as hi + lo too, so the result is rounded essentially once. y is used rounded, and the rounding
// error ylo is put back to first order: d/dy log(e^-y M) = M'/M - 1 = (1 - M) / (2yM) (from erf' = 2/sqrt(pi)
// e^-y).
llvm::Value* erfSeries(F64& f, llvm::Value* ax) {
  auto term = [](int n) {
    long double c = 1;
    for (int i = 1; i <= n; ++i) c *= 2.0L / (2 * i + 1);
    return c;
  };
  static const std::vector<double> inner = coefficients(kErfSeriesOuter, kErfSeriesTerms - kErfSeriesOuter, term);
  llvm::Value* y = f.mul(ax, ax);
  llvm::Value* ylo = f.fma(ax, ax, f.neg(y));
  Reduced red = reduceLn2(f, f.neg(y), f.c(0.0));
  Pair e = expMantissa(f, red);  // e^(-y) = 2^k (e.hi + e.lo), k in [-6, 0]: scaling is exact
  e = {f.ldexp(e.hi, red.k), f.ldexp(e.lo, red.k)};

  Pair m{f.horner(y, inner), f.c(0.0)};
  for (int n = kErfSeriesOuter - 1; n >= 0; --n) {  // m <- c_n + y m
    double ch = static_cast<double>(term(n));
    double cl = static_cast<double>(term(n) - ch);
    llvm::Value* ph = f.mul(y, m.hi);
    llvm::Value* pl = f.fma(y, m.lo, f.fma(y, m.hi, f.neg(ph)));
    Pair sum = twoSum(f, f.c(ch), ph);
    m = fastTwoSum(f, sum.hi, f.add(sum.lo, f.add(pl, f.c(cl))));
  }

  // em = e^(-y) M (1 + ylo (1 - M) / (2yM)); the correction is skipped where y is too small to matter (or 0).
  llvm::Value* emh = f.mul(e.hi, m.hi);
  llvm::Value* eml = f.add(f.fma(e.hi, m.hi, f.neg(emh)), f.fma(e.hi, m.lo, f.mul(e.lo, m.hi)));
  llvm::Value* slope = f.div(f.sub(f.c(1.0), m.hi), f.mul(f.add(y, y), m.hi));
  llvm::Value* ycorr = f.select(f.b.CreateFCmpOGT(y, f.c(0x1p-60)), f.mul(ylo, slope), f.c(0.0));
  eml = f.fma(emh, ycorr, eml);
  // times 2/sqrt(pi), then x: the last product is a single FMA over the unrounded hi + lo.
  llvm::Value* ch = f.mul(emh, f.c(kTwoOverSqrtPiHi));
  llvm::Value* cl = f.add(f.fma(emh, f.c(kTwoOverSqrtPiHi), f.neg(ch)),
                          f.fma(eml, f.c(kTwoOverSqrtPiHi), f.mul(emh, f.c(kTwoOverSqrtPiLo))));
  return f.fma(ax, ch, f.mul(ax, cl));
}

// 2 <= x <= 6: erf x = 1 - erfc x, erfc x = 2x e^(-x^2) / sqrt(pi) / K, with the even part of Laplace's continued
// fraction K = 2x^2 + 1 - 1*2 / (2x^2 + 5 - 3*4 / (2x^2 + 9 - ...)), evaluated bottom-up with a fixed depth in
// an IR loop. erfc x <= 0.0047 here, so erfc needs only ~2^-46 relative accuracy for erf to be within a fraction
// of an ulp; x^2 is split exactly anyway so that e^(-x^2) is accurate.
llvm::Value* erfFraction(F64& f, llvm::Value* ax) {
  IRBuilder& b = f.b;
  llvm::Value* x = f.clamp(ax, kErfSeriesEnd, 6.0);
  llvm::Value* y = f.mul(x, x);
  llvm::Value* ylo = f.fma(x, x, f.neg(y));
  llvm::Value* y2 = f.add(y, y);
  llvm::Value* e = scaledExp(f, reduceLn2(f, f.neg(y), f.neg(ylo)));

  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* entry = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(b.getContext(), "erf.cf", fn);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b.getContext(), "erf.cf.done", fn);
  llvm::Value* start = f.add(y2, f.c(4.0 * kErfFractionDepth + 1));
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* n = b.CreatePHI(f.t, 2, "erf.n");  // depth, counting down from kErfFractionDepth to 1
  llvm::PHINode* k = b.CreatePHI(f.t, 2, "erf.k");
  n->addIncoming(f.c(kErfFractionDepth), entry);
  k->addIncoming(start, entry);
  // k <- (2x^2 + 4n - 3) - (2n - 1)(2n) / k
  llvm::Value* twoN = f.add(n, n);
  llvm::Value* num = f.mul(f.sub(twoN, f.c(1.0)), twoN);
  llvm::Value* next = f.sub(f.add(y2, f.fma(n, f.c(4.0), f.c(-3.0))), f.div(num, k));
  llvm::Value* n1 = f.sub(n, f.c(1.0));
  n->addIncoming(n1, loop);
  k->addIncoming(next, loop);
  b.CreateCondBr(b.CreateFCmpOGE(n1, f.c(1.0)), loop, done);
  b.SetInsertPoint(done);
  llvm::PHINode* kf = b.CreatePHI(f.t, 1, "erf.k.final");
  kf->addIncoming(next, loop);

  llvm::Value* erfc = f.div(f.mul(f.mul(x, f.c(kTwoOverSqrtPiHi)), e), kf);
  return f.sub(f.c(1.0), erfc);
}

// Odd: erf(-x) = -erf(x) (erf(-0) = -0); erf(+-inf) = +-1 (the fraction's clamp to 6 already rounds to 1).
llvm::Value* erfF64(F64& f, llvm::Value* x) {
  llvm::Value* ax = f.abs(x);
  llvm::Value* series = erfSeries(f, f.clamp(ax, 0.0, kErfSeriesEnd));
  llvm::Value* fraction = erfFraction(f, ax);
  llvm::Value* v = f.select(f.b.CreateFCmpOLT(ax, f.c(kErfSeriesEnd)), series, fraction);
  return f.nanPassThrough(x, f.copysign(v, x));
}

}  // namespace

llvm::Value* expandF64Math(IRBuilder& b, OpKind op, llvm::Value* x) {
  if (!x->getType()->isDoubleTy()) return nullptr;
  // The error-free transformations above must stay exactly as written.
  IRBuilder::FastMathFlagGuard guard(b);
  b.clearFastMathFlags();
  F64 f(b);
  switch (op) {
    case OpKind::Exp: return expF64(f, x);
    case OpKind::Exp2: return exp2F64(f, x);
    case OpKind::Log: return logF64(f, x);
    case OpKind::Log2: return log2F64(f, x);
    case OpKind::Sin: return sinCosF64(f, x, false);
    case OpKind::Cos: return sinCosF64(f, x, true);
    case OpKind::Tanh: return tanhF64(f, x);
    case OpKind::Erf: return erfF64(f, x);
    default: return nullptr;
  }
}

}  // namespace tessera::backends
