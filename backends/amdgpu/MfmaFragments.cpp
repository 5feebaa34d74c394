#include "backends/amdgpu/MfmaFragments.h"

#include <algorithm>
#include <map>

namespace tessera::backends::amdgpu {

MfmaOperandOrigin mfmaOperandOrigin(int64_t lane, int64_t elements, int64_t block) {
  return {lane % block, elements * (lane / block)};
}

MfmaSwizzle mfmaSwizzleFor(int64_t K, int64_t elementBytes) {
  constexpr int64_t kChunksPerLine = 128 / kMfmaChunkBytes;
  const int64_t chunks = std::max<int64_t>(1, K * elementBytes / kMfmaChunkBytes);
  MfmaSwizzle s;
  s.perPhase = std::max<int64_t>(1, kChunksPerLine / chunks);
  s.maxPhase = std::min<int64_t>(chunks & -chunks, kChunksPerLine);
  return s;
}

namespace {

// The lane bases of the C/D fragment of `block` x `block` blocks (rows first), or of its transpose.
std::vector<Coords> fragmentLanes(int64_t block, bool transposed) {
  std::vector<Coords> lanes;
  for (int64_t bit = 1; bit < block; bit <<= 1) lanes.push_back({0, bit});         // lane % block: the columns
  for (int64_t bit = 4; lanes.size() < 6; bit <<= 1) lanes.push_back({bit, 0});  // lane / block: rows 4 (and 8)
  if (transposed)
    for (Coords& c : lanes) std::swap(c[0], c[1]);
  return lanes;
}

}  // namespace

std::optional<MfmaAccumulatorPlan> planMfmaAccumulator(const ThreadMap& acc) {
  if (acc.rank() != 2 || acc.warpSize != kMfmaWaveSize) return std::nullopt;
  MfmaAccumulatorPlan plan;
  bool matched = false;
  for (int64_t block : {kMfmaM, kMfmaLargeBlock})
    for (bool transposed : {false, true})
      if (!matched && acc.laneBases == fragmentLanes(block, transposed)) {
        plan.block = block;
        plan.transposed = transposed;
        matched = true;
      }
  if (!matched) return std::nullopt;
  const int64_t block = plan.block;
  if (acc.shape[0] % block != 0 || acc.shape[1] % block != 0) return std::nullopt;
  for (const Coords& w : acc.warpBases)
    if ((w[0] % block) != 0 || (w[1] % block) != 0) return std::nullopt;
  // The dimension the registers of a fragment run along, and the one the lanes' `block` select.
  const int vDim = plan.transposed ? 1 : 0, laneDim = 1 - vDim;
  const int64_t laneOwned = block == kMfmaLargeBlock ? 4 : 12;  // the register dimension's bits the lanes select
  const int64_t slots = mfmaAccumulatorRegisters(block);
  std::map<std::pair<int64_t, int64_t>, int64_t> firstRegAt;
  for (int64_t r = 0; r < acc.numRegs(); ++r) {
    const Coords& c = acc.regCoords[r];
    if ((c[vDim] & laneOwned) != 0 || (c[laneDim] & (block - 1)) != 0) return std::nullopt;
    firstRegAt.emplace(std::make_pair(c[0], c[1]), r);
  }
  // The slot of a register at `offset` within its fragment (along vDim; the lanes' bits are clear).
  std::map<int64_t, int> slotAt;
  for (int slot = 0; slot < slots; ++slot) slotAt[mfmaAccumulatorOffset(block, slot)] = slot;
  std::map<std::pair<int64_t, int64_t>, int64_t> fragmentAt;
  auto origin = [&](int64_t row, int64_t col) {
    return plan.transposed ? std::make_pair(row, col & ~(block - 1)) : std::make_pair(row & ~(block - 1), col);
  };
  for (const auto& [at, reg] : firstRegAt) {
    const auto [row, col] = origin(at.first, at.second);
    if (fragmentAt.count({row, col})) continue;
    MfmaFragment f;
    f.row = row;
    f.col = col;
    for (int slot = 0; slot < slots; ++slot) {
      const int64_t offset = mfmaAccumulatorOffset(block, static_cast<int>(slot));
      auto it =
          firstRegAt.find(plan.transposed ? std::make_pair(row, col + offset) : std::make_pair(row + offset, col));
      if (it == firstRegAt.end()) return std::nullopt;
      f.regs.push_back(it->second);
    }
    fragmentAt[{row, col}] = static_cast<int64_t>(plan.fragments.size());
    plan.fragments.push_back(std::move(f));
  }
  for (int64_t r = 0; r < acc.numRegs(); ++r) {
    const Coords& c = acc.regCoords[r];
    plan.regSlot.emplace_back(fragmentAt.at(origin(c[0], c[1])), slotAt.at(c[vDim] & (block - 1)));
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
