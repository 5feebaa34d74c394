#include "ir/LinearLayout.h"

#include <algorithm>
#include <array>
#include <bit>

#include "ir/Error.h"

namespace tessera::ir {

namespace {

constexpr int kMaxBits = 63;

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
int log2Of(int64_t powerOfTwo) { return std::countr_zero(static_cast<uint64_t>(powerOfTwo)); }

std::string listText(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The output coordinates of a layout packed into one word: output dimensions row-major (the last one in the lowest
// bits), so the packed value of a coordinate is its row-major flat index.
class Packing {
 public:
  explicit Packing(const std::vector<LinearLayout::OutDim>& outs) : shift_(outs.size()), bits_(outs.size()) {
    int at = 0;
    for (size_t k = outs.size(); k-- > 0;) {
      shift_[k] = at;
      bits_[k] = log2Of(outs[k].size);
      at += bits_[k];
    }
  }
  uint64_t pack(const LinearLayout::Basis& b) const {
    uint64_t v = 0;
    for (size_t k = 0; k < b.size(); ++k) v |= static_cast<uint64_t>(b[k]) << shift_[k];
    return v;
  }
  LinearLayout::Basis unpack(uint64_t v) const {
    LinearLayout::Basis b(shift_.size());
    for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<int64_t>((v >> shift_[k]) & ((uint64_t(1) << bits_[k]) - 1));
    return b;
  }
  uint64_t unit(size_t dim, int bit) const { return uint64_t(1) << (shift_[dim] + bit); }

 private:
  std::vector<int> shift_, bits_;
};

// Input bits numbered across input dimensions, the first dimension in the lowest bits.
std::vector<int64_t> splitInputBits(uint64_t bits, const std::vector<LinearLayout::InDim>& ins) {
  std::vector<int64_t> values(ins.size());
  int at = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    int n = static_cast<int>(ins[i].bases.size());
    values[i] = static_cast<int64_t>((bits >> at) & ((uint64_t(1) << n) - 1));
    at += n;
  }
  return values;
}

// Gaussian elimination over F2: a basis of a span of packed vectors, one per leading (highest) bit, each
// remembering which inputs (a mask over input bits) it is the image of.
class Echelon {
 public:
  // Reduces `v` by the basis, XOR-ing the inputs used into `inputs`; returns what is left (0 iff `v` is in the span).
  uint64_t reduce(uint64_t v, uint64_t& inputs) const {
    uint64_t rest = 0;
    while (v) {
      int lead = 63 - std::countl_zero(v);
      uint64_t bit = uint64_t(1) << lead;
      if (has_ & bit) {
        v ^= vec_[lead];
        inputs ^= from_[lead];
      } else {
        rest |= bit;
        v ^= bit;
      }
    }
    return rest;
  }
  // Adds `v`, the image of `inputs`; false (and nothing added) when `v` is already in the span.
  bool insert(uint64_t v, uint64_t inputs) {
    uint64_t rest = reduce(v, inputs);
    if (!rest) return false;
    int lead = 63 - std::countl_zero(rest);
    has_ |= uint64_t(1) << lead;
    vec_[lead] = rest;
    from_[lead] = inputs;
    return true;
  }
  int rank() const { return std::popcount(has_); }

 private:
  uint64_t has_ = 0;
  std::array<uint64_t, 64> vec_{}, from_{};
};

// Every input bit's packed image, in input order (first dimension, lowest bit first).
std::vector<uint64_t> packedColumns(const std::vector<LinearLayout::InDim>& ins, const Packing& p) {
  std::vector<uint64_t> cols;
  for (const LinearLayout::InDim& d : ins)
    for (const LinearLayout::Basis& b : d.bases) cols.push_back(p.pack(b));
  return cols;
}

int rankOf(const LinearLayout& l) {
  Packing p(l.outDims());
  Echelon e;
  for (uint64_t c : packedColumns(l.inDims(), p)) e.insert(c, 0);
  return e.rank();
}

// `ins` with every basis replaced by f(basis).
template <class F>
std::vector<LinearLayout::InDim> mapBases(const std::vector<LinearLayout::InDim>& ins, F f) {
  std::vector<LinearLayout::InDim> out;
  for (const LinearLayout::InDim& d : ins) {
    LinearLayout::InDim r{d.name, {}};
    for (const LinearLayout::Basis& b : d.bases) r.bases.push_back(f(b));
    out.push_back(std::move(r));
  }
  return out;
}

template <class Dim>
int indexOf(const std::vector<Dim>& dims, const std::string& name) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].name == name) return static_cast<int>(i);
  return -1;
}

