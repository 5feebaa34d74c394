#include "jit/sim/BFloat16Libcalls.h"

#include <bit>
#include <cmath>
#include <cstdint>

namespace tessera::sim {

namespace {

uint16_t bfloat16Bits(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  return static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

// The callers read a bf16 result from the low 16 bits of the first floating-point return register (x86-64: xmm0,
// AArch64: v0), where a float is returned: the host compiler here has no bf16 type to declare the return with.
float asReturnedBFloat16(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits)); }

float truncFloatToBFloat16(float x) { return asReturnedBFloat16(bfloat16Bits(x)); }

// Rounds to f32 "to odd" first (toward zero, lowest bit set when inexact), so that the second rounding is exact.
float truncDoubleToBFloat16(double x) {
  float nearest = static_cast<float>(x);
  if (!std::isnan(x) && static_cast<double>(nearest) != x) {
    uint32_t bits = std::bit_cast<uint32_t>(nearest);
    if (std::fabs(static_cast<double>(nearest)) > std::fabs(x)) --bits;
    nearest = std::bit_cast<float>(bits | 1);
  }
  return asReturnedBFloat16(bfloat16Bits(nearest));
}

}  // namespace

const RuntimeSymbols& bfloat16Libcalls() {
  static const RuntimeSymbols symbols = {
      {"__truncsfbf2", reinterpret_cast<const void*>(&truncFloatToBFloat16)},
      {"__truncdfbf2", reinterpret_cast<const void*>(&truncDoubleToBFloat16)},
  };
  return symbols;
}

}  // namespace tessera::sim
