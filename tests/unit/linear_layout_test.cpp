// Tests of ir/LinearLayout and of ir::Layout::toLinear. Property tests over random layouts of every kind (ranks 1 to
// 3, warps of 32 and 64 lanes, 1 to 16 warps, tiles smaller and larger than the CTA tile) compare the linear form
// element by element with the definitions of docs/Layouts.md evaluated by brute force; the algebra (compose,
// invert, invertAndCompose, products, reshapes, masks) is checked against evaluation, and so are the conversion
// plans of ir/LayoutConversion. Every random case prints its seed and layout when it fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <set>

#include "ir/Error.h"
#include "ir/Layout.h"
#include "ir/LayoutConversion.h"
#include "ir/LinearLayout.h"
#include "RandomLayouts.h"

namespace {

using namespace tessera;
using namespace tessera::testing;
using ir::Layout;
using ir::LinearLayout;
using Coords = std::vector<int64_t>;

int64_t flatIndex(const Shape& shape, const Coords& c) {
  int64_t idx = 0;
  for (size_t d = 0; d < shape.size(); ++d) idx = idx * shape[d] + c[d];
  return idx;
}

Coords unflatten(int64_t idx, const Shape& shape) {
  Coords c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = idx % shape[d];
    idx /= shape[d];
  }
  return c;
}

// ------------------------------------------------------------------------------------ brute-force definitions

// Every (thread, register) slot of a distributed layout over a shape and the element it holds, by the definitions
// of docs/Layouts.md: blocked layouts by their closed formula, slices by evaluating the parent over the shape with
// a size-1 dimension inserted and dropping the registers whose coordinates repeat an earlier register's in thread
// (0, 0). Slots are numbered thread-major: (warp * warpSize + lane) * registers + register.
struct SlotTable {
  int64_t warpSize = 0, numWarps = 0, registers = 0;
  std::vector<Coords> coords;

  const Coords& at(int64_t warp, int64_t lane, int64_t reg) const {
    return coords[(warp * warpSize + lane) * registers + reg];
  }
};

SlotTable referenceSlots(const Layout& layout, const Shape& shape) {
  SlotTable t;
  t.warpSize = layout.warpSize();
  t.numWarps = layout.numWarps();
  const int64_t threads = t.warpSize * t.numWarps;
  if (layout.kind() == Layout::Kind::Blocked) {
    t.registers = layout.registersPerThread(shape);
    for (int64_t th = 0; th < threads; ++th)
      for (int64_t r = 0; r < t.registers; ++r) t.coords.push_back(layout.coords(shape, th / t.warpSize, th % t.warpSize, r));
    return t;
  }
  EXPECT_EQ(layout.kind(), Layout::Kind::Slice);
  Shape parentShape = shape;
  parentShape.insert(parentShape.begin() + layout.sliceDim(), 1);
  SlotTable parent = referenceSlots(layout.parent(), parentShape);
  std::vector<int64_t> kept;
  std::set<Coords> seen;
  for (int64_t r = 0; r < parent.registers; ++r)
    if (seen.insert(parent.at(0, 0, r)).second) kept.push_back(r);
  t.registers = static_cast<int64_t>(kept.size());
  for (int64_t th = 0; th < threads; ++th)
    for (int64_t k : kept) {
      Coords c = parent.coords[th * parent.registers + k];
      c.erase(c.begin() + layout.sliceDim());
      t.coords.push_back(c);
    }
  return t;
}

// The owner of each slot's element: the lowest thread holding it, then that thread's lowest register.
std::vector<bool> referenceOwners(const SlotTable& t, const Shape& shape) {
  std::vector<bool> owner(t.coords.size(), false), taken(numElements(shape), false);
  for (size_t s = 0; s < t.coords.size(); ++s) {
    int64_t e = flatIndex(shape, t.coords[s]);
    if (!taken[e]) owner[s] = taken[e] = true;
  }
  return owner;
}

// The same tables for a linear layout with input dimensions register, lane, warp, by evaluating it.
SlotTable slotsOf(const LinearLayout& l) {
  SlotTable t;
  t.registers = l.inDimSize(ir::kRegisterDim);
  t.warpSize = l.inDimSize(ir::kLaneDim);
  t.numWarps = l.inDimSize(ir::kWarpDim);
  for (int64_t th = 0; th < t.warpSize * t.numWarps; ++th)
    for (int64_t r = 0; r < t.registers; ++r) t.coords.push_back(l.apply({r, th % t.warpSize, th / t.warpSize}));
  return t;
}

bool ownsByMasks(const std::vector<uint64_t>& free, int64_t warp, int64_t lane, int64_t reg) {
  return (static_cast<uint64_t>(reg) & free[0]) == 0 && (static_cast<uint64_t>(lane) & free[1]) == 0 &&
         (static_cast<uint64_t>(warp) & free[2]) == 0;
}

