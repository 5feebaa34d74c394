// Tests of the reference interpreter's machinery: tiles, run() (arguments, grid, control
// flow, memory checks, diagnostics) and the basics of reduce/scan/dot/atomics. The exhaustive per-op
// semantics live in their own suite.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "backends/interpreter/Interpreter.h"
#include "backends/interpreter/Tile.h"
#include "ir/Builder.h"
#include "ir/FloatFormats.h"
#include "ir/Verifier.h"

using namespace tessera;
using namespace tessera::interp;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Type ptrF32() { return Type::ptr(Type::f32()); }
Type tileOf(std::vector<int64_t> shape, Type element) { return Type::tile(shape, element); }

// A function under construction, with a builder positioned at the end of its body.
struct Kernel {
  std::unique_ptr<ir::Function> f;
  ir::Builder b;
  explicit Kernel(const std::vector<Type>& params) : f(std::make_unique<ir::Function>("k", params)) {
    b.setInsertionPointToEnd(f->body());
  }
  Value* arg(unsigned i) { return f->argument(i); }
  Value* i32(int64_t v) { return b.constantInt(v, Type::i32()); }
};

// Evaluates a single freshly built op on the given operands.
std::vector<Tile> evalIn(Kernel& k, ir::Op* op, const std::vector<Tile>& operands) {
  ProgramContext ctx;
  return evaluateOp(*op, operands, ctx);
}

template <class Fn>
std::string errorOf(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

Buffer bufferOf(std::vector<float>& v) { return Buffer{v.data(), v.size() * sizeof(float)}; }

// ---------------------------------------------------------------- tiles

TEST(TileTest, PrintsNestedBrackets) {
  Tile t(tileOf({2, 2}, Type::f32()));
  t.floats = {1.5, 2, 3, 4};
  EXPECT_EQ(t.str(), "[[1.5, 2], [3, 4]]");
  EXPECT_EQ(Tile::scalarInt(Type::i32(), 7).str(), "7");
  EXPECT_EQ(Tile::scalarFloat(Type::f32(), 0.1).str(), "0.1");  // shortest text for the f32 value
  EXPECT_EQ(Tile::scalarFloat(Type::f16(), -kInf).str(), "-inf");
  EXPECT_EQ(Tile::scalarInt(Type::scalar(ir::ScalarKind::U32), -1).str(), "4294967295");
  Tile cube(tileOf({2, 1, 2}, Type::i32()));
  cube.ints = {1, 2, 3, 4};
  EXPECT_EQ(cube.str(), "[[[1, 2]], [[3, 4]]]");
  EXPECT_DOUBLE_EQ(Tile::scalarInt(Type::scalar(ir::ScalarKind::U64), -1).asDouble(0), 18446744073709551616.0);
}

// ---------------------------------------------------------------- run(): grid, masks, arguments

// out[i] = x[i] + y[i] for i < n, BLOCK elements per program.
std::unique_ptr<ir::Function> buildVectorAdd(int64_t block) {
  Kernel k({ptrF32(), ptrF32(), ptrF32(), Type::i32()});
  auto& b = k.b;
  Value* start = b.binary(OpKind::Mul, b.programId(0), k.i32(block));
  Value* idx = b.binary(OpKind::Add, b.splat(start, {block}), b.arange(0, block));
  Value* mask = b.cmp("lt", idx, b.splat(k.arg(3), {block}));
  auto at = [&](unsigned i) { return b.addptr(b.splat(k.arg(i), {block}), idx); };
  Value* sum = b.binary(OpKind::Add, b.load(at(0), mask), b.load(at(1), mask));
  b.store(at(2), sum, mask);
  b.ret();
  return std::move(k.f);
}

TEST(Run, VectorAddWithMaskedTail) {
  auto f = buildVectorAdd(256);
  const int n = 1000;  // the last program's tail lanes are masked off and would be out of bounds
  std::vector<float> x(n), y(n), out(n, -1);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1000.0f - i;
  }
  run(*f, {bufferOf(x), bufferOf(y), bufferOf(out), int64_t(n)}, {4, 1, 1});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], x[i] + y[i]) << i;
}

TEST(Run, ProgramsRunXFastest) {
  // Each program appends its linear id at out[counter++] through an atomic add on the counter.
  Kernel k({Type::ptr(Type::i32()), Type::ptr(Type::i32())});
  auto& b = k.b;
  Value* slot = b.atomicRMW("add", k.arg(0), k.i32(1));
  Value* linear = b.binary(OpKind::Add, b.programId(0),
                           b.binary(OpKind::Mul, k.i32(10),
                                    b.binary(OpKind::Add, b.programId(1), b.binary(OpKind::Mul, k.i32(10), b.programId(2)))));
  b.store(b.addptr(k.arg(1), slot), linear);
  b.ret();
  std::vector<int32_t> counter(1, 0), order(12, -1);
  run(*k.f, {Buffer{counter.data(), 4}, Buffer{order.data(), order.size() * 4}}, {3, 2, 2});
  EXPECT_EQ(counter[0], 12);
  std::vector<int32_t> expected = {0, 1, 2, 10, 11, 12, 100, 101, 102, 110, 111, 112};
  EXPECT_EQ(order, expected);
}

