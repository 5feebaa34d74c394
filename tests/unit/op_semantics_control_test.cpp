// Per-op semantics of structured control flow and the debugging ops (docs/IR.md "Control flow" and "Debugging
// and hints"): for/if/while with loop-carried values, debug_print output, device_assert failures.
#include <sstream>

#include "OpTestUtil.h"

namespace optest {
namespace {

using tessera::ir::Op;

// ---------------------------------------------------------------------------------------------------------------
// for

// sum = init + Σ iv over [lb, ub) by step, carried as a scalar, alongside a tile that doubles every iteration and
// a count of iterations.
TEST(ForTest, ScalarAndTileCarriedValues) {
  struct Case {
    int64_t lb, ub, step;
  };
  const Case cases[] = {{0, 10, 1}, {-5, 17, 3}, {10, 10, 1}, {10, 3, 2}, {0, 7, 100}, {-20, -4, 5}};
  for (ScalarKind ivKind : {ScalarKind::I32, ScalarKind::I64}) {
    Type iv = scalarType(ivKind);
    Kernel kern({iv, iv, iv, ptrTo(ivKind), ptrTo(ScalarKind::F32), ptrTo(ScalarKind::I32)});
    Value* sum0 = kern.b.constantInt(1000, iv);
    Value* tile0 = kern.b.cast(kern.linearIndex({4, 4}), Type::f32());
    Value* count0 = kern.i32(0);
    Op* loop = kern.b.forOp(kern.arg(0), kern.arg(1), kern.arg(2), {sum0, tile0, count0});
    {
      Builder body(loop->region(0));
      Value* ivArg = loop->region(0)->argument(0);
      Value* sum = body.binary(OpKind::Add, loop->region(0)->argument(1), ivArg);
      Value* t = loop->region(0)->argument(2);
      Value* doubled = body.binary(OpKind::Add, t, t);
      Value* count = body.binary(OpKind::Add, loop->region(0)->argument(3), body.constantInt(1, Type::i32()));
      body.yield({sum, doubled, count});
    }
    kern.b.store(kern.arg(3), loop->result(0));
    kern.b.store(kern.ptrs(kern.arg(4), kern.linearIndex({4, 4})), loop->result(1));
    kern.b.store(kern.arg(5), loop->result(2));
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(kindName(ivKind)) + " for " + std::to_string(c.lb) + ", " + std::to_string(c.ub) +
                   ", " + std::to_string(c.step));
      int64_t wantSum = 1000, trips = 0;
      for (int64_t i = c.lb; i < c.ub; i += c.step) wantSum += i, ++trips;
      HostBuf sum(ivKind, 1), tile(ScalarKind::F32, 16), count(ScalarKind::I32, 1);
      kern.run({c.lb, c.ub, c.step, sum.arg(), tile.arg(), count.arg()}, {1, 1, 1});
      EXPECT_EQ(sum.intAt(0), wantSum);
      EXPECT_EQ(count.intAt(0), trips);
      for (size_t i = 0; i < 16; ++i) EXPECT_EQ(tile.floatAt(i), std::ldexp(static_cast<double>(i), static_cast<int>(trips)));
    }
  }
}

TEST(ForTest, NestedLoopsUseOuterValues) {
  // acc = Σ_{i<4} Σ_{j<i} (x[i] * j), with x loaded outside both loops.
  Kernel kern({ptrTo(ScalarKind::I32), ptrTo(ScalarKind::I32)});
  Value* x = kern.b.load(kern.ptrs(kern.arg(0), kern.linearIndex({8})));
  Value* zero = kern.b.constantInt(0, Type::tile({8}, Type::i32()));
  Op* outer = kern.b.forOp(kern.i32(0), kern.i32(4), kern.i32(1), {zero});
  {
    Builder ob(outer->region(0));
    Value* i = outer->region(0)->argument(0);
    Op* inner = ob.forOp(ob.constantInt(0, Type::i32()), i, ob.constantInt(1, Type::i32()), {outer->region(0)->argument(1)});
    Builder ib(inner->region(0));
    Value* j = inner->region(0)->argument(0);
    ib.yield({ib.binary(OpKind::Add, inner->region(0)->argument(1), ib.binary(OpKind::Mul, x, ib.splat(j, {8})))});
    ob.yield({inner->result(0)});
  }
  kern.b.store(kern.ptrs(kern.arg(1), kern.linearIndex({8})), outer->result(0));
  HostBuf in(ScalarKind::I32, 8), out(ScalarKind::I32, 8);
  for (size_t i = 0; i < 8; ++i) in.setInt(i, static_cast<int64_t>(i) + 1);
  kern.run({in.arg(), out.arg()}, {1, 1, 1});
  // Σ_{i<4} Σ_{j<i} j = 0 + 0 + 1 + 3 = 4
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(out.intAt(i), in.intAt(i) * 4);
}