// ------------------------------------------------------------------------------------ random layouts

// A random bijection of the tile's coordinates onto themselves (elementary XORs of one output bit into another).
LinearLayout randomPermutationOf(std::mt19937& rng, const Shape& shape) {
  std::vector<LinearLayout::InDim> ins;
  std::vector<LinearLayout::OutDim> outs;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string name = ir::tensorDimName(static_cast<int>(d));
    LinearLayout::InDim in{name, {}};
    for (int64_t v = 1; v < shape[d]; v *= 2) {
      LinearLayout::Basis b(shape.size(), 0);
      b[d] = v;
      in.bases.push_back(b);
    }
    ins.push_back(in);
    outs.push_back({name, shape[d]});
  }
  std::vector<std::pair<size_t, size_t>> bits;  // (dimension, bit)
  for (size_t d = 0; d < ins.size(); ++d)
    for (size_t i = 0; i < ins[d].bases.size(); ++i) bits.push_back({d, i});
  for (int step = 0; bits.size() > 1 && step < 12; ++step) {
    auto [d1, i1] = bits[pick(rng, 0, static_cast<int64_t>(bits.size()) - 1)];
    auto [d2, i2] = bits[pick(rng, 0, static_cast<int64_t>(bits.size()) - 1)];
    if (d1 == d2 && i1 == i2) continue;
    LinearLayout::Basis& target = ins[d1].bases[i1];
    const LinearLayout::Basis& source = ins[d2].bases[i2];
    for (size_t k = 0; k < target.size(); ++k) target[k] ^= source[k];
  }
  return LinearLayout(std::move(ins), std::move(outs));
}

const std::vector<Machine> kMachines = {{32, 1}, {32, 2}, {32, 4}, {32, 8}, {32, 16},
                                        {64, 1}, {64, 2}, {64, 4}, {64, 8}, {64, 16}};
constexpr int kSeedsPerCase = 3;

// Calls `body(seed, rng, rank, machine)` for every rank 1..3, machine and seed; the seed identifies the case.
template <class F>
void forRandomCases(F body) {
  uint32_t seed = 0;
  for (int rank = 1; rank <= ir::kMaxTileRank; ++rank)
    for (Machine m : kMachines)
      for (int i = 0; i < kSeedsPerCase; ++i, ++seed) {
        std::mt19937 rng(seed);
        SCOPED_TRACE("seed " + std::to_string(seed) + ", rank " + std::to_string(rank) + ", " +
                     std::to_string(m.numWarps) + " warps of " + std::to_string(m.warpSize));
        body(rng, rank, m);
      }
}

// ------------------------------------------------------------------------------------ distributed layouts

// The linear form of `layout` over `shape` against the brute-force definitions, slot by slot: coordinates, register
// counts and ownership, and ir::Layout's own queries on a sample of slots.
void expectLinearFormMatchesDefinition(const Layout& layout, const Shape& shape) {
  SCOPED_TRACE(layout.str() + " over " + ::testing::PrintToString(shape));
  SlotTable ref = referenceSlots(layout, shape);
  std::vector<bool> owners = referenceOwners(ref, shape);
  LinearLayout l = layout.toLinear(shape);
  ASSERT_EQ(l.inDimSize(ir::kRegisterDim), ref.registers);
  ASSERT_EQ(l.inDimSize(ir::kLaneDim), ref.warpSize);
  ASSERT_EQ(l.inDimSize(ir::kWarpDim), ref.numWarps);
  ASSERT_EQ(l.outShape(), shape);
  EXPECT_EQ(layout.registersPerThread(shape), ref.registers);
  std::vector<uint64_t> free = l.freeVariableMasks();
  for (int64_t w = 0; w < ref.numWarps; ++w)
    for (int64_t ln = 0; ln < ref.warpSize; ++ln)
      for (int64_t r = 0; r < ref.registers; ++r) {
        size_t slot = static_cast<size_t>((w * ref.warpSize + ln) * ref.registers + r);
        ASSERT_EQ(l.apply({r, ln, w}), ref.coords[slot]) << "warp " << w << " lane " << ln << " register " << r;
        ASSERT_EQ(ownsByMasks(free, w, ln, r), owners[slot]) << "warp " << w << " lane " << ln << " register " << r;
        if (slot % 61 == 0) {
          EXPECT_EQ(layout.coords(shape, w, ln, r), ref.coords[slot]);
          EXPECT_EQ(layout.isOwner(shape, w, ln, r), owners[slot]);
        }
      }
}

TEST(LinearLayoutProperty, BlockedLayoutsMatchTheirDefinition) {
  forRandomCases([](std::mt19937& rng, int rank, Machine m) {
    Layout layout = randomBlocked(rng, rank, m);
    expectLinearFormMatchesDefinition(layout, fitShape(layout, randomShape(rng, rank, int64_t(1) << 12)));
  });
}

