// Tests of the pass manager and of the canonicalize, cse and dce passes: pipeline behaviour, the exact
// rewrites each pass makes, and semantic preservation (the interpreter gives bit-identical results before and
// after the passes).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

#include "backends/interpreter/Interpreter.h"
#include "ir/Builder.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"
#include "transforms/Pipeline.h"

namespace {

using namespace tessera;
using ir::Block;
using ir::Builder;
using ir::Function;
using ir::Op;
using ir::OpKind;
using ir::ScalarKind;
using ir::Type;
using ir::Value;
using transforms::PassManager;

Type scalarType(ScalarKind k) { return Type::scalar(k); }
Type ptrTo(Type t) { return Type::ptr(t); }

int countOps(Function& f, OpKind kind) {
  int n = 0;
  f.walk([&](Op* op) { n += op->is(kind); });
  return n;
}

int countAllOps(Function& f) {
  int n = 0;
  f.walk([&](Op*) { ++n; });
  return n;
}

void runPipeline(Function& f, const std::vector<std::string>& passes) {
  PassManager pm;
  pm.setDumpIR(false);
  for (const auto& p : passes) pm.add(p);
  pm.run(f);
}

// ---------------------------------------------------------------- pass manager

class RecordingPass : public transforms::Pass {
 public:
  RecordingPass(const char* name, std::vector<std::string>* log) : name_(name), log_(log) {}
  const char* name() const override { return name_; }
  void run(Function& f) override { log_->push_back(name_); }

 private:
  const char* name_;
  std::vector<std::string>* log_;
};

// Takes at least `seconds` of wall time, so that the time the pass manager reports has a known lower bound.
class SlowPass : public transforms::Pass {
 public:
  explicit SlowPass(double seconds) : seconds_(seconds) {}
  const char* name() const override { return "slow"; }
  void run(Function&) override {
    auto start = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds_) {}
  }

 private:
  double seconds_;
};

// Throws, as a pass does on input it cannot handle.
class ThrowingPass : public transforms::Pass {
 public:
  const char* name() const override { return "throwing"; }
  void run(Function&) override { throw Error("cannot handle this input"); }
};

// Removes the function's `return`: leaves IR that the verifier must reject.
class BreakingPass : public transforms::Pass {
 public:
  const char* name() const override { return "break-terminator"; }
  void run(Function& f) override { f.body()->erase(f.body()->terminator()); }
};

std::unique_ptr<Function> makeTrivialKernel() {
  auto f = std::make_unique<Function>("trivial", std::vector<Type>{ptrTo(Type::i32())});
  Builder b(f->body());
  Value* a = b.constantInt(2, Type::i32());
  Value* c = b.constantInt(3, Type::i32());
  b.store(f->argument(0), b.binary(OpKind::Add, a, c));
  b.ret();
  return f;
}

TEST(PassManager, RunsPassesInOrderAndCallsCallback) {
  std::vector<std::string> log;
  std::vector<std::pair<std::string, std::string>> seen;
  PassManager pm;
  pm.setDumpIR(false);
  pm.add(std::make_unique<RecordingPass>("first", &log));
  pm.add(std::make_unique<RecordingPass>("second", &log));
  pm.add(std::make_unique<RecordingPass>("third", &log));
  pm.setAfterPassCallback([&](const std::string& name, double, const auto& ir) { seen.emplace_back(name, ir()); });
  auto f = makeTrivialKernel();
  pm.run(*f);
  EXPECT_EQ(log, (std::vector<std::string>{"first", "second", "third"}));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].first, "first");
  EXPECT_EQ(seen[2].first, "third");
  EXPECT_EQ(seen[1].second, ir::print(*f));
  EXPECT_NE(seen[1].second.find("func @trivial"), std::string::npos);
}

TEST(PassManager, CallbackGetsTheTimeOfEachPass) {
  PassManager pm;
  pm.setDumpIR(false);
  pm.add(std::make_unique<SlowPass>(0.002));
  pm.add("cse");
  std::vector<std::pair<std::string, double>> seconds;
  pm.setAfterPassCallback([&](const std::string& name, double s, const auto&) { seconds.emplace_back(name, s); });
  auto f = makeTrivialKernel();
  pm.run(*f);
  ASSERT_EQ(seconds.size(), 2u);
  EXPECT_EQ(seconds[0].first, "slow");
  EXPECT_GE(seconds[0].second, 0.002);
  EXPECT_EQ(seconds[1].first, "cse");
  EXPECT_GE(seconds[1].second, 0.0);
}

TEST(PassManager, DumpShowsTheInputAndEachPassResult) {
  PassManager pm;
  std::ostringstream os;
  pm.setDumpIR(true, &os);
  pm.add("canonicalize");
  pm.add("dce");
  auto f = makeTrivialKernel();
  pm.run(*f);
  std::string out = os.str();
  size_t input = out.find("// -----// IR Dump Before canonicalize (@trivial) //----- //\nfunc @trivial");
  size_t canon = out.find("// -----// IR Dump After canonicalize (@trivial) //----- //\nfunc @trivial");
  size_t dce = out.find("// -----// IR Dump After dce (@trivial) //----- //\nfunc @trivial");
  ASSERT_NE(input, std::string::npos) << out;
  ASSERT_NE(canon, std::string::npos) << out;
  ASSERT_NE(dce, std::string::npos) << out;
  EXPECT_LT(input, canon);
  EXPECT_LT(canon, dce);
  EXPECT_NE(out.substr(input, canon - input).find("add"), std::string::npos) << "the input is unfolded";
  // After canonicalize the add is folded: the dump between the two headers shows the constant 5.
  std::string afterCanon = out.substr(canon, dce - canon);
  EXPECT_NE(afterCanon.find("value = 5"), std::string::npos) << afterCanon;
  EXPECT_EQ(afterCanon.find("add"), std::string::npos) << afterCanon;
}

TEST(PassManager, EnvironmentVariableEnablesPrinting) {
  ::setenv("TESSERA_DUMP_IR", "1", 1);
  PassManager pm;
  ::unsetenv("TESSERA_DUMP_IR");
  pm.add("cse");
  auto f = makeTrivialKernel();
  testing::internal::CaptureStderr();
  pm.run(*f);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("// -----// IR Dump After cse (@trivial) //----- //"), std::string::npos) << err;

  PassManager quiet;  // variable unset: no output
  quiet.add("cse");
  testing::internal::CaptureStderr();
  quiet.run(*f);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(PassManager, PassThatBreaksTheIRIsNamed) {
  PassManager pm;
  pm.setDumpIR(false);
  pm.add("canonicalize");
  pm.add(std::make_unique<BreakingPass>());
  auto f = makeTrivialKernel();
  try {
    pm.run(*f);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("break-terminator"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("@trivial"), std::string::npos) << e.what();
  }
}