TEST(ForTest, NonPositiveStepThrows) {
  Kernel kern({Type::i32(), ptrTo(ScalarKind::I32)});
  Op* loop = kern.b.forOp(kern.i32(0), kern.i32(10), kern.arg(0), {kern.i32(0)});
  Builder body(loop->region(0));
  body.yield({loop->region(0)->argument(1)});
  kern.b.store(kern.arg(1), loop->result(0));
  HostBuf out(ScalarKind::I32, 1);
  EXPECT_THROW(kern.run({int64_t(0), out.arg()}, {1, 1, 1}), tessera::Error);
  EXPECT_THROW(kern.run({int64_t(-1), out.arg()}, {1, 1, 1}), tessera::Error);
}

// ---------------------------------------------------------------------------------------------------------------
// if

TEST(IfTest, BothBranchesYieldResultsPerProgram) {
  // Even programs take `then` (tile * 2, scalar pid), odd ones `else` (tile + 100, scalar -pid).
  const int64_t programs = 6;
  Kernel kern({ptrTo(ScalarKind::F32), ptrTo(ScalarKind::I32)});
  Value* pid = kern.b.programId(0);
  Value* isEven = kern.b.cmp("eq", kern.b.binary(OpKind::Rem, pid, kern.i32(2)), kern.i32(0));
  Value* t = kern.b.cast(kern.linearIndex({8}), Type::f32());
  Op* branch = kern.b.ifOp(isEven, {t->type(), Type::i32()});
  {
    Builder thenB(branch->region(0));
    thenB.yield({thenB.binary(OpKind::Mul, t, thenB.constantFloat(2.0, t->type())), pid});
    Builder elseB(branch->region(1));
    elseB.yield({elseB.binary(OpKind::Add, t, elseB.constantFloat(100.0, t->type())), elseB.unary(OpKind::Neg, pid)});
  }
  Value* base = kern.b.binary(OpKind::Mul, pid, kern.i32(8));
  kern.b.store(kern.ptrs(kern.b.addptr(kern.arg(0), base), kern.linearIndex({8})), branch->result(0));
  kern.b.store(kern.b.addptr(kern.arg(1), pid), branch->result(1));
  HostBuf tiles(ScalarKind::F32, programs * 8), scalars(ScalarKind::I32, programs);
  kern.run({tiles.arg(), scalars.arg()}, {programs, 1, 1});
  for (int64_t p = 0; p < programs; ++p) {
    EXPECT_EQ(scalars.intAt(p), p % 2 == 0 ? p : -p);
    for (int64_t i = 0; i < 8; ++i)
      EXPECT_EQ(tiles.floatAt(static_cast<size_t>(p * 8 + i)), p % 2 == 0 ? 2.0 * i : i + 100.0);
  }
}

