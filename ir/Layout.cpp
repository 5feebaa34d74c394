#include "ir/Layout.h"

#include <algorithm>
#include <numeric>
#include <optional>

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

// A linear layout's bases as an attribute, e.g. [[0, 1], [2, 0]].
Attr basesAttr(const std::vector<LinearLayout::Basis>& bases) {
  std::vector<Attr> items;
  for (const LinearLayout::Basis& b : bases) items.push_back(Attr::intArray(b));
  return Attr::array(std::move(items));
}

std::vector<LinearLayout::Basis> basesParam(const Attr& a, const char* key) {
  const Attr& v = param(a, key);
  // Built only on failure: printing the layout was a percent of a matmul's compile when done on every call.
  auto bad = [&] {
    return Error("layout " + a.str() + ": '" + key + "' must be a list of integer lists (one basis per input bit)");
  };
  if (!v.isArray()) throw bad();
  std::vector<LinearLayout::Basis> bases;
  for (const Attr& b : v.getArray()) {
    if (!b.isArray()) throw bad();
    for (const Attr& x : b.getArray())
      if (!x.isInt()) throw bad();
    bases.push_back(b.getIntArray());
  }
  return bases;
}

// The linear layout a #linear / #linear_shared attribute spells: its input dimensions' bases, onto dim0.. with
// the sizes the bases reach.
LinearLayout linearFromAttr(const Attr& a, std::initializer_list<const char*> inDims) {
  std::vector<LinearLayout::InDim> ins;
  std::optional<size_t> rank;
  for (const char* name : inDims) {
    ins.push_back({name, basesParam(a, name)});
    if (!rank && !ins.back().bases.empty()) rank = ins.back().bases[0].size();
  }
  if (!rank) throw Error("layout " + a.str() + " has no basis to tell its rank");
  try {
    return LinearLayout::withInferredSizes(std::move(ins), tensorDimNames(static_cast<int>(*rank)));
  } catch (const Error& e) {
    throw Error("layout " + a.str() + ": " + e.message());
  }
}

// Checks that `l` has the input dimensions `ins` and the output dimensions dim0..dim{r-1} of a tile.
void checkLinearDims(const LinearLayout& l, const std::vector<std::string>& ins, const char* what) {
  std::vector<std::string> inNames, outNames;
  for (const LinearLayout::InDim& d : l.inDims()) inNames.push_back(d.name);
  for (const LinearLayout::OutDim& d : l.outDims()) outNames.push_back(d.name);
  int rank = static_cast<int>(outNames.size());
  if (inNames != ins || rank < 1 || rank > kMaxTileRank || outNames != tensorDimNames(rank)) {
    std::string expected;
    for (const std::string& n : ins) expected += (expected.empty() ? "" : ", ") + n;
    throw Error(std::string(what) + " layout: expected input dimensions " + expected + " onto dim0..dim{r-1} with r from 1 to " +
                std::to_string(kMaxTileRank) + ", got " + l.str());
  }
}

std::vector<LinearLayout::OutDim> tensorOutDims(const std::vector<int64_t>& shape) {
  std::vector<LinearLayout::OutDim> outs;
  for (size_t d = 0; d < shape.size(); ++d) outs.push_back({tensorDimName(static_cast<int>(d)), shape[d]});
  return outs;
}

}  // namespace

std::string tensorDimName(int d) { return "dim" + std::to_string(d); }

std::vector<std::string> tensorDimNames(int rank) {
  std::vector<std::string> names;
  for (int d = 0; d < rank; ++d) names.push_back(tensorDimName(d));
  return names;
}

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

Layout Layout::linear(LinearLayout layout) {
  checkLinearDims(layout, {kRegisterDim, kLaneDim, kWarpDim}, "linear");
  if (!layout.isSurjective())
    throw Error("linear layout: " + layout.str() + " does not hold every element of its tile");
  Layout l;
  l.kind_ = Kind::Linear;
  l.linear_ = std::make_shared<const LinearLayout>(std::move(layout));
  return l;
}