TEST(PassManager, PassThatThrowsIsNamed) {
  PassManager pm;
  pm.setDumpIR(false);
  pm.add(std::make_unique<ThrowingPass>());
  auto f = makeTrivialKernel();
  try {
    pm.run(*f);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "pass 'throwing' failed on function @trivial: cannot handle this input");
  }
}

TEST(PassManager, NoVerifyLetsBrokenIRThrough) {
  PassManager pm;
  pm.setDumpIR(false);
  pm.setVerifyEach(false);
  pm.add(std::make_unique<BreakingPass>());
  auto f = makeTrivialKernel();
  EXPECT_NO_THROW(pm.run(*f));
  EXPECT_EQ(f->body()->terminator(), nullptr);
}

TEST(PassManager, UnknownPassNameListsKnownOnes) {
  PassManager pm;
  try {
    pm.add("licm");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'licm'"), std::string::npos) << msg;
    for (const char* known : {"canonicalize", "cse", "dce"}) EXPECT_NE(msg.find(known), std::string::npos) << msg;
  }
}

TEST(PassRegistry, KnowsTheCleanupPasses) {
  std::vector<std::string> names = transforms::registeredPassNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* expected : {"canonicalize", "cse", "dce"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  for (const std::string& name : names) {
    auto p = transforms::createPass(name);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->name(), name);
  }
  EXPECT_EQ(transforms::createPass("nope"), nullptr);
}

TEST(PassManager, RunsOverEveryFunctionOfAModule) {
  ir::Module m;
  m.addFunction(makeTrivialKernel());
  auto second = makeTrivialKernel();
  second->setName("other");
  m.addFunction(std::move(second));
  PassManager pm;
  pm.setDumpIR(false);
  pm.add("canonicalize");
  pm.add("dce");
  // Pass by pass over the whole module: the callback sees the module after each pass, once per pass.
  std::vector<std::pair<std::string, std::string>> seen;
  pm.setAfterPassCallback([&](const std::string& name, double, const auto& ir) { seen.emplace_back(name, ir()); });
  pm.run(m);
  for (const auto& f : m.functions()) EXPECT_EQ(countOps(*f, OpKind::Add), 0) << f->name();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, "canonicalize");
  EXPECT_EQ(seen[1].first, "dce");
  EXPECT_EQ(seen[1].second, ir::print(m));
  EXPECT_NE(seen[0].second.find("func @other"), std::string::npos) << seen[0].second;
}

// ---------------------------------------------------------------- the default pipeline

// The passes a pass manager filled by `build` runs, in order.
std::vector<std::string> passesRun(const std::function<void(PassManager&)>& build) {
  PassManager pm;
  pm.setDumpIR(false);
  build(pm);
  std::vector<std::string> names;
  pm.setAfterPassCallback([&](const std::string& name, double, const auto&) { names.push_back(name); });
  auto f = makeTrivialKernel();
  pm.run(*f);
  return names;
}

std::vector<std::string> passNamesOf(const std::string& spec) {
  return passesRun([&](PassManager& pm) { transforms::addPasses(pm, spec, {}); });
}

TEST(Pipeline, DefaultIsCleanupLayoutsCleanupAsyncCopiesSharedMemory) {
  std::vector<std::string> names = passesRun([](PassManager& pm) { transforms::addDefaultPipeline(pm, {}); });
  EXPECT_EQ(names, (std::vector<std::string>{"expand-descriptor-loads", "canonicalize-pointers", "transpose-loads", "canonicalize", "cse",
                                             "dce", "coalesce", "assign-layouts", "remove-layout-conversions", "canonicalize", "cse", "dce",
                                             "async-copy-dot-operands", "pipeline-loops",
                                             "stage-copies-in-registers", "dce", "sink-to-uses",
                                             "ping-pong-consumers", "order-consumer-groups", "allocate-shared-memory",
                                             "insert-barriers"}));
  EXPECT_EQ(passNamesOf("default"), names);
}

TEST(Pipeline, NamesMixPassesAndPipelines) {
  EXPECT_EQ(passNamesOf("cse,dce"), (std::vector<std::string>{"cse", "dce"}));
  std::vector<std::string> mixed = passNamesOf("dce,default,,cse");
  ASSERT_EQ(mixed.size(), 23u);
  EXPECT_EQ(mixed.front(), "dce");
  EXPECT_EQ(mixed[1], "expand-descriptor-loads");
  EXPECT_EQ(mixed.back(), "cse");
  EXPECT_EQ(transforms::pipelineNames(), std::vector<std::string>{"default"});
}

