#include "ir/Layout.h"

#include <algorithm>
#include <numeric>

#include "ir/Error.h"

namespace tessera::ir {

namespace {

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t(1), std::multiplies<int64_t>());
}

std::string joined(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void checkOrder(const std::vector<int64_t>& order, size_t rank, const char* what) {
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  bool ok = sorted.size() == rank;
  for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i);
  if (!ok) throw Error(std::string(what) + " layout: order " + joined(order) + " is not a permutation of 0.." +
                       std::to_string(static_cast<int64_t>(rank) - 1));
}

void checkPowersOfTwo(const std::vector<int64_t>& v, const char* field) {
  for (int64_t x : v)
    if (!isPowerOfTwo(x))
      throw Error(std::string("blocked layout: ") + field + " " + joined(v) + " must hold positive powers of two");
}

// Splits `index` into per-dimension digits with radices `sizes`, dimension order[0] varying fastest.
std::vector<int64_t> delinearize(int64_t index, const std::vector<int64_t>& sizes, const std::vector<int64_t>& order) {
  std::vector<int64_t> digits(sizes.size(), 0);
  for (int64_t d : order) {
    digits[d] = index % sizes[d];
    index /= sizes[d];
  }
  return digits;
}

// Reads a required parameter of a layout attribute.
const Attr& param(const Attr& a, const char* key) {
  const AttrDict& params = a.getLayoutParams();
  auto it = params.find(key);
  if (it == params.end()) throw Error("layout " + a.str() + " is missing '" + key + "'");
  return it->second;
}

std::vector<int64_t> intArrayParam(const Attr& a, const char* key) {
  const Attr& v = param(a, key);
  if (!v.isArray()) throw Error("layout " + a.str() + ": '" + key + "' must be an integer array");
  for (const Attr& e : v.getArray())
    if (!e.isInt()) throw Error("layout " + a.str() + ": '" + key + "' must be an integer array");
  return v.getIntArray();
}

int64_t intParam(const Attr& a, const char* key) {
  const Attr& v = param(a, key);
  if (!v.isInt()) throw Error("layout " + a.str() + ": '" + key + "' must be an integer");
  return v.getInt();
}

void checkKeys(const Attr& a, std::initializer_list<const char*> keys) {
  for (const auto& [key, value] : a.getLayoutParams()) {
    bool known = std::any_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; });
    if (!known) throw Error("layout " + a.str() + " has unknown parameter '" + key + "'");
  }
}

