// The NVPTX backend's vertical slice: vector add, a softmax-style row reduction (within warps and across warps),
// a transposing layout conversion through shared memory, and a loop with carried values. Each kernel is lowered,
// compiled to PTX for sm_90a and sm_80, and assembled by ptxas, whose report must show no spills and no stack.
#include <gtest/gtest.h>

#include "NVPTXTestUtil.h"
#include "backends/common/ThreadMap.h"
#include "ir/Layout.h"
#include "ir/Printer.h"
#include "transforms/PassManager.h"

namespace tessera::testing {
namespace {

const std::map<std::string, std::string> kVec = {
    {"#L", "#blocked{order = [0], spt = [4], tpw = [32], wpc = [4]}"}};

const char* kVectorAdd = R"(
func @vector_add(%x: ptr<f32> {divisibility = 16}, %y: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}, %n: i32 {divisibility = 16}) attributes {num_warps = 4} {
  %pid = program_id {axis = 0} : i32
  %c = constant {value = 1024} : i32
  %base = mul %pid, %c : i32
  %r = arange {end = 1024, start = 0} : tile<1024xi32, #L>
  %b = splat %base : tile<1024xi32, #L>
  %offs = add %b, %r : tile<1024xi32, #L>
  %nn = splat %n : tile<1024xi32, #L>
  %mask = cmp %offs, %nn {pred = "lt"} : tile<1024xi1, #L>
  %xs = splat %x : tile<1024xptr<f32>, #L>
  %xp = addptr %xs, %offs : tile<1024xptr<f32>, #L>
  %ys = splat %y : tile<1024xptr<f32>, #L>
  %yp = addptr %ys, %offs : tile<1024xptr<f32>, #L>
  %xv = load %xp, %mask : tile<1024xf32, #L>
  %yv = load %yp, %mask : tile<1024xf32, #L>
  %sum = add %xv, %yv : tile<1024xf32, #L>
  %os = splat %out : tile<1024xptr<f32>, #L>
  %op = addptr %os, %offs : tile<1024xptr<f32>, #L>
  store %op, %sum, %mask
  return
}
)";

TEST(NVPTXLowering, VectorAddUses16ByteAccessesAndAssemblesCleanly) {
  Compiled c = compileAndAssemble(withLayouts(kVectorAdd, kVec));
  EXPECT_NE(c.ptx.find(".entry vector_add("), std::string::npos);
  EXPECT_NE(c.ptx.find(".maxntid 128, 1, 1"), std::string::npos);
  // 1024 elements / 128 threads = 8 per thread = two 16-byte vectors per operand.
  EXPECT_EQ(countOccurrences(c.ptx, "ld.global.v4.f32"), 4) << c.ptx;
  EXPECT_EQ(countOccurrences(c.ptx, "st.global.v4.f32"), 2) << c.ptx;
  EXPECT_EQ(countOccurrences(c.ptx, "ld.global.f32"), 0);
  EXPECT_EQ(countOccurrences(c.ptx, "st.global.f32"), 0);
  EXPECT_NE(c.llvm.find("define ptx_kernel void @vector_add"), std::string::npos);
}

TEST(NVPTXLowering, UnalignedPointersFallBackToScalarAccesses) {
  // Without the divisibility facts the same kernel must not assume 16-byte alignment.
  std::string text = withLayouts(kVectorAdd, kVec);
  for (const char* from : {"%x: ptr<f32> {divisibility = 16}", "%n: i32 {divisibility = 16}"}) {
    std::string plain = std::string(from).substr(0, std::string(from).find(" {"));
    text.replace(text.find(from), std::string(from).size(), plain);
  }
  Compiled c = compileAndAssemble(text);
  EXPECT_EQ(countOccurrences(c.ptx, "ld.global.v4.f32"), 0) << c.ptx;
  EXPECT_EQ(countOccurrences(c.ptx, "ld.global.f32"), 16) << c.ptx;  // x and y: 8 masked scalar loads each
}