template <class Dim>
std::string namesOf(const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i].name;
  return s + "]";
}

}  // namespace

// ------------------------------------------------------------------------------------------------ construction

LinearLayout::LinearLayout(std::vector<InDim> ins, std::vector<OutDim> outs) : ins_(std::move(ins)), outs_(std::move(outs)) {
  int outBits = 0, inBits = 0;
  for (size_t k = 0; k < outs_.size(); ++k) {
    if (!isPowerOfTwo(outs_[k].size))
      throw Error("linear layout: output dimension '" + outs_[k].name + "' has size " + std::to_string(outs_[k].size) +
                  ", not a power of two");
    if (indexOf(outs_, outs_[k].name) != static_cast<int>(k))
      throw Error("linear layout: output dimension '" + outs_[k].name + "' appears twice");
    outBits += log2Of(outs_[k].size);
  }
  for (size_t i = 0; i < ins_.size(); ++i) {
    const InDim& d = ins_[i];
    if (indexOf(ins_, d.name) != static_cast<int>(i))
      throw Error("linear layout: input dimension '" + d.name + "' appears twice");
    inBits += static_cast<int>(d.bases.size());
    for (const Basis& b : d.bases) {
      if (b.size() != outs_.size())
        throw Error("linear layout: basis " + listText(b) + " of '" + d.name + "' has " + std::to_string(b.size()) +
                    " coordinates but there are " + std::to_string(outs_.size()) + " output dimensions " +
                    namesOf(outs_));
      for (size_t k = 0; k < b.size(); ++k)
        if (b[k] < 0 || b[k] >= outs_[k].size)
          throw Error("linear layout: basis " + listText(b) + " of '" + d.name + "' is outside output dimension '" +
                      outs_[k].name + "' of size " + std::to_string(outs_[k].size));
    }
  }
  if (inBits > kMaxBits || outBits > kMaxBits)
    throw Error("linear layout: " + std::to_string(inBits) + " input bits and " + std::to_string(outBits) +
                " output bits exceed the limit of " + std::to_string(kMaxBits));
}

LinearLayout LinearLayout::withInferredSizes(std::vector<InDim> ins, const std::vector<std::string>& outNames) {
  std::vector<OutDim> outs;
  for (const std::string& n : outNames) outs.push_back({n, 1});
  for (const InDim& d : ins)
    for (const Basis& b : d.bases) {
      if (b.size() != outs.size())
        throw Error("linear layout: basis " + listText(b) + " of '" + d.name + "' has " + std::to_string(b.size()) +
                    " coordinates but there are " + std::to_string(outs.size()) + " output dimensions");
      for (size_t k = 0; k < b.size(); ++k) {
        if (b[k] < 0) throw Error("linear layout: basis " + listText(b) + " of '" + d.name + "' is negative");
        if (std::bit_width(static_cast<uint64_t>(b[k])) > kMaxBits)
          throw Error("linear layout: basis " + listText(b) + " of '" + d.name + "' is too large");
        outs[k].size = std::max<int64_t>(outs[k].size, int64_t(1) << std::bit_width(static_cast<uint64_t>(b[k])));
      }
    }
  LinearLayout l(std::move(ins), std::move(outs));
  if (!l.isSurjective())
    throw Error("linear layout " + l.str() +
                " is not surjective: its bases do not reach every coordinate below the output sizes they imply");
  return l;
}

LinearLayout LinearLayout::identity1D(int64_t size, const std::string& in, const std::string& out) {
  if (!isPowerOfTwo(size)) throw Error("linear layout: size " + std::to_string(size) + " is not a power of two");
  InDim d{in, {}};
  for (int64_t v = 1; v < size; v *= 2) d.bases.push_back({v});
  return LinearLayout({d}, {{out, size}});
}