TEST(Pipeline, UnknownNameListsPassesAndPipelines) {
  PassManager pm;
  try {
    transforms::addPasses(pm, "cse,defualt", {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown pass 'defualt'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("insert-barriers"), std::string::npos) << msg;
    EXPECT_NE(msg.find("pipelines: default"), std::string::npos) << msg;
  }
}

// ---------------------------------------------------------------- constant folding vs. the interpreter

// The value a case produces, widened exactly: ints to i64, floats to f64.
struct Expected {
  bool isFloat;
  int64_t i = 0;
  double f = 0;
};
Expected I(int64_t v) { return {false, v, 0}; }
Expected F(double v) { return {true, 0, v}; }

struct FoldCase {
  const char* name;
  std::function<Value*(Builder&)> build;  // returns the scalar to check
  Expected expected;
};

Value* ci(Builder& b, ScalarKind k, int64_t v) { return b.constantInt(v, scalarType(k)); }
Value* cf(Builder& b, ScalarKind k, double v) { return b.constantFloat(v, scalarType(k)); }
auto bin(OpKind op, ScalarKind k, int64_t x, int64_t y) {
  return [=](Builder& b) { return b.binary(op, ci(b, k, x), ci(b, k, y)); };
}
auto fbin(OpKind op, ScalarKind k, double x, double y) {
  return [=](Builder& b) { return b.binary(op, cf(b, k, x), cf(b, k, y)); };
}
auto castOf(ScalarKind from, double x, ScalarKind to) {
  return [=](Builder& b) { return b.cast(cf(b, from, x), scalarType(to)); };
}
auto castInt(ScalarKind from, int64_t x, ScalarKind to) {
  return [=](Builder& b) { return b.cast(ci(b, from, x), scalarType(to)); };
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

std::vector<FoldCase> foldCases() {
  using K = ScalarKind;
  const int64_t bigForBF16 = (int64_t(1) << 62) + (int64_t(1) << 54) + 1;  // a tie only after rounding twice
  return {
      {"add_i8_wraps", bin(OpKind::Add, K::I8, 100, 100), I(-56)},
      {"sub_u8_wraps", bin(OpKind::Sub, K::U8, 3, 5), I(254)},
      {"mul_i32_wraps", bin(OpKind::Mul, K::I32, 65536, 65536), I(0)},
      {"div_i32_truncates", bin(OpKind::Div, K::I32, 7, -2), I(-3)},
      {"div_i32_by_zero", bin(OpKind::Div, K::I32, 7, 0), I(-1)},
      {"div_u16_by_zero", bin(OpKind::Div, K::U16, 7, 0), I(65535)},
      {"div_i32_min_by_minus_one", bin(OpKind::Div, K::I32, INT32_MIN, -1), I(INT32_MIN)},
      {"div_i64_min_by_minus_one", bin(OpKind::Div, K::I64, kI64Min, -1), I(kI64Min)},
      {"rem_i32_sign_of_dividend", bin(OpKind::Rem, K::I32, -7, 3), I(-1)},
      {"rem_i32_by_zero", bin(OpKind::Rem, K::I32, 9, 0), I(9)},
      {"min_u32_unsigned", bin(OpKind::Min, K::U32, 1, 4294967295), I(1)},
      {"max_i32_signed", bin(OpKind::Max, K::I32, -1, 1), I(1)},
      {"and_u8", bin(OpKind::And, K::U8, 0xf0, 0x3c), I(0x30)},
      {"or_i16", bin(OpKind::Or, K::I16, 0x0f00, 0x00f0), I(0x0ff0)},
      {"xor_u8", bin(OpKind::Xor, K::U8, 0xff, 0x0f), I(0xf0)},
      {"shl_i32_past_width", bin(OpKind::Shl, K::I32, 1, 40), I(0)},
      {"shl_i8_wraps", bin(OpKind::Shl, K::I8, 1, 7), I(-128)},
      {"shr_i32_arith_past_width", bin(OpKind::Shr, K::I32, -8, 40), I(-1)},
      {"shr_u32_logical", bin(OpKind::Shr, K::U32, 0x80000000, 31), I(1)},
      {"shr_i8_arith", bin(OpKind::Shr, K::I8, -128, 1), I(-64)},
      {"umulhi_u32", bin(OpKind::UMulHi, K::U32, 0xffffffff, 2), I(1)},
      {"umulhi_i64", bin(OpKind::UMulHi, K::I64, -1, -1), I(-2)},
      {"neg_i8_min", [](Builder& b) { return b.unary(OpKind::Neg, ci(b, K::I8, -128)); }, I(-128)},
      {"abs_i8_min", [](Builder& b) { return b.unary(OpKind::Abs, ci(b, K::I8, -128)); }, I(-128)},
      {"not_u8", [](Builder& b) { return b.unary(OpKind::Not, ci(b, K::U8, 0)); }, I(255)},
      {"not_i1", [](Builder& b) { return b.unary(OpKind::Not, b.constantBool(false)); }, I(1)},
      {"add_f16_tie_to_even", fbin(OpKind::Add, K::F16, 1.0, std::ldexp(1.0, -11)), F(1.0)},
      {"add_f16_overflow", fbin(OpKind::Add, K::F16, 65504.0, 16.0), F(kInf)},
      {"add_f16_subnormal", fbin(OpKind::Add, K::F16, std::ldexp(1.0, -24), std::ldexp(1.0, -24)),
       F(std::ldexp(1.0, -23))},
      {"add_bf16_tie_to_even", fbin(OpKind::Add, K::BF16, 1.0, std::ldexp(1.0, -8)), F(1.0)},
      {"add_f32_rounds", fbin(OpKind::Add, K::F32, 0.1f, 0.2f), F(double(0.1f + 0.2f))},
      {"div_f32_by_zero", fbin(OpKind::Div, K::F32, 1.0, 0.0), F(kInf)},
      {"rem_f64_fmod", fbin(OpKind::Rem, K::F64, 5.5, 2.0), F(1.5)},
      {"min_f32_nan", fbin(OpKind::Min, K::F32, kNaN, 1.0), F(1.0)},
      {"sub_f64", fbin(OpKind::Sub, K::F64, 1.0, 0.25), F(0.75)},
      {"sqrt_f32", [](Builder& b) { return b.unary(OpKind::Sqrt, cf(b, K::F32, 2.0)); }, F(double(std::sqrt(2.0f)))},
      {"exp_f64", [](Builder& b) { return b.unary(OpKind::Exp, cf(b, K::F64, 1.0)); }, F(std::exp(1.0))},
      {"floor_f32", [](Builder& b) { return b.unary(OpKind::Floor, cf(b, K::F32, -2.5)); }, F(-3.0)},
      {"neg_f32_zero", [](Builder& b) { return b.unary(OpKind::Neg, cf(b, K::F32, 0.0)); }, F(-0.0)},
      {"cmp_f32_nan_ne",
       [](Builder& b) { return b.cmp("ne", cf(b, K::F32, kNaN), cf(b, K::F32, kNaN)); }, I(1)},
      {"cmp_f32_nan_lt", [](Builder& b) { return b.cmp("lt", cf(b, K::F32, kNaN), cf(b, K::F32, 1.0)); }, I(0)},
      {"cmp_u8_unsigned", [](Builder& b) { return b.cmp("gt", ci(b, K::U8, 255), ci(b, K::U8, 1)); }, I(1)},
      {"cmp_i8_signed", [](Builder& b) { return b.cmp("lt", ci(b, K::I8, -1), ci(b, K::I8, 0)); }, I(1)},
      {"cast_f32_to_i32_saturates_high", castOf(K::F32, 1e10, K::I32), I(INT32_MAX)},
      {"cast_f32_to_i32_saturates_low", castOf(K::F32, -1e10, K::I32), I(INT32_MIN)},
      {"cast_f32_nan_to_i32", castOf(K::F32, kNaN, K::I32), I(0)},
      {"cast_f32_to_i32_truncates", castOf(K::F32, -3.75, K::I32), I(-3)},
      {"cast_f32_negative_to_u8", castOf(K::F32, -1.0, K::U8), I(0)},
      {"cast_f32_to_u8_saturates", castOf(K::F32, 300.0, K::U8), I(255)},
      {"cast_f64_to_i64_saturates", castOf(K::F64, 1e19, K::I64), I(INT64_MAX)},
      {"cast_f32_to_i1", castOf(K::F32, 0.5, K::I1), I(1)},
      {"cast_f32_to_f16_overflow", castOf(K::F32, 70000.0, K::F16), F(kInf)},
      {"cast_f64_to_bf16", castOf(K::F64, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20), K::BF16),
       F(1.0 + std::ldexp(1.0, -7))},
      {"cast_i32_to_u16", castInt(K::I32, -1, K::U16), I(65535)},
      {"cast_i8_to_u32_sign_extends", castInt(K::I8, -1, K::U32), I(4294967295)},
      {"cast_u8_to_i32_zero_extends", castInt(K::U8, 255, K::I32), I(255)},
      {"cast_i32_to_f32_rounds", castInt(K::I32, 16777217, K::F32), F(16777216.0)},
      {"cast_u64_max_to_f32", castInt(K::U64, -1, K::F32), F(std::ldexp(1.0, 64))},
      {"cast_i64_to_bf16_single_rounding", castInt(K::I64, bigForBF16, K::BF16),
       F(std::ldexp(1.0, 62) + std::ldexp(1.0, 55))},
      {"cast_i32_to_i1", castInt(K::I32, 2, K::I1), I(1)},
      {"bitcast_f32_to_i32", [](Builder& b) { return b.bitcast(cf(b, K::F32, 1.0), Type::i32()); }, I(0x3f800000)},
      {"bitcast_i16_to_f16", [](Builder& b) { return b.bitcast(ci(b, K::I16, 0x3c00), Type::f16()); }, F(1.0)},
      {"bitcast_u16_to_bf16",
       [](Builder& b) { return b.bitcast(ci(b, K::U16, 0xc040), scalarType(K::BF16)); }, F(-3.0)},
      {"bitcast_f16_to_i16",
       [](Builder& b) { return b.bitcast(cf(b, K::F16, -2.0), scalarType(K::I16)); }, I(-16384)},
      {"select_constant_condition",
       [](Builder& b) { return b.select(b.constantBool(false), ci(b, K::I32, 1), ci(b, K::I32, 2)); }, I(2)},
  };
}

// Stores `value` (widened to i64 or f64) to the function's only argument.
std::unique_ptr<Function> makeFoldKernel(const FoldCase& c) {
  // The output type depends on what the case builds; build into a scratch function first to learn it.
  auto probe = std::make_unique<Function>("probe", std::vector<Type>{});
  Builder pb(probe->body());
  bool isFloat = c.build(pb)->type().isFloat();
  Type out = isFloat ? Type::scalar(ScalarKind::F64) : Type::i64();

  auto f = std::make_unique<Function>(c.name, std::vector<Type>{ptrTo(out)});
  Builder b(f->body());
  Value* v = c.build(b);
  if (v->type() != out) v = b.cast(v, out);
  b.store(f->argument(0), v);
  b.ret();
  return f;
}

// Runs a one-result kernel in the interpreter and returns the 8 stored bytes.
uint64_t runFoldKernel(const Function& f) {
  uint64_t out = 0xdeadbeefdeadbeefull;
  interp::run(f, {interp::Buffer{&out, sizeof out}}, {1, 1, 1});
  return out;
}

bool sameFloat(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

TEST(Canonicalize, FoldsConstantsExactlyLikeTheInterpreter) {
  for (const FoldCase& c : foldCases()) {
    SCOPED_TRACE(c.name);
    auto f = makeFoldKernel(c);
    ASSERT_NO_THROW(ir::verify(*f)) << ir::print(*f);
    uint64_t interpreted = runFoldKernel(*f);

    runPipeline(*f, {"canonicalize"});
    // Fully folded: only the constant, the store and the return are left.
    EXPECT_EQ(countAllOps(*f), 3) << ir::print(*f);
    Op* store = nullptr;
    f->walk([&](Op* op) { if (op->is(OpKind::Store)) store = op; });
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->operand(1)->definingOp() && store->operand(1)->definingOp()->is(OpKind::Constant))
        << ir::print(*f);
    uint64_t folded = runFoldKernel(*f);

    if (c.expected.isFloat) {
      double fromInterp = std::bit_cast<double>(interpreted), fromFold = std::bit_cast<double>(folded);
      EXPECT_TRUE(sameFloat(fromFold, c.expected.f)) << "folded " << fromFold << ", expected " << c.expected.f;
      EXPECT_TRUE(sameFloat(fromInterp, c.expected.f)) << "interpreted " << fromInterp << ", expected "
                                                       << c.expected.f;
    } else {
      EXPECT_EQ(static_cast<int64_t>(folded), c.expected.i);
      EXPECT_EQ(static_cast<int64_t>(interpreted), c.expected.i);
    }
  }
}

// Cases the spec leaves open, or that do not hold for every input, must stay unfolded.
TEST(Canonicalize, LeavesInexactOrUnspecifiedCasesAlone) {
  auto f = std::make_unique<Function>("keep", std::vector<Type>{ptrTo(Type::f32()), Type::f32(), Type::i32()});
  Builder b(f->body());
  Value* x = f->argument(1);
  Value* n = f->argument(2);
  Value* plusZero = b.binary(OpKind::Add, x, b.constantFloat(0.0, Type::f32()));        // -0.0 + 0.0 = +0.0
  Value* timesZero = b.binary(OpKind::Mul, plusZero, b.constantFloat(0.0, Type::f32())); // inf * 0 = NaN
  Value* minusSelf = b.binary(OpKind::Sub, timesZero, timesZero);                        // NaN - NaN
  Value* negShift = b.binary(OpKind::Shl, n, b.constantInt(-1, Type::i32()));
  Value* zeros = b.binary(OpKind::Min, b.constantFloat(0.0, Type::f32()), b.constantFloat(-0.0, Type::f32()));
  b.store(f->argument(0), b.binary(OpKind::Add, minusSelf, b.binary(OpKind::Add, zeros, b.cast(negShift, Type::f32()))));
  b.ret();
  runPipeline(*f, {"canonicalize"});
  EXPECT_EQ(countOps(*f, OpKind::Add), 3) << ir::print(*f);
  EXPECT_EQ(countOps(*f, OpKind::Mul), 1);
  EXPECT_EQ(countOps(*f, OpKind::Sub), 1);
  EXPECT_EQ(countOps(*f, OpKind::Shl), 1);
  EXPECT_EQ(countOps(*f, OpKind::Min), 1);
}

TEST(Canonicalize, AppliesExactIdentities) {
  auto f = std::make_unique<Function>("ids", std::vector<Type>{ptrTo(Type::i32()), Type::i32(), Type::f32(),
                                                               ptrTo(Type::f32())});
  Builder b(f->body());
  Value* n = f->argument(1);
  Value* x = f->argument(2);
  Value* a = b.binary(OpKind::Add, b.constantInt(0, Type::i32()), n);         // 0 + n -> n
  Value* m = b.binary(OpKind::Mul, a, b.constantInt(1, Type::i32()));         // n * 1 -> n
  Value* o = b.binary(OpKind::Or, m, m);                                      // n | n -> n
  Value* s = b.binary(OpKind::Shr, o, b.constantInt(0, Type::i32()));         // n >> 0 -> n
  Value* c = b.cast(s, Type::i32());                                          // same type -> n
  Value* sel = b.select(b.constantBool(true), c, b.constantInt(7, Type::i32()));  // -> n
  Value* zero = b.binary(OpKind::Sub, sel, sel);                              // n - n -> 0
  Value* sum = b.binary(OpKind::Add, sel, zero);                              // n + 0 -> n
  Value* t = b.splat(sum, {4, 8});
  Value* r = b.reshape(b.reshape(t, {32}), {4, 8});                           // reshape chain -> t
  Value* tt = b.trans(b.trans(r, {1, 0}), {1, 0});                            // trans chain -> t
  Value* fx = b.binary(OpKind::Add, x, b.constantFloat(-0.0, Type::f32()));  // x + (-0.0) -> x
  fx = b.binary(OpKind::Mul, fx, b.constantFloat(1.0, Type::f32()));          // x * 1.0 -> x
  b.store(f->argument(3), fx);
  Value* red = b.reduce({tt}, 0, [](Builder& ib, const std::vector<Value*>& args) {
                  return std::vector<Value*>{ib.binary(OpKind::Add, args[0], args[1])};
                })->result(0);
  b.store(b.splat(f->argument(0), {8}), red);
  b.ret();
  ASSERT_NO_THROW(ir::verify(*f)) << ir::print(*f);
  runPipeline(*f, {"canonicalize"});
  std::string text = ir::print(*f);
  for (OpKind k : {OpKind::Mul, OpKind::Or, OpKind::Shr, OpKind::Cast, OpKind::Select, OpKind::Sub, OpKind::Trans,
                   OpKind::Reshape})
    EXPECT_EQ(countOps(*f, k), 0) << ir::opName(k) << "\n" << text;
  // Only the reduce's own combine add is left; the splat reads the argument directly.
  EXPECT_EQ(countOps(*f, OpKind::Add), 1) << text;
  Op* splat = nullptr;
  f->walk([&](Op* op) { if (op->is(OpKind::Splat) && op->operand(0)->type() == Type::i32()) splat = op; });
  ASSERT_NE(splat, nullptr) << text;
  EXPECT_EQ(splat->operand(0), n) << text;
  // The float store now stores the argument itself.
  Op* floatStore = nullptr;
  f->walk([&](Op* op) { if (op->is(OpKind::Store) && op->operand(0) == f->argument(3)) floatStore = op; });
  ASSERT_NE(floatStore, nullptr);
  EXPECT_EQ(floatStore->operand(1), x) << text;
  // reshape(reshape(t)) and trans(trans(t)) both reduce to t itself.
  EXPECT_EQ(countOps(*f, OpKind::Reshape), 0) << text;
  Op* reduce = nullptr;
  f->walk([&](Op* op) { if (op->is(OpKind::Reduce)) reduce = op; });
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->operand(0), splat->result(0)) << text;
}