// Softmax over rows of 512: lanes and warps both run along the reduced axis, so the reduction needs warp
// shuffles and a cross-warp exchange through shared memory.
const char* kSoftmax = R"(
func @softmax(%in: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}) attributes {num_warps = 4, smem_bytes = 64} {
  %rows = arange {end = 2, start = 0} : tile<2xi32, #R>
  %cols = arange {end = 512, start = 0} : tile<512xi32, #C>
  %r2 = expand_dims %rows {axis = 1} : tile<2x1xi32, #P>
  %c2 = expand_dims %cols {axis = 0} : tile<1x512xi32, #P>
  %stride = constant {value = 512} : tile<2x1xi32, #P>
  %rowoff = mul %r2, %stride : tile<2x1xi32, #P>
  %rb = broadcast %rowoff : tile<2x512xi32, #P>
  %cb = broadcast %c2 : tile<2x512xi32, #P>
  %offs = add %rb, %cb : tile<2x512xi32, #P>
  %ib = splat %in : tile<2x512xptr<f32>, #P>
  %ip = addptr %ib, %offs : tile<2x512xptr<f32>, #P>
  %x = load %ip : tile<2x512xf32, #P>
  %m = reduce %x {axis = 1, smem_bytes = 32, smem_offset = 0} : tile<2xf32, #R> {
  ^(%a: f32, %b: f32):
    %mx = max %a, %b : f32
    yield %mx
  }
  %m2 = expand_dims %m {axis = 1} : tile<2x1xf32, #P>
  %mb = broadcast %m2 : tile<2x512xf32, #P>
  %d = sub %x, %mb : tile<2x512xf32, #P>
  %e = exp %d : tile<2x512xf32, #P>
  %s = reduce %e {axis = 1, smem_bytes = 32, smem_offset = 32} : tile<2xf32, #R> {
  ^(%u: f32, %v: f32):
    %sum = add %u, %v : f32
    yield %sum
  }
  %s2 = expand_dims %s {axis = 1} : tile<2x1xf32, #P>
  %sb = broadcast %s2 : tile<2x512xf32, #P>
  %y = div %e, %sb : tile<2x512xf32, #P>
  %ob = splat %out : tile<2x512xptr<f32>, #P>
  %op = addptr %ob, %offs : tile<2x512xptr<f32>, #P>
  store %op, %y
  return
}
)";

const std::string kSoftmaxParent = "#blocked{order = [1, 0], spt = [1, 4], tpw = [1, 32], wpc = [1, 4]}";

TEST(NVPTXLowering, SoftmaxReducesWithShufflesAndSharedMemory) {
  Compiled c = compileAndAssemble(withLayouts(kSoftmax, {{"#P", kSoftmaxParent},
                                                         {"#R", "#slice{dim = 1, parent = " + kSoftmaxParent + "}"},
                                                         {"#C", "#slice{dim = 0, parent = " + kSoftmaxParent + "}"}}));
  // Five butterfly steps over the 32 lanes, per row (2) and per reduction (2).
  EXPECT_EQ(countOccurrences(c.ptx, "shfl.sync.bfly.b32"), 20) << c.ptx;
  // One barrier between writing and reading the per-warp partials, per reduction.
  EXPECT_EQ(countOccurrences(c.ptx, "bar.sync"), 2) << c.ptx;
  EXPECT_GT(countOccurrences(c.ptx, "st.shared"), 0);
  EXPECT_GT(countOccurrences(c.ptx, "ex2.approx"), 0);  // fast exp
  EXPECT_EQ(countOccurrences(c.ptx, "ld.global.v4.f32"), 2) << c.ptx;
  EXPECT_EQ(countOccurrences(c.ptx, "st.global.v4.f32"), 2) << c.ptx;
  EXPECT_NE(c.ptx.find(".extern .shared .align 16 .b8 global_smem[]"), std::string::npos) << c.ptx;
}

