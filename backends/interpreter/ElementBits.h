// The storage form of one tile element: how many bytes it occupies in memory and its bit pattern. Used by
// load/store/atomics (which read and write real bytes) and by bitcast (which reinterprets bit patterns).
//   f16/bf16: 2 bytes, fp8: 1 byte, i1: 1 byte holding 0 or 1, pointers: 8 bytes (the address).
#pragma once

#include <cstdint>

#include "ir/Types.h"

namespace tessera::interp {

// Bytes one element of `element` (a scalar or pointer type) occupies in memory.
int storageBytes(ir::Type element);

// Bit pattern of an element given in the Tile's canonical form (ints/pointers: intValue; floats: floatValue).
// Only the low bitWidth bits are set (i1: 0 or 1).
uint64_t elementToBits(ir::Type element, int64_t intValue, double floatValue);

// Inverse: canonical int (for int and pointer types) or float value from a bit pattern. An i1 is true when
// any of its bits is set.
int64_t bitsToInt(ir::Type element, uint64_t bits);
double bitsToFloat(ir::Type element, uint64_t bits);

// Raw little-endian host memory access of 1, 2, 4 or 8 bytes.
uint64_t readBits(const void* address, int bytes);
void writeBits(void* address, int bytes, uint64_t bits);

}  // namespace tessera::interp
