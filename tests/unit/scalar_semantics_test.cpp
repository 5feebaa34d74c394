// The IR's scalar semantics (ir/FloatFormats.h, ir/IntegerSemantics.h, ir/FloatSemantics.h, Type::storageBytes):
// the float formats bit for bit, the integer wrap/division/shift rules at their edges, and that constant folding
// and the interpreter, which both compute with these rules, agree with them op by op.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "backends/interpreter/Interpreter.h"
#include "ir/Builder.h"
#include "ir/FloatFormats.h"
#include "ir/FloatSemantics.h"
#include "ir/IntegerSemantics.h"
#include "transforms/PassManager.h"

namespace {

using namespace tessera;
using namespace tessera::ir;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Type S(ScalarKind k) { return Type::scalar(k); }

// ---------------------------------------------------------------- float formats

TEST(FloatFormats, EveryF16PatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    double v = decodeF16(static_cast<uint16_t>(bits));
    bool isNaN = (bits & 0x7C00) == 0x7C00 && (bits & 0x3FF) != 0;
    ASSERT_EQ(std::isnan(v), isNaN) << std::hex << bits;
    if (isNaN) {
      EXPECT_EQ(encodeF16(v) & 0x7FFF, 0x7E00) << std::hex << bits;  // canonical quiet NaN
    } else {
      ASSERT_EQ(encodeF16(v), bits) << std::hex << bits << " decodes to " << v;
      ASSERT_EQ(roundToF16(v), v);
    }
  }
}

TEST(FloatFormats, EveryBF16AndFP8PatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    double v = decodeBF16(static_cast<uint16_t>(bits));
    if (!std::isnan(v)) {
      ASSERT_EQ(encodeBF16(v), bits) << std::hex << bits;
    }
    // bf16 is the top half of an f32.
    uint32_t f32 = bits << 16;
    float asFloat;
    std::memcpy(&asFloat, &f32, 4);
    if (!std::isnan(v)) {
      ASSERT_EQ(v, static_cast<double>(asFloat));
    }
  }
  for (uint32_t bits = 0; bits <= 0xFF; ++bits) {
    double e4 = decodeF8E4M3(static_cast<uint8_t>(bits));
    EXPECT_EQ(std::isnan(e4), (bits & 0x7F) == 0x7F) << bits;
    EXPECT_FALSE(std::isinf(e4));
    if (!std::isnan(e4)) {
      EXPECT_EQ(encodeF8E4M3(e4), bits) << bits;
    }
    double e5 = decodeF8E5M2(static_cast<uint8_t>(bits));
    if (!std::isnan(e5)) {
      EXPECT_EQ(encodeF8E5M2(e5), bits) << bits;
    }
  }
}

TEST(FloatFormats, F16RoundsToNearestEven) {
  const double ulp = std::ldexp(1.0, -10);  // at 1.0
  EXPECT_EQ(roundToF16(1.0 + ulp / 2), 1.0);                 // tie, 1.0 is even
  EXPECT_EQ(roundToF16(1.0 + 3 * ulp / 2), 1.0 + 2 * ulp);   // tie, rounds up to even
  EXPECT_EQ(roundToF16(1.0 + ulp / 2 + 1e-9), 1.0 + ulp);    // above the tie
  EXPECT_EQ(roundToF16(-(1.0 + ulp / 2)), -1.0);
  EXPECT_EQ(roundToF16(65504.0), 65504.0);
  EXPECT_EQ(roundToF16(65519.0), 65504.0);  // below the overflow threshold
  EXPECT_EQ(roundToF16(65520.0), kInf);     // the tie rounds to "even" 2^16, i.e. overflows
  EXPECT_EQ(roundToF16(-1e10), -kInf);
  EXPECT_EQ(encodeF16(-0.0), 0x8000);
  EXPECT_EQ(encodeF16(kInf), 0x7C00);
  EXPECT_EQ(encodeF16(1.0), 0x3C00);
  EXPECT_EQ(encodeF16(0.1), 0x2E66);
}