TEST(Canonicalize, InlinesConstantIfAndDropsZeroTripFor) {
  auto f = std::make_unique<Function>("cf", std::vector<Type>{ptrTo(Type::i32()), Type::i32()});
  Builder b(f->body());
  Value* n = f->argument(1);
  Op* ifOp = b.ifOp(b.constantBool(true), {Type::i32()});
  Builder thenB(ifOp->region(0));
  thenB.yield({thenB.binary(OpKind::Add, n, n)});
  Builder elseB(ifOp->region(1));
  elseB.yield({n});
  Op* loop = b.forOp(b.constantInt(8, Type::i32()), b.constantInt(8, Type::i32()), b.constantInt(1, Type::i32()),
                     {ifOp->result(0)});
  Builder body(loop->region(0));
  body.yield({body.binary(OpKind::Mul, loop->region(0)->argument(1), loop->region(0)->argument(0))});
  b.store(f->argument(0), loop->result(0));
  b.ret();
  ASSERT_NO_THROW(ir::verify(*f));
  uint64_t before = 0;
  int32_t out = 0;
  interp::run(*f, {interp::Buffer{&out, sizeof out}, int64_t(21)}, {1, 1, 1});
  before = out;
  runPipeline(*f, {"canonicalize"});
  EXPECT_EQ(countOps(*f, OpKind::If), 0) << ir::print(*f);
  EXPECT_EQ(countOps(*f, OpKind::For), 0) << ir::print(*f);
  EXPECT_EQ(countOps(*f, OpKind::Add), 1);
  out = 0;
  interp::run(*f, {interp::Buffer{&out, sizeof out}, int64_t(21)}, {1, 1, 1});
  EXPECT_EQ(out, 42);
  EXPECT_EQ(uint64_t(out), before);
}

