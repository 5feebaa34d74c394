#include "backends/common/ThreadMap.h"

#include <random>

#include "ir/Error.h"

namespace tessera::backends {

Coords xorCoords(const Coords& a, const Coords& b) {
  Coords r(a.size());
  for (size_t d = 0; d < a.size(); ++d) r[d] = a[d] ^ b[d];
  return r;
}

bool isZero(const Coords& c) {
  for (int64_t x : c)
    if (x != 0) return false;
  return true;
}

Coords dropDim(const Coords& c, int dim) {
  Coords r = c;
  r.erase(r.begin() + dim);
  return r;
}

namespace {

bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

int log2Exact(int64_t x) {
  int n = 0;
  while ((int64_t(1) << n) < x) ++n;
  return n;
}

std::string shapeText(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace

uint64_t ThreadMap::replicatedLaneMask() const {
  uint64_t m = 0;
  for (size_t i = 0; i < laneBases.size(); ++i)
    if (isZero(laneBases[i])) m |= uint64_t(1) << i;
  return m;
}

uint64_t ThreadMap::replicatedWarpMask() const {
  uint64_t m = 0;
  for (size_t i = 0; i < warpBases.size(); ++i)
    if (isZero(warpBases[i])) m |= uint64_t(1) << i;
  return m;
}

Coords ThreadMap::coordsOf(int64_t reg, int64_t warp, int64_t lane) const {
  Coords c = regCoords[reg];
  for (size_t i = 0; i < laneBases.size(); ++i)
    if ((lane >> i) & 1) c = xorCoords(c, laneBases[i]);
  for (size_t i = 0; i < warpBases.size(); ++i)
    if ((warp >> i) & 1) c = xorCoords(c, warpBases[i]);
  return c;
}

int64_t ThreadMap::linearIndex(const Coords& c) const {
  int64_t idx = 0;
  for (size_t d = 0; d < shape.size(); ++d) idx = idx * shape[d] + c[d];
  return idx;
}

ThreadMap ThreadMap::scalar(int64_t numWarps, int64_t warpSize) {
  ThreadMap m;
  m.regCoords = {Coords{}};
  m.regOwner = {true};
  m.warpSize = warpSize;
  m.numWarps = numWarps;
  m.laneBases.assign(log2Exact(warpSize), Coords{});
  m.warpBases.assign(log2Exact(numWarps), Coords{});
  return m;
}

ThreadMap ThreadMap::of(ir::Type type, int64_t numWarps, int64_t warpSize, const std::string& what) {
  if (!type.isTile()) return scalar(numWarps, warpSize);
  std::optional<ir::Layout> layout = ir::Layout::ofType(type);
  if (!layout) throw Error(what + ": tile " + type.str() + " has no layout (run the layout passes first)");
  if (!layout->isDistributed()) throw Error(what + ": tile " + type.str() + " has a shared layout, not a distributed one");
  if (layout->numWarps() != numWarps || layout->warpSize() != warpSize)
    throw Error(what + ": layout " + layout->str() + " is for " + std::to_string(layout->numWarps()) + " warps of " +
                std::to_string(layout->warpSize()) + " threads, but the kernel runs " + std::to_string(numWarps) +
                " warps of " + std::to_string(warpSize));
  return build(*layout, type.shape(), what);
}

ThreadMap ThreadMap::build(const ir::Layout& layout, const std::vector<int64_t>& shape, const std::string& what) {
  ThreadMap m;
  m.shape = shape;
  m.warpSize = layout.warpSize();
  m.numWarps = layout.numWarps();
  if (!isPowerOfTwo(m.warpSize) || !isPowerOfTwo(m.numWarps))
    throw Error(what + ": layout " + layout.str() + " needs a power-of-two warp size and warp count");
  const int64_t regs = layout.registersPerThread(shape);
  for (int64_t r = 0; r < regs; ++r) {
    m.regCoords.push_back(layout.coords(shape, 0, 0, r));
    m.regOwner.push_back(layout.isOwner(shape, 0, 0, r));
  }
  const Coords& origin = m.regCoords[0];
  for (int i = 0; (int64_t(1) << i) < m.warpSize; ++i)
    m.laneBases.push_back(xorCoords(layout.coords(shape, 0, int64_t(1) << i, 0), origin));
  for (int i = 0; (int64_t(1) << i) < m.numWarps; ++i)
    m.warpBases.push_back(xorCoords(layout.coords(shape, int64_t(1) << i, 0, 0), origin));

  // Check the linear form against the layout: exhaustively for small tiles, on a fixed sample otherwise.
  auto check = [&](int64_t w, int64_t l, int64_t r) {
    if (layout.coords(shape, w, l, r) != m.coordsOf(r, w, l))
      throw Error(what + ": layout " + layout.str() + " over " + shapeText(shape) +
                  " is not linear in the thread and register bits; the lowering cannot distribute it");
  };
  const int64_t threads = m.warpSize * m.numWarps;
  if (threads * regs <= (int64_t(1) << 14)) {
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t r = 0; r < regs; ++r) check(t / m.warpSize, t % m.warpSize, r);
  } else {
    std::mt19937_64 rng(42);
    for (int i = 0; i < 512; ++i) {
      int64_t t = static_cast<int64_t>(rng() % threads);
      check(t / m.warpSize, t % m.warpSize, static_cast<int64_t>(rng() % regs));
    }
  }
  return m;
}

}  // namespace tessera::backends