TEST(NVPTXLowering, ReductionWithinWarpsNeedsNoSharedMemory) {
  // One warp per row: lanes cover the row, warps cover rows, so no cross-warp step (and no smem attributes).
  std::string parent = "#blocked{order = [1, 0], spt = [1, 4], tpw = [1, 32], wpc = [4, 1]}";
  std::string text = R"(
func @rowmax(%in: ptr<f32> {divisibility = 16}, %out: ptr<f32>) attributes {num_warps = 4} {
  %cols = arange {end = 128, start = 0} : tile<128xi32, #C>
  %c2 = expand_dims %cols {axis = 0} : tile<1x128xi32, #P>
  %cb = broadcast %c2 : tile<4x128xi32, #P>
  %rows = arange {end = 4, start = 0} : tile<4xi32, #R>
  %r2 = expand_dims %rows {axis = 1} : tile<4x1xi32, #P>
  %k = constant {value = 128} : tile<4x1xi32, #P>
  %ro = mul %r2, %k : tile<4x1xi32, #P>
  %rb = broadcast %ro : tile<4x128xi32, #P>
  %offs = add %rb, %cb : tile<4x128xi32, #P>
  %ib = splat %in : tile<4x128xptr<f32>, #P>
  %ip = addptr %ib, %offs : tile<4x128xptr<f32>, #P>
  %x = load %ip : tile<4x128xf32, #P>
  %m = reduce %x {axis = 1} : tile<4xf32, #R> {
  ^(%a: f32, %b: f32):
    %mx = max %a, %b : f32
    yield %mx
  }
  %ob = splat %out : tile<4xptr<f32>, #R>
  %op = addptr %ob, %rows : tile<4xptr<f32>, #R>
  store %op, %m
  return
}
)";
  Compiled c = compileAndAssemble(withLayouts(text, {{"#P", parent},
                                                     {"#R", "#slice{dim = 1, parent = " + parent + "}"},
                                                     {"#C", "#slice{dim = 0, parent = " + parent + "}"}}));
  EXPECT_EQ(countOccurrences(c.ptx, "shfl.sync.bfly.b32"), 5) << c.ptx;
  EXPECT_EQ(countOccurrences(c.ptx, "bar.sync"), 0) << c.ptx;
  EXPECT_EQ(countOccurrences(c.ptx, "max.f32"), 3 + 5) << c.ptx;  // 4 registers folded, then 5 shuffles
  // Every lane of a warp holds the row's maximum; only one thread per row stores it.
  EXPECT_EQ(countOccurrences(c.ptx, "st.global.f32"), 1) << c.ptx;
}

// A transposing copy: coalesced loads in a row-major layout, coalesced stores in a column-major one, with a
// layout conversion through shared memory in between.
const char* kTranspose = R"(
func @transpose(%in: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}) attributes {num_warps = 4, smem_bytes = 16640} {
  %i = arange {end = 64, start = 0} : tile<64xi32, #AR>
  %j = arange {end = 64, start = 0} : tile<64xi32, #AC>
  %i2 = expand_dims %i {axis = 1} : tile<64x1xi32, #A>
  %j2 = expand_dims %j {axis = 0} : tile<1x64xi32, #A>
  %k = constant {value = 64} : tile<64x1xi32, #A>
  %ik = mul %i2, %k : tile<64x1xi32, #A>
  %ib = broadcast %ik : tile<64x64xi32, #A>
  %jb = broadcast %j2 : tile<64x64xi32, #A>
  %offs = add %ib, %jb : tile<64x64xi32, #A>
  %base = splat %in : tile<64x64xptr<f32>, #A>
  %p = addptr %base, %offs : tile<64x64xptr<f32>, #A>
  %x = load %p : tile<64x64xf32, #A>
  %y = convert_layout %x {smem_bytes = 16640, smem_offset = 0} : tile<64x64xf32, #B>
  %bi = arange {end = 64, start = 0} : tile<64xi32, #BR>
  %bj = arange {end = 64, start = 0} : tile<64xi32, #BC>
  %bi2 = expand_dims %bi {axis = 1} : tile<64x1xi32, #B>
  %bj2 = expand_dims %bj {axis = 0} : tile<1x64xi32, #B>
  %k2 = constant {value = 64} : tile<1x64xi32, #B>
  %jk = mul %bj2, %k2 : tile<1x64xi32, #B>
  %bib = broadcast %bi2 : tile<64x64xi32, #B>
  %jkb = broadcast %jk : tile<64x64xi32, #B>
  %toffs = add %bib, %jkb : tile<64x64xi32, #B>
  %obase = splat %out : tile<64x64xptr<f32>, #B>
  %q = addptr %obase, %toffs : tile<64x64xptr<f32>, #B>
  store %q, %y
  return
}
)";

std::map<std::string, std::string> transposeLayouts() {
  std::string a = "#blocked{order = [1, 0], spt = [1, 4], tpw = [2, 16], wpc = [4, 1]}";
  std::string bl = "#blocked{order = [0, 1], spt = [4, 1], tpw = [16, 2], wpc = [1, 4]}";
  return {{"#A", a}, {"#B", bl},
          {"#AR", "#slice{dim = 1, parent = " + a + "}"}, {"#AC", "#slice{dim = 0, parent = " + a + "}"},
          {"#BR", "#slice{dim = 1, parent = " + bl + "}"}, {"#BC", "#slice{dim = 0, parent = " + bl + "}"}};
}

