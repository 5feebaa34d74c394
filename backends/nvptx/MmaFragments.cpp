#include "backends/nvptx/MmaFragments.h"

#include <algorithm>
#include <map>

namespace tessera::backends::nvptx {

MmaSwizzle mmaSwizzleFor(int64_t rowLength, int64_t elementBytes) {
  // 128 bytes = 8 chunks span the 32 banks. Rows shorter than that share a 128-byte line: perPhase rows per
  // phase; the XOR must stay inside the row, so the phase is below the largest power of two dividing its chunks.
  MmaSwizzle s;
  s.rowLength = rowLength;
  s.chunkElements = kMmaChunkBytes / elementBytes;
  const int64_t chunks = std::max<int64_t>(1, rowLength / s.chunkElements);
  s.maxPhase = std::min<int64_t>(chunks & -chunks, 8);
  s.perPhase = std::max<int64_t>(1, 8 / chunks);
  return s;
}

int64_t mmaSwizzledIndex(const MmaSwizzle& s, int64_t row, int64_t col) {
  const int64_t chunk = (col / s.chunkElements) ^ ((row / s.perPhase) % s.maxPhase);
  return row * s.rowLength + chunk * s.chunkElements + col % s.chunkElements;
}

MatrixCoord mmaALaneOffset(int64_t lane, int64_t elementBytes) {
  return {(lane & 7) + 8 * ((lane >> 3) & 1), (kMmaChunkBytes / elementBytes) * ((lane >> 4) & 1)};
}

MatrixCoord mmaBLaneOffset(int64_t lane, int64_t tiles) { return {(lane & 7) + 8 * ((lane >> 3) % tiles), 0}; }

MatrixCoord mmaBTransposedLaneOffset(int64_t lane, int64_t tiles, int64_t elementBytes) {
  return {lane & 7, (kMmaChunkBytes / elementBytes) * ((lane >> 3) % tiles)};
}

std::optional<MmaAccumulatorPlan> planMmaAccumulator(const ThreadMap& acc) {
  if (acc.rank() != 2 || acc.warpSize != kMmaWarpSize) return std::nullopt;
  const std::vector<Coords> lanePattern = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  if (acc.laneBases != lanePattern) return std::nullopt;
  if (acc.shape[0] % kMmaM != 0 || acc.shape[1] % kMmaN != 0) return std::nullopt;
  for (const Coords& w : acc.warpBases)
    if ((w[0] % kMmaM) != 0 || (w[1] % kMmaN) != 0) return std::nullopt;
  std::map<std::pair<int64_t, int64_t>, int64_t> firstRegAt;
  for (int64_t r = 0; r < acc.numRegs(); ++r) {
    const Coords& c = acc.regCoords[r];
    if ((c[0] & 7) != 0 || (c[1] & 6) != 0) return std::nullopt;  // those bits belong to the lanes
    firstRegAt.emplace(std::make_pair(c[0], c[1]), r);
  }
  MmaAccumulatorPlan plan;
  std::map<std::pair<int64_t, int64_t>, int64_t> fragmentAt;
  for (const auto& [at, reg] : firstRegAt) {
    const int64_t row = at.first & ~int64_t(8), col = at.second & ~int64_t(1);
    if (fragmentAt.count({row, col})) continue;
    MmaFragment f;
    f.row = row;
    f.col = col;
    const MatrixCoord slots[4] = {{0, 0}, {0, 1}, {8, 0}, {8, 1}};
    for (int s = 0; s < 4; ++s) {
      auto it = firstRegAt.find({row + slots[s].row, col + slots[s].col});
      if (it == firstRegAt.end()) return std::nullopt;
      f.regs[s] = it->second;
    }
    fragmentAt[{row, col}] = static_cast<int64_t>(plan.fragments.size());
    plan.fragments.push_back(f);
  }
  for (int64_t r = 0; r < acc.numRegs(); ++r) {
    const Coords& c = acc.regCoords[r];
    const int64_t frag = fragmentAt.at({c[0] & ~int64_t(8), c[1] & ~int64_t(1)});
    plan.regSlot.emplace_back(frag, static_cast<int>(((c[0] & 8) ? 2 : 0) + (c[1] & 1)));
  }
  for (const MmaFragment& f : plan.fragments) {
    if (std::find(plan.fragmentRows.begin(), plan.fragmentRows.end(), f.row) == plan.fragmentRows.end())
      plan.fragmentRows.push_back(f.row);
    if (std::find(plan.fragmentCols.begin(), plan.fragmentCols.end(), f.col) == plan.fragmentCols.end())
      plan.fragmentCols.push_back(f.col);
  }
  return plan;
}

}  // namespace tessera::backends::nvptx
