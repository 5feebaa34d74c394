#include "transforms/analysis/ExchangeConflicts.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "ir/Error.h"

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

// The widest access of `layout` into rows `pitchBytes` apart (any pitch: 0), and how many lanes share a phase.
struct Access {
  int64_t vectorBytes, perAccess, phaseLanes;
};
Access widestAccess(const ir::LinearLayout& layout, int64_t elementBytes, int64_t pitchBytes) {
  int64_t vectorBytes = std::min(contiguousRegisters(layout) * elementBytes, kMaxVectorBytes);
  while (pitchBytes && vectorBytes > elementBytes && pitchBytes % vectorBytes != 0) vectorBytes /= 2;
  return {vectorBytes, vectorBytes / elementBytes, kPhaseBytes / std::max(vectorBytes, kBankBytes)};
}

// At least one wavefront per phase of each access, with accesses as wide as any pitch allows: a narrower access
// only splits the same bytes over more registers (fewer lanes per phase, but never fewer phases in all). No
// buffer costs less; one that costs this much is conflict-free and as wide as it gets.
int64_t wavefrontLowerBound(const ir::LinearLayout& layout, int64_t elementBytes) {
  const Access widest = widestAccess(layout, elementBytes, 0);
  const int64_t registers = layout.inDimSize(ir::kRegisterDim), lanes = layout.inDimSize(ir::kLaneDim);
  const uint64_t repeatedRegisters = layout.freeVariableMasks()[0];
  int64_t accesses = 0;
  for (int64_t r = 0; r < registers; r += widest.perAccess)
    if ((static_cast<uint64_t>(r) & repeatedRegisters) == 0) ++accesses;
  return accesses * ((lanes + widest.phaseLanes - 1) / widest.phaseLanes);
}

// Where each (register, lane) of warp 0 puts its element in any buffer of one shape: the row (the row-major index of
// every coordinate but the last) and the last coordinate. Computed once per layout; a candidate buffer's byte
// offset is then row * pitch + last * elementBytes, swizzled (this is the hot loop of the pad and swizzle search).
struct WarpElements {
  int64_t registers = 0, lanes = 0;
  uint64_t repeatedRegisters = 0;  // a thread accesses an element once: repeats are not written again, and LLVM
                                   // merges their loads
  std::vector<int64_t> rows, lasts;  // [register * lanes + lane]

  WarpElements(const ir::LinearLayout& layout, const std::vector<int64_t>& shape)
      : registers(layout.inDimSize(ir::kRegisterDim)), lanes(layout.inDimSize(ir::kLaneDim)),
        repeatedRegisters(layout.freeVariableMasks()[0]) {
    if (layout.outDims().size() != shape.size()) throw Error("exchange buffer: coordinates and shape differ in rank");
    // The coordinates are a register's part XOR a lane's part.
    std::vector<std::vector<int64_t>> laneParts;
    for (int64_t lane = 0; lane < lanes; ++lane) laneParts.push_back(layout.apply({0, lane, 0}));
    rows.reserve(static_cast<size_t>(registers * lanes));
    lasts.reserve(rows.capacity());
    for (int64_t r = 0; r < registers; ++r) {
      const std::vector<int64_t> regPart = layout.apply({r, 0, 0});
      for (int64_t lane = 0; lane < lanes; ++lane) {
        int64_t row = 0;
        for (size_t d = 0; d + 1 < shape.size(); ++d) row = row * shape[d] + (regPart[d] ^ laneParts[lane][d]);
        rows.push_back(row);
        lasts.push_back(shape.empty() ? 0 : regPart.back() ^ laneParts[lane].back());
      }
    }
  }
};

// Wavefronts of warp 0's accesses, `perAccess` registers of `vectorBytes` each starting at `startOf(register, lane)`
// (bytes), `phaseLanes` lanes to a phase; registers in `repeatedRegisters` repeat others and are not accessed.
template <class StartOf>
int64_t accessWavefronts(int64_t registers, int64_t lanes, uint64_t repeatedRegisters, int64_t perAccess,
                         int64_t vectorBytes, int64_t phaseLanes, const StartOf& startOf) {
  int64_t total = 0;
  // Per bank, the distinct words one phase asks of it (a bank delivers one word per wavefront), counted in place
  // rather than sorted: this loop runs for every candidate buffer. A phase touches at most 64 words: 32 lanes of one
  // or two words (an access of up to 4 bytes), or 8 lanes of at most 5 (16 bytes, when not word-aligned).
  constexpr size_t kMaxPhaseWords = 64;
  std::array<std::array<int64_t, kMaxPhaseWords>, kBanks> bankWords;
  std::array<int64_t, kBanks> distinct;
  for (int64_t r = 0; r < registers; r += perAccess) {
    if ((static_cast<uint64_t>(r) & repeatedRegisters) != 0) continue;
    for (int64_t first = 0; first < lanes; first += phaseLanes) {
      distinct.fill(0);
      int64_t most = 0;
      for (int64_t lane = first; lane < std::min(lanes, first + phaseLanes); ++lane) {
        const int64_t start = startOf(r, lane);
        for (int64_t word = start / kBankBytes; word * kBankBytes < start + vectorBytes; ++word) {
          const size_t bank = static_cast<size_t>(word % kBanks);
          int64_t* words = bankWords[bank].data();
          const int64_t n = distinct[bank];
          if (std::find(words, words + n, word) != words + n) continue;  // the same word: one delivery
          if (n == static_cast<int64_t>(kMaxPhaseWords))
            throw Error("shared memory: more than 64 words in one phase (" + std::to_string(vectorBytes) +
                        "-byte accesses)");
          words[n] = word;
          most = std::max(most, distinct[bank] = n + 1);
        }
      }
      total += most;
    }
  }
  return total;
}