TEST(LinearLayoutProperty, SliceLayoutsMatchTheirDefinition) {
  forRandomCases([](std::mt19937& rng, int rank, Machine m) {
    if (rank == ir::kMaxTileRank) return;  // the parent would exceed the maximum rank
    Layout parent = randomBlocked(rng, rank + 1, m);
    Layout layout = Layout::slice(static_cast<int>(pick(rng, 0, rank)), parent);
    expectLinearFormMatchesDefinition(layout, fitShape(layout, randomShape(rng, rank, int64_t(1) << 10)));
    if (rank == 1) {
      Layout twice = Layout::slice(static_cast<int>(pick(rng, 0, 1)),
                                   Layout::slice(static_cast<int>(pick(rng, 0, 2)), randomBlocked(rng, 3, m)));
      expectLinearFormMatchesDefinition(twice, fitShape(twice, randomShape(rng, 1, int64_t(1) << 10)));
    }
  });
}

TEST(LinearLayoutProperty, LinearLayoutsOwnTheirLowestHolder) {
  // #linear layouts with random bases: repeated and zero bases, and bases mixing dimensions. The owner given by the
  // free-variable masks (and by ir::Layout::isOwner) is the lowest thread holding the element, then its lowest
  // register, exactly once per element.
  forRandomCases([](std::mt19937& rng, int rank, Machine m) {
    Shape shape = randomShape(rng, rank, 256);
    LinearLayout l = randomLinear(rng, shape, m);
    SCOPED_TRACE(l.str());
    Layout layout = Layout::linear(l);
    SlotTable slots = slotsOf(l);
    std::vector<bool> owners = referenceOwners(slots, shape);
    std::vector<uint64_t> free = l.freeVariableMasks();
    for (int64_t w = 0; w < m.numWarps; ++w)
      for (int64_t ln = 0; ln < m.warpSize; ++ln)
        for (int64_t r = 0; r < slots.registers; ++r) {
          size_t slot = static_cast<size_t>((w * m.warpSize + ln) * slots.registers + r);
          ASSERT_EQ(ownsByMasks(free, w, ln, r), owners[slot]) << "warp " << w << " lane " << ln << " register " << r;
          if (slot % 37 == 0) {
            EXPECT_EQ(layout.isOwner(shape, w, ln, r), owners[slot]);
            EXPECT_EQ(layout.coords(shape, w, ln, r), slots.coords[slot]);
          }
        }
    EXPECT_EQ(layout.warpSize(), m.warpSize);
    EXPECT_EQ(layout.numWarps(), m.numWarps);
    EXPECT_EQ(layout.toLinear(shape), l);
  });
}

TEST(LinearLayoutProperty, SlicesOfLinearLayoutsAreSlicesOfWhatTheySpell) {
  // A #linear layout is defined over one shape; slicing it (what reduce does) gives the slice of the layout it
  // spells, over that shape with the dimension removed.
  forRandomCases([](std::mt19937& rng, int rank, Machine m) {
    if (rank == 1) return;
    Layout blocked = randomBlocked(rng, rank, m);
    Shape shape = fitShape(blocked, randomShape(rng, rank, int64_t(1) << 10));
    Layout linear = Layout::linear(blocked.toLinear(shape));
    SCOPED_TRACE(linear.str());
    for (int d = 0; d < rank; ++d) {
      Shape sliced = shape;
      sliced.erase(sliced.begin() + d);
      EXPECT_EQ(Layout::slice(d, linear).toLinear(sliced), Layout::slice(d, blocked).toLinear(sliced));
      if (rank == 3) {
        EXPECT_EQ(Layout::slice(0, Layout::slice(d, linear)).toLinear({sliced[1]}),
                  Layout::slice(0, Layout::slice(d, blocked)).toLinear({sliced[1]}));
      }
      Shape other = sliced;
      other[0] *= 2;
      EXPECT_THROW(Layout::slice(d, linear).registersPerThread(other), Error);
    }
  });
}

TEST(LinearLayoutProperty, BlockedLayoutsAreProductsOfIdentities) {
  // A 1-D blocked layout whose CTA tile is the shape is spt registers, then tpw lanes, then wpc warps, each an
  // identity placed above the previous ones.
  forRandomCases([](std::mt19937& rng, int rank, Machine m) {
    if (rank != 1) return;
    int64_t spt = int64_t(1) << pick(rng, 0, 3);
    Layout blocked = Layout::blocked({spt}, {m.warpSize}, {m.numWarps}, {0});
    LinearLayout product = LinearLayout::identity1D(spt, ir::kRegisterDim, "dim0") *
                           LinearLayout::identity1D(m.warpSize, ir::kLaneDim, "dim0") *
                           LinearLayout::identity1D(m.numWarps, ir::kWarpDim, "dim0");
    EXPECT_EQ(blocked.toLinear({spt * m.warpSize * m.numWarps}), product);
  });
}

