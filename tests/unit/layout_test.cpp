// Tests of ir/Layout: blocked/slice/shared layouts checked by brute force over whole tiles (every element is
// held, exactly one owner, register counts), the exact coordinates of small worked examples, shared-memory
// swizzles forming permutations, and encoding attribute round trips (including through the IR text format).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "ir/Error.h"
#include "ir/Layout.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/SharedRuns.h"
#include "ir/Verifier.h"

namespace {

using namespace tessera;
using ir::Layout;
using Shape = std::vector<int64_t>;

int64_t numElements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

int64_t linearIndex(const Shape& shape, const std::vector<int64_t>& c) {
  int64_t idx = 0;
  for (size_t d = 0; d < shape.size(); ++d) idx = idx * shape[d] + c[d];
  return idx;
}

// Walks every (warp, lane, register) of `layout` over `shape`, checking coordinates are in range, and returns per
// element the number of (thread, register) slots holding it and the number of owners.
struct Coverage {
  std::vector<int64_t> holders, owners;
};

Coverage cover(const Layout& layout, const Shape& shape) {
  Coverage c{std::vector<int64_t>(numElements(shape)), std::vector<int64_t>(numElements(shape))};
  int64_t regs = layout.registersPerThread(shape);
  for (int64_t w = 0; w < layout.numWarps(); ++w)
    for (int64_t l = 0; l < layout.warpSize(); ++l)
      for (int64_t r = 0; r < regs; ++r) {
        std::vector<int64_t> xs = layout.coords(shape, w, l, r);
        EXPECT_EQ(xs.size(), shape.size());
        for (size_t d = 0; d < shape.size(); ++d) {
          EXPECT_GE(xs[d], 0);
          EXPECT_LT(xs[d], shape[d]);
        }
        int64_t idx = linearIndex(shape, xs);
        c.holders[idx]++;
        c.owners[idx] += layout.isOwner(shape, w, l, r);
      }
  return c;
}

void expectFullCoverageOneOwner(const Layout& layout, const Shape& shape) {
  SCOPED_TRACE(layout.str());
  Coverage c = cover(layout, shape);
  int64_t threads = layout.numWarps() * layout.warpSize();
  for (size_t i = 0; i < c.holders.size(); ++i) {
    EXPECT_GE(c.holders[i], 1) << "element " << i << " is held by no thread";
    EXPECT_EQ(c.owners[i], 1) << "element " << i;
  }
  int64_t totalSlots = threads * layout.registersPerThread(shape);
  int64_t held = 0;
  for (int64_t h : c.holders) held += h;
  EXPECT_EQ(held, totalSlots);
}

// Brute-force definition of ownership: lowest thread (warp-major) holding the element, then its lowest register.
void expectOwnerIsLowestThread(const Layout& layout, const Shape& shape) {
  SCOPED_TRACE(layout.str());
  std::map<int64_t, std::pair<int64_t, int64_t>> first;  // element -> (thread id, register)
  int64_t regs = layout.registersPerThread(shape);
  for (int64_t w = 0; w < layout.numWarps(); ++w)
    for (int64_t l = 0; l < layout.warpSize(); ++l)
      for (int64_t r = 0; r < regs; ++r) {
        int64_t idx = linearIndex(shape, layout.coords(shape, w, l, r));
        first.emplace(idx, std::make_pair(w * layout.warpSize() + l, r));  // keeps the first insertion
      }
  for (int64_t w = 0; w < layout.numWarps(); ++w)
    for (int64_t l = 0; l < layout.warpSize(); ++l)
      for (int64_t r = 0; r < regs; ++r) {
        int64_t idx = linearIndex(shape, layout.coords(shape, w, l, r));
        bool expected = first[idx] == std::make_pair(w * layout.warpSize() + l, r);
        EXPECT_EQ(layout.isOwner(shape, w, l, r), expected) << "warp " << w << " lane " << l << " reg " << r;
      }
}

TEST(BlockedLayout, WorkedExampleCoordinates) {
  // 4 lanes x 2 regs along dim 0 of a 16-element tile with one warp of 4 lanes and 2 warps: CTA tile = 16.
  Layout l = Layout::blocked({2}, {4}, {2}, {0});
  Shape s = {16};
  EXPECT_EQ(l.registersPerThread(s), 2);
  EXPECT_EQ(l.coords(s, 0, 0, 0), (std::vector<int64_t>{0}));
  EXPECT_EQ(l.coords(s, 0, 0, 1), (std::vector<int64_t>{1}));
  EXPECT_EQ(l.coords(s, 0, 3, 1), (std::vector<int64_t>{7}));
  EXPECT_EQ(l.coords(s, 1, 0, 0), (std::vector<int64_t>{8}));
  // A 64-element tile needs 4 repetitions of the CTA tile: registers (spt idx fastest, then rep).
  Shape big = {64};
  EXPECT_EQ(l.registersPerThread(big), 8);
  EXPECT_EQ(l.coords(big, 1, 2, 0), (std::vector<int64_t>{12}));
  EXPECT_EQ(l.coords(big, 1, 2, 1), (std::vector<int64_t>{13}));
  EXPECT_EQ(l.coords(big, 1, 2, 2), (std::vector<int64_t>{28}));
  EXPECT_EQ(l.coords(big, 1, 2, 7), (std::vector<int64_t>{61}));
}

TEST(BlockedLayout, TwoDimensionalOrderDecidesLaneAndRegisterOrder) {
  // Row-major (dim 1 fastest): lanes walk dim 1 first.
  Layout rowMajor = Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0});
  Shape s = {8, 64};
  EXPECT_EQ(rowMajor.registersPerThread(s), 4);
  EXPECT_EQ(rowMajor.coords(s, 0, 1, 0), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(rowMajor.coords(s, 0, 16, 3), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(rowMajor.coords(s, 3, 17, 2), (std::vector<int64_t>{7, 6}));
  // Column-major (dim 0 fastest).
  Layout colMajor = Layout::blocked({4, 1}, {16, 2}, {1, 4}, {0, 1});
  Shape t = {64, 8};
  EXPECT_EQ(colMajor.coords(t, 0, 1, 0), (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(colMajor.coords(t, 0, 16, 3), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(colMajor.coords(t, 3, 17, 2), (std::vector<int64_t>{6, 7}));
}

TEST(BlockedLayout, RegisterCountsIncludeRepetitions) {
  Layout l = Layout::blocked({1, 4}, {4, 8}, {2, 2}, {1, 0});  // CTA tile 8 x 64
  EXPECT_EQ(l.registersPerThread({8, 64}), 4);
  EXPECT_EQ(l.registersPerThread({32, 64}), 16);
  EXPECT_EQ(l.registersPerThread({32, 128}), 32);
  EXPECT_EQ(l.registersPerThread({2, 16}), 4);  // smaller than the CTA tile: replicated, not fewer registers
}

TEST(BlockedLayout, EveryElementHeldWithExactlyOneOwner) {
  struct Case {
    Layout layout;
    Shape shape;
  };
  std::vector<Case> cases = {
      {Layout::blocked({4}, {32}, {4}, {0}), {512}},
      {Layout::blocked({4}, {32}, {4}, {0}), {2048}},
      {Layout::blocked({4}, {32}, {4}, {0}), {64}},  // replicated across warps
      {Layout::blocked({8}, {32}, {4}, {0}), {4}},   // replicated inside a thread's own registers too
      {Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0}), {32, 64}},
      {Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0}), {2, 8}},
      {Layout::blocked({4, 1}, {16, 2}, {1, 4}, {0, 1}), {64, 16}},
      {Layout::blocked({2, 2}, {4, 8}, {2, 2}, {0, 1}), {4, 128}},
      {Layout::blocked({1, 1, 2}, {2, 4, 4}, {2, 1, 2}, {2, 1, 0}), {4, 8, 16}},
      {Layout::blocked({1, 1, 2}, {2, 4, 4}, {2, 1, 2}, {2, 0, 1}), {2, 2, 2}},
      {Layout::blocked({1}, {64}, {2}, {0}), {256}},  // a 64-lane target
  };
  for (const Case& c : cases) {
    expectFullCoverageOneOwner(c.layout, c.shape);
    expectOwnerIsLowestThread(c.layout, c.shape);
  }
}