TEST(FloatFormats, F16Subnormals) {
  const double tiny = std::ldexp(1.0, -24);  // smallest subnormal
  EXPECT_EQ(encodeF16(tiny), 0x0001);
  EXPECT_EQ(decodeF16(0x03FF), std::ldexp(1023.0, -24));  // largest subnormal
  EXPECT_EQ(decodeF16(0x0400), std::ldexp(1.0, -14));     // smallest normal
  EXPECT_EQ(roundToF16(tiny / 2), 0.0);                   // tie with zero: zero is even
  EXPECT_EQ(roundToF16(tiny * 1.5), tiny * 2);            // tie between 1 and 2 quanta: 2 is even
  EXPECT_EQ(roundToF16(tiny * 0.75), tiny);
  EXPECT_TRUE(std::signbit(roundToF16(-tiny / 4)));       // underflow keeps the sign
}

TEST(FloatFormats, BF16Rounding) {
  const double ulp = std::ldexp(1.0, -7);
  EXPECT_EQ(roundToBF16(1.0 + ulp / 2), 1.0);
  EXPECT_EQ(roundToBF16(1.0 + 3 * ulp / 2), 1.0 + 2 * ulp);
  EXPECT_EQ(encodeBF16(1.0), 0x3F80);
  EXPECT_EQ(roundToBF16(1e39), kInf);
  EXPECT_EQ(roundToBF16(std::ldexp(1.0, -133)), std::ldexp(1.0, -133));  // smallest bf16 subnormal
}

TEST(FloatFormats, FP8SaturatesAndKeepsNaN) {
  EXPECT_EQ(decodeF8E4M3(0x7E), 448.0);
  EXPECT_EQ(decodeF8E4M3(0x08), std::ldexp(1.0, -6));  // smallest normal
  EXPECT_EQ(decodeF8E4M3(0x01), std::ldexp(1.0, -9));  // smallest subnormal
  EXPECT_EQ(roundToF8E4M3(500.0), 448.0);
  EXPECT_EQ(roundToF8E4M3(1e30), 448.0);
  EXPECT_EQ(roundToF8E4M3(-kInf), -448.0);
  EXPECT_EQ(encodeF8E4M3(kNaN), 0x7F);
  EXPECT_TRUE(std::isnan(roundToF8E4M3(kNaN)));
  EXPECT_EQ(roundToF8E4M3(1.0625), 1.0);  // tie between 1.0 and 1.125
  EXPECT_EQ(roundToF8E4M3(1.1875), 1.25);

  EXPECT_EQ(decodeF8E5M2(0x7B), 57344.0);
  EXPECT_EQ(decodeF8E5M2(0x7C), kInf);
  EXPECT_TRUE(std::isnan(decodeF8E5M2(0x7F)));
  EXPECT_EQ(roundToF8E5M2(1e6), 57344.0);
  EXPECT_EQ(roundToF8E5M2(kInf), 57344.0);  // conversions saturate, even from infinity...
  EXPECT_EQ(encodeF8E5M2(-kInf), 0xFC);     // ...but an infinity already of the type is stored as one
  EXPECT_EQ(encodeF8E5M2(-1e6), 0xFB);
  EXPECT_TRUE(std::isnan(roundToF8E5M2(kNaN)));
  EXPECT_EQ(decodeF8E5M2(0x01), std::ldexp(1.0, -16));
}

