// Shape ops: splat, broadcast, expand_dims, reshape, trans, cat, join, split. They move elements without
// looking at them, so each works on whichever storage vector (ints or floats) the element type uses.
#include "backends/interpreter/OpImpl.h"

namespace tessera::interp::detail {

using ir::OpKind;

namespace {

// Calls fn(destination vector, source vector) on the storage both tiles use.
template <class Fn>
void withStorage(Tile& r, const Tile& a, Fn&& fn) {
  if (r.usesFloats())
    fn(r.floats, a.floats);
  else
    fn(r.ints, a.ints);
}

// Row-major strides of `shape`, front-padded to rank 3 along with the shape itself.
struct Padded3 {
  int64_t shape[3] = {1, 1, 1};
  int64_t stride[3] = {0, 0, 0};
};

Padded3 padShape(const std::vector<int64_t>& shape) {
  Padded3 p;
  size_t offset = 3 - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) p.shape[offset + i] = shape[i];
  int64_t s = 1;
  for (int d = 2; d >= 0; --d) {
    p.stride[d] = s;
    s *= p.shape[d];
  }
  return p;
}

// dst[i0, i1, i2] = src[i0 * srcStride[0] + i1 * srcStride[1] + i2 * srcStride[2]] over dstShape.
template <class V>
void gather3(V& dst, const V& src, const int64_t dstShape[3], const int64_t srcStride[3]) {
  int64_t k = 0;
  for (int64_t i0 = 0; i0 < dstShape[0]; ++i0)
    for (int64_t i1 = 0; i1 < dstShape[1]; ++i1) {
      int64_t base = i0 * srcStride[0] + i1 * srcStride[1];
      for (int64_t i2 = 0; i2 < dstShape[2]; ++i2) dst[k++] = src[base + i2 * srcStride[2]];
    }
}

}  // namespace

std::vector<Tile> evalShapeOp(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  const ProgramContext& ctx = env.ctx;
  Tile r(resultType(op, 0, env));
  const Tile& a = *operands[0];
  if (a.type.element() != r.type.element())
    fail(op, ctx, "operand element type " + a.type.element().str() + " differs from the result's " +
                      r.type.element().str());
  const auto& rShape = r.shape();
  const auto& aShape = a.shape();
  switch (op.kind()) {
    case OpKind::Splat:
      if (a.size() != 1) fail(op, ctx, "operand must be a scalar, not " + a.type.str());
      withStorage(r, a, [](auto& dst, const auto& src) { std::fill(dst.begin(), dst.end(), src[0]); });
      return {std::move(r)};
    case OpKind::ExpandDims:
    case OpKind::Reshape:
      if (a.size() != r.size())
        fail(op, ctx, "operand " + a.type.str() + " and result " + r.type.str() + " differ in element count");
      withStorage(r, a, [](auto& dst, const auto& src) { dst = src; });
      return {std::move(r)};
    case OpKind::Broadcast: {
      if (aShape.size() != rShape.size()) fail(op, ctx, "operand and result ranks differ");
      Padded3 src = padShape(aShape);
      Padded3 dst = padShape(rShape);
      for (int d = 0; d < 3; ++d) {
        if (src.shape[d] == dst.shape[d]) continue;
        if (src.shape[d] != 1) fail(op, ctx, "cannot broadcast " + a.type.str() + " to " + r.type.str());
        src.stride[d] = 0;  // a size-1 dimension repeats
      }
      withStorage(r, a, [&](auto& d, const auto& s) { gather3(d, s, dst.shape, src.stride); });
      return {std::move(r)};
    }
    case OpKind::Trans: {
      std::vector<int64_t> perm = op.attr("perm").getIntArray();
      if (perm.size() != aShape.size() || rShape.size() != aShape.size())
        fail(op, ctx, "'perm' must have one entry per dimension");
      Padded3 src = padShape(aShape);
      Padded3 dst = padShape(rShape);
      size_t pad = 3 - aShape.size();
      int64_t stride[3] = {0, 0, 0};
      std::vector<bool> seen(perm.size(), false);
      for (size_t i = 0; i < perm.size(); ++i) {
        if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(perm.size()) || seen[perm[i]])
          fail(op, ctx, "'perm' is not a permutation");
        seen[perm[i]] = true;
        if (rShape[i] != aShape[perm[i]]) fail(op, ctx, "result shape does not match the permuted operand shape");
        stride[pad + i] = src.stride[pad + perm[i]];  // moving along result dim i moves along operand dim perm[i]
      }
      withStorage(r, a, [&](auto& d, const auto& s) { gather3(d, s, dst.shape, stride); });
      return {std::move(r)};
    }
    case OpKind::Cat: {
      const Tile& b = *operands[1];
      if (b.type.element() != a.type.element() || a.size() + b.size() != r.size())
        fail(op, ctx, "operands " + a.type.str() + " and " + b.type.str() + " do not concatenate to " + r.type.str());
      // Along dimension 0 in row-major order: all of a's elements, then all of b's.
      withStorage(r, a, [&](auto& dst, const auto& src) { std::copy(src.begin(), src.end(), dst.begin()); });
      if (r.usesFloats())
        std::copy(b.floats.begin(), b.floats.end(), r.floats.begin() + a.size());
      else
        std::copy(b.ints.begin(), b.ints.end(), r.ints.begin() + a.size());
      return {std::move(r)};
    }
    case OpKind::Join: {
      const Tile& b = *operands[1];
      if (b.type != a.type || r.size() != 2 * a.size())
        fail(op, ctx, "operands " + a.type.str() + " and " + b.type.str() + " do not join to " + r.type.str());
      withStorage(r, a, [&](auto& dst, const auto& src) {
        for (int64_t i = 0, n = a.size(); i < n; ++i) dst[2 * i] = src[i];
      });
      withStorage(r, b, [&](auto& dst, const auto& src) {
        for (int64_t i = 0, n = b.size(); i < n; ++i) dst[2 * i + 1] = src[i];
      });
      return {std::move(r)};
    }
    case OpKind::Split: {
      Tile second(resultType(op, 1, env));
      // The halves may be in different layouts (the verifier allows it; a GPU lowering exchanges through shared
      // memory), so only their shapes and element types must agree.
      if (aShape.empty() || aShape.back() != 2 || r.size() * 2 != a.size() ||
          second.type.shape() != r.type.shape() || second.type.element() != r.type.element())
        fail(op, ctx, "operand " + a.type.str() + " does not split into two " + r.type.str());
      withStorage(r, a, [&](auto& dst, const auto& src) {
        for (int64_t i = 0, n = r.size(); i < n; ++i) dst[i] = src[2 * i];
      });
      withStorage(second, a, [&](auto& dst, const auto& src) {
        for (int64_t i = 0, n = second.size(); i < n; ++i) dst[i] = src[2 * i + 1];
      });
      return {std::move(r), std::move(second)};
    }
    default:
      fail(op, ctx, "not a shape operation");
  }
}

}  // namespace tessera::interp::detail
