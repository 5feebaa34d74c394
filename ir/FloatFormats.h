// The floating-point element formats of the IR and their conversions to and from double: IEEE binary16 (f16),
// bfloat16, binary32, binary64, and the OCP FP8 formats e4m3 ("fn": no infinities, max 448, NaN = S.1111.111)
// and e5m2 (IEEE-like, with infinities and NaNs). The one definition used by constant folding, the interpreter,
// kernel-argument packing and the lowering's software fp8 conversions.
//
// roundTo* rounds a double to the nearest value of the format (round-to-nearest-even, with subnormals).
// IEEE formats (f16, bf16) overflow to infinity; the fp8 formats saturate to their largest finite value
// (infinities included), as hardware "satfinite" conversions do. NaN stays NaN.
// encode* produces the storage bit pattern: exact for values of the format (an e5m2 infinity stays infinity:
// it is a value of the type), otherwise rounded as roundTo* does; decode* is exact. NaNs encode to one
// canonical quiet NaN per format (sign kept), so NaN payloads do not survive a decode/encode round trip.
#pragma once

#include <cstdint>

#include "ir/Types.h"

namespace tessera::ir {

// A binary floating-point format narrower than double, by its fields.
struct NarrowFloatFormat {
  int mantissaBits;
  int exponentBits;
  int bias;
  double maxFinite;
  bool hasInfinity;  // IEEE-style: exponent all-ones is inf (mantissa 0) or NaN
  bool saturates;    // conversions clamp overflow (and infinity) to +-maxFinite instead of giving inf
  uint32_t nanBits;  // canonical quiet NaN, positive
};

// The fields of f16, bf16, f8e4m3 or f8e5m2; `kind` must be one of those.
const NarrowFloatFormat& narrowFloatFormat(ScalarKind kind);

double roundToF16(double v);
double roundToBF16(double v);
double roundToF8E4M3(double v);
double roundToF8E5M2(double v);
// The hardware double -> float conversion: round-to-nearest-even with IEEE overflow to infinity.
inline double roundToF32(double v) { return static_cast<double>(static_cast<float>(v)); }

uint16_t encodeF16(double v);
uint16_t encodeBF16(double v);
uint8_t encodeF8E4M3(double v);
uint8_t encodeF8E5M2(double v);
uint32_t encodeF32(double v);
uint64_t encodeF64(double v);

double decodeF16(uint16_t bits);
double decodeBF16(uint16_t bits);
double decodeF8E4M3(uint8_t bits);
double decodeF8E5M2(uint8_t bits);
double decodeF32(uint32_t bits);
double decodeF64(uint64_t bits);

// The same, for any float element kind (f16 bf16 f32 f64 f8e4m3 f8e5m2) chosen at run time. roundToFloat is
// inline: element loops call it with a loop-invariant kind, so the switch predicts well.
inline double roundToFloat(ScalarKind kind, double v) {
  switch (kind) {
    case ScalarKind::F32: return roundToF32(v);
    case ScalarKind::F16: return roundToF16(v);
    case ScalarKind::BF16: return roundToBF16(v);
    case ScalarKind::F8E4M3: return roundToF8E4M3(v);
    case ScalarKind::F8E5M2: return roundToF8E5M2(v);
    default: return v;  // f64
  }
}
uint64_t encodeFloat(ScalarKind kind, double v);
double decodeFloat(ScalarKind kind, uint64_t bits);

// The integer `v` (canonical form, see IntegerSemantics.h; `isUnsigned` says how to read it) converted to float
// kind `kind` with a single rounding to nearest even (int64 -> double -> f32 could round twice).
double intToFloat(int64_t v, bool isUnsigned, ScalarKind kind);

// Rounds an f32 value to tf32 (8-bit exponent, 10 mantissa bits), round-to-nearest-even; inf/NaN unchanged.
double roundF32ToTF32(double v);

}  // namespace tessera::ir