Layout Layout::linearShared(LinearLayout layout) {
  checkLinearDims(layout, {kOffsetDim}, "linear_shared");
  if (!layout.isInvertible())
    throw Error("linear_shared layout: " + layout.str() + " does not give every element its own offset");
  Layout l;
  l.kind_ = Kind::LinearShared;
  l.linear_ = std::make_shared<const LinearLayout>(std::move(layout));
  return l;
}

const LinearLayout& Layout::linearLayout() const {
  if (!linear_) throw Error("linearLayout() is only defined for #linear and #linear_shared layouts, not " + str());
  return *linear_;
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
    case Kind::Linear:
      return Attr::layout("linear", {{kLaneDim, basesAttr(linear_->inDim(kLaneDim).bases)},
                                     {kRegisterDim, basesAttr(linear_->inDim(kRegisterDim).bases)},
                                     {kWarpDim, basesAttr(linear_->inDim(kWarpDim).bases)}});
    case Kind::LinearShared:
      return Attr::layout("linear_shared", {{kOffsetDim, basesAttr(linear_->inDim(kOffsetDim).bases)}});
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
  if (name == "linear") {
    checkKeys(a, {kLaneDim, kRegisterDim, kWarpDim});
    return linear(linearFromAttr(a, {kRegisterDim, kLaneDim, kWarpDim}));
  }
  if (name == "linear_shared") {
    checkKeys(a, {kOffsetDim});
    return linearShared(linearFromAttr(a, {kOffsetDim}));
  }
  throw Error("unknown layout '#" + name + "' (expected #blocked, #slice, #shared, #linear or #linear_shared)");
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
  requireShape(tile.shape());
  return tile.withEncoding(std::make_shared<const Attr>(toAttr()));
}