TEST(Canonicalize, KeepsLoopWithNonPositiveConstantStep) {
  auto f = std::make_unique<Function>("badstep", std::vector<Type>{ptrTo(Type::i32())});
  Builder b(f->body());
  Value* init = b.constantInt(1, Type::i32());
  Op* loop = b.forOp(b.constantInt(4, Type::i32()), b.constantInt(0, Type::i32()), b.constantInt(0, Type::i32()),
                     {init});
  Builder body(loop->region(0));
  body.yield({loop->region(0)->argument(1)});
  b.store(f->argument(0), loop->result(0));
  b.ret();
  runPipeline(*f, {"canonicalize"});
  EXPECT_EQ(countOps(*f, OpKind::For), 1);
}

// ---------------------------------------------------------------- CSE

TEST(CSE, MergesIdenticalPureOpsIncludingCommutedOperands) {
  auto f = std::make_unique<Function>("cse", std::vector<Type>{ptrTo(Type::i32()), Type::i32(), Type::i32()});
  Builder b(f->body());
  Value* x = f->argument(1);
  Value* y = f->argument(2);
  Value* a1 = b.binary(OpKind::Add, x, y);
  Value* a2 = b.binary(OpKind::Add, y, x);  // commutative: same as a1
  Value* s1 = b.binary(OpKind::Sub, x, y);
  Value* s2 = b.binary(OpKind::Sub, y, x);  // not commutative: different
  Value* lt = b.cmp("lt", x, y);
  Value* gt = b.cmp("gt", x, y);            // different attribute
  Value* sel = b.select(lt, a1, s1);
  Value* sel2 = b.select(gt, a2, s2);
  Value* l1 = b.load(f->argument(0));
  Value* l2 = b.load(f->argument(0));       // reads memory: never merged
  Value* total = b.binary(OpKind::Add, b.binary(OpKind::Add, sel, sel2), b.binary(OpKind::Add, l1, l2));
  b.store(f->argument(0), total);
  b.ret();
  runPipeline(*f, {"cse"});
  EXPECT_EQ(countOps(*f, OpKind::Sub), 2);
  EXPECT_EQ(countOps(*f, OpKind::Cmp), 2);
  EXPECT_EQ(countOps(*f, OpKind::Load), 2);
  EXPECT_EQ(countOps(*f, OpKind::Add), 4) << ir::print(*f);  // a1 (a2 merged), and the three sums
}