TEST(Run, RowSumReductionOverGrid) {
  // One program per row of an M x N row-major matrix; BLOCK_N >= N columns, the tail masked off.
  const int64_t m = 8, n = 50, blockN = 64;
  Kernel k({ptrF32(), ptrF32(), Type::i32()});
  auto& b = k.b;
  Value* row = b.programId(0);
  Value* cols = b.arange(0, blockN);
  Value* offs = b.binary(OpKind::Add, b.splat(b.binary(OpKind::Mul, row, k.arg(2)), {blockN}), cols);
  Value* mask = b.cmp("lt", cols, b.splat(k.arg(2), {blockN}));
  Value* vals = b.load(b.addptr(b.splat(k.arg(0), {blockN}), offs), mask);
  ir::Op* sum = b.reduce({vals}, 0, [](ir::Builder& rb, const std::vector<Value*>& a) {
    return std::vector<Value*>{rb.binary(OpKind::Add, a[0], a[1])};
  });
  b.store(b.addptr(k.arg(1), row), sum->result(0));
  b.ret();
  std::vector<float> matrix(m * n), sums(m, 0);
  for (int64_t i = 0; i < m * n; ++i) matrix[i] = static_cast<float>(i % 7) - 2.5f;
  run(*k.f, {bufferOf(matrix), bufferOf(sums), n}, {m, 1, 1});
  for (int64_t r = 0; r < m; ++r) {
    float expected = 0;
    for (int64_t c = 0; c < n; ++c) expected += matrix[r * n + c];
    EXPECT_EQ(sums[r], expected) << "row " << r;
  }
}

TEST(Run, ScalarArgumentsTakeTheParameterType) {
  // out[0] = a (i8, wraps), out[1] = b (i1, nonzero is true), out[2] = c (f16, rounded)
  Kernel k({ptrF32(), Type::scalar(ir::ScalarKind::I8), Type::i1(), Type::f16()});
  auto& b = k.b;
  b.store(k.arg(0), b.cast(k.arg(1), Type::f32()));
  b.store(b.addptr(k.arg(0), k.i32(1)), b.cast(k.arg(2), Type::f32()));
  b.store(b.addptr(k.arg(0), k.i32(2)), b.cast(k.arg(3), Type::f32()));
  b.ret();
  std::vector<float> out(3);
  run(*k.f, {bufferOf(out), int64_t(200), int64_t(2), 0.1}, {1, 1, 1});
  EXPECT_EQ(out, (std::vector<float>{-56.0f, 1.0f, static_cast<float>(ir::roundToF16(0.1))}));
}

TEST(Run, ArgumentCountAndKindErrors) {
  auto f = buildVectorAdd(64);
  std::vector<float> x(64);
  std::string tooFew = errorOf([&] { run(*f, {bufferOf(x)}, {1, 1, 1}); });
  EXPECT_NE(tooFew.find("takes 4 arguments, got 1"), std::string::npos) << tooFew;
  std::string wrongKind = errorOf([&] { run(*f, {bufferOf(x), bufferOf(x), bufferOf(x), 3.0}, {1, 1, 1}); });
  EXPECT_NE(wrongKind.find("parameter 3 (i32) expects an integer, got a double"), std::string::npos) << wrongKind;
  std::string pointerKind = errorOf([&] { run(*f, {bufferOf(x), int64_t(0), bufferOf(x), int64_t(1)}, {1, 1, 1}); });
  EXPECT_NE(pointerKind.find("parameter 1 (ptr<f32>) expects a buffer, got an integer"), std::string::npos)
      << pointerKind;
  std::string badGrid = errorOf([&] { run(*f, {bufferOf(x), bufferOf(x), bufferOf(x), int64_t(1)}, {1, 0, 1}); });
  EXPECT_NE(badGrid.find("grid must be positive in every dimension; dimension 1 is 0"), std::string::npos) << badGrid;
  Kernel floatParam({Type::f32()});
  floatParam.b.ret();
  std::string floatKind = errorOf([&] { run(*floatParam.f, {int64_t(1)}, {1, 1, 1}); });
  EXPECT_NE(floatKind.find("parameter 0 (f32) expects a double, got an integer"), std::string::npos) << floatKind;
}

