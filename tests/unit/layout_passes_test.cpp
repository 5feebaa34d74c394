// Tests of the layout pipeline (coalesce, assign-layouts, remove-layout-conversions) on whole kernels: the
// reference interpreter gives bit-identical results before and after (convert_layout is an identity there),
// every tile type has a layout afterwards, and the conversions left are exactly the necessary ones.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "backends/interpreter/Interpreter.h"
#include "ir/Layout.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "transforms/AssignLayouts.h"
#include "transforms/PassManager.h"

namespace {

using namespace tessera;

const char* kVectorAdd = R"(
func @vector_add(%x: ptr<f32> {divisibility = 16}, %y: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}, %n: i32 {divisibility = 16}) {
  %pid = program_id {axis = 0} : i32
  %block = constant {value = 1024} : i32
  %start = mul %pid, %block : i32
  %range = arange {end = 1024, start = 0} : tile<1024xi32>
  %starts = splat %start : tile<1024xi32>
  %offs = add %starts, %range : tile<1024xi32>
  %ns = splat %n : tile<1024xi32>
  %mask = cmp %offs, %ns {pred = "lt"} : tile<1024xi1>
  %xs = splat %x : tile<1024xptr<f32>>
  %xp = addptr %xs, %offs : tile<1024xptr<f32>>
  %ys = splat %y : tile<1024xptr<f32>>
  %yp = addptr %ys, %offs : tile<1024xptr<f32>>
  %a = load %xp, %mask : tile<1024xf32>
  %b = load %yp, %mask : tile<1024xf32>
  %s = add %a, %b : tile<1024xf32>
  %os = splat %out : tile<1024xptr<f32>>
  %op = addptr %os, %offs : tile<1024xptr<f32>>
  store %op, %s, %mask
  return
}
)";

const char* kTranspose = R"(
func @transpose(%in: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}) {
  %r = arange {end = 64, start = 0} : tile<64xi32>
  %c = arange {end = 32, start = 0} : tile<32xi32>
  %r2 = expand_dims %r {axis = 1} : tile<64x1xi32>
  %c2 = expand_dims %c {axis = 0} : tile<1x32xi32>
  %k = constant {value = 32} : tile<64x1xi32>
  %rs = mul %r2, %k : tile<64x1xi32>
  %k2 = constant {value = 64} : tile<1x32xi32>
  %cs = mul %c2, %k2 : tile<1x32xi32>
  %rb = broadcast %rs : tile<64x32xi32>
  %cb = broadcast %c2 : tile<64x32xi32>
  %inoff = add %rb, %cb : tile<64x32xi32>
  %rb1 = broadcast %r2 : tile<64x32xi32>
  %cbs = broadcast %cs : tile<64x32xi32>
  %outoff = add %cbs, %rb1 : tile<64x32xi32>
  %ins = splat %in : tile<64x32xptr<f32>>
  %inp = addptr %ins, %inoff : tile<64x32xptr<f32>>
  %v = load %inp : tile<64x32xf32>
  %outs = splat %out : tile<64x32xptr<f32>>
  %outp = addptr %outs, %outoff : tile<64x32xptr<f32>>
  store %outp, %v
  return
}
)";

