// Linear layouts over F2 (the idea of Zhou et al. 2025, "Linear Layouts: Robust Code Generation of Efficient Tensor
// Computation Using F2", and of Triton's layout design): one representation for every way a tile is spread over
// hardware, as bit-matrix algebra.
//
// A linear layout maps named input dimensions (e.g. "register", "lane", "warp" for a distributed tile, "offset" for
// shared memory), each of size 2^k, to named output dimensions (the tensor's dimensions, sizes powers of two). It
// holds one basis vector per input bit: the image of an input is the XOR of the bases of its set bits, per output
// dimension. Example: the bases register = [[0, 1]], lane = [[0, 2], [1, 0]] put register r of lane l at
// (l >> 1, 2 * (l & 1) + r).
//
// Costs: every operation works on the bases only (at most 63 input bits and 63 output bits in all), never on the
// elements, so elements per thread appear only as their log2. apply XORs one basis per set input bit; compose
// applies the outer layout to each basis; the operations that solve (invert, invertAndCompose, freeVariableMasks,
// the injectivity and surjectivity tests) reduce each basis, packed into one 64-bit word, against at most 63
// pivot words. All are linear in the number of bases, times at most the number of output bits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::ir {

class LinearLayout {
 public:
  using Basis = std::vector<int64_t>;  // one coordinate per output dimension

  struct InDim {
    std::string name;
    std::vector<Basis> bases;  // bases[i]: the image of input bit i; the dimension has 2^bases.size() values
    bool operator==(const InDim&) const = default;
  };
  struct OutDim {
    std::string name;
    int64_t size = 1;  // a power of two
    bool operator==(const OutDim&) const = default;
  };

  LinearLayout() = default;  // no dimensions: maps the single empty input to the single empty output
  // Throws tessera::Error on repeated names, sizes that are not powers of two, a basis of the wrong length or with
  // a coordinate outside its output dimension, or more than 63 input or output bits in all.
  LinearLayout(std::vector<InDim> ins, std::vector<OutDim> outs);
  // Output sizes inferred as the smallest powers of two covering the bases; throws unless the layout is then
  // surjective (every output is the image of some input), which is what makes the inferred sizes the true ones.
  static LinearLayout withInferredSizes(std::vector<InDim> ins, const std::vector<std::string>& outNames);
  // in -> out as x -> x (size values each).
  static LinearLayout identity1D(int64_t size, const std::string& in, const std::string& out);
  // in (size values) -> out of size 1: every input maps to 0 (replication along `in`).
  static LinearLayout zeros1D(int64_t size, const std::string& in, const std::string& out);

  // ---- dimensions
  const std::vector<InDim>& inDims() const { return ins_; }
  const std::vector<OutDim>& outDims() const { return outs_; }
  int inDimIndex(const std::string& name) const;   // -1 when absent
  int outDimIndex(const std::string& name) const;  // -1 when absent
  const InDim& inDim(const std::string& name) const;  // throws when absent
  int inDimSizeLog2(const std::string& name) const { return static_cast<int>(inDim(name).bases.size()); }
  int64_t inDimSize(const std::string& name) const { return int64_t(1) << inDimSizeLog2(name); }
  int64_t outDimSize(const std::string& name) const;
  int totalInBits() const;
  int totalOutBits() const;
  std::vector<int64_t> outShape() const;  // the output sizes, in order

  // ---- evaluation
  // The image of `inputs` (one value per input dimension, in order), one coordinate per output dimension.
  std::vector<int64_t> apply(const std::vector<int64_t>& inputs) const;

  // ---- algebra
  // outer(this(x)): this layout's outputs must be `outer`'s inputs (same names, order and sizes).
  LinearLayout compose(const LinearLayout& outer) const;
  // The inverse of a bijective layout (throws otherwise): outputs become inputs and inputs outputs.
  LinearLayout invert() const;
  // C with outer(C(x)) == this(x) for every x, for two layouts onto the same outputs (in any order). Where `outer`
  // replicates (several inputs hold one output), C picks the lowest one: the preimage with every free variable of
  // `outer` clear (see freeVariableMasks). Throws if some image of this layout is no image of `outer`. With
  // this = a destination layout and outer = a source layout, C says which source slot each destination slot reads.
  LinearLayout invertAndCompose(const LinearLayout& outer) const;
  // The direct sum: input and output dimensions are merged by name; where both have a dimension, `other`'s bits
  // come above this layout's (an output dimension's sizes multiply, `other`'s coordinates scaled by this size).
  LinearLayout operator*(const LinearLayout& other) const;
  // The same map with output dimensions in `order` (a permutation of their names).
  LinearLayout transposeOuts(const std::vector<std::string>& order) const;
  // The same map onto `outs` (same total size): outputs flatten row-major (the last dimension fastest) and split
  // again, as the tile-IR `reshape` does.
  LinearLayout reshapeOuts(std::vector<OutDim> outs) const;
  // Drops output dimension `name` (the projection that `reduce` along it leaves behind).
  LinearLayout removeOutDim(const std::string& name) const;
  // The restriction to the input dimensions `ins` and output dimensions `outs` (both subsets, in this order).
  LinearLayout sublayout(const std::vector<std::string>& ins, const std::vector<std::string>& outs) const;
  // Drops the bases of input dimension `name` that repeat an image of its lower bits (the bits freeVariableMasks
  // finds within that dimension alone): afterwards different values of `name` (others at 0) have different
  // images, and value i stands for the i-th lowest of the original values that were kept.
  LinearLayout withoutRedundantBases(const std::string& name) const;

  // ---- properties
  // Per input dimension, the bits that are free: their basis lies in the span of the bases of lower bits, input
  // dimensions ordered first = least significant (register < lane < warp). Zero bases are the common case
  // (replication). Of all inputs mapping to one output, the numerically lowest (lowest warp, then lane, then
  // register) is the only one with no free bit set: it owns the element.
  std::vector<uint64_t> freeVariableMasks() const;
  bool isSurjective() const;
  bool isInjective() const;
  bool isInvertible() const { return isSurjective() && isInjective(); }
  // The number of consecutive elements along `out` that consecutive values of `in` reach from 0: the largest
  // 2^k whose first k bases of `in` are 1, 2, .., 2^(k-1) along `out` and 0 elsewhere (a vector width when `in` is
  // "register" and `out` the fastest memory dimension).
  int64_t consecutiveAlong(const std::string& in, const std::string& out) const;

  bool operator==(const LinearLayout& o) const { return ins_ == o.ins_ && outs_ == o.outs_; }
  bool operator!=(const LinearLayout& o) const { return !(*this == o); }
  // "register = [[0, 1]], lane = [[0, 2], [1, 0]] -> dim0 = 16, dim1 = 4"
  std::string str() const;

 private:
  std::vector<InDim> ins_;
  std::vector<OutDim> outs_;
};

}  // namespace tessera::ir
