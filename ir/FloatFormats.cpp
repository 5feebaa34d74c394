#include "ir/FloatFormats.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <limits>

namespace tessera::ir {

namespace {

constexpr NarrowFloatFormat kF16Format{10, 5, 15, 65504.0, true, false, 0x7E00};
constexpr NarrowFloatFormat kBF16Format{7, 8, 127, 3.3895313892515355e38, true, false, 0x7FC0};
constexpr NarrowFloatFormat kF8E4M3Format{3, 4, 7, 448.0, false, true, 0x7F};
constexpr NarrowFloatFormat kF8E5M2Format{2, 5, 15, 57344.0, true, true, 0x7E};

// Round-half-to-even of a non-negative double to an integer value (independent of the FP rounding mode).
double roundHalfEven(double x) {
  double floorX = std::floor(x);
  double diff = x - floorX;
  if (diff > 0.5) return floorX + 1;
  if (diff < 0.5) return floorX;
  return std::fmod(floorX, 2.0) == 0 ? floorX : floorX + 1;
}

double roundTo(const NarrowFloatFormat& f, double v) {
  if (std::isnan(v)) return v;
  if (v == 0) return v;  // keeps the sign of zero
  double a = std::fabs(v);
  if (std::isinf(a)) return f.saturates ? std::copysign(f.maxFinite, v) : v;
  int e;
  std::frexp(a, &e);
  e -= 1;  // a is in [2^e, 2^(e+1))
  const int minNormalExp = 1 - f.bias;
  if (e < minNormalExp) e = minNormalExp;  // subnormal range: fixed quantum
  double quantum = std::ldexp(1.0, e - f.mantissaBits);
  double r = roundHalfEven(a / quantum) * quantum;  // a / quantum is exact: quantum is a power of two
  if (r > f.maxFinite) r = f.saturates ? f.maxFinite : std::numeric_limits<double>::infinity();
  return std::copysign(r, v);
}

uint32_t encode(const NarrowFloatFormat& f, double v) {
  const int totalBits = 1 + f.exponentBits + f.mantissaBits;
  const uint32_t signBit = 1u << (totalBits - 1);
  const uint32_t infBits = ((1u << f.exponentBits) - 1) << f.mantissaBits;
  // An infinity is a value of e5m2, so encoding keeps it; only conversions (roundTo) saturate it.
  if (std::isinf(v) && f.hasInfinity) return (std::signbit(v) ? signBit : 0) | infBits;
  double r = roundTo(f, v);
  uint32_t sign = std::signbit(r) ? signBit : 0;
  if (std::isnan(r)) return f.nanBits | sign;
  if (std::isinf(r)) return sign | infBits;  // IEEE overflow of a finite value
  double a = std::fabs(r);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);
  e -= 1;
  const int minNormalExp = 1 - f.bias;
  if (e < minNormalExp) {
    auto mant = static_cast<uint32_t>(a / std::ldexp(1.0, minNormalExp - f.mantissaBits));
    return sign | mant;
  }
  auto mant = static_cast<uint32_t>(a / std::ldexp(1.0, e - f.mantissaBits)) - (1u << f.mantissaBits);
  auto exponentField = static_cast<uint32_t>(e + f.bias);
  return sign | (exponentField << f.mantissaBits) | mant;
}

double decode(const NarrowFloatFormat& f, uint32_t bits) {
  const int totalBits = 1 + f.exponentBits + f.mantissaBits;
  const bool negative = (bits >> (totalBits - 1)) & 1;
  const uint32_t exponentMax = (1u << f.exponentBits) - 1;
  const uint32_t exponentField = (bits >> f.mantissaBits) & exponentMax;
  const uint32_t mant = bits & ((1u << f.mantissaBits) - 1);
  double magnitude;
  if (f.hasInfinity && exponentField == exponentMax) {
    magnitude = mant == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.hasInfinity && exponentField == exponentMax && mant == (1u << f.mantissaBits) - 1) {
    magnitude = std::numeric_limits<double>::quiet_NaN();  // e4m3fn: S.1111.111 is the only NaN
  } else if (exponentField == 0) {
    magnitude = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mantissaBits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mant | (1u << f.mantissaBits)),
                           static_cast<int>(exponentField) - f.bias - f.mantissaBits);
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace

double roundToF16(double v) { return roundTo(kF16Format, v); }
double roundToBF16(double v) { return roundTo(kBF16Format, v); }
double roundToF8E4M3(double v) { return roundTo(kF8E4M3Format, v); }
double roundToF8E5M2(double v) { return roundTo(kF8E5M2Format, v); }

uint16_t encodeF16(double v) { return static_cast<uint16_t>(encode(kF16Format, v)); }
uint16_t encodeBF16(double v) { return static_cast<uint16_t>(encode(kBF16Format, v)); }
uint8_t encodeF8E4M3(double v) { return static_cast<uint8_t>(encode(kF8E4M3Format, v)); }
uint8_t encodeF8E5M2(double v) { return static_cast<uint8_t>(encode(kF8E5M2Format, v)); }
uint32_t encodeF32(double v) { return std::bit_cast<uint32_t>(static_cast<float>(v)); }
uint64_t encodeF64(double v) { return std::bit_cast<uint64_t>(v); }

double decodeF16(uint16_t bits) { return decode(kF16Format, bits); }
double decodeBF16(uint16_t bits) { return decode(kBF16Format, bits); }
double decodeF8E4M3(uint8_t bits) { return decode(kF8E4M3Format, bits); }
double decodeF8E5M2(uint8_t bits) { return decode(kF8E5M2Format, bits); }
double decodeF32(uint32_t bits) { return std::bit_cast<float>(bits); }
double decodeF64(uint64_t bits) { return std::bit_cast<double>(bits); }

const NarrowFloatFormat& narrowFloatFormat(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::F16: return kF16Format;
    case ScalarKind::BF16: return kBF16Format;
    case ScalarKind::F8E4M3: return kF8E4M3Format;
    case ScalarKind::F8E5M2: return kF8E5M2Format;
    default: break;
  }
  assert(false && "narrowFloatFormat: not a narrow float kind");
  return kF16Format;
}