TEST(CSE, InnerRegionsReuseOuterOpsButNotTheReverse) {
  auto f = std::make_unique<Function>("scoped", std::vector<Type>{ptrTo(Type::i32()), Type::i32(), Type::i1()});
  Builder b(f->body());
  Value* x = f->argument(1);
  Value* outer = b.binary(OpKind::Mul, x, x);
  Op* ifOp = b.ifOp(f->argument(2), {Type::i32(), Type::i32()});
  Builder thenB(ifOp->region(0));
  Value* innerDup = thenB.binary(OpKind::Mul, x, x);     // dominated by `outer`: merged
  Value* innerOnly = thenB.binary(OpKind::Add, x, x);
  thenB.yield({innerDup, innerOnly});
  Builder elseB(ifOp->region(1));
  elseB.yield({x, x});
  Value* after = b.binary(OpKind::Add, x, x);            // same as innerOnly, but that one does not dominate
  b.store(f->argument(0), b.binary(OpKind::Sub, b.binary(OpKind::Sub, ifOp->result(0), ifOp->result(1)),
                                   b.binary(OpKind::Sub, after, outer)));
  b.ret();
  runPipeline(*f, {"cse"});
  EXPECT_EQ(countOps(*f, OpKind::Mul), 1) << ir::print(*f);
  EXPECT_EQ(countOps(*f, OpKind::Add), 2) << ir::print(*f);
  EXPECT_EQ(ifOp->region(0)->terminator()->operand(0), outer);
}

Op* sumReduce(Builder& b, Value* v, OpKind combine) {
  return b.reduce({v}, 0, [combine](Builder& ib, const std::vector<Value*>& args) {
    return std::vector<Value*>{ib.binary(combine, args[0], args[1])};
  });
}

TEST(CSE, MergesReducesOnlyWithIdenticalRegions) {
  auto f = std::make_unique<Function>("reds", std::vector<Type>{ptrTo(Type::f32())});
  Builder b(f->body());
  Value* v = b.cast(b.arange(0, 16), Type::f32());
  Value* r1 = sumReduce(b, v, OpKind::Add)->result(0);
  Value* r2 = sumReduce(b, v, OpKind::Add)->result(0);  // identical
  Value* r3 = sumReduce(b, v, OpKind::Max)->result(0);  // different combine
  b.store(f->argument(0), b.binary(OpKind::Add, b.binary(OpKind::Add, r1, r2), r3));
  b.ret();
  float before = 0, after = 0;
  interp::run(*f, {interp::Buffer{&before, sizeof before}}, {1, 1, 1});
  runPipeline(*f, {"cse"});
  EXPECT_EQ(countOps(*f, OpKind::Reduce), 2) << ir::print(*f);
  interp::run(*f, {interp::Buffer{&after, sizeof after}}, {1, 1, 1});
  EXPECT_EQ(before, 120.0f + 120.0f + 15.0f);
  EXPECT_EQ(after, before);
}

TEST(CSE, CombineRegionsDoNotReuseOuterValues) {
  auto f = std::make_unique<Function>("isolated", std::vector<Type>{ptrTo(Type::f32())});
  Builder b(f->body());
  Value* outerTwo = b.constantFloat(2.0, Type::f32());
  Value* v = b.cast(b.arange(0, 8), Type::f32());
  Op* red = b.reduce({v}, 0, [](Builder& ib, const std::vector<Value*>& args) {
    Value* two = ib.constantFloat(2.0, Type::f32());  // equal to outerTwo, but the region is isolated
    return std::vector<Value*>{ib.binary(OpKind::Add, args[0], ib.binary(OpKind::Mul, args[1], two))};
  });
  b.store(f->argument(0), b.binary(OpKind::Add, red->result(0), outerTwo));
  b.ret();
  runPipeline(*f, {"cse"});  // the pass manager verifies: a reuse of outerTwo would be rejected
  EXPECT_EQ(countOps(*f, OpKind::Constant), 2) << ir::print(*f);
}

// ---------------------------------------------------------------- DCE

TEST(DCE, RemovesUnusedPureOpsButKeepsSideEffects) {
  auto f = std::make_unique<Function>("dce", std::vector<Type>{ptrTo(Type::i32()), Type::i32()});
  Builder b(f->body());
  Value* x = f->argument(1);
  Value* dead1 = b.binary(OpKind::Mul, x, x);
  b.binary(OpKind::Add, dead1, x);          // chain of unused pure ops
  b.load(f->argument(0));                   // unused load: not pure in the op table, kept
  b.atomicRMW("add", f->argument(0), x);    // side effect
  b.debugPrint("x", {x});
  b.store(f->argument(0), x);
  b.ret();
  runPipeline(*f, {"dce"});
  EXPECT_EQ(countOps(*f, OpKind::Mul), 0);
  EXPECT_EQ(countOps(*f, OpKind::Add), 0);
  EXPECT_EQ(countOps(*f, OpKind::Load), 1);
  EXPECT_EQ(countOps(*f, OpKind::AtomicRMW), 1);
  EXPECT_EQ(countOps(*f, OpKind::DebugPrint), 1);
  EXPECT_EQ(countOps(*f, OpKind::Store), 1);
}