LinearLayout LinearLayout::zeros1D(int64_t size, const std::string& in, const std::string& out) {
  if (!isPowerOfTwo(size)) throw Error("linear layout: size " + std::to_string(size) + " is not a power of two");
  return LinearLayout({{in, std::vector<Basis>(log2Of(size), Basis{0})}}, {{out, 1}});
}

// ------------------------------------------------------------------------------------------------ dimensions

int LinearLayout::inDimIndex(const std::string& name) const { return indexOf(ins_, name); }
int LinearLayout::outDimIndex(const std::string& name) const { return indexOf(outs_, name); }

const LinearLayout::InDim& LinearLayout::inDim(const std::string& name) const {
  int i = inDimIndex(name);
  if (i < 0) throw Error("linear layout has no input dimension '" + name + "' (it has " + namesOf(ins_) + ")");
  return ins_[i];
}

int64_t LinearLayout::outDimSize(const std::string& name) const {
  int k = outDimIndex(name);
  if (k < 0) throw Error("linear layout has no output dimension '" + name + "' (it has " + namesOf(outs_) + ")");
  return outs_[k].size;
}

int LinearLayout::totalInBits() const {
  int n = 0;
  for (const InDim& d : ins_) n += static_cast<int>(d.bases.size());
  return n;
}

int LinearLayout::totalOutBits() const {
  int n = 0;
  for (const OutDim& d : outs_) n += log2Of(d.size);
  return n;
}

std::vector<int64_t> LinearLayout::outShape() const {
  std::vector<int64_t> s;
  for (const OutDim& d : outs_) s.push_back(d.size);
  return s;
}

// ------------------------------------------------------------------------------------------------ evaluation

