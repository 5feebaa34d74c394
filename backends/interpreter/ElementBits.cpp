#include "backends/interpreter/ElementBits.h"

#include <cstring>

#include "ir/FloatFormats.h"

namespace tessera::interp {

ElementCodec::ElementCodec(ir::Type element)
    : format_(element), bytes_(element.storageBytes()), isFloat_(element.isFloat()), isBool_(element.isBool()) {
  if (isFloat_) kind_ = element.scalarKind();
}

uint64_t ElementCodec::toBits(int64_t intValue, double floatValue) const {
  if (isFloat_) return ir::encodeFloat(kind_, floatValue);
  if (isBool_) return intValue != 0 ? 1 : 0;
  return static_cast<uint64_t>(intValue) & format_.mask;
}

int64_t ElementCodec::toInt(uint64_t bits) const {
  if (isBool_) return bits != 0 ? 1 : 0;
  return format_.wrap(bits);
}

double ElementCodec::toFloat(uint64_t bits) const {
  if (isFloat_) return ir::decodeFloat(kind_, bits);
  return static_cast<double>(toInt(bits));
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