// Row maxima and x - rowmax, plus a loop that sums rows with a loop-carried pointer and accumulator.
const char* kRowsAndLoop = R"(
func @rows(%in: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}, %maxes: ptr<f32>, %steps: i32) {
  %r = arange {end = 32, start = 0} : tile<32xi32>
  %c = arange {end = 64, start = 0} : tile<64xi32>
  %r2 = expand_dims %r {axis = 1} : tile<32x1xi32>
  %c2 = expand_dims %c {axis = 0} : tile<1x64xi32>
  %k = constant {value = 64} : tile<32x1xi32>
  %rs = mul %r2, %k : tile<32x1xi32>
  %rb = broadcast %rs : tile<32x64xi32>
  %cb = broadcast %c2 : tile<32x64xi32>
  %off = add %rb, %cb : tile<32x64xi32>
  %ins = splat %in : tile<32x64xptr<f32>>
  %inp = addptr %ins, %off : tile<32x64xptr<f32>>
  %v = load %inp : tile<32x64xf32>
  %m = reduce %v {axis = 1} : tile<32xf32> {
  ^(%a: f32, %b: f32):
    %mx = max %a, %b : f32
    yield %mx
  }
  %m2 = expand_dims %m {axis = 1} : tile<32x1xf32>
  %mb = broadcast %m2 : tile<32x64xf32>
  %d = sub %v, %mb : tile<32x64xf32>
  %outs = splat %out : tile<32x64xptr<f32>>
  %outp = addptr %outs, %off : tile<32x64xptr<f32>>
  store %outp, %d
  %ms = splat %maxes : tile<32xptr<f32>>
  %mp = addptr %ms, %r : tile<32xptr<f32>>
  store %mp, %m
  %lb = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %z = constant {value = 0.0} : tile<64xf32>
  %c64 = constant {value = 64} : tile<64xi32>
  %ps = splat %in : tile<64xptr<f32>>
  %p0 = addptr %ps, %c : tile<64xptr<f32>>
  %sum, %pend = for %lb, %steps, %one, %z, %p0 : tile<64xf32>, tile<64xptr<f32>> {
  ^(%i: i32, %acc: tile<64xf32>, %p: tile<64xptr<f32>>):
    %row = load %p : tile<64xf32>
    %acc2 = add %acc, %row : tile<64xf32>
    %p2 = addptr %p, %c64 : tile<64xptr<f32>>
    yield %acc2, %p2
  }
  %sp = splat %out : tile<64xptr<f32>>
  %sp2 = addptr %sp, %c : tile<64xptr<f32>>
  store %sp2, %sum
  return
}
)";

const char* kMatmul = R"(
func @matmul(%a: ptr<f32> {divisibility = 16}, %b: ptr<f32> {divisibility = 16}, %c: ptr<f32> {divisibility = 16}) {
  %i = arange {end = 16, start = 0} : tile<16xi32>
  %j = arange {end = 32, start = 0} : tile<32xi32>
  %i2 = expand_dims %i {axis = 1} : tile<16x1xi32>
  %j2 = expand_dims %j {axis = 0} : tile<1x32xi32>
  %k32 = constant {value = 32} : tile<16x1xi32>
  %ir = mul %i2, %k32 : tile<16x1xi32>
  %irb = broadcast %ir : tile<16x32xi32>
  %jb = broadcast %j2 : tile<16x32xi32>
  %aoff = add %irb, %jb : tile<16x32xi32>
  %as = splat %a : tile<16x32xptr<f32>>
  %ap = addptr %as, %aoff : tile<16x32xptr<f32>>
  %av = load %ap : tile<16x32xf32>
  %j1 = expand_dims %j {axis = 1} : tile<32x1xi32>
  %k16 = constant {value = 16} : tile<32x1xi32>
  %jr = mul %j1, %k16 : tile<32x1xi32>
  %jrb = broadcast %jr : tile<32x16xi32>
  %i0 = expand_dims %i {axis = 0} : tile<1x16xi32>
  %ib = broadcast %i0 : tile<32x16xi32>
  %boff = add %jrb, %ib : tile<32x16xi32>
  %bs = splat %b : tile<32x16xptr<f32>>
  %bp = addptr %bs, %boff : tile<32x16xptr<f32>>
  %bv = load %bp : tile<32x16xf32>
  %z = constant {value = 0.0} : tile<16x16xf32>
  %d = dot %av, %bv, %z {input_precision = "ieee"} : tile<16x16xf32>
  %k16b = constant {value = 16} : tile<16x1xi32>
  %ci = mul %i2, %k16b : tile<16x1xi32>
  %cib = broadcast %ci : tile<16x16xi32>
  %i0b = broadcast %i0 : tile<16x16xi32>
  %coff = add %cib, %i0b : tile<16x16xi32>
  %cs = splat %c : tile<16x16xptr<f32>>
  %cp = addptr %cs, %coff : tile<16x16xptr<f32>>
  store %cp, %d
  return
}
)";

std::unique_ptr<ir::Module> parse(const std::string& text) {
  auto m = ir::parseModule(text);
  ir::verify(*m);
  return m;
}

