#include "backends/nvptx/MmaFragments.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/Error.h"
#include "ir/LayoutConversion.h"

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

std::optional<MmaSwizzleSplit> mmaSplitSwizzledIndex(const MmaSwizzle& s, int64_t row, int64_t col,
                                                     int64_t colVarChunkBits) {
  if (row < 0 || col < 0 || col % s.chunkElements != 0) return std::nullopt;
  const int64_t chunk = col / s.chunkElements;
  // No phase (maxPhase 1): the index is linear in row and col.
  if (s.maxPhase == 1) return MmaSwizzleSplit{0, row * s.rowLength + col};
  if (row % (s.perPhase * s.maxPhase) != 0 || (chunk & colVarChunkBits) != 0) return std::nullopt;
  const int64_t low = chunk & (s.maxPhase - 1);
  return MmaSwizzleSplit{low * s.chunkElements, row * s.rowLength + (chunk - low) * s.chunkElements};
}

int64_t mmaBlockRow(const MmaRowBases& rowBases, int64_t fragmentRow) {
  int64_t row = 0;
  for (int i = 0; i < 4; ++i)
    if ((fragmentRow >> i) & 1) row ^= rowBases[i];
  return row;
}

int64_t mmaBLoadTiles(const MmaAccumulatorPlan& plan, int64_t K, int64_t stepK) {
  return K % (2 * stepK) == 0 && plan.fragmentCols.size() <= plan.fragmentRows.size() ? 4 : 2;
}

MatrixCoord mmaALaneOffset(int64_t lane, int64_t elementBytes, const MmaRowBases& rowBases) {
  return {mmaBlockRow(rowBases, lane & 15), (kMmaChunkBytes / elementBytes) * ((lane >> 4) & 1)};
}

MatrixCoord mmaBLaneOffset(int64_t lane, int64_t tiles) { return {(lane & 7) + 8 * ((lane >> 3) % tiles), 0}; }

MatrixCoord mmaBTransposedLaneOffset(int64_t lane, int64_t tiles, int64_t elementBytes) {
  return {lane & 7, (kMmaChunkBytes / elementBytes) * ((lane >> 3) % tiles)};
}

namespace {

// The block rows of the lanes' groupID bits and of the one register basis inside a 16-row block, when `acc`'s lanes
// and registers have the C fragment's shape up to a permutation of the rows; nullopt otherwise.
std::optional<MmaRowBases> fragmentRowBases(const ThreadMap& acc) {
  if (acc.laneBases.size() != 5 || acc.laneBases[0] != Coords{0, 2} || acc.laneBases[1] != Coords{0, 4})
    return std::nullopt;
  MmaRowBases rows{};
  for (int i = 0; i < 3; ++i) {
    const Coords& l = acc.laneBases[2 + i];
    if (l[1] != 0 || l[0] <= 0 || l[0] >= kMmaM) return std::nullopt;
    rows[i] = l[0];
  }
  std::optional<int64_t> half;  // the register step between fragment rows g and g + 8
  for (const ir::LinearLayout::Basis& b : acc.linear.inDim(ir::kRegisterDim).bases) {
    if (b[1] != 0 || b[0] <= 0 || b[0] >= kMmaM) continue;
    if (half && *half != b[0]) return std::nullopt;
    half = b[0];
  }
  if (!half) return std::nullopt;
  rows[3] = *half;
  std::set<int64_t> reached;
  for (int64_t f = 0; f < kMmaM; ++f) reached.insert(mmaBlockRow(rows, f));
  if (reached.size() != static_cast<size_t>(kMmaM)) return std::nullopt;  // the four must span the block's rows
  return rows;
}

}  // namespace

