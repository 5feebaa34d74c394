#include "jit/sim/runtime/WarpgroupMatrix.h"

#include <string>

#include "ir/Error.h"
#include "ir/FloatFormats.h"
#include "jit/sim/runtime/IsaFloat8.h"

namespace tessera::sim {

namespace {

bool isWgmmaInput(MatrixElement e) {
  return e == MatrixElement::F16 || e == MatrixElement::BF16 || e == MatrixElement::E4M3 || e == MatrixElement::E5M2;
}

double decodeInput(MatrixElement e, uint16_t bits) {
  switch (e) {
    case MatrixElement::F16: return ir::decodeF16(bits);
    case MatrixElement::BF16: return ir::decodeBF16(bits);
    case MatrixElement::E4M3: return decodeIsaE4M3(static_cast<uint8_t>(bits));
    default: return decodeIsaE5M2(static_cast<uint8_t>(bits));
  }
}

}  // namespace

uint32_t wgmmaK(MatrixElement input) { return 256 / elementBits(input); }

MatrixDescriptor decodeMatrixDescriptor(uint64_t bits) {
  auto field = [&](int low, int width) { return static_cast<uint32_t>(bits >> low & ((uint64_t{1} << width) - 1)); };
  static constexpr uint32_t kSwizzleBytes[4] = {0, 128, 64, 32};
  return {field(0, 14) << 4, field(16, 14) << 4, field(32, 14) << 4, field(49, 3), kSwizzleBytes[field(62, 2)]};
}

uint32_t wgmmaElementAddress(const WgmmaOperand& operand, uint32_t row, uint32_t k) {
  const MatrixDescriptor& d = operand.descriptor;
  const uint32_t eb = operand.elementBytes, perChunk = 16 / eb, swizzle = d.swizzleBytes;
  uint32_t offset;
  if (!operand.mnMajor) {
    // Core matrices of 8 rows x 16 bytes of K. Rows of one 8-row group: 16 bytes apart (interleave) or one swizzle
    // line apart; groups of 8 rows: SBO apart; the two 16-byte K chunks: LBO apart (interleave) or adjacent.
    const uint32_t chunk = k / perChunk, inChunk = (k % perChunk) * eb;
    offset = row / 8 * d.strideByteOffset + inChunk +
             (swizzle ? row % 8 * swizzle + chunk * 16 : row % 8 * 16 + chunk * d.leadingByteOffset);
  } else {
    // Runs of M/N contiguous: 16 bytes (interleave) or one swizzle line; K rows 16 bytes (interleave) or one line
    // apart. Interleave: 16-byte M/N chunks SBO apart, groups of 8 K rows LBO apart; swizzled: line-wide M/N
    // blocks LBO apart, groups of 8 K rows SBO apart.
    if (swizzle) {
      const uint32_t perLine = swizzle / eb;
      offset = row / perLine * d.leadingByteOffset + row % perLine * eb + k % 8 * swizzle + k / 8 * d.strideByteOffset;
    } else {
      offset = row / perChunk * d.strideByteOffset + row % perChunk * eb + k % 8 * 16 + k / 8 * d.leadingByteOffset;
    }
  }
  uint32_t address = d.startAddress + offset;
  if (swizzle) address ^= (address >> 7 & (swizzle / 16 - 1)) << 4;
  return address;
}

MatrixPosition wgmmaAccumulatorElement(uint32_t thread, uint32_t reg) {
  const uint32_t warp = thread / 32, lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * (reg / 2 % 2), 8 * (reg / 4) + 2 * (lane % 4) + reg % 2};
}

MatrixPosition wgmmaRegisterAElement(uint32_t thread, uint32_t e) {
  const uint32_t warp = thread / 32, lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * (e / 2 % 2), 2 * (lane % 4) + e % 2 + 8 * (e / 4)};
}

void executeWgmma(uint32_t n, MatrixElement inputA, MatrixElement inputB, std::span<const uint16_t> a,
                  std::span<const uint16_t> b, bool scaleD, std::span<const uint32_t> c, std::span<uint32_t> d) {
  if (n < 8 || n > 256 || n % 8) throw Error("wgmma: n = " + std::to_string(n) + " (a multiple of 8 up to 256)");
  if (!isWgmmaInput(inputA) || !isWgmmaInput(inputB) || elementBits(inputA) != elementBits(inputB) ||
      (elementBits(inputA) == 16 && inputA != inputB))
    throw Error("wgmma: the inputs are .f16 or .bf16 (A and B alike) or .e4m3 and .e5m2 (mixed)");
  const uint32_t K = wgmmaK(inputA);
  const size_t registers = size_t{kWarpgroupThreads} * n / 2;
  if (a.size() != kWgmmaM * K || b.size() != size_t{K} * n || c.size() != registers || d.size() != registers)
    throw Error("wgmma: operand sizes do not match m64n" + std::to_string(n) + "k" + std::to_string(K));
  for (uint32_t t = 0; t < kWarpgroupThreads; ++t)
    for (uint32_t r = 0; r < n / 2; ++r) {
      const MatrixPosition p = wgmmaAccumulatorElement(t, r);
      const size_t at = size_t{t} * (n / 2) + r;
      double sum = 0;
      for (uint32_t k = 0; k < K; ++k)
        sum += decodeInput(inputA, a[p.row * K + k]) * decodeInput(inputB, b[size_t{k} * n + p.col]);
      if (scaleD) sum += ir::decodeF32(c[at]);
      d[at] = ir::encodeF32(sum);
    }
}

}  // namespace tessera::sim
