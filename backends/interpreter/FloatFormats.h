// Conversions between double and the narrow float formats the IR supports as element types: IEEE binary16
// (f16), bfloat16, and the OCP FP8 formats e4m3 ("fn": no infinities, max 448, NaN = S.1111.111) and e5m2
// (IEEE-like, with infinities and NaNs).
//
// roundTo* rounds a double to the nearest value of the format (round-to-nearest-even, with subnormals).
// IEEE formats (f16, bf16) overflow to infinity; the fp8 formats saturate to their largest finite value
// (infinities included), as hardware "satfinite" conversions do. NaN stays NaN.
// encode* produces the storage bit pattern: exact for values of the format (an e5m2 infinity stays infinity:
// it is a value of the type), otherwise rounded as roundTo* does; decode* is exact. NaNs encode to one
// canonical quiet NaN per format (sign kept), so NaN payloads do not survive a decode/encode round trip.
#pragma once

#include <cstdint>

namespace tessera::interp {

double roundToF16(double v);
double roundToBF16(double v);
double roundToF8E4M3(double v);
double roundToF8E5M2(double v);
double roundToF32(double v);

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

// Rounds an f32 value to tf32 (8-bit exponent, 10 mantissa bits), round-to-nearest-even; inf/NaN unchanged.
double roundF32ToTF32(double v);

}  // namespace tessera::interp