int Layout::rank() const {
  switch (kind_) {
    case Kind::Blocked: return static_cast<int>(spt_.size());
    case Kind::Slice: return parent_->rank() - 1;
    case Kind::Shared: return static_cast<int>(order_.size());
    case Kind::Linear: case Kind::LinearShared: return static_cast<int>(linear_->outDims().size());
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
    case Kind::Linear: case Kind::LinearShared: return *linear_ == *o.linear_;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------- distributed

namespace {

void requireDistributed(const Layout& l, const char* what) {
  if (!l.isDistributed()) throw Error(std::string(what) + " is only defined for distributed layouts, not " + l.str());
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

// Register r of a blocked layout: the bits of each dimension's within-spt index, then of its repetition index, in
// `order`; lanes and warps: the bits of each dimension's index, in `order`. Coordinates wrap modulo the shape,
// which for powers of two drops the high bits: a basis that wraps to 0 replicates.
LinearLayout blockedToLinear(const Layout& l, const std::vector<int64_t>& shape) {
  const std::vector<int64_t> reps = blockedReps(l, shape);
  auto along = [&](int64_t d, int64_t v) {
    LinearLayout::Basis b(shape.size(), 0);
    b[d] = v & (shape[d] - 1);
    return b;
  };
  LinearLayout::InDim reg{kRegisterDim, {}}, lane{kLaneDim, {}}, warp{kWarpDim, {}};
  for (int64_t d : l.order()) {
    const int64_t spt = l.sizePerThread()[d], ctaTile = spt * l.threadsPerWarp()[d] * l.warpsPerCTA()[d];
    for (int64_t v = 1; v < spt; v *= 2) reg.bases.push_back(along(d, v));
    for (int64_t v = 1; v < reps[d]; v *= 2) reg.bases.push_back(along(d, v * ctaTile));
  }
  for (int64_t d : l.order())
    for (int64_t v = 1; v < l.threadsPerWarp()[d]; v *= 2) lane.bases.push_back(along(d, v * l.sizePerThread()[d]));
  for (int64_t d : l.order())
    for (int64_t v = 1; v < l.warpsPerCTA()[d]; v *= 2)
      warp.bases.push_back(along(d, v * l.sizePerThread()[d] * l.threadsPerWarp()[d]));
  return LinearLayout({reg, lane, warp}, tensorOutDims(shape));
}

// The one shape a layout is defined over, if it has one: that of a #linear layout, or of a slice of one.
std::optional<std::vector<int64_t>> fixedShapeOf(const Layout& l) {
  switch (l.kind()) {
    case Layout::Kind::Linear: case Layout::Kind::LinearShared: return l.linearLayout().outShape();
    case Layout::Kind::Slice: {
      std::optional<std::vector<int64_t>> parent = fixedShapeOf(l.parent());
      if (parent) parent->erase(parent->begin() + l.sliceDim());
      return parent;
    }
    default: return std::nullopt;
  }
}

// The parent over `shape` with a size-1 dimension at the sliced one, which leaves the parent's coordinate there 0:
// drop that output, then the registers that only moved along it repeat earlier ones, and the slice holds each
// element once (the first of the repeats, so register order is kept). The size put back does not change the result
// (every basis along that dimension goes), so a parent defined over one shape is evaluated over that one.
LinearLayout sliceToLinear(const Layout& l, const std::vector<int64_t>& shape) {
  LinearLayout parent =
      l.parent().toLinear(fixedShapeOf(l.parent()).value_or(parentShapeOf(shape, l.sliceDim())));
  LinearLayout kept = parent.removeOutDim(tensorDimName(l.sliceDim())).withoutRedundantBases(kRegisterDim);
  return LinearLayout(kept.inDims(), tensorOutDims(shape));
}

// Offset bits: first the position within a row (log2 of the row length), then the row index, whose bits move
// along the other dimensions in `order` and XOR the row's phase into the vector index of the position.
LinearLayout sharedToLinear(const Layout& l, const std::vector<int64_t>& shape) {
  const std::vector<int64_t>& order = l.order();
  const int64_t rowLength = shape[order[0]];
  const int64_t phases = std::min(l.maxPhase(), std::max<int64_t>(1, rowLength / l.vec()));
  LinearLayout::InDim offset{kOffsetDim, {}};
  for (int64_t v = 1; v < rowLength; v *= 2) {
    offset.bases.emplace_back(shape.size(), 0);
    offset.bases.back()[order[0]] = v;
  }
  int64_t row = 1;
  for (size_t i = 1; i < order.size(); ++i)
    for (int64_t v = 1; v < shape[order[i]]; v *= 2, row *= 2) {
      offset.bases.emplace_back(shape.size(), 0);
      offset.bases.back()[order[i]] = v;
      offset.bases.back()[order[0]] = ((row / l.perPhase()) % phases) * l.vec();
    }
  return LinearLayout({offset}, tensorOutDims(shape));
}

void requireThread(const Layout& l, int64_t warp, int64_t lane) {
  if (warp < 0 || warp >= l.numWarps() || lane < 0 || lane >= l.warpSize())
    throw Error("thread (warp " + std::to_string(warp) + ", lane " + std::to_string(lane) + ") is outside layout " +
                l.str());
}

}  // namespace

void Layout::requireShape(const std::vector<int64_t>& shape) const {
  if (static_cast<int>(shape.size()) != rank())
    throw Error("layout " + str() + " has rank " + std::to_string(rank()) + " but the shape " + joined(shape) +
                " has rank " + std::to_string(shape.size()));
  for (int64_t s : shape)
    if (s < 1) throw Error("layout query on a shape with a non-positive dimension: " + joined(shape));
  if (std::optional<std::vector<int64_t>> fixed = fixedShapeOf(*this); fixed && *fixed != shape)
    throw Error("layout " + str() + " is over the shape " + joined(*fixed) + ", not " + joined(shape));
}

LinearLayout Layout::toLinear(const std::vector<int64_t>& shape) const {
  requireShape(shape);
  for (int64_t s : shape)
    if (!isPowerOfTwo(s)) throw Error("layout " + str() + ": the shape " + joined(shape) + " is not a tile shape");
  switch (kind_) {
    case Kind::Blocked: return blockedToLinear(*this, shape);
    case Kind::Slice: return sliceToLinear(*this, shape);
    case Kind::Shared: return sharedToLinear(*this, shape);
    case Kind::Linear: case Kind::LinearShared: return *linear_;
  }
  throw Error("unknown layout kind");
}

int64_t Layout::warpSize() const {
  requireDistributed(*this, "warpSize");
  if (kind_ == Kind::Linear) return linear_->inDimSize(kLaneDim);
  return kind_ == Kind::Slice ? parent_->warpSize() : product(tpw_);
}

int64_t Layout::numWarps() const {
  requireDistributed(*this, "numWarps");
  if (kind_ == Kind::Linear) return linear_->inDimSize(kWarpDim);
  return kind_ == Kind::Slice ? parent_->numWarps() : product(wpc_);
}

int64_t Layout::registersPerThread(const std::vector<int64_t>& shape) const {
  requireDistributed(*this, "registersPerThread");
  requireShape(shape);
  if (kind_ != Kind::Blocked) return toLinear(shape).inDimSize(kRegisterDim);
  std::vector<int64_t> reps = blockedReps(*this, shape);
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) n *= spt_[d] * reps[d];
  return n;
}

std::vector<int64_t> Layout::coords(const std::vector<int64_t>& shape, int64_t warp, int64_t lane, int64_t reg) const {
  requireDistributed(*this, "coords");
  requireShape(shape);
  requireThread(*this, warp, lane);
  int64_t regs = registersPerThread(shape);
  if (reg < 0 || reg >= regs)
    throw Error("register " + std::to_string(reg) + " is outside the " + std::to_string(regs) +
                " registers of layout " + str() + " over " + joined(shape));
  if (kind_ != Kind::Blocked) return toLinear(shape).apply({reg, lane, warp});
  std::vector<int64_t> c = blockedUnwrappedCoords(*this, shape, warp, lane, reg);
  for (size_t d = 0; d < shape.size(); ++d) c[d] %= shape[d];
  return c;
}

// The owner of an element is the lowest thread (warp-major, then lane) holding it, and within that thread the
// lowest register holding it. For a blocked layout, because lane and warp coordinates are independent digits per
// dimension, that is the (thread, register) whose unwrapped coordinate lies inside the shape in every dimension.
// In general it is the holder with no free variable of the linear form set (LinearLayout::freeVariableMasks).
bool Layout::isOwner(const std::vector<int64_t>& shape, int64_t warp, int64_t lane, int64_t reg) const {
  requireDistributed(*this, "isOwner");
  requireShape(shape);
  requireThread(*this, warp, lane);
  int64_t regs = registersPerThread(shape);
  if (reg < 0 || reg >= regs)
    throw Error("register " + std::to_string(reg) + " is outside the " + std::to_string(regs) +
                " registers of layout " + str() + " over " + joined(shape));
  if (kind_ != Kind::Blocked) {
    std::vector<uint64_t> free = toLinear(shape).freeVariableMasks();  // register, lane, warp
    return (static_cast<uint64_t>(reg) & free[0]) == 0 && (static_cast<uint64_t>(lane) & free[1]) == 0 &&
           (static_cast<uint64_t>(warp) & free[2]) == 0;
  }
  std::vector<int64_t> c = blockedUnwrappedCoords(*this, shape, warp, lane, reg);
  for (size_t d = 0; d < shape.size(); ++d)
    if (c[d] >= shape[d]) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------- shared

int64_t Layout::sharedOffset(const std::vector<int64_t>& shape, const std::vector<int64_t>& coords) const {
  if (kind_ != Kind::Shared && kind_ != Kind::LinearShared)
    throw Error("sharedOffset is only defined for shared layouts, not " + str());
  requireShape(shape);
  if (coords.size() != shape.size())
    throw Error("sharedOffset: coordinates " + joined(coords) + " do not match the shape " + joined(shape));
  for (size_t d = 0; d < shape.size(); ++d)
    if (coords[d] < 0 || coords[d] >= shape[d])
      throw Error("sharedOffset: coordinates " + joined(coords) + " are outside the shape " + joined(shape));
  if (kind_ == Kind::LinearShared) return linear_->invert().apply(coords)[0];
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
