#include "backends/interpreter/ElementBits.h"

#include <cstring>

#include "backends/interpreter/FloatFormats.h"
#include "backends/interpreter/Tile.h"

namespace tessera::interp {

using ir::ScalarKind;

int storageBytes(ir::Type element) {
  if (element.isPtr()) return 8;
  if (element.isBool()) return 1;
  return element.bitWidth() / 8;
}

uint64_t elementToBits(ir::Type element, int64_t intValue, double floatValue) {
  if (element.isPtr()) return static_cast<uint64_t>(intValue);
  switch (element.scalarKind()) {
    case ScalarKind::F16: return encodeF16(floatValue);
    case ScalarKind::BF16: return encodeBF16(floatValue);
    case ScalarKind::F32: return encodeF32(floatValue);
    case ScalarKind::F64: return encodeF64(floatValue);
    case ScalarKind::F8E4M3: return encodeF8E4M3(floatValue);
    case ScalarKind::F8E5M2: return encodeF8E5M2(floatValue);
    case ScalarKind::I1: return intValue != 0 ? 1 : 0;
    default: {
      int width = element.bitWidth();
      uint64_t bits = static_cast<uint64_t>(intValue);
      return width == 64 ? bits : bits & ((uint64_t(1) << width) - 1);
    }
  }
}

int64_t bitsToInt(ir::Type element, uint64_t bits) {
  if (element.isPtr()) return static_cast<int64_t>(bits);
  if (element.isBool()) return bits != 0 ? 1 : 0;
  return canonicalInt(element, static_cast<int64_t>(bits));
}

double bitsToFloat(ir::Type element, uint64_t bits) {
  switch (element.scalarKind()) {
    case ScalarKind::F16: return decodeF16(static_cast<uint16_t>(bits));
    case ScalarKind::BF16: return decodeBF16(static_cast<uint16_t>(bits));
    case ScalarKind::F32: return decodeF32(static_cast<uint32_t>(bits));
    case ScalarKind::F64: return decodeF64(bits);
    case ScalarKind::F8E4M3: return decodeF8E4M3(static_cast<uint8_t>(bits));
    case ScalarKind::F8E5M2: return decodeF8E5M2(static_cast<uint8_t>(bits));
    default: return static_cast<double>(static_cast<int64_t>(bits));
  }
}

uint64_t readBits(const void* address, int bytes) {
  switch (bytes) {
    case 1: { uint8_t v; std::memcpy(&v, address, 1); return v; }
    case 2: { uint16_t v; std::memcpy(&v, address, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, address, 4); return v; }
    default: { uint64_t v; std::memcpy(&v, address, 8); return v; }
  }
}

void writeBits(void* address, int bytes, uint64_t bits) {
  switch (bytes) {
    case 1: { auto v = static_cast<uint8_t>(bits); std::memcpy(address, &v, 1); return; }
    case 2: { auto v = static_cast<uint16_t>(bits); std::memcpy(address, &v, 2); return; }
    case 4: { auto v = static_cast<uint32_t>(bits); std::memcpy(address, &v, 4); return; }
    default: std::memcpy(address, &bits, 8); return;
  }
}

}  // namespace tessera::interp
