// Per-op semantics of reduce, scan and dot (docs/IR.md "Reductions, scans, dot"). The interpreter folds reduce
// and scan left to right in index order, so even float sums are compared exactly against a sequential reference.
#include "OpTestUtil.h"

namespace optest {
namespace {

using Shape = std::vector<int64_t>;

Shape unravel(int64_t linear, const Shape& shape) {
  Shape idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
  return idx;
}
int64_t ravel(const Shape& idx, const Shape& shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d) linear = linear * shape[d] + idx[d];
  return linear;
}
Shape without(const Shape& s, int axis) {
  Shape r = s;
  r.erase(r.begin() + axis);
  return r;
}

// Stores `v` (any rank, possibly a scalar) row-major through pointer argument `argNo`.
void storeAll(Kernel& kern, unsigned argNo, Value* v) {
  if (v->type().shape().empty())
    kern.b.store(kern.arg(argNo), v);
  else
    kern.b.store(kern.ptrs(kern.arg(argNo), kern.linearIndex(v->type().shape())), v);
}

// One combine step of the reference, in the element type's arithmetic.
double combineRef(const std::string& op, ScalarKind k, double acc, double x) {
  if (op == "sum") {
    if (k == ScalarKind::F32) return static_cast<float>(acc) + static_cast<float>(x);
    if (isFloatKind(k)) return roundTo(k, acc + x);
    return static_cast<double>(wrapInt(k, static_cast<uint64_t>(static_cast<int64_t>(acc) + static_cast<int64_t>(x))));
  }
  if (!isFloatKind(k) && !isSignedKind(k)) {  // unsigned compare on the canonical (zero-extended) values
    uint64_t a = static_cast<uint64_t>(acc), b = static_cast<uint64_t>(x);
    return static_cast<double>(op == "max" ? std::max(a, b) : std::min(a, b));
  }
  return op == "max" ? std::max(acc, x) : std::min(acc, x);
}

Value* combineOp(Builder& b, const std::string& op, Value* acc, Value* x) {
  OpKind kind = op == "sum" ? OpKind::Add : op == "max" ? OpKind::Max : OpKind::Min;
  return b.binary(kind, acc, x);
}

const std::vector<Shape>& reduceShapes() {
  static const std::vector<Shape> s{{32}, {4, 16}, {2, 4, 8}};
  return s;
}

void fillReduceInput(HostBuf& in, Rng& rng) {
  for (size_t i = 0; i < in.size(); ++i) {
    if (isFloatKind(in.kind()))
      in.setFloat(i, randomFloat(in.kind(), rng, false));
    else
      in.setInt(i, wrapInt(in.kind(), rng() % 2 ? rng() % 100000 : rng()));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// reduce

TEST(ReduceTest, SumMaxMinPerAxis) {
  for (ScalarKind k : {ScalarKind::I32, ScalarKind::U32, ScalarKind::F32, ScalarKind::F16}) {
    for (const std::string op : {"sum", "max", "min"}) {
      for (const Shape& shape : reduceShapes()) {
        for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
          SCOPED_TRACE(std::string(kindName(k)) + " " + op + " over axis " + std::to_string(axis) + " of " +
                       shapeStr(shape));
          Rng rng(0x5ED + static_cast<unsigned>(k) * 100 + op.size() * 10 + axis);
          HostBuf in(k, static_cast<size_t>(numel(shape)));
          fillReduceInput(in, rng);
          const Shape outShape = without(shape, axis);
          Kernel kern({ptrTo(k), ptrTo(k)});
          Value* x = kern.b.load(kern.ptrs(kern.arg(0), kern.linearIndex(shape)));
          tessera::ir::Op* red = kern.b.reduce({x}, axis, [&](Builder& b, const std::vector<Value*>& args) {
            return std::vector<Value*>{combineOp(b, op, args[0], args[1])};
          });
          ASSERT_EQ(red->result(0)->type().shape(), outShape);
          storeAll(kern, 1, red->result(0));
          HostBuf out(k, static_cast<size_t>(numel(outShape)));
          kern.run({in.arg(), out.arg()}, {1, 1, 1});
          for (int64_t o = 0; o < numel(outShape); ++o) {
            Shape idx = unravel(o, outShape);
            idx.insert(idx.begin() + axis, 0);
            double acc = in.asDouble(static_cast<size_t>(ravel(idx, shape)));
            if (!isFloatKind(k) && !isSignedKind(k)) acc = static_cast<double>(unsignedBits(k, in.intAt(ravel(idx, shape))));
            for (int64_t i = 1; i < shape[axis]; ++i) {
              idx[axis] = i;
              size_t at = static_cast<size_t>(ravel(idx, shape));
              double x = isFloatKind(k) || isSignedKind(k) ? in.asDouble(at) : static_cast<double>(unsignedBits(k, in.intAt(at)));
              acc = combineRef(op, k, acc, x);
            }
            double got = isFloatKind(k) || isSignedKind(k) ? out.asDouble(static_cast<size_t>(o))
                                                          : static_cast<double>(unsignedBits(k, out.intAt(o)));
            if (!isFloatKind(k)) acc = static_cast<double>(isSignedKind(k) ? wrapInt(k, static_cast<uint64_t>(static_cast<int64_t>(acc)))
                                                                           : static_cast<int64_t>(acc));
            EXPECT_EQ(got, acc) << "result element " << o;
          }
        }
      }
    }
  }
}

TEST(ReduceTest, ArgmaxTwoInputsTieBreaksToSmallerIndex) {
  // Values drawn from a tiny range so that the maximum is usually tied; indices are the position along the axis.
  for (const Shape& shape : reduceShapes()) {
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      SCOPED_TRACE("argmax over axis " + std::to_string(axis) + " of " + shapeStr(shape));
      Rng rng(0xA46 + axis * 7 + shape.size());
      const size_t n = static_cast<size_t>(numel(shape));
      HostBuf vals(ScalarKind::F32, n), idxs(ScalarKind::I32, n);
      for (size_t i = 0; i < n; ++i) {
        vals.setFloat(i, static_cast<double>(rng() % 4));
        idxs.setInt(i, unravel(static_cast<int64_t>(i), shape)[axis]);
      }
      const Shape outShape = without(shape, axis);
      Kernel kern({ptrTo(ScalarKind::F32), ptrTo(ScalarKind::I32), ptrTo(ScalarKind::F32), ptrTo(ScalarKind::I32)});
      Value* lin = kern.linearIndex(shape);
      Value* v = kern.b.load(kern.ptrs(kern.arg(0), lin));
      Value* ix = kern.b.load(kern.ptrs(kern.arg(1), lin));
      tessera::ir::Op* red = kern.b.reduce({v, ix}, axis, [](Builder& b, const std::vector<Value*>& a) {
        // a = (accValue, accIndex, newValue, newIndex)
        Value* better = b.cmp("gt", a[2], a[0]);
        Value* tie = b.binary(OpKind::And, b.cmp("eq", a[2], a[0]), b.cmp("lt", a[3], a[1]));
        Value* pick = b.binary(OpKind::Or, better, tie);
        return std::vector<Value*>{b.select(pick, a[2], a[0]), b.select(pick, a[3], a[1])};
      });
      storeAll(kern, 2, red->result(0));
      storeAll(kern, 3, red->result(1));
      HostBuf maxOut(ScalarKind::F32, static_cast<size_t>(numel(outShape))), argOut(ScalarKind::I32, maxOut.size());
      kern.run({vals.arg(), idxs.arg(), maxOut.arg(), argOut.arg()}, {1, 1, 1});
      for (int64_t o = 0; o < numel(outShape); ++o) {
        Shape idx = unravel(o, outShape);
        idx.insert(idx.begin() + axis, 0);
        double best = -1;
        int64_t bestAt = -1;
        for (int64_t i = 0; i < shape[axis]; ++i) {
          idx[axis] = i;
          double x = vals.floatAt(static_cast<size_t>(ravel(idx, shape)));
          if (x > best) best = x, bestAt = i;
        }
        EXPECT_EQ(maxOut.floatAt(static_cast<size_t>(o)), best) << "result element " << o;
        EXPECT_EQ(argOut.intAt(static_cast<size_t>(o)), bestAt) << "result element " << o;
      }
    }
  }
}

TEST(ReduceTest, FloatSumFoldsLeftToRight) {
  // f32 sum of [2^24, 1, 1, ..., 1]: left to right every +1 is lost (ties to even), so the sum stays 2^24; any
  // other order (e.g. a tree) would add the ones up first and give more.
  const size_t n = 16;
  HostBuf in(ScalarKind::F32, n), out(ScalarKind::F32, 1);
  in.setFloat(0, 16777216.0);
  for (size_t i = 1; i < n; ++i) in.setFloat(i, 1.0);
  Kernel kern({ptrTo(ScalarKind::F32), ptrTo(ScalarKind::F32)});
  Value* x = kern.b.load(kern.ptrs(kern.arg(0), kern.linearIndex({16})));
  tessera::ir::Op* red = kern.b.reduce({x}, 0, [](Builder& b, const std::vector<Value*>& a) {
    return std::vector<Value*>{b.binary(OpKind::Add, a[0], a[1])};
  });
  EXPECT_TRUE(red->result(0)->type().shape().empty()) << "rank-1 reduce gives a scalar";
  kern.b.store(kern.arg(1), red->result(0));
  kern.run({in.arg(), out.arg()}, {1, 1, 1});
  EXPECT_EQ(out.floatAt(0), 16777216.0);
}

// ---------------------------------------------------------------------------------------------------------------
// scan

TEST(ScanTest, CumsumForwardAndReversePerAxis) {
  for (ScalarKind k : {ScalarKind::I32, ScalarKind::F32}) {
    for (bool reverse : {false, true}) {
      for (const Shape& shape : reduceShapes()) {
        for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
          SCOPED_TRACE(std::string(kindName(k)) + (reverse ? " reverse" : " forward") + " cumsum over axis " +
                       std::to_string(axis) + " of " + shapeStr(shape));
          Rng rng(0x5CA + static_cast<unsigned>(k) + reverse * 3 + axis * 11);
          const size_t n = static_cast<size_t>(numel(shape));
          HostBuf in(k, n), out(k, n);
          fillReduceInput(in, rng);
          Kernel kern({ptrTo(k), ptrTo(k)});
          Value* lin = kern.linearIndex(shape);
          Value* x = kern.b.load(kern.ptrs(kern.arg(0), lin));
          tessera::ir::Op* sc = kern.b.scan({x}, axis, reverse, [](Builder& b, const std::vector<Value*>& a) {
            return std::vector<Value*>{b.binary(OpKind::Add, a[0], a[1])};
          });
          ASSERT_EQ(sc->result(0)->type().shape(), shape);
          kern.b.store(kern.ptrs(kern.arg(1), lin), sc->result(0));
          kern.run({in.arg(), out.arg()}, {1, 1, 1});
          const Shape lineShape = without(shape, axis);
          for (int64_t line = 0; line < numel(lineShape); ++line) {
            Shape idx = unravel(line, lineShape);
            idx.insert(idx.begin() + axis, 0);
            double acc = 0;
            for (int64_t step = 0; step < shape[axis]; ++step) {
              idx[axis] = reverse ? shape[axis] - 1 - step : step;
              size_t at = static_cast<size_t>(ravel(idx, shape));
              acc = step == 0 ? in.asDouble(at) : combineRef("sum", k, acc, in.asDouble(at));
              ASSERT_EQ(out.asDouble(at), acc) << "element " << at;
            }
          }
        }
      }
    }
  }
}

