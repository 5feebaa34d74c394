// The storage form of one tile element: how many bytes it occupies in memory and its bit pattern. Used by
// load/store/atomics (which read and write real bytes) and by bitcast (which reinterprets bit patterns).
//   f16/bf16: 2 bytes, fp8: 1 byte, i1: 1 byte holding 0 or 1, pointers: 8 bytes (the address).
// The sizes are ir::Type::storageBytes and the float encodings ir/FloatFormats.h.
#pragma once

#include <cstdint>

#include "ir/IntegerSemantics.h"
#include "ir/Types.h"

namespace tessera::interp {

// Encodes and decodes elements of one type; the type is inspected once, so loops over many elements pay
// only a predictable branch per element.
class ElementCodec {
 public:
  explicit ElementCodec(ir::Type element);

  int bytes() const { return bytes_; }
  bool isFloat() const { return isFloat_; }

  // Bit pattern of an element in the Tile's canonical form (ints/pointers: intValue; floats: floatValue).
  // Only the low bit-width bits are set (i1: 0 or 1).
  uint64_t toBits(int64_t intValue, double floatValue) const;
  // Canonical int (int and pointer types) or float value of a bit pattern; an i1 is true when any bit is set.
  int64_t toInt(uint64_t bits) const;
  double toFloat(uint64_t bits) const;

 private:
  ir::ScalarKind kind_ = ir::ScalarKind::U64;  // floats: which format
  ir::IntFormat format_;                       // ints and pointers
  int bytes_;
  bool isFloat_;
  bool isBool_;
};

// Raw little-endian host memory access of 1, 2, 4 or 8 bytes.
uint64_t readBits(const void* address, int bytes);
void writeBits(void* address, int bytes, uint64_t bits);

}  // namespace tessera::interp