uint64_t encodeFloat(ScalarKind kind, double v) {
  switch (kind) {
    case ScalarKind::F16: return encodeF16(v);
    case ScalarKind::BF16: return encodeBF16(v);
    case ScalarKind::F32: return encodeF32(v);
    case ScalarKind::F8E4M3: return encodeF8E4M3(v);
    case ScalarKind::F8E5M2: return encodeF8E5M2(v);
    default: return encodeF64(v);
  }
}

double decodeFloat(ScalarKind kind, uint64_t bits) {
  switch (kind) {
    case ScalarKind::F16: return decodeF16(static_cast<uint16_t>(bits));
    case ScalarKind::BF16: return decodeBF16(static_cast<uint16_t>(bits));
    case ScalarKind::F32: return decodeF32(static_cast<uint32_t>(bits));
    case ScalarKind::F8E4M3: return decodeF8E4M3(static_cast<uint8_t>(bits));
    case ScalarKind::F8E5M2: return decodeF8E5M2(static_cast<uint8_t>(bits));
    default: return decodeF64(bits);
  }
}

double intToFloat(int64_t v, bool isUnsigned, ScalarKind kind) {
  const bool negative = !isUnsigned && v < 0;
  const uint64_t magnitude = negative ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  double d;
  if (kind == ScalarKind::F64 || magnitude < (uint64_t(1) << 53)) {
    d = static_cast<double>(magnitude);  // exact, or (f64) correctly rounded by the hardware
  } else {
    // Round to odd at 53 bits (the dropped bits fold into a sticky bit): exact in double, and a second rounding
    // to a format of at most 24 significant bits is then correct.
    const int shift = std::bit_width(magnitude) - 53;
    uint64_t kept = magnitude >> shift;
    if ((magnitude & ((uint64_t(1) << shift) - 1)) != 0) kept |= 1;
    d = std::ldexp(static_cast<double>(kept), shift);
  }
  return roundToFloat(kind, negative ? -d : d);
}

double roundF32ToTF32(double v) {
  uint32_t bits = encodeF32(v);
  if ((bits & 0x7F800000u) == 0x7F800000u) return decodeF32(bits);  // inf or NaN
  // Round-to-nearest-even on the 13 dropped mantissa bits; a carry into the exponent is the correct result.
  bits += 0xFFFu + ((bits >> 13) & 1u);
  bits &= ~0x1FFFu;
  return decodeF32(bits);
}

}  // namespace tessera::ir