TEST(DCE, RemovesSelfFeedingLoopCarriedValues) {
  auto f = std::make_unique<Function>("loop", std::vector<Type>{ptrTo(Type::i32()), Type::i32()});
  Builder b(f->body());
  Value* zero = b.constantInt(0, Type::i32());
  Value* one = b.constantInt(1, Type::i32());
  Value* n = f->argument(1);
  // carried: sum (used), counter (self-feeding, result unused), feeder (result unused, but feeds sum: kept).
  Op* loop = b.forOp(zero, n, one, {zero, zero, one});
  Block* body = loop->region(0);
  Builder ib(body);
  Value* iv = body->argument(0);
  Value* sum = ib.binary(OpKind::Add, body->argument(1), body->argument(3));
  Value* counter = ib.binary(OpKind::Mul, ib.binary(OpKind::Add, body->argument(2), one), body->argument(2));
  Value* feeder = ib.binary(OpKind::Add, body->argument(3), iv);
  ib.yield({sum, counter, feeder});
  b.store(f->argument(0), loop->result(0));
  b.ret();
  int32_t before = 0, after = 0;
  interp::run(*f, {interp::Buffer{&before, sizeof before}, int64_t(5)}, {1, 1, 1});
  runPipeline(*f, {"dce"});
  EXPECT_EQ(loop->numResults(), 2u) << ir::print(*f);
  EXPECT_EQ(body->numArguments(), 3u);
  EXPECT_EQ(countOps(*f, OpKind::Mul), 0) << ir::print(*f);
  interp::run(*f, {interp::Buffer{&after, sizeof after}, int64_t(5)}, {1, 1, 1});
  EXPECT_EQ(before, 1 + 1 + 2 + 4 + 7);  // feeder: 1, 1, 2, 4, 7; sum adds it before it grows
  EXPECT_EQ(after, before);
}

TEST(DCE, RemovesUnusedIfResultsAndDeadWhileValues) {
  auto f = std::make_unique<Function>("cf", std::vector<Type>{ptrTo(Type::i32()), Type::i1(), Type::i32()});
  Builder b(f->body());
  Value* x = f->argument(2);
  Op* ifOp = b.ifOp(f->argument(1), {Type::i32(), Type::i32()});
  Builder t(ifOp->region(0));
  t.yield({t.binary(OpKind::Add, x, x), t.binary(OpKind::Mul, x, x)});
  Builder e(ifOp->region(1));
  e.yield({x, e.binary(OpKind::Sub, x, x)});

  Value* zero = b.constantInt(0, Type::i32());
  Op* loop = b.whileOp({zero, x});
  Builder before(loop->region(0));
  before.yield({before.cmp("lt", loop->region(0)->argument(0), before.constantInt(10, Type::i32()))});
  Builder after(loop->region(1));
  Value* i = loop->region(1)->argument(0);
  Value* junk = loop->region(1)->argument(1);
  after.yield({after.binary(OpKind::Add, i, ifOp->result(0)), after.binary(OpKind::Xor, junk, i)});
  Op* emptyWhile = b.whileOp({});  // no results, but might not terminate: kept
  Builder eb(emptyWhile->region(0));
  eb.yield({eb.constantBool(false)});
  Builder ea(emptyWhile->region(1));
  ea.yield({});
  b.store(f->argument(0), loop->result(0));
  b.ret();
  ASSERT_NO_THROW(ir::verify(*f)) << ir::print(*f);
  int32_t out1 = 0, out2 = 0;
  interp::run(*f, {interp::Buffer{&out1, sizeof out1}, int64_t(1), int64_t(3)}, {1, 1, 1});
  runPipeline(*f, {"dce"});
  EXPECT_EQ(ifOp->numResults(), 1u) << ir::print(*f);
  EXPECT_EQ(countOps(*f, OpKind::Mul), 0);
  EXPECT_EQ(countOps(*f, OpKind::Sub), 0);
  EXPECT_EQ(loop->numResults(), 1u) << ir::print(*f);
  EXPECT_EQ(loop->region(0)->numArguments(), 1u);
  EXPECT_EQ(loop->region(1)->numArguments(), 1u);
  EXPECT_EQ(countOps(*f, OpKind::Xor), 0);
  EXPECT_EQ(countOps(*f, OpKind::While), 2);
  interp::run(*f, {interp::Buffer{&out2, sizeof out2}, int64_t(1), int64_t(3)}, {1, 1, 1});
  EXPECT_EQ(out1, 12);
  EXPECT_EQ(out2, out1);
}

// ---------------------------------------------------------------- whole pipeline on realistic kernels

// A scaled vector copy with redundant index math, identities, a constant branch and dead code.
std::unique_ptr<Function> makeScaleKernel() {
  auto f = std::make_unique<Function>("scale", std::vector<Type>{ptrTo(Type::f32()), ptrTo(Type::f32()), Type::i32()});
  Builder b(f->body());
  Value* x = f->argument(0);
  Value* out = f->argument(1);
  Value* n = f->argument(2);
  Value* pid = b.programId(0);
  Value* block = b.constantInt(64, Type::i32());
  Value* base = b.binary(OpKind::Mul, pid, block);
  Value* base2 = b.binary(OpKind::Mul, b.constantInt(64, Type::i32()), b.programId(0));
  Value* offs = b.arange(0, 64);
  Value* idx = b.binary(OpKind::Add, b.splat(base, {64}), offs);
  Value* idx2 = b.binary(OpKind::Add, offs, b.splat(base2, {64}));
  Value* mask = b.cmp("lt", idx, b.splat(n, {64}));
  Value* xp = b.addptr(b.addptr(b.splat(x, {64}), idx), b.constantInt(0, Type::tile({64}, Type::i32())));
  Value* v = b.load(xp, mask);
  Value* v1 = b.binary(OpKind::Add, v, b.constantFloat(-0.0, Type::tile({64}, Type::f32())));
  Value* k = b.binary(OpKind::Mul, b.splat(b.constantFloat(2.0, Type::f32()), {64}),
                      b.splat(b.constantFloat(1.5, Type::f32()), {64}));
  Value* w = b.binary(OpKind::Mul, v1, k);
  Value* r = b.select(b.splat(b.constantBool(true), {64}), w, v);
  b.unary(OpKind::Exp, v);  // dead
  Op* ifOp = b.ifOp(b.constantBool(false), {Type::tile({64}, Type::f32())});
  Builder t(ifOp->region(0));
  t.yield({v});
  Builder e(ifOp->region(1));
  e.yield({e.binary(OpKind::Add, r, e.unary(OpKind::Neg, e.unary(OpKind::Neg, v)))});
  b.store(b.addptr(b.splat(out, {64}), idx2), ifOp->result(0), b.cmp("lt", idx2, b.splat(n, {64})));
  b.ret();
  return f;
}