TEST(SliceLayout, RemovesTheSlicedDimensionAndDeduplicates) {
  Layout parent = Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0});  // CTA tile 8 x 64
  Layout rows = Layout::slice(1, parent);                            // what reduce(axis=1) of 32x64 produces
  EXPECT_EQ(rows.rank(), 1);
  EXPECT_EQ(rows.warpSize(), 32);
  EXPECT_EQ(rows.numWarps(), 4);
  // Over 32 rows: 4 repetitions of the 8-row CTA tile; the 4 registers along dim 1 collapse to one.
  EXPECT_EQ(rows.registersPerThread({32}), 4);
  EXPECT_EQ(rows.coords({32}, 0, 0, 0), (std::vector<int64_t>{0}));
  EXPECT_EQ(rows.coords({32}, 0, 16, 0), (std::vector<int64_t>{1}));
  EXPECT_EQ(rows.coords({32}, 3, 16, 3), (std::vector<int64_t>{31}));
  Layout cols = Layout::slice(0, parent);  // reduce(axis=0)
  EXPECT_EQ(cols.registersPerThread({64}), 4);
  EXPECT_EQ(cols.coords({64}, 2, 17, 0), (std::vector<int64_t>{4}));
  EXPECT_EQ(cols.coords({64}, 2, 17, 3), (std::vector<int64_t>{7}));

  for (const auto& [layout, shape] : std::vector<std::pair<Layout, Shape>>{
           {rows, {32}}, {rows, {4}}, {cols, {64}}, {cols, {256}}, {cols, {16}},
           {Layout::slice(1, Layout::blocked({1, 1, 2}, {2, 4, 4}, {2, 1, 2}, {2, 1, 0})), {4, 16}},
           {Layout::slice(0, Layout::slice(2, Layout::blocked({1, 2, 2}, {2, 4, 4}, {2, 1, 2}, {2, 1, 0}))), {8}}}) {
    expectFullCoverageOneOwner(layout, shape);
    expectOwnerIsLowestThread(layout, shape);
  }
}