// ------------------------------------------------------------------------------------ shared layouts

TEST(LinearLayoutProperty, SharedLayoutsInvertTheirOffsets) {
  forRandomCases([](std::mt19937& rng, int rank, Machine) {
    Layout layout = Layout::shared(int64_t(1) << pick(rng, 0, 3), int64_t(1) << pick(rng, 0, 2),
                                   int64_t(1) << pick(rng, 0, 3), randomOrder(rng, rank));
    Shape shape = randomShape(rng, rank, int64_t(1) << 12);
    SCOPED_TRACE(layout.str() + " over " + ::testing::PrintToString(shape));
    LinearLayout l = layout.toLinear(shape);
    ASSERT_TRUE(l.isInvertible());
    LinearLayout inverse = l.invert();
    for (int64_t e = 0; e < numElements(shape); ++e) {
      Coords c = unflatten(e, shape);
      int64_t offset = layout.sharedOffset(shape, c);
      ASSERT_EQ(l.apply({offset}), c) << "offset " << offset;
      ASSERT_EQ(inverse.apply(c), (Coords{offset}));
    }
  });
}

TEST(LinearLayout, SwizzledSharedLayoutWorkedExample) {
  // docs/Layouts.md: #shared{max_phase = 4, order = [1, 0], per_phase = 1, vec = 4} over 8x16. Offset bits 0-3 walk
  // the row; row bits XOR their phase into the vector index (bits 2-3 of the column).
  LinearLayout l = Layout::shared(4, 1, 4, {1, 0}).toLinear({8, 16});
  EXPECT_EQ(l.str(), "offset = [[0, 1], [0, 2], [0, 4], [0, 8], [1, 4], [2, 8], [4, 0]] -> dim0 = 8, dim1 = 16");
  EXPECT_EQ(l.invert().apply({3, 5}), (Coords{57}));
}

// ------------------------------------------------------------------------------------ algebra

TEST(LinearLayoutProperty, CompositionAndInversionRoundTrip) {
  forRandomCases([](std::mt19937& rng, int rank, Machine m) {
    Layout layout = randomDistributed(rng, rank, m);
    Shape shape = fitShape(layout, randomShape(rng, rank, int64_t(1) << 10));
    LinearLayout p = randomPermutationOf(rng, shape);
    SCOPED_TRACE(p.str());
    ASSERT_TRUE(p.isInvertible());
    LinearLayout inv = p.invert();
    EXPECT_EQ(inv.invert(), p);
    for (int64_t e = 0; e < numElements(shape); ++e) {
      Coords c = unflatten(e, shape);
      ASSERT_EQ(inv.apply(p.apply(c)), c);
      ASSERT_EQ(p.compose(inv).apply(c), c);
    }
    // A distributed layout composed with the permutation: evaluation composes.
    LinearLayout l = layout.toLinear(shape);
    LinearLayout lp = l.compose(p);
    for (int64_t r = 0; r < l.inDimSize(ir::kRegisterDim); ++r)
      for (int64_t ln = 0; ln < m.warpSize; ln += 3)
        for (int64_t w = 0; w < m.numWarps; ++w) ASSERT_EQ(lp.apply({r, ln, w}), p.apply(l.apply({r, ln, w})));
    EXPECT_EQ(lp.compose(inv), l);
  });
}

// Simulates a layout conversion on host arrays: every source slot holds its element's flat index; every destination
// slot reads the source slot invertAndCompose names. Each destination slot must end up with its own element, read
// from the owner of that element.
void expectConversionMovesEveryElement(const LinearLayout& src, const LinearLayout& dst, const Shape& shape) {
  SCOPED_TRACE("from " + src.str() + " to " + dst.str());
  LinearLayout conversion = dst.invertAndCompose(src);  // destination slot -> source slot
  std::vector<uint64_t> srcFree = src.freeVariableMasks();
  const int64_t srcRegs = src.inDimSize(ir::kRegisterDim), srcLanes = src.inDimSize(ir::kLaneDim);
  std::vector<int64_t> srcValues;  // per source slot, thread-major
  for (int64_t w = 0; w < src.inDimSize(ir::kWarpDim); ++w)
    for (int64_t ln = 0; ln < srcLanes; ++ln)
      for (int64_t r = 0; r < srcRegs; ++r) srcValues.push_back(flatIndex(shape, src.apply({r, ln, w})));
  for (int64_t w = 0; w < dst.inDimSize(ir::kWarpDim); ++w)
    for (int64_t ln = 0; ln < dst.inDimSize(ir::kLaneDim); ++ln)
      for (int64_t r = 0; r < dst.inDimSize(ir::kRegisterDim); ++r) {
        Coords from = conversion.apply({r, ln, w});  // (register, lane, warp) of the source
        ASSERT_TRUE(ownsByMasks(srcFree, from[2], from[1], from[0]));
        int64_t value = srcValues[(from[2] * srcLanes + from[1]) * srcRegs + from[0]];
        ASSERT_EQ(value, flatIndex(shape, dst.apply({r, ln, w}))) << "warp " << w << " lane " << ln << " register " << r;
      }
}

