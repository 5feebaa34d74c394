// Per-op semantics of constants, ids, ranges and the shape ops (docs/IR.md "Constants, ids, ranges" and
// "Shapes"): every result element is checked against index arithmetic done here.
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

// Loads each input (shape inShapes[i], row-major) into a tile, applies `build`, and stores every result
// (shape outShapes[j]) into its own output buffer. Rank-0 shapes load/store through scalar pointers.
std::vector<HostBuf> runShapeKernel(std::vector<HostBuf*> inputs, const std::vector<Shape>& inShapes,
                                    const std::vector<Shape>& outShapes, ScalarKind outKind,
                                    const std::function<std::vector<Value*>(Kernel&, std::vector<Value*>)>& build) {
  std::vector<Type> argTypes;
  for (HostBuf* in : inputs) argTypes.push_back(ptrTo(in->kind()));
  for (size_t j = 0; j < outShapes.size(); ++j) argTypes.push_back(ptrTo(outKind));
  Kernel kern(argTypes, "shape_op");
  std::vector<Value*> loaded;
  for (unsigned i = 0; i < inputs.size(); ++i)
    loaded.push_back(inShapes[i].empty() ? kern.b.load(kern.arg(i))
                                         : kern.b.load(kern.ptrs(kern.arg(i), kern.linearIndex(inShapes[i]))));
  std::vector<Value*> results = build(kern, loaded);
  EXPECT_EQ(results.size(), outShapes.size());
  std::vector<HostBuf> outs;
  std::vector<interp::Arg> args;
  for (HostBuf* in : inputs) args.push_back(in->arg());
  for (size_t j = 0; j < outShapes.size(); ++j) {
    EXPECT_EQ(results[j]->type().shape(), outShapes[j]);
    unsigned argNo = static_cast<unsigned>(inputs.size() + j);
    if (outShapes[j].empty())
      kern.b.store(kern.arg(argNo), results[j]);
    else
      kern.b.store(kern.ptrs(kern.arg(argNo), kern.linearIndex(outShapes[j])), results[j]);
    outs.emplace_back(outKind, static_cast<size_t>(numel(outShapes[j])));
    outs.back().fill(kPoison);
  }
  for (HostBuf& o : outs) args.push_back(o.arg());
  kern.run(args, {1, 1, 1});
  return outs;
}

HostBuf iotaBuf(ScalarKind k, size_t n, int64_t start = 100) {
  HostBuf b(k, n);
  for (size_t i = 0; i < n; ++i) {
    if (isFloatKind(k))
      b.setFloat(i, static_cast<double>(start + static_cast<int64_t>(i)) * 0.5);
    else
      b.setInt(i, start + static_cast<int64_t>(i) * 3);
  }
  return b;
}

// ---------------------------------------------------------------------------------------------------------------
// constant, program_id, num_programs, arange

TEST(ConstantTest, TileAndScalarOfEveryType) {
  std::vector<ScalarKind> kinds = numericKinds();
  kinds.push_back(ScalarKind::I1);
  for (ScalarKind k : kinds) {
    SCOPED_TRACE(kindName(k));
    const Shape shape{2, 4, 8};
    Kernel kern({ptrTo(k), ptrTo(k)});
    Type tileType = Type::tile(shape, scalarType(k));
    Value* tile;
    Value* scalar;
    double wantF = 0;
    int64_t wantI = 0;
    if (k == ScalarKind::I1) {
      tile = kern.b.constantBool(true, tileType);
      scalar = kern.b.constantBool(true, scalarType(k));
      wantI = 1;
    } else if (isFloatKind(k)) {
      tile = kern.b.constantFloat(0.1, tileType);  // not representable: rounds to the nearest value of k
      scalar = kern.b.constantFloat(0.1, scalarType(k));
      wantF = roundTo(k, 0.1);
    } else {
      wantI = isSignedKind(k) ? -3 : 200;
      tile = kern.b.constantInt(wantI, tileType);
      scalar = kern.b.constantInt(wantI, scalarType(k));
    }
    kern.b.store(kern.ptrs(kern.arg(0), kern.linearIndex(shape)), tile);
    kern.b.store(kern.arg(1), scalar);
    HostBuf out(k, static_cast<size_t>(numel(shape))), one(k, 1);
    kern.run({out.arg(), one.arg()}, {1, 1, 1});
    for (size_t i = 0; i < out.size(); ++i) {
      if (isFloatKind(k))
        ASSERT_EQ(out.floatAt(i), wantF) << "element " << i;
      else
        ASSERT_EQ(out.intAt(i), wantI) << "element " << i;
    }
    if (isFloatKind(k))
      EXPECT_EQ(one.floatAt(0), wantF);
    else
      EXPECT_EQ(one.intAt(0), wantI);
  }
}