TEST(NVPTXLowering, TransposingCopyConvertsThroughSharedMemoryWithOneBarrier) {
  Compiled c = compileAndAssemble(withLayouts(kTranspose, transposeLayouts()));
  EXPECT_EQ(countOccurrences(c.ptx, "bar.sync"), 1) << c.ptx;
  EXPECT_EQ(countOccurrences(c.ptx, "ld.global.v4.f32"), 8) << c.ptx;  // 4096 / 128 threads / 4
  EXPECT_EQ(countOccurrences(c.ptx, "st.global.v4.f32"), 8) << c.ptx;
  EXPECT_GT(countOccurrences(c.ptx, "st.shared"), 0);
  EXPECT_GT(countOccurrences(c.ptx, "ld.shared"), 0);
}

TEST(NVPTXLowering, ConversionWithoutScratchIsAClearError) {
  std::string text = withLayouts(kTranspose, transposeLayouts());
  text.replace(text.find("{smem_bytes = 16640, smem_offset = 0} "), 38, "");
  try {
    compileIR(text);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("convert_layout"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("smem_offset"), std::string::npos) << e.what();
  }
}

TEST(NVPTXLowering, LoopCarriesTileValuesThroughPhis) {
  std::string text = R"(
func @strided_sum(%in: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}, %n: i32) attributes {num_warps = 4} {
  %offs = arange {end = 512, start = 0} : tile<512xi32, #L>
  %zero = constant {value = 0.0} : tile<512xf32, #L>
  %c0 = constant {value = 0} : i32
  %step = constant {value = 512} : i32
  %base = splat %in : tile<512xptr<f32>, #L>
  %acc, %cnt = for %c0, %n, %step, %zero, %c0 : tile<512xf32, #L>, i32 {
  ^(%k: i32, %a: tile<512xf32, #L>, %c: i32):
    %kh = hint %k {multiple_of = 512} : i32
    %ks = splat %kh : tile<512xi32, #L>
    %o = add %ks, %offs : tile<512xi32, #L>
    %p = addptr %base, %o : tile<512xptr<f32>, #L>
    %v = load %p : tile<512xf32, #L>
    %s = add %a, %v : tile<512xf32, #L>
    %one = constant {value = 1} : i32
    %c1 = add %c, %one : i32
    yield %s, %c1
  }
  %cf = cast %cnt : f32
  %cs = splat %cf : tile<512xf32, #L>
  %mean = div %acc, %cs : tile<512xf32, #L>
  %ob = splat %out : tile<512xptr<f32>, #L>
  %op = addptr %ob, %offs : tile<512xptr<f32>, #L>
  store %op, %mean
  return
}
)";
  Compiled c = compileAndAssemble(withLayouts(text, kVec));
  EXPECT_NE(c.llvm.find("for.header"), std::string::npos);
  EXPECT_EQ(countOccurrences(c.ptx, "ld.global.v4.f32"), 1) << c.ptx;  // inside the loop
  EXPECT_EQ(countOccurrences(c.ptx, "st.global.v4.f32"), 1) << c.ptx;
  EXPECT_NE(c.ptx.find("bra"), std::string::npos);
}

TEST(NVPTXLowering, TileWithoutLayoutIsAClearError) {
  std::string text = R"(
func @k(%x: ptr<f32>) {
  %r = arange {end = 64, start = 0} : tile<64xi32>
  return
}
)";
  try {
    compileIR(text);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no layout"), std::string::npos) << e.what();
  }
}

TEST(NVPTXLowering, NumWarpsMismatchIsAClearError) {
  EXPECT_THROW(compileIR(withLayouts(kVectorAdd, kVec), "sm_90a", 8), Error);
}

// The layout and shared-memory passes' output is what the lowering consumes in the JIT: run them on layout-free
// IR, then lower. The allocation pass's scratch sizes must cover what the lowering uses (it checks).
std::string runLayoutPipeline(const std::string& text) {
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "pipeline.tir");
  transforms::PassManager pm;
  transforms::PassOptions options;
  for (const char* pass : {"coalesce", "assign-layouts", "remove-layout-conversions", "allocate-shared-memory",
                           "insert-barriers"})
    pm.add(transforms::createPass(pass, options));
  pm.run(*m);
  return ir::print(*m);
}

