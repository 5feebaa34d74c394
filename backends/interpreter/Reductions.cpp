// reduce, scan (interpreting the combine region) and dot.
//
// reduce/scan view the input as [outer, K, inner] around `axis` and fold each of the outer*inner "lanes"
// left to right along K. Three ways to run the combine region, fastest first:
//   1. the region is one binary arithmetic op on its two arguments (sum, max, ...): a raw kernel per step;
//   2. the region holds only element-wise ops and constants: it runs once per step on all lanes at once;
//   3. anything else: it runs once per step and lane on scalars, through the full region executor.
#include "backends/interpreter/BinaryOps.h"
#include "backends/interpreter/Executor.h"

namespace tessera::interp::detail {

using ir::OpKind;

namespace {

struct FoldShape {
  int64_t outer = 1, k = 1, inner = 1;
  int64_t lanes() const { return outer * inner; }
  // Index in the input of lane `lane`'s element at position `step` along the axis.
  int64_t index(int64_t lane, int64_t step) const { return ((lane / inner) * k + step) * inner + lane % inner; }
};

// Recognizes a combine region that is a single binary op on its two arguments; sets `swapped` when the op
// takes them as (new element, accumulator).
const ir::Op* singleBinaryCombine(const ir::Block& region, ir::Type element, bool& swapped) {
  if (region.numArguments() != 2 || region.ops().size() != 2) return nullptr;
  const ir::Op& op = *region.ops().front();
  const ir::Op& yield = *region.ops().back();
  if (!isBinaryArithmetic(op.kind()) || !yield.is(OpKind::Yield) || yield.numOperands() != 1 ||
      yield.operand(0) != op.result(0) || op.numOperands() != 2 || op.result(0)->type() != element ||
      element.isPtr())
    return nullptr;
  const ir::Value* acc = region.argument(0);
  const ir::Value* next = region.argument(1);
  if (op.operand(0) == acc && op.operand(1) == next) {
    swapped = false;
    return &op;
  }
  if (op.operand(0) == next && op.operand(1) == acc) {
    swapped = true;
    return &op;
  }
  return nullptr;
}

bool regionIsElementwise(const ir::Block& region) {
  for (const auto& op : region.ops()) {
    OpKind k = op->kind();
    bool ok = op->info().has(ir::kElementwise) || k == OpKind::Constant || k == OpKind::ProgramId ||
              k == OpKind::NumPrograms || k == OpKind::Hint || k == OpKind::Yield;
    if (!ok) return false;
  }
  return true;
}

template <class T>
std::vector<T>& storage(Tile& t);
template <>
std::vector<int64_t>& storage<int64_t>(Tile& t) { return t.ints; }
template <>
std::vector<double>& storage<double>(Tile& t) { return t.floats; }
template <class T>
const std::vector<T>& storage(const Tile& t) { return storage<T>(const_cast<Tile&>(t)); }

// Path 1: one binary op. Works on a [K][lanes] copy so that every step is one contiguous loop.
template <class T>
void foldWithKernel(const ir::Op& combine, bool swapped, bool isScan, bool reverse,
                    const Tile& input, const FoldShape& fs, Tile& result, const ProgramContext& ctx) {
  const int64_t lanes = fs.lanes();
  const std::vector<T>& in = storage<T>(input);
  std::vector<T> steps(static_cast<size_t>(fs.k * lanes));
  for (int64_t s = 0; s < fs.k; ++s)
    for (int64_t o = 0; o < fs.outer; ++o)
      std::copy_n(&in[(o * fs.k + s) * fs.inner], fs.inner, &steps[s * lanes + o * fs.inner]);
  std::vector<T>& out = storage<T>(result);
  ir::Type element = input.type.element();
  const int64_t first = reverse ? fs.k - 1 : 0;
  const int64_t direction = reverse ? -1 : 1;
  std::vector<T> acc(steps.begin() + first * lanes, steps.begin() + (first + 1) * lanes);
  auto fold = [&](auto f) {
    auto emit = [&](int64_t s) {
      if (isScan)
        for (int64_t o = 0; o < fs.outer; ++o)
          std::copy_n(&acc[o * fs.inner], fs.inner, &out[(o * fs.k + s) * fs.inner]);
    };
    emit(first);
    for (int64_t i = 1; i < fs.k; ++i) {
      int64_t s = first + i * direction;
      const T* x = &steps[s * lanes];
      if (swapped)
        for (int64_t l = 0; l < lanes; ++l) acc[l] = f(x[l], acc[l]);
      else
        for (int64_t l = 0; l < lanes; ++l) acc[l] = f(acc[l], x[l]);
      emit(s);
    }
  };
  if constexpr (std::is_same_v<T, double>)
    withFloatBinary(combine, ctx, combine.kind(), element, fold);
  else
    withIntBinary(combine, ctx, combine.kind(), element, fold);
  if (!isScan) std::copy(acc.begin(), acc.end(), out.begin());  // lane l is result element l
}

// Copies the elements of lanes [firstLane, firstLane + count) at position `step` into a tile of `laneType`.
Tile gatherLanes(const Tile& input, ir::Type laneType, const FoldShape& fs, int64_t firstLane, int64_t step) {
  Tile t(laneType);
  const int64_t n = t.size();
  if (t.usesFloats())
    for (int64_t l = 0; l < n; ++l) t.floats[l] = input.floats[fs.index(firstLane + l, step)];
  else
    for (int64_t l = 0; l < n; ++l) t.ints[l] = input.ints[fs.index(firstLane + l, step)];
  return t;
}

void scatterLanes(const Tile& value, Tile& result, const FoldShape& fs, int64_t firstLane, int64_t step,
                  bool isScan) {
  const int64_t n = value.size();
  for (int64_t l = 0; l < n; ++l) {
    int64_t at = isScan ? fs.index(firstLane + l, step) : firstLane + l;
    if (value.usesFloats())
      result.floats[at] = value.floats[l];
    else
      result.ints[at] = value.ints[l];
  }
}

}  // namespace

std::vector<Tile> evalReduceOrScan(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  ProgramContext& ctx = env.ctx;
  const bool isScan = op.is(OpKind::Scan);
  const size_t n = operands.size();
  if (n == 0 || op.numResults() != n || op.numRegions() != 1)
    fail(op, ctx, "needs as many results as inputs (at least one) and one combine region");
  const ir::Block& region = *op.region(0);
  if (region.numArguments() != 2 * n)
    fail(op, ctx, "combine region must take " + std::to_string(2 * n) + " arguments");
  const auto& shape = operands[0]->shape();
  const int64_t axis = op.intAttr("axis");
  if (shape.empty() || axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    fail(op, ctx, "axis " + std::to_string(axis) + " is out of range for " + operands[0]->type.str());
  for (size_t j = 0; j < n; ++j) {
    if (operands[j]->shape() != shape) fail(op, ctx, "inputs must all have the same shape");
    if (region.argument(j)->type() != operands[j]->type.element() ||
        region.argument(n + j)->type() != operands[j]->type.element())
      fail(op, ctx, "combine region argument types do not match the inputs' element types");
  }
  const bool reverse = isScan && op.hasAttr("reverse") && op.attr("reverse").getBool();

  FoldShape fs;
  for (int64_t d = 0; d < axis; ++d) fs.outer *= shape[d];
  fs.k = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) fs.inner *= shape[d];

  std::vector<Tile> results;
  for (size_t j = 0; j < n; ++j) {
    results.emplace_back(op.result(static_cast<unsigned>(j))->type());
    if (results[j].size() != (isScan ? operands[j]->size() : fs.lanes()) ||
        results[j].type.element() != operands[j]->type.element())
      fail(op, ctx, "result type " + results[j].type.str() + " does not fit input " + operands[j]->type.str());
  }

  ir::Type element0 = operands[0]->type.element();
  bool swapped = false;
  if (n == 1) {
    if (const ir::Op* combine = singleBinaryCombine(region, element0, swapped)) {
      if (element0.isFloat())
        foldWithKernel<double>(*combine, swapped, isScan, reverse, *operands[0], fs, results[0], ctx);
      else
        foldWithKernel<int64_t>(*combine, swapped, isScan, reverse, *operands[0], fs, results[0], ctx);
      return results;
    }
  }

  // Paths 2 and 3: run the region on groups of lanes (all lanes at once, or one at a time).
  const bool vectorize = fs.lanes() > 1 && regionIsElementwise(region);
  const int64_t groupSize = vectorize ? fs.lanes() : 1;
  const std::vector<int64_t> laneShape{groupSize};
  RegionExecutor executor(region, vectorize ? &laneShape : nullptr);
  std::vector<ir::Type> laneTypes;
  for (size_t j = 0; j < n; ++j) {
    ir::Type e = operands[j]->type.element();
    laneTypes.push_back(vectorize ? ir::Type::tile(laneShape, e) : e);
  }
  const int64_t first = reverse ? fs.k - 1 : 0;
  const int64_t direction = reverse ? -1 : 1;
  for (int64_t group = 0; group < fs.lanes(); group += groupSize) {
    std::vector<Tile> acc;
    for (size_t j = 0; j < n; ++j) acc.push_back(gatherLanes(*operands[j], laneTypes[j], fs, group, first));
    if (isScan)
      for (size_t j = 0; j < n; ++j) scatterLanes(acc[j], results[j], fs, group, first, true);
    for (int64_t i = 1; i < fs.k; ++i) {
      int64_t s = first + i * direction;
      std::vector<Tile> args;
      args.reserve(2 * n);
      for (Tile& t : acc) args.push_back(std::move(t));
      for (size_t j = 0; j < n; ++j) args.push_back(gatherLanes(*operands[j], laneTypes[j], fs, group, s));
      acc = executor.run(std::move(args), ctx);
      if (acc.size() != n) fail(op, ctx, "combine region must yield " + std::to_string(n) + " values");
      for (size_t j = 0; j < n; ++j) {
        if (acc[j].type != laneTypes[j])
          fail(op, ctx, "combine region yields " + acc[j].type.str() + " where " + laneTypes[j].str() + " is expected");
        if (isScan) scatterLanes(acc[j], results[j], fs, group, s, true);
      }
    }
    if (!isScan)
      for (size_t j = 0; j < n; ++j) scatterLanes(acc[j], results[j], fs, group, 0, false);
  }
  return results;
}

Tile evalDot(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  const ProgramContext& ctx = env.ctx;
  const Tile& a = *operands[0];
  const Tile& b = *operands[1];
  const Tile& acc = *operands[2];
  Tile r(resultType(op, 0, env));
  if (a.shape().size() != 2 || b.shape().size() != 2 || acc.shape().size() != 2 || a.shape()[1] != b.shape()[0] ||
      acc.shape()[0] != a.shape()[0] || acc.shape()[1] != b.shape()[1] || r.type != acc.type)
    fail(op, ctx, "shapes " + a.type.str() + " x " + b.type.str() + " + " + acc.type.str() + " do not form a matrix product");
  if (a.type.element() != b.type.element() && !(a.type.element().isFP8() && b.type.element().isFP8()))
    fail(op, ctx, "a and b must have the same element type (or both be fp8)");
  if (a.type.isPtr() || r.type.isPtr()) fail(op, ctx, "operands must be integers or floats, not pointers");
  const int64_t m = a.shape()[0], kDim = a.shape()[1], nDim = b.shape()[1];
  if (!a.usesFloats()) {
    if (r.usesFloats()) fail(op, ctx, "integer inputs need an integer accumulator");
    const ir::IntFormat canon(r.type);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < nDim; ++j) {
        int64_t sum = acc.ints[i * nDim + j];  // exact: |i8 * i8| * K stays far below 2^63
        for (int64_t k = 0; k < kDim; ++k) sum += a.ints[i * kDim + k] * b.ints[k * nDim + j];
        r.ints[i * nDim + j] = canon.wrap(static_cast<uint64_t>(sum));
      }
    return r;
  }
  if (!r.usesFloats()) fail(op, ctx, "floating-point inputs need a floating-point accumulator");
  std::string precision = op.hasAttr("input_precision") ? op.stringAttr("input_precision") : "ieee";
  if (precision != "ieee" && precision != "tf32") fail(op, ctx, "unknown input_precision '" + precision + "'");
  const bool toTF32 = precision == "tf32" && a.type.element().scalarKind() == ir::ScalarKind::F32;
  std::vector<double> lhs = a.floats;
  std::vector<double> rhsT(static_cast<size_t>(kDim * nDim));  // b transposed: contiguous along k
  for (int64_t k = 0; k < kDim; ++k)
    for (int64_t j = 0; j < nDim; ++j) rhsT[j * kDim + k] = b.floats[k * nDim + j];
  if (toTF32) {
    for (double& x : lhs) x = ir::roundF32ToTF32(x);
    for (double& x : rhsT) x = ir::roundF32ToTF32(x);
  }
  const ir::ScalarKind kind = r.type.scalarKind();
  for (int64_t i = 0; i < m; ++i) {
    const double* row = &lhs[i * kDim];
    for (int64_t j = 0; j < nDim; ++j) {
      const double* col = &rhsT[j * kDim];
      double sum = acc.floats[i * nDim + j];  // products of <= 24-bit significands are exact in double
      for (int64_t k = 0; k < kDim; ++k) sum += row[k] * col[k];
      r.floats[i * nDim + j] = ir::roundToFloat(kind, sum);
    }
  }
  return r;
}

}  // namespace tessera::interp::detail