TEST(SharedLayout, OffsetsArePermutations) {
  struct Case {
    Layout layout;
    Shape shape;
  };
  std::vector<Case> cases = {
      {Layout::shared(1, 1, 1, {1, 0}), {16, 32}},
      {Layout::shared(4, 1, 8, {1, 0}), {32, 32}},
      {Layout::shared(8, 2, 4, {1, 0}), {64, 64}},
      {Layout::shared(8, 1, 8, {0, 1}), {64, 16}},
      {Layout::shared(8, 1, 8, {1, 0}), {4, 16}},  // max_phase larger than the vectors in a row
      {Layout::shared(16, 1, 8, {1, 0}), {8, 8}},  // vector wider than the row
      {Layout::shared(2, 1, 4, {0}), {64}},
      {Layout::shared(4, 2, 4, {2, 1, 0}), {2, 8, 16}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.layout.str());
    int64_t n = numElements(c.shape);
    std::set<int64_t> offsets;
    std::vector<int64_t> idx(c.shape.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = i;
      for (int d = static_cast<int>(c.shape.size()) - 1; d >= 0; --d) {
        idx[d] = rest % c.shape[d];
        rest /= c.shape[d];
      }
      int64_t off = c.layout.sharedOffset(c.shape, idx);
      EXPECT_GE(off, 0);
      EXPECT_LT(off, n);
      offsets.insert(off);
    }
    EXPECT_EQ(static_cast<int64_t>(offsets.size()), n);
  }
}