TEST(NVPTXLowering, LowersTheLayoutPassesOutput) {
  std::string plain = std::regex_replace(std::string(kVectorAdd), std::regex(", #L>"), ">");
  plain = std::regex_replace(plain, std::regex("attributes \\{num_warps = 4\\} "), "");
  std::string laid = runLayoutPipeline(plain);
  Compiled c = compileAndAssemble(laid);
  EXPECT_EQ(countOccurrences(c.ptx, "ld.global.v4.f32"), 4) << laid << c.ptx;
  EXPECT_EQ(countOccurrences(c.ptx, "st.global.v4.f32"), 2) << c.ptx;

  // A transposing copy: the passes insert the conversion (with its scratch) and the lowering stages it.
  std::string transpose = R"(
func @transpose(%in: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}) {
  %i = arange {end = 64, start = 0} : tile<64xi32>
  %i2 = expand_dims %i {axis = 1} : tile<64x1xi32>
  %j2 = expand_dims %i {axis = 0} : tile<1x64xi32>
  %k = constant {value = 64} : tile<64x1xi32>
  %ik = mul %i2, %k : tile<64x1xi32>
  %ib = broadcast %ik : tile<64x64xi32>
  %jb = broadcast %j2 : tile<64x64xi32>
  %offs = add %ib, %jb : tile<64x64xi32>
  %base = splat %in : tile<64x64xptr<f32>>
  %p = addptr %base, %offs : tile<64x64xptr<f32>>
  %x = load %p : tile<64x64xf32>
  %k2 = constant {value = 64} : tile<1x64xi32>
  %jk = mul %j2, %k2 : tile<1x64xi32>
  %jkb = broadcast %jk : tile<64x64xi32>
  %iib = broadcast %i2 : tile<64x64xi32>
  %toffs = add %iib, %jkb : tile<64x64xi32>
  %obase = splat %out : tile<64x64xptr<f32>>
  %q = addptr %obase, %toffs : tile<64x64xptr<f32>>
  store %q, %x
  return
}
)";
  std::string laidT = runLayoutPipeline(transpose);
  Compiled t = compileAndAssemble(laidT);
  EXPECT_GT(countOccurrences(t.ptx, "ld.global.v4.f32"), 0) << laidT;
  EXPECT_GT(countOccurrences(t.ptx, "st.global.v4.f32"), 0) << laidT << t.ptx;
  EXPECT_GE(countOccurrences(t.ptx, "bar.sync"), 1) << t.ptx;
}

// The linear form the lowering derives from ir::Layout must reproduce coords() and isOwner() exactly.
TEST(NVPTXThreadMap, MatchesLayoutCoordinatesAndOwnership) {
  using backends::ThreadMap;
  ir::Layout blocked = ir::Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0});
  ir::Layout wide = ir::Layout::blocked({2, 2}, {4, 8}, {2, 2}, {0, 1});
  std::vector<std::pair<ir::Layout, std::vector<int64_t>>> cases = {
      {blocked, {64, 64}}, {blocked, {4, 16}}, {blocked, {2, 2}}, {wide, {32, 8}}, {wide, {1, 1}},
      {ir::Layout::slice(1, blocked), {64}}, {ir::Layout::slice(0, blocked), {16}}, {ir::Layout::slice(0, wide), {4}}};
  for (const auto& [layout, shape] : cases) {
    ThreadMap m = ThreadMap::build(layout, shape, "test");
    ASSERT_EQ(m.numRegs(), layout.registersPerThread(shape));
    for (int64_t w = 0; w < layout.numWarps(); ++w)
      for (int64_t l = 0; l < layout.warpSize(); ++l)
        for (int64_t r = 0; r < m.numRegs(); ++r) {
          ASSERT_EQ(m.coordsOf(r, w, l), layout.coords(shape, w, l, r)) << layout.str();
          bool owner = m.regOwner[r] && (l & m.replicatedLaneMask()) == 0 && (w & m.replicatedWarpMask()) == 0;
          ASSERT_EQ(owner, layout.isOwner(shape, w, l, r)) << layout.str() << " w=" << w << " l=" << l << " r=" << r;
        }
  }
}

}  // namespace
}  // namespace tessera::testing