void runLayoutPipeline(ir::Function& f, transforms::PassOptions options = {}) {
  transforms::PassManager pm;
  pm.setVerifyEach(true);
  for (const char* name : {"coalesce", "assign-layouts", "remove-layout-conversions"})
    pm.add(transforms::createPass(name, options));
  pm.run(f);
}

int countConversions(ir::Function& f) {
  int n = 0;
  f.walk([&](ir::Op* op) { n += op->is(ir::OpKind::ConvertLayout); });
  return n;
}

void expectEveryTileHasLayout(ir::Function& f) {
  auto check = [](const ir::Value* v) {
    if (!v->type().isTile()) return;
    EXPECT_TRUE(ir::Layout::ofType(v->type()).has_value()) << v->type().str();
    EXPECT_TRUE(ir::Layout::ofType(v->type())->isDistributed()) << v->type().str();
  };
  for (unsigned i = 0; i < f.numArguments(); ++i) check(f.argument(i));
  f.walk([&](ir::Op* op) {
    for (ir::Value* r : op->results()) check(r);
    for (unsigned r = 0; r < op->numRegions(); ++r)
      for (ir::Value* a : op->region(r)->arguments()) check(a);
  });
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

interp::Buffer bufferOf(std::vector<float>& v) { return interp::Buffer{v.data(), v.size() * sizeof(float)}; }

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(LayoutPipeline, VectorAddKeepsResultsAndNeedsNoConversion) {
  auto before = parse(kVectorAdd);
  auto after = parse(kVectorAdd);
  ir::Function& f = *after->functions().front();
  runLayoutPipeline(f);
  expectEveryTileHasLayout(f);
  EXPECT_EQ(countConversions(f), 0) << ir::print(*after);

  const int64_t n = 3008;  // a multiple of 16, as the specialization promises; the last program is partial
  std::vector<float> x = randomFloats(n, 1), y = randomFloats(n, 2), out1(n, -1.0f), out2(n, -1.0f);
  interp::run(*before->functions().front(), {bufferOf(x), bufferOf(y), bufferOf(out1), n}, {3, 1, 1});
  interp::run(f, {bufferOf(x), bufferOf(y), bufferOf(out2), n}, {3, 1, 1});
  EXPECT_TRUE(sameBits(out1, out2));
  EXPECT_EQ(out1[n - 1], x[n - 1] + y[n - 1]);
}

TEST(LayoutPipeline, TransposeKeepsResultsWithOneConversion) {
  for (int numWarps : {1, 4, 8}) {
    SCOPED_TRACE(numWarps);
    auto before = parse(kTranspose);
    auto after = parse(kTranspose);
    ir::Function& f = *after->functions().front();
    runLayoutPipeline(f, {numWarps, 32, nullptr});
    expectEveryTileHasLayout(f);
    EXPECT_EQ(countConversions(f), 1) << ir::print(*after);

    std::vector<float> in = randomFloats(64 * 32, 3), out1(64 * 32), out2(64 * 32);
    interp::run(*before->functions().front(), {bufferOf(in), bufferOf(out1)}, {1, 1, 1});
    interp::run(f, {bufferOf(in), bufferOf(out2)}, {1, 1, 1});
    EXPECT_TRUE(sameBits(out1, out2));
    EXPECT_EQ(out1[5 * 64 + 7], in[7 * 32 + 5]);
  }
}

TEST(LayoutPipeline, ReductionsAndLoopsKeepResults) {
  auto before = parse(kRowsAndLoop);
  auto after = parse(kRowsAndLoop);
  ir::Function& f = *after->functions().front();
  runLayoutPipeline(f);
  expectEveryTileHasLayout(f);
  // The reduce result is a slice of the loaded tile's layout and feeds expand_dims without a conversion.
  f.walk([&](ir::Op* op) {
    if (op->is(ir::OpKind::Reduce)) {
      auto in = ir::Layout::ofType(op->operand(0)->type());
      EXPECT_EQ(ir::Layout::ofType(op->result(0)->type()), ir::Layout::slice(1, *in));
    }
    if (op->is(ir::OpKind::ExpandDims) && op->operand(0)->type().element().isFloat())
      EXPECT_TRUE(op->operand(0)->definingOp()->is(ir::OpKind::Reduce));
  });

  std::vector<float> in = randomFloats(32 * 64, 4), out1(32 * 64), out2(32 * 64), max1(32), max2(32);
  interp::run(*before->functions().front(), {bufferOf(in), bufferOf(out1), bufferOf(max1), int64_t(5)}, {1, 1, 1});
  interp::run(f, {bufferOf(in), bufferOf(out2), bufferOf(max2), int64_t(5)}, {1, 1, 1});
  EXPECT_TRUE(sameBits(out1, out2));
  EXPECT_TRUE(sameBits(max1, max2));
  float rowMax = in[3 * 64];
  for (int j = 0; j < 64; ++j) rowMax = std::max(rowMax, in[3 * 64 + j]);
  EXPECT_EQ(max1[3], rowMax);
}

TEST(LayoutPipeline, DotTakesItsOperandsAsLoadedAndKeepsResults) {
  auto before = parse(kMatmul);
  auto after = parse(kMatmul);
  ir::Function& f = *after->functions().front();
  runLayoutPipeline(f);
  expectEveryTileHasLayout(f);
  f.walk([&](ir::Op* op) {
    if (!op->is(ir::OpKind::Dot)) return;
    // a and b straight from their coalesced loads (the lowerings stage them from any layout); the accumulator
    // and the result in the default blocked layout.
    for (unsigned i = 0; i < 2; ++i)
      EXPECT_TRUE(op->operand(i)->definingOp()->is(ir::OpKind::Load)) << ir::print(*after);
    EXPECT_EQ(ir::Layout::ofType(op->operand(2)->type()), ir::defaultBlockedLayout({16, 16}, 4, 32));
    EXPECT_EQ(ir::Layout::ofType(op->result(0)->type()), ir::defaultBlockedLayout({16, 16}, 4, 32));
  });
  std::vector<float> a = randomFloats(16 * 32, 5), b = randomFloats(32 * 16, 6), c1(256), c2(256);
  interp::run(*before->functions().front(), {bufferOf(a), bufferOf(b), bufferOf(c1)}, {1, 1, 1});
  interp::run(f, {bufferOf(a), bufferOf(b), bufferOf(c2)}, {1, 1, 1});
  EXPECT_TRUE(sameBits(c1, c2));
}

// A target policy that wants a specific layout for dot results: assign-layouts enforces it and propagates it.
class WideDotPolicy : public transforms::LayoutPolicy {
 public:
  std::optional<ir::Layout> operandLayout(const ir::Op&, unsigned) const override { return std::nullopt; }
  std::optional<ir::Layout> resultLayout(const ir::Op& op, unsigned) const override {
    if (!op.is(ir::OpKind::Dot)) return std::nullopt;
    return ir::Layout::blocked({2, 2}, {4, 8}, {2, 2}, {1, 0});
  }
};

TEST(LayoutPipeline, PolicyHookAnchorsLayouts) {
  auto m = parse(kMatmul);
  ir::Function& f = *m->functions().front();
  transforms::PassManager pm;
  pm.add(transforms::createAssignLayoutsPass({}, std::make_shared<WideDotPolicy>()));
  pm.add(transforms::createRemoveLayoutConversionsPass());
  pm.run(f);
  expectEveryTileHasLayout(f);
  ir::Layout wide = ir::Layout::blocked({2, 2}, {4, 8}, {2, 2}, {1, 0});
  f.walk([&](ir::Op* op) {
    if (op->is(ir::OpKind::Dot)) {
      EXPECT_EQ(ir::Layout::ofType(op->result(0)->type()), wide);
      EXPECT_EQ(ir::Layout::ofType(op->operand(2)->type()), wide);
    }
    if (op->is(ir::OpKind::Store)) EXPECT_EQ(ir::Layout::ofType(op->operand(1)->type()), wide);
  });
}

// A tile of pointers carried by a loop in one layout, converted to another for the load on every iteration and
// advanced by a splat stride: remove-layout-conversions carries it in the load's layout (no conversion left in
// the loop, where it would move the pointers through shared memory each iteration).
const char* kCarriedPointers = R"(
func @walk(%in: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}, %steps: i32) attributes {num_warps = 1} {
  %lb = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %c = arange {end = 64, start = 0} : tile<64xi32, #blocked{order = [0], spt = [1], tpw = [32], wpc = [1]}>
  %ps = splat %in : tile<64xptr<f32>, #blocked{order = [0], spt = [1], tpw = [32], wpc = [1]}>
  %p0 = addptr %ps, %c : tile<64xptr<f32>, #blocked{order = [0], spt = [1], tpw = [32], wpc = [1]}>
  %z = constant {value = 0.0} : tile<64xf32, #blocked{order = [0], spt = [2], tpw = [32], wpc = [1]}>
  %sum, %pend = for %lb, %steps, %one, %z, %p0 : tile<64xf32, #blocked{order = [0], spt = [2], tpw = [32], wpc = [1]}>, tile<64xptr<f32>, #blocked{order = [0], spt = [1], tpw = [32], wpc = [1]}> {
  ^(%i: i32, %acc: tile<64xf32, #blocked{order = [0], spt = [2], tpw = [32], wpc = [1]}>, %p: tile<64xptr<f32>, #blocked{order = [0], spt = [1], tpw = [32], wpc = [1]}>):
    %pc = convert_layout %p : tile<64xptr<f32>, #blocked{order = [0], spt = [2], tpw = [32], wpc = [1]}>
    %row = load %pc : tile<64xf32, #blocked{order = [0], spt = [2], tpw = [32], wpc = [1]}>
    %acc2 = add %acc, %row : tile<64xf32, #blocked{order = [0], spt = [2], tpw = [32], wpc = [1]}>
    %c64 = constant {value = 64} : i32
    %stride = splat %c64 : tile<64xi32, #blocked{order = [0], spt = [1], tpw = [32], wpc = [1]}>
    %p2 = addptr %p, %stride : tile<64xptr<f32>, #blocked{order = [0], spt = [1], tpw = [32], wpc = [1]}>
    yield %acc2, %p2
  }
  %os = splat %out : tile<64xptr<f32>, #blocked{order = [0], spt = [2], tpw = [32], wpc = [1]}>
  %c2 = arange {end = 64, start = 0} : tile<64xi32, #blocked{order = [0], spt = [2], tpw = [32], wpc = [1]}>
  %op = addptr %os, %c2 : tile<64xptr<f32>, #blocked{order = [0], spt = [2], tpw = [32], wpc = [1]}>
  store %op, %sum
  return
}
)";

