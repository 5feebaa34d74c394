// The embedded DSL: tracing (SSA construction for loops and branches), eager mode, and error messages that
// point at the kernel author's source line.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <sstream>

#include "backends/interpreter/Interpreter.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "tessera/tessera.h"

using namespace tessera;
using interp::Buffer;

namespace {

int g_line = 0;  // set by a kernel to the line of the DSL call expected to fail

template <class Fn> ir::Function& traced(std::unique_ptr<ir::Module>& holder, KernelDef k, Constants c = {}) {
  holder = k.trace(c);
  return *holder->functions()[0];
}

int countOps(ir::Function& f, ir::OpKind kind) {
  int n = 0;
  f.walk([&](ir::Op* op) { n += op->is(kind); });
  return n;
}

ir::Op* firstOp(ir::Function& f, ir::OpKind kind) {
  ir::Op* found = nullptr;
  f.walk([&](ir::Op* op) {
    if (!found && op->is(kind)) found = op;
  });
  return found;
}

// Expects `fn` to throw a tessera::Error at line g_line of this file whose message contains `substring`.
template <class Fn> void expectDslError(Fn fn, const std::string& substring) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing '" << substring << "'";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find(substring), std::string::npos) << e.what();
    EXPECT_EQ(e.location().line, static_cast<unsigned>(g_line)) << e.what();
    EXPECT_NE(e.location().file.find("frontend_test.cpp"), std::string::npos) << e.what();
  }
}

}  // namespace

// ---------------------------------------------------------------- SSA construction

TEST(Tracing, VariableOnlyReadInLoopIsNotCarried) {
  auto k = kernel("k", +[](Ptr<f32> out, Int n) {
    Tensor scale = full<f32>({}, 2.0f);
    Tensor acc = zeros<f32>({16});
    for (Tensor i : range(0, n)) acc += scale;  // scale is read, never assigned: not loop-carried
    store(out + arange(0, 16), acc);
  }, {"out", "n"});
  auto m = k.trace({});
  ir::Op* loop = firstOp(*m->functions()[0], ir::OpKind::For);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->numResults(), 1u);                  // only acc
  EXPECT_EQ(loop->region(0)->numArguments(), 2u);     // iv, acc
  EXPECT_EQ(loop->numOperands(), 4u);                 // lb, ub, step, acc's init
}

TEST(Tracing, AssignedWithoutReadingIsCarried) {
  // last = i is written without being read in the body; after the loop it must hold the last iteration's value.
  auto k = kernel("k", +[](Ptr<i32> out, Int n) {
    Tensor last = full<i32>({}, -1);
    for (Tensor i : range(0, n)) last = i * 10;
    store(out, last);
  }, {"out", "n"});
  auto m = k.trace({});
  EXPECT_EQ(firstOp(*m->functions()[0], ir::OpKind::For)->numResults(), 1u);
  for (int64_t n : {0, 1, 7}) {
    int32_t out = 12345;
    interp::run(*m->functions()[0], {Buffer{&out, 4}, n}, {1, 1, 1});
    EXPECT_EQ(out, n == 0 ? -1 : (n - 1) * 10) << "n=" << n;
  }
}

// Found by dsl_trace_fuzzer (a heap use after free under ASan): `last` is assigned `start`, which the body only
// reads. start's loop argument is removed as trivial; the yield of `last` must then use start's value outside.
TEST(Tracing, AssignedAVariableTheBodyOnlyReads) {
  auto k = kernel("k", +[](Ptr<i32> out, Int n) {
    Tensor start = full<i32>({}, 5), last = full<i32>({}, -1);
    for (Tensor i : range(0, n)) last = start;
    store(out, last);
  }, {"out", "n"});
  auto m = k.trace({});
  ir::verify(*m);
  ir::Op* loop = firstOp(*m->functions()[0], ir::OpKind::For);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->numResults(), 1u);  // last only
  for (int64_t n : {0, 3}) {
    int32_t out = 0;
    interp::run(*m->functions()[0], {Buffer{&out, 4}, n}, {1, 1, 1});
    EXPECT_EQ(out, n == 0 ? -1 : 5) << "n=" << n;
  }
}

