#include "transforms/analysis/ExchangePadding.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>

namespace tessera::transforms {
namespace {

constexpr int64_t kBanks = 32, kBankBytes = 4, kPhaseBytes = kBanks * kBankBytes, kMaxVectorBytes = 16;
constexpr int64_t kMaxPadBytes = 128;  // every bank offset a row can start at

// Consecutive registers holding consecutive elements of a row: register bits 0..m-1 step the last coordinate by
// 1, 2, .., 2^(m-1); limited by the lowest last-coordinate bit a lane or warp basis moves (a vector must start at a
// multiple of its length).
int64_t contiguousRegisters(const ir::LinearLayout& layout) {
  const size_t last = layout.outDims().size() - 1;
  int64_t run = 1;
  for (const ir::LinearLayout::Basis& b : layout.inDim(ir::kRegisterDim).bases) {
    bool unitStep = b[last] == run;
    for (size_t d = 0; d < last; ++d) unitStep = unitStep && b[d] == 0;
    if (!unitStep) break;
    run *= 2;
  }
  for (const char* dim : {ir::kLaneDim, ir::kWarpDim})
    for (const ir::LinearLayout::Basis& b : layout.inDim(dim).bases)
      while (b[last] != 0 && b[last] % run != 0) run /= 2;
  return run;
}

}  // namespace

int64_t exchangeWavefronts(const ir::LinearLayout& layout, const std::vector<int64_t>& shape, int64_t elementBytes,
                           int64_t pitchBytes) {
  // The widest access the pitch keeps aligned, as LLVM's load/store vectorizer would form it.
  // (One row: only the buffer's start, 16-byte aligned, matters.)
  const bool oneRow = shape.size() < 2 || std::accumulate(shape.begin(), shape.end() - 1, int64_t(1),
                                                          std::multiplies<int64_t>()) == 1;
  int64_t vectorBytes = std::min(contiguousRegisters(layout) * elementBytes, kMaxVectorBytes);
  while (!oneRow && vectorBytes > elementBytes && pitchBytes % vectorBytes != 0) vectorBytes /= 2;
  const int64_t perAccess = vectorBytes / elementBytes;
  const int64_t phaseLanes = kPhaseBytes / std::max(vectorBytes, kBankBytes);
  const int64_t registers = layout.inDimSize(ir::kRegisterDim), lanes = layout.inDimSize(ir::kLaneDim);
  // A thread accesses an element once: registers repeating an earlier register's element are not written again,
  // and LLVM merges their loads.
  const uint64_t repeatedRegisters = layout.freeVariableMasks()[0];

  // Byte offsets are linear over F2 in the coordinates, which are a register's part XOR a lane's part.
  const size_t rank = shape.size();
  auto byteOffset = [&](const std::vector<int64_t>& regPart, const std::vector<int64_t>& lanePart) {
    int64_t row = 0;
    for (size_t d = 0; d + 1 < rank; ++d) row = row * shape[d] + (regPart[d] ^ lanePart[d]);
    return row * pitchBytes + (regPart[rank - 1] ^ lanePart[rank - 1]) * elementBytes;
  };
  std::vector<std::vector<int64_t>> laneParts;
  for (int64_t lane = 0; lane < lanes; ++lane) laneParts.push_back(layout.apply({0, lane, 0}));

  int64_t wavefronts = 0;
  std::vector<std::pair<int64_t, int64_t>> bankWords;  // (bank, word) of one phase
  for (int64_t r = 0; r < registers; r += perAccess) {
    if ((static_cast<uint64_t>(r) & repeatedRegisters) != 0) continue;
    const std::vector<int64_t> regPart = layout.apply({r, 0, 0});
    for (int64_t first = 0; first < lanes; first += phaseLanes) {
      bankWords.clear();
      for (int64_t lane = first; lane < std::min(lanes, first + phaseLanes); ++lane) {
        const int64_t start = byteOffset(regPart, laneParts[lane]);
        for (int64_t word = start / kBankBytes; word * kBankBytes < start + vectorBytes; ++word)
          bankWords.emplace_back(word % kBanks, word);
      }
      std::sort(bankWords.begin(), bankWords.end());
      bankWords.erase(std::unique(bankWords.begin(), bankWords.end()), bankWords.end());
      int64_t most = 0;
      for (size_t i = 0; i < bankWords.size();) {
        size_t j = i;
        while (j < bankWords.size() && bankWords[j].first == bankWords[i].first) ++j;
        most = std::max<int64_t>(most, static_cast<int64_t>(j - i));
        i = j;
      }
      wavefronts += most;
    }
  }
  return wavefronts;
}

int64_t leastConflictingPadBytes(const ir::LinearLayout& src, const ir::LinearLayout& dst,
                                 const std::vector<int64_t>& shape, int64_t elementBytes, int64_t preferred) {
  if (shape.size() < 2) return preferred;  // one row: no pad matters
  const int64_t rowBytes = shape.back() * elementBytes;
  auto cost = [&](int64_t pad) {
    return exchangeWavefronts(src, shape, elementBytes, rowBytes + pad) +
           exchangeWavefronts(dst, shape, elementBytes, rowBytes + pad);
  };
  int64_t best = preferred, bestCost = cost(preferred);
  for (int64_t pad = 0; pad <= kMaxPadBytes; pad += std::max(kBankBytes, elementBytes)) {
    const int64_t c = cost(pad);
    if (c < bestCost) best = pad, bestCost = c;
  }
  return best;
}

}  // namespace tessera::transforms
