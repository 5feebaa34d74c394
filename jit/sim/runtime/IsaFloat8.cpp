#include "jit/sim/runtime/IsaFloat8.h"

#include <cmath>
#include <limits>

namespace tessera::sim {

namespace {

// sign * 2^(e - bias) * 1.m for normal encodings, sign * 2^(1 - bias) * 0.m for exponent 0.
double fromFields(uint8_t bits, int exponentBits, int mantissaBits) {
  const double sign = bits & 0x80 ? -1.0 : 1.0;
  const int bias = (1 << (exponentBits - 1)) - 1;
  const int exponent = bits >> mantissaBits & ((1 << exponentBits) - 1);
  const int mantissa = bits & ((1 << mantissaBits) - 1);
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - bias - mantissaBits);
  return sign * std::ldexp(mantissa + (1 << mantissaBits), exponent - bias - mantissaBits);
}

}  // namespace

double decodeIsaE4M3(uint8_t bits) {
  if ((bits & 0x7F) == 0x7F) return std::numeric_limits<double>::quiet_NaN();
  return fromFields(bits, 4, 3);
}

double decodeIsaE5M2(uint8_t bits) {
  if ((bits & 0x7C) == 0x7C) {
    if (bits & 0x03) return std::numeric_limits<double>::quiet_NaN();
    return bits & 0x80 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  return fromFields(bits, 5, 2);
}

}  // namespace tessera::sim