TEST(Tracing, NestedLoopsCarryThroughBothLevels) {
  auto k = kernel("k", +[](Ptr<i32> out, Int n, Int m) {
    Tensor total = full<i32>({}, 0);
    for (Tensor i : range(0, n))
      for (Tensor j : range(0, m)) total += i * m + j;
    store(out, total);
  }, {"out", "n", "m"});
  auto mod = k.trace({});
  ir::Function& f = *mod->functions()[0];
  EXPECT_EQ(countOps(f, ir::OpKind::For), 2);
  f.walk([](ir::Op* op) {
    if (op->is(ir::OpKind::For)) EXPECT_EQ(op->numResults(), 1u);
  });
  int32_t out = 0;
  interp::run(f, {Buffer{&out, 4}, int64_t(5), int64_t(3)}, {1, 1, 1});
  EXPECT_EQ(out, 14 * 15 / 2);  // sum of 0..14
}

TEST(Tracing, IfAssignmentsBecomeResults) {
  auto k = kernel("k", +[](Ptr<i32> out, Int x) {
    Tensor y = full<i32>({}, 0);
    Tensor z = full<i32>({}, 7);
    if_(x > 0, [&] { y = x * 2; }, [&] { y = -x; z = z + 1; });
    store(out, y);
    store(out + 1, z);
  }, {"out", "x"});
  auto m = k.trace({});
  ir::Op* branch = firstOp(*m->functions()[0], ir::OpKind::If);
  ASSERT_NE(branch, nullptr);
  EXPECT_EQ(branch->numResults(), 2u);
  for (int64_t x : {5, -4}) {
    int32_t out[2] = {0, 0};
    interp::run(*m->functions()[0], {Buffer{out, 8}, x}, {1, 1, 1});
    EXPECT_EQ(out[0], x > 0 ? 2 * x : -x);
    EXPECT_EQ(out[1], x > 0 ? 7 : 8);
  }
}

TEST(Tracing, WhileLoopCarriesAssignedVariables) {
  auto k = kernel("k", +[](Ptr<i32> out, Int limit) {
    Tensor v = full<i32>({}, 1);
    Tensor steps = full<i32>({}, 0);
    while_([&] { return v < limit; }, [&] { v = v * 2; steps += 1; });
    store(out, v);
    store(out + 1, steps);
  }, {"out", "limit"});
  auto m = k.trace({});
  ir::Op* loop = firstOp(*m->functions()[0], ir::OpKind::While);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->numResults(), 2u);
  int32_t out[2] = {0, 0};
  interp::run(*m->functions()[0], {Buffer{out, 8}, int64_t(100)}, {1, 1, 1});
  EXPECT_EQ(out[0], 128);
  EXPECT_EQ(out[1], 7);
}

TEST(Tracing, LoopInsideBranchInsideLoop) {
  auto k = kernel("k", +[](Ptr<i32> out, Int n) {
    Tensor acc = full<i32>({}, 0);
    for (Tensor i : range(0, n)) {
      if_((i % 2) == 0, [&] {
        for (Tensor j : range(0, i)) acc += 1;
      });
    }
    store(out, acc);
  }, {"out", "n"});
  auto m = k.trace({});
  int32_t out = -1;
  interp::run(*m->functions()[0], {Buffer{&out, 4}, int64_t(7)}, {1, 1, 1});
  EXPECT_EQ(out, 0 + 2 + 4 + 6);
}

TEST(Tracing, ConstParametersSpecialize) {
  auto k = kernel("k", +[](Ptr<f32> out, Const<int> BLOCK) { store(out + arange(0, BLOCK), full<f32>({BLOCK}, 1.5f)); },
                  {"out", "BLOCK"});
  auto m64 = k.trace({{"BLOCK", 64}});
  auto m128 = k.trace({{"BLOCK", 128}});
  EXPECT_NE(ir::print(*m64).find("tile<64xf32>"), std::string::npos);
  EXPECT_NE(ir::print(*m128).find("tile<128xf32>"), std::string::npos);
  EXPECT_EQ(m64->functions()[0]->attrs().at("BLOCK").getInt(), 64);
}

