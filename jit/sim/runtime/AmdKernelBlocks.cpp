#include "jit/sim/runtime/AmdKernelBlocks.h"

#include <algorithm>
#include <cstring>

namespace tessera::sim {

namespace {
template <class T>
void put(uint8_t* block, size_t offset, T value) {
  std::memcpy(block + offset, &value, sizeof value);
}
}  // namespace

AmdKernelBlocks::AmdKernelBlocks(const std::array<uint32_t, 3>& grid, uint32_t workgroupSize, uint32_t sharedBytes,
                                 uint32_t printfBufferBytes)
    : printf_((std::max(printfBufferBytes, kPrintfHeaderBytes) + 7) / 8) {
  const uint32_t workgroup[3] = {workgroupSize, 1, 1};
  put<uint16_t>(packet_.data(), 2, 3);  // setup: three dimensions
  for (int d = 0; d < 3; ++d) {
    put<uint16_t>(packet_.data(), 4 + 2 * d, static_cast<uint16_t>(workgroup[d]));
    put<uint32_t>(packet_.data(), 12 + 4 * d, grid[d] * workgroup[d]);
  }
  put<uint32_t>(packet_.data(), 28, sharedBytes);

  uint8_t* buffer = reinterpret_cast<uint8_t*>(printf_.data());
  put<uint32_t>(buffer, 0, 0);
  put<uint32_t>(buffer, 4, static_cast<uint32_t>(printf_.size() * 8));
  put<uint64_t>(implicit_.data(), kPrintfBufferOffset, reinterpret_cast<uint64_t>(buffer));
}

std::vector<MemoryRange> AmdKernelBlocks::ranges() const {
  return {{reinterpret_cast<uint64_t>(packet_.data()), packet_.size()},
          {reinterpret_cast<uint64_t>(implicit_.data()), implicit_.size()},
          {reinterpret_cast<uint64_t>(printf_.data()), printf_.size() * 8}};
}

}  // namespace tessera::sim