TEST(Run, OutOfBoundsAccessNamesOpLocationProgramAndOffset) {
  auto f = buildVectorAdd(64);
  // Tag the loads with a source location.
  f->walk([](ir::Op* op) {
    if (op->is(OpKind::Load)) op->setLoc(Location{"kernel.cpp", 12, 5});
  });
  std::vector<float> x(100), y(100), out(100);
  // n = 128 lets program 1 read past the end of the 100-element buffers (element 100 is the first bad one).
  std::string msg = errorOf([&] { run(*f, {bufferOf(x), bufferOf(y), bufferOf(out), int64_t(128)}, {2, 1, 1}); });
  EXPECT_NE(msg.find("kernel.cpp:12:5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'load'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("out-of-bounds"), std::string::npos) << msg;
  EXPECT_NE(msg.find("program (1, 0, 0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("byte offset 400"), std::string::npos) << msg;
  EXPECT_NE(msg.find("element 36"), std::string::npos) << msg;  // lane 36 of program 1 is index 100
  // Nothing was written by the failing program... but program 0 ran completely.
  EXPECT_EQ(out[63], x[63] + y[63]);
}

TEST(Run, UnmaskedStoreOutOfBoundsThrows) {
  Kernel k({ptrF32()});
  k.b.store(k.b.addptr(k.arg(0), k.i32(-1)), k.b.constantFloat(1.0, Type::f32()));
  k.b.ret();
  std::vector<float> x(4);
  std::string msg = errorOf([&] { run(*k.f, {bufferOf(x)}, {1, 1, 1}); });
  EXPECT_NE(msg.find("'store'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("byte offset -4"), std::string::npos) << msg;
}

TEST(Run, DeviceAssertFailure) {
  Kernel k({Type::i32()});
  Value* ok = k.b.cmp("lt", k.b.programId(0), k.arg(0));
  k.b.setLoc(Location{"assert.cpp", 7, 3});
  k.b.deviceAssert(ok, "pid must be below the limit");
  k.b.ret();
  EXPECT_NO_THROW(run(*k.f, {int64_t(3)}, {3, 1, 1}));
  std::string msg = errorOf([&] { run(*k.f, {int64_t(2)}, {3, 1, 1}); });
  EXPECT_NE(msg.find("assert.cpp:7:3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device_assert failed: pid must be below the limit"), std::string::npos) << msg;
  EXPECT_NE(msg.find("program (2, 0, 0)"), std::string::npos) << msg;
}

TEST(Run, DebugPrintIsCapturedWithProgramIds) {
  Kernel k({});
  Value* range = k.b.arange(0, 4);
  k.b.debugPrint("x: ", {range, k.b.programId(1)});
  k.b.ret();
  std::ostringstream out;
  run(*k.f, {}, {1, 2, 1}, &out);
  EXPECT_EQ(out.str(), "pid (0, 0, 0) x: [0, 1, 2, 3] 0\npid (0, 1, 0) x: [0, 1, 2, 3] 1\n");
}

// ---------------------------------------------------------------- control flow

// Builds: out[0] = for iv in [lb, ub) step s: acc += iv (acc starts at init).
std::unique_ptr<ir::Function> buildSumLoop() {
  Kernel k({Type::ptr(Type::i32()), Type::i32(), Type::i32(), Type::i32(), Type::i32()});
  auto& b = k.b;
  ir::Op* loop = b.forOp(k.arg(1), k.arg(2), k.arg(3), {k.arg(4)});
  ir::Builder body(loop->region(0));
  body.yield({body.binary(OpKind::Add, loop->region(0)->argument(1), loop->region(0)->argument(0))});
  b.store(k.arg(0), loop->result(0));
  b.ret();
  return std::move(k.f);
}

TEST(ControlFlow, ForLoop) {
  auto f = buildSumLoop();
  std::vector<int32_t> out(1);
  Buffer buf{out.data(), 4};
  run(*f, {buf, int64_t(0), int64_t(10), int64_t(3), int64_t(100)}, {1, 1, 1});
  EXPECT_EQ(out[0], 100 + 0 + 3 + 6 + 9);
  run(*f, {buf, int64_t(5), int64_t(5), int64_t(1), int64_t(42)}, {1, 1, 1});  // zero trips: the init
  EXPECT_EQ(out[0], 42);
  run(*f, {buf, int64_t(7), int64_t(-3), int64_t(1), int64_t(-8)}, {1, 1, 1});
  EXPECT_EQ(out[0], -8);
  // Near the top of i32: the loop ends instead of wrapping around.
  run(*f, {buf, int64_t(INT32_MAX - 1), int64_t(INT32_MAX), int64_t(5), int64_t(0)}, {1, 1, 1});
  EXPECT_EQ(out[0], INT32_MAX - 1);
}

TEST(ControlFlow, ForLoopRejectsNonPositiveStep) {
  auto f = buildSumLoop();
  f->walk([](ir::Op* op) {
    if (op->is(OpKind::For)) op->setLoc(Location{"loop.cpp", 3, 9});
  });
  std::vector<int32_t> out(1);
  for (int64_t step : {int64_t(0), int64_t(-2)}) {
    std::string msg = errorOf([&] { run(*f, {Buffer{out.data(), 4}, int64_t(0), int64_t(10), step, int64_t(0)}, {1, 1, 1}); });
    EXPECT_NE(msg.find("loop.cpp:3:9"), std::string::npos) << msg;
    EXPECT_NE(msg.find("step must be positive, got " + std::to_string(step)), std::string::npos) << msg;
  }
}

TEST(ControlFlow, IfAndWhile) {
  // out[0] = (a > 10) ? a * 2 : a - 1;  out[1] = smallest power of two >= a (by doubling in a while loop).
  Kernel k({Type::ptr(Type::i32()), Type::i32()});
  auto& b = k.b;
  Value* a = k.arg(1);
  ir::Op* branch = b.ifOp(b.cmp("gt", a, k.i32(10)), {Type::i32()});
  ir::Builder thenB(branch->region(0)), elseB(branch->region(1));
  thenB.yield({thenB.binary(OpKind::Mul, a, thenB.constantInt(2, Type::i32()))});
  elseB.yield({elseB.binary(OpKind::Sub, a, elseB.constantInt(1, Type::i32()))});
  b.store(k.arg(0), branch->result(0));

  ir::Op* loop = b.whileOp({k.i32(1)});
  ir::Builder before(loop->region(0)), after(loop->region(1));
  before.yield({before.cmp("lt", loop->region(0)->argument(0), a)});
  after.yield({after.binary(OpKind::Mul, loop->region(1)->argument(0), after.constantInt(2, Type::i32()))});
  b.store(b.addptr(k.arg(0), k.i32(1)), loop->result(0));
  b.ret();

  std::vector<int32_t> out(2);
  Buffer buf{out.data(), 8};
  run(*k.f, {buf, int64_t(37)}, {1, 1, 1});
  EXPECT_EQ(out[0], 74);
  EXPECT_EQ(out[1], 64);
  run(*k.f, {buf, int64_t(1)}, {1, 1, 1});  // the while body never runs
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 1);
}

// ---------------------------------------------------------------- reduce, scan, dot, atomics via evaluateOp

TEST(Semantics, ScanForwardAndReverse) {
  Kernel k({tileOf({2, 4}, Type::i32())});
  auto add = [](ir::Builder& rb, const std::vector<Value*>& a) {
    return std::vector<Value*>{rb.binary(OpKind::Add, a[0], a[1])};
  };
  ir::Op* forward = k.b.scan({k.arg(0)}, 1, false, add);
  ir::Op* reverse = k.b.scan({k.arg(0)}, 0, true, add);
  Tile in(tileOf({2, 4}, Type::i32()));
  in.ints = {1, 2, 3, 4, 10, 20, 30, 40};
  EXPECT_EQ(evalIn(k, forward, {in})[0].ints, (std::vector<int64_t>{1, 3, 6, 10, 10, 30, 60, 100}));
  EXPECT_EQ(evalIn(k, reverse, {in})[0].ints, (std::vector<int64_t>{11, 22, 33, 44, 10, 20, 30, 40}));
}

// Combine region keeping the larger value and its index (first index on ties): a multi-op region.
std::vector<Value*> argmaxCombine(ir::Builder& rb, const std::vector<Value*>& a) {
  Value* takeNew = rb.cmp("gt", a[2], a[0]);
  return {rb.select(takeNew, a[2], a[0]), rb.select(takeNew, a[3], a[1])};
}

TEST(Semantics, MultiInputReduceOverLanesAndScalars) {
  Kernel k({tileOf({2, 4}, Type::f32()), tileOf({2, 4}, Type::i32()), tileOf({8}, Type::f32()),
            tileOf({8}, Type::i32())});
  ir::Op* rows = k.b.reduce({k.arg(0), k.arg(1)}, 1, argmaxCombine);  // 2 lanes at once
  ir::Op* cols = k.b.reduce({k.arg(0), k.arg(1)}, 0, argmaxCombine);  // 4 lanes at once
  ir::Op* flat = k.b.reduce({k.arg(2), k.arg(3)}, 0, argmaxCombine);  // one lane, to scalars
  Tile values(tileOf({2, 4}, Type::f32())), index(tileOf({2, 4}, Type::i32()));
  values.floats = {3, 9, 9, 1, -5, -1, -7, -1};
  index.ints = {0, 1, 2, 3, 4, 5, 6, 7};
  auto r = evalIn(k, rows, {values, index});
  EXPECT_EQ(r[0].floats, (std::vector<double>{9, -1}));
  EXPECT_EQ(r[1].ints, (std::vector<int64_t>{1, 5}));
  auto c = evalIn(k, cols, {values, index});
  EXPECT_EQ(c[0].floats, (std::vector<double>{3, 9, 9, 1}));
  EXPECT_EQ(c[1].ints, (std::vector<int64_t>{0, 1, 2, 3}));
  Tile flatValues(tileOf({8}, Type::f32())), flatIndex(tileOf({8}, Type::i32()));
  flatValues.floats = values.floats;
  flatIndex.ints = index.ints;
  auto s = evalIn(k, flat, {flatValues, flatIndex});
  EXPECT_FALSE(s[0].type.isTile());
  EXPECT_EQ(s[0].floats[0], 9);
  EXPECT_EQ(s[1].ints[0], 1);
}

TEST(Semantics, ReduceFoldsLeftToRightWithRounding) {
  // In f16, 2048 + 1 rounds back to 2048, so the left fold [2048, 1, 1, 1] gives 2048 while [1, 1, 1, 2048]
  // would give 2051 -> 2052. The interpreter's order is index order.
  Kernel k({tileOf({4}, Type::f16())});
  ir::Op* sum = k.b.reduce({k.arg(0)}, 0, [](ir::Builder& rb, const std::vector<Value*>& a) {
    return std::vector<Value*>{rb.binary(OpKind::Add, a[0], a[1])};
  });
  Tile in(tileOf({4}, Type::f16()));
  in.floats = {2048, 1, 1, 1};
  EXPECT_EQ(evalIn(k, sum, {in})[0].floats[0], 2048);
  in.floats = {1, 1, 1, 2048};
  EXPECT_EQ(evalIn(k, sum, {in})[0].floats[0], 2052);
}

TEST(Semantics, DotAccumulatesExactlyAndRoundsOnce) {
  Kernel k({tileOf({2, 2}, Type::f16()), tileOf({2, 2}, Type::f16()), tileOf({2, 2}, Type::f16()),
            tileOf({2, 4}, Type::scalar(ir::ScalarKind::I8)), tileOf({4, 2}, Type::scalar(ir::ScalarKind::I8)),
            tileOf({2, 2}, Type::i32()), tileOf({2, 2}, Type::f32()), tileOf({2, 2}, Type::f32())});
  Value* halfDot = k.b.dot(k.arg(0), k.arg(1), k.arg(2));
  Value* intDot = k.b.dot(k.arg(3), k.arg(4), k.arg(5));
  Value* tf32Dot = k.b.dot(k.arg(6), k.arg(6), k.arg(7), "tf32");
  Value* ieeeDot = k.b.dot(k.arg(6), k.arg(6), k.arg(7), "ieee");

  // f16 accumulator: 2048 + 1 + 1 is 2050 exactly, while rounding after each add would stay at 2048.
  Tile a(tileOf({2, 2}, Type::f16())), ident(tileOf({2, 2}, Type::f16())), acc(tileOf({2, 2}, Type::f16()));
  a.floats = {1, 1, 1, 1};
  ident.floats = {1, 0, 0, 1};
  acc.floats = {2048, 0, 0, 0};
  std::vector<Tile> r = evalIn(k, halfDot->definingOp(), {a, a, acc});
  EXPECT_EQ(r[0].floats, (std::vector<double>{2050, 2, 2, 2}));
  // 2048 + 1 = 2049 is a tie between the f16 values 2048 and 2050: rounds to even 2048.
  EXPECT_EQ(evalIn(k, halfDot->definingOp(), {ident, a, acc})[0].floats, (std::vector<double>{2048, 1, 1, 1}));

  Tile ai(tileOf({2, 4}, Type::scalar(ir::ScalarKind::I8))), bi(tileOf({4, 2}, Type::scalar(ir::ScalarKind::I8)));
  Tile acci(tileOf({2, 2}, Type::i32()));
  ai.ints = {-128, -128, -128, -128, 1, 2, 3, 4};
  bi.ints = {-128, 1, -128, 1, -128, 1, -128, 1};
  acci.ints = {INT32_MAX, 0, 0, 5};
  auto ri = evalIn(k, intDot->definingOp(), {ai, bi, acci});
  // 4 * 16384 added to INT32_MAX wraps once; the rest is plain.
  EXPECT_EQ(ri[0].ints, (std::vector<int64_t>{int64_t(INT32_MAX) + 65536 - (int64_t(1) << 32), -512, -1280, 15}));

  Tile x(tileOf({2, 2}, Type::f32())), zero(tileOf({2, 2}, Type::f32()));
  const double fine = 1.0 + std::ldexp(1.0, -20);  // not representable in tf32: rounds to 1.0
  x.floats = {fine, 0, 0, 1};
  EXPECT_EQ(evalIn(k, tf32Dot->definingOp(), {x, x, zero})[0].floats[0], 1.0);
  EXPECT_EQ(evalIn(k, ieeeDot->definingOp(), {x, x, zero})[0].floats[0], ir::roundToF32(fine * fine));
}

TEST(Semantics, AtomicsAreSequentialAndReturnOldValues) {
  Kernel k({tileOf({4}, Type::ptr(Type::i32())), tileOf({4}, Type::i32()), tileOf({4}, Type::i1()),
            tileOf({2}, ptrF32()), tileOf({2}, Type::f32())});
  Value* add = k.b.atomicRMW("add", k.arg(0), k.arg(1), k.arg(2));
  Value* maxOp = k.b.atomicRMW("max", k.arg(0), k.arg(1));
  Value* cas = k.b.atomicCAS(k.arg(3), k.arg(4), k.arg(4));
  Value* xchg = k.b.atomicRMW("xchg", k.arg(3), k.arg(4));

  std::vector<int32_t> mem{100, 200};
  ProgramContext ctx;
  ctx.buffers.push_back(Buffer{mem.data(), 8});
  auto base = static_cast<int64_t>(reinterpret_cast<uintptr_t>(mem.data()));
  Tile ptrs(tileOf({4}, Type::ptr(Type::i32())));
  ptrs.ints = {base, base, base + 4, base};  // three lanes hit mem[0]
  Tile vals(tileOf({4}, Type::i32()));
  vals.ints = {1, 2, 3, 4};
  Tile mask(tileOf({4}, Type::i1()));
  mask.ints = {1, 1, 1, 0};
  auto old = evaluateOp(*add->definingOp(), {ptrs, vals, mask}, ctx);
  EXPECT_EQ(old[0].ints, (std::vector<int64_t>{100, 101, 200, 0}));  // masked-off lane: zero
  EXPECT_EQ(mem, (std::vector<int32_t>{103, 203}));
  vals.ints = {500, -1, 7, 104};
  old = evaluateOp(*maxOp->definingOp(), {ptrs, vals}, ctx);
  EXPECT_EQ(old[0].ints, (std::vector<int64_t>{103, 500, 203, 500}));
  EXPECT_EQ(mem, (std::vector<int32_t>{500, 203}));

  std::vector<float> fmem{1.5f, 2.5f};
  ctx.buffers.push_back(Buffer{fmem.data(), 8});
  auto fbase = static_cast<int64_t>(reinterpret_cast<uintptr_t>(fmem.data()));
  Tile fptrs(tileOf({2}, ptrF32()));
  fptrs.ints = {fbase, fbase + 4};
  Tile expected(tileOf({2}, Type::f32()));
  expected.floats = {1.5, 9.0};  // swaps only the first: cmp == value, stored value unchanged but compared
  auto casOld = evaluateOp(*cas->definingOp(), {fptrs, expected, expected}, ctx);
  EXPECT_EQ(casOld[0].floats, (std::vector<double>{1.5, 2.5}));
  Tile newVals(tileOf({2}, Type::f32()));
  newVals.floats = {-1, -2};
  auto xchgOld = evaluateOp(*xchg->definingOp(), {fptrs, newVals}, ctx);
  EXPECT_EQ(xchgOld[0].floats, (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(fmem, (std::vector<float>{-1, -2}));
}

TEST(Semantics, AtomicCASSwapsOnlyOnBitwiseMatch) {
  Kernel k({Type::ptr(Type::i32()), Type::i32(), Type::i32()});
  Value* cas = k.b.atomicCAS(k.arg(0), k.arg(1), k.arg(2));
  int32_t cell = 5;
  ProgramContext ctx;
  ctx.buffers.push_back(Buffer{&cell, 4});
  Tile p = Tile::scalarInt(Type::ptr(Type::i32()), static_cast<int64_t>(reinterpret_cast<uintptr_t>(&cell)));
  auto r = evaluateOp(*cas->definingOp(), {p, Tile::scalarInt(Type::i32(), 4), Tile::scalarInt(Type::i32(), 9)}, ctx);
  EXPECT_EQ(r[0].ints[0], 5);
  EXPECT_EQ(cell, 5);
  r = evaluateOp(*cas->definingOp(), {p, Tile::scalarInt(Type::i32(), 5), Tile::scalarInt(Type::i32(), 9)}, ctx);
  EXPECT_EQ(r[0].ints[0], 5);
  EXPECT_EQ(cell, 9);
}

TEST(Semantics, MemoryUsesStorageEncodings) {
  // f16 and i1 loads read 2 bytes and 1 byte of real storage; stores write the same encodings.
  Kernel k({tileOf({2}, Type::ptr(Type::f16())), tileOf({2}, Type::ptr(Type::i1()))});
  Value* halves = k.b.load(k.arg(0));
  Value* bools = k.b.load(k.arg(1));
  k.b.store(k.arg(0), k.b.unary(OpKind::Neg, halves));
  std::vector<uint16_t> hmem{0x3C00, 0x7BFF};  // 1.0, 65504
  std::vector<uint8_t> bmem{0, 1};
  ProgramContext ctx;
  ctx.buffers = {Buffer{hmem.data(), 4}, Buffer{bmem.data(), 2}};
  auto addr = [](const void* p, int64_t off) { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p)) + off; };
  Tile hp(tileOf({2}, Type::ptr(Type::f16())));
  hp.ints = {addr(hmem.data(), 0), addr(hmem.data(), 2)};
  Tile bp(tileOf({2}, Type::ptr(Type::i1())));
  bp.ints = {addr(bmem.data(), 0), addr(bmem.data(), 1)};
  Tile h = evaluateOp(*halves->definingOp(), {hp}, ctx)[0];
  EXPECT_EQ(h.floats, (std::vector<double>{1.0, 65504.0}));
  EXPECT_EQ(evaluateOp(*bools->definingOp(), {bp}, ctx)[0].ints, (std::vector<int64_t>{0, 1}));
  ir::Op* negOp = k.f->body()->ops().back()->operand(1)->definingOp();
  Tile negated = evaluateOp(*negOp, {h}, ctx)[0];
  evaluateOp(*k.f->body()->ops().back(), {hp, negated}, ctx);
  EXPECT_EQ(hmem, (std::vector<uint16_t>{0xBC00, 0xFBFF}));
}

TEST(Semantics, EvaluateOpRejectsControlFlow) {
  Kernel k({Type::i1()});
  ir::Op* branch = k.b.ifOp(k.arg(0), {});
  ProgramContext ctx;
  std::string msg = errorOf([&] { evaluateOp(*branch, {Tile::scalarInt(Type::i1(), 1)}, ctx); });
  EXPECT_NE(msg.find("'if'"), std::string::npos) << msg;
}

TEST(Run, ADotLeftInFlightIsWaitedForAfterItsLoop) {
  // pipeline-loops' form of a K loop on a target with asynchronous dots: the dot's products pending (the
  // interpreter's dots are synchronous), a dot_wait after the loop; the result is the loop's three products.
  Kernel k({ptrF32()});
  auto& b = k.b;
  Value* acc0 = b.constantFloat(0.0, tileOf({16, 16}, Type::f32()));
  ir::Op* loop = b.forOp(k.i32(0), k.i32(3), k.i32(1), {acc0});
  {
    ir::Builder lb(loop->region(0));
    Value* product = lb.dot(lb.constantFloat(1.0, tileOf({16, 16}, Type::f16())),
                            lb.constantFloat(2.0, tileOf({16, 16}, Type::f16())), loop->region(0)->argument(1));
    product->definingOp()->setAttr("pending", ir::Attr::integer(1));
    lb.yield({product});
  }
  Value* done = b.create(OpKind::DotWait, {loop->result(0)}, {loop->result(0)->type()},
                         {{"pending", ir::Attr::integer(0)}})->result(0);
  Value* rows = b.binary(OpKind::Mul, b.broadcast(b.expandDims(b.arange(0, 16), 1), {16, 16}),
                         b.constantInt(16, tileOf({16, 16}, Type::i32())));
  Value* offsets = b.binary(OpKind::Add, rows, b.broadcast(b.expandDims(b.arange(0, 16), 0), {16, 16}));
  b.store(b.addptr(b.splat(k.arg(0), {16, 16}), offsets), done);
  b.ret();
  ir::verify(*k.f);
  std::vector<float> out(256, -1.0f);
  run(*k.f, {bufferOf(out)}, {1, 1, 1});
  for (float v : out) ASSERT_EQ(v, 3 * 16 * 2.0f);
}

// ---------------------------------------------------------------- performance smoke test

TEST(Performance, TiledMatmulRunsQuickly) {
  // C[M x N] = A[M x K] * B[K x N] with 64x64x32 tiles and masks on every edge.
  const int64_t m = 200, n = 200, kDim = 100, bm = 64, bn = 64, bk = 32;
  Kernel k({ptrF32(), ptrF32(), ptrF32()});
  auto& b = k.b;
  auto splat2 = [&](Value* v) { return b.broadcast(b.splat(v, {1, 1}), {bm, bn}); };
  Value* rows = b.binary(OpKind::Add, b.splat(b.binary(OpKind::Mul, b.programId(0), k.i32(bm)), {bm}), b.arange(0, bm));
  Value* cols = b.binary(OpKind::Add, b.splat(b.binary(OpKind::Mul, b.programId(1), k.i32(bn)), {bn}), b.arange(0, bn));
  Value* rows2 = b.expandDims(rows, 1);  // bm x 1
  Value* cols2 = b.expandDims(cols, 0);  // 1 x bn
  Value* acc0 = b.constantFloat(0.0, tileOf({bm, bn}, Type::f32()));
  ir::Op* loop = b.forOp(k.i32(0), k.i32(kDim), k.i32(bk), {acc0});
  {
    ir::Builder lb(loop->region(0));
    Value* k0 = loop->region(0)->argument(0);
    Value* acc = loop->region(0)->argument(1);
    Value* ks = lb.binary(OpKind::Add, lb.splat(k0, {bk}), lb.arange(0, bk));
    auto index = [&](Value* r, Value* c, int64_t stride, std::vector<int64_t> shape) {
      Value* rr = lb.broadcast(r, shape);
      Value* cc = lb.broadcast(c, shape);
      Value* s = lb.broadcast(lb.splat(lb.constantInt(stride, Type::i32()), {1, 1}), shape);
      return lb.binary(OpKind::Add, lb.binary(OpKind::Mul, rr, s), cc);
    };
    auto inRange = [&](Value* r, Value* c, int64_t rmax, int64_t cmax, std::vector<int64_t> shape) {
      Value* rm = lb.cmp("lt", r, lb.broadcast(lb.splat(lb.constantInt(rmax, Type::i32()), {1, 1}),
                                               r->type().shape()));
      Value* cm = lb.cmp("lt", c, lb.broadcast(lb.splat(lb.constantInt(cmax, Type::i32()), {1, 1}),
                                               c->type().shape()));
      return lb.binary(OpKind::And, lb.broadcast(rm, shape), lb.broadcast(cm, shape));
    };
    Value* ksRow = lb.expandDims(ks, 0);  // 1 x bk
    Value* ksCol = lb.expandDims(ks, 1);  // bk x 1
    Value* aIdx = index(rows2, ksRow, kDim, {bm, bk});
    Value* bIdx = index(ksCol, cols2, n, {bk, bn});
    Value* aTile = lb.load(lb.addptr(lb.splat(k.arg(0), {bm, bk}), aIdx), inRange(rows2, ksRow, m, kDim, {bm, bk}));
    Value* bTile = lb.load(lb.addptr(lb.splat(k.arg(1), {bk, bn}), bIdx), inRange(ksCol, cols2, kDim, n, {bk, bn}));
    lb.yield({lb.dot(aTile, bTile, acc)});
  }
  Value* cIdx = b.binary(OpKind::Add, b.binary(OpKind::Mul, b.broadcast(rows2, {bm, bn}), splat2(k.i32(n))),
                         b.broadcast(cols2, {bm, bn}));
  Value* cMask = b.binary(OpKind::And, b.cmp("lt", b.broadcast(rows2, {bm, bn}), splat2(k.i32(m))),
                          b.cmp("lt", b.broadcast(cols2, {bm, bn}), splat2(k.i32(n))));
  b.store(b.addptr(b.splat(k.arg(2), {bm, bn}), cIdx), loop->result(0), cMask);
  b.ret();

  std::vector<float> A(m * kDim), B(kDim * n), C(m * n, -1);
  for (size_t i = 0; i < A.size(); ++i) A[i] = static_cast<float>((i * 7) % 13) - 6;
  for (size_t i = 0; i < B.size(); ++i) B[i] = static_cast<float>((i * 5) % 11) - 5;
  auto start = std::chrono::steady_clock::now();
  run(*k.f, {bufferOf(A), bufferOf(B), bufferOf(C)}, {(m + bm - 1) / bm, (n + bn - 1) / bn, 1});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int64_t i = 0; i < m; i += 17)
    for (int64_t j = 0; j < n; j += 13) {
      double expected = 0;  // small integers: exact in f32
      for (int64_t t = 0; t < kDim; ++t) expected += A[i * kDim + t] * B[t * n + j];
      ASSERT_EQ(C[i * n + j], expected) << i << "," << j;
    }
  EXPECT_LT(seconds, 5.0);
}

TEST(Performance, RowSoftmaxRunsQuickly) {
  // Row softmax over 1000 x 1000, one row per program: max and sum reductions per row.
  const int64_t rowsN = 1000, colsN = 1000, block = 1024;
  Kernel s({ptrF32(), ptrF32()});
  auto& sb = s.b;
  Value* colIdx = sb.arange(0, block);
  Value* offs = sb.binary(OpKind::Add, sb.splat(sb.binary(OpKind::Mul, sb.programId(0), s.i32(colsN)), {block}), colIdx);
  Value* mask = sb.cmp("lt", colIdx, sb.splat(s.i32(colsN), {block}));
  Value* x = sb.load(sb.addptr(sb.splat(s.arg(0), {block}), offs), mask,
                     sb.constantFloat(-kInf, tileOf({block}, Type::f32())));
  auto combine = [](OpKind kind) {
    return [kind](ir::Builder& rb, const std::vector<Value*>& a) { return std::vector<Value*>{rb.binary(kind, a[0], a[1])}; };
  };
  Value* rowMax = sb.reduce({x}, 0, combine(OpKind::Max))->result(0);
  Value* e = sb.unary(OpKind::Exp, sb.binary(OpKind::Sub, x, sb.splat(rowMax, {block})));
  Value* denom = sb.reduce({e}, 0, combine(OpKind::Add))->result(0);
  sb.store(sb.addptr(sb.splat(s.arg(1), {block}), offs), sb.binary(OpKind::Div, e, sb.splat(denom, {block})), mask);
  sb.ret();
  std::vector<float> in(rowsN * colsN), out(rowsN * colsN);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 31) % 17) * 0.25f;
  auto start = std::chrono::steady_clock::now();
  run(*s.f, {bufferOf(in), bufferOf(out)}, {rowsN, 1, 1});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double rowTotal = 0;
  for (int64_t c = 0; c < colsN; ++c) rowTotal += out[500 * colsN + c];
  EXPECT_NEAR(rowTotal, 1.0, 1e-4);
  EXPECT_LT(seconds, 5.0);
}

}  // namespace