TEST(LinearLayoutProperty, ConversionsBetweenRandomLayoutsMoveEveryElement) {
  forRandomCases([](std::mt19937& rng, int rank, Machine m) {
    Layout a = randomDistributed(rng, rank, m), b = randomDistributed(rng, rank, m);
    Shape shape = fitShape(b, fitShape(a, randomShape(rng, rank, int64_t(1) << 10)));
    std::vector<LinearLayout> layouts = {a.toLinear(shape), b.toLinear(shape), randomLinear(rng, shape, m)};
    for (const LinearLayout& src : layouts)
      for (const LinearLayout& dst : layouts) expectConversionMovesEveryElement(src, dst, shape);
  });
}

TEST(LinearLayoutProperty, ConversionsThroughSharedMemoryReadEveryElement) {
  // Through a swizzled shared buffer: offset = inverse(shared)(coords); a distributed layout reads offset
  // conversion(slot). Writing every element once and reading it back gives every slot its element.
  forRandomCases([](std::mt19937& rng, int rank, Machine m) {
    Shape shape = randomShape(rng, rank, int64_t(1) << 10);
    Layout shared = Layout::shared(int64_t(1) << pick(rng, 0, 3), int64_t(1) << pick(rng, 0, 2),
                                   int64_t(1) << pick(rng, 0, 3), randomOrder(rng, rank));
    Layout reader = randomDistributed(rng, rank, m);
    shape = fitShape(reader, shape);
    LinearLayout smem = shared.toLinear(shape);
    LinearLayout dst = reader.toLinear(shape);
    SCOPED_TRACE(smem.str() + " read as " + dst.str());
    std::vector<int64_t> buffer(numElements(shape), -1);
    for (int64_t e = 0; e < numElements(shape); ++e) buffer[shared.sharedOffset(shape, unflatten(e, shape))] = e;
    LinearLayout reads = dst.invertAndCompose(smem);  // slot -> offset
    for (int64_t w = 0; w < m.numWarps; ++w)
      for (int64_t ln = 0; ln < m.warpSize; ++ln)
        for (int64_t r = 0; r < dst.inDimSize(ir::kRegisterDim); ++r)
          ASSERT_EQ(buffer[reads.apply({r, ln, w})[0]], flatIndex(shape, dst.apply({r, ln, w})));
  });
}

// ------------------------------------------------------------------------------------ conversion plans

// Runs `plan` on host arrays: destination register r of thread (warp, lane) reads source register
// plan.sourceRegister[r] of its own thread (register permutation) or of lane plan.sourceLaneOf(r, lane) of its warp
// (warp shuffle). Every destination slot must get its own element.
void expectPlanMovesEveryElement(const ir::ConversionPlan& plan, const LinearLayout& src, const LinearLayout& dst) {
  ASSERT_NE(plan.kind, ir::ConversionKind::SharedMemory);
  ASSERT_EQ(static_cast<int64_t>(plan.sourceRegister.size()), dst.inDimSize(ir::kRegisterDim));
  for (int64_t w = 0; w < dst.inDimSize(ir::kWarpDim); ++w)
    for (int64_t ln = 0; ln < dst.inDimSize(ir::kLaneDim); ++ln)
      for (int64_t r = 0; r < dst.inDimSize(ir::kRegisterDim); ++r) {
        int64_t fromLane = plan.kind == ir::ConversionKind::WarpShuffle ? plan.sourceLaneOf(r, ln) : ln;
        ASSERT_EQ(src.apply({plan.sourceRegister[r], fromLane, w}), dst.apply({r, ln, w}))
            << ir::conversionKindName(plan.kind) << ": warp " << w << " lane " << ln << " register " << r;
      }
}

// The definition of a register permutation, by brute force: each destination register is, in every thread, the
// element of one fixed source register of that thread.
bool remappableInRegisters(const LinearLayout& src, const LinearLayout& dst) {
  for (int64_t r = 0; r < dst.inDimSize(ir::kRegisterDim); ++r) {
    bool found = false;
    for (int64_t q = 0; q < src.inDimSize(ir::kRegisterDim) && !found; ++q) {
      found = true;
      for (int64_t w = 0; w < dst.inDimSize(ir::kWarpDim) && found; ++w)
        for (int64_t ln = 0; ln < dst.inDimSize(ir::kLaneDim) && found; ++ln)
          found = src.apply({q, ln, w}) == dst.apply({r, ln, w});
    }
    if (!found) return false;
  }
  return true;
}