TEST(Tracing, DotCarriesItsInputPrecision) {
  // TF32 is a Const here so one kernel traces both ways.
  auto k = kernel("k", +[](Ptr<f32> a, Ptr<f32> out, Const<int> TF32) {
    Tensor offs = expand_dims(arange(0, 16), 1) * 16 + expand_dims(arange(0, 16), 0);
    Tensor x = load(a + offs);
    Tensor acc = zeros<f32>({16, 16});
    Tensor d = TF32 ? dot(x, x, acc, InputPrecision::TF32) : dot(x, x, acc);
    store(out + offs, d);
  }, {"a", "out", "TF32"});
  for (int tf32 : {0, 1}) {
    auto m = k.trace({{"TF32", tf32}});
    ir::Op* d = firstOp(*m->functions()[0], ir::OpKind::Dot);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->stringAttr("input_precision"), tf32 ? "tf32" : "ieee");
  }
}

TEST(Tracing, PromotionFollowsTheDocumentedRules) {
  auto k = kernel("k", +[](Ptr<f16> h, Ptr<i8> b, Ptr<u32> u, Ptr<f32> out) {
    Tensor x = load(h);           // f16
    Tensor i = load(b);           // i8
    Tensor w = load(u);           // u32
    EXPECT_EQ((x * 2).dtype(), dtype<f16>());     // weak int literal adopts f16
    EXPECT_EQ((x * 2.5).dtype(), dtype<f16>());   // weak float literal adopts f16
    EXPECT_EQ((i + 1).dtype(), dtype<i8>());
    EXPECT_EQ((i * 1.5).dtype(), dtype<f32>());   // float literal with an int tensor: f32
    EXPECT_EQ((x + i).dtype(), dtype<f16>());     // float beats int
    EXPECT_EQ((i + w).dtype(), dtype<u32>());     // unsigned at least as wide wins
    EXPECT_EQ((x + load(out)).dtype(), dtype<f32>());
    EXPECT_EQ((x + cast<bf16>(x)).dtype(), dtype<f32>());  // f16 with bf16
    EXPECT_EQ(((i < 0) + (i > 0)).dtype(), dtype<i32>());  // arithmetic on booleans
    EXPECT_EQ(((i < 0) & (i > 0)).dtype(), dtype<i1>());
    store(out, x);
  }, {"h", "b", "u", "out"});
  k.trace({});
}

// ---------------------------------------------------------------- eager mode

namespace {
void mixed(Ptr<f32> x, Ptr<f32> out_sum, Ptr<i32> out_arg, Ptr<f32> out_scan, Ptr<f32> out_dot, Ptr<f32> hist, Int n,
           Const<int> BLOCK) {
  Tensor pid = program_id(0);
  Tensor offs = pid * BLOCK + arange(0, BLOCK);
  Tensor mask = offs < n;
  Tensor v = load(x + offs, mask, -1e30f);
  store(out_sum + pid, sum(where(mask, v, 0.0f), 0));
  store(out_arg + pid, argmax(v, 0));
  store(out_scan + offs, cumsum(where(mask, v, 0.0f), 0), mask);
  Tensor m = reshape(where(mask, v, 0.0f), {BLOCK / 4, 4});
  Tensor d = dot(m, trans(m));  // [B/4, B/4]
  store(out_dot + pid, sum(sum(d, 1), 0));
  Tensor bucket = cast<i32>(floor(where(mask, v, 0.0f) * 2.0f + 2.0f));
  atomic_add(hist + minimum(maximum(bucket, 0), 3), 1.0f, mask);
  Tensor acc = full<f32>({}, 0.0f);
  for (Tensor i : range(0, 3)) acc += cast<f32>(i);
  if_(acc > 100.0f, [&] { acc = acc * 0.0f; });
  device_assert(acc == 3.0f, "acc should be 3");
}
}  // namespace

