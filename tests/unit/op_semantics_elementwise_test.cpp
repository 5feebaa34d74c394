// Per-op semantics of the element-wise ops (docs/IR.md "Element-wise arithmetic"): binary and unary arithmetic,
// fma, cmp and select, on every element type each op accepts, checked against independent C++ references.
#include "OpTestUtil.h"

namespace optest {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// References

int64_t refIntBinary(OpKind op, ScalarKind k, int64_t a, int64_t b) {
  const int w = kindBits(k);
  const bool s = isSignedKind(k);
  const uint64_t ua = unsignedBits(k, a), ub = unsignedBits(k, b);
  switch (op) {
    case OpKind::Add: return wrapInt(k, ua + ub);
    case OpKind::Sub: return wrapInt(k, ua - ub);
    case OpKind::Mul: return wrapInt(k, ua * ub);
    case OpKind::Div:
      if (ub == 0) return s ? -1 : wrapInt(k, ~uint64_t(0));
      if (s) return (a == intMin(k) && b == -1) ? intMin(k) : a / b;
      return wrapInt(k, ua / ub);
    case OpKind::Rem:
      if (ub == 0) return a;
      if (s) return b == -1 ? 0 : a % b;
      return wrapInt(k, ua % ub);
    case OpKind::Min: return s ? std::min(a, b) : wrapInt(k, std::min(ua, ub));
    case OpKind::Max: return s ? std::max(a, b) : wrapInt(k, std::max(ua, ub));
    case OpKind::And: return wrapInt(k, ua & ub);
    case OpKind::Or: return wrapInt(k, ua | ub);
    case OpKind::Xor: return wrapInt(k, ua ^ ub);
    case OpKind::Shl: return ub >= uint64_t(w) ? 0 : wrapInt(k, ua << ub);
    case OpKind::Shr:
      if (s) return ub >= uint64_t(w) ? (a < 0 ? -1 : 0) : a >> ub;
      return ub >= uint64_t(w) ? 0 : wrapInt(k, ua >> ub);
    case OpKind::UMulHi:
      if (w == 32) return wrapInt(k, (ua * ub) >> 32);
      return wrapInt(k, static_cast<uint64_t>((static_cast<unsigned __int128>(ua) * ub) >> 64));
    default: ADD_FAILURE() << "no int reference for " << tessera::ir::opName(op); return 0;
  }
}

double refFloatBinary(OpKind op, ScalarKind k, double a, double b) {
  // f32 and f64 use native IEEE arithmetic; f16/bf16 results are exact (add/sub/mul) or rounded once to 53 bits
  // (div) in double, and rounding that to <= 11 bits again is innocuous.
  if (k == ScalarKind::F32) {
    float fa = static_cast<float>(a), fb = static_cast<float>(b);
    switch (op) {
      case OpKind::Add: return fa + fb;
      case OpKind::Sub: return fa - fb;
      case OpKind::Mul: return fa * fb;
      case OpKind::Div: return fa / fb;
      default: break;
    }
  }
  double r;
  switch (op) {
    case OpKind::Add: r = a + b; break;
    case OpKind::Sub: r = a - b; break;
    case OpKind::Mul: r = a * b; break;
    case OpKind::Div: r = a / b; break;
    case OpKind::Rem: r = std::fmod(a, b); break;  // exact
    case OpKind::Min: r = std::fmin(a, b); break;
    case OpKind::Max: r = std::fmax(a, b); break;
    default: ADD_FAILURE() << "no float reference for " << tessera::ir::opName(op); return 0;
  }
  return k == ScalarKind::F64 ? r : roundTo(k, r);
}

// ---------------------------------------------------------------------------------------------------------------
// Binary ops

struct BinaryCase {
  OpKind op;
  ScalarKind kind;
};

std::string binaryCaseName(const testing::TestParamInfo<BinaryCase>& info) {
  return std::string(tessera::ir::opName(info.param.op)) + "_" + kindName(info.param.kind);
}

std::vector<BinaryCase> binaryCases() {
  std::vector<BinaryCase> cases;
  for (OpKind op : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Min, OpKind::Max})
    for (ScalarKind k : numericKinds()) cases.push_back({op, k});
  for (OpKind op : {OpKind::And, OpKind::Or, OpKind::Xor}) {
    for (ScalarKind k : intKinds()) cases.push_back({op, k});
    cases.push_back({op, ScalarKind::I1});
  }
  for (OpKind op : {OpKind::Shl, OpKind::Shr})
    for (ScalarKind k : intKinds()) cases.push_back({op, k});
  for (ScalarKind k : {ScalarKind::I32, ScalarKind::I64, ScalarKind::U32, ScalarKind::U64})
    cases.push_back({OpKind::UMulHi, k});
  return cases;
}

