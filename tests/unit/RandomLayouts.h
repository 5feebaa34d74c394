// Random layouts for property tests (linear_layout_test, sim_layout_conversion_test): blocked layouts with lanes,
// warps and registers split at random over the dimensions, slices of them, and random surjective #linear layouts,
// for warps of 32 or 64 lanes and 1 to 16 warps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "ir/Layout.h"
#include "ir/LinearLayout.h"

namespace tessera::testing {

using Shape = std::vector<int64_t>;
using ir::Layout;
using ir::LinearLayout;

inline int64_t numElements(const Shape& s) { return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<>()); }

inline int log2Of(int64_t v) {
  int n = 0;
  while ((int64_t(1) << n) < v) ++n;
  return n;
}

// The warps (1 to 16) and warp size (32 or 64) of one random case.
struct Machine {
  int64_t warpSize, numWarps;
};

inline int64_t pick(std::mt19937& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

inline std::vector<int64_t> randomOrder(std::mt19937& rng, int rank) {
  std::vector<int64_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// `total` (a power of two) split into random powers of two over `rank` dimensions.
inline std::vector<int64_t> randomSplit(std::mt19937& rng, int rank, int64_t total) {
  std::vector<int64_t> parts(rank, 1);
  for (int b = 0; b < log2Of(total); ++b) parts[pick(rng, 0, rank - 1)] *= 2;
  return parts;
}

// Up to 8 registers per CTA tile (so that every slot of every thread can be enumerated), lanes and warps split at
// random over the dimensions, a random order.
inline Layout randomBlocked(std::mt19937& rng, int rank, Machine m) {
  std::vector<int64_t> spt = randomSplit(rng, rank, int64_t(1) << pick(rng, 0, 3));
  return Layout::blocked(spt, randomSplit(rng, rank, m.warpSize), randomSplit(rng, rank, m.numWarps),
                         randomOrder(rng, rank));
}

// A random distributed layout of `rank`: blocked, or a slice of a random blocked layout one rank higher (for rank 1,
// sometimes a slice of a slice).
inline Layout randomDistributed(std::mt19937& rng, int rank, Machine m, bool allowSlice = true) {
  if (!allowSlice || rank == ir::kMaxTileRank || pick(rng, 0, 2) == 0) return randomBlocked(rng, rank, m);
  if (rank == 1 && pick(rng, 0, 1) == 0)
    return Layout::slice(static_cast<int>(pick(rng, 0, 1)),
                         Layout::slice(static_cast<int>(pick(rng, 0, 2)), randomBlocked(rng, 3, m)));
  return Layout::slice(static_cast<int>(pick(rng, 0, rank)), randomBlocked(rng, rank + 1, m));
}

// Sizes from 1 to 128 per dimension, so smaller and larger than the random layouts' CTA tiles, at most maxElements
// in all.
inline Shape randomShape(std::mt19937& rng, int rank, int64_t maxElements) {
  Shape s(rank);
  for (int64_t& d : s) d = int64_t(1) << pick(rng, 0, 7);
  while (numElements(s) > maxElements) *std::max_element(s.begin(), s.end()) /= 2;
  return s;
}

// `shape`, its largest dimension halved until every thread's registers of `layout` over it number at most 2^15
// slots in all (enough to enumerate them).
inline Shape fitShape(const Layout& layout, Shape shape) {
  while (numElements(shape) > 1 && layout.warpSize() * layout.numWarps() * layout.registersPerThread(shape) > (1 << 15))
    *std::max_element(shape.begin(), shape.end()) /= 2;
  return shape;
}

// A random surjective #linear layout onto `shape` (bases drawn at random, some repeated or zero).
inline LinearLayout randomLinear(std::mt19937& rng, const Shape& shape, Machine m) {
  auto randomBasis = [&] {
    LinearLayout::Basis b(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) b[d] = pick(rng, 0, shape[d] - 1);
    return b;
  };
  while (true) {
    std::vector<LinearLayout::InDim> ins = {{ir::kRegisterDim, {}}, {ir::kLaneDim, {}}, {ir::kWarpDim, {}}};
    const int outBits = log2Of(numElements(shape)), threadBits = log2Of(m.warpSize) + log2Of(m.numWarps);
    const int regBits = std::max<int>(static_cast<int>(pick(rng, 0, 4)), outBits - threadBits);
    for (int i = 0; i < regBits; ++i) ins[0].bases.push_back(randomBasis());
    for (int i = 0; i < log2Of(m.warpSize); ++i) ins[1].bases.push_back(randomBasis());
    for (int i = 0; i < log2Of(m.numWarps); ++i) ins[2].bases.push_back(randomBasis());
    std::vector<LinearLayout::OutDim> outs;
    for (size_t d = 0; d < shape.size(); ++d) outs.push_back({ir::tensorDimName(static_cast<int>(d)), shape[d]});
    LinearLayout l(std::move(ins), std::move(outs));
    if (l.isSurjective()) return l;
  }
}

}  // namespace tessera::testing