TEST(Eager, MatchesTheInterpreterOpByOp) {
  KernelDef k = kernel("mixed", mixed, {"x", "out_sum", "out_arg", "out_scan", "out_dot", "hist", "n", "BLOCK"});
  const int64_t n = 100, block = 32, programs = 4;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = std::sin(i * 0.37) * 1.7f;
  struct Out {
    std::vector<float> sum = std::vector<float>(4, NAN), scan = std::vector<float>(100, NAN),
                       dot = std::vector<float>(4, NAN), hist = std::vector<float>(4, 0);
    std::vector<int32_t> arg = std::vector<int32_t>(4, -1);
  } a, b;
  auto args = [&](Out& o) {
    return std::vector<interp::Arg>{Buffer{x.data(), n * 4}, Buffer{o.sum.data(), 16}, Buffer{o.arg.data(), 16},
                                    Buffer{o.scan.data(), n * 4}, Buffer{o.dot.data(), 16}, Buffer{o.hist.data(), 16}, n};
  };
  k.runInterpreter({programs, 1, 1}, args(a), {{"BLOCK", block}});
  k.runEager({programs, 1, 1}, args(b), {{"BLOCK", block}});
  EXPECT_EQ(a.sum, b.sum);
  EXPECT_EQ(a.arg, b.arg);
  EXPECT_EQ(a.scan, b.scan);
  EXPECT_EQ(a.dot, b.dot);
  EXPECT_EQ(a.hist, b.hist);
  // And against plain C++.
  for (int64_t p = 0; p < programs; ++p) {
    double s = 0;
    int best = 0;
    for (int64_t i = 0; i < block && p * block + i < n; ++i) {
      s += x[p * block + i];
      if (x[p * block + i] > x[p * block + best]) best = static_cast<int>(i);
    }
    EXPECT_NEAR(a.sum[p], s, 1e-4);
    EXPECT_EQ(a.arg[p], best);
  }
  EXPECT_EQ(std::accumulate(a.hist.begin(), a.hist.end(), 0.0f), static_cast<float>(n));
}

TEST(Eager, TensorsHoldConcreteValues) {
  std::vector<float> seen;
  static std::vector<float>* sink;
  sink = &seen;
  auto k = kernel("k", +[](Ptr<f32> x) {
    Tensor v = load(x + arange(0, 4));
    Tensor w = v * 2.0f;
    for (int64_t i = 0; i < 4; ++i) sink->push_back(static_cast<float>(w.value().asDouble(i)));
  }, {"x"});
  std::vector<float> x{1, 2, 3, 4};
  k.runEager({1, 1, 1}, {Buffer{x.data(), 16}}, {});
  EXPECT_EQ(seen, (std::vector<float>{2, 4, 6, 8}));
  // value() is meaningless while tracing and says so.
  EXPECT_THROW(k.trace({}), Error);
}

TEST(Eager, DebugPrintShowsTiles) {
  auto k = kernel("k", +[](Ptr<i32> x) { debug_print("v = ", {load(x + arange(0, 4))}); }, {"x"});
  std::vector<int32_t> x{3, 1, 4, 1};
  std::ostringstream eager, interp;
  k.runEager({1, 1, 1}, {Buffer{x.data(), 16}}, {}, &eager);
  k.runInterpreter({1, 1, 1}, {Buffer{x.data(), 16}}, {}, &interp);
  EXPECT_NE(eager.str().find("v = "), std::string::npos);
  EXPECT_NE(eager.str().find("3"), std::string::npos);
  EXPECT_EQ(eager.str(), interp.str());
}

// ---------------------------------------------------------------- errors with source locations

TEST(DslErrors, ShapeMismatch) {
  auto k = kernel("k", +[](Ptr<f32> x) {
    Tensor a = load(x + arange(0, 4)), b = load(x + arange(0, 8));
    g_line = __LINE__ + 1;
    Tensor c = a + b;
  }, {"x"});
  expectDslError([&] { k.trace({}); }, "incompatible shapes [4] and [8]");
}