std::vector<int64_t> LinearLayout::apply(const std::vector<int64_t>& inputs) const {
  if (inputs.size() != ins_.size())
    throw Error("linear layout: " + std::to_string(inputs.size()) + " inputs given for the input dimensions " +
                namesOf(ins_));
  std::vector<int64_t> out(outs_.size(), 0);
  for (size_t i = 0; i < ins_.size(); ++i) {
    const std::vector<Basis>& bases = ins_[i].bases;
    if (inputs[i] < 0 || (inputs[i] >> bases.size()) != 0)
      throw Error("linear layout: input " + std::to_string(inputs[i]) + " is outside '" + ins_[i].name + "' of size " +
                  std::to_string(int64_t(1) << bases.size()));
    for (uint64_t bits = static_cast<uint64_t>(inputs[i]); bits; bits &= bits - 1) {
      const Basis& b = bases[std::countr_zero(bits)];
      for (size_t k = 0; k < out.size(); ++k) out[k] ^= b[k];
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------------ algebra

LinearLayout LinearLayout::compose(const LinearLayout& outer) const {
  bool match = outer.ins_.size() == outs_.size();
  for (size_t k = 0; match && k < outs_.size(); ++k)
    match = outer.ins_[k].name == outs_[k].name && (int64_t(1) << outer.ins_[k].bases.size()) == outs_[k].size;
  if (!match)
    throw Error("linear layout: cannot compose " + str() + " with " + outer.str() +
                ": the outputs of the first must be the inputs of the second, in order and of the same sizes");
  return LinearLayout(mapBases(ins_, [&](const Basis& b) { return outer.apply(b); }), outer.outs_);
}

LinearLayout LinearLayout::invert() const {
  if (totalInBits() != totalOutBits() || !isInjective())
    throw Error("linear layout " + str() + " is not bijective, so it has no inverse");
  Packing p(outs_);
  Echelon e;
  std::vector<uint64_t> cols = packedColumns(ins_, p);
  for (size_t i = 0; i < cols.size(); ++i) e.insert(cols[i], uint64_t(1) << i);
  std::vector<InDim> ins;
  for (size_t k = 0; k < outs_.size(); ++k) {
    InDim d{outs_[k].name, {}};
    for (int bit = 0; (int64_t(1) << bit) < outs_[k].size; ++bit) {
      uint64_t inputs = 0;
      e.reduce(p.unit(k, bit), inputs);  // full rank: nothing is left over
      d.bases.push_back(splitInputBits(inputs, ins_));
    }
    ins.push_back(std::move(d));
  }
  std::vector<OutDim> outs;
  for (const InDim& d : ins_) outs.push_back({d.name, int64_t(1) << d.bases.size()});
  return LinearLayout(std::move(ins), std::move(outs));
}

LinearLayout LinearLayout::invertAndCompose(const LinearLayout& outer) const {
  std::vector<std::string> order;
  for (const OutDim& d : outs_) order.push_back(d.name);
  if (outer.outs_.size() != outs_.size())
    throw Error("linear layout: " + str() + " and " + outer.str() + " map to different output dimensions");
  LinearLayout o = outer.transposeOuts(order);
  if (o.outs_ != outs_)
    throw Error("linear layout: " + str() + " and " + outer.str() + " map to output dimensions of different sizes");
  Packing p(outs_);
  // The non-free inputs of `outer` form a basis of its image: expressing each image of this layout in them picks
  // the preimage with every free variable clear.
  Echelon e;
  std::vector<uint64_t> outerCols = packedColumns(o.ins_, p);
  for (size_t i = 0; i < outerCols.size(); ++i) e.insert(outerCols[i], uint64_t(1) << i);
  std::vector<InDim> ins;
  for (const InDim& d : ins_) {
    InDim r{d.name, {}};
    for (const Basis& b : d.bases) {
      uint64_t inputs = 0;
      if (e.reduce(p.pack(b), inputs) != 0)
        throw Error("linear layout: " + listText(b) + ", an image of " + str() + ", is no image of " + outer.str());
      r.bases.push_back(splitInputBits(inputs, o.ins_));
    }
    ins.push_back(std::move(r));
  }
  std::vector<OutDim> outs;
  for (const InDim& d : o.ins_) outs.push_back({d.name, int64_t(1) << d.bases.size()});
  return LinearLayout(std::move(ins), std::move(outs));
}

LinearLayout LinearLayout::operator*(const LinearLayout& other) const {
  std::vector<OutDim> outs = outs_;
  for (const OutDim& d : other.outs_) {
    int k = indexOf(outs, d.name);
    if (k < 0) outs.push_back(d);
    else outs[k].size *= d.size;
  }
  // Each factor's bases embedded into the merged outputs; `other`'s scaled above this layout's part.
  auto embed = [&](const LinearLayout& from, const Basis& b, bool scale) {
    Basis r(outs.size(), 0);
    for (size_t k = 0; k < from.outs_.size(); ++k) {
      int at = indexOf(outs, from.outs_[k].name);
      int own = indexOf(outs_, from.outs_[k].name);
      r[at] = b[k] * (scale && own >= 0 ? outs_[own].size : 1);
    }
    return r;
  };
  std::vector<InDim> ins;
  for (const InDim& d : ins_) {
    InDim r{d.name, {}};
    for (const Basis& b : d.bases) r.bases.push_back(embed(*this, b, false));
    ins.push_back(std::move(r));
  }
  for (const InDim& d : other.ins_) {
    int i = indexOf(ins, d.name);
    if (i < 0) {
      ins.push_back({d.name, {}});
      i = static_cast<int>(ins.size()) - 1;
    }
    for (const Basis& b : d.bases) ins[i].bases.push_back(embed(other, b, true));
  }
  return LinearLayout(std::move(ins), std::move(outs));
}

LinearLayout LinearLayout::transposeOuts(const std::vector<std::string>& order) const {
  std::vector<int> from;
  for (const std::string& n : order) from.push_back(outDimIndex(n));
  std::vector<int> sorted = from;
  std::sort(sorted.begin(), sorted.end());
  bool permutation = sorted.size() == outs_.size();
  for (size_t k = 0; permutation && k < sorted.size(); ++k) permutation = sorted[k] == static_cast<int>(k);
  if (!permutation)
    throw Error("linear layout: the output order given is not a permutation of " + namesOf(outs_));
  std::vector<std::string> ins;
  for (const InDim& d : ins_) ins.push_back(d.name);
  return sublayout(ins, order);
}

LinearLayout LinearLayout::reshapeOuts(std::vector<OutDim> outs) const {
  int bits = 0;
  for (const OutDim& d : outs) {
    if (!isPowerOfTwo(d.size))
      throw Error("linear layout: reshape to a size " + std::to_string(d.size) + " that is not a power of two");
    bits += log2Of(d.size);
  }
  if (bits != totalOutBits())
    throw Error("linear layout: cannot reshape the outputs of " + str() + " to a different number of elements");
  Packing from(outs_), to(outs);
  return LinearLayout(mapBases(ins_, [&](const Basis& b) { return to.unpack(from.pack(b)); }), std::move(outs));
}

LinearLayout LinearLayout::removeOutDim(const std::string& name) const {
  int k = outDimIndex(name);
  if (k < 0) throw Error("linear layout has no output dimension '" + name + "' (it has " + namesOf(outs_) + ")");
  std::vector<std::string> keep, ins;
  for (const OutDim& d : outs_)
    if (d.name != name) keep.push_back(d.name);
  for (const InDim& d : ins_) ins.push_back(d.name);
  return sublayout(ins, keep);
}

LinearLayout LinearLayout::sublayout(const std::vector<std::string>& ins, const std::vector<std::string>& outs) const {
  std::vector<int> outIdx;
  std::vector<OutDim> newOuts;
  for (const std::string& n : outs) {
    int k = outDimIndex(n);
    if (k < 0) throw Error("linear layout has no output dimension '" + n + "' (it has " + namesOf(outs_) + ")");
    outIdx.push_back(k);
    newOuts.push_back(outs_[k]);
  }
  std::vector<InDim> picked;
  for (const std::string& n : ins) picked.push_back(inDim(n));
  auto project = [&](const Basis& b) {
    Basis t;
    for (int k : outIdx) t.push_back(b[k]);
    return t;
  };
  return LinearLayout(mapBases(picked, project), std::move(newOuts));
}

LinearLayout LinearLayout::withoutRedundantBases(const std::string& name) const {
  int i = inDimIndex(name);
  if (i < 0) throw Error("linear layout has no input dimension '" + name + "' (it has " + namesOf(ins_) + ")");
  Packing p(outs_);
  Echelon e;
  std::vector<InDim> ins = ins_;
  ins[i].bases.clear();
  for (const Basis& b : ins_[i].bases)
    if (e.insert(p.pack(b), 0)) ins[i].bases.push_back(b);
  return LinearLayout(std::move(ins), outs_);
}

// ------------------------------------------------------------------------------------------------ properties

std::vector<uint64_t> LinearLayout::freeVariableMasks() const {
  Packing p(outs_);
  Echelon e;
  std::vector<uint64_t> masks(ins_.size(), 0);
  for (size_t i = 0; i < ins_.size(); ++i)
    for (size_t bit = 0; bit < ins_[i].bases.size(); ++bit)
      if (!e.insert(p.pack(ins_[i].bases[bit]), 0)) masks[i] |= uint64_t(1) << bit;
  return masks;
}

bool LinearLayout::isSurjective() const { return rankOf(*this) == totalOutBits(); }
bool LinearLayout::isInjective() const { return rankOf(*this) == totalInBits(); }

int64_t LinearLayout::consecutiveAlong(const std::string& in, const std::string& out) const {
  const InDim& d = inDim(in);
  int k = outDimIndex(out);
  if (k < 0) throw Error("linear layout has no output dimension '" + out + "' (it has " + namesOf(outs_) + ")");
  int64_t run = 1;
  for (const Basis& b : d.bases) {
    for (size_t j = 0; j < b.size(); ++j)
      if (b[j] != (static_cast<int>(j) == k ? run : 0)) return run;
    run *= 2;
  }
  return run;
}

std::string LinearLayout::str() const {
  std::string s;
  for (size_t i = 0; i < ins_.size(); ++i) {
    s += (i ? ", " : "") + ins_[i].name + " = [";
    for (size_t b = 0; b < ins_[i].bases.size(); ++b) s += (b ? ", " : "") + listText(ins_[i].bases[b]);
    s += "]";
  }
  s += " ->";
  for (size_t k = 0; k < outs_.size(); ++k) s += (k ? ", " : " ") + outs_[k].name + " = " + std::to_string(outs_[k].size);
  return s;
}

}  // namespace tessera::ir
