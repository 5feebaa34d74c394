#include "jit/sim/runtime/TensorMap.h"

#include <cstring>

namespace tessera::sim {

namespace {

// The bytes of an encoded map (what follows is zero).
struct Encoded {
  uint32_t magic;
  uint8_t rank, elementBytes;
  uint16_t swizzleBytes;
  uint64_t globalAddress;
  uint64_t dims[kTensorMapMaxRank];
  uint64_t strides[kTensorMapMaxRank - 1];  // dimensions 1..
  uint16_t box[kTensorMapMaxRank];
  uint8_t elementStrides[kTensorMapMaxRank];
};
static_assert(sizeof(Encoded) <= kTensorMapBytes);
constexpr uint32_t kMagic = 0x4D545354;  // "TSTM"

std::string at(const char* field, uint32_t d) { return std::string(field) + "[" + std::to_string(d) + "]"; }

}  // namespace

uint64_t TensorMapFields::boxBytes() const {
  uint64_t bytes = elementBytes;
  for (uint32_t d = 0; d < rank; ++d) bytes *= traversed(d);
  return bytes;
}

std::string tensorMapError(const TensorMapFields& f) {
  if (f.rank < 1 || f.rank > kTensorMapMaxRank)
    return "rank " + std::to_string(f.rank) + "; a tensor map has 1 to 5 dimensions";
  if (f.elementBytes != 1 && f.elementBytes != 2 && f.elementBytes != 4 && f.elementBytes != 8)
    return "elements of " + std::to_string(f.elementBytes) + " bytes; 1, 2, 4 or 8";
  if (f.globalAddress % 16) return "the global address is not 16-byte aligned";
  for (uint32_t d = 0; d < f.rank; ++d) {
    if (f.dims[d] < 1 || f.dims[d] > (uint64_t{1} << 32))
      return at("shape", d) + " is " + std::to_string(f.dims[d]) + "; 1 to 2^32";
    if (f.box[d] < 1 || f.box[d] > 256) return at("box", d) + " is " + std::to_string(f.box[d]) + "; 1 to 256";
    if (f.elementStrides[d] < 1 || f.elementStrides[d] > 8)
      return at("element stride", d) + " is " + std::to_string(f.elementStrides[d]) + "; 1 to 8";
    if (d == 0) continue;
    const uint64_t previousExtent = f.dims[d - 1] * (d == 1 ? f.elementBytes : f.strides[d - 1]);
    if (f.strides[d] % 16 || f.strides[d] >= (uint64_t{1} << 40) || f.strides[d] < previousExtent)
      return at("stride", d) + " is " + std::to_string(f.strides[d]) +
             " bytes; a multiple of 16 below 2^40, at least the " + std::to_string(previousExtent) +
             " bytes of the dimensions inside it";
  }
  const uint64_t innerBytes = uint64_t{f.box[0]} * f.elementBytes;
  if (innerBytes % 16) return "the box's inner dimension is " + std::to_string(innerBytes) + " bytes; a multiple of 16";
  if (f.swizzleBytes != 0 && f.swizzleBytes != 32 && f.swizzleBytes != 64 && f.swizzleBytes != 128)
    return "swizzle of " + std::to_string(f.swizzleBytes) + " bytes; 0, 32, 64 or 128";
  if (f.swizzleBytes && innerBytes > f.swizzleBytes)
    return "the box's inner dimension is " + std::to_string(innerBytes) + " bytes, wider than the " +
           std::to_string(f.swizzleBytes) + "-byte swizzle";
  return "";
}

std::array<std::byte, kTensorMapBytes> encodeTensorMap(const TensorMapFields& f) {
  Encoded e{};
  e.magic = kMagic;
  e.rank = static_cast<uint8_t>(f.rank);
  e.elementBytes = static_cast<uint8_t>(f.elementBytes);
  e.swizzleBytes = static_cast<uint16_t>(f.swizzleBytes);
  e.globalAddress = f.globalAddress;
  for (uint32_t d = 0; d < f.rank; ++d) {
    e.dims[d] = f.dims[d];
    if (d > 0) e.strides[d - 1] = f.strides[d];
    e.box[d] = static_cast<uint16_t>(f.box[d]);
    e.elementStrides[d] = static_cast<uint8_t>(f.elementStrides[d]);
  }
  std::array<std::byte, kTensorMapBytes> bytes{};
  std::memcpy(bytes.data(), &e, sizeof e);
  return bytes;
}

std::optional<TensorMapFields> decodeTensorMap(const void* bytes) {
  Encoded e;
  std::memcpy(&e, bytes, sizeof e);
  if (e.magic != kMagic || e.rank < 1 || e.rank > kTensorMapMaxRank) return std::nullopt;
  TensorMapFields f;
  f.rank = e.rank;
  f.elementBytes = e.elementBytes;
  f.swizzleBytes = e.swizzleBytes;
  f.globalAddress = e.globalAddress;
  for (uint32_t d = 0; d < f.rank; ++d) {
    f.dims[d] = e.dims[d];
    f.strides[d] = d > 0 ? e.strides[d - 1] : 0;
    f.box[d] = e.box[d];
    f.elementStrides[d] = e.elementStrides[d];
  }
  if (!tensorMapError(f).empty()) return std::nullopt;
  return f;
}

uint32_t swizzledSharedAddress(uint32_t address, uint32_t swizzleBytes) {
  if (swizzleBytes == 0) return address;
  const uint32_t chunkMask = swizzleBytes / 16 - 1;  // 1, 3 or 7: the chunks of one swizzle span
  return address ^ (((address >> 7) & chunkMask) << 4);
}

}  // namespace tessera::sim