TEST(FloatFormats, TF32Rounding) {
  EXPECT_EQ(roundF32ToTF32(1.0 + std::ldexp(1.0, -11)), 1.0);                         // tie to even
  EXPECT_EQ(roundF32ToTF32(1.0 + 3 * std::ldexp(1.0, -11)), 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(roundF32ToTF32(1.0 + std::ldexp(1.0, -12)), 1.0);
  EXPECT_EQ(roundF32ToTF32(kInf), kInf);
}

TEST(FloatFormats, NarrowFormatFieldsMatchTheEncodings) {
  for (ScalarKind k : {ScalarKind::F16, ScalarKind::BF16, ScalarKind::F8E4M3, ScalarKind::F8E5M2}) {
    const NarrowFloatFormat& f = narrowFloatFormat(k);
    const int bits = 1 + f.exponentBits + f.mantissaBits;
    EXPECT_EQ(bits, S(k).bitWidth()) << scalarKindName(k);
    EXPECT_EQ(encodeFloat(k, f.maxFinite), encodeFloat(k, roundToFloat(k, f.maxFinite))) << scalarKindName(k);
    EXPECT_EQ(decodeFloat(k, encodeFloat(k, f.maxFinite)), f.maxFinite) << scalarKindName(k);
    EXPECT_EQ(encodeFloat(k, kNaN), f.nanBits) << scalarKindName(k);
    EXPECT_EQ(decodeFloat(k, 1), std::ldexp(1.0, 1 - f.bias - f.mantissaBits)) << scalarKindName(k);  // subnormal
    EXPECT_EQ(std::isinf(decodeFloat(k, ((1u << f.exponentBits) - 1) << f.mantissaBits)), f.hasInfinity);
    EXPECT_EQ(roundToFloat(k, 2 * f.maxFinite), f.saturates ? f.maxFinite : kInf) << scalarKindName(k);
  }
}

TEST(FloatFormats, RunTimeKindDispatch) {
  EXPECT_EQ(roundToFloat(ScalarKind::F32, 0.1), static_cast<double>(0.1f));
  EXPECT_EQ(roundToFloat(ScalarKind::F64, 0.1), 0.1);
  EXPECT_EQ(roundToFloat(ScalarKind::F16, 0.1), roundToF16(0.1));
  EXPECT_EQ(encodeFloat(ScalarKind::F32, 1.0), 0x3F800000u);
  EXPECT_EQ(encodeFloat(ScalarKind::BF16, 1.0), 0x3F80u);
  EXPECT_EQ(encodeFloat(ScalarKind::F64, -2.0), 0xC000000000000000u);
  EXPECT_EQ(decodeFloat(ScalarKind::F8E4M3, 0x7E), 448.0);
  EXPECT_EQ(decodeFloat(ScalarKind::F16, 0x3C00), 1.0);
}

TEST(FloatFormats, IntToFloatRoundsOnce) {
  // 2^60 + 2^36 + 1 lies just above the midpoint of two f32 values; via double it would first become the
  // midpoint (2^60 + 2^36) and then round to even (2^60).
  const int64_t v = (int64_t(1) << 60) + (int64_t(1) << 36) + 1;
  EXPECT_EQ(intToFloat(v, false, ScalarKind::F32), std::ldexp(1.0, 60) + std::ldexp(1.0, 37));
  EXPECT_EQ(intToFloat(-v, false, ScalarKind::F32), -(std::ldexp(1.0, 60) + std::ldexp(1.0, 37)));
  EXPECT_EQ(intToFloat(-1, true, ScalarKind::F64), std::ldexp(1.0, 64));  // u64 all ones
  EXPECT_EQ(intToFloat(-1, false, ScalarKind::F16), -1.0);
  EXPECT_EQ(intToFloat(65519, false, ScalarKind::F16), 65504.0);
  EXPECT_EQ(intToFloat(70000, false, ScalarKind::F16), kInf);
  EXPECT_EQ(intToFloat(1000, false, ScalarKind::F8E4M3), 448.0);  // fp8 saturates
}

// ---------------------------------------------------------------- storage sizes

TEST(StorageBytes, EveryElementIsWholeBytes) {
  EXPECT_EQ(Type::i1().storageBytes(), 1);
  EXPECT_EQ(S(ScalarKind::F8E4M3).storageBytes(), 1);
  EXPECT_EQ(S(ScalarKind::U16).storageBytes(), 2);
  EXPECT_EQ(S(ScalarKind::BF16).storageBytes(), 2);
  EXPECT_EQ(Type::f32().storageBytes(), 4);
  EXPECT_EQ(S(ScalarKind::F64).storageBytes(), 8);
  EXPECT_EQ(Type::ptr(Type::f16()).storageBytes(), 8);
  EXPECT_EQ(Type::tile({4, 8}, Type::f16()).storageBytes(), 2);  // of the element
}

// ---------------------------------------------------------------- integer rules

TEST(IntegerSemantics, WrapToCanonicalForm) {
  EXPECT_EQ(IntFormat(S(ScalarKind::I8)).wrap(200), -56);
  EXPECT_EQ(IntFormat(S(ScalarKind::U8)).wrap(static_cast<uint64_t>(-1)), 255);
  EXPECT_EQ(IntFormat(Type::i1()).wrap(3), 1);
  EXPECT_EQ(IntFormat(S(ScalarKind::U64)).wrap(~uint64_t(0)), -1);  // u64 keeps its bit pattern
  EXPECT_EQ(IntFormat(Type::i32()).wrap(uint64_t(1) << 32), 0);
  EXPECT_EQ(IntFormat(Type::ptr(Type::f32())).wrap(~uint64_t(0)), -1);  // addresses are 64-bit
  EXPECT_EQ(IntFormat(S(ScalarKind::I16)).minValue(), -32768);
  EXPECT_EQ(IntFormat(S(ScalarKind::I16)).maxValue(), 32767);
  EXPECT_EQ(IntFormat(S(ScalarKind::U16)).maxValue(), 65535);
  EXPECT_EQ(IntFormat(S(ScalarKind::I64)).minValue(), std::numeric_limits<int64_t>::min());
}

int64_t binary(OpKind kind, ScalarKind type, int64_t a, int64_t b) {
  std::optional<int64_t> r = evalIntBinary(kind, S(type), a, b);
  EXPECT_TRUE(r.has_value()) << opName(kind) << " on " << scalarKindName(type);
  return r.value_or(0);
}

TEST(IntegerSemantics, ArithmeticWraps) {
  EXPECT_EQ(binary(OpKind::Add, ScalarKind::I8, 127, 1), -128);
  EXPECT_EQ(binary(OpKind::Sub, ScalarKind::U8, 0, 1), 255);
  EXPECT_EQ(binary(OpKind::Mul, ScalarKind::I32, 65536, 65536), 0);
  EXPECT_EQ(binary(OpKind::Mul, ScalarKind::I64, std::numeric_limits<int64_t>::max(), 2), -2);
}

TEST(IntegerSemantics, DivisionAndRemainderEdges) {
  EXPECT_EQ(binary(OpKind::Div, ScalarKind::I32, 7, 0), -1);
  EXPECT_EQ(binary(OpKind::Div, ScalarKind::U32, 7, 0), 0xFFFFFFFF);
  EXPECT_EQ(binary(OpKind::Div, ScalarKind::U64, 7, 0), -1);  // all ones
  EXPECT_EQ(binary(OpKind::Div, ScalarKind::I8, -128, -1), -128);
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(binary(OpKind::Div, ScalarKind::I64, min64, -1), min64);
  EXPECT_EQ(binary(OpKind::Div, ScalarKind::I32, -7, 2), -3);  // toward zero
  EXPECT_EQ(binary(OpKind::Div, ScalarKind::U8, 255, 2), 127);
  EXPECT_EQ(binary(OpKind::Rem, ScalarKind::I32, -7, 2), -1);  // sign of the dividend
  EXPECT_EQ(binary(OpKind::Rem, ScalarKind::I32, -7, 0), -7);
  EXPECT_EQ(binary(OpKind::Rem, ScalarKind::I64, min64, -1), 0);
  EXPECT_EQ(binary(OpKind::Rem, ScalarKind::U64, -1, 10), 5);  // 2^64 - 1 = 18446744073709551615
}

TEST(IntegerSemantics, MinMaxBySignedness) {
  EXPECT_EQ(binary(OpKind::Min, ScalarKind::I32, -1, 1), -1);
  EXPECT_EQ(binary(OpKind::Min, ScalarKind::U64, -1, 1), 1);  // -1 is 2^64 - 1
  EXPECT_EQ(binary(OpKind::Max, ScalarKind::U64, -1, 1), -1);
}

TEST(IntegerSemantics, ShiftsAtAndBeyondTheWidth) {
  EXPECT_EQ(binary(OpKind::Shl, ScalarKind::I32, 1, 31), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(binary(OpKind::Shl, ScalarKind::I32, 1, 32), 0);
  EXPECT_EQ(binary(OpKind::Shl, ScalarKind::U8, 0xFF, 4), 0xF0);
  EXPECT_EQ(binary(OpKind::Shr, ScalarKind::I8, -128, 7), -1);  // arithmetic
  EXPECT_EQ(binary(OpKind::Shr, ScalarKind::I8, -128, 100), -1);
  EXPECT_EQ(binary(OpKind::Shr, ScalarKind::I8, 64, 100), 0);
  EXPECT_EQ(binary(OpKind::Shr, ScalarKind::U8, 0x80, 7), 1);  // logical
  EXPECT_EQ(binary(OpKind::Shr, ScalarKind::U64, -1, 63), 1);
  EXPECT_EQ(binary(OpKind::Shl, ScalarKind::I32, 1, -1), 0);  // a negative amount reads as a huge one
  EXPECT_EQ(evalIntBinary(OpKind::Shl, Type::i1(), 1, 0), std::nullopt);
  EXPECT_FALSE(intBinaryDefined(OpKind::Shr, Type::i1()));
}

TEST(IntegerSemantics, MulHigh) {
  EXPECT_EQ(binary(OpKind::UMulHi, ScalarKind::U32, 0xFFFFFFFF, 0xFFFFFFFF), 0xFFFFFFFE);
  EXPECT_EQ(binary(OpKind::UMulHi, ScalarKind::I32, -1, -1), -2);  // unsigned product, wrapped to i32
  EXPECT_EQ(binary(OpKind::UMulHi, ScalarKind::U64, -1, 2), 1);
  EXPECT_EQ(evalIntBinary(OpKind::UMulHi, S(ScalarKind::I16), 1, 1), std::nullopt);
  EXPECT_EQ(evalIntBinary(OpKind::Exp, Type::i32(), 1, 1), std::nullopt);  // not a binary integer op
}

TEST(IntegerSemantics, UnaryOps) {
  EXPECT_EQ(evalIntUnary(OpKind::Neg, S(ScalarKind::I8), -128), -128);
  EXPECT_EQ(evalIntUnary(OpKind::Abs, S(ScalarKind::I8), -128), -128);  // abs(MIN) wraps
  EXPECT_EQ(evalIntUnary(OpKind::Abs, S(ScalarKind::U64), -1), -1);    // unsigned: identity
  EXPECT_EQ(evalIntUnary(OpKind::Neg, S(ScalarKind::U8), 1), 255);
  EXPECT_EQ(evalIntUnary(OpKind::Not, Type::i1(), 1), 0);
  EXPECT_EQ(evalIntUnary(OpKind::Not, S(ScalarKind::U16), 0), 65535);
  EXPECT_EQ(evalIntUnary(OpKind::Exp, Type::i32(), 1), std::nullopt);
}

TEST(IntegerSemantics, FloatToIntTruncatesAndSaturates) {
  const IntFormat i8(S(ScalarKind::I8)), u8(S(ScalarKind::U8)), i64(S(ScalarKind::I64)), u64(S(ScalarKind::U64));
  EXPECT_EQ(floatToInt(-2.9, i8), -2);
  EXPECT_EQ(floatToInt(1e9, i8), 127);
  EXPECT_EQ(floatToInt(-1e9, i8), -128);
  EXPECT_EQ(floatToInt(-1.5, u8), 0);
  EXPECT_EQ(floatToInt(300.0, u8), 255);
  EXPECT_EQ(floatToInt(kNaN, i8), 0);
  EXPECT_EQ(floatToInt(kInf, i64), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(floatToInt(1e30, u64), -1);  // all ones
  EXPECT_EQ(floatToInt(std::ldexp(1.0, 63), u64), static_cast<int64_t>(uint64_t(1) << 63));
}

// ---------------------------------------------------------------- one rule, three users

// Folds `kind` on constants a and b of `type` with canonicalize, and evaluates the same op with the interpreter;
// both must give the rule's value (or, where the rule leaves the op undefined, folding must decline).
struct BothEvaluators {
  std::optional<Attr> folded;
  interp::Tile interpreted;
};

BothEvaluators evaluateBoth(OpKind kind, Type type, const Attr& a, const Attr& b) {
  Function f("k", {});
  Builder builder;
  builder.setInsertionPointToEnd(f.body());
  Value* x = builder.create1(OpKind::Constant, {}, type, {{"value", a}});
  Value* y = builder.create1(OpKind::Constant, {}, type, {{"value", b}});
  Op* op = builder.create(kind, {x, y}, {type});
  Op* use = builder.create(OpKind::DebugPrint, {op->result(0)}, {}, {{"prefix", Attr::string("")}});
  builder.create(OpKind::Return, {}, {});

  interp::ProgramContext ctx;
  std::vector<interp::Tile> operands = {interp::evaluateOp(*x->definingOp(), {}, ctx)[0],
                                        interp::evaluateOp(*y->definingOp(), {}, ctx)[0]};
  BothEvaluators out{std::nullopt, interp::evaluateOp(*op, operands, ctx)[0]};

  transforms::createPass("canonicalize")->run(f);
  const Op* def = use->operand(0)->definingOp();
  if (def->is(OpKind::Constant)) out.folded = def->attr("value");
  return out;
}

TEST(OneRule, FoldingAndTheInterpreterAgreeOnIntegers) {
  const int64_t values[] = {0, 1, -1, 2, 7, -7, 31, 32, 33, 63, 64, 127, -128, 255, 65535, 0x7FFFFFFF,
                            std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  const OpKind kinds[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Min,
                          OpKind::Max, OpKind::And, OpKind::Or,  OpKind::Xor, OpKind::Shl, OpKind::Shr,
                          OpKind::UMulHi};
  for (ScalarKind k : {ScalarKind::I8, ScalarKind::U8, ScalarKind::I32, ScalarKind::U32, ScalarKind::I64,
                       ScalarKind::U64}) {
    const Type t = S(k);
    const IntFormat format(t);
    for (OpKind kind : kinds) {
      if (!intBinaryDefined(kind, t)) continue;
      for (int64_t a : values)
        for (int64_t b : values) {
          const int64_t ca = format.wrap(static_cast<uint64_t>(a)), cb = format.wrap(static_cast<uint64_t>(b));
          const int64_t want = *evalIntBinary(kind, t, ca, cb);
          SCOPED_TRACE(std::string(opName(kind)) + " " + scalarKindName(k) + " " + std::to_string(ca) + ", " +
                       std::to_string(cb));
          BothEvaluators got = evaluateBoth(kind, t, Attr::integer(ca), Attr::integer(cb));
          EXPECT_EQ(got.interpreted.ints.at(0), want);
          const bool leftOpen = (kind == OpKind::Shl || kind == OpKind::Shr) && t.isSigned() && cb < 0;
          ASSERT_EQ(got.folded.has_value(), !leftOpen);
          if (got.folded) {
            EXPECT_EQ(got.folded->getInt(), want);
          }
        }
    }
  }
}

TEST(OneRule, FoldingAndTheInterpreterAgreeOnFloats) {
  const double values[] = {0.0, -0.0, 1.0, -1.5, 0.1, 3.0, 65504.0, 1e30, kInf, -kInf, kNaN};
  const OpKind kinds[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                          OpKind::Rem, OpKind::Min, OpKind::Max};
  for (ScalarKind k : {ScalarKind::F16, ScalarKind::BF16, ScalarKind::F32, ScalarKind::F64}) {
    const Type t = S(k);
    for (OpKind kind : kinds)
      for (double a : values)
        for (double b : values) {
          const double ra = roundToFloat(k, a), rb = roundToFloat(k, b);
          double want = 0;
          ASSERT_TRUE(withFloatBinaryRule(kind, [&](auto rule) { want = roundToFloat(k, rule(ra, rb)); }));
          SCOPED_TRACE(std::string(opName(kind)) + " " + scalarKindName(k) + " " + std::to_string(ra) + ", " +
                       std::to_string(rb));
          BothEvaluators got = evaluateBoth(kind, t, Attr::floating(a), Attr::floating(b));
          const double interpreted = got.interpreted.floats.at(0);
          EXPECT_TRUE(interpreted == want || (std::isnan(interpreted) && std::isnan(want)));
          const bool signedZeros = (kind == OpKind::Min || kind == OpKind::Max) && ra == 0 && rb == 0 &&
                                   std::signbit(ra) != std::signbit(rb);
          ASSERT_EQ(got.folded.has_value(), !signedZeros);
          if (got.folded) {
            const double folded = got.folded->getFloat();
            EXPECT_TRUE((folded == want && std::signbit(folded) == std::signbit(want)) ||
                        (std::isnan(folded) && std::isnan(want)));
          }
        }
  }
}

}  // namespace