// Sums x[0..64) in four 16-wide steps, with dead carried values, CSE candidates inside the loop, duplicated
// reductions and a zero-trip loop.
std::unique_ptr<Function> makeLoopKernel() {
  auto f = std::make_unique<Function>("loopsum", std::vector<Type>{ptrTo(Type::f32()), ptrTo(Type::f32())});
  Builder b(f->body());
  Value* x = f->argument(0);
  Value* out = f->argument(1);
  Type tile16 = Type::tile({16}, Type::f32());
  Value* offs = b.arange(0, 16);
  Value* xp = b.splat(x, {16});
  Value* sixteen = b.constantInt(16, Type::i32());
  Value* acc0 = b.constantFloat(0.0, tile16);
  Value* cnt0 = b.constantInt(0, Type::i32());
  Value* junk0 = b.constantFloat(1.0, Type::f32());
  Op* loop = b.forOp(b.constantInt(0, Type::i32()), b.constantInt(64, Type::i32()), sixteen, {acc0, cnt0, junk0});
  Block* body = loop->region(0);
  Builder ib(body);
  Value* s16 = ib.constantInt(16, Type::i32());  // same as `sixteen`: CSE reuses the outer one
  Value* off = ib.binary(OpKind::Mul, ib.binary(OpKind::Div, body->argument(0), s16), s16);
  Value* idx = ib.binary(OpKind::Add, offs, ib.splat(off, {16}));
  Value* val = ib.load(ib.addptr(xp, idx));
  Value* acc = ib.binary(OpKind::Add, body->argument(1), val);
  Value* cnt = ib.binary(OpKind::Add, body->argument(2), ib.constantInt(1, Type::i32()));
  Value* junk = ib.binary(OpKind::Mul, body->argument(3), body->argument(3));
  ib.yield({acc, cnt, junk});
  Value* total = sumReduce(b, loop->result(0), OpKind::Add)->result(0);
  Value* total2 = sumReduce(b, loop->result(0), OpKind::Add)->result(0);
  b.store(out, b.binary(OpKind::Add, total, total2));
  Op* never = b.forOp(b.constantInt(5, Type::i32()), b.constantInt(3, Type::i32()), sixteen, {acc0});
  Builder nb(never->region(0));
  nb.yield({nb.binary(OpKind::Add, never->region(0)->argument(1), acc0)});
  Value* maxOfNever = sumReduce(b, never->result(0), OpKind::Max)->result(0);
  b.store(b.addptr(out, b.constantInt(1, Type::i32())), maxOfNever);
  b.ret();
  return f;
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  v[3] = -0.0f;  // exercises the signed-zero identities
  return v;
}

TEST(Pipeline, ScaleKernelKeepsItsResults) {
  auto f = makeScaleKernel();
  ASSERT_NO_THROW(ir::verify(*f)) << ir::print(*f);
  auto optimized = f->clone();
  runPipeline(*optimized, {"canonicalize", "cse", "dce"});
  std::vector<float> x = randomFloats(128, 7);
  std::vector<float> before(128, -1.0f), after(128, -1.0f);
  auto args = [&](std::vector<float>& out) {
    return std::vector<interp::Arg>{interp::Buffer{x.data(), x.size() * 4}, interp::Buffer{out.data(), out.size() * 4},
                                    int64_t(100)};
  };
  interp::run(*f, args(before), {2, 1, 1});
  interp::run(*optimized, args(after), {2, 1, 1});
  EXPECT_EQ(std::memcmp(before.data(), after.data(), before.size() * 4), 0);
  EXPECT_FLOAT_EQ(before[5], x[5] * 3.0f + x[5]);
  EXPECT_EQ(before[100], -1.0f);  // masked off
  EXPECT_EQ(countOps(*optimized, OpKind::If), 0) << ir::print(*optimized);
  EXPECT_EQ(countOps(*optimized, OpKind::Exp), 0);
  EXPECT_EQ(countOps(*optimized, OpKind::Neg), 0);
  EXPECT_EQ(countOps(*optimized, OpKind::Select), 0);
  EXPECT_EQ(countOps(*optimized, OpKind::ProgramId), 1);
  EXPECT_EQ(countOps(*optimized, OpKind::Cmp), 1) << ir::print(*optimized);
  EXPECT_EQ(countOps(*optimized, OpKind::AddPtr), 2);
  EXPECT_EQ(countOps(*optimized, OpKind::Mul), 2);  // pid * 64 and v * 3.0
  EXPECT_LT(countAllOps(*optimized), countAllOps(*f));
}

TEST(Pipeline, LoopKernelKeepsItsResults) {
  auto f = makeLoopKernel();
  ASSERT_NO_THROW(ir::verify(*f)) << ir::print(*f);
  auto optimized = f->clone();
  runPipeline(*optimized, {"canonicalize", "cse", "dce"});
  std::vector<float> x = randomFloats(64, 11);
  float before[2] = {0, 0}, after[2] = {0, 0};
  interp::run(*f, {interp::Buffer{x.data(), x.size() * 4}, interp::Buffer{before, sizeof before}}, {1, 1, 1});
  interp::run(*optimized, {interp::Buffer{x.data(), x.size() * 4}, interp::Buffer{after, sizeof after}}, {1, 1, 1});
  EXPECT_EQ(std::memcmp(before, after, sizeof before), 0) << before[0] << " vs " << after[0];
  EXPECT_EQ(before[1], 0.0f);  // max over the zero-trip loop's init
  EXPECT_EQ(countOps(*optimized, OpKind::For), 1) << ir::print(*optimized);
  Op* loop = nullptr;
  optimized->walk([&](Op* op) { if (op->is(OpKind::For)) loop = op; });
  EXPECT_EQ(loop->numResults(), 1u) << ir::print(*optimized);
  EXPECT_EQ(countOps(*optimized, OpKind::Reduce), 2) << ir::print(*optimized);  // the add pair merged, the max
  std::vector<Op*> sixteens;
  optimized->walk([&](Op* op) {
    if (op->is(OpKind::Constant) && op->result(0)->type() == Type::i32() && op->attr("value") == ir::Attr::integer(16))
      sixteens.push_back(op);
  });
  ASSERT_EQ(sixteens.size(), 1u) << ir::print(*optimized);
  EXPECT_EQ(sixteens[0]->parentBlock(), optimized->body());
}

}  // namespace