TEST(SharedLayout, SwizzleWorkedExample) {
  Layout unswizzled = Layout::shared(1, 1, 1, {1, 0});
  EXPECT_EQ(unswizzled.sharedOffset({8, 16}, {3, 5}), 3 * 16 + 5);
  Layout colMajor = Layout::shared(1, 1, 1, {0, 1});
  EXPECT_EQ(colMajor.sharedOffset({8, 16}, {3, 5}), 5 * 8 + 3);
  // vec 4, per_phase 1, max_phase 4: row 3 xors its vector index with 3; column 5 is in vector 1 -> 1^3 = 2.
  Layout swizzled = Layout::shared(4, 1, 4, {1, 0});
  EXPECT_EQ(swizzled.sharedOffset({8, 16}, {3, 5}), 3 * 16 + 2 * 4 + 1);
  EXPECT_EQ(swizzled.sharedOffset({8, 16}, {0, 5}), 5);
  // per_phase 2: rows 2 and 3 share phase 1.
  Layout paired = Layout::shared(4, 2, 4, {1, 0});
  EXPECT_EQ(paired.sharedOffset({8, 16}, {3, 5}), 3 * 16 + 0 * 4 + 1);
}

TEST(LayoutAttr, RoundTrips) {
  std::vector<Layout> layouts = {
      Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0}),
      Layout::blocked({4}, {32}, {8}, {0}),
      Layout::slice(0, Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0})),
      Layout::slice(1, Layout::slice(0, Layout::blocked({1, 1, 4}, {1, 2, 16}, {4, 1, 1}, {2, 1, 0}))),
      Layout::shared(8, 2, 4, {1, 0}),
  };
  for (const Layout& l : layouts) {
    EXPECT_EQ(Layout::fromAttr(l.toAttr()), l) << l.str();
  }
  EXPECT_EQ(layouts[0].str(), "#blocked{order = [1, 0], spt = [1, 4], tpw = [2, 16], wpc = [4, 1]}");
  EXPECT_EQ(layouts[2].str(),
            "#slice{dim = 0, parent = #blocked{order = [1, 0], spt = [1, 4], tpw = [2, 16], wpc = [4, 1]}}");
  EXPECT_EQ(layouts[4].str(), "#shared{max_phase = 4, order = [1, 0], per_phase = 2, vec = 8}");
  EXPECT_NE(layouts[0], layouts[1]);
  EXPECT_NE(layouts[2], Layout::slice(1, layouts[0]));
}

TEST(LayoutAttr, RoundTripsThroughIRText) {
  Layout blocked = Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0});
  Layout rows = Layout::slice(1, blocked);
  std::string text = "func @f(%a: tile<32x64xf32, " + blocked.str() + ">, %b: tile<32xf32, " + rows.str() +
                     ">) {\n  return\n}\n";
  auto module = ir::parseModule(text);
  ir::Function& f = *module->functions().front();
  EXPECT_EQ(Layout::ofType(f.argument(0)->type()), blocked);
  EXPECT_EQ(Layout::ofType(f.argument(1)->type()), rows);
  ir::Type plain = ir::Type::tile({32, 64}, ir::Type::f32());
  EXPECT_FALSE(Layout::ofType(plain).has_value());
  EXPECT_EQ(blocked.apply(plain), f.argument(0)->type());
  EXPECT_THROW(rows.apply(plain), Error);  // rank mismatch
}