TEST(RemoveLayoutConversions, CarriesAnAdvancedPointerTileInItsLoadsLayout) {
  auto before = parse(kCarriedPointers);
  auto after = parse(kCarriedPointers);
  ir::Function& f = *after->functions().front();
  transforms::PassManager pm;
  pm.setVerifyEach(true);
  pm.add(transforms::createRemoveLayoutConversionsPass());
  pm.run(f);
  const ir::Layout loadLayout = ir::Layout::blocked({2}, {32}, {1}, {0});
  int loops = 0;
  f.walk([&](ir::Op* op) {
    if (!op->is(ir::OpKind::For)) return;
    ++loops;
    for (const auto& inner : op->region(0)->ops())
      EXPECT_FALSE(inner->is(ir::OpKind::ConvertLayout)) << ir::print(*after);
    EXPECT_EQ(ir::Layout::ofType(op->region(0)->argument(2)->type()), loadLayout) << ir::print(*after);
  });
  EXPECT_EQ(loops, 1);

  std::vector<float> in = randomFloats(64 * 5, 7), out1(64), out2(64);
  interp::run(*before->functions().front(), {bufferOf(in), bufferOf(out1), int64_t(5)}, {1, 1, 1});
  interp::run(f, {bufferOf(in), bufferOf(out2), int64_t(5)}, {1, 1, 1});
  EXPECT_TRUE(sameBits(out1, out2));
  EXPECT_EQ(out1[3], in[3] + in[67] + in[131] + in[195] + in[259]);
}

}  // namespace