// `l` with its lane bases mixed among themselves (an invertible change of lane numbering): the same elements in
// each warp and register, held by other lanes.
LinearLayout withLanesMixed(std::mt19937& rng, const LinearLayout& l) {
  std::vector<LinearLayout::InDim> ins = l.inDims();
  std::vector<LinearLayout::Basis>& lanes = ins[l.inDimIndex(ir::kLaneDim)].bases;
  std::shuffle(lanes.begin(), lanes.end(), rng);
  for (size_t i = 1; i < lanes.size(); ++i)
    if (pick(rng, 0, 1) == 1)
      for (size_t k = 0; k < lanes[i].size(); ++k) lanes[i][k] ^= lanes[pick(rng, 0, static_cast<int64_t>(i) - 1)][k];
  return LinearLayout(std::move(ins), l.outDims());
}

TEST(LinearLayoutProperty, ConversionPlansMoveEveryElementAndFindEveryRegisterPermutation) {
  int permutations = 0, shuffles = 0, viaShared = 0;
  forRandomCases([&](std::mt19937& rng, int rank, Machine m) {
    Layout a = randomDistributed(rng, rank, m), b = randomDistributed(rng, rank, m);
    Shape shape = fitShape(b, fitShape(a, randomShape(rng, rank, int64_t(1) << 10)));
    const LinearLayout la = a.toLinear(shape);
    std::vector<LinearLayout> layouts = {la, b.toLinear(shape), randomLinear(rng, shape, m), withLanesMixed(rng, la)};
    for (const LinearLayout& src : layouts)
      for (const LinearLayout& dst : layouts) {
        SCOPED_TRACE("from " + src.str() + " to " + dst.str());
        ir::ConversionPlan plan = ir::planConversion(src, dst);
        ASSERT_EQ(plan.kind == ir::ConversionKind::RegisterPermutation, remappableInRegisters(src, dst));
        permutations += plan.kind == ir::ConversionKind::RegisterPermutation;
        shuffles += plan.kind == ir::ConversionKind::WarpShuffle;
        viaShared += plan.kind == ir::ConversionKind::SharedMemory;
        if (plan.kind != ir::ConversionKind::SharedMemory) expectPlanMovesEveryElement(plan, src, dst);
      }
    // Lanes renumbered within each warp: never through shared memory.
    EXPECT_NE(ir::planConversion(la, layouts[3]).kind, ir::ConversionKind::SharedMemory);
  });
  // Every kind occurs, so the comparisons mean something.
  EXPECT_GT(permutations, 0);
  EXPECT_GT(shuffles, 0);
  EXPECT_GT(viaShared, 0);
}

TEST(LinearLayout, ConversionPlanWorkedExamples) {
  const int64_t kWarp = 32;
  const Shape shape = {8, 4};
  auto blocked = [](std::vector<int64_t> tpw, std::vector<int64_t> order) {
    return Layout::blocked({1, 1}, tpw, {1, 1}, order);
  };
  // 8x4 over one warp, row-major lanes (lane = 4 * row + col) -> column-major lanes (lane = 8 * col + row): lane l
  // reads lane 4 * (l % 8) + l / 8, one shuffle.
  LinearLayout rows = blocked({8, 4}, {1, 0}).toLinear(shape), cols = blocked({8, 4}, {0, 1}).toLinear(shape);
  ir::ConversionPlan shuffle = ir::planConversion(rows, cols);
  ASSERT_EQ(shuffle.kind, ir::ConversionKind::WarpShuffle);
  EXPECT_EQ(shuffle.sourceRegister, std::vector<int64_t>{0});
  for (int64_t l = 0; l < kWarp; ++l) EXPECT_EQ(shuffle.sourceLaneOf(0, l), 4 * (l % 8) + l / 8) << "lane " << l;
  // The same layout: registers stay where they are.
  ir::ConversionPlan same = ir::planConversion(rows, rows);
  EXPECT_EQ(same.kind, ir::ConversionKind::RegisterPermutation);
  EXPECT_EQ(same.sourceRegister, std::vector<int64_t>{0});
  // 2 registers per thread along the row -> along the column, one warp of 16x2 threads over 32x4: each lane needs
  // an element of another lane's other register, whose index depends on the reading lane: shared memory.
  LinearLayout alongRows = Layout::blocked({1, 2}, {16, 2}, {1, 1}, {1, 0}).toLinear({32, 4});
  LinearLayout alongCols = Layout::blocked({2, 1}, {16, 2}, {1, 1}, {0, 1}).toLinear({32, 4});
  EXPECT_EQ(ir::planConversion(alongRows, alongCols).kind, ir::ConversionKind::SharedMemory);
  // Registers renamed: a 4-register row read in the opposite register order is a permutation.
  LinearLayout vec = Layout::blocked({4}, {32}, {1}, {0}).toLinear({128});
  LinearLayout reversed({{ir::kRegisterDim, {{2}, {1}}}, {ir::kLaneDim, vec.inDim(ir::kLaneDim).bases},
                         {ir::kWarpDim, {}}},
                        vec.outDims());
  ir::ConversionPlan renamed = ir::planConversion(vec, reversed);
  ASSERT_EQ(renamed.kind, ir::ConversionKind::RegisterPermutation);
  EXPECT_EQ(renamed.sourceRegister, (std::vector<int64_t>{0, 2, 1, 3}));
  // Different warp counts are an error.
  EXPECT_THROW(ir::planConversion(vec, Layout::blocked({4}, {32}, {2}, {0}).toLinear({256})), Error);
}

