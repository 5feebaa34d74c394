// The 8-bit floating-point formats of the tensor-core instructions, decoded as the PTX ISA defines them (the
// .e4m3 and .e5m2 types), in the emulator's own code: the IR's conversions (ir/FloatFormats.h) are what the
// interpreter and the lowering use, so the emulator does not lean on them to check the hardware's reading.
//  - e4m3: sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities; S.1111.111 is NaN; exponent 0 is
//    subnormal (m / 8 * 2^-6).
//  - e5m2: sign, 5 exponent bits (bias 15), 2 mantissa bits; exponent 31 is infinity (mantissa 0) or NaN; exponent
//    0 is subnormal (m / 4 * 2^-14).
#pragma once

#include <cstdint>

namespace tessera::sim {

double decodeIsaE4M3(uint8_t bits);
double decodeIsaE5M2(uint8_t bits);

}  // namespace tessera::sim
