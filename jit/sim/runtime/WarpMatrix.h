// What the warp-level matrix operations compute, as the PTX ISA and AMD's CDNA ISA documents define them:
// mma.sync fragments and products, ldmatrix / stmatrix (m8n8, b16) and MFMA (wave64). Written from the documents
// and sharing nothing with the backends' fragment tables (backends/nvptx/MmaFragments.*,
// backends/amdgpu/MfmaFragments.*), so a misreading in either is caught by the other
// (tests/unit/sim_warpmatrix_backends_test.cpp compares them).
//
// Registers travel as SimABI.h says: per lane, the instruction's 32-bit registers in the order the ISA lists
// them; packed 16-bit elements low half first, 8-bit elements low byte first; f32 and s32 as their bits. A warp's
// operand is lane-major: register r of lane l at [l * registers + r].
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "jit/sim/SimABI.h"

namespace tessera::sim {

enum class MatrixElement : uint8_t { F16, BF16, TF32, E4M3, E5M2, S8, U8, F32, S32 };

enum class MmaOperand : uint8_t { A, B, C };  // C stands for the accumulator C and the result D (one layout)

struct MmaShape {
  const char* instruction;     // as the ISA spells it, for messages
  uint32_t m, n, k;            // A is m x k, B is k x n, C and D are m x n
  uint32_t lanes;              // 32 (NVIDIA warp) or 64 (AMD wave64)
  MatrixElement input;         // A and B
  MatrixElement accumulator;   // C and D
  uint32_t registers[3];       // 32-bit registers per lane, indexed by MmaOperand
  uint32_t registersOf(MmaOperand op) const { return registers[static_cast<int>(op)]; }
  MatrixElement elementOf(MmaOperand op) const { return op == MmaOperand::C ? accumulator : input; }
};

// The shape of `kind`; throws tessera::Error for a value that is not an MmaKind.
const MmaShape& mmaShape(MmaKind kind);

uint32_t elementBits(MatrixElement e);
uint32_t elementsPerRegister(MatrixElement e);  // 32 / bits

struct MatrixPosition {
  uint32_t row = 0, col = 0;
  bool operator==(const MatrixPosition&) const = default;
};

// The operand element that `part` (element index within the register, low bits first) of register `reg` of
// lane `lane` holds, as (row, col) of A (m x k), B (k x n) or C/D (m x n). Throws tessera::Error out of range.
MatrixPosition fragmentElement(MmaKind kind, MmaOperand operand, uint32_t lane, uint32_t reg, uint32_t part);

// D = A * B + C over the whole warp. Each span holds lanes x registersOf(operand) registers, lane-major.
// Numerics: elements are decoded exactly (tf32 from the top 19 bits of its f32 register, the low 13 mantissa
// bits ignored); products of the input formats are exact in double; the K products are summed in double, C is
// added and the result rounded once to the accumulator format (f32 or f16, round to nearest even). The ISAs leave
// the hardware's summation order and intermediate precision unspecified, so hardware may differ from this in
// the last bits of f32 (within the interpreter comparison tolerance); subnormal inputs are kept. Integer
// products accumulate modulo 2^32 (no .satfinite), as the ISA says of integer mma without it.
void executeMma(MmaKind kind, std::span<const uint32_t> a, std::span<const uint32_t> b, std::span<const uint32_t> c,
                std::span<uint32_t> d);

// ---- ldmatrix / stmatrix .m8n8 .b16: each matrix is 8 rows of 8 16-bit elements (16 bytes a row).
inline constexpr uint32_t kMatrixLanes = 32;
inline constexpr uint32_t kMatrixRowBytes = 16;

// One row access of a matrix instruction: `lane` is the lane that supplied `address`. The runtime's shared-memory
// checker and bank-conflict counter see each row through these; the row's alignment (the ISA requires 16 bytes)
// is the checker's to judge.
using MatrixRowRead = std::function<void(uint32_t lane, uint64_t address, uint32_t bytes, void* dst)>;
using MatrixRowWrite = std::function<void(uint32_t lane, uint64_t address, uint32_t bytes, const void* src)>;

// ldmatrix.sync.aligned.m8n8.x{matrices}[.trans].shared.b16. Lanes 8i..8i+7 give the row addresses of matrix i;
// the addresses of lanes beyond the matrices' (.x1: 8..31, .x2: 16..31) are ignored. `out` receives 32 x
// `matrices` registers, lane-major. Throws tessera::Error for a matrix count other than 1, 2, 4 or mis-sized spans.
void executeLdMatrix(uint32_t matrices, bool transpose, std::span<const uint64_t> rowAddress,
                     const MatrixRowRead& read, std::span<uint32_t> out);
// stmatrix.sync.aligned.m8n8.x{matrices}[.trans].shared.b16 (sm_90): the inverse of ldmatrix; `in` holds 32 x
// `matrices` registers, lane-major.
void executeStMatrix(uint32_t matrices, bool transpose, std::span<const uint64_t> rowAddress,
                     std::span<const uint32_t> in, const MatrixRowWrite& write);

}  // namespace tessera::sim
