// Where global memory may be touched: the allocations passed to the launch, plus the runtime's own blocks (the
// AMD dispatch packet, implicit arguments and printf buffer), which are valid but not the kernel's data and so
// not counted. An access must lie inside one region and be aligned for its width.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::sim {

struct MemoryRange {
  uint64_t address = 0;
  uint64_t bytes = 0;
};

enum class RegionKind : uint8_t { None, Allocation, RuntimeBlock };

class GlobalMemoryChecker {
 public:
  GlobalMemoryChecker(const std::vector<MemoryRange>& allocations, const std::vector<MemoryRange>& runtimeBlocks);
  // The region holding all of [address, address + bytes), or None.
  RegionKind find(uint64_t address, uint64_t bytes) const;

  // True when `address` is not a multiple of the alignment the instruction promised or, where it promised none
  // (0), of the access width (for power-of-two widths up to 16). An instruction may promise less than its width
  // (`store <4 x half> ..., align 4`): that is valid LLVM IR, which the code generators split into accesses the
  // hardware can make (AMDGPU: ds_write2_b32), so only the promise is checked then.
  static bool misaligned(uint64_t address, uint64_t bytes, uint32_t promisedAlign) {
    if (promisedAlign > 0) return address % promisedAlign != 0;
    bool naturalWidth = bytes <= 16 && (bytes & (bytes - 1)) == 0;
    return naturalWidth && bytes > 1 && (address & (bytes - 1)) != 0;
  }

 private:
  struct Region {
    uint64_t begin, end;
    RegionKind kind;
  };
  std::vector<Region> regions_;  // sorted by begin, disjoint
};

}  // namespace tessera::sim