std::optional<MmaAccumulatorPlan> planMmaAccumulator(const ThreadMap& acc) {
  if (acc.rank() != 2 || acc.warpSize != kMmaWarpSize) return std::nullopt;
  if (acc.shape[0] % kMmaM != 0 || acc.shape[1] % kMmaN != 0) return std::nullopt;
  std::optional<MmaRowBases> rowBases = fragmentRowBases(acc);
  if (!rowBases) return std::nullopt;
  const int64_t half = (*rowBases)[3];
  for (const Coords& w : acc.warpBases)
    if ((w[0] % kMmaM) != 0 || (w[1] % kMmaN) != 0) return std::nullopt;
  std::map<std::pair<int64_t, int64_t>, int64_t> firstRegAt;
  for (int64_t r = 0; r < acc.numRegs(); ++r) {
    const Coords& c = acc.regCoords[r];
    const int64_t blockRow = c[0] % kMmaM;
    if ((blockRow != 0 && blockRow != half) || (c[1] & 6) != 0) return std::nullopt;  // the lanes' bits
    firstRegAt.emplace(std::make_pair(c[0], c[1]), r);
  }
  MmaAccumulatorPlan plan;
  plan.rowBases = *rowBases;
  std::map<std::pair<int64_t, int64_t>, int64_t> fragmentAt;
  for (const auto& [at, reg] : firstRegAt) {
    const int64_t row = at.first - at.first % kMmaM, col = at.second & ~int64_t(1);
    if (fragmentAt.count({row, col})) continue;
    MmaFragment f;
    f.row = row;
    f.col = col;
    const MatrixCoord slots[4] = {{0, 0}, {0, 1}, {half, 0}, {half, 1}};
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
    const int64_t frag = fragmentAt.at({c[0] - c[0] % kMmaM, c[1] & ~int64_t(1)});
    plan.regSlot.emplace_back(frag, static_cast<int>((c[0] % kMmaM == half ? 2 : 0) + (c[1] & 1)));
  }
  for (const MmaFragment& f : plan.fragments) {
    if (std::find(plan.fragmentRows.begin(), plan.fragmentRows.end(), f.row) == plan.fragmentRows.end())
      plan.fragmentRows.push_back(f.row);
    if (std::find(plan.fragmentCols.begin(), plan.fragmentCols.end(), f.col) == plan.fragmentCols.end())
      plan.fragmentCols.push_back(f.col);
  }
  return plan;
}

std::optional<std::vector<int64_t>> planMmaOperandARegisters(const ThreadMap& a, const ThreadMap& acc,
                                                             const MmaAccumulatorPlan& plan) {
  using Basis = ir::LinearLayout::Basis;
  const int64_t stepK = mmaStepK(2);
  if (a.rank() != 2 || acc.rank() != 2 || a.shape[0] != acc.shape[0] || a.shape[1] % stepK != 0) return std::nullopt;
  const int64_t M = a.shape[0], K = a.shape[1], steps = K / stepK;
  // The fragments as a layout over M x K: registers a0..a7 (column + 1, the other fragment row, column + 8), then the
  // K steps, then the accumulator's register steps between 16-row blocks; lanes as the accumulator's; each warp the
  // rows of its accumulator blocks, at every K.
  std::vector<Basis> registers = {{0, 1}, {plan.rowBases[3], 0}, {0, 8}};
  for (int64_t k = stepK; k < K; k *= 2) registers.push_back({0, k});
  std::vector<int64_t> blockSteps;
  for (const Basis& b : acc.linear.inDim(ir::kRegisterDim).bases) {
    if (b[0] < kMmaM) continue;
    if (b[1] != 0 || b[0] % kMmaM != 0) return std::nullopt;
    blockSteps.push_back(b[0]);
    registers.push_back(b);
  }
  std::vector<Basis> warps;
  for (const Coords& w : acc.warpBases) warps.push_back({w[0], 0});
  ir::ConversionPlan permutation;
  try {
    const ir::LinearLayout fragments({{ir::kRegisterDim, registers}, {ir::kLaneDim, acc.laneBases}, {ir::kWarpDim, warps}},
                                     {{ir::tensorDimName(0), M}, {ir::tensorDimName(1), K}});
    permutation = ir::planConversion(a.linear, fragments);
  } catch (const Error&) {
    return std::nullopt;  // not over the same rows, lanes or warps
  }
  if (permutation.kind != ir::ConversionKind::RegisterPermutation) return std::nullopt;
  std::map<int64_t, int64_t> blockOf;  // block origin row -> its index among the block steps' combinations
  for (int64_t j = 0; j < (int64_t(1) << blockSteps.size()); ++j) {
    int64_t row = 0;
    for (size_t i = 0; i < blockSteps.size(); ++i)
      if ((j >> i) & 1) row ^= blockSteps[i];
    blockOf.emplace(row, j);
  }
  std::vector<int64_t> source;
  for (int64_t row : plan.fragmentRows) {
    auto it = blockOf.find(row);
    if (it == blockOf.end()) return std::nullopt;
    for (int64_t s = 0; s < steps; ++s)
      for (int64_t e = 0; e < 8; ++e) source.push_back(permutation.sourceRegister.at(e + 8 * (s + steps * it->second)));
  }
  return source;
}

}  // namespace tessera::backends::nvptx