TEST(DslErrors, NonPowerOfTwoShape) {
  auto k = kernel("k", +[](Ptr<f32> x, Const<int> B) {
    g_line = __LINE__ + 1;
    Tensor t = zeros<f32>({B});
  }, {"x", "B"});
  expectDslError([&] { k.trace({{"B", 12}}); }, "not a positive power of two");
  auto k2 = kernel("k2", +[](Ptr<f32> x) {
    g_line = __LINE__ + 1;
    Tensor t = arange(0, 10);
  }, {"x"});
  expectDslError([&] { k2.trace({}); }, "power of two");
}

TEST(DslErrors, NonConstantShape) {
  auto k = kernel("k", +[](Ptr<f32> x, Int n) {
    g_line = __LINE__ + 1;
    Tensor t = arange(n, 16);
  }, {"x", "n"});
  expectDslError([&] { k.trace({}); }, "compile-time constants");
}

TEST(DslErrors, TypeMismatches) {
  auto k = kernel("k", +[](Ptr<f8e4m3> p) {
    Tensor v = load(p);
    g_line = __LINE__ + 1;
    Tensor w = v * 2;
  }, {"p"});
  expectDslError([&] { k.trace({}); }, "storage-only");
  auto k2 = kernel("k2", +[](Ptr<f16> a, Ptr<f32> b) {
    Tensor x = load(a + expand_dims(arange(0, 16), 1) * 16 + expand_dims(arange(0, 16), 0));
    Tensor y = load(b + expand_dims(arange(0, 16), 1) * 16 + expand_dims(arange(0, 16), 0));
    g_line = __LINE__ + 1;
    Tensor z = dot(x, y);
  }, {"a", "b"});
  expectDslError([&] { k2.trace({}); }, "same element type");
  auto k3 = kernel("k3", +[](Ptr<f32> a, Int n) {
    g_line = __LINE__ + 1;
    Tensor v = load(n);
  }, {"a", "n"});
  expectDslError([&] { k3.trace({}); }, "needs a pointer");
  auto k4 = kernel("k4", +[](Ptr<f32> a) {
    Tensor x = load(a + arange(0, 4));
    g_line = __LINE__ + 1;
    Tensor y = x << 2;
  }, {"a"});
  expectDslError([&] { k4.trace({}); }, "needs integer operands");
}

// Found by dsl_trace_fuzzer: an integer constant from a float C++ cannot convert (NaN, infinities, out of range)
// was undefined behaviour; it is the author's error.
TEST(DslErrors, FloatOutsideAnIntegerConstantsRange) {
  for (double bad : std::initializer_list<double>{INFINITY, -INFINITY, NAN, 1e30, 3e9, -1.0}) {
    ir::ScalarKind kind = bad == -1.0 ? ir::ScalarKind::U8 : ir::ScalarKind::I32;
    KernelDef def("k", {}, [&](detail::ParamSource&) {
      g_line = __LINE__ + 1;
      Tensor t = full({4}, bad, ir::Type::scalar(kind));
    });
    expectDslError([&] { def.trace({}); }, "constant from");
  }
  auto module = KernelDef("k", {}, [](detail::ParamSource&) {
                  Tensor t = full({4}, -2.75, ir::Type::scalar(ir::ScalarKind::I8));
                }).trace({});
  ir::Op* constant = firstOp(*module->functions()[0], ir::OpKind::Constant);
  ASSERT_NE(constant, nullptr);
  EXPECT_EQ(constant->attr("value"), ir::Attr::integer(-2));  // truncated, as in C++
}

TEST(DslErrors, BranchTypeMismatch) {
  auto k = kernel("k", +[](Ptr<f32> a, Int n) {
    Tensor v = full<f32>({}, 0.0f);
    g_line = __LINE__ + 1;
    if_(n > 0, [&] { v = full<f32>({}, 1.0f); }, [&] { v = full<i32>({}, 1); });
  }, {"a", "n"});
  expectDslError([&] { k.trace({}); }, "both branches must give it one type");
}