TEST(LayoutAttr, MalformedAttributesThrow) {
  using ir::Attr;
  auto blockedAttr = [](std::vector<int64_t> order, std::vector<int64_t> spt, std::vector<int64_t> tpw,
                        std::vector<int64_t> wpc) {
    return Attr::layout("blocked", {{"order", Attr::intArray(order)},
                                    {"spt", Attr::intArray(spt)},
                                    {"tpw", Attr::intArray(tpw)},
                                    {"wpc", Attr::intArray(wpc)}});
  };
  EXPECT_NO_THROW(Layout::fromAttr(blockedAttr({0}, {4}, {32}, {4})));
  EXPECT_THROW(Layout::fromAttr(blockedAttr({0, 0}, {1, 4}, {2, 16}, {4, 1})), Error);   // order not a permutation
  EXPECT_THROW(Layout::fromAttr(blockedAttr({1, 0}, {1, 4}, {2, 16}, {4})), Error);      // length mismatch
  EXPECT_THROW(Layout::fromAttr(blockedAttr({0}, {3}, {32}, {4})), Error);               // not a power of two
  EXPECT_THROW(Layout::fromAttr(blockedAttr({0}, {0}, {32}, {4})), Error);
  EXPECT_THROW(Layout::fromAttr(Attr::layout("blocked", {{"order", Attr::intArray({0})}})), Error);  // missing
  EXPECT_THROW(Layout::fromAttr(Attr::layout("blocked", {{"order", Attr::integer(0)},
                                                         {"spt", Attr::intArray({4})},
                                                         {"tpw", Attr::intArray({32})},
                                                         {"wpc", Attr::intArray({4})}})),
               Error);  // wrong kind of value
  EXPECT_THROW(Layout::fromAttr(Attr::layout("mma", {})), Error);  // unknown layout
  EXPECT_THROW(Layout::fromAttr(Attr::integer(3)), Error);         // not a layout
  EXPECT_THROW(Layout::fromAttr(Attr::layout("slice", {{"dim", Attr::integer(2)},
                                                       {"parent", blockedAttr({1, 0}, {1, 4}, {2, 16}, {4, 1})}})),
               Error);  // dim out of range
  EXPECT_THROW(Layout::fromAttr(Attr::layout("slice", {{"dim", Attr::integer(0)},
                                                       {"parent", blockedAttr({0}, {4}, {32}, {4})}})),
               Error);  // slicing a rank-1 layout
  EXPECT_THROW(Layout::fromAttr(Attr::layout("shared", {{"max_phase", Attr::integer(3)},
                                                        {"order", Attr::intArray({1, 0})},
                                                        {"per_phase", Attr::integer(1)},
                                                        {"vec", Attr::integer(4)}})),
               Error);
  EXPECT_THROW(Layout::fromAttr(Attr::layout("shared", {{"max_phase", Attr::integer(1)},
                                                        {"order", Attr::intArray({1, 0})},
                                                        {"per_phase", Attr::integer(1)},
                                                        {"vec", Attr::integer(4)},
                                                        {"bogus", Attr::integer(4)}})),
               Error);  // unknown key
}