TEST(ConstantTest, SpecialFloatValues) {
  for (ScalarKind k : arithFloatKinds()) {
    SCOPED_TRACE(kindName(k));
    const double values[] = {-INFINITY, INFINITY, NAN, -0.0, 1e-300, 1e300};
    Kernel kern({ptrTo(k)});
    for (int i = 0; i < 6; ++i)
      kern.b.store(kern.b.addptr(kern.arg(0), kern.i32(i)), kern.b.constantFloat(values[i], scalarType(k)));
    HostBuf out(k, 6);
    kern.run({out.arg()}, {1, 1, 1});
    for (int i = 0; i < 6; ++i)
      EXPECT_TRUE(sameFloat(out.floatAt(i), roundTo(k, values[i])))
          << "constant " << fmtDouble(values[i]) << " gave " << fmtDouble(out.floatAt(i));
  }
}

TEST(ProgramIdTest, IdsAndCountsOverA3DGrid) {
  const interp::Grid grid{3, 4, 5};
  Kernel kern({ptrTo(ScalarKind::I32)});
  Value* ids[3] = {kern.b.programId(0), kern.b.programId(1), kern.b.programId(2)};
  Value* counts[3] = {kern.b.numPrograms(0), kern.b.numPrograms(1), kern.b.numPrograms(2)};
  // linear = (z * ny + y) * nx + x; six values per program.
  Value* linear = kern.b.binary(
      OpKind::Add,
      kern.b.binary(OpKind::Mul,
                    kern.b.binary(OpKind::Add, kern.b.binary(OpKind::Mul, ids[2], counts[1]), ids[1]), counts[0]),
      ids[0]);
  Value* base = kern.b.addptr(kern.arg(0), kern.b.binary(OpKind::Mul, linear, kern.i32(6)));
  for (int j = 0; j < 3; ++j) {
    kern.b.store(kern.b.addptr(base, kern.i32(j)), ids[j]);
    kern.b.store(kern.b.addptr(base, kern.i32(3 + j)), counts[j]);
  }
  HostBuf out(ScalarKind::I32, 3 * 4 * 5 * 6);
  out.fill(kPoison);
  kern.run({out.arg()}, grid);
  for (int64_t z = 0; z < 5; ++z)
    for (int64_t y = 0; y < 4; ++y)
      for (int64_t x = 0; x < 3; ++x) {
        size_t at = static_cast<size_t>(((z * 4 + y) * 3 + x) * 6);
        EXPECT_EQ(out.intAt(at + 0), x);
        EXPECT_EQ(out.intAt(at + 1), y);
        EXPECT_EQ(out.intAt(at + 2), z);
        EXPECT_EQ(out.intAt(at + 3), 3);
        EXPECT_EQ(out.intAt(at + 4), 4);
        EXPECT_EQ(out.intAt(at + 5), 5);
      }
}

