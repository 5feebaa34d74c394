#include "jit/sim/runtime/AccessCost.h"

#include <algorithm>
#include <array>
#include <cassert>

namespace tessera::sim {

namespace {
constexpr uint64_t kSectorBytes = 32;
constexpr uint32_t kBanks = 32;
constexpr uint32_t kBankBytes = 4;
constexpr size_t kMaxLanes = 64;
}  // namespace

GlobalRequestCost globalRequestCost(const LaneAccess* lanes, size_t count) {
  assert(count <= kMaxLanes);
  struct Range {
    uint64_t begin, end;
  };
  std::array<Range, kMaxLanes> ranges;
  size_t n = 0;
  for (size_t i = 0; i < count; ++i)
    if (lanes[i].bytes) ranges[n++] = {lanes[i].address, lanes[i].address + lanes[i].bytes};
  // Lanes usually come in address order: insertion sort is linear then.
  for (size_t i = 1; i < n; ++i)
    for (size_t j = i; j > 0 && ranges[j].begin < ranges[j - 1].begin; --j) std::swap(ranges[j], ranges[j - 1]);

  GlobalRequestCost cost;
  bool counted = false;
  uint64_t lastSector = 0;
  auto addRange = [&](uint64_t begin, uint64_t end) {
    cost.requestedBytes += end - begin;
    uint64_t first = begin / kSectorBytes, last = (end - 1) / kSectorBytes;
    if (counted && first <= lastSector) first = lastSector + 1;
    if (first <= last) cost.sectors += last - first + 1;
    lastSector = counted ? std::max(lastSector, last) : last;
    counted = true;
  };
  for (size_t i = 0; i < n;) {
    uint64_t begin = ranges[i].begin, end = ranges[i].end;
    for (++i; i < n && ranges[i].begin <= end; ++i) end = std::max(end, ranges[i].end);
    addRange(begin, end);
  }
  return cost;
}

SharedRequestCost sharedRequestCost(const LaneAccess* lanes, size_t count) {
  assert(count <= kMaxLanes);
  uint32_t width = 0;
  for (size_t i = 0; i < count; ++i) width = std::max(width, lanes[i].bytes);
  if (width == 0) return {};
  const uint32_t lanesPerPhase = width <= 4 ? 32 : width <= 8 ? 16 : 8;

  SharedRequestCost cost;
  // Words per phase: at most 32 lanes, each touching at most (width / 4 + 1) words of a 16-byte access.
  std::array<uint64_t, kMaxLanes * 8> words;
  for (uint32_t phase = 0; phase * lanesPerPhase < kMaxLanes; ++phase) {
    size_t n = 0;
    for (size_t i = 0; i < count; ++i) {
      const LaneAccess& a = lanes[i];
      if (a.lane / lanesPerPhase != phase || a.bytes == 0) continue;
      uint64_t first = a.address / kBankBytes, last = (a.address + a.bytes - 1) / kBankBytes;
      for (uint64_t w = first; w <= last && n < words.size(); ++w) words[n++] = w;
    }
    if (n == 0) continue;
    std::sort(words.begin(), words.begin() + n);
    n = static_cast<size_t>(std::unique(words.begin(), words.begin() + n) - words.begin());
    std::array<uint32_t, kBanks> perBank{};
    uint32_t wavefronts = 0;
    for (size_t i = 0; i < n; ++i) wavefronts = std::max(wavefronts, ++perBank[words[i] % kBanks]);
    ++cost.phases;
    cost.wavefronts += wavefronts;
  }
  return cost;
}

}  // namespace tessera::sim