TEST(LinearLayoutProperty, ReshapeTransposeAndRemoveAgreeWithEvaluation) {
  forRandomCases([](std::mt19937& rng, int rank, Machine m) {
    Layout layout = randomDistributed(rng, rank, m);
    Shape shape = fitShape(layout, randomShape(rng, rank, int64_t(1) << 10));
    LinearLayout l = layout.toLinear(shape);
    SCOPED_TRACE(l.str());
    LinearLayout flat = l.reshapeOuts({{"flat", numElements(shape)}});
    std::vector<std::string> reversed = ir::tensorDimNames(rank);
    std::reverse(reversed.begin(), reversed.end());
    LinearLayout transposed = l.transposeOuts(reversed);
    LinearLayout removed = l.removeOutDim(ir::tensorDimName(rank - 1));
    for (int64_t r = 0; r < l.inDimSize(ir::kRegisterDim); ++r)
      for (int64_t ln = 0; ln < m.warpSize; ln += 5)
        for (int64_t w = 0; w < m.numWarps; ++w) {
          Coords c = l.apply({r, ln, w});
          ASSERT_EQ(flat.apply({r, ln, w}), (Coords{flatIndex(shape, c)}));
          Coords rev(c.rbegin(), c.rend());
          ASSERT_EQ(transposed.apply({r, ln, w}), rev);
          c.pop_back();
          ASSERT_EQ(removed.apply({r, ln, w}), c);
        }
    EXPECT_EQ(flat.reshapeOuts(l.outDims()), l);
    EXPECT_EQ(transposed.transposeOuts(ir::tensorDimNames(rank)), l);
  });
}

TEST(LinearLayoutProperty, ConsecutiveRegistersMatchEvaluation) {
  forRandomCases([](std::mt19937& rng, int rank, Machine m) {
    Layout layout = randomDistributed(rng, rank, m);
    LinearLayout l = layout.toLinear(fitShape(layout, randomShape(rng, rank, int64_t(1) << 12)));
    SCOPED_TRACE(l.str());
    for (int d = 0; d < rank; ++d) {
      // By evaluation: the longest power-of-two run of registers 0, 1, .. stepping by 1 along d from the origin.
      int64_t run = 1;
      while (run < l.inDimSize(ir::kRegisterDim)) {
        bool ok = true;
        for (int64_t r = run; r < 2 * run && ok; ++r) {
          Coords expect(rank, 0);
          expect[d] = r;
          ok = l.apply({r, 0, 0}) == expect;
        }
        if (!ok) break;
        run *= 2;
      }
      EXPECT_EQ(l.consecutiveAlong(ir::kRegisterDim, ir::tensorDimName(d)), run) << "along dim" << d;
    }
  });
}

TEST(LinearLayout, WorkedExamples) {
  // docs/Layouts.md, 2-D row-major blocked over 8x64: registers along dim 1 (1, 2), lanes 4..32 along dim 1 then
  // rows, warps down the rows.
  Layout blocked = Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0});
  LinearLayout l = blocked.toLinear({8, 64});
  EXPECT_EQ(l.str(),
            "register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]] "
            "-> dim0 = 8, dim1 = 64");
  EXPECT_EQ(l.apply({3, 17, 3}), (Coords{7, 7}));
  EXPECT_EQ(l.consecutiveAlong(ir::kRegisterDim, "dim1"), 4);
  // Over 2x8 the CTA tile wraps: lane bits past column 8 and warp bits past row 2 only replicate.
  LinearLayout small = blocked.toLinear({2, 8});
  EXPECT_EQ(small.str(),
            "register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 0], [0, 0], [0, 0], [1, 0]], warp = [[0, 0], [0, 0]] "
            "-> dim0 = 2, dim1 = 8");
  EXPECT_EQ(small.freeVariableMasks(), (std::vector<uint64_t>{0, 0b01110, 0b11}));
  // The slice over 32 rows: the registers along dim 1 collapse, 4 repetitions of the 8-row CTA tile remain.
  LinearLayout rows = Layout::slice(1, blocked).toLinear({32});
  EXPECT_EQ(rows.str(),
            "register = [[8], [16]], lane = [[0], [0], [0], [0], [1]], warp = [[2], [4]] -> dim0 = 32");
  EXPECT_EQ(rows.apply({3, 16, 3}), (Coords{31}));
}