TEST(LinearLayoutAttr, PrintsParsesAndRoundTrips) {
  // The blocked layout of the worked example, spelled as its linear form.
  Layout blocked = Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0});
  Layout linear = Layout::linear(blocked.toLinear({8, 64}));
  const std::string text =
      "#linear{lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], register = [[0, 1], [0, 2]], warp = [[2, 0], [4, 0]]}";
  EXPECT_EQ(linear.str(), text);
  EXPECT_EQ(Layout::fromAttr(linear.toAttr()), linear);
  EXPECT_EQ(linear.kind(), Layout::Kind::Linear);
  EXPECT_TRUE(linear.isDistributed());
  EXPECT_EQ(linear.rank(), 2);
  EXPECT_EQ(linear.warpSize(), 32);
  EXPECT_EQ(linear.numWarps(), 4);
  expectFullCoverageOneOwner(linear, {8, 64});
  expectOwnerIsLowestThread(linear, {8, 64});
  for (int64_t w = 0; w < 4; ++w)
    for (int64_t l = 0; l < 32; ++l)
      for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(linear.coords({8, 64}, w, l, r), blocked.coords({8, 64}, w, l, r));
  // A replicated linear layout (lane bits 1..3 and the warps hold copies) owns each element once.
  Layout small = Layout::linear(blocked.toLinear({2, 8}));
  expectFullCoverageOneOwner(small, {2, 8});
  expectOwnerIsLowestThread(small, {2, 8});
  // Shared: the swizzled worked example.
  Layout shared = Layout::linearShared(Layout::shared(4, 1, 4, {1, 0}).toLinear({8, 16}));
  EXPECT_EQ(shared.str(), "#linear_shared{offset = [[0, 1], [0, 2], [0, 4], [0, 8], [1, 4], [2, 8], [4, 0]]}");
  EXPECT_EQ(Layout::fromAttr(shared.toAttr()), shared);
  EXPECT_FALSE(shared.isDistributed());
  EXPECT_EQ(shared.sharedOffset({8, 16}, {3, 5}), 57);
  EXPECT_NE(linear, small);
  EXPECT_NE(linear, blocked);
}

TEST(LinearLayoutAttr, TileTypesCarryLinearLayoutsThroughIRText) {
  const std::string text =
      "func @f(%a: tile<8x64xf32, #linear{lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], register = [[0, 1], "
      "[0, 2]], warp = [[2, 0], [4, 0]]}>, %b: tile<8x16xf16, #linear_shared{offset = [[0, 1], [0, 2], [0, 4], "
      "[0, 8], [1, 4], [2, 8], [4, 0]]}>) {\n  return\n}\n";
  auto module = ir::parseModule(text);
  EXPECT_EQ(ir::print(*module), text);
  ir::Function& f = *module->functions().front();
  std::optional<Layout> a = Layout::ofType(f.argument(0)->type());
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(*a, Layout::linear(Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0}).toLinear({8, 64})));
  EXPECT_EQ(Layout::ofType(f.argument(1)->type())->kind(), Layout::Kind::LinearShared);
  // A linear layout is over one shape: applying it to another tile is an error.
  EXPECT_THROW(a->apply(ir::Type::tile({16, 64}, ir::Type::f32())), Error);
}

TEST(LinearLayoutAttr, MalformedLinearLayoutsThrowClearErrors) {
  auto expectError = [](const std::string& attrText, const std::string& part) {
    std::string text = "func @f(%a: tile<8xf32, " + attrText + ">) {\n  return\n}\n";
    try {
      auto module = ir::parseModule(text);
      ir::verify(*module);
      ADD_FAILURE() << attrText << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const std::string lanes = "lane = [[1], [2], [4], [0], [0]]";
  expectError("#linear{" + lanes + ", register = [[1, 0]], warp = []}", "coordinates but there are 2 output dimensions");
  expectError("#linear{" + lanes + ", register = [], warp = [], cta = []}", "unknown parameter 'cta'");
  expectError("#linear{" + lanes + ", warp = []}", "missing 'register'");
  expectError("#linear{" + lanes + ", register = [1], warp = []}", "must be a list of integer lists");
  expectError("#linear{lane = [[1], [4], [0], [0], [0]], register = [], warp = []}", "not surjective");
  expectError("#linear{lane = [], register = [], warp = []}", "has no basis");
  expectError("#linear{lane = [[1], [2], [0], [0], [0]], register = [], warp = []}", "is over the shape [4], not [8]");
  expectError("#linear_shared{offset = [[1], [2], [2]]}", "does not give every element its own offset");
}

TEST(LayoutQueries, BadQueriesThrow) {
  Layout l = Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0});
  EXPECT_THROW(l.registersPerThread({32}), Error);  // rank mismatch
  EXPECT_THROW(l.coords({32, 64}, 4, 0, 0), Error);  // warp out of range
  EXPECT_THROW(l.coords({32, 64}, 0, 32, 0), Error);
  EXPECT_THROW(l.coords({32, 64}, 0, 0, 16), Error);  // register out of range
  EXPECT_THROW(l.sharedOffset({32, 64}, {0, 0}), Error);
  Layout s = Layout::shared(4, 1, 4, {1, 0});
  EXPECT_THROW(s.coords({8, 8}, 0, 0, 0), Error);
  EXPECT_THROW(s.sharedOffset({8, 8}, {8, 0}), Error);
}