class BinaryOpTest : public testing::TestWithParam<BinaryCase> {};

// Fills a and b with random operands, salted with the op's interesting corner cases.
void fillBinaryOperands(OpKind op, ScalarKind k, HostBuf& a, HostBuf& b, Rng& rng) {
  const bool divLike = op == OpKind::Div || op == OpKind::Rem;
  for (size_t i = 0; i < a.size(); ++i) {
    if (isFloatKind(k)) {
      double x = randomFloat(k, rng, true), y = randomFloat(k, rng, true);
      if (divLike && i % 9 == 0) y = (i % 2) ? 0.0 : -0.0;
      if ((op == OpKind::Min || op == OpKind::Max) && i % 7 == 0) (i % 2 ? x : y) = NAN;
      a.setFloat(i, x);
      b.setFloat(i, y);
      continue;
    }
    int64_t x = randomInt(k, rng), y = randomInt(k, rng);
    if (divLike && i % 9 == 0) y = 0;
    if (divLike && isSignedKind(k) && i % 11 == 0) {
      x = intMin(k);
      y = -1;
    }
    if (op == OpKind::Shl || op == OpKind::Shr) {
      const int w = kindBits(k);
      // Amounts below the width, exactly the width, above it, and the type's largest value.
      const int64_t picks[] = {static_cast<int64_t>(rng() % w), static_cast<int64_t>(rng() % w), w - 1, w,
                               w + 1 + static_cast<int64_t>(rng() % 8), intMax(k)};
      y = picks[rng() % 6];
    }
    a.setInt(i, x);
    b.setInt(i, y);
  }
}

