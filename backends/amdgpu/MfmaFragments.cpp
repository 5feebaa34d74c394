#include "backends/amdgpu/MfmaFragments.h"

#include <algorithm>
#include <map>

namespace tessera::backends::amdgpu {

MfmaOperandOrigin mfmaOperandOrigin(int64_t lane, int64_t elements) { return {lane % 16, elements * (lane / 16)}; }

MfmaSwizzle mfmaSwizzleFor(int64_t K, int64_t elementBytes) {
  constexpr int64_t kChunksPerLine = 128 / kMfmaChunkBytes;
  const int64_t chunks = std::max<int64_t>(1, K * elementBytes / kMfmaChunkBytes);
  MfmaSwizzle s;
  s.perPhase = std::max<int64_t>(1, kChunksPerLine / chunks);
  s.maxPhase = std::min<int64_t>(chunks & -chunks, kChunksPerLine);
  return s;
}

std::optional<MfmaAccumulatorPlan> planMfmaAccumulator(const ThreadMap& acc) {
  if (acc.rank() != 2 || acc.warpSize != kMfmaWaveSize) return std::nullopt;
  const std::vector<Coords> lanePattern = {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {4, 0}, {8, 0}};
  const std::vector<Coords> transposedPattern = {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 4}, {0, 8}};
  MfmaAccumulatorPlan plan;
  if (acc.laneBases == transposedPattern) plan.transposed = true;
  else if (acc.laneBases != lanePattern) return std::nullopt;
  if (acc.shape[0] % kMfmaM != 0 || acc.shape[1] % kMfmaN != 0) return std::nullopt;
  for (const Coords& w : acc.warpBases)
    if ((w[0] % kMfmaM) != 0 || (w[1] % kMfmaN) != 0) return std::nullopt;
  // The dimension the registers of a fragment run along (offsets 0..3), and the one the lanes' 16 select.
  const int vDim = plan.transposed ? 1 : 0, laneDim = 1 - vDim;
  std::map<std::pair<int64_t, int64_t>, int64_t> firstRegAt;
  for (int64_t r = 0; r < acc.numRegs(); ++r) {
    const Coords& c = acc.regCoords[r];
    if ((c[vDim] & 12) != 0 || (c[laneDim] & 15) != 0) return std::nullopt;  // those bits belong to the lanes
    firstRegAt.emplace(std::make_pair(c[0], c[1]), r);
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> fragmentAt;
  auto origin = [&](int64_t row, int64_t col) {
    return plan.transposed ? std::make_pair(row, col & ~int64_t(3)) : std::make_pair(row & ~int64_t(3), col);
  };
  for (const auto& [at, reg] : firstRegAt) {
    const auto [row, col] = origin(at.first, at.second);
    if (fragmentAt.count({row, col})) continue;
    MfmaFragment f;
    f.row = row;
    f.col = col;
    for (int v = 0; v < 4; ++v) {
      auto it = firstRegAt.find(plan.transposed ? std::make_pair(row, col + v) : std::make_pair(row + v, col));
      if (it == firstRegAt.end()) return std::nullopt;
      f.regs[v] = it->second;
    }
    fragmentAt[{row, col}] = static_cast<int64_t>(plan.fragments.size());
    plan.fragments.push_back(f);
  }
  for (int64_t r = 0; r < acc.numRegs(); ++r) {
    const Coords& c = acc.regCoords[r];
    plan.regSlot.emplace_back(fragmentAt.at(origin(c[0], c[1])), static_cast<int>(c[vDim] & 3));
  }
  for (const MfmaFragment& f : plan.fragments) {
    if (std::find(plan.fragmentRows.begin(), plan.fragmentRows.end(), f.row) == plan.fragmentRows.end())
      plan.fragmentRows.push_back(f.row);
    if (std::find(plan.fragmentCols.begin(), plan.fragmentCols.end(), f.col) == plan.fragmentCols.end())
      plan.fragmentCols.push_back(f.col);
  }
  return plan;
}

}  // namespace tessera::backends::amdgpu
