// The emulator's warp-level matrix operations (jit/sim/runtime/WarpMatrix.h):
//  * the fragment maps against concrete positions stated here from the PTX ISA ("Matrix Fragments for mma.m16n8k*")
//    and AMD's MFMA register layouts (CDNA2/CDNA3 ISA, as AMD's Matrix Instruction Calculator prints them);
//  * executeMma against a plain triple loop for every kind, the operands scattered into registers with the maps;
//  * the numerics: integer wrap-around, tf32 truncation, f16 accumulator rounding, fp8 decoding;
//  * ldmatrix / stmatrix (x1, x2, x4, .trans) over a fake shared buffer whose rows are scattered.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "ir/FloatFormats.h"
#include "ir/Error.h"
#include "jit/sim/runtime/IsaFloat8.h"
#include "jit/sim/runtime/WarpMatrix.h"

namespace tessera::sim {
namespace {

constexpr uint32_t kKinds = kMfmaI32_16x16x16I8 + 1;

std::vector<MmaKind> allKinds() {
  std::vector<MmaKind> kinds;
  for (uint32_t k = 0; k < kKinds; ++k) kinds.push_back(static_cast<MmaKind>(k));
  return kinds;
}

uint32_t rowsOf(const MmaShape& s, MmaOperand op) { return op == MmaOperand::B ? s.k : s.m; }
uint32_t colsOf(const MmaShape& s, MmaOperand op) { return op == MmaOperand::A ? s.k : s.n; }

// Dense operand (row-major element bits) -> the warp's registers, lane-major, through the fragment map.
std::vector<uint32_t> scatter(MmaKind kind, MmaOperand op, const std::vector<uint32_t>& dense) {
  const MmaShape& s = mmaShape(kind);
  const uint32_t regs = s.registersOf(op), bits = elementBits(s.elementOf(op)), per = elementsPerRegister(s.elementOf(op));
  std::vector<uint32_t> out(s.lanes * regs, 0);
  for (uint32_t lane = 0; lane < s.lanes; ++lane)
    for (uint32_t r = 0; r < regs; ++r)
      for (uint32_t p = 0; p < per; ++p) {
        MatrixPosition at = fragmentElement(kind, op, lane, r, p);
        const uint32_t v = dense.at(at.row * colsOf(s, op) + at.col);
        out[lane * regs + r] |= bits == 32 ? v : v << (p * bits);
      }
  return out;
}

// The warp's registers -> dense operand (row-major element bits).
std::vector<uint32_t> gather(MmaKind kind, MmaOperand op, const std::vector<uint32_t>& regsOfWarp) {
  const MmaShape& s = mmaShape(kind);
  const uint32_t regs = s.registersOf(op), bits = elementBits(s.elementOf(op)), per = elementsPerRegister(s.elementOf(op));
  std::vector<uint32_t> dense(rowsOf(s, op) * colsOf(s, op));
  for (uint32_t lane = 0; lane < s.lanes; ++lane)
    for (uint32_t r = 0; r < regs; ++r)
      for (uint32_t p = 0; p < per; ++p) {
        MatrixPosition at = fragmentElement(kind, op, lane, r, p);
        const uint32_t reg = regsOfWarp[lane * regs + r];
        dense[at.row * colsOf(s, op) + at.col] = bits == 32 ? reg : (reg >> (p * bits)) & ((1u << bits) - 1);
      }
  return dense;
}

// ---- shapes and maps, as the ISA documents state them

TEST(WarpMatrix, RegisterCountsPerLaneFollowTheIsa) {
  struct Expect {
    MmaKind kind;
    uint32_t lanes, a, b, c;
  };
  // PTX: operand tables of each "Matrix Fragments" section (e.g. m16n8k16 .f16: A four .f16x2, B two .f16x2,
  // C/D four .f32 or two .f16x2). AMD: "GPRs required for A/B/C/D".
  const Expect expects[] = {
      {kMmaM16N8K16_F16_F32, 32, 4, 2, 4},  {kMmaM16N8K16_BF16_F32, 32, 4, 2, 4}, {kMmaM16N8K16_F16_F16, 32, 4, 2, 2},
      {kMmaM16N8K8_F16_F32, 32, 2, 1, 4},   {kMmaM16N8K8_BF16_F32, 32, 2, 1, 4},  {kMmaM16N8K8_TF32_F32, 32, 4, 2, 4},
      {kMmaM16N8K4_TF32_F32, 32, 2, 1, 4},  {kMmaM16N8K32_S8_S32, 32, 4, 2, 4},   {kMmaM16N8K32_U8_S32, 32, 4, 2, 4},
      {kMmaM16N8K16_S8_S32, 32, 2, 1, 4},   {kMmaM16N8K32_E4M3_F32, 32, 4, 2, 4}, {kMmaM16N8K32_E5M2_F32, 32, 4, 2, 4},
      {kMfmaF32_16x16x16F16, 64, 2, 2, 4},  {kMfmaF32_16x16x16BF16, 64, 2, 2, 4}, {kMfmaF32_32x32x8F16, 64, 2, 2, 16},
      {kMfmaF32_32x32x8BF16, 64, 2, 2, 16}, {kMfmaI32_16x16x32I8, 64, 2, 2, 4},   {kMfmaI32_16x16x16I8, 64, 1, 1, 4},
  };
  ASSERT_EQ(std::size(expects), kKinds);
  for (const Expect& e : expects) {
    const MmaShape& s = mmaShape(e.kind);
    SCOPED_TRACE(s.instruction);
    EXPECT_EQ(s.lanes, e.lanes);
    EXPECT_EQ(s.registersOf(MmaOperand::A), e.a);
    EXPECT_EQ(s.registersOf(MmaOperand::B), e.b);
    EXPECT_EQ(s.registersOf(MmaOperand::C), e.c);
  }
}

TEST(WarpMatrix, EachMapCoversItsMatrixExactlyOnce) {
  for (MmaKind kind : allKinds()) {
    const MmaShape& s = mmaShape(kind);
    for (MmaOperand op : {MmaOperand::A, MmaOperand::B, MmaOperand::C}) {
      SCOPED_TRACE(std::string(s.instruction) + " operand " + std::to_string(static_cast<int>(op)));
      std::set<std::pair<uint32_t, uint32_t>> seen;
      for (uint32_t lane = 0; lane < s.lanes; ++lane)
        for (uint32_t r = 0; r < s.registersOf(op); ++r)
          for (uint32_t p = 0; p < elementsPerRegister(s.elementOf(op)); ++p) {
            MatrixPosition at = fragmentElement(kind, op, lane, r, p);
            ASSERT_LT(at.row, rowsOf(s, op));
            ASSERT_LT(at.col, colsOf(s, op));
            ASSERT_TRUE(seen.insert({at.row, at.col}).second) << "lane " << lane << " reg " << r << " part " << p;
          }
      EXPECT_EQ(seen.size(), size_t{rowsOf(s, op)} * colsOf(s, op));
    }
  }
}

struct Placed {
  MmaKind kind;
  MmaOperand op;
  uint32_t lane, reg, part, row, col;
};

void expectPlaced(const std::vector<Placed>& examples) {
  for (const Placed& e : examples) {
    MatrixPosition at = fragmentElement(e.kind, e.op, e.lane, e.reg, e.part);
    EXPECT_EQ(at, (MatrixPosition{e.row, e.col}))
        << mmaShape(e.kind).instruction << " operand " << static_cast<int>(e.op) << " lane " << e.lane << " reg "
        << e.reg << " part " << e.part << ": got (" << at.row << ", " << at.col << ")";
  }
}

// PTX ISA: groupID = lane >> 2, threadID_in_group = lane % 4. Lane 5: groupID 1, threadID_in_group 1;
// lane 30: groupID 7, threadID_in_group 2.
TEST(WarpMatrix, PtxFragmentPositionsFromTheIsa) {
  using enum MmaOperand;
  expectPlaced({
      // m16n8k16 .f16: a0,a1 (reg 0) row groupID, cols 2t, 2t+1; a2,a3 row groupID+8; a4..a7 cols + 8.
      {kMmaM16N8K16_F16_F32, A, 5, 0, 0, 1, 2}, {kMmaM16N8K16_F16_F32, A, 5, 0, 1, 1, 3},
      {kMmaM16N8K16_F16_F32, A, 5, 1, 0, 9, 2}, {kMmaM16N8K16_F16_F32, A, 5, 1, 1, 9, 3},
      {kMmaM16N8K16_F16_F32, A, 5, 2, 0, 1, 10}, {kMmaM16N8K16_F16_F32, A, 5, 3, 1, 9, 11},
      // B: b0,b1 rows 2t, 2t+1, col groupID; b2,b3 rows + 8.
      {kMmaM16N8K16_BF16_F32, B, 5, 0, 0, 2, 1}, {kMmaM16N8K16_BF16_F32, B, 5, 0, 1, 3, 1},
      {kMmaM16N8K16_BF16_F32, B, 5, 1, 0, 10, 1}, {kMmaM16N8K16_BF16_F32, B, 5, 1, 1, 11, 1},
      // C/D .f32: c0, c1 row groupID, cols 2t, 2t+1; c2, c3 row groupID + 8.
      {kMmaM16N8K16_F16_F32, C, 5, 0, 0, 1, 2}, {kMmaM16N8K16_F16_F32, C, 5, 1, 0, 1, 3},
      {kMmaM16N8K16_F16_F32, C, 5, 2, 0, 9, 2}, {kMmaM16N8K16_F16_F32, C, 5, 3, 0, 9, 3},
      // C/D .f16: the same elements, two per .f16x2 register.
      {kMmaM16N8K16_F16_F16, C, 5, 0, 0, 1, 2}, {kMmaM16N8K16_F16_F16, C, 5, 0, 1, 1, 3},
      {kMmaM16N8K16_F16_F16, C, 5, 1, 0, 9, 2}, {kMmaM16N8K16_F16_F16, C, 5, 1, 1, 9, 3},
      // m16n8k8 .f16: a0,a1 row groupID; a2,a3 row groupID + 8; b0,b1 rows 2t, 2t+1.
      {kMmaM16N8K8_F16_F32, A, 30, 0, 1, 7, 5}, {kMmaM16N8K8_F16_F32, A, 30, 1, 0, 15, 4},
      {kMmaM16N8K8_BF16_F32, B, 30, 0, 0, 4, 7}, {kMmaM16N8K8_BF16_F32, B, 30, 0, 1, 5, 7},
      // m16n8k8 .tf32: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); b0 (t, g), b1 (t+4, g).
      {kMmaM16N8K8_TF32_F32, A, 30, 0, 0, 7, 2}, {kMmaM16N8K8_TF32_F32, A, 30, 1, 0, 15, 2},
      {kMmaM16N8K8_TF32_F32, A, 30, 2, 0, 7, 6}, {kMmaM16N8K8_TF32_F32, A, 30, 3, 0, 15, 6},
      {kMmaM16N8K8_TF32_F32, B, 30, 0, 0, 2, 7}, {kMmaM16N8K8_TF32_F32, B, 30, 1, 0, 6, 7},
      // m16n8k4 .tf32: a0 (g, t), a1 (g+8, t); b0 (t, g).
      {kMmaM16N8K4_TF32_F32, A, 30, 0, 0, 7, 2}, {kMmaM16N8K4_TF32_F32, A, 30, 1, 0, 15, 2},
      {kMmaM16N8K4_TF32_F32, B, 30, 0, 0, 2, 7},
      // m16n8k32 .s8/.u8/.e4m3/.e5m2: a0..a3 (reg 0) row g, cols 4t..4t+3; a4..a7 row g+8; a8..a15 cols + 16.
      {kMmaM16N8K32_S8_S32, A, 30, 0, 0, 7, 8}, {kMmaM16N8K32_S8_S32, A, 30, 0, 3, 7, 11},
      {kMmaM16N8K32_U8_S32, A, 30, 1, 2, 15, 10}, {kMmaM16N8K32_E4M3_F32, A, 30, 2, 1, 7, 25},
      {kMmaM16N8K32_E5M2_F32, A, 30, 3, 3, 15, 27},
      // B: b0..b3 rows 4t..4t+3, col g; b4..b7 rows + 16.
      {kMmaM16N8K32_S8_S32, B, 30, 0, 0, 8, 7}, {kMmaM16N8K32_S8_S32, B, 30, 0, 3, 11, 7},
      {kMmaM16N8K32_E4M3_F32, B, 30, 1, 1, 25, 7},
      // m16n8k16 .s8: a0..a3 row g, a4..a7 row g+8, cols 4t + (i & 3); b0..b3 rows 4t + i.
      {kMmaM16N8K16_S8_S32, A, 30, 0, 2, 7, 10}, {kMmaM16N8K16_S8_S32, A, 30, 1, 3, 15, 11},
      {kMmaM16N8K16_S8_S32, B, 30, 0, 1, 9, 7}, {kMmaM16N8K16_S8_S32, C, 30, 2, 0, 15, 4},
  });
}

// AMD's layouts (Matrix Instruction Calculator --matrix-layout, no modifiers). Lane 37: 37 % 16 = 5,
// floor(37 / 16) = 2; 37 % 32 = 5, floor(37 / 32) = 1.
TEST(WarpMatrix, MfmaFragmentPositionsFromTheIsa) {
  using enum MmaOperand;
  expectPlaced({
      // v_mfma_f32_16x16x16f16 / bf16_1k, lane 37: v0 = A[5][8], A[5][9]; v1 = A[5][10], A[5][11];
      // B[8..11][5]; D v0..v3 = D[8..11][5].
      {kMfmaF32_16x16x16F16, A, 37, 0, 0, 5, 8}, {kMfmaF32_16x16x16F16, A, 37, 0, 1, 5, 9},
      {kMfmaF32_16x16x16F16, A, 37, 1, 0, 5, 10}, {kMfmaF32_16x16x16BF16, A, 37, 1, 1, 5, 11},
      {kMfmaF32_16x16x16F16, B, 37, 0, 0, 8, 5}, {kMfmaF32_16x16x16BF16, B, 37, 1, 1, 11, 5},
      {kMfmaF32_16x16x16F16, C, 37, 0, 0, 8, 5}, {kMfmaF32_16x16x16F16, C, 37, 3, 0, 11, 5},
      {kMfmaF32_16x16x16F16, C, 0, 0, 0, 0, 0}, {kMfmaF32_16x16x16F16, C, 63, 3, 0, 15, 15},
      // v_mfma_f32_32x32x8f16 / bf16_1k, lane 37: A[5][4..7]; B[4..7][5]; D v0..v3 = D[4..7][5],
      // v4..v7 = D[12..15][5], v8..v11 = D[20..23][5], v12..v15 = D[28..31][5].
      {kMfmaF32_32x32x8F16, A, 37, 0, 0, 5, 4}, {kMfmaF32_32x32x8BF16, A, 37, 1, 1, 5, 7},
      {kMfmaF32_32x32x8F16, B, 37, 1, 0, 6, 5},
      {kMfmaF32_32x32x8F16, C, 37, 0, 0, 4, 5}, {kMfmaF32_32x32x8F16, C, 37, 3, 0, 7, 5},
      {kMfmaF32_32x32x8F16, C, 37, 4, 0, 12, 5}, {kMfmaF32_32x32x8BF16, C, 37, 9, 0, 21, 5},
      {kMfmaF32_32x32x8F16, C, 37, 15, 0, 31, 5}, {kMfmaF32_32x32x8F16, C, 0, 4, 0, 8, 0},
      // v_mfma_i32_16x16x32_i8 (gfx942), lane 37: v0 bytes = A[5][16..19], v1 = A[5][20..23]; B likewise.
      {kMfmaI32_16x16x32I8, A, 37, 0, 0, 5, 16}, {kMfmaI32_16x16x32I8, A, 37, 0, 3, 5, 19},
      {kMfmaI32_16x16x32I8, A, 37, 1, 0, 5, 20}, {kMfmaI32_16x16x32I8, B, 37, 1, 3, 23, 5},
      {kMfmaI32_16x16x32I8, C, 37, 2, 0, 10, 5},
      // v_mfma_i32_16x16x16i8 (gfx90a), lane 37: v0 bytes = A[5][8..11]; B[8..11][5].
      {kMfmaI32_16x16x16I8, A, 37, 0, 0, 5, 8}, {kMfmaI32_16x16x16I8, A, 37, 0, 3, 5, 11},
      {kMfmaI32_16x16x16I8, B, 37, 0, 2, 10, 5},
  });
}

TEST(WarpMatrix, BadQueriesAreErrors) {
  EXPECT_THROW(mmaShape(static_cast<MmaKind>(kKinds)), Error);
  EXPECT_THROW(fragmentElement(kMmaM16N8K16_F16_F32, MmaOperand::A, 32, 0, 0), Error);  // a warp has 32 lanes
  EXPECT_THROW(fragmentElement(kMmaM16N8K16_F16_F32, MmaOperand::B, 0, 2, 0), Error);   // B has 2 registers
  EXPECT_THROW(fragmentElement(kMmaM16N8K16_F16_F32, MmaOperand::C, 0, 0, 1), Error);   // one f32 per register
  EXPECT_NO_THROW(fragmentElement(kMfmaF32_16x16x16F16, MmaOperand::A, 63, 1, 1));
  std::vector<uint32_t> a(32 * 4), b(32 * 2), c(32 * 4), d(32 * 4);
  EXPECT_NO_THROW(executeMma(kMmaM16N8K16_F16_F32, a, b, c, d));
  try {
    executeMma(kMmaM16N8K16_F16_F32, a, std::span<const uint32_t>(b).first(63), c, d);
    FAIL() << "a short B operand was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("operand B has 63 registers"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("m16n8k16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(executeMma(kMfmaF32_16x16x16F16, a, b, c, d), Error);  // wave64 operands are 64 lanes
}

// ---- products

// A random value of a float format: +-(1 + mantissa / 2^mantissaBits) * 2^exponent with exponent in [-4, 3], or
// zero; the bits are built from its fields. Every product and every sum of K products (plus an accumulator of
// similar range) is then exact in double, so the reference below is exact.
struct FloatFormat {
  uint32_t exponentBits, mantissaBits, bias;
};
FloatFormat formatOf(MatrixElement e) {
  switch (e) {
    case MatrixElement::F16: return {5, 10, 15};
    case MatrixElement::BF16: return {8, 7, 127};
    case MatrixElement::TF32: return {8, 23, 127};
    case MatrixElement::E4M3: return {4, 3, 7};
    case MatrixElement::E5M2: return {5, 2, 15};
    case MatrixElement::F32: return {8, 23, 127};
    default: break;
  }
  throw Error("not a float format");
}

struct Element {
  uint32_t bits = 0;
  double value = 0;
};

Element randomFloat(MatrixElement e, std::mt19937& rng) {
  const FloatFormat f = formatOf(e);
  if (rng() % 8 == 0) return {0, 0.0};
  const uint32_t sign = rng() % 2, mantissa = rng() & ((1u << f.mantissaBits) - 1);
  const int exponent = static_cast<int>(rng() % 8) - 4;
  const uint32_t bits = sign << (f.exponentBits + f.mantissaBits) |
                        static_cast<uint32_t>(exponent + static_cast<int>(f.bias)) << f.mantissaBits | mantissa;
  // tf32 reads only the top 10 of the 23 mantissa bits; the rest is noise the instruction must ignore.
  const uint32_t readMantissa = e == MatrixElement::TF32 ? mantissa >> 13 : mantissa;
  const uint32_t readBits = e == MatrixElement::TF32 ? 10 : f.mantissaBits;
  const double magnitude = std::ldexp(1.0 + std::ldexp(readMantissa, -static_cast<int>(readBits)), exponent);
  return {bits, sign ? -magnitude : magnitude};
}

Element randomInt(MatrixElement e, std::mt19937& rng) {
  const uint32_t bits = e == MatrixElement::S32 ? static_cast<uint32_t>(rng()) : rng() & 0xFF;
  const double value = e == MatrixElement::S8   ? double(static_cast<int8_t>(bits))
                       : e == MatrixElement::U8 ? double(bits)
                                                : double(static_cast<int32_t>(bits));
  return {bits, value};
}

bool isInt(MatrixElement e) { return e == MatrixElement::S8 || e == MatrixElement::U8 || e == MatrixElement::S32; }

TEST(WarpMatrix, EveryKindComputesAB_PlusC) {
  std::mt19937 rng(42);
  for (MmaKind kind : allKinds()) {
    const MmaShape& s = mmaShape(kind);
    SCOPED_TRACE(s.instruction);
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<Element> A(s.m * s.k), B(s.k * s.n), C(s.m * s.n);
      for (auto* m : {&A, &B})
        for (Element& x : *m) x = isInt(s.input) ? randomInt(s.input, rng) : randomFloat(s.input, rng);
      for (Element& x : C) x = isInt(s.accumulator) ? randomInt(s.accumulator, rng) : randomFloat(s.accumulator, rng);
      auto bitsOf = [](const std::vector<Element>& m) {
        std::vector<uint32_t> bits;
        for (const Element& x : m) bits.push_back(x.bits);
        return bits;
      };
      std::vector<uint32_t> d(s.lanes * s.registersOf(MmaOperand::C), 0xDEADBEEF);
      executeMma(kind, scatter(kind, MmaOperand::A, bitsOf(A)), scatter(kind, MmaOperand::B, bitsOf(B)),
                 scatter(kind, MmaOperand::C, bitsOf(C)), d);
      const std::vector<uint32_t> D = gather(kind, MmaOperand::C, d);
      for (uint32_t i = 0; i < s.m; ++i)
        for (uint32_t j = 0; j < s.n; ++j) {
          uint32_t want;
          if (isInt(s.input)) {
            uint32_t acc = C[i * s.n + j].bits;  // modulo 2^32
            for (uint32_t k = 0; k < s.k; ++k)
              acc += static_cast<uint32_t>(static_cast<int32_t>(A[i * s.k + k].value * B[k * s.n + j].value));
            want = acc;
          } else {
            double exact = C[i * s.n + j].value;
            for (uint32_t k = 0; k < s.k; ++k) exact += A[i * s.k + k].value * B[k * s.n + j].value;
            want = s.accumulator == MatrixElement::F16 ? ir::encodeF16(exact) : ir::encodeF32(exact);
          }
          ASSERT_EQ(D[i * s.n + j], want) << "D[" << i << "][" << j << "], trial " << trial;
        }
    }
  }
}

// A single product A[0][0] * B[0][0] + C[0][0] (everything else zero), through the fragment maps.
uint32_t singleProduct(MmaKind kind, uint32_t a, uint32_t b, uint32_t c) {
  const MmaShape& s = mmaShape(kind);
  std::vector<uint32_t> A(s.m * s.k, 0), B(s.k * s.n, 0), C(s.m * s.n, 0);
  A[0] = a;
  B[0] = b;
  C[0] = c;
  std::vector<uint32_t> d(s.lanes * s.registersOf(MmaOperand::C));
  executeMma(kind, scatter(kind, MmaOperand::A, A), scatter(kind, MmaOperand::B, B), scatter(kind, MmaOperand::C, C),
             d);
  return gather(kind, MmaOperand::C, d)[0];
}

uint32_t f32Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

TEST(WarpMatrix, IntegerAccumulationWrapsModulo2To32) {
  for (MmaKind kind : {kMmaM16N8K32_S8_S32, kMmaM16N8K16_S8_S32, kMfmaI32_16x16x32I8, kMfmaI32_16x16x16I8}) {
    const MmaShape& s = mmaShape(kind);
    SCOPED_TRACE(s.instruction);
    // Row 0 of A and column 0 of B all 127: D[0][0] = INT32_MAX + K * 16129 wraps below zero.
    std::vector<uint32_t> A(s.m * s.k, 0), B(s.k * s.n, 0), C(s.m * s.n, 0);
    for (uint32_t k = 0; k < s.k; ++k) A[k] = B[k * s.n] = 127;
    C[0] = 0x7FFFFFFF;
    std::vector<uint32_t> d(s.lanes * s.registersOf(MmaOperand::C));
    executeMma(kind, scatter(kind, MmaOperand::A, A), scatter(kind, MmaOperand::B, B),
               scatter(kind, MmaOperand::C, C), d);
    const int64_t sum = int64_t{0x7FFFFFFF} + int64_t{s.k} * 127 * 127;
    EXPECT_EQ(static_cast<int32_t>(gather(kind, MmaOperand::C, d)[0]), static_cast<int32_t>(sum - (int64_t{1} << 32)));
  }
  // Signedness of the 8-bit inputs: s8 0xFF is -1, u8 0xFF is 255.
  EXPECT_EQ(static_cast<int32_t>(singleProduct(kMmaM16N8K32_S8_S32, 0xFF, 0x02, 0)), -2);
  EXPECT_EQ(static_cast<int32_t>(singleProduct(kMmaM16N8K32_U8_S32, 0xFF, 0x02, 0)), 510);
  EXPECT_EQ(static_cast<int32_t>(singleProduct(kMfmaI32_16x16x16I8, 0x80, 0x80, 5)), 16384 + 5);
}

TEST(WarpMatrix, Tf32IgnoresTheLow13MantissaBits) {
  const uint32_t one = f32Bits(1.0f);
  for (MmaKind kind : {kMmaM16N8K8_TF32_F32, kMmaM16N8K4_TF32_F32}) {
    // 1 + 2^-11 is f32 mantissa bit 12: not read, so the product is 1. 1 + 2^-10 (bit 13) is read.
    EXPECT_EQ(singleProduct(kind, f32Bits(1.0f + 0x1p-11f), one, 0), one);
    EXPECT_EQ(singleProduct(kind, one | 0x1FFF, one | 0x1FFF, 0), one);
    EXPECT_EQ(singleProduct(kind, f32Bits(1.0f + 0x1p-10f), one, 0), f32Bits(1.0f + 0x1p-10f));
    // The accumulator C is a full f32.
    EXPECT_EQ(singleProduct(kind, one, one, f32Bits(0x1p-20f)), f32Bits(1.0f + 0x1p-20f));
  }
}

TEST(WarpMatrix, F16AccumulatorRoundsOnceToNearestEven) {
  const uint16_t one = 0x3C00, two = 0x4000, three = 0x4200, c2048 = 0x6800;  // f16 1, 2, 3, 2048
  // Around 2048 the f16 spacing is 2: 2048 + 1 ties to 2048 (even), 2048 + 3 ties to 2052.
  EXPECT_EQ(singleProduct(kMmaM16N8K16_F16_F16, one, one, c2048), c2048);
  EXPECT_EQ(singleProduct(kMmaM16N8K16_F16_F16, three, one, c2048), ir::encodeF16(2052));
  EXPECT_EQ(singleProduct(kMmaM16N8K16_F16_F16, two, three, 0), ir::encodeF16(6));
}

TEST(WarpMatrix, Fp8InputsDecodeExactly) {
  const uint32_t one = 0x38;  // e4m3 1.0 (S.0111.000)
  struct Case {
    MmaKind kind;
    uint32_t bits, unit;
    float value;
  };
  const Case cases[] = {
      {kMmaM16N8K32_E4M3_F32, 0x7E, one, 448.0f},         // S.1111.110: the largest finite e4m3
      {kMmaM16N8K32_E4M3_F32, 0x01, one, 0x1p-9f},        // the smallest subnormal
      {kMmaM16N8K32_E4M3_F32, 0xC4, one, -3.0f},          // 1.1000.100 = -1.5 * 2^1
      {kMmaM16N8K32_E5M2_F32, 0x7B, 0x3C, 57344.0f},      // S.11110.11: the largest finite e5m2
      {kMmaM16N8K32_E5M2_F32, 0x01, 0x3C, 0x1p-16f},      // the smallest subnormal
      {kMmaM16N8K32_E5M2_F32, 0xBE, 0x3C, -1.5f},         // 1.01111.10
  };
  for (const Case& c : cases)
    EXPECT_EQ(singleProduct(c.kind, c.bits, c.unit, 0), f32Bits(c.value)) << std::hex << c.bits;
}

// The emulator's fp8 decoding (IsaFloat8.h, from the PTX ISA) and the IR's (ir/FloatFormats.h, from the OCP
// formats) are written apart: they must agree on every code (NaNs as NaNs, e5m2 infinities included).
TEST(WarpMatrix, IsaFp8DecodingAgreesWithTheIRsOnEveryCode) {
  for (uint32_t bits = 0; bits < 256; ++bits) {
    const auto code = static_cast<uint8_t>(bits);
    for (auto [isa, reference] : {std::pair{decodeIsaE4M3(code), ir::decodeF8E4M3(code)},
                                  std::pair{decodeIsaE5M2(code), ir::decodeF8E5M2(code)}}) {
      if (std::isnan(reference)) EXPECT_TRUE(std::isnan(isa)) << std::hex << bits;
      else EXPECT_EQ(isa, reference) << std::hex << bits;
    }
  }
  EXPECT_EQ(decodeIsaE5M2(0x7C), INFINITY);
  EXPECT_EQ(decodeIsaE5M2(0xFC), -INFINITY);
  EXPECT_TRUE(std::isnan(decodeIsaE4M3(0xFF)));
  EXPECT_EQ(decodeIsaE4M3(0x78), 256.0);  // S.1111.000: finite (e4m3 has no infinities)
}

// ---- ldmatrix / stmatrix

// A fake shared memory of 32 rows, rows at scattered 16-byte slots (rows need not be contiguous). Element e of row
// r of matrix m holds 0x100 * (8 * m + r) + e.
struct SharedRows {
  std::vector<uint16_t> memory = std::vector<uint16_t>(64 * 8, 0);
  static uint64_t slotOf(uint32_t matrix, uint32_t row) { return (8 * matrix + row) * 13 % 64; }
  std::array<uint64_t, 32> addresses(uint32_t matrices) const {
    std::array<uint64_t, 32> a;
    for (uint32_t lane = 0; lane < 32; ++lane)
      a[lane] = lane < 8 * matrices ? base() + 16 * slotOf(lane / 8, lane % 8) : 0xBAD0BAD0;  // unused lanes
    return a;
  }
  uint64_t base() const { return reinterpret_cast<uint64_t>(memory.data()); }
  static uint16_t valueOf(uint32_t matrix, uint32_t row, uint32_t element) {
    return static_cast<uint16_t>(0x100 * (8 * matrix + row) + element);
  }
  void fill() {
    for (uint32_t m = 0; m < 4; ++m)
      for (uint32_t r = 0; r < 8; ++r)
        for (uint32_t e = 0; e < 8; ++e) memory[slotOf(m, r) * 8 + e] = valueOf(m, r, e);
  }
};

struct RowAccess {
  uint32_t lane;
  uint64_t address;
  uint32_t bytes;
};

TEST(WarpMatrix, LdMatrixDistributesRowsAsTheIsaSays) {
  SharedRows smem;
  smem.fill();
  for (uint32_t matrices : {1u, 2u, 4u})
    for (bool transpose : {false, true}) {
      SCOPED_TRACE("x" + std::to_string(matrices) + (transpose ? ".trans" : ""));
      const std::array<uint64_t, 32> addr = smem.addresses(matrices);
      std::vector<RowAccess> reads;
      MatrixRowRead read = [&](uint32_t lane, uint64_t address, uint32_t bytes, void* dst) {
        reads.push_back({lane, address, bytes});
        ASSERT_GE(address, smem.base());
        ASSERT_LE(address + bytes, smem.base() + smem.memory.size() * 2);
        std::memcpy(dst, reinterpret_cast<const void*>(address), bytes);
      };
      std::vector<uint32_t> out(32 * matrices);
      executeLdMatrix(matrices, transpose, addr, read, out);
      // One 16-byte read per row, by the lane that gave its address; the lanes beyond .x1/.x2 are not read.
      ASSERT_EQ(reads.size(), 8 * matrices);
      for (uint32_t i = 0; i < reads.size(); ++i) {
        EXPECT_EQ(reads[i].lane, i);
        EXPECT_EQ(reads[i].address, addr[i]);
        EXPECT_EQ(reads[i].bytes, 16u);
      }
      // Thread t gets row t / 4, elements 2 (t % 4), 2 (t % 4) + 1 of each matrix (low half first); with .trans,
      // column t / 4, rows 2 (t % 4), 2 (t % 4) + 1.
      for (uint32_t t = 0; t < 32; ++t)
        for (uint32_t m = 0; m < matrices; ++m) {
          const uint32_t r = t / 4, e = 2 * (t % 4);
          const uint32_t lo = transpose ? smem.valueOf(m, e, r) : smem.valueOf(m, r, e);
          const uint32_t hi = transpose ? smem.valueOf(m, e + 1, r) : smem.valueOf(m, r, e + 1);
          EXPECT_EQ(out[t * matrices + m], lo | hi << 16) << "lane " << t << " matrix " << m;
        }
    }
  // Lane 5, .x1: row 1, elements 2 and 3; with .trans rows 2 and 3 of element (column) 1.
  std::vector<uint32_t> one(32);
  MatrixRowRead read = [](uint32_t, uint64_t address, uint32_t bytes, void* dst) {
    std::memcpy(dst, reinterpret_cast<const void*>(address), bytes);
  };
  executeLdMatrix(1, false, smem.addresses(1), read, one);
  EXPECT_EQ(one[5], 0x01030102u);
  executeLdMatrix(1, true, smem.addresses(1), read, one);
  EXPECT_EQ(one[5], 0x03010201u);
}

TEST(WarpMatrix, StMatrixIsTheInverseOfLdMatrix) {
  SharedRows source;
  source.fill();
  MatrixRowRead read = [](uint32_t, uint64_t address, uint32_t bytes, void* dst) {
    std::memcpy(dst, reinterpret_cast<const void*>(address), bytes);
  };
  for (uint32_t matrices : {1u, 2u, 4u})
    for (bool transpose : {false, true}) {
      SCOPED_TRACE("x" + std::to_string(matrices) + (transpose ? ".trans" : ""));
      std::vector<uint32_t> regs(32 * matrices);
      executeLdMatrix(matrices, transpose, source.addresses(matrices), read, regs);
      SharedRows target;
      std::vector<RowAccess> writes;
      MatrixRowWrite write = [&](uint32_t lane, uint64_t address, uint32_t bytes, const void* src) {
        writes.push_back({lane, address, bytes});
        std::memcpy(reinterpret_cast<void*>(address), src, bytes);
      };
      const std::array<uint64_t, 32> addr = target.addresses(matrices);
      executeStMatrix(matrices, transpose, addr, regs, write);
      // One 16-byte write per row at the address of the lane that gave it; the lanes beyond .x1/.x2 are not used.
      ASSERT_EQ(writes.size(), 8 * matrices);
      for (uint32_t i = 0; i < writes.size(); ++i) {
        EXPECT_EQ(writes[i].lane, i);
        EXPECT_EQ(writes[i].address, addr[i]);
        EXPECT_EQ(writes[i].bytes, 16u);
      }
      for (uint32_t m = 0; m < matrices; ++m)
        for (uint32_t r = 0; r < 8; ++r)
          for (uint32_t e = 0; e < 8; ++e)
            ASSERT_EQ(target.memory[SharedRows::slotOf(m, r) * 8 + e], SharedRows::valueOf(m, r, e))
                << "matrix " << m << " row " << r << " element " << e;
    }
  // Lane 5's register (low 0x1111, high 0x2222) lands at row 1, elements 2 and 3; with .trans at rows 2 and 3,
  // element 1.
  for (bool transpose : {false, true}) {
    SharedRows target;
    std::vector<uint32_t> regs(32, 0);
    regs[5] = 0x22221111;
    executeStMatrix(1, transpose, target.addresses(1),
                    regs, [](uint32_t, uint64_t address, uint32_t bytes, const void* src) {
                      std::memcpy(reinterpret_cast<void*>(address), src, bytes);
                    });
    auto at = [&](uint32_t row, uint32_t e) { return target.memory[SharedRows::slotOf(0, row) * 8 + e]; };
    EXPECT_EQ(transpose ? at(2, 1) : at(1, 2), 0x1111);
    EXPECT_EQ(transpose ? at(3, 1) : at(1, 3), 0x2222);
  }
}

TEST(WarpMatrix, MatrixCountsOtherThan1_2_4AreErrors) {
  std::array<uint64_t, 32> addr{};
  std::vector<uint32_t> regs(32 * 4);
  MatrixRowRead read = [](uint32_t, uint64_t, uint32_t, void*) { FAIL() << "nothing may be read"; };
  MatrixRowWrite write = [](uint32_t, uint64_t, uint32_t, const void*) { FAIL() << "nothing may be written"; };
  try {
    executeLdMatrix(3, false, addr, read, std::span<uint32_t>(regs).first(96));
    FAIL() << ".x3 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(".num must be .x1, .x2 or .x4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(executeStMatrix(8, false, addr, regs, write), Error);
  EXPECT_THROW(executeLdMatrix(2, false, addr, read, regs), Error);  // 128 registers for .x2
  EXPECT_THROW(executeLdMatrix(4, false, std::span<const uint64_t>(addr).first(16), read, regs), Error);
}

}  // namespace
}  // namespace tessera::sim