TEST(DefaultBlockedLayout, SpreadsLanesThenWarpsFastestFirst) {
  Layout l1 = ir::defaultBlockedLayout({1024}, 4, 32);
  EXPECT_EQ(l1, Layout::blocked({1}, {32}, {4}, {0}));
  Layout l2 = ir::defaultBlockedLayout({64, 64}, 4, 32, 4);
  EXPECT_EQ(l2, Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0}));
  Layout l3 = ir::defaultBlockedLayout({16, 8}, 8, 32);  // smaller than the CTA: replicated along dim 1
  EXPECT_EQ(l3, Layout::blocked({1, 1}, {4, 8}, {4, 2}, {1, 0}));
  Layout l4 = ir::defaultBlockedLayout({64, 32}, 4, 64, 2, {0, 1});
  EXPECT_EQ(l4, Layout::blocked({2, 1}, {32, 2}, {1, 4}, {0, 1}));
  for (const auto& [layout, shape] : std::vector<std::pair<Layout, Shape>>{
           {l1, {1024}}, {l2, {64, 64}}, {l3, {16, 8}}, {l4, {64, 32}}}) {
    EXPECT_EQ(layout.warpSize() * layout.numWarps() == 128 || layout.warpSize() * layout.numWarps() == 256, true);
    expectFullCoverageOneOwner(layout, shape);
  }
  EXPECT_THROW(ir::defaultBlockedLayout({}, 4, 32), Error);
  EXPECT_THROW(ir::defaultBlockedLayout({64}, 3, 32), Error);
}

// The runs a vectorized shared-memory access may take whole. A #shared layout: vec along its fastest dimension. The
// same swizzle as #linear_shared (8 f16 chunks of 4, XORed with the row's phase) keeps runs of 4, not the 32 its
// row has: a run of 8 would cross two chunks the swizzle moves apart (the lowering used to store 16 bytes there,
// misaligned). Without a swizzle, the whole row is one run.
TEST(SharedRuns, RunsStopWhereASwizzleMovesNarrowerUnits) {
  const std::vector<int64_t> shape = {64, 32};
  const ir::Layout swizzled = ir::Layout::shared(4, 2, 8, {1, 0});
  EXPECT_EQ(ir::sharedRunAlong(swizzled, shape, 1), 4);
  EXPECT_EQ(ir::sharedRunAlong(swizzled, shape, 0), 1);
  EXPECT_EQ(ir::sharedFastestDim(swizzled, shape), 1);
  const ir::Layout linear = ir::Layout::linearShared(swizzled.toLinear(shape));
  EXPECT_EQ(ir::sharedRunAlong(linear, shape, 1), 4);
  EXPECT_EQ(ir::sharedRunAlong(linear, shape, 0), 1);
  EXPECT_EQ(ir::sharedFastestDim(linear, shape), 1);
  const ir::Layout plain = ir::Layout::linearShared(ir::Layout::shared(1, 1, 1, {1, 0}).toLinear(shape));
  EXPECT_EQ(ir::sharedRunAlong(plain, shape, 1), 32);
  const ir::Layout columns = ir::Layout::linearShared(ir::Layout::shared(1, 1, 1, {0, 1}).toLinear(shape));
  EXPECT_EQ(ir::sharedFastestDim(columns, shape), 0);
  EXPECT_EQ(ir::sharedRunAlong(columns, shape, 0), 64);
}

}  // namespace
