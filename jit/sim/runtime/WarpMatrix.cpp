#include "jit/sim/runtime/WarpMatrix.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "ir/Error.h"
#include "ir/FloatFormats.h"
#include "jit/sim/runtime/IsaFloat8.h"

namespace tessera::sim {
namespace {

static_assert(std::endian::native == std::endian::little,
              "register parts and memory rows are taken apart as little-endian, as on the GPUs");

using Op = MmaOperand;
using E = MatrixElement;

// ---- shapes. Register counts per lane: the operand tables of the PTX ISA sections cited below, and for MFMA the
// "GPRs required for A/B/C/D" of AMD's Matrix Instruction Calculator (CDNA2 for gfx90a, CDNA3 for gfx942).
constexpr uint32_t kNumKinds = kMfmaI32_16x16x16I8 + 1;
constexpr std::array<MmaShape, kNumKinds> kShapes = {{
    {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, 8, 16, 32, E::F16, E::F32, {4, 2, 4}},
    {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, 8, 16, 32, E::BF16, E::F32, {4, 2, 4}},
    {"mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 16, 8, 16, 32, E::F16, E::F16, {4, 2, 2}},
    {"mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 16, 8, 8, 32, E::F16, E::F32, {2, 1, 4}},
    {"mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 16, 8, 8, 32, E::BF16, E::F32, {2, 1, 4}},
    {"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 16, 8, 8, 32, E::TF32, E::F32, {4, 2, 4}},
    {"mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", 16, 8, 4, 32, E::TF32, E::F32, {2, 1, 4}},
    {"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 16, 8, 32, 32, E::S8, E::S32, {4, 2, 4}},
    {"mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32", 16, 8, 32, 32, E::U8, E::S32, {4, 2, 4}},
    {"mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32", 16, 8, 16, 32, E::S8, E::S32, {2, 1, 4}},
    {"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 16, 8, 32, 32, E::E4M3, E::F32, {4, 2, 4}},
    {"mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", 16, 8, 32, 32, E::E5M2, E::F32, {4, 2, 4}},
    {"v_mfma_f32_16x16x16f16", 16, 16, 16, 64, E::F16, E::F32, {2, 2, 4}},
    {"v_mfma_f32_16x16x16bf16_1k", 16, 16, 16, 64, E::BF16, E::F32, {2, 2, 4}},
    {"v_mfma_f32_32x32x8f16", 32, 32, 8, 64, E::F16, E::F32, {2, 2, 16}},
    {"v_mfma_f32_32x32x8bf16_1k", 32, 32, 8, 64, E::BF16, E::F32, {2, 2, 16}},
    {"v_mfma_i32_16x16x32_i8", 16, 16, 32, 64, E::S8, E::S32, {2, 2, 4}},
    {"v_mfma_i32_16x16x16i8", 16, 16, 16, 64, E::S8, E::S32, {1, 1, 4}},
}};

const char* operandName(Op op) { return op == Op::A ? "A" : op == Op::B ? "B" : "C/D"; }

// ---- fragment layouts: element i of a lane's operand (i = register * elementsPerRegister + part, the ISA's
// "a_i / b_i / c_i, low to high") -> (row, col).

// PTX ISA, "Matrix multiply-accumulate operation using mma instruction" (9.7.13.4 in PTX ISA 7.6), the
// "Matrix Fragments for mma.m16n8k*" sections: groupID = %laneid >> 2, threadID_in_group = %laneid % 4.
MatrixPosition ptxElement(MmaKind kind, Op op, uint32_t lane, uint32_t i) {
  const uint32_t g = lane >> 2, t = lane % 4;
  // Accumulators of every m16n8kK shape here: row groupID for c0, c1, groupID + 8 for c2, c3;
  // col threadID_in_group * 2 + (i & 1). (f16 accumulators pack c0, c1 and c2, c3 into two .f16x2 registers.)
  if (op == Op::C) return {g + 8 * (i >> 1), 2 * t + (i & 1)};
  switch (kind) {
    case kMmaM16N8K16_F16_F32:
    case kMmaM16N8K16_BF16_F32:
    case kMmaM16N8K16_F16_F16:
      // "Matrix Fragments for mma.m16n8k16 with floating point type": A row groupID for a0, a1, a4, a5, else
      // groupID + 8; col threadID_in_group * 2 + (i & 1), + 8 for i >= 4. B row threadID_in_group * 2 + (i & 1),
      // + 8 for i >= 2; col groupID.
      if (op == Op::A) return {g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)};
      return {2 * t + (i & 1) + 8 * (i >> 1), g};
    case kMmaM16N8K8_F16_F32:
    case kMmaM16N8K8_BF16_F32:
      // "Matrix Fragments for mma.m16n8k8", .f16/.bf16: A row groupID for a0, a1, groupID + 8 for a2, a3; col
      // threadID_in_group * 2 + (i & 1). B row threadID_in_group * 2 + i; col groupID.
      if (op == Op::A) return {g + 8 * (i >> 1), 2 * t + (i & 1)};
      return {2 * t + i, g};
    case kMmaM16N8K8_TF32_F32:
      // "Matrix Fragments for mma.m16n8k8", .tf32: A row groupID for a0, a2, groupID + 8 for a1, a3; col
      // threadID_in_group for a0, a1, + 4 for a2, a3. B row threadID_in_group for b0, + 4 for b1; col groupID.
      if (op == Op::A) return {g + 8 * (i & 1), t + 4 * (i >> 1)};
      return {t + 4 * i, g};
    case kMmaM16N8K4_TF32_F32:
      // "Matrix Fragments for mma.m16n8k4": A row groupID for a0, groupID + 8 for a1; col threadID_in_group.
      // B row threadID_in_group; col groupID.
      if (op == Op::A) return {g + 8 * i, t};
      return {t, g};
    case kMmaM16N8K32_S8_S32:
    case kMmaM16N8K32_U8_S32:
    case kMmaM16N8K32_E4M3_F32:
    case kMmaM16N8K32_E5M2_F32:
      // "Matrix Fragments for mma.m16n8k32" (.s8/.u8, and .e4m3/.e5m2 with the same layout): A row groupID for
      // a0..a3 and a8..a11, else groupID + 8; col threadID_in_group * 4 + (i & 3), + 16 for i >= 8. B row
      // threadID_in_group * 4 + (i & 3), + 16 for i >= 4; col groupID.
      if (op == Op::A) return {g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)};
      return {4 * t + (i & 3) + 16 * (i >> 2), g};
    case kMmaM16N8K16_S8_S32:
      // "Matrix Fragments for mma.m16n8k16 with integer type": A row groupID for a0..a3, groupID + 8 for a4..a7;
      // col threadID_in_group * 4 + (i & 3). B row threadID_in_group * 4 + i; col groupID.
      if (op == Op::A) return {g + 8 * (i >> 2), 4 * t + (i & 3)};
      return {4 * t + i, g};
    default:
      break;
  }
  throw Error("mma: kind " + std::to_string(kind) + " is not a PTX mma shape");
}

// AMD MFMA register layouts, wave64, no CBSZ/ABID/BLGP modifiers: AMD Instinct MI200 (CDNA2) / MI300 (CDNA3)
// ISA, "Matrix Arithmetic Instructions", as tabulated by AMD's Matrix Instruction Calculator
// (--detail-instruction, "Register to matrix element mapping"). Element i of a lane is GPR i / (elements per
// register), bits of part i % (elements per register).
MatrixPosition amdElement(MmaKind kind, Op op, uint32_t lane, uint32_t i) {
  switch (kind) {
    case kMfmaF32_16x16x16F16:
    case kMfmaF32_16x16x16BF16:
    case kMfmaI32_16x16x16I8:
    case kMfmaI32_16x16x32I8: {
      // A: i = lane % 16, k = K/4 * floor(lane / 16) + element; B: j = lane % 16, the same k (K/4 = 4 for
      // 16x16x16 f16/bf16/i8, 8 for 16x16x32 i8). C/D: i = 4 * floor(lane / 16) + GPR, j = lane % 16.
      const uint32_t kPerLane = kShapes[kind].k / 4;
      if (op == Op::A) return {lane % 16, kPerLane * (lane / 16) + i};
      if (op == Op::B) return {kPerLane * (lane / 16) + i, lane % 16};
      return {4 * (lane / 16) + i, lane % 16};
    }
    case kMfmaF32_32x32x8F16:
    case kMfmaF32_32x32x8BF16:
      // A: i = lane % 32, k = 4 * floor(lane / 32) + element; B: j = lane % 32, the same k. C/D (16 GPRs):
      // i = 8 * floor(GPR / 4) + 4 * floor(lane / 32) + GPR % 4, j = lane % 32.
      if (op == Op::A) return {lane % 32, 4 * (lane / 32) + i};
      if (op == Op::B) return {4 * (lane / 32) + i, lane % 32};
      return {8 * (i / 4) + 4 * (lane / 32) + i % 4, lane % 32};
    default:
      break;
  }
  throw Error("mfma: kind " + std::to_string(kind) + " is not an MFMA shape");
}

// Per kind and operand, the position of every (lane, element) pair: [lane * elementsPerLane + element].
struct FragmentTables {
  std::array<std::vector<MatrixPosition>, 3> operand;
};

uint32_t elementsPerLane(const MmaShape& s, Op op) { return s.registersOf(op) * elementsPerRegister(s.elementOf(op)); }

const FragmentTables& fragmentTables(MmaKind kind) {
  static const std::array<FragmentTables, kNumKinds> tables = [] {
    std::array<FragmentTables, kNumKinds> all;
    for (uint32_t kind = 0; kind < kNumKinds; ++kind) {
      const MmaShape& s = kShapes[kind];
      for (Op op : {Op::A, Op::B, Op::C}) {
        const uint32_t perLane = elementsPerLane(s, op);
        std::vector<MatrixPosition>& table = all[kind].operand[static_cast<int>(op)];
        table.reserve(s.lanes * perLane);
        for (uint32_t lane = 0; lane < s.lanes; ++lane)
          for (uint32_t i = 0; i < perLane; ++i)
            table.push_back(s.lanes == 64 ? amdElement(static_cast<MmaKind>(kind), op, lane, i)
                                          : ptxElement(static_cast<MmaKind>(kind), op, lane, i));
      }
    }
    return all;
  }();
  return tables[kind];
}

// ---- element values

uint32_t partBits(uint32_t reg, uint32_t part, uint32_t bits) {
  return bits == 32 ? reg : (reg >> (part * bits)) & ((1u << bits) - 1);
}

double decodeFloat(E e, uint32_t bits) {
  switch (e) {
    case E::F16: return ir::decodeF16(static_cast<uint16_t>(bits));
    case E::BF16: return ir::decodeBF16(static_cast<uint16_t>(bits));
    case E::TF32: return ir::decodeF32(bits & ~0x1FFFu);  // the low 13 mantissa bits are not read
    case E::E4M3: return decodeIsaE4M3(static_cast<uint8_t>(bits));
    case E::E5M2: return decodeIsaE5M2(static_cast<uint8_t>(bits));
    case E::F32: return ir::decodeF32(bits);
    default: break;
  }
  throw Error("mma: element format is not a float format");
}

int64_t decodeInt(E e, uint32_t bits) {
  switch (e) {
    case E::S8: return static_cast<int8_t>(bits);
    case E::U8: return static_cast<uint8_t>(bits);
    case E::S32: return static_cast<int32_t>(bits);
    default: break;
  }
  throw Error("mma: element format is not an integer format");
}

uint32_t encodeFloat(E e, double v) {
  return e == E::F16 ? ir::encodeF16(v) : ir::encodeF32(v);  // accumulators are f16 or f32
}

uint32_t encodeInt(E, int64_t v) { return static_cast<uint32_t>(v); }  // s32 wraps modulo 2^32

void checkOperand(const MmaShape& s, Op op, size_t registers) {
  const size_t want = size_t{s.lanes} * s.registersOf(op);
  if (registers != want)
    throw Error(std::string(s.instruction) + ": operand " + operandName(op) + " has " + std::to_string(registers) +
                " registers; the warp's operand is " + std::to_string(s.lanes) + " lanes x " +
                std::to_string(s.registersOf(op)) + " = " + std::to_string(want));
}

// The operand as a dense row-major matrix (`cols` wide) of decoded values.
template <typename Value>
std::vector<Value> gather(const MmaShape& s, Op op, const std::vector<MatrixPosition>& table,
                          std::span<const uint32_t> regs, uint32_t cols, Value (*decode)(E, uint32_t)) {
  const E element = s.elementOf(op);
  const uint32_t bits = elementBits(element), perReg = elementsPerRegister(element), perLane = elementsPerLane(s, op);
  std::vector<Value> dense(table.size());
  for (size_t at = 0; at < table.size(); ++at) {
    const uint32_t i = at % perLane;
    const uint32_t reg = regs[at / perLane * s.registersOf(op) + i / perReg];
    dense[table[at].row * cols + table[at].col] = decode(element, partBits(reg, i % perReg, bits));
  }
  return dense;
}

// D = A * B + C with values of type Value (double or int64_t), each D element encoded once.
template <typename Value>
void multiplyAccumulate(const MmaShape& s, const FragmentTables& t, std::span<const uint32_t> a,
                        std::span<const uint32_t> b, std::span<const uint32_t> c, std::span<uint32_t> d,
                        Value (*decode)(E, uint32_t), uint32_t (*encode)(E, Value)) {
  const std::vector<Value> A = gather(s, Op::A, t.operand[0], a, s.k, decode);
  const std::vector<Value> B = gather(s, Op::B, t.operand[1], b, s.n, decode);
  const std::vector<Value> C = gather(s, Op::C, t.operand[2], c, s.n, decode);
  const std::vector<MatrixPosition>& out = t.operand[2];
  const E element = s.accumulator;
  const uint32_t bits = elementBits(element), perReg = elementsPerRegister(element), perLane = elementsPerLane(s, Op::C);
  std::fill(d.begin(), d.end(), 0u);
  for (size_t at = 0; at < out.size(); ++at) {
    const MatrixPosition p = out[at];
    Value products = 0;
    for (uint32_t k = 0; k < s.k; ++k) products += A[p.row * s.k + k] * B[k * s.n + p.col];
    const uint32_t result = encode(element, products + C[p.row * s.n + p.col]);
    const uint32_t i = at % perLane;
    uint32_t& reg = d[at / perLane * s.registersOf(Op::C) + i / perReg];
    reg |= bits == 32 ? result : result << (i % perReg * bits);
  }
}

// ---- ldmatrix / stmatrix

void checkMatrixCount(const char* instruction, uint32_t matrices) {
  if (matrices != 1 && matrices != 2 && matrices != 4)
    throw Error(std::string(instruction) + ": " + std::to_string(matrices) +
                " matrices; .num must be .x1, .x2 or .x4");
}

void checkSpan(const char* instruction, const char* what, size_t size, size_t want) {
  if (size != want)
    throw Error(std::string(instruction) + ": " + what + " has " + std::to_string(size) + " entries, expected " +
                std::to_string(want));
}

// The element of an 8x8 matrix, as (row, element) in memory, that half `half` of a lane's register holds. PTX ISA,
// "Warp-level matrix load instruction: ldmatrix" (figure "Fragments returned by ldmatrix"): a group of four
// threads holds a row; thread t holds row t / 4, elements 2 * (t % 4) and 2 * (t % 4) + 1 (low half first).
// With .trans the matrix is read in column-major order: thread t holds column t / 4, rows 2 * (t % 4) (+ 1).
MatrixPosition matrixElementOf(uint32_t lane, uint32_t half, bool transpose) {
  const uint32_t fragmentRow = lane / 4, fragmentCol = 2 * (lane % 4) + half;
  return transpose ? MatrixPosition{fragmentCol, fragmentRow} : MatrixPosition{fragmentRow, fragmentCol};
}

constexpr uint32_t kMatrixRows = 8, kRowElements = kMatrixRowBytes / 2;
using MatrixRows = std::array<std::array<uint16_t, kRowElements>, kMatrixRows>;

}  // namespace

const MmaShape& mmaShape(MmaKind kind) {
  if (static_cast<uint32_t>(kind) >= kNumKinds)
    throw Error("mma: " + std::to_string(static_cast<uint32_t>(kind)) + " is not a warp matrix operation (MmaKind)");
  return kShapes[kind];
}

uint32_t elementBits(MatrixElement e) {
  switch (e) {
    case E::F16: case E::BF16: return 16;
    case E::E4M3: case E::E5M2: case E::S8: case E::U8: return 8;
    case E::TF32: case E::F32: case E::S32: return 32;
  }
  throw Error("mma: unknown element format");
}

uint32_t elementsPerRegister(MatrixElement e) { return 32 / elementBits(e); }

MatrixPosition fragmentElement(MmaKind kind, MmaOperand operand, uint32_t lane, uint32_t reg, uint32_t part) {
  const MmaShape& s = mmaShape(kind);
  const uint32_t perReg = elementsPerRegister(s.elementOf(operand));
  if (lane >= s.lanes || reg >= s.registersOf(operand) || part >= perReg)
    throw Error(std::string(s.instruction) + ": operand " + operandName(operand) + " has no lane " +
                std::to_string(lane) + " register " + std::to_string(reg) + " part " + std::to_string(part));
  const uint32_t perLane = elementsPerLane(s, operand);
  return fragmentTables(kind).operand[static_cast<int>(operand)][lane * perLane + reg * perReg + part];
}

void executeMma(MmaKind kind, std::span<const uint32_t> a, std::span<const uint32_t> b, std::span<const uint32_t> c,
                std::span<uint32_t> d) {
  const MmaShape& s = mmaShape(kind);
  checkOperand(s, Op::A, a.size());
  checkOperand(s, Op::B, b.size());
  checkOperand(s, Op::C, c.size());
  checkOperand(s, Op::C, d.size());
  const FragmentTables& t = fragmentTables(kind);
  if (s.accumulator == E::S32)
    multiplyAccumulate<int64_t>(s, t, a, b, c, d, decodeInt, encodeInt);
  else
    multiplyAccumulate<double>(s, t, a, b, c, d, decodeFloat, encodeFloat);
}

void executeLdMatrix(uint32_t matrices, bool transpose, std::span<const uint64_t> rowAddress,
                     const MatrixRowRead& read, std::span<uint32_t> out) {
  const char* instruction = "ldmatrix.sync.aligned.m8n8.b16";
  checkMatrixCount(instruction, matrices);
  checkSpan(instruction, "the row addresses", rowAddress.size(), kMatrixLanes);
  checkSpan(instruction, "the destination", out.size(), size_t{kMatrixLanes} * matrices);
  for (uint32_t m = 0; m < matrices; ++m) {
    MatrixRows rows;
    for (uint32_t r = 0; r < kMatrixRows; ++r) {
      const uint32_t lane = kMatrixRows * m + r;
      read(lane, rowAddress[lane], kMatrixRowBytes, rows[r].data());
    }
    for (uint32_t lane = 0; lane < kMatrixLanes; ++lane) {
      const MatrixPosition lo = matrixElementOf(lane, 0, transpose), hi = matrixElementOf(lane, 1, transpose);
      out[lane * matrices + m] = uint32_t{rows[lo.row][lo.col]} | uint32_t{rows[hi.row][hi.col]} << 16;
    }
  }
}

void executeStMatrix(uint32_t matrices, bool transpose, std::span<const uint64_t> rowAddress,
                     std::span<const uint32_t> in, const MatrixRowWrite& write) {
  const char* instruction = "stmatrix.sync.aligned.m8n8.b16";
  checkMatrixCount(instruction, matrices);
  checkSpan(instruction, "the row addresses", rowAddress.size(), kMatrixLanes);
  checkSpan(instruction, "the source", in.size(), size_t{kMatrixLanes} * matrices);
  for (uint32_t m = 0; m < matrices; ++m) {
    MatrixRows rows;
    for (uint32_t lane = 0; lane < kMatrixLanes; ++lane) {
      const uint32_t reg = in[lane * matrices + m];
      const MatrixPosition lo = matrixElementOf(lane, 0, transpose), hi = matrixElementOf(lane, 1, transpose);
      rows[lo.row][lo.col] = static_cast<uint16_t>(reg);
      rows[hi.row][hi.col] = static_cast<uint16_t>(reg >> 16);
    }
    for (uint32_t r = 0; r < kMatrixRows; ++r) {
      const uint32_t lane = kMatrixRows * m + r;
      write(lane, rowAddress[lane], kMatrixRowBytes, rows[r].data());
    }
  }
}

}  // namespace tessera::sim