int64_t wavefronts(const ir::LinearLayout& layout, const WarpElements& warp, const ExchangeBuffer& buffer) {
  const int64_t elementBytes = buffer.elementBytes, pitchBytes = buffer.pitchBytes();
  // The widest access the pitch keeps aligned, as LLVM's load/store vectorizer would form it (a swizzle moves
  // whole 16-byte chunks). One row: only the buffer's start, 16-byte aligned, matters.
  const Access access = widestAccess(layout, elementBytes, buffer.rows() == 1 ? 0 : pitchBytes);
  // A swizzle leaves rows unpadded (ExchangeBuffer::byteOffset).
  return accessWavefronts(warp.registers, warp.lanes, warp.repeatedRegisters, access.perAccess, access.vectorBytes,
                          access.phaseLanes, [&](int64_t r, int64_t lane) {
                            const size_t at = static_cast<size_t>(r * warp.lanes + lane);
                            return buffer.swizzle.apply(warp.rows[at] * pitchBytes + warp.lasts[at] * elementBytes);
                          });
}

}  // namespace

int64_t exchangeWavefronts(const ir::LinearLayout& layout, const ExchangeBuffer& buffer) {
  return wavefronts(layout, WarpElements(layout, buffer.shape), buffer);
}

int64_t sharedBufferWavefronts(const ir::LinearLayout& layout, const ir::Layout& shared,
                               const std::vector<int64_t>& shape, int64_t elementBytes, int64_t perAccess) {
  const ir::LinearLayout offsets = shared.toLinear(shape).invert();  // coordinates -> element offset
  const int64_t vectorBytes = perAccess * elementBytes;
  return accessWavefronts(layout.inDimSize(ir::kRegisterDim), layout.inDimSize(ir::kLaneDim),
                          layout.freeVariableMasks()[0], perAccess, vectorBytes,
                          kPhaseBytes / std::max(vectorBytes, kBankBytes), [&](int64_t r, int64_t lane) {
                            return offsets.apply(layout.apply({r, lane, 0}))[0] * elementBytes;
                          });
}

ExchangeBuffer leastConflictingExchange(const ir::LinearLayout& src, const ir::LinearLayout& dst, ExchangeBuffer buffer) {
  buffer.padBytes = std::nullopt;
  buffer.swizzle = {};
  if (buffer.rows() == 1) return buffer;  // one row: no pad or swizzle matters
  const WarpElements srcElements(src, buffer.shape), dstElements(dst, buffer.shape);
  auto cost = [&](const ExchangeBuffer& b) { return wavefronts(src, srcElements, b) + wavefronts(dst, dstElements, b); };
  // The search stops at the first candidate no other can beat (the choice is the same as a full search's).
  const int64_t lowerBound =
      wavefrontLowerBound(src, buffer.elementBytes) + wavefrontLowerBound(dst, buffer.elementBytes);
  ExchangeBuffer best = buffer;
  int64_t bestCost = cost(best);
  auto consider = [&](const ExchangeBuffer& candidate) {
    if (const int64_t c = cost(candidate); c < bestCost) best = candidate, bestCost = c;
  };
  for (int64_t pad = 0; pad <= kMaxPadBytes && bestCost > lowerBound; pad += std::max(kBankBytes, buffer.elementBytes)) {
    ExchangeBuffer padded = buffer;
    padded.padBytes = pad;
    consider(padded);
  }
  // Swizzles only over power-of-two dimensions: the lowering relies on the offset being linear over F2. First
  // the strides of whole rows ("chunk XOR (row / k) % phases" within a row), then shorter ones, which also move
  // chunks between the short rows of one block.
  const bool powerOfTwo = std::all_of(buffer.shape.begin(), buffer.shape.end(), [](int64_t n) { return (n & (n - 1)) == 0; });
  const int64_t rowBytes = buffer.rowLength() * buffer.elementBytes, totalBytes = buffer.rows() * rowBytes;
  auto trySwizzles = [&](int64_t phases, int64_t firstStride, int64_t lastStride) {
    for (int64_t stride = firstStride; stride <= lastStride && bestCost > lowerBound; stride *= 2) {
      ExchangeBuffer swizzled = buffer;
      swizzled.padBytes = 0;
      swizzled.swizzle = {phases, stride};
      consider(swizzled);
    }
  };
  auto withinRows = [&](int64_t phases) { return rowBytes % (phases * ExchangeSwizzle::kChunkBytes) == 0; };
  for (int64_t phases = 2; powerOfTwo && phases * ExchangeSwizzle::kChunkBytes <= kPhaseBytes; phases *= 2)
    if (withinRows(phases)) trySwizzles(phases, rowBytes, rowBytes * kBanks / phases);
  // Strides past half the buffer XOR nothing.
  constexpr int64_t kMinStrideBytes = 2 * ExchangeSwizzle::kChunkBytes;
  for (int64_t phases = 2; powerOfTwo && phases * ExchangeSwizzle::kChunkBytes <= std::min(kPhaseBytes, totalBytes); phases *= 2)
    trySwizzles(phases, kMinStrideBytes, withinRows(phases) ? rowBytes / 2 : totalBytes / 2);
  return best;
}

}  // namespace tessera::transforms