TEST(IfTest, OnlyTheTakenBranchHasSideEffects) {
  Kernel kern({Type::i32(), ptrTo(ScalarKind::I32)});
  Op* branch = kern.b.ifOp(kern.b.cmp("gt", kern.arg(0), kern.i32(0)), {});
  {
    Builder thenB(branch->region(0));
    thenB.store(kern.arg(1), thenB.constantInt(11, Type::i32()));
    thenB.yield({});
    Builder elseB(branch->region(1));
    elseB.store(elseB.addptr(kern.arg(1), elseB.constantInt(1, Type::i32())), elseB.constantInt(22, Type::i32()));
    elseB.yield({});
  }
  for (int64_t cond : {5, -5}) {
    HostBuf out(ScalarKind::I32, 2);
    out.fill(kPoison);
    kern.run({cond, out.arg()}, {1, 1, 1});
    if (cond > 0) {
      EXPECT_EQ(out.intAt(0), 11);
      EXPECT_TRUE(out.untouchedFrom(1, kPoison)) << "else branch ran";
    } else {
      EXPECT_EQ(out.intAt(1), 22);
      EXPECT_EQ(out.bitsAt(0), 0xA5A5A5A5u) << "then branch ran";
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// while

int64_t collatzSteps(int64_t n) {
  int64_t steps = 0;
  while (n != 1) n = n % 2 ? 3 * n + 1 : n / 2, ++steps;
  return steps;
}

TEST(WhileTest, CollatzStepsPerProgram) {
  // carried (n, steps); before: n != 1; after: n = odd ? 3n+1 : n/2, steps + 1. Program p starts at n = p + 1
  // (program 0 starts at 1 and runs zero iterations: the results are the inits).
  const int64_t programs = 30;
  Kernel kern({ptrTo(ScalarKind::I64), ptrTo(ScalarKind::I32)});
  Value* pid = kern.b.programId(0);
  Value* n0 = kern.b.cast(kern.b.binary(OpKind::Add, pid, kern.i32(1)), Type::i64());
  Op* loop = kern.b.whileOp({n0, kern.i32(0)});
  {
    Builder before(loop->region(0));
    before.yield({before.cmp("ne", loop->region(0)->argument(0), before.constantInt(1, Type::i64()))});
    Builder after(loop->region(1));
    Value* n = loop->region(1)->argument(0);
    Value* one = after.constantInt(1, Type::i64());
    Value* odd = after.cmp("eq", after.binary(OpKind::And, n, one), one);
    Value* up = after.binary(OpKind::Add, after.binary(OpKind::Mul, n, after.constantInt(3, Type::i64())), one);
    Value* down = after.binary(OpKind::Shr, n, one);
    after.yield({after.select(odd, up, down),
                 after.binary(OpKind::Add, loop->region(1)->argument(1), after.constantInt(1, Type::i32()))});
  }
  kern.b.store(kern.b.addptr(kern.arg(0), pid), loop->result(0));
  kern.b.store(kern.b.addptr(kern.arg(1), pid), loop->result(1));
  HostBuf finals(ScalarKind::I64, programs), steps(ScalarKind::I32, programs);
  kern.run({finals.arg(), steps.arg()}, {programs, 1, 1});
  for (int64_t p = 0; p < programs; ++p) {
    EXPECT_EQ(finals.intAt(p), 1);
    EXPECT_EQ(steps.intAt(p), collatzSteps(p + 1)) << "start " << p + 1;
  }
}

TEST(WhileTest, TileCarriedValueUntilAllExceedThreshold) {
  // A tile grows by its own index + 1 until its minimum passes 50: the `before` region reduces a tile to an i1.
  Kernel kern({ptrTo(ScalarKind::I32), ptrTo(ScalarKind::I32)});
  Value* t0 = kern.b.load(kern.ptrs(kern.arg(0), kern.linearIndex({8})));
  Op* loop = kern.b.whileOp({t0});
  {
    Builder before(loop->region(0));
    Op* mn = before.reduce({loop->region(0)->argument(0)}, 0, [](Builder& b, const std::vector<Value*>& a) {
      return std::vector<Value*>{b.binary(OpKind::Min, a[0], a[1])};
    });
    before.yield({before.cmp("le", mn->result(0), before.constantInt(50, Type::i32()))});
    Builder after(loop->region(1));
    Value* inc = after.binary(OpKind::Add, after.arange(0, 8), after.constantInt(1, Type::tile({8}, Type::i32())));
    after.yield({after.binary(OpKind::Add, loop->region(1)->argument(0), inc)});
  }
  kern.b.store(kern.ptrs(kern.arg(1), kern.linearIndex({8})), loop->result(0));
  HostBuf in(ScalarKind::I32, 8), out(ScalarKind::I32, 8);
  for (size_t i = 0; i < 8; ++i) in.setInt(i, static_cast<int64_t>(i) * 10);
  kern.run({in.arg(), out.arg()}, {1, 1, 1});
  std::vector<int64_t> want(8);
  for (size_t i = 0; i < 8; ++i) want[i] = static_cast<int64_t>(i) * 10;
  while (*std::min_element(want.begin(), want.end()) <= 50)
    for (size_t i = 0; i < 8; ++i) want[i] += static_cast<int64_t>(i) + 1;
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(out.intAt(i), want[i]);
}

// ---------------------------------------------------------------------------------------------------------------
// debug_print, device_assert

TEST(DebugPrintTest, PrintsPrefixAndValuesOfEveryProgramToTheGivenStream) {
  Kernel kern({});
  Value* pid = kern.b.programId(0);
  Value* vals = kern.b.binary(OpKind::Add, kern.linearIndex({4}), kern.b.splat(kern.b.binary(OpKind::Mul, pid, kern.i32(100)), {4}));
  kern.b.debugPrint("probe: ", {vals, pid});
  std::ostringstream os;
  kern.run({}, {2, 1, 1}, &os);
  const std::string text = os.str();
  size_t first = text.find("probe: "), second = first == std::string::npos ? first : text.find("probe: ", first + 1);
  EXPECT_NE(first, std::string::npos) << text;
  EXPECT_NE(second, std::string::npos) << "one line per program expected:\n" << text;
  EXPECT_NE(text.find("[0, 1, 2, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("[100, 101, 102, 103]"), std::string::npos) << text;
}

Kernel assertKernel(const std::string& msg) {
  // Asserts x[pid] > 0 (scalar) and x[...] != 7 (tile) in every program.
  Kernel kern({ptrTo(ScalarKind::I32)});
  kern.b.setLoc(tessera::Location{"assert_kernel.py", 42, 7});
  Value* pid = kern.b.programId(0);
  Value* x = kern.b.load(kern.b.addptr(kern.arg(0), pid));
  kern.b.deviceAssert(kern.b.cmp("gt", x, kern.i32(0)), msg);
  Value* t = kern.b.load(kern.ptrs(kern.arg(0), kern.linearIndex({4})));
  kern.b.deviceAssert(kern.b.cmp("ne", t, kern.tileI32(7, {4})), msg + " (tile)");
  return kern;
}

TEST(DeviceAssertTest, PassingAssertionsDoNothing) {
  Kernel kern = assertKernel("x must be positive");
  HostBuf x(ScalarKind::I32, 4);
  for (size_t i = 0; i < 4; ++i) x.setInt(i, 1 + static_cast<int64_t>(i));
  EXPECT_NO_THROW(kern.run({x.arg()}, {4, 1, 1}));
}

TEST(DeviceAssertTest, FailingScalarAssertionThrowsWithMessageAndLocation) {
  Kernel kern = assertKernel("x must be positive");
  HostBuf x(ScalarKind::I32, 4);
  for (size_t i = 0; i < 4; ++i) x.setInt(i, i == 2 ? -1 : 1);
  try {
    kern.run({x.arg()}, {4, 1, 1});
    ADD_FAILURE() << "device_assert did not fail";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("x must be positive"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("assert_kernel.py:42"), std::string::npos) << e.what();
  }
}

TEST(DeviceAssertTest, OneFalseTileElementFails) {
  Kernel kern = assertKernel("no sevens");
  HostBuf x(ScalarKind::I32, 4);
  for (size_t i = 0; i < 4; ++i) x.setInt(i, i == 3 ? 7 : 1);
  try {
    kern.run({x.arg()}, {1, 1, 1});
    ADD_FAILURE() << "device_assert did not fail";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no sevens (tile)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace optest