TEST(DslErrors, BreakOutOfTracedLoop) {
  auto k = kernel("k", +[](Ptr<f32> a, Int n) {
    g_line = __LINE__ + 1;
    for (Tensor i : range(0, n)) {
      break;
    }
    store(a, 1.0f);
  }, {"a", "n"});
  expectDslError([&] { k.trace({}); }, "left early");
}

TEST(DslErrors, ValueEscapingItsLoop) {
  static std::vector<Tensor>* keep;
  std::vector<Tensor> kept;
  keep = &kept;
  auto k = kernel("k", +[](Ptr<i32> a, Int n) {
    for (Tensor i : range(0, n)) keep->push_back(i);
    g_line = __LINE__ + 1;
    store(a, (*keep)[0]);
  }, {"a", "n"});
  expectDslError([&] { k.trace({}); }, "defined inside a traced loop or branch");
  kept.clear();
}

TEST(DslErrors, ArityAndArguments) {
  auto body = +[](Ptr<f32> a, Int n, Const<int> B) {};
  EXPECT_THROW(kernel("k", body, {"a", "n"}), Error);  // wrong number of names
  KernelDef k = kernel("k", body, {"a", "n", "B"});
  try {
    k.trace({{"C", 1}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("no Const parameter named 'C'"), std::string::npos);
  }
  try {
    k.trace({});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("no value given for Const parameter 'B'"), std::string::npos);
  }
  float buf[4];
  try {
    k.runEager({1, 1, 1}, {Buffer{buf, 16}}, {{"B", 4}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("takes 2 runtime arguments, got 1"), std::string::npos);
  }
  try {
    k.runEager({1, 1, 1}, {int64_t(3), int64_t(4)}, {{"B", 4}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("argument 'a' must be a buffer"), std::string::npos);
  }
}

// Const<T> values T cannot hold are rejected, not cast (2**32 + 8 used to trace as 8, 8.5 as 8).
TEST(DslErrors, ConstValuesOutOfTheirTypesRange) {
  auto body = +[](Ptr<f32> a, Const<int> B, Const<bool> F, Const<float> S, Const<unsigned char> U) {};
  KernelDef k = kernel("k", body, {"a", "B", "F", "S", "U"});
  Constants good{{"B", 8}, {"F", 1}, {"S", 2.5}, {"U", 255}};
  EXPECT_NO_THROW(k.trace(good));
  EXPECT_EQ(k.params()[1].type.str(), "i32");
  EXPECT_EQ(k.params()[2].type.str(), "i1");
  EXPECT_EQ(k.params()[3].type.str(), "f32");
  EXPECT_EQ(k.params()[4].type.str(), "u8");
  auto with = [&](const std::string& name, ConstValue v) {
    Constants c = good;
    c[name] = v;
    return c;
  };
  auto expectConstError = [](auto fn, const std::string& substring) {
    try {
      fn();
      ADD_FAILURE() << "expected an error containing '" << substring << "'";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find(substring), std::string::npos) << e.what();
    }
  };
  expectConstError([&] { k.trace(with("B", (int64_t{1} << 32) + 8)); }, "Const parameter 'B' is i32: 4294967304 is out of its range");
  expectConstError([&] { k.trace(with("B", 8.5)); }, "Const parameter 'B' is i32: got the float 8.5");
  expectConstError([&] { k.trace(with("F", 2)); }, "Const parameter 'F' is i1: 2 is out of its range");
  expectConstError([&] { k.trace(with("S", 1e300)); }, "Const parameter 'S' is f32");
  expectConstError([&] { k.trace(with("U", -1)); }, "Const parameter 'U' is u8: -1 is out of its range");
  EXPECT_NO_THROW(k.trace(with("S", 3)));  // ints convert to float Consts
  float buf[4];
  expectConstError([&] { k.runEager({1, 1, 1}, {Buffer{buf, 16}}, with("U", 256)); }, "Const parameter 'U' is u8");
}

TEST(DslErrors, OutsideAKernel) {
  EXPECT_THROW(program_id(0), Error);
}