// The shape a slice's parent is evaluated over: `shape` with a size-1 dimension inserted at `dim`.
std::vector<int64_t> parentShapeOf(const std::vector<int64_t>& shape, int dim) {
  std::vector<int64_t> s = shape;
  s.insert(s.begin() + dim, 1);
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------- construction

Layout Layout::blocked(std::vector<int64_t> sizePerThread, std::vector<int64_t> threadsPerWarp,
                       std::vector<int64_t> warpsPerCTA, std::vector<int64_t> order) {
  size_t rank = sizePerThread.size();
  if (rank < 1 || rank > static_cast<size_t>(kMaxTileRank))
    throw Error("blocked layout: rank must be 1 to " + std::to_string(kMaxTileRank));
  if (threadsPerWarp.size() != rank || warpsPerCTA.size() != rank || order.size() != rank)
    throw Error("blocked layout: spt " + joined(sizePerThread) + ", tpw " + joined(threadsPerWarp) + ", wpc " +
                joined(warpsPerCTA) + " and order " + joined(order) + " must have the same length");
  checkPowersOfTwo(sizePerThread, "spt");
  checkPowersOfTwo(threadsPerWarp, "tpw");
  checkPowersOfTwo(warpsPerCTA, "wpc");
  checkOrder(order, rank, "blocked");
  Layout l;
  l.kind_ = Kind::Blocked;
  l.spt_ = std::move(sizePerThread);
  l.tpw_ = std::move(threadsPerWarp);
  l.wpc_ = std::move(warpsPerCTA);
  l.order_ = std::move(order);
  return l;
}

Layout Layout::slice(int dim, const Layout& parent) {
  if (!parent.isDistributed()) throw Error("slice layout: the parent must be a distributed layout");
  if (parent.rank() < 2) throw Error("slice layout: the parent must have rank >= 2 (got " + parent.str() + ")");
  if (dim < 0 || dim >= parent.rank())
    throw Error("slice layout: dim " + std::to_string(dim) + " is out of range for parent " + parent.str());
  Layout l;
  l.kind_ = Kind::Slice;
  l.sliceDim_ = dim;
  l.parent_ = std::make_shared<const Layout>(parent);
  return l;
}

Layout Layout::shared(int64_t vec, int64_t perPhase, int64_t maxPhase, std::vector<int64_t> order) {
  if (order.empty() || order.size() > static_cast<size_t>(kMaxTileRank))
    throw Error("shared layout: rank must be 1 to " + std::to_string(kMaxTileRank));
  if (!isPowerOfTwo(vec) || !isPowerOfTwo(perPhase) || !isPowerOfTwo(maxPhase))
    throw Error("shared layout: vec, per_phase and max_phase must be positive powers of two (got " +
                std::to_string(vec) + ", " + std::to_string(perPhase) + ", " + std::to_string(maxPhase) + ")");
  checkOrder(order, order.size(), "shared");
  Layout l;
  l.kind_ = Kind::Shared;
  l.vec_ = vec;
  l.perPhase_ = perPhase;
  l.maxPhase_ = maxPhase;
  l.order_ = std::move(order);
  return l;
}

// ---------------------------------------------------------------------------------------------- attributes

Attr Layout::toAttr() const {
  switch (kind_) {
    case Kind::Blocked:
      return Attr::layout("blocked", {{"order", Attr::intArray(order_)},
                                      {"spt", Attr::intArray(spt_)},
                                      {"tpw", Attr::intArray(tpw_)},
                                      {"wpc", Attr::intArray(wpc_)}});
    case Kind::Slice:
      return Attr::layout("slice", {{"dim", Attr::integer(sliceDim_)}, {"parent", parent_->toAttr()}});
    case Kind::Shared:
      return Attr::layout("shared", {{"max_phase", Attr::integer(maxPhase_)},
                                     {"order", Attr::intArray(order_)},
                                     {"per_phase", Attr::integer(perPhase_)},
                                     {"vec", Attr::integer(vec_)}});
  }
  throw Error("unknown layout kind");
}

Layout Layout::fromAttr(const Attr& a) {
  if (!a.isLayout()) throw Error("expected a layout attribute, got " + a.str());
  const std::string& name = a.getString();
  if (name == "blocked") {
    checkKeys(a, {"order", "spt", "tpw", "wpc"});
    return blocked(intArrayParam(a, "spt"), intArrayParam(a, "tpw"), intArrayParam(a, "wpc"),
                   intArrayParam(a, "order"));
  }
  if (name == "slice") {
    checkKeys(a, {"dim", "parent"});
    return slice(static_cast<int>(intParam(a, "dim")), fromAttr(param(a, "parent")));
  }
  if (name == "shared") {
    checkKeys(a, {"max_phase", "order", "per_phase", "vec"});
    return shared(intParam(a, "vec"), intParam(a, "per_phase"), intParam(a, "max_phase"), intArrayParam(a, "order"));
  }
  throw Error("unknown layout '#" + name + "' (expected #blocked, #slice or #shared)");
}

std::optional<Layout> Layout::ofType(Type t) {
  if (!t || !t.isTile() || !t.encoding()) return std::nullopt;
  return fromAttr(*t.encoding());
}

Type Layout::apply(Type tile) const {
  if (!tile || !tile.isTile()) throw Error("a layout can only be applied to a tile type");
  if (tile.rank() != rank())
    throw Error("layout " + str() + " has rank " + std::to_string(rank()) + " but the tile " + tile.str() +
                " has rank " + std::to_string(tile.rank()));
  return tile.withEncoding(std::make_shared<const Attr>(toAttr()));
}

int Layout::rank() const {
  switch (kind_) {
    case Kind::Blocked: return static_cast<int>(spt_.size());
    case Kind::Slice: return parent_->rank() - 1;
    case Kind::Shared: return static_cast<int>(order_.size());
  }
  return 0;
}

bool Layout::operator==(const Layout& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::Blocked: return spt_ == o.spt_ && tpw_ == o.tpw_ && wpc_ == o.wpc_ && order_ == o.order_;
    case Kind::Slice: return sliceDim_ == o.sliceDim_ && *parent_ == *o.parent_;
    case Kind::Shared:
      return vec_ == o.vec_ && perPhase_ == o.perPhase_ && maxPhase_ == o.maxPhase_ && order_ == o.order_;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------- distributed

namespace {

void requireDistributed(const Layout& l, const char* what) {
  if (!l.isDistributed()) throw Error(std::string(what) + " is only defined for distributed layouts, not " + l.str());
}

void requireShapeRank(const Layout& l, const std::vector<int64_t>& shape) {
  if (static_cast<int>(shape.size()) != l.rank())
    throw Error("layout " + l.str() + " has rank " + std::to_string(l.rank()) + " but the shape " + joined(shape) +
                " has rank " + std::to_string(shape.size()));
  for (int64_t s : shape)
    if (s < 1) throw Error("layout query on a shape with a non-positive dimension: " + joined(shape));
}

// Per-dimension repetitions of the CTA tile needed to cover `shape` (1 when the CTA tile covers it already).
std::vector<int64_t> blockedReps(const Layout& l, const std::vector<int64_t>& shape) {
  std::vector<int64_t> reps(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t ctaTile = l.sizePerThread()[d] * l.threadsPerWarp()[d] * l.warpsPerCTA()[d];
    reps[d] = std::max<int64_t>(1, shape[d] / ctaTile);
  }
  return reps;
}

// A register of a blocked layout split into per-dimension (within-spt index, repetition index). The register
// index varies fastest along `order`, and within a dimension the spt index varies faster than the repetition.
struct BlockedRegister {
  std::vector<int64_t> sptIndex, repIndex;
};

BlockedRegister splitBlockedRegister(const Layout& l, const std::vector<int64_t>& reps, int64_t reg) {
  BlockedRegister r{std::vector<int64_t>(reps.size()), std::vector<int64_t>(reps.size())};
  for (int64_t d : l.order()) {
    r.sptIndex[d] = reg % l.sizePerThread()[d];
    reg /= l.sizePerThread()[d];
    r.repIndex[d] = reg % reps[d];
    reg /= reps[d];
  }
  return r;
}

// The element coordinate before wrapping modulo the shape; it exceeds the shape exactly where the CTA tile is
// larger than the tile and this thread holds a replica.
std::vector<int64_t> blockedUnwrappedCoords(const Layout& l, const std::vector<int64_t>& shape, int64_t warp,
                                            int64_t lane, int64_t reg) {
  std::vector<int64_t> reps = blockedReps(l, shape);
  BlockedRegister r = splitBlockedRegister(l, reps, reg);
  std::vector<int64_t> laneIdx = delinearize(lane, l.threadsPerWarp(), l.order());
  std::vector<int64_t> warpIdx = delinearize(warp, l.warpsPerCTA(), l.order());
  std::vector<int64_t> c(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t spt = l.sizePerThread()[d], tpw = l.threadsPerWarp()[d], wpc = l.warpsPerCTA()[d];
    c[d] = r.repIndex[d] * spt * tpw * wpc + spt * (tpw * warpIdx[d] + laneIdx[d]) + r.sptIndex[d];
  }
  return c;
}

// For a slice layout over `shape`: the parent registers kept (duplicates dropped, first occurrence kept). Every
// coordinate is (thread offset + register offset) mod shape per dimension, so which registers duplicate each other
// does not depend on the thread; thread (0, 0) decides for all.
std::vector<int64_t> sliceKeptParentRegisters(const Layout& l, const std::vector<int64_t>& shape) {
  std::vector<int64_t> parentShape = parentShapeOf(shape, l.sliceDim());
  int64_t parentRegs = l.parent().registersPerThread(parentShape);
  std::vector<int64_t> kept;
  std::vector<std::vector<int64_t>> seen;
  for (int64_t r = 0; r < parentRegs; ++r) {
    std::vector<int64_t> c = l.parent().coords(parentShape, 0, 0, r);
    if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
    seen.push_back(std::move(c));
    kept.push_back(r);
  }
  return kept;
}

void requireThread(const Layout& l, int64_t warp, int64_t lane) {
  if (warp < 0 || warp >= l.numWarps() || lane < 0 || lane >= l.warpSize())
    throw Error("thread (warp " + std::to_string(warp) + ", lane " + std::to_string(lane) + ") is outside layout " +
                l.str());
}

}  // namespace

int64_t Layout::warpSize() const {
  requireDistributed(*this, "warpSize");
  return kind_ == Kind::Slice ? parent_->warpSize() : product(tpw_);
}

int64_t Layout::numWarps() const {
  requireDistributed(*this, "numWarps");
  return kind_ == Kind::Slice ? parent_->numWarps() : product(wpc_);
}

int64_t Layout::registersPerThread(const std::vector<int64_t>& shape) const {
  requireDistributed(*this, "registersPerThread");
  requireShapeRank(*this, shape);
  if (kind_ == Kind::Slice) return static_cast<int64_t>(sliceKeptParentRegisters(*this, shape).size());
  std::vector<int64_t> reps = blockedReps(*this, shape);
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) n *= spt_[d] * reps[d];
  return n;
}

std::vector<int64_t> Layout::coords(const std::vector<int64_t>& shape, int64_t warp, int64_t lane, int64_t reg) const {
  requireDistributed(*this, "coords");
  requireShapeRank(*this, shape);
  requireThread(*this, warp, lane);
  int64_t regs = registersPerThread(shape);
  if (reg < 0 || reg >= regs)
    throw Error("register " + std::to_string(reg) + " is outside the " + std::to_string(regs) +
                " registers of layout " + str() + " over " + joined(shape));
  if (kind_ == Kind::Slice) {
    std::vector<int64_t> kept = sliceKeptParentRegisters(*this, shape);
    std::vector<int64_t> c = parent_->coords(parentShapeOf(shape, sliceDim_), warp, lane, kept[reg]);
    c.erase(c.begin() + sliceDim_);
    return c;
  }
  std::vector<int64_t> c = blockedUnwrappedCoords(*this, shape, warp, lane, reg);
  for (size_t d = 0; d < shape.size(); ++d) c[d] %= shape[d];
  return c;
}

// The owner of an element is the lowest thread (warp-major, then lane) holding it, and within that thread the
// lowest register holding it. Because lane and warp coordinates are independent digits per dimension, that is
// the (thread, register) whose unwrapped coordinate lies inside the shape in every dimension: a closed form the
// lowering can also emit as a predicate.
bool Layout::isOwner(const std::vector<int64_t>& shape, int64_t warp, int64_t lane, int64_t reg) const {
  requireDistributed(*this, "isOwner");
  requireShapeRank(*this, shape);
  requireThread(*this, warp, lane);
  int64_t regs = registersPerThread(shape);
  if (reg < 0 || reg >= regs)
    throw Error("register " + std::to_string(reg) + " is outside the " + std::to_string(regs) +
                " registers of layout " + str() + " over " + joined(shape));
  if (kind_ == Kind::Slice) {
    // Dropped duplicates were never the first occurrence, so the kept register is the parent's owning one.
    std::vector<int64_t> kept = sliceKeptParentRegisters(*this, shape);
    return parent_->isOwner(parentShapeOf(shape, sliceDim_), warp, lane, kept[reg]);
  }
  std::vector<int64_t> c = blockedUnwrappedCoords(*this, shape, warp, lane, reg);
  for (size_t d = 0; d < shape.size(); ++d)
    if (c[d] >= shape[d]) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------- shared

int64_t Layout::sharedOffset(const std::vector<int64_t>& shape, const std::vector<int64_t>& coords) const {
  if (kind_ != Kind::Shared) throw Error("sharedOffset is only defined for shared layouts, not " + str());
  requireShapeRank(*this, shape);
  if (coords.size() != shape.size())
    throw Error("sharedOffset: coordinates " + joined(coords) + " do not match the shape " + joined(shape));
  for (size_t d = 0; d < shape.size(); ++d)
    if (coords[d] < 0 || coords[d] >= shape[d])
      throw Error("sharedOffset: coordinates " + joined(coords) + " are outside the shape " + joined(shape));
  int64_t inner = order_[0];
  int64_t rowLength = shape[inner];
  // Row: the linear index over all but the fastest dimension, in `order`.
  int64_t row = 0, stride = 1;
  for (size_t i = 1; i < order_.size(); ++i) {
    row += coords[order_[i]] * stride;
    stride *= shape[order_[i]];
  }
  int64_t col = coords[inner];
  // The phase is reduced modulo the number of vectors in a row so the xor stays inside the row (both are
  // powers of two), keeping the mapping a permutation for every shape.
  int64_t vectorsPerRow = std::max<int64_t>(1, rowLength / vec_);
  int64_t phase = (row / perPhase_) % std::min(maxPhase_, vectorsPerRow);
  int64_t vecIndex = (col / vec_) ^ phase;
  return row * rowLength + vecIndex * vec_ + col % vec_;
}

// ---------------------------------------------------------------------------------------------- defaults

Layout defaultBlockedLayout(const std::vector<int64_t>& shape, int64_t numWarps, int64_t warpSize,
                            int64_t elemsPerThread, std::vector<int64_t> order) {
  int rank = static_cast<int>(shape.size());
  if (rank < 1) throw Error("defaultBlockedLayout: a layout needs a tile of rank >= 1");
  if (!isPowerOfTwo(numWarps) || !isPowerOfTwo(warpSize) || !isPowerOfTwo(elemsPerThread))
    throw Error("defaultBlockedLayout: num_warps, warp size and elements per thread must be powers of two");
  for (int64_t s : shape)
    if (!isPowerOfTwo(s)) throw Error("defaultBlockedLayout: shape " + joined(shape) + " is not a tile shape");
  if (order.empty())
    for (int d = rank - 1; d >= 0; --d) order.push_back(d);  // row-major: the last dimension is fastest
  checkOrder(order, rank, "default blocked");

  std::vector<int64_t> spt(rank, 1), tpw(rank, 1), wpc(rank, 1);
  spt[order[0]] = std::min(elemsPerThread, shape[order[0]]);
  // Lanes then warps go to the fastest dimensions first, each taking what the shape still has room for; what is
  // left over (a tile smaller than the CTA) replicates along the fastest dimension.
  int64_t lanesLeft = warpSize, warpsLeft = numWarps;
  for (int64_t d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / spt[d]);
    tpw[d] = std::min(lanesLeft, room);
    lanesLeft /= tpw[d];
  }
  tpw[order[0]] *= lanesLeft;
  for (int64_t d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / (spt[d] * tpw[d]));
    wpc[d] = std::min(warpsLeft, room);
    warpsLeft /= wpc[d];
  }
  wpc[order[0]] *= warpsLeft;
  return Layout::blocked(spt, tpw, wpc, order);
}

}  // namespace tessera::ir
