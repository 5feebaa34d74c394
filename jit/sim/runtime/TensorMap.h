// The emulator's tensor map: the 128-byte object that cuTensorMapEncodeTiled makes on a GPU and that
// cp.async.bulk.tensor reads, describing a tiled view of a global tensor of 1 to 5 dimensions (dimension 0
// innermost). The driver's encoding is opaque, so the emulator has its own (a magic word, then the fields); the
// sim runtime encodes it at launch and the emulated copy decodes it. The rules are the driver's (CUDA driver API,
// cuTensorMapEncodeTiled): what breaks them is an encoding error, never a silent wrong copy.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace tessera::sim {

inline constexpr size_t kTensorMapBytes = 128;
inline constexpr uint32_t kTensorMapMaxRank = 5;

struct TensorMapFields {
  uint32_t rank = 0;
  uint32_t elementBytes = 0;                      // 1, 2, 4 or 8
  uint64_t globalAddress = 0;
  std::array<uint64_t, kTensorMapMaxRank> dims{};     // elements per dimension
  std::array<uint64_t, kTensorMapMaxRank> strides{};  // bytes between neighbours of dimensions 1.. (0 is the element)
  std::array<uint32_t, kTensorMapMaxRank> box{};      // the box (tile) a copy moves, in elements
  std::array<uint32_t, kTensorMapMaxRank> elementStrides{1, 1, 1, 1, 1};  // traversal step within the box
  uint32_t swizzleBytes = 0;                      // 0 (none), 32, 64 or 128

  // Elements a copy moves along dimension `d`: ceil(box / elementStride).
  uint32_t traversed(uint32_t d) const { return (box[d] + elementStrides[d] - 1) / elementStrides[d]; }
  // Bytes one copy writes to shared memory (its transaction count on the mbarrier).
  uint64_t boxBytes() const;
  bool operator==(const TensorMapFields&) const = default;
};

// Empty when `f` follows cuTensorMapEncodeTiled's rules, else what is wrong ("box[0] is 300; at most 256").
std::string tensorMapError(const TensorMapFields& f);
// The 128 bytes of a map; `f` must be valid (tensorMapError empty).
std::array<std::byte, kTensorMapBytes> encodeTensorMap(const TensorMapFields& f);
// The fields of the map at `bytes`; nullopt when they are not a valid map this emulator encoded.
std::optional<TensorMapFields> decodeTensorMap(const void* bytes);

// Where the byte at `address` of a box lands in shared memory under `swizzleBytes`: the 16-byte chunk index
// (address bits 4 and up, as many as the swizzle span has chunks) is XORed with the 128-byte row index (bits 7
// and up), as the hardware does on shared addresses. The identity for 0.
uint32_t swizzledSharedAddress(uint32_t address, uint32_t swizzleBytes);

// Calls visit(boxByte, globalAddress, inBounds) for every element a copy of the box at `coordinates` moves, in
// the order it lands densely in shared memory (dimension 0 fastest): boxByte is its unswizzled byte offset in
// the box, globalAddress where it is read from (meaningless when out of bounds: the element lands as zero).
template <class Visit>
void forEachBoxElement(const TensorMapFields& f, const int32_t* coordinates, Visit&& visit) {
  std::array<uint32_t, kTensorMapMaxRank> index{};
  uint64_t boxByte = 0;
  while (true) {
    uint64_t address = f.globalAddress;
    bool inBounds = true;
    for (uint32_t d = 0; d < f.rank; ++d) {
      const int64_t c = int64_t{coordinates[d]} + int64_t{index[d]} * f.elementStrides[d];
      if (c < 0 || static_cast<uint64_t>(c) >= f.dims[d]) inBounds = false;
      address += static_cast<uint64_t>(c) * (d == 0 ? f.elementBytes : f.strides[d]);
    }
    visit(boxByte, address, inBounds);
    boxByte += f.elementBytes;
    uint32_t d = 0;
    while (d < f.rank && ++index[d] == f.traversed(d)) index[d++] = 0;
    if (d == f.rank) return;
  }
}

}  // namespace tessera::sim
