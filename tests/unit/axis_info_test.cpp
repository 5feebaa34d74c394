// Tests of the axis analysis (transforms/analysis/AxisInfo): contiguity, divisibility and constancy of the integer
// and pointer values of small kernels written as IR text, seeded by argument attributes and hints, and kept sound
// through loops.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "backends/interpreter/Interpreter.h"
#include "ir/Parser.h"
#include "transforms/analysis/AxisInfo.h"

namespace {

using namespace tessera;
using transforms::AxisInfo;
using transforms::AxisInfoAnalysis;
using transforms::kMaxDivisibility;
using V = std::vector<int64_t>;

struct Analyzed {
  std::unique_ptr<ir::Module> module;
  std::unique_ptr<AxisInfoAnalysis> analysis;

  // The value whose name hint is `name` (an op result or a region argument).
  const ir::Value* value(const std::string& name) const {
    const ir::Value* found = nullptr;
    ir::Function& f = *module->functions().front();
    for (unsigned i = 0; i < f.numArguments(); ++i)
      if (f.argument(i)->nameHint() == name) found = f.argument(i);
    f.walk([&](ir::Op* op) {
      for (unsigned i = 0; i < op->numResults(); ++i)
        if (op->result(i)->nameHint() == name) found = op->result(i);
      for (unsigned r = 0; r < op->numRegions(); ++r)
        for (unsigned a = 0; a < op->region(r)->numArguments(); ++a)
          if (op->region(r)->argument(a)->nameHint() == name) found = op->region(r)->argument(a);
    });
    if (!found) ADD_FAILURE() << "no value named %" << name;
    return found;
  }
  AxisInfo info(const std::string& name) const { return analysis->get(value(name)); }
};

Analyzed analyze(const std::string& text) {
  Analyzed a;
  a.module = ir::parseModule(text);
  a.analysis = std::make_unique<AxisInfoAnalysis>(*a.module->functions().front());
  return a;
}

TEST(AxisInfo, VectorAddPattern) {
  auto a = analyze(R"(
func @k(%x: ptr<f32> {divisibility = 16}, %y: ptr<f32>, %n: i32 {divisibility = 16}, %m: i32) {
  %pid = program_id {axis = 0} : i32
  %block = constant {value = 1024} : i32
  %start = mul %pid, %block : i32
  %range = arange {end = 1024, start = 0} : tile<1024xi32>
  %starts = splat %start : tile<1024xi32>
  %offs = add %starts, %range : tile<1024xi32>
  %xs = splat %x : tile<1024xptr<f32>>
  %xp = addptr %xs, %offs : tile<1024xptr<f32>>
  %ys = splat %y : tile<1024xptr<f32>>
  %yp = addptr %ys, %offs : tile<1024xptr<f32>>
  %ns = splat %n : tile<1024xi32>
  %mask = cmp %offs, %ns {pred = "lt"} : tile<1024xi1>
  %ms = splat %m : tile<1024xi32>
  %mask2 = cmp %offs, %ms {pred = "lt"} : tile<1024xi1>
  %mask3 = cmp %offs, %ns {pred = "le"} : tile<1024xi1>
  return
}
)");
  EXPECT_EQ(a.info("block").constantValue, 1024);
  EXPECT_EQ(a.info("start").divisibility, V{1024});
  EXPECT_EQ(a.info("range").contiguity, V{1024});
  EXPECT_EQ(a.info("range").divisibility, V{kMaxDivisibility});  // starts at 0
  EXPECT_EQ(a.info("starts").constancy, V{1024});
  AxisInfo offs = a.info("offs");
  EXPECT_EQ(offs.contiguity, V{1024});
  EXPECT_EQ(offs.divisibility, V{1024});
  EXPECT_EQ(offs.constancy, V{1});
  AxisInfo xp = a.info("xp");
  EXPECT_EQ(xp.contiguity, V{1024});
  EXPECT_EQ(xp.divisibility, V{16}) << xp.str();
  EXPECT_EQ(a.info("yp").divisibility, V{4}) << "unseeded pointers are element-aligned";
  EXPECT_EQ(a.info("mask").constancy, V{16}) << "offs < n with n % 16 == 0 is constant over aligned 16-blocks";
  EXPECT_EQ(a.info("mask2").constancy, V{1});
  EXPECT_EQ(a.info("mask3").constancy, V{1}) << "<= flips inside a block that starts at the bound";
}

TEST(AxisInfo, TwoDimensionalPointersAndOrder) {
  auto a = analyze(R"(
func @k(%p: ptr<f16> {divisibility = 16}, %stride: i32 {divisibility = 16}, %one: i32 {equal_to_1 = true}) {
  %r = arange {end = 32, start = 0} : tile<32xi32>
  %c = arange {end = 64, start = 0} : tile<64xi32>
  %r2 = expand_dims %r {axis = 1} : tile<32x1xi32>
  %c2 = expand_dims %c {axis = 0} : tile<1x64xi32>
  %ss = splat %stride : tile<32x1xi32>
  %rows = mul %r2, %ss : tile<32x1xi32>
  %rowsb = broadcast %rows : tile<32x64xi32>
  %colsb = broadcast %c2 : tile<32x64xi32>
  %off = add %rowsb, %colsb : tile<32x64xi32>
  %ps = splat %p : tile<32x64xptr<f16>>
  %ptrs = addptr %ps, %off : tile<32x64xptr<f16>>
  %os = splat %one : tile<1x64xi32>
  %cols1 = mul %c2, %os : tile<1x64xi32>
  %colsT = broadcast %cols1 : tile<32x64xi32>
  %rowsT = broadcast %r2 : tile<32x64xi32>
  %sT = splat %stride : tile<32x64xi32>
  %colsS = mul %colsT, %sT : tile<32x64xi32>
  %offT = add %colsS, %rowsT : tile<32x64xi32>
  %ptrsT = addptr %ps, %offT : tile<32x64xptr<f16>>
  return
}
)");
  AxisInfo r2 = a.info("r2");
  EXPECT_EQ(r2.contiguity, (V{32, 1}));
  EXPECT_EQ(r2.divisibility[1], 1) << "elements 1, 2, ... of a run are not all even";
  EXPECT_EQ(a.info("rows").divisibility, (V{16, 16}));
  AxisInfo off = a.info("off");
  EXPECT_EQ(off.contiguity, (V{1, 64}));
  EXPECT_EQ(off.divisibility, (V{1, 16})) << "down a column, elements are i * stride + j for any j";
  EXPECT_EQ(off.constancy, (V{1, 1}));
  AxisInfo ptrs = a.info("ptrs");
  EXPECT_EQ(ptrs.contiguity, (V{1, 64}));
  EXPECT_EQ(ptrs.divisibility, (V{2, 16})) << ptrs.str();
  EXPECT_EQ(a.analysis->contiguityOrder(a.value("ptrs")), (V{1, 0}));
  EXPECT_EQ(a.info("one").constantValue, 1);
  EXPECT_EQ(a.info("cols1").contiguity, (V{1, 64})) << "multiplying by a value known to be 1 keeps runs";
  AxisInfo ptrsT = a.info("ptrsT");
  EXPECT_EQ(ptrsT.contiguity, (V{32, 1}));
  EXPECT_EQ(a.analysis->contiguityOrder(a.value("ptrsT")), (V{0, 1}));
}

TEST(AxisInfo, HintsRaiseFacts) {
  auto a = analyze(R"(
func @k(%m: i32) {
  %pid = program_id {axis = 0} : i32
  %c = constant {value = 128} : i32
  %base = mul %pid, %c : i32
  %r = arange {end = 128, start = 0} : tile<128xi32>
  %bs = splat %base : tile<128xi32>
  %o = add %bs, %r : tile<128xi32>
  %ms = splat %m : tile<128xi32>
  %w = rem %o, %ms : tile<128xi32>
  %h = hint %w {max_contiguous = [128], multiple_of = [128]} : tile<128xi32>
  %h2 = hint %w {max_constancy = [4], multiple_of = [12]} : tile<128xi32>
  return
}
)");
  AxisInfo w = a.info("w");
  EXPECT_EQ(w.contiguity, V{1}) << "signed remainder by an unknown value breaks runs";
  AxisInfo h = a.info("h");
  EXPECT_EQ(h.contiguity, V{128});
  EXPECT_EQ(h.divisibility, V{128});
  AxisInfo h2 = a.info("h2");
  EXPECT_EQ(h2.constancy, V{4});
  EXPECT_EQ(h2.divisibility, V{4}) << "multiple_of 12 means divisible by 4";
}

TEST(AxisInfo, ArithmeticTransferFunctions) {
  auto a = analyze(R"(
func @k(%n: i32 {divisibility = 8}, %u: u32) {
  %r = arange {end = 64, start = 0} : tile<64xi32>
  %c4 = constant {value = 4} : tile<64xi32>
  %c2 = constant {value = 2} : tile<64xi32>
  %shifted = shl %r, %c2 : tile<64xi32>
  %scaled = mul %r, %c4 : tile<64xi32>
  %quot = div %scaled, %c4 : tile<64xi32>
  %masked = and %r, %c4 : tile<64xi32>
  %ns = splat %n : tile<64xi32>
  %sum = add %ns, %r : tile<64xi32>
  %diff = sub %sum, %ns : tile<64xi32>
  %neg = sub %ns, %r : tile<64xi32>
  %zero = constant {value = 0} : i32
  %k = constant {value = 3} : i32
  %kk = add %k, %k : i32
  %ur = cast %r : tile<64xu32>
  %c16 = constant {value = 16} : tile<64xu32>
  %urem = rem %ur, %c16 : tile<64xu32>
  %trunc = cast %scaled : tile<64xi8>
  return
}
)");
  EXPECT_EQ(a.info("shifted").divisibility, V{4});
  EXPECT_EQ(a.info("shifted").contiguity, V{1});
  EXPECT_EQ(a.info("scaled").divisibility, V{4});
  EXPECT_EQ(a.info("quot").divisibility, V{1});
  EXPECT_EQ(a.info("masked").divisibility, V{4}) << "x & 4 keeps the two low zero bits of 4";
  EXPECT_EQ(a.info("sum").contiguity, V{64});
  EXPECT_EQ(a.info("sum").divisibility, V{8});
  EXPECT_EQ(a.info("diff").contiguity, V{64});
  EXPECT_EQ(a.info("neg").contiguity, V{1}) << "n - run decreases";
  EXPECT_EQ(a.info("neg").divisibility, V{1});
  EXPECT_EQ(a.info("zero").divisibility, V{kMaxDivisibility});
  EXPECT_EQ(a.info("kk").constantValue, 6);
  EXPECT_EQ(a.info("kk").divisibility, V{2});
  EXPECT_EQ(a.info("ur").contiguity, V{1}) << "a signedness change may wrap runs at zero";
  EXPECT_EQ(a.info("urem").contiguity, V{1}) << "the operand's runs are unknown after the cast";
  EXPECT_EQ(a.info("trunc").divisibility, V{4});
}

// Constant results follow the IR's integer rules (ir/IntegerSemantics.h): they wrap to the result type, and
// division by zero and shifts past the width have their defined values.
TEST(AxisInfo, ConstantsFoldWithTheIntegerRules) {
  auto a = analyze(R"(
func @k() {
  %big = constant {value = 100} : i8
  %sum = add %big, %big : i8
  %min = constant {value = -2147483648} : i32
  %neg1 = constant {value = -1} : i32
  %quot = div %min, %neg1 : i32
  %zero = constant {value = 0} : i32
  %byzero = div %neg1, %zero : i32
  %wide = constant {value = 40} : i32
  %gone = shl %neg1, %wide : i32
  %four = constant {value = 4} : u8
  %t = constant {value = 200} : u8
  %scaled = mul %t, %four : u8
  return
}
)");
  EXPECT_EQ(a.info("sum").constantValue, -56);
  EXPECT_EQ(a.info("quot").constantValue, -2147483648);  // MIN / -1 wraps to MIN
  EXPECT_EQ(a.info("byzero").constantValue, -1);
  EXPECT_EQ(a.info("gone").constantValue, 0);
  EXPECT_EQ(a.info("scaled").constantValue, 32);  // 800 mod 256
  EXPECT_EQ(a.info("scaled").divisibility, V{32});
}

TEST(AxisInfo, SelectAndUnsignedRemainder) {
  auto a = analyze(R"(
func @k(%c: i1, %p: u32 {divisibility = 64}) {
  %r = arange {end = 64, start = 0} : tile<64xi32>
  %u = cast %r : tile<64xi64>
  %ps = splat %p : tile<64xu32>
  %rr = arange {end = 64, start = 0} : tile<64xi32>
  %ru = cast %rr : tile<64xu32>
  %ruh = hint %ru {max_contiguous = [64], multiple_of = [64]} : tile<64xu32>
  %o = add %ps, %ruh : tile<64xu32>
  %c16 = constant {value = 16} : tile<64xu32>
  %w = rem %o, %c16 : tile<64xu32>
  %cs = splat %c : tile<64xi1>
  %s = select %cs, %o, %ps : tile<64xu32>
  %s3 = select %cs, %o, %o : tile<64xu32>
  %t = constant {value = true} : tile<64xi1>
  %s2 = select %t, %o, %ps : tile<64xu32>
  return
}
)");
  EXPECT_EQ(a.info("u").contiguity, V{64}) << "sign extension keeps values";
  EXPECT_EQ(a.info("w").contiguity, V{16});
  EXPECT_EQ(a.info("w").divisibility, V{16});
  EXPECT_EQ(a.info("s").contiguity, V{1}) << "one side is a constant, so runs do not survive";
  EXPECT_EQ(a.info("s").divisibility, V{1});
  EXPECT_EQ(a.info("s3").contiguity, V{64});
  EXPECT_EQ(a.info("s3").divisibility, V{64});
  EXPECT_EQ(a.info("s2").contiguity, V{64});
}

TEST(AxisInfo, LoopCarriedValuesAreConservative) {
  auto a = analyze(R"(
func @k(%p: ptr<f32> {divisibility = 16}, %k: i32, %n: i32) {
  %lb = constant {value = 0} : i32
  %step = constant {value = 1} : i32
  %r = arange {end = 128, start = 0} : tile<128xi32>
  %ps = splat %p : tile<128xptr<f32>>
  %ptrs = addptr %ps, %r : tile<128xptr<f32>>
  %c64 = constant {value = 64} : tile<128xi32>
  %ks = splat %k : tile<128xi32>
  %good, %bad = for %lb, %n, %step, %ptrs, %ptrs : tile<128xptr<f32>>, tile<128xptr<f32>> {
  ^(%iv: i32, %g: tile<128xptr<f32>>, %b: tile<128xptr<f32>>):
    %g2 = addptr %g, %c64 : tile<128xptr<f32>>
    %b2 = addptr %b, %ks : tile<128xptr<f32>>
    yield %g2, %b2
  }
  return
}
)");
  EXPECT_EQ(a.info("g").contiguity, V{128});
  EXPECT_EQ(a.info("g").divisibility, V{16}) << "advancing by 64 floats keeps 16-byte alignment";
  EXPECT_EQ(a.info("good").divisibility, V{16});
  EXPECT_EQ(a.info("b").contiguity, V{128});
  EXPECT_EQ(a.info("b").divisibility, V{4}) << "advancing by an unknown count only keeps element alignment";
  EXPECT_EQ(a.info("bad").divisibility, V{4});
  EXPECT_EQ(a.info("iv").divisibility, V{1});
}

TEST(AxisInfo, IfResultsMeetBothBranches) {
  auto a = analyze(R"(
func @k(%c: i1) {
  %r = arange {end = 32, start = 0} : tile<32xi32>
  %z = constant {value = 0} : tile<32xi32>
  %x = if %c : tile<32xi32> {
    yield %r
  } {
    yield %z
  }
  %y = if %c : tile<32xi32> {
    yield %r
  } {
    yield %r
  }
  return
}
)");
  EXPECT_EQ(a.info("x").contiguity, V{1});
  EXPECT_EQ(a.info("x").divisibility, V{1}) << "elements inside a run of the then-branch are odd";
  EXPECT_EQ(a.info("y").contiguity, V{32});
  EXPECT_EQ(a.info("y").divisibility, V{kMaxDivisibility});
}

TEST(AxisInfo, MeetAndDivisibilityAt) {
  AxisInfo run = AxisInfo::unknown(1);
  run.contiguity = {8};
  run.divisibility = {16};
  EXPECT_EQ(run.divisibilityAt(0, 8), 16);
  EXPECT_EQ(run.divisibilityAt(0, 16), 16);
  EXPECT_EQ(run.divisibilityAt(0, 4), 4);
  EXPECT_EQ(run.divisibilityAt(0, 1), 1);
  AxisInfo ptrRun = run;
  ptrRun.elementBytes = 4;
  EXPECT_EQ(ptrRun.divisibilityAt(0, 2), 8) << "two f32 steps after a 16-byte aligned start";
  EXPECT_EQ(ptrRun.divisibilityAt(0, 1), 4);
  AxisInfo every8 = AxisInfo::unknown(1);
  every8.divisibility = {8};
  AxisInfo m = AxisInfo::meet(run, every8);
  EXPECT_EQ(m.contiguity, V{1});
  EXPECT_EQ(m.divisibility, V{1});
}

// Soundness by brute force: evaluate straight-line index arithmetic on random argument values that satisfy
// the seeds, and check every claimed fact against the concrete values of every integer and pointer tile.
void expectFactsHold(const interp::Tile& t, const AxisInfo& info, const std::string& what) {
  const std::vector<int64_t>& shape = t.shape();
  int rank = static_cast<int>(shape.size());
  std::vector<int64_t> strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  for (int d = 0; d < rank; ++d) {
    for (int64_t i = 0; i < t.size(); ++i) {
      int64_t pos = (i / strides[d]) % shape[d];
      int64_t value = t.intAt(i);
      int64_t c = info.contiguity[d], k = info.constancy[d];
      if (pos % c != 0)
        ASSERT_EQ(value, t.intAt(i - strides[d]) + info.elementBytes) << what << " contiguity along " << d;
      else
        ASSERT_EQ(value % info.divisibility[d], 0) << what << " divisibility along " << d << ": " << value;
      if (pos % k != 0) ASSERT_EQ(value, t.intAt(i - strides[d])) << what << " constancy along " << d;
    }
  }
}

TEST(AxisInfo, FactsHoldOnConcreteValues) {
  const char* text = R"(
func @k(%p: ptr<f32> {divisibility = 16}, %n: i32 {divisibility = 16}, %one: i32 {equal_to_1 = true}, %m: i32) {
  %pid = program_id {axis = 0} : i32
  %c128 = constant {value = 128} : i32
  %base = mul %pid, %c128 : i32
  %r = arange {end = 32, start = 0} : tile<32xi32>
  %c = arange {end = 64, start = 0} : tile<64xi32>
  %bs = splat %base : tile<32xi32>
  %rows = add %bs, %r : tile<32xi32>
  %r2 = expand_dims %rows {axis = 1} : tile<32x1xi32>
  %c2 = expand_dims %c {axis = 0} : tile<1x64xi32>
  %ns = splat %n : tile<32x1xi32>
  %rowoff = mul %r2, %ns : tile<32x1xi32>
  %os = splat %one : tile<1x64xi32>
  %cols = mul %c2, %os : tile<1x64xi32>
  %rb = broadcast %rowoff : tile<32x64xi32>
  %cb = broadcast %cols : tile<32x64xi32>
  %off = add %rb, %cb : tile<32x64xi32>
  %ps = splat %p : tile<32x64xptr<f32>>
  %ptrs = addptr %ps, %off : tile<32x64xptr<f32>>
  %nb = splat %n : tile<32x64xi32>
  %mask = cmp %off, %nb {pred = "lt"} : tile<32x64xi1>
  %ms = splat %m : tile<32x64xi32>
  %mask2 = cmp %ms, %off {pred = "gt"} : tile<32x64xi1>
  %c4 = constant {value = 4} : tile<32x64xi32>
  %sh = shl %off, %c4 : tile<32x64xi32>
  %q = div %sh, %c4 : tile<32x64xi32>
  %x = and %off, %c4 : tile<32x64xi32>
  %sel = select %mask, %off, %sh : tile<32x64xi32>
  %t = trans %ptrs {perm = [1, 0]} : tile<64x32xptr<f32>>
  %rs = reshape %off : tile<2048xi32>
  %cc = cat %rows, %rows : tile<64xi32>
  %hi = hint %cc {max_constancy = [1], multiple_of = [1]} : tile<64xi32>
  %sub = sub %cb, %rb : tile<32x64xi32>
  %wide = cast %off : tile<32x64xi64>
  return
}
)";
  auto module = ir::parseModule(text);
  const ir::Function& f = *module->functions().front();
  AxisInfoAnalysis analysis(f);
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::unordered_map<const ir::Value*, interp::Tile> values;
    int64_t address = int64_t(rng() % 100000) * 16;
    int64_t n = int64_t(rng() % 64) * 16;
    values[f.argument(0)] = interp::Tile::scalarInt(f.argument(0)->type(), address);
    values[f.argument(1)] = interp::Tile::scalarInt(f.argument(1)->type(), n);
    values[f.argument(2)] = interp::Tile::scalarInt(f.argument(2)->type(), 1);
    values[f.argument(3)] = interp::Tile::scalarInt(f.argument(3)->type(), int64_t(rng() % 4000));
    interp::ProgramContext ctx;
    ctx.programId = {int64_t(rng() % 50), 0, 0};
    ctx.numPrograms = {64, 1, 1};
    for (const auto& op : f.body()->ops()) {
      if (op->is(ir::OpKind::Return)) break;
      std::vector<interp::Tile> operands;
      for (const ir::Value* v : op->operands()) operands.push_back(values.at(v));
      std::vector<interp::Tile> results = interp::evaluateOp(*op, operands, ctx);
      for (unsigned i = 0; i < op->numResults(); ++i) {
        const ir::Value* r = op->result(i);
        values[r] = results[i];
        if (r->type().isTile() && (r->type().element().isInt() || r->type().element().isPtr()))
          expectFactsHold(results[i], analysis.get(r), "%" + r->nameHint() + " " + analysis.get(r).str());
      }
    }
  }
  // The facts checked above are not trivial ones.
  std::map<std::string, AxisInfo> byName;
  for (const auto& op : f.body()->ops())
    for (const ir::Value* r : op->results()) byName[r->nameHint()] = analysis.get(r);
  EXPECT_EQ(byName["ptrs"].contiguity, (V{1, 64}));
  EXPECT_EQ(byName["ptrs"].divisibility, (V{4, 16})) << "down a column: p + 4 * (i * n + j) for any j";
  EXPECT_EQ(byName["mask"].constancy, (V{1, 16}));
  EXPECT_EQ(byName["t"].contiguity, (V{64, 1}));
  EXPECT_EQ(byName["cc"].contiguity, V{32});
}

}  // namespace