TEST(ScanTest, TwoInputScanRunningMaxWithPosition) {
  // A 2-input scan: running maximum and the position where it was first reached.
  const Shape shape{4, 16};
  const size_t n = 64;
  Rng rng(99);
  HostBuf vals(ScalarKind::I32, n), pos(ScalarKind::I32, n), outV(ScalarKind::I32, n), outP(ScalarKind::I32, n);
  for (size_t i = 0; i < n; ++i) {
    vals.setInt(i, static_cast<int64_t>(rng() % 10));
    pos.setInt(i, static_cast<int64_t>(i % 16));
  }
  Kernel kern({ptrTo(ScalarKind::I32), ptrTo(ScalarKind::I32), ptrTo(ScalarKind::I32), ptrTo(ScalarKind::I32)});
  Value* lin = kern.linearIndex(shape);
  Value* v = kern.b.load(kern.ptrs(kern.arg(0), lin));
  Value* p = kern.b.load(kern.ptrs(kern.arg(1), lin));
  tessera::ir::Op* sc = kern.b.scan({v, p}, 1, false, [](Builder& b, const std::vector<Value*>& a) {
    Value* better = b.cmp("gt", a[2], a[0]);
    Value* tie = b.binary(OpKind::And, b.cmp("eq", a[2], a[0]), b.cmp("lt", a[3], a[1]));
    Value* pick = b.binary(OpKind::Or, better, tie);
    return std::vector<Value*>{b.select(pick, a[2], a[0]), b.select(pick, a[3], a[1])};
  });
  kern.b.store(kern.ptrs(kern.arg(2), lin), sc->result(0));
  kern.b.store(kern.ptrs(kern.arg(3), lin), sc->result(1));
  kern.run({vals.arg(), pos.arg(), outV.arg(), outP.arg()}, {1, 1, 1});
  for (size_t row = 0; row < 4; ++row) {
    int64_t best = -1, at = -1;
    for (size_t c = 0; c < 16; ++c) {
      int64_t x = vals.intAt(row * 16 + c);
      if (x > best) best = x, at = static_cast<int64_t>(c);
      EXPECT_EQ(outV.intAt(row * 16 + c), best);
      EXPECT_EQ(outP.intAt(row * 16 + c), at);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// dot

struct DotCase {
  ScalarKind in, acc;
  std::string precision;
  int64_t m, n, k;
};

double randomDotInput(ScalarKind k, Rng& rng) {
  if (!isFloatKind(k)) return static_cast<double>(wrapInt(k, rng()));  // i8: the full range, -128 included
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  return roundTo(k, u(rng));
}

void runDotCase(const DotCase& c) {
  SCOPED_TRACE(std::string("dot ") + kindName(c.in) + " -> " + kindName(c.acc) + " " + c.precision + " M=" +
               std::to_string(c.m) + " N=" + std::to_string(c.n) + " K=" + std::to_string(c.k));
  Rng rng(0xD07 + static_cast<unsigned>(c.in) * 31 + c.m * 7 + c.k);
  HostBuf a(c.in, static_cast<size_t>(c.m * c.k)), b(c.in, static_cast<size_t>(c.k * c.n)),
      acc(c.acc, static_cast<size_t>(c.m * c.n)), out(c.acc, acc.size());
  for (size_t i = 0; i < a.size(); ++i) a.setFromDouble(i, randomDotInput(c.in, rng));
  for (size_t i = 0; i < b.size(); ++i) b.setFromDouble(i, randomDotInput(c.in, rng));
  for (size_t i = 0; i < acc.size(); ++i)
    acc.setFromDouble(i, isFloatKind(c.acc) ? randomDotInput(c.acc, rng) : static_cast<double>(rng() % 2001) - 1000);

  Kernel kern({ptrTo(c.in), ptrTo(c.in), ptrTo(c.acc), ptrTo(c.acc)});
  Value* av = kern.b.load(kern.ptrs(kern.arg(0), kern.linearIndex({c.m, c.k})));
  Value* bv = kern.b.load(kern.ptrs(kern.arg(1), kern.linearIndex({c.k, c.n})));
  Value* cIdx = kern.linearIndex({c.m, c.n});
  Value* cv = kern.b.load(kern.ptrs(kern.arg(2), cIdx));
  kern.b.store(kern.ptrs(kern.arg(3), cIdx), kern.b.dot(av, bv, cv, c.precision));
  kern.run({a.arg(), b.arg(), acc.arg(), out.arg()}, {1, 1, 1});

  // Tolerance: exact for integers; for floats, the accumulation type's rounding per term (any order), plus the
  // tf32 rounding of each f32 input (10 mantissa bits: relative 2^-11 each, so 2^-10 per product).
  const double accEps = c.acc == ScalarKind::F16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
  const double inputEps = c.precision == "tf32" ? std::ldexp(1.0, -10) : 0.0;
  int failures = 0;
  for (int64_t i = 0; i < c.m && failures < 8; ++i) {
    for (int64_t j = 0; j < c.n && failures < 8; ++j) {
      size_t at = static_cast<size_t>(i * c.n + j);
      if (!isFloatKind(c.in)) {
        int64_t want = acc.intAt(at);
        for (int64_t k = 0; k < c.k; ++k)
          want += a.intAt(static_cast<size_t>(i * c.k + k)) * b.intAt(static_cast<size_t>(k * c.n + j));
        if (out.intAt(at) != want) {
          ++failures;
          ADD_FAILURE() << "C[" << i << "][" << j << "]: expected " << want << ", got " << out.intAt(at);
        }
        continue;
      }
      long double exact = acc.floatAt(at), magnitude = std::fabs(acc.floatAt(at));
      for (int64_t k = 0; k < c.k; ++k) {
        long double p = static_cast<long double>(a.floatAt(static_cast<size_t>(i * c.k + k))) *
                        b.floatAt(static_cast<size_t>(k * c.n + j));
        exact += p;
        magnitude += std::fabs(p);
      }
      double tol = static_cast<double>(magnitude) * ((c.k + 2) * accEps + inputEps);
      double got = out.floatAt(at);
      if (!(std::fabs(got - static_cast<double>(exact)) <= tol)) {
        ++failures;
        ADD_FAILURE() << "C[" << i << "][" << j << "]: expected " << fmtDouble(static_cast<double>(exact)) << " +- "
                      << fmtDouble(tol) << ", got " << fmtDouble(got);
      }
    }
  }
}

TEST(DotTest, NonSquareShapesForEveryInputType) {
  const std::vector<std::array<int64_t, 3>> shapes{{16, 8, 32}, {4, 32, 8}, {2, 4, 16}};
  const std::vector<DotCase> kinds{
      {ScalarKind::F16, ScalarKind::F32, "ieee", 0, 0, 0},     {ScalarKind::BF16, ScalarKind::F32, "ieee", 0, 0, 0},
      {ScalarKind::F32, ScalarKind::F32, "ieee", 0, 0, 0},     {ScalarKind::F32, ScalarKind::F32, "tf32", 0, 0, 0},
      {ScalarKind::I8, ScalarKind::I32, "ieee", 0, 0, 0},      {ScalarKind::F16, ScalarKind::F16, "ieee", 0, 0, 0},
      {ScalarKind::F8E4M3, ScalarKind::F32, "ieee", 0, 0, 0},  {ScalarKind::F8E5M2, ScalarKind::F32, "ieee", 0, 0, 0}};
  for (DotCase c : kinds) {
    for (const auto& s : shapes) {
      c.m = s[0];
      c.n = s[1];
      c.k = s[2];
      runDotCase(c);
    }
  }
}

TEST(DotTest, Tf32RoundsInputsButIeeeDoesNot) {
  // a[0][0] = 1 + 2^-20 is exact in f32 but not in tf32 (10 mantissa bits): ieee keeps it, tf32 drops it.
  for (const std::string precision : {"ieee", "tf32"}) {
    SCOPED_TRACE(precision);
    HostBuf a(ScalarKind::F32, 16 * 16), b(ScalarKind::F32, 16 * 16), acc(ScalarKind::F32, 16 * 16),
        out(ScalarKind::F32, 16 * 16);
    a.setFloat(0, 1.0 + std::ldexp(1.0, -20));
    b.setFloat(0, 1.0);
    Kernel kern({ptrTo(ScalarKind::F32), ptrTo(ScalarKind::F32), ptrTo(ScalarKind::F32), ptrTo(ScalarKind::F32)});
    Value* idx = kern.linearIndex({16, 16});
    Value* r = kern.b.dot(kern.b.load(kern.ptrs(kern.arg(0), idx)), kern.b.load(kern.ptrs(kern.arg(1), idx)),
                          kern.b.load(kern.ptrs(kern.arg(2), idx)), precision);
    kern.b.store(kern.ptrs(kern.arg(3), idx), r);
    kern.run({a.arg(), b.arg(), acc.arg(), out.arg()}, {1, 1, 1});
    EXPECT_EQ(out.floatAt(0), precision == "ieee" ? 1.0 + std::ldexp(1.0, -20) : 1.0);
    for (size_t i = 1; i < 256; ++i) ASSERT_EQ(out.floatAt(i), 0.0) << "element " << i;
  }
}

TEST(DotTest, Int8ExtremesAccumulateExactly) {
  // Every product is (-128) * (-128) = 16384; K = 64 of them plus the accumulator, beyond any 16-bit range.
  HostBuf a(ScalarKind::I8, 4 * 64), b(ScalarKind::I8, 64 * 8), acc(ScalarKind::I32, 32), out(ScalarKind::I32, 32);
  for (size_t i = 0; i < a.size(); ++i) a.setInt(i, -128);
  for (size_t i = 0; i < b.size(); ++i) b.setInt(i, -128);
  for (size_t i = 0; i < acc.size(); ++i) acc.setInt(i, static_cast<int64_t>(i) - 7);
  Kernel kern({ptrTo(ScalarKind::I8), ptrTo(ScalarKind::I8), ptrTo(ScalarKind::I32), ptrTo(ScalarKind::I32)});
  Value* cIdx = kern.linearIndex({4, 8});
  Value* r = kern.b.dot(kern.b.load(kern.ptrs(kern.arg(0), kern.linearIndex({4, 64}))),
                        kern.b.load(kern.ptrs(kern.arg(1), kern.linearIndex({64, 8}))),
                        kern.b.load(kern.ptrs(kern.arg(2), cIdx)));
  kern.b.store(kern.ptrs(kern.arg(3), cIdx), r);
  kern.run({a.arg(), b.arg(), acc.arg(), out.arg()}, {1, 1, 1});
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(out.intAt(i), 64 * 16384 + static_cast<int64_t>(i) - 7);
}

}  // namespace
}  // namespace optest
