#include "backends/interpreter/ElementBits.h"

#include <cstring>

#include "backends/interpreter/FloatFormats.h"

namespace tessera::interp {

using ir::ScalarKind;

int storageBytes(ir::Type element) {
  if (element.isPtr()) return 8;
  if (element.isBool()) return 1;
  return element.bitWidth() / 8;
}

ElementCodec::ElementCodec(ir::Type element) : bytes_(storageBytes(element)) {
  if (element.isPtr()) {
    form_ = Form::Pointer;
    return;
  }
  switch (element.scalarKind()) {
    case ScalarKind::I1: form_ = Form::Bool; break;
    case ScalarKind::F16: form_ = Form::F16; break;
    case ScalarKind::BF16: form_ = Form::BF16; break;
    case ScalarKind::F32: form_ = Form::F32; break;
    case ScalarKind::F64: form_ = Form::F64; break;
    case ScalarKind::F8E4M3: form_ = Form::F8E4M3; break;
    case ScalarKind::F8E5M2: form_ = Form::F8E5M2; break;
    default:
      form_ = Form::Int;
      width_ = element.bitWidth();
      signed_ = element.isSigned();
  }
}

uint64_t ElementCodec::toBits(int64_t intValue, double floatValue) const {
  switch (form_) {
    case Form::Pointer: return static_cast<uint64_t>(intValue);
    case Form::Bool: return intValue != 0 ? 1 : 0;
    case Form::Int: {
      auto bits = static_cast<uint64_t>(intValue);
      return width_ == 64 ? bits : bits & ((uint64_t(1) << width_) - 1);
    }
    case Form::F16: return encodeF16(floatValue);
    case Form::BF16: return encodeBF16(floatValue);
    case Form::F32: return encodeF32(floatValue);
    case Form::F64: return encodeF64(floatValue);
    case Form::F8E4M3: return encodeF8E4M3(floatValue);
    case Form::F8E5M2: return encodeF8E5M2(floatValue);
  }
  return 0;
}

int64_t ElementCodec::toInt(uint64_t bits) const {
  switch (form_) {
    case Form::Bool: return bits != 0 ? 1 : 0;
    case Form::Int: {
      if (width_ == 64) return static_cast<int64_t>(bits);
      uint64_t mask = (uint64_t(1) << width_) - 1;
      bits &= mask;
      if (signed_ && (bits >> (width_ - 1)) != 0) bits |= ~mask;  // sign-extend
      return static_cast<int64_t>(bits);
    }
    default: return static_cast<int64_t>(bits);
  }
}

double ElementCodec::toFloat(uint64_t bits) const {
  switch (form_) {
    case Form::F16: return decodeF16(static_cast<uint16_t>(bits));
    case Form::BF16: return decodeBF16(static_cast<uint16_t>(bits));
    case Form::F32: return decodeF32(static_cast<uint32_t>(bits));
    case Form::F64: return decodeF64(bits);
    case Form::F8E4M3: return decodeF8E4M3(static_cast<uint8_t>(bits));
    case Form::F8E5M2: return decodeF8E5M2(static_cast<uint8_t>(bits));
    default: return static_cast<double>(toInt(bits));
  }
}

uint64_t elementToBits(ir::Type element, int64_t intValue, double floatValue) {
  return ElementCodec(element).toBits(intValue, floatValue);
}
int64_t bitsToInt(ir::Type element, uint64_t bits) { return ElementCodec(element).toInt(bits); }
double bitsToFloat(ir::Type element, uint64_t bits) { return ElementCodec(element).toFloat(bits); }

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