TEST_P(BinaryOpTest, MatchesReferenceOnEveryShape) {
  const auto [op, k] = GetParam();
  Rng rng(0xB1A5 + static_cast<unsigned>(op) * 131 + static_cast<unsigned>(k));
  for (const auto& shape : elementwiseShapes()) {
    SCOPED_TRACE("shape " + shapeStr(shape));
    HostBuf a(k, kElementwiseCount), b(k, kElementwiseCount);
    fillBinaryOperands(op, k, a, b, rng);
    HostBuf out = runElementwise({&a, &b}, k, shape, kElementwiseCount,
                                 [op](Kernel& kern, const std::vector<Value*>& v) {
                                   return kern.b.binary(op, v[0], v[1]);
                                 });
    int failures = 0;
    for (size_t i = 0; i < a.size() && failures < 8; ++i) {
      if (isFloatKind(k)) {
        double want = refFloatBinary(op, k, a.floatAt(i), b.floatAt(i)), got = out.floatAt(i);
        bool ok = sameFloat(got, want);
        // fmin/fmax may return either zero when comparing +0 with -0.
        if ((op == OpKind::Min || op == OpKind::Max) && want == 0 && got == 0) ok = true;
        if (!ok) {
          ++failures;
          ADD_FAILURE() << kindName(k) << " " << tessera::ir::opName(op) << "(" << fmtDouble(a.floatAt(i)) << ", "
                        << fmtDouble(b.floatAt(i)) << "): expected " << fmtDouble(want) << ", got " << fmtDouble(got);
        }
      } else {
        int64_t want = refIntBinary(op, k, a.intAt(i), b.intAt(i)), got = out.intAt(i);
        if (got != want) {
          ++failures;
          ADD_FAILURE() << kindName(k) << " " << tessera::ir::opName(op) << "(" << a.intAt(i) << ", " << b.intAt(i)
                        << "): expected " << want << ", got " << got;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, BinaryOpTest, testing::ValuesIn(binaryCases()), binaryCaseName);

// The corner cases the spec spells out, written as literal expectations (not via the reference functions).
TEST(BinaryOpCorners, IntegerDivisionAndShiftEdgeCases) {
  struct Case {
    OpKind op;
    ScalarKind k;
    int64_t a, b, want;
  };
  const Case cases[] = {
      {OpKind::Div, ScalarKind::I32, 7, 0, -1},
      {OpKind::Div, ScalarKind::I8, -128, -1, -128},
      {OpKind::Div, ScalarKind::I64, INT64_MIN, -1, INT64_MIN},
      {OpKind::Div, ScalarKind::U16, 5, 0, 0xFFFF},
      {OpKind::Div, ScalarKind::U64, 5, 0, -1},  // all ones
      {OpKind::Div, ScalarKind::I32, -7, 2, -3},
      {OpKind::Rem, ScalarKind::I32, -7, 2, -1},
      {OpKind::Rem, ScalarKind::I32, 7, -2, 1},
      {OpKind::Rem, ScalarKind::I16, -9, 0, -9},
      {OpKind::Rem, ScalarKind::U8, 200, 0, 200},
      {OpKind::Rem, ScalarKind::I32, INT32_MIN, -1, 0},
      {OpKind::Shl, ScalarKind::I32, 1, 32, 0},
      {OpKind::Shl, ScalarKind::U8, 0xFF, 4, 0xF0},
      {OpKind::Shr, ScalarKind::I32, -8, 40, -1},
      {OpKind::Shr, ScalarKind::I32, -8, 1, -4},
      {OpKind::Shr, ScalarKind::U32, 0x80000000LL, 31, 1},
      {OpKind::Shr, ScalarKind::U16, 0x8000, 16, 0},
      {OpKind::Shr, ScalarKind::I8, 64, 8, 0},
      {OpKind::Min, ScalarKind::U32, 0xFFFFFFFFLL, 1, 1},
      {OpKind::Max, ScalarKind::I8, -1, 1, 1},
      {OpKind::UMulHi, ScalarKind::I32, -1, -1, -2},  // 0xFFFFFFFF^2 = 0xFFFFFFFE_00000001
      {OpKind::UMulHi, ScalarKind::U64, -1, 2, 1},
      {OpKind::Add, ScalarKind::I8, 127, 1, -128},
      {OpKind::Mul, ScalarKind::U16, 0x100, 0x100, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(tessera::ir::opName(c.op)) + " " + kindName(c.k) + " " + std::to_string(c.a) + ", " +
                 std::to_string(c.b));
    HostBuf a(c.k, 3), b(c.k, 3);
    for (size_t i = 0; i < 3; ++i) {
      a.setInt(i, c.a);
      b.setInt(i, c.b);
    }
    HostBuf out = runElementwise({&a, &b}, c.k, {4}, 3, [&](Kernel& kern, const std::vector<Value*>& v) {
      return kern.b.binary(c.op, v[0], v[1]);
    });
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(out.intAt(i), wrapInt(c.k, static_cast<uint64_t>(c.want)));
  }
}

TEST(BinaryOpCorners, FloatMinMaxWithNaNReturnTheOtherOperand) {
  for (ScalarKind k : arithFloatKinds()) {
    SCOPED_TRACE(kindName(k));
    HostBuf a(k, 4), b(k, 4);
    const double xs[] = {NAN, 2.5, NAN, -INFINITY}, ys[] = {-3.0, NAN, NAN, NAN};
    for (size_t i = 0; i < 4; ++i) {
      a.setFloat(i, xs[i]);
      b.setFloat(i, ys[i]);
    }
    for (OpKind op : {OpKind::Min, OpKind::Max}) {
      HostBuf out = runElementwise({&a, &b}, k, {4}, 4, [&](Kernel& kern, const std::vector<Value*>& v) {
        return kern.b.binary(op, v[0], v[1]);
      });
      EXPECT_EQ(out.floatAt(0), -3.0);
      EXPECT_EQ(out.floatAt(1), 2.5);
      EXPECT_TRUE(std::isnan(out.floatAt(2)));
      EXPECT_EQ(out.floatAt(3), -INFINITY);
    }
  }
}

TEST(BinaryOpCorners, FloatRoundingIsToNearestEven) {
  // f16: 2048 + 1 is a tie between 2048 and 2050 -> even (2048); 2048 + 3 -> 2052. bf16: 256 + 1 -> 256.
  struct Case {
    ScalarKind k;
    double a, b, want;
  };
  const Case cases[] = {{ScalarKind::F16, 2048, 1, 2048}, {ScalarKind::F16, 2048, 3, 2052},
                        {ScalarKind::BF16, 256, 1, 256},  {ScalarKind::BF16, 256, 3, 260},
                        {ScalarKind::F16, 65504, 32, INFINITY}, {ScalarKind::F32, 16777216.0, 1, 16777216.0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(kindName(c.k)) + " " + fmtDouble(c.a) + " + " + fmtDouble(c.b));
    HostBuf a(c.k, 1), b(c.k, 1);
    a.setFloat(0, c.a);
    b.setFloat(0, c.b);
    HostBuf out = runElementwise({&a, &b}, c.k, {2}, 1, [](Kernel& kern, const std::vector<Value*>& v) {
      return kern.b.binary(OpKind::Add, v[0], v[1]);
    });
    EXPECT_EQ(out.floatAt(0), c.want);
  }
}

// Rank-0 operands: scalar loads, a scalar op, a scalar store.
TEST(BinaryOpScalars, ScalarOperandsWork) {
  for (ScalarKind k : {ScalarKind::I32, ScalarKind::F32, ScalarKind::U8}) {
    SCOPED_TRACE(kindName(k));
    Kernel kern({ptrTo(k), ptrTo(k), ptrTo(k)});
    Value* x = kern.b.load(kern.arg(0));
    Value* y = kern.b.load(kern.arg(1));
    kern.b.store(kern.arg(2), kern.b.binary(OpKind::Sub, x, y));
    HostBuf a(k, 1), b(k, 1), out(k, 1);
    if (isFloatKind(k)) {
      a.setFloat(0, 1.5);
      b.setFloat(0, 4.0);
    } else {
      a.setInt(0, 3);
      b.setInt(0, 10);
    }
    kern.run({a.arg(), b.arg(), out.arg()}, {1, 1, 1});
    if (isFloatKind(k))
      EXPECT_EQ(out.floatAt(0), -2.5);
    else
      EXPECT_EQ(out.intAt(0), refIntBinary(OpKind::Sub, k, 3, 10));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Unary ops

struct UnaryCase {
  OpKind op;
  ScalarKind kind;
};

std::string unaryCaseName(const testing::TestParamInfo<UnaryCase>& info) {
  return std::string(tessera::ir::opName(info.param.op)) + "_" + kindName(info.param.kind);
}

const std::vector<OpKind>& floatMathOps() {
  static const std::vector<OpKind> ops{OpKind::Exp,  OpKind::Exp2, OpKind::Log, OpKind::Log2, OpKind::Sqrt,
                                       OpKind::Rsqrt, OpKind::Sin, OpKind::Cos, OpKind::Tanh, OpKind::Erf};
  return ops;
}

std::vector<UnaryCase> unaryCases() {
  std::vector<UnaryCase> cases;
  for (OpKind op : {OpKind::Neg, OpKind::Abs})
    for (ScalarKind k : numericKinds()) cases.push_back({op, k});
  for (ScalarKind k : intKinds()) cases.push_back({OpKind::Not, k});
  cases.push_back({OpKind::Not, ScalarKind::I1});
  for (OpKind op : {OpKind::Floor, OpKind::Ceil})
    for (ScalarKind k : arithFloatKinds()) cases.push_back({op, k});
  for (OpKind op : floatMathOps())
    for (ScalarKind k : arithFloatKinds()) cases.push_back({op, k});
  return cases;
}

double refFloatMath(OpKind op, double x) {
  switch (op) {
    case OpKind::Exp: return std::exp(x);
    case OpKind::Exp2: return std::exp2(x);
    case OpKind::Log: return std::log(x);
    case OpKind::Log2: return std::log2(x);
    case OpKind::Sqrt: return std::sqrt(x);
    case OpKind::Rsqrt: return 1.0 / std::sqrt(x);
    case OpKind::Sin: return std::sin(x);
    case OpKind::Cos: return std::cos(x);
    case OpKind::Tanh: return std::tanh(x);
    case OpKind::Erf: return std::erf(x);
    case OpKind::Floor: return std::floor(x);
    case OpKind::Ceil: return std::ceil(x);
    case OpKind::Neg: return -x;
    case OpKind::Abs: return std::fabs(x);
    default: ADD_FAILURE() << "no reference for " << tessera::ir::opName(op); return 0;
  }
}

class UnaryOpTest : public testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryOpTest, MatchesReferenceOnEveryShape) {
  const auto [op, k] = GetParam();
  const bool exact = op == OpKind::Neg || op == OpKind::Abs || op == OpKind::Floor || op == OpKind::Ceil ||
                     op == OpKind::Not;
  // "Computed in double precision and rounded to the type": allow one ulp of the result type for libm slack.
  const uint64_t tolerance = exact ? 0 : 1;
  Rng rng(0x0A7 + static_cast<unsigned>(op) * 977 + static_cast<unsigned>(k));
  for (const auto& shape : elementwiseShapes()) {
    SCOPED_TRACE("shape " + shapeStr(shape));
    HostBuf a(k, kElementwiseCount);
    for (size_t i = 0; i < a.size(); ++i) {
      if (isFloatKind(k))
        a.setFloat(i, i % 5 == 0 ? roundTo(k, randomFloat(k, rng, true) + 0.25) : randomFloat(k, rng, true));
      else
        a.setInt(i, randomInt(k, rng));
    }
    HostBuf out = runElementwise({&a}, k, shape, kElementwiseCount, [op](Kernel& kern, const std::vector<Value*>& v) {
      return kern.b.unary(op, v[0]);
    });
    int failures = 0;
    for (size_t i = 0; i < a.size() && failures < 8; ++i) {
      if (isFloatKind(k)) {
        double x = a.floatAt(i), got = out.floatAt(i);
        double want = roundTo(k, refFloatMath(op, x));
        bool ok = tolerance == 0 ? sameFloat(got, want)
                                 : (sameFloat(got, want) || ulpDistance(k, got, want) <= tolerance);
        if (!ok) {
          ++failures;
          ADD_FAILURE() << kindName(k) << " " << tessera::ir::opName(op) << "(" << fmtDouble(x) << "): expected "
                        << fmtDouble(want) << ", got " << fmtDouble(got);
        }
      } else {
        int64_t x = a.intAt(i), got = out.intAt(i);
        uint64_t ux = unsignedBits(k, x);
        int64_t want = op == OpKind::Neg   ? wrapInt(k, uint64_t(0) - ux)
                       : op == OpKind::Not ? wrapInt(k, ~ux)
                                           : (isSignedKind(k) && x < 0 ? wrapInt(k, uint64_t(0) - ux) : x);
        if (got != want) {
          ++failures;
          ADD_FAILURE() << kindName(k) << " " << tessera::ir::opName(op) << "(" << x << "): expected " << want
                        << ", got " << got;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, UnaryOpTest, testing::ValuesIn(unaryCases()), unaryCaseName);

TEST(UnaryOpCorners, AbsOfMinWrapsAndNotOfBool) {
  for (ScalarKind k : signedKinds()) {
    SCOPED_TRACE(kindName(k));
    HostBuf a(k, 2);
    a.setInt(0, intMin(k));
    a.setInt(1, -5);
    HostBuf out = runElementwise({&a}, k, {2}, 2, [](Kernel& kern, const std::vector<Value*>& v) {
      return kern.b.unary(OpKind::Abs, v[0]);
    });
    EXPECT_EQ(out.intAt(0), intMin(k));
    EXPECT_EQ(out.intAt(1), 5);
  }
  HostBuf flags(ScalarKind::I1, 2);
  flags.setInt(0, 0);
  flags.setInt(1, 1);
  HostBuf out = runElementwise({&flags}, ScalarKind::I1, {2}, 2, [](Kernel& kern, const std::vector<Value*>& v) {
    return kern.b.unary(OpKind::Not, v[0]);
  });
  EXPECT_EQ(out.bitsAt(0), 1u);  // stored as the byte 1, not 0xFF
  EXPECT_EQ(out.bitsAt(1), 0u);
}

TEST(UnaryOpCorners, FloatSpecialValues) {
  struct Case {
    OpKind op;
    double x, want;
  };
  const Case cases[] = {{OpKind::Sqrt, -1.0, NAN},      {OpKind::Log, 0.0, -INFINITY}, {OpKind::Log, -1.0, NAN},
                        {OpKind::Exp, -INFINITY, 0.0},  {OpKind::Rsqrt, 0.0, INFINITY}, {OpKind::Floor, -0.5, -1.0},
                        {OpKind::Ceil, -0.5, -0.0},     {OpKind::Neg, 0.0, -0.0},       {OpKind::Abs, -0.0, 0.0},
                        {OpKind::Exp2, 3.0, 8.0},       {OpKind::Tanh, INFINITY, 1.0},  {OpKind::Erf, -INFINITY, -1.0},
                        {OpKind::Log2, 1024.0, 10.0},   {OpKind::Sqrt, 16.0, 4.0}};
  for (ScalarKind k : arithFloatKinds()) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(kindName(k)) + " " + tessera::ir::opName(c.op) + "(" + fmtDouble(c.x) + ")");
      HostBuf a(k, 1);
      a.setFloat(0, c.x);
      HostBuf out = runElementwise({&a}, k, {2}, 1, [&](Kernel& kern, const std::vector<Value*>& v) {
        return kern.b.unary(c.op, v[0]);
      });
      EXPECT_TRUE(sameFloat(out.floatAt(0), c.want)) << "got " << fmtDouble(out.floatAt(0));
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// fma

TEST(FmaTest, MatchesFusedMultiplyAdd) {
  for (ScalarKind k : arithFloatKinds()) {
    SCOPED_TRACE(kindName(k));
    Rng rng(0xF3A + static_cast<unsigned>(k));
    for (const auto& shape : elementwiseShapes()) {
      SCOPED_TRACE("shape " + shapeStr(shape));
      HostBuf a(k, kElementwiseCount), b(k, kElementwiseCount), c(k, kElementwiseCount);
      for (size_t i = 0; i < a.size(); ++i) {
        a.setFloat(i, randomFloat(k, rng, true));
        b.setFloat(i, randomFloat(k, rng, true));
        c.setFloat(i, randomFloat(k, rng, true));
      }
      HostBuf out = runElementwise({&a, &b, &c}, k, shape, kElementwiseCount,
                                   [](Kernel& kern, const std::vector<Value*>& v) {
                                     return kern.b.fma(v[0], v[1], v[2]);
                                   });
      int failures = 0;
      for (size_t i = 0; i < a.size() && failures < 8; ++i) {
        // f32: native fused fma. Narrower types: the product is exact in double, so one double fma then one
        // rounding to the type (innocuous double rounding).
        double want = k == ScalarKind::F32
                          ? std::fma(static_cast<float>(a.floatAt(i)), static_cast<float>(b.floatAt(i)),
                                     static_cast<float>(c.floatAt(i)))
                          : std::fma(a.floatAt(i), b.floatAt(i), c.floatAt(i));
        if (k != ScalarKind::F64) want = roundTo(k, want);
        if (!sameFloat(out.floatAt(i), want)) {
          ++failures;
          ADD_FAILURE() << "fma(" << fmtDouble(a.floatAt(i)) << ", " << fmtDouble(b.floatAt(i)) << ", "
                        << fmtDouble(c.floatAt(i)) << "): expected " << fmtDouble(want) << ", got "
                        << fmtDouble(out.floatAt(i));
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// cmp

const char* const kPreds[] = {"eq", "ne", "lt", "le", "gt", "ge"};

template <class T>
bool applyPred(const std::string& pred, T a, T b) {
  if (pred == "eq") return a == b;
  if (pred == "ne") return a != b;
  if (pred == "lt") return a < b;
  if (pred == "le") return a <= b;
  if (pred == "gt") return a > b;
  return a >= b;
}

TEST(CmpTest, AllPredicatesOnEveryType) {
  std::vector<ScalarKind> kinds = numericKinds();
  kinds.push_back(ScalarKind::I1);
  for (ScalarKind k : kinds) {
    Rng rng(0xC4B + static_cast<unsigned>(k));
    HostBuf a(k, kElementwiseCount), b(k, kElementwiseCount);
    for (size_t i = 0; i < a.size(); ++i) {
      if (isFloatKind(k)) {
        double x = randomFloat(k, rng, true);
        a.setFloat(i, x);
        b.setFloat(i, i % 4 == 0 ? x : randomFloat(k, rng, true));  // many equal pairs
      } else {
        int64_t x = randomInt(k, rng);
        a.setInt(i, x);
        b.setInt(i, i % 4 == 0 ? x : randomInt(k, rng));
      }
    }
    for (const char* pred : kPreds) {
      for (const auto& shape : elementwiseShapes()) {
        SCOPED_TRACE(std::string(kindName(k)) + " " + pred + " shape " + shapeStr(shape));
        HostBuf out = runElementwise({&a, &b}, ScalarKind::I1, shape, kElementwiseCount,
                                     [pred](Kernel& kern, const std::vector<Value*>& v) {
                                       return kern.b.cmp(pred, v[0], v[1]);
                                     });
        int failures = 0;
        for (size_t i = 0; i < a.size() && failures < 8; ++i) {
          bool want;
          if (isFloatKind(k))
            want = applyPred(pred, a.floatAt(i), b.floatAt(i));  // C++ float compares: NaN false except !=
          else if (isSignedKind(k))
            want = applyPred(pred, a.intAt(i), b.intAt(i));
          else
            want = applyPred(pred, unsignedBits(k, a.intAt(i)), unsignedBits(k, b.intAt(i)));
          if (out.bitsAt(i) != (want ? 1u : 0u)) {
            ++failures;
            ADD_FAILURE() << "cmp " << pred << " " << kindName(k) << " (" << a.asDouble(i) << ", " << b.asDouble(i)
                          << "): expected " << want << ", got byte " << out.bitsAt(i);
          }
        }
      }
    }
  }
}

TEST(CmpTest, NaNComparesFalseExceptNe) {
  for (ScalarKind k : arithFloatKinds()) {
    HostBuf a(k, 3), b(k, 3);
    a.setFloat(0, NAN);
    b.setFloat(0, 1.0);
    a.setFloat(1, 1.0);
    b.setFloat(1, NAN);
    a.setFloat(2, NAN);
    b.setFloat(2, NAN);
    for (const char* pred : kPreds) {
      SCOPED_TRACE(std::string(kindName(k)) + " " + pred);
      HostBuf out = runElementwise({&a, &b}, ScalarKind::I1, {4}, 3, [pred](Kernel& kern, const std::vector<Value*>& v) {
        return kern.b.cmp(pred, v[0], v[1]);
      });
      uint64_t want = std::string(pred) == "ne" ? 1 : 0;
      for (size_t i = 0; i < 3; ++i) EXPECT_EQ(out.bitsAt(i), want) << "element " << i;
    }
  }
}

TEST(CmpTest, PointersCompareAsAddresses) {
  // Two pointer tiles into one buffer: base + offsA vs base + offsB; ordering follows the offsets.
  const std::vector<int64_t> shape{8, 8};
  Kernel kern({ptrTo(ScalarKind::F32), ptrTo(ScalarKind::I32), ptrTo(ScalarKind::I32), ptrTo(ScalarKind::I1)});
  Value* idx = kern.linearIndex(shape);
  Value* offA = kern.b.load(kern.ptrs(kern.arg(1), idx));
  Value* offB = kern.b.load(kern.ptrs(kern.arg(2), idx));
  Value* pa = kern.ptrs(kern.arg(0), offA);
  Value* pb = kern.ptrs(kern.arg(0), offB);
  Value* outPtrs = kern.ptrs(kern.arg(3), idx);
  std::vector<Value*> results;
  for (const char* pred : kPreds) results.push_back(kern.b.cmp(pred, pa, pb));
  // Store pred p's result at out[p*64 + i].
  for (size_t p = 0; p < results.size(); ++p)
    kern.b.store(kern.b.addptr(outPtrs, kern.tileI32(static_cast<int64_t>(p) * 64, shape)), results[p]);
  HostBuf data(ScalarKind::F32, 64), offsA(ScalarKind::I32, 64), offsB(ScalarKind::I32, 64), out(ScalarKind::I1, 6 * 64);
  Rng rng(77);
  for (size_t i = 0; i < 64; ++i) {
    offsA.setInt(i, static_cast<int64_t>(rng() % 64));
    offsB.setInt(i, i % 3 == 0 ? offsA.intAt(i) : static_cast<int64_t>(rng() % 64));
  }
  kern.run({data.arg(), offsA.arg(), offsB.arg(), out.arg()}, {1, 1, 1});
  for (size_t p = 0; p < 6; ++p)
    for (size_t i = 0; i < 64; ++i)
      EXPECT_EQ(out.bitsAt(p * 64 + i), applyPred(kPreds[p], offsA.intAt(i), offsB.intAt(i)) ? 1u : 0u)
          << kPreds[p] << " offsets " << offsA.intAt(i) << ", " << offsB.intAt(i);
}

// ---------------------------------------------------------------------------------------------------------------
// select

TEST(SelectTest, TileConditionOnEveryType) {
  std::vector<ScalarKind> kinds = numericKinds();
  for (ScalarKind k : {ScalarKind::I1, ScalarKind::F8E4M3, ScalarKind::F8E5M2}) kinds.push_back(k);
  for (ScalarKind k : kinds) {
    Rng rng(0x5E1 + static_cast<unsigned>(k));
    HostBuf cond(ScalarKind::I1, kElementwiseCount), a(k, kElementwiseCount), b(k, kElementwiseCount);
    for (size_t i = 0; i < a.size(); ++i) {
      cond.setInt(i, static_cast<int64_t>(rng() & 1));
      if (isFloatKind(k)) {
        a.setFloat(i, randomFloat(k, rng, true));
        b.setFloat(i, randomFloat(k, rng, true));
      } else {
        a.setInt(i, randomInt(k, rng));
        b.setInt(i, randomInt(k, rng));
      }
    }
    for (const auto& shape : elementwiseShapes()) {
      SCOPED_TRACE(std::string(kindName(k)) + " shape " + shapeStr(shape));
      HostBuf out = runElementwise({&cond, &a, &b}, k, shape, kElementwiseCount,
                                   [](Kernel& kern, const std::vector<Value*>& v) {
                                     return kern.b.select(v[0], v[1], v[2]);
                                   });
      int failures = 0;
      for (size_t i = 0; i < a.size() && failures < 8; ++i) {
        const HostBuf& src = cond.intAt(i) ? a : b;
        bool ok = isFloatKind(k) ? sameFloat(out.floatAt(i), src.floatAt(i)) : out.intAt(i) == src.intAt(i);
        if (!ok) {
          ++failures;
          ADD_FAILURE() << "select(" << cond.intAt(i) << ", " << a.asDouble(i) << ", " << b.asDouble(i) << ") gave "
                        << out.asDouble(i);
        }
      }
    }
  }
}

TEST(SelectTest, PointerTiles) {
  // Chooses per element between pointers into two buffers, then loads through the chosen pointers.
  Kernel kern({ptrTo(ScalarKind::I1), ptrTo(ScalarKind::F32), ptrTo(ScalarKind::F32), ptrTo(ScalarKind::F32)});
  Value* idx = kern.linearIndex({4, 4});
  Value* c = kern.b.load(kern.ptrs(kern.arg(0), idx));
  Value* p = kern.b.select(c, kern.ptrs(kern.arg(1), idx), kern.ptrs(kern.arg(2), idx));
  kern.b.store(kern.ptrs(kern.arg(3), idx), kern.b.load(p));
  HostBuf cond(ScalarKind::I1, 16), a(ScalarKind::F32, 16), b(ScalarKind::F32, 16), out(ScalarKind::F32, 16);
  for (size_t i = 0; i < 16; ++i) {
    cond.setInt(i, (i * 7) % 3 == 0);
    a.setFloat(i, static_cast<double>(i));
    b.setFloat(i, -static_cast<double>(i) - 1);
  }
  kern.run({cond.arg(), a.arg(), b.arg(), out.arg()}, {1, 1, 1});
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(out.floatAt(i), cond.intAt(i) ? a.floatAt(i) : b.floatAt(i));
}

TEST(SelectTest, ScalarConditionWithScalarValues) {
  Kernel kern({Type::i32(), ptrTo(ScalarKind::F64), ptrTo(ScalarKind::F64), ptrTo(ScalarKind::F64)});
  Value* c = kern.b.cmp("ne", kern.arg(0), kern.i32(0));
  Value* x = kern.b.load(kern.arg(1));
  Value* y = kern.b.load(kern.arg(2));
  kern.b.store(kern.arg(3), kern.b.select(c, x, y));
  HostBuf a(ScalarKind::F64, 1), b(ScalarKind::F64, 1), out(ScalarKind::F64, 1);
  a.setFloat(0, 1.25);
  b.setFloat(0, -7.5);
  kern.run({int64_t(1), a.arg(), b.arg(), out.arg()}, {1, 1, 1});
  EXPECT_EQ(out.floatAt(0), 1.25);
  kern.run({int64_t(0), a.arg(), b.arg(), out.arg()}, {1, 1, 1});
  EXPECT_EQ(out.floatAt(0), -7.5);
}

}  // namespace
}  // namespace optest