TEST(LinearLayout, ProductsStackFactorsAboveEachOther) {
  LinearLayout regs = LinearLayout::identity1D(2, "register", "dim1");
  LinearLayout lanes = LinearLayout::identity1D(4, "lane", "dim1") * LinearLayout::identity1D(8, "lane", "dim0");
  LinearLayout l = regs * lanes;
  // Coordinates are listed in the order of the output dimensions: (dim1, dim0).
  EXPECT_EQ(l.str(), "register = [[1, 0]], lane = [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]] -> dim1 = 8, dim0 = 8");
  EXPECT_EQ(l.transposeOuts({"dim0", "dim1"}).apply({1, 31}), (Coords{7, 7}));
  LinearLayout replicated = LinearLayout::identity1D(4, "lane", "dim0") * LinearLayout::zeros1D(8, "lane", "dim0");
  EXPECT_EQ(replicated.freeVariableMasks(), (std::vector<uint64_t>{0b11100}));
  EXPECT_FALSE(replicated.isInjective());
  EXPECT_TRUE(replicated.isSurjective());
}

TEST(LinearLayout, RedundantBasesAreDroppedKeepingTheFirstOccurrence) {
  LinearLayout l({{"register", {{1}, {0}, {2}, {3}}}}, {{"dim0", 4}});
  LinearLayout kept = l.withoutRedundantBases("register");
  EXPECT_EQ(kept.str(), "register = [[1], [2]] -> dim0 = 4");
  EXPECT_EQ(l.freeVariableMasks(), (std::vector<uint64_t>{0b1010}));
}

TEST(LinearLayout, OperationsOnLayoutsTooLargeToEnumerate) {
  // 2^40 inputs onto 2^40 elements: everything works on the 40 bases alone.
  LinearLayout wide = LinearLayout::identity1D(int64_t(1) << 20, "register", "dim0") *
                      LinearLayout::identity1D(int64_t(1) << 20, "lane", "dim1");
  LinearLayout inv = wide.invert();
  EXPECT_EQ(inv.apply({12345, 678910}), (Coords{12345, 678910}));
  EXPECT_EQ(wide.invertAndCompose(wide), LinearLayout::identity1D(int64_t(1) << 20, "register", "register") *
                                             LinearLayout::identity1D(int64_t(1) << 20, "lane", "lane"));
  EXPECT_EQ(wide.freeVariableMasks(), (std::vector<uint64_t>{0, 0}));
}

TEST(LinearLayout, BadLayoutsAndOperationsAreClearErrors) {
  auto expectError = [](const std::function<void()>& f, const std::string& part) {
    try {
      f();
      ADD_FAILURE() << "no error; expected one mentioning '" << part << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expectError([] { LinearLayout({{"register", {{1}}}}, {{"dim0", 3}}); }, "not a power of two");
  expectError([] { LinearLayout({{"register", {{4}}}}, {{"dim0", 4}}); }, "outside output dimension 'dim0'");
  expectError([] { LinearLayout({{"register", {{1, 0}}}}, {{"dim0", 4}}); }, "has 2 coordinates");
  expectError([] { LinearLayout({{"lane", {}}, {"lane", {}}}, {}); }, "appears twice");
  expectError([] { LinearLayout::withInferredSizes({{"register", {{1}, {4}}}}, {"dim0"}); }, "not surjective");
  LinearLayout replicated({{"lane", {{1}, {0}}}}, {{"dim0", 2}});
  expectError([&] { replicated.invert(); }, "not bijective");
  LinearLayout half({{"lane", {{1}}}}, {{"dim0", 4}});
  LinearLayout full = LinearLayout::identity1D(4, "lane", "dim0");
  expectError([&] { full.invertAndCompose(half); }, "is no image of");
  expectError([&] { full.compose(full); }, "cannot compose");
  expectError([&] { full.apply({4}); }, "outside 'lane'");
  expectError([&] { full.transposeOuts({"dim1"}); }, "not a permutation");
  expectError([&] { full.reshapeOuts({{"dim0", 8}}); }, "different number of elements");
  // ir::Layout over a shape that is not a tile shape, and a #linear layout over another shape.
  expectError([] { Layout::blocked({1}, {32}, {1}, {0}).toLinear({48}); }, "not a tile shape");
  Layout linear = Layout::linear(Layout::blocked({1}, {32}, {1}, {0}).toLinear({32}));
  expectError([&] { linear.registersPerThread({64}); }, "is over the shape [32], not [64]");
  expectError([] { Layout::linear(LinearLayout({{"register", {}}, {"lane", {{1}}}, {"warp", {}}}, {{"dim0", 4}})); },
              "does not hold every element");
  expectError([] { Layout::linear(LinearLayout::identity1D(4, "lane", "dim0")); }, "expected input dimensions");
  expectError([] { Layout::linearShared(LinearLayout({{"offset", {{1}, {1}}}}, {{"dim0", 2}})); },
              "does not give every element its own offset");
}

}  // namespace
