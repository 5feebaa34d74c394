#include "backends/common/ThreadMap.h"

#include <bit>
#include <unordered_map>

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

int log2Exact(int64_t x) {
  int n = 0;
  while ((int64_t(1) << n) < x) ++n;
  return n;
}

}  // namespace

// From the linear form: a run of 2^k needs the first k register bases to be 1, 2, .., 2^(k-1) along the dimension,
// and every other basis to keep runs aligned (a multiple of 2^k along it).
std::pair<int, int64_t> ThreadMap::registerRuns() const {
  for (int d = 0; d < rank(); ++d) {
    int64_t run = linear.consecutiveAlong(ir::kRegisterDim, ir::tensorDimName(d));
    if (run < 2) continue;
    auto aligned = [&](int64_t len) {
      const std::vector<ir::LinearLayout::Basis>& regBases = linear.inDim(ir::kRegisterDim).bases;
      for (size_t i = std::countr_zero(static_cast<uint64_t>(len)); i < regBases.size(); ++i)
        if (regBases[i][d] % len != 0) return false;
      for (const auto* bases : {&laneBases, &warpBases})
        for (const Coords& c : *bases)
          if (c[d] % len != 0) return false;
      return true;
    };
    while (run > 1 && !aligned(run)) run /= 2;
    return {d, run};
  }
  return {0, 1};
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
  m.regFirst = {0};
  m.warpSize = warpSize;
  m.numWarps = numWarps;
  m.laneBases.assign(log2Exact(warpSize), Coords{});
  m.warpBases.assign(log2Exact(numWarps), Coords{});
  m.laneFreeMask = static_cast<uint64_t>(warpSize - 1);  // every thread holds the value
  m.warpFreeMask = static_cast<uint64_t>(numWarps - 1);
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
  ir::LinearLayout linear;
  try {
    linear = layout.toLinear(shape);
  } catch (const Error& e) {
    throw Error(what + ": " + e.message());
  }
  ThreadMap m;
  m.shape = shape;
  m.warpSize = layout.warpSize();
  m.numWarps = layout.numWarps();
  m.laneBases = linear.inDim(ir::kLaneDim).bases;
  m.warpBases = linear.inDim(ir::kWarpDim).bases;
  const std::vector<ir::LinearLayout::Basis>& regBases = linear.inDim(ir::kRegisterDim).bases;
  const std::vector<uint64_t> free = linear.freeVariableMasks();  // register, lane, warp
  m.laneFreeMask = free[1];
  m.warpFreeMask = free[2];
  // Register r differs from register r with its lowest set bit cleared by that bit's basis.
  const int64_t regs = int64_t(1) << regBases.size();
  m.regCoords.reserve(regs);
  m.regOwner.reserve(regs);
  m.regCoords.push_back(Coords(shape.size(), 0));
  for (int64_t r = 1; r < regs; ++r)
    m.regCoords.push_back(xorCoords(m.regCoords[r & (r - 1)], regBases[std::countr_zero(static_cast<uint64_t>(r))]));
  for (int64_t r = 0; r < regs; ++r) m.regOwner.push_back((static_cast<uint64_t>(r) & free[0]) == 0);
  // Registers with equal coordinates at thread (0, 0) hold the same element in every thread (the thread part is
  // XORed into both alike).
  m.regFirst.resize(regs);
  std::unordered_map<int64_t, int64_t> firstAt;
  for (int64_t r = 0; r < regs; ++r) m.regFirst[r] = firstAt.try_emplace(m.linearIndex(m.regCoords[r]), r).first->second;
  m.linear = std::move(linear);
  return m;
}

}  // namespace tessera::backends
