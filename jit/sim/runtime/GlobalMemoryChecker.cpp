#include "jit/sim/runtime/GlobalMemoryChecker.h"

#include <algorithm>

namespace tessera::sim {

GlobalMemoryChecker::GlobalMemoryChecker(const std::vector<MemoryRange>& allocations,
                                         const std::vector<MemoryRange>& runtimeBlocks) {
  std::vector<Region> all;
  for (const MemoryRange& r : allocations)
    if (r.bytes) all.push_back({r.address, r.address + r.bytes, RegionKind::Allocation});
  for (const MemoryRange& r : runtimeBlocks)
    if (r.bytes) all.push_back({r.address, r.address + r.bytes, RegionKind::RuntimeBlock});
  std::sort(all.begin(), all.end(), [](const Region& a, const Region& b) { return a.begin < b.begin; });
  // Arguments may alias one buffer or overlap: an access inside their union is inside launch memory.
  for (const Region& r : all) {
    if (!regions_.empty() && r.begin <= regions_.back().end && r.kind == regions_.back().kind)
      regions_.back().end = std::max(regions_.back().end, r.end);
    else
      regions_.push_back(r);
  }
}

RegionKind GlobalMemoryChecker::find(uint64_t address, uint64_t bytes) const {
  auto it = std::upper_bound(regions_.begin(), regions_.end(), address,
                             [](uint64_t a, const Region& r) { return a < r.begin; });
  if (it == regions_.begin()) return RegionKind::None;
  --it;
  if (address >= it->end || bytes > it->end - address) return RegionKind::None;
  return it->kind;
}

}  // namespace tessera::sim