TEST(ArangeTest, NonZeroStart) {
  for (auto [start, end] : {std::pair<int64_t, int64_t>{5, 21}, {3, 35}, {1000, 1016}, {0, 1}, {7, 8}}) {
    SCOPED_TRACE("arange " + std::to_string(start) + ".." + std::to_string(end));
    Kernel kern({ptrTo(ScalarKind::I32)});
    Value* r = kern.b.arange(start, end);
    kern.b.store(kern.ptrs(kern.arg(0), kern.linearIndex({end - start})), r);
    HostBuf out(ScalarKind::I32, static_cast<size_t>(end - start));
    kern.run({out.arg()}, {1, 1, 1});
    for (int64_t i = 0; i < end - start; ++i) EXPECT_EQ(out.intAt(static_cast<size_t>(i)), start + i);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// splat, broadcast, expand_dims, reshape, hint

TEST(SplatTest, ScalarToEveryRank) {
  for (ScalarKind k : {ScalarKind::F16, ScalarKind::I64, ScalarKind::I1}) {
    for (const Shape& shape : {Shape{16}, Shape{4, 8}, Shape{2, 2, 4}}) {
      SCOPED_TRACE(std::string(kindName(k)) + " " + shapeStr(shape));
      HostBuf in(k, 1);
      if (isFloatKind(k))
        in.setFloat(0, -1.5);
      else
        in.setInt(0, k == ScalarKind::I1 ? 1 : -123456789012LL);
      auto outs = runShapeKernel({&in}, {{}}, {shape}, k, [&](Kernel& kern, std::vector<Value*> v) {
        return std::vector<Value*>{kern.b.splat(v[0], shape)};
      });
      for (size_t i = 0; i < outs[0].size(); ++i) ASSERT_EQ(outs[0].bitsAt(i), in.bitsAt(0)) << "element " << i;
    }
  }
}

TEST(BroadcastTest, UnitDimensionsRepeat) {
  const std::vector<std::pair<Shape, Shape>> cases{{{1}, {16}},          {{1, 8}, {4, 8}},       {{4, 1}, {4, 8}},
                                                   {{1, 1}, {4, 8}},     {{2, 1, 8}, {2, 4, 8}}, {{1, 4, 1}, {2, 4, 8}},
                                                   {{2, 4, 8}, {2, 4, 8}}};
  for (const auto& [from, to] : cases) {
    SCOPED_TRACE(shapeStr(from) + " -> " + shapeStr(to));
    HostBuf in = iotaBuf(ScalarKind::F32, static_cast<size_t>(numel(from)));
    auto outs = runShapeKernel({&in}, {from}, {to}, ScalarKind::F32, [&](Kernel& kern, std::vector<Value*> v) {
      return std::vector<Value*>{kern.b.broadcast(v[0], to)};
    });
    for (int64_t j = 0; j < numel(to); ++j) {
      Shape idx = unravel(j, to);
      for (size_t d = 0; d < idx.size(); ++d)
        if (from[d] == 1) idx[d] = 0;
      EXPECT_EQ(outs[0].floatAt(static_cast<size_t>(j)), in.floatAt(static_cast<size_t>(ravel(idx, from))))
          << "element " << j;
    }
  }
}

TEST(ExpandDimsTest, InsertsUnitDimensionKeepingOrder) {
  const std::vector<std::pair<Shape, int>> cases{{{}, 0},      {{8}, 0},     {{8}, 1},    {{4, 8}, 0},
                                                 {{4, 8}, 1},  {{4, 8}, 2}};
  for (const auto& [from, axis] : cases) {
    Shape to = from;
    to.insert(to.begin() + axis, 1);
    SCOPED_TRACE(shapeStr(from) + " axis " + std::to_string(axis));
    HostBuf in = iotaBuf(ScalarKind::I16, static_cast<size_t>(numel(from)));
    auto outs = runShapeKernel({&in}, {from}, {to}, ScalarKind::I16, [&](Kernel& kern, std::vector<Value*> v) {
      return std::vector<Value*>{kern.b.expandDims(v[0], axis)};
    });
    for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(outs[0].intAt(i), in.intAt(i));
  }
}

TEST(ReshapeTest, KeepsRowMajorOrder) {
  const std::vector<std::pair<Shape, Shape>> cases{
      {{4, 8}, {32}}, {{32}, {2, 4, 4}}, {{2, 4, 4}, {8, 4}}, {{8, 4}, {4, 8}}, {{2, 4, 4}, {4, 2, 4}}};
  for (const auto& [from, to] : cases) {
    SCOPED_TRACE(shapeStr(from) + " -> " + shapeStr(to));
    HostBuf in = iotaBuf(ScalarKind::U32, 32);
    auto outs = runShapeKernel({&in}, {from}, {to}, ScalarKind::U32, [&](Kernel& kern, std::vector<Value*> v) {
      return std::vector<Value*>{kern.b.reshape(v[0], to)};
    });
    for (size_t i = 0; i < 32; ++i) EXPECT_EQ(outs[0].intAt(i), in.intAt(i));
  }
}

TEST(HintTest, IsIdentity) {
  HostBuf in = iotaBuf(ScalarKind::I32, 32);
  auto outs = runShapeKernel({&in}, {{4, 8}}, {{4, 8}}, ScalarKind::I32, [](Kernel& kern, std::vector<Value*> v) {
    using tessera::ir::Attr;
    return std::vector<Value*>{kern.b.hint(v[0], {{"multiple_of", Attr::intArray({1, 1})},
                                                  {"max_contiguous", Attr::intArray({1, 8})},
                                                  {"max_constancy", Attr::intArray({1, 1})}})};
  });
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(outs[0].intAt(i), in.intAt(i));
}

// ---------------------------------------------------------------------------------------------------------------
// trans

TEST(TransTest, Rank2And3Permutations) {
  const std::vector<std::pair<Shape, Shape>> cases{
      {{4, 8}, {1, 0}},    {{4, 8}, {0, 1}},    {{2, 4, 8}, {0, 1, 2}}, {{2, 4, 8}, {0, 2, 1}},
      {{2, 4, 8}, {1, 0, 2}}, {{2, 4, 8}, {1, 2, 0}}, {{2, 4, 8}, {2, 0, 1}}, {{2, 4, 8}, {2, 1, 0}}};
  for (const auto& [from, perm] : cases) {
    Shape to;
    for (int64_t p : perm) to.push_back(from[p]);
    SCOPED_TRACE(shapeStr(from) + " perm " + shapeStr(perm));
    for (ScalarKind k : {ScalarKind::I32, ScalarKind::BF16}) {
      HostBuf in = iotaBuf(k, static_cast<size_t>(numel(from)));
      auto outs = runShapeKernel({&in}, {from}, {to}, k, [&](Kernel& kern, std::vector<Value*> v) {
        return std::vector<Value*>{kern.b.trans(v[0], perm)};
      });
      for (int64_t j = 0; j < numel(to); ++j) {
        Shape jIdx = unravel(j, to), kIdx(from.size());
        for (size_t i = 0; i < perm.size(); ++i) kIdx[perm[i]] = jIdx[i];
        EXPECT_EQ(outs[0].bitsAt(static_cast<size_t>(j)), in.bitsAt(static_cast<size_t>(ravel(kIdx, from))))
            << kindName(k) << " result element " << j;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// cat, join, split

TEST(CatTest, ConcatenatesAlongDimensionZero) {
  for (const Shape& shape : {Shape{8}, Shape{4, 8}, Shape{2, 2, 4}}) {
    SCOPED_TRACE(shapeStr(shape));
    Shape to = shape;
    to[0] *= 2;
    const size_t n = static_cast<size_t>(numel(shape));
    HostBuf a = iotaBuf(ScalarKind::F64, n, 0), b = iotaBuf(ScalarKind::F64, n, 1000);
    auto outs = runShapeKernel({&a, &b}, {shape, shape}, {to}, ScalarKind::F64, [](Kernel& kern, std::vector<Value*> v) {
      return std::vector<Value*>{kern.b.cat(v[0], v[1])};
    });
    for (size_t i = 0; i < 2 * n; ++i)
      EXPECT_EQ(outs[0].floatAt(i), i < n ? a.floatAt(i) : b.floatAt(i - n)) << "element " << i;
  }
}

TEST(JoinSplitTest, JoinAddsTrailingPairAndSplitInvertsIt) {
  for (const Shape& shape : {Shape{}, Shape{8}, Shape{4, 4}}) {
    SCOPED_TRACE(shapeStr(shape));
    Shape joined = shape;
    joined.push_back(2);
    const size_t n = static_cast<size_t>(numel(shape));
    HostBuf a = iotaBuf(ScalarKind::I8, n, -60), b = iotaBuf(ScalarKind::I8, n, 10);
    auto outs = runShapeKernel({&a, &b}, {shape, shape}, {joined, shape, shape}, ScalarKind::I8,
                               [](Kernel& kern, std::vector<Value*> v) {
                                 Value* j = kern.b.join(v[0], v[1]);
                                 auto [lo, hi] = kern.b.split(j);
                                 return std::vector<Value*>{j, lo, hi};
                               });
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(outs[0].intAt(2 * i), a.intAt(i)) << "r[..., 0] at " << i;
      EXPECT_EQ(outs[0].intAt(2 * i + 1), b.intAt(i)) << "r[..., 1] at " << i;
      EXPECT_EQ(outs[1].intAt(i), a.intAt(i));
      EXPECT_EQ(outs[2].intAt(i), b.intAt(i));
    }
  }
}

TEST(JoinSplitTest, SplitOfLoadedTile) {
  // Split alone on rank 1 (-> scalars), 2 and 3: element [..., 0] goes to the first result.
  for (const Shape& shape : {Shape{2}, Shape{8, 2}, Shape{2, 4, 2}}) {
    SCOPED_TRACE(shapeStr(shape));
    Shape half(shape.begin(), shape.end() - 1);
    HostBuf in = iotaBuf(ScalarKind::F32, static_cast<size_t>(numel(shape)), 7);
    auto outs = runShapeKernel({&in}, {shape}, {half, half}, ScalarKind::F32, [](Kernel& kern, std::vector<Value*> v) {
      auto [lo, hi] = kern.b.split(v[0]);
      return std::vector<Value*>{lo, hi};
    });
    for (size_t i = 0; i < static_cast<size_t>(numel(half)); ++i) {
      EXPECT_EQ(outs[0].floatAt(i), in.floatAt(2 * i));
      EXPECT_EQ(outs[1].floatAt(i), in.floatAt(2 * i + 1));
    }
  }
}

}  // namespace
}  // namespace optest
