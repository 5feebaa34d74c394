// Textual IR: printer/parser round trips over every op kind, type and attribute kind; exact error locations
// for malformed input; robustness against truncated and mutated text.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>

#include "ir/Builder.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

namespace tessera::ir {
namespace {

std::shared_ptr<const Attr> blockedLayout() {
  return std::make_shared<const Attr>(Attr::layout(
      "blocked", {{"order", Attr::intArray({0})}, {"spt", Attr::intArray({4})}, {"warps", Attr::integer(4)}}));
}

// Function attributes covering every attribute kind, including floats that only survive if printed exactly.
AttrDict everyAttrKind() {
  return {
      {"i_pos", Attr::integer(1024)},
      {"i_min", Attr::integer(std::numeric_limits<int64_t>::min())},
      {"i_max", Attr::integer(std::numeric_limits<int64_t>::max())},
      {"f_tiny", Attr::floating(1e-300)},
      {"f_denormal", Attr::floating(5e-324)},
      {"f_negzero", Attr::floating(-0.0)},
      {"f_nan", Attr::floating(std::numeric_limits<double>::quiet_NaN())},
      {"f_inf", Attr::floating(std::numeric_limits<double>::infinity())},
      {"f_neginf", Attr::floating(-std::numeric_limits<double>::infinity())},
      {"f_tenth", Attr::floating(0.1)},
      {"f_one", Attr::floating(1.0)},
      {"f_big", Attr::floating(1.7976931348623157e308)},
      {"b_true", Attr::boolean(true)},
      {"b_false", Attr::boolean(false)},
      {"s_plain", Attr::string("lt")},
      {"s_escapes", Attr::string(std::string("q\"b\\n\nt\tc\x01\x1f") + "end")},
      {"s_empty", Attr::string("")},
      {"t_scalar", Attr::type(Type::scalar(ScalarKind::BF16))},
      {"t_tile", Attr::type(Type::tile({4, 8}, Type::ptr(Type::f16(), kSharedAddrSpace)))},
      {"t_encoded", Attr::type(Type::tile({64}, Type::f32(), blockedLayout()))},
      {"a_empty", Attr::array({})},
      {"a_nested", Attr::array({Attr::intArray({1, 0}), Attr::floating(-2.5), Attr::string("x"), Attr::boolean(true)})},
      {"layout", Attr::layout("mma", {{"version", Attr::intArray({2, 0})}, {"inner", *blockedLayout()}})},
      {"layout_empty", Attr::layout("plain", {})},
  };
}

std::vector<Value*> addCombine(Builder& b, const std::vector<Value*>& args) {
  return {b.binary(OpKind::Add, args[0], args[1])};
}

// A module whose single function contains every op kind (checked by the test), every type form and nested
// regions (for inside if inside while). Locations are set on every op so they can be printed.
std::unique_ptr<Module> buildEveryOpModule() {
  auto module = std::make_unique<Module>();
  std::vector<Type> argTypes = {Type::ptr(Type::f32()), Type::ptr(Type::f16(), kSharedAddrSpace), Type::i32(),
                                Type::tile({64}, Type::f32(), blockedLayout()),
                                Type::tile({2, 4, 8}, Type::ptr(Type::scalar(ScalarKind::I8), kSharedAddrSpace))};
  for (int k = 0; k <= static_cast<int>(ScalarKind::F8E5M2); ++k) argTypes.push_back(Type::scalar(ScalarKind(k)));
  argTypes.push_back(Type::tensorDesc({8, 16}, Type::f16()));
  Function* f = module->addFunction(std::make_unique<Function>("every_op", argTypes));
  f->argument(0)->setNameHint("x");
  f->argument(1)->setNameHint("smem");
  f->argument(2)->setNameHint("n");
  // argument 3 has no hint: printed as %arg3
  f->argAttrs(0) = {{"divisibility", Attr::integer(16)}};
  f->argAttrs(2) = {{"range", Attr::intArray({0, 1024})}, {"note", Attr::string("count")}};
  f->attrs() = everyAttrKind();

  Value* x = f->argument(0);
  Value* smem = f->argument(1);
  Value* n = f->argument(2);
  Builder b(f->body());
  b.setLoc(Location{"kernel.cpp", 10, 3});

  Value* pid = b.programId(0);
  pid->setNameHint("pid");
  Value* grid = b.numPrograms(2);
  Value* offs = b.arange(0, 16);
  offs->setNameHint("offs");
  Value* zero = b.constantInt(0, Type::i32());
  Value* one = b.constantInt(1, Type::i32());
  Value* flag = b.constantBool(true);
  Value* fill = b.constantFloat(0.5, Type::tile({16}, Type::f32()));
  fill->setNameHint("12abc");  // not a usable name (starts with a digit): must be numbered
  Value* spaced = b.constantFloat(-0.0, Type::scalar(ScalarKind::F64));
  spaced->setNameHint("has space");  // not a usable name either

  b.setLoc(Location{"dir/we\"ird.cpp", 20, 7});
  Value* ptrs = b.addptr(b.splat(x, {16}), offs);
  Value* mask = b.cmp("lt", offs, b.splat(n, {16}));
  Value* acc = b.load(ptrs, mask, fill);
  acc->setNameHint("acc");
  Value* acc2 = b.load(ptrs);
  Value* desc = f->argument(static_cast<unsigned>(argTypes.size() - 1));
  Value* block = b.descLoad(desc, {n, pid});
  b.descStore(desc, {pid, n}, block);
  b.descField(desc, "shape", 0);
  b.descField(desc, "base");
  acc2->setNameHint("acc");  // duplicate hint: printed as %acc_1
  Value* shared = b.load(b.addptr(b.splat(smem, {16}), offs), mask);

  Value* column = b.expandDims(acc, 1);
  Value* wide = b.broadcast(column, {16, 8});
  Value* reshaped = b.reshape(wide, {8, 16});
  Value* transposed = b.trans(reshaped, {1, 0});
  Value* cube = b.reshape(transposed, {2, 8, 8});
  Value* both = b.cat(acc, acc2);
  Value* joined = b.join(acc, acc2);
  auto [lo, hi] = b.split(joined);
  lo->setNameHint("lo");
  hi->setNameHint("hi");

  for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Min, OpKind::Max})
    b.binary(k, lo, hi);
  for (OpKind k : {OpKind::And, OpKind::Or, OpKind::Xor, OpKind::Shl, OpKind::Shr, OpKind::UMulHi})
    b.binary(k, offs, offs);
  for (OpKind k : {OpKind::Neg, OpKind::Abs, OpKind::Exp, OpKind::Exp2, OpKind::Log, OpKind::Log2, OpKind::Sqrt,
                   OpKind::Rsqrt, OpKind::Sin, OpKind::Cos, OpKind::Tanh, OpKind::Erf, OpKind::Floor, OpKind::Ceil})
    b.unary(k, lo);
  b.unary(OpKind::Not, offs);
  b.fma(lo, hi, acc);
  b.select(mask, lo, hi);
  b.cast(offs, Type::scalar(ScalarKind::F8E4M3));
  b.bitcast(acc, Type::scalar(ScalarKind::U32));

  b.store(ptrs, acc, mask);
  b.store(ptrs, shared);
  b.atomicRMW("add", ptrs, acc, mask);
  b.atomicCAS(ptrs, acc, acc2, "relaxed", "cta");

  b.setLoc(Location{"", 30, 1});  // a location without a file
  // Reduce with two inputs: a sum and a max at once.
  Op* reduced = b.reduce({acc, offs}, 0, [](Builder& rb, const std::vector<Value*>& args) {
    return std::vector<Value*>{rb.binary(OpKind::Add, args[0], args[2]), rb.binary(OpKind::Max, args[1], args[3])};
  });
  b.scan({acc}, 0, /*reverse=*/true, addCombine);
  Value* a = b.constantFloat(1.5, Type::tile({16, 16}, Type::f16()));
  Value* c = b.constantFloat(0.0, Type::tile({16, 16}, Type::f32()));
  b.dot(a, a, c, "tf32");

  // while (i < n) { if (i > 0) { for (k = 0; k < n; ++k) carried += carried } }
  Op* loop = b.whileOp({zero, acc});
  {
    Builder before(loop->region(0));
    before.setLoc(b.loc());
    before.yield({before.cmp("lt", loop->region(0)->argument(0), n)});
  }
  {
    Block* body = loop->region(1);
    body->argument(0)->setNameHint("i");
    body->argument(1)->setNameHint("arg3");  // collides with argument 3's printed name
    Builder after(body);
    after.setLoc(b.loc());
    Op* branch = after.ifOp(after.cmp("gt", body->argument(0), zero), {Type::tile({16}, Type::f32())});
    {
      Builder thenB(branch->region(0));
      thenB.setLoc(b.loc());
      Op* inner = thenB.forOp(zero, n, one, {body->argument(1)});
      inner->region(0)->argument(0)->setNameHint("k");
      Builder forB(inner->region(0));
      forB.setLoc(b.loc());
      Value* carried = inner->region(0)->argument(1);
      forB.yield({forB.binary(OpKind::Add, carried, carried)});
      thenB.yield({inner->result(0)});
    }
    {
      Builder elseB(branch->region(1));
      elseB.setLoc(b.loc());
      elseB.yield({body->argument(1)});
    }
    after.yield({after.binary(OpKind::Add, body->argument(0), one), branch->result(0)});
  }

  // Layout-pass ops: a layout change between two encodings, and a barrier (no operands, no results).
  Type otherLayout = Type::tile({64}, Type::f32(), std::make_shared<const Attr>(Attr::layout(
      "blocked", {{"order", Attr::intArray({0})}, {"spt", Attr::intArray({1})}, {"warps", Attr::integer(4)}})));
  b.create1(OpKind::ConvertLayout, {f->argument(3)}, otherLayout,
            {{"smem_bytes", Attr::integer(256)}, {"smem_offset", Attr::integer(0)}});
  b.create(OpKind::Barrier, {}, {});

  // Shared buffers and asynchronous copies: a two-stage buffer, a copy into stage 1, its group and wait, a read,
  // and the read tile stored into stage 0.
  Type buffer = Type::sharedBuffer(2, {64}, Type::f32(), std::make_shared<const Attr>(Attr::layout(
      "shared", {{"max_phase", Attr::integer(1)}, {"order", Attr::intArray({0})}, {"per_phase", Attr::integer(1)},
                 {"vec", Attr::integer(1)}})));
  Value* buf = b.create1(OpKind::LocalAlloc, {}, buffer);
  Value* stage = b.constantInt(1, Type::i32());
  Value* copied = b.create1(OpKind::AsyncCopy, {b.splat(f->argument(0), {64}), buf, stage}, Type::asyncToken());
  Value* group = b.create1(OpKind::AsyncCommitGroup, {copied}, Type::asyncToken());
  Value* landed = b.create1(OpKind::AsyncWait, {group}, Type::asyncToken(), {{"pending", Attr::integer(0)}});
  Value* read = b.create1(OpKind::LocalLoad, {buf, stage, landed}, Type::tile({64}, Type::f32()));
  b.create1(OpKind::LocalStore, {read, buf, b.constantInt(0, Type::i32())}, Type::asyncToken());

  // TMA: a barrier per stage of a buffer of the descriptor's blocks, a predicated copy into stage 1, its wait, a read.
  Value* barriers = b.create1(OpKind::MbarrierAlloc, {}, Type::mbarriers(2));
  Type blocks = Type::sharedBuffer(2, {8, 16}, Type::f16(), std::make_shared<const Attr>(Attr::layout(
      "shared", {{"max_phase", Attr::integer(1)}, {"order", Attr::intArray({1, 0})}, {"per_phase", Attr::integer(1)},
                 {"vec", Attr::integer(1)}})));
  Value* blockBuf = b.create1(OpKind::LocalAlloc, {}, blocks);
  Value* always = b.constantBool(true, Type::i1());
  Value* issued =
      b.create1(OpKind::AsyncTmaCopy, {desc, n, pid, blockBuf, stage, barriers, always}, Type::asyncToken());
  Value* arrived = b.create1(OpKind::MbarrierWait, {barriers, stage, b.constantInt(0, Type::i32()), issued},
                             Type::asyncToken());
  b.create1(OpKind::LocalLoad, {blockBuf, stage, arrived}, Type::tile({8, 16}, Type::f16()));
  b.create(OpKind::MbarrierArrive, {barriers, stage, always}, {});

  // A dot left in flight and the wait for it.
  Value* product = b.dot(b.constantFloat(1.0, Type::tile({16, 16}, Type::f16())),
                         b.constantFloat(1.0, Type::tile({16, 16}, Type::f16())),
                         b.constantFloat(0.0, Type::tile({16, 16}, Type::f32())));
  product->definingOp()->setAttr("pending", Attr::integer(1));
  b.create(OpKind::DotWait, {product}, {product->type()}, {{"pending", Attr::integer(0)}});

  b.debugPrint("pid \"=\"\n", {pid, grid, loop->result(1), reduced->result(0)});
  b.deviceAssert(flag, "out of bounds");
  b.hint(offs, {{"max_contiguous", Attr::intArray({16})}, {"multiple_of", Attr::intArray({16})}});
  (void)both;
  (void)cube;
  (void)spaced;
  // Warp specialization's op ends the body: a producer region that waits, consumers that arrive.
  Op* roles = b.create(OpKind::WarpSpecialize, {}, {},
                       {{"producer_warps", Attr::integer(4)}, {"producer_registers", Attr::integer(40)},
                        {"consumer_registers", Attr::integer(232)}, {"consumer_groups", Attr::integer(2)}});
  Builder producer(roles->region(0), nullptr);
  producer.setLoc(b.loc());
  producer.create1(OpKind::MbarrierWait, {barriers, stage, stage}, Type::asyncToken());
  producer.create(OpKind::Yield, {}, {});
  Builder consumers(roles->region(1), nullptr);
  consumers.setLoc(b.loc());
  consumers.create(OpKind::MbarrierArrive, {barriers, stage}, {});
  consumers.create(OpKind::TurnWait, {}, {}, {{"groups", Attr::integer(2)}});
  consumers.create(OpKind::TurnPass, {}, {}, {{"groups", Attr::integer(2)}, {"only_group", Attr::integer(1)}});
  consumers.create(OpKind::TurnPass, {}, {}, {{"groups", Attr::integer(2)}, {"sequence", Attr::integer(1)}});
  consumers.create1(OpKind::ConsumerGroup, {}, Type::i32());
  consumers.create(OpKind::Yield, {}, {});
  b.ret();
  return module;
}

TEST(PrinterParser, EveryOpKindRoundTrips) {
  std::unique_ptr<Module> module = buildEveryOpModule();
  std::set<OpKind> seen;
  module->functions()[0]->walk([&](Op* op) { seen.insert(op->kind()); });
  for (int k = 0; k < numOpKinds(); ++k)
    EXPECT_TRUE(seen.count(OpKind(k))) << "the round-trip test does not cover '" << opName(OpKind(k)) << "'";

  std::string text = print(*module);
  std::unique_ptr<Module> parsed = parseModule(text, "every_op.tir");
  EXPECT_EQ(print(*parsed), text);

  // Spot checks of the format itself.
  EXPECT_NE(text.find("func @every_op(%x: ptr<f32> {divisibility = 16}, %smem: ptr<f16, 3>, "
                      "%n: i32 {note = \"count\", range = [0, 1024]}, %arg3: tile<64xf32, #blocked{"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%acc_1 = load %"), std::string::npos);
  EXPECT_NE(text.find("%lo, %hi = split %"), std::string::npos);
  EXPECT_NE(text.find("^(%i: i32, %arg3_1: tile<16xf32>):"), std::string::npos);
  EXPECT_NE(text.find("  } {\n"), std::string::npos);  // the if's and the while's second regions
  EXPECT_EQ(text.find("12abc"), std::string::npos);
  EXPECT_EQ(text.find("has space"), std::string::npos);
  EXPECT_EQ(text.find("loc("), std::string::npos);  // locations only on request
}

TEST(PrinterParser, TypesAndAttributesSurviveExactly) {
  std::unique_ptr<Module> module = buildEveryOpModule();
  std::unique_ptr<Module> parsed = parseModule(print(*module));
  const Function& before = *module->functions()[0];
  const Function& after = *parsed->functions()[0];
  ASSERT_EQ(after.numArguments(), before.numArguments());
  for (unsigned i = 0; i < before.numArguments(); ++i) {
    EXPECT_EQ(after.argument(i)->type(), before.argument(i)->type()) << before.argument(i)->type().str();
    EXPECT_EQ(after.argAttrs(i), before.argAttrs(i));
  }
  EXPECT_EQ(after.attrs(), before.attrs());  // Attr equality is bitwise for floats

  const AttrDict& attrs = after.attrs();
  EXPECT_EQ(attrs.at("f_tiny").getFloat(), 1e-300);
  EXPECT_EQ(attrs.at("f_denormal").getFloat(), 5e-324);
  EXPECT_EQ(attrs.at("f_negzero").getFloat(), 0.0);
  EXPECT_TRUE(std::signbit(attrs.at("f_negzero").getFloat()));
  EXPECT_TRUE(std::isnan(attrs.at("f_nan").getFloat()));
  EXPECT_EQ(attrs.at("f_neginf").getFloat(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(attrs.at("f_tenth").getFloat(), 0.1);
  EXPECT_TRUE(attrs.at("f_one").isFloat());
  EXPECT_TRUE(attrs.at("i_pos").isInt());
  EXPECT_EQ(attrs.at("i_min").getInt(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(attrs.at("s_escapes").getString(), std::string("q\"b\\n\nt\tc\x01\x1f") + "end");
  EXPECT_EQ(attrs.at("t_encoded").getType().encoding()->getString(), "blocked");
  EXPECT_EQ(after.argument(1)->type().addrSpace(), kSharedAddrSpace);
  EXPECT_EQ(after.argument(4)->type().rank(), 3);

  // Names the parser keeps as hints, numbered ones it drops.
  EXPECT_EQ(after.argument(0)->nameHint(), "x");
  EXPECT_EQ(after.argument(3)->nameHint(), "arg3");
}

TEST(PrinterParser, LocationsRoundTripWhenRequested) {
  std::unique_ptr<Module> module = buildEveryOpModule();
  PrintOptions withLocs;
  withLocs.locations = true;
  std::string text = print(*module, withLocs);
  EXPECT_NE(text.find(" loc(\"kernel.cpp\":10:3)\n"), std::string::npos);
  EXPECT_NE(text.find(" loc(\"dir/we\\\"ird.cpp\":20:7)\n"), std::string::npos);
  EXPECT_NE(text.find("} loc(\"\":30:1)\n"), std::string::npos);  // after the regions of a region op

  std::unique_ptr<Module> parsed = parseModule(text, "with_locs.tir");
  EXPECT_EQ(print(*parsed, withLocs), text);
  const Op& firstOp = *parsed->functions()[0]->body()->front();
  EXPECT_EQ(firstOp.loc(), (Location{"kernel.cpp", 10, 3}));
}

TEST(PrinterParser, HandWrittenTextParses) {
  const std::string text = R"(// a kernel written by hand
func @k(%x: ptr<f32> {divisibility = 16}, %n: i32) attributes {BLOCK = 16} {
  %pid = program_id {axis = 0} : i32   // trailing comment
  %7 = arange {end = 16, start = 0} : tile<16xi32>
  %p = splat %x : tile<16xptr<f32>>
  %q = addptr %p, %7 : tile<16xptr<f32>>
  %c = cmp %pid, %n {pred = "lt"} : i1
  %r = if %c : i32 {
    yield %pid
  } {
    yield %n
  }
  %s = reduce %7 {axis = 0} : i32 {
  ^(%a: i32, %b: i32):
    %sum = add %a, %b : i32
    yield %sum
  }
  store %q, %q
  return
}

func @empty() {
}
)";
  std::unique_ptr<Module> m = parseModule(text, "hand.tir");
  ASSERT_EQ(m->functions().size(), 2u);
  const Function& k = *m->lookup("k");
  EXPECT_EQ(k.loc(), (Location{"hand.tir", 2, 1}));
  EXPECT_EQ(k.attrs().at("BLOCK"), Attr::integer(16));
  ASSERT_EQ(k.body()->ops().size(), 9u);
  auto it = k.body()->ops().begin();
  const Op& pid = **it++;
  EXPECT_EQ(pid.kind(), OpKind::ProgramId);
  EXPECT_EQ(pid.loc(), (Location{"hand.tir", 3, 3}));  // an op's location defaults to where it starts
  EXPECT_EQ(pid.result()->nameHint(), "pid");
  const Op& range = **it++;
  EXPECT_EQ(range.result()->nameHint(), "");  // numbered names are not hints
  EXPECT_EQ(range.result()->type(), Type::tile({16}, Type::i32()));
  ++it;
  ++it;
  const Op& cmp = **it++;
  EXPECT_EQ(cmp.attrs().at("pred"), Attr::string("lt"));
  EXPECT_EQ(cmp.operand(1), k.argument(1));
  const Op& branch = **it++;
  EXPECT_EQ(branch.region(0)->front()->operand(0), pid.result());  // outer values are visible in regions
  const Op& reduce = **it++;
  ASSERT_EQ(reduce.region(0)->numArguments(), 2u);
  EXPECT_EQ(reduce.region(0)->argument(1)->nameHint(), "b");
  EXPECT_EQ((*it)->kind(), OpKind::Store);
  EXPECT_EQ((*it)->numOperands(), 2u);
  EXPECT_TRUE(m->lookup("empty")->body()->empty());

  // Printing renumbers %7 as %0 and keeps every real name.
  std::string printed = print(*m);
  EXPECT_NE(printed.find("  %0 = arange {end = 16, start = 0} : tile<16xi32>\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("  ^(%a: i32, %b: i32):\n    %sum = add %a, %b : i32\n"), std::string::npos);
  EXPECT_EQ(print(*parseModule(printed)), printed);
}

TEST(PrinterParser, ZeroOperandOpFollowedByResults) {
  // The first "debug_print" has no operands: the "%lo, %hi =" on the next line belongs to the next op.
  const std::string text =
      "func @f(%c: i1, %a: i32, %t: tile<2xi32>) {\n"
      "  if %c {\n"
      "    yield\n"
      "  } {\n"
      "    yield\n"
      "  }\n"
      "  debug_print\n"
      "  %lo, %hi = split %t : i32, i32\n"
      "  debug_print %lo\n"
      "  %b = add %a, %a : i32\n"
      "  return\n"
      "}\n";
  std::unique_ptr<Module> m = parseModule(text);
  EXPECT_EQ(print(*m), text);
}

TEST(PrinterParser, PrintSingleOpUsesFunctionNames) {
  std::unique_ptr<Module> m = parseModule(
      "func @f(%a: i32) {\n  %0 = add %a, %a : i32\n  %sum = mul %0, %a : i32\n  return\n}\n");
  Op* mul = std::next(m->functions()[0]->body()->ops().begin())->get();
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(print(*mul), "%sum = mul %0, %a : i32\n");

  // A detached op still prints, with placeholder names for operands that have no name.
  std::unique_ptr<Op> detached = Op::create(OpKind::Neg, {mul->result()}, {Type::i32()});
  EXPECT_EQ(print(*detached), "%0 = neg %sum : i32\n");
  std::unique_ptr<Op> unnamed = Op::create(OpKind::Neg, {m->functions()[0]->body()->front()->result()}, {Type::i32()});
  EXPECT_EQ(print(*unnamed), "%0 = neg %?0 : i32\n");
}

// ---------------------------------------------------------------- errors

struct ErrorCase {
  const char* text;
  unsigned line;
  unsigned col;
  const char* message;  // substring of the message
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.text; }

class ParserErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParserErrors, PointsAtTheOffendingToken) {
  const ErrorCase& c = GetParam();
  try {
    parseModule(c.text, "bad.tir");
    FAIL() << "expected a parse error";
  } catch (const Error& e) {
    EXPECT_EQ(e.location().file, "bad.tir");
    EXPECT_EQ(e.location().line, c.line) << e.what();
    EXPECT_EQ(e.location().col, c.col) << e.what();
    EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
  }
}

const ErrorCase kErrorCases[] = {
    {"func @f(%x i32) {\n}", 1, 12, "expected ':' after argument name"},
    {"func @f() {\n  %a = add %x, %x : i32\n}", 2, 12, "use of undefined value '%x'"},
    {"func @f(%a: i32) {\n  %a = add %a, %a : i32\n}", 2, 3, "redefinition of '%a'"},
    {"func @f() {\n  %a = foo : i32\n}", 2, 8, "unknown op 'foo'"},
    {"func @f(%a: f31) {\n}", 1, 13, "unknown type 'f31'"},
    {"func @f(%a: tile<4x3xf32>) {\n}", 1, 20, "tile dimension 3 is not a positive power of two"},
    {"func @f(%a: tile<4xf31>) {\n}", 1, 20, "unknown type 'f31'"},
    {"func @f(%a: tile<2048x1024xf32>) {\n}", 1, 18, "more than 1048576 elements"},
    {"func @f(%a: tile<99999999999999999999xf32>) {\n}", 1, 18, "tile dimension 99999999999999999999 exceeds"},
    {"func @f(%a: tile<f32>) {\n}", 1, 18, "expected tile shape"},
    {"func @f(%p: ptr<tile<4xf32>>) {\n}", 1, 17, "pointer element type must be a scalar"},
    {"func @f(%a: i32) {\n  %b, %c = split %a : i32\n}", 2, 12, "expected 2 result types, got 1"},
    {"func @f() {\n  debug_print {prefix = \"abc\n}", 2, 25, "unterminated string"},
    {"func @f() {\n  debug_print {prefix = \"a\\qb\"}\n}", 2, 27, "invalid escape sequence '\\q'"},
    {"func @f() {\n  debug_print {prefix = \"a\\4\"}\n}", 2, 27, "invalid escape sequence"},
    {"func @f(%c: i1) {\n  if %c {\n    yield\n  }\n}", 5, 1, "'if' expects 2 regions, got 1"},
    {"func @f(%a: i32) {\n  %b = add %a, %a : i32 {\n  }\n}", 2, 25, "'add' has 0 region(s)"},
    {"func @f(%c: i1, %a: i32) {\n  if %c {\n    %t = add %a, %a : i32\n    yield\n  } {\n    yield\n  }\n"
     "  %u = add %t, %a : i32\n}",
     8, 12, "use of undefined value '%t'"},
    {"func @f(%c: i1, %a: i32) {\n  if %c {\n    %a = add %a, %a : i32\n    yield\n  } {\n    yield\n  }\n}", 3, 5,
     "redefinition of '%a'"},
    {"func @f() {\n  %r = for : i32 {\n  ^(%r: i32):\n    yield\n  }\n}", 3, 5, "redefinition of '%r'"},
    {"func @f() attributes {big = 99999999999999999999} {\n}", 1, 29, "does not fit in 64 bits"},
    {"func @f() attributes {big = 1e999} {\n}", 1, 29, "out of range"},
    {"func @f() attributes {v = 1.5.2} {\n}", 1, 27, "invalid number '1.5.2'"},
    {"func @f() attributes {v = - x} {\n}", 1, 29, "invalid number 'x'"},
    {"func @f() attributes {v = foo} {\n}", 1, 27, "expected attribute value, found 'foo'"},
    {"func @f() attributes {a = 1, a = 2} {\n}", 1, 30, "duplicate attribute 'a'"},
    {"func @f() attributes {a = [1, 2} {\n}", 1, 32, "expected ',' or ']' in array"},
    {"func @f() {\n  $\n}", 2, 3, "unexpected character '$'"},
    {"func @f() {\n  return\n", 3, 1, "expected '}', found end of input"},
    {"func @f(%a: i32) {\n  %b add %a, %a : i32\n}", 2, 6, "expected '=' after result names"},
    {"func @f() {\n}\nfunc @f() {\n}", 3, 6, "redefinition of function '@f'"},
    {"%a = add\n", 1, 1, "expected 'func'"},
    {"func @f() {\n  %a = constant : i32 loc(\"x.c\":y:1)\n}", 2, 33, "expected line number"},
    {"func @f() {\n  %a = constant : i32 {\n  }\n}", 2, 23, "'constant' has 0 region(s)"},
    {"func @f() {\n  %a = reduce : i32 {\n  ^(%x: i32)\n    yield\n  }\n}", 4, 5,
     "expected ':' after the region argument list"},
    {"func @f(% : i32) {\n}", 1, 9, "expected a name after '%'"},
    {"func @f() {\n  %a = constant {value = 1} : ptr<f32, x> \n}", 2, 40, "expected address space"},
};

INSTANTIATE_TEST_SUITE_P(Malformed, ParserErrors, ::testing::ValuesIn(kErrorCases));

TEST(ParserErrorsExtra, DeepNestingIsAnErrorNotACrash) {
  std::string text = "func @f() attributes {a = " + std::string(100000, '[') + "} {\n}";
  EXPECT_THROW(parseModule(text), Error);
}

// One attribute on its own, as the layout tools and the layout fuzzer read them.
TEST(ParserAttribute, ParsesOneValueAndItsCanonicalText) {
  Attr layout = parseAttribute("#slice{dim = 1, parent = #blocked{order = [1, 0], spt = [1, 4], tpw = [4, 8], wpc = [4, 1]}}");
  ASSERT_TRUE(layout.isLayout());
  EXPECT_EQ(layout.getString(), "slice");
  EXPECT_EQ(parseAttribute(layout.str()), layout);
  Attr tile = parseAttribute("tile<16x64xf16, #shared{max_phase = 8, order = [1, 0], per_phase = 1, vec = 8}>");
  ASSERT_TRUE(tile.isType());
  EXPECT_EQ(tile.getType().shape(), (std::vector<int64_t>{16, 64}));
  EXPECT_EQ(parseAttribute("[1, -2, 3.5]").str(), "[1, -2, 3.5]");
}

TEST(ParserAttribute, TrailingTextIsAnErrorAtItsPosition) {
  try {
    parseAttribute("[1, 0] [2]", "attr.txt");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.location(), (Location{"attr.txt", 1, 8}));
    EXPECT_NE(e.message().find("expected end of input after the attribute, found '['"), std::string::npos) << e.message();
  }
  EXPECT_THROW(parseAttribute(""), Error);
  EXPECT_THROW(parseAttribute("#blocked{"), Error);
}

// ---------------------------------------------------------------- robustness

// Parses `text`; if it is accepted, its printout must be a fixed point of parse + print.
void parseOrReject(const std::string& text) {
  std::unique_ptr<Module> m;
  try {
    m = parseModule(text);
  } catch (const Error&) {
    return;
  }
  std::string printed = print(*m);
  std::unique_ptr<Module> again = parseModule(printed);
  ASSERT_EQ(print(*again), printed) << "input:\n" << text;
}

TEST(ParserRobustness, TruncationsAndMutationsNeverCrash) {
  PrintOptions withLocs;
  withLocs.locations = true;
  const std::string text = print(*buildEveryOpModule(), withLocs);

  for (size_t len = 0; len <= text.size(); ++len) {
    parseOrReject(text.substr(0, len));
    if (::testing::Test::HasFatalFailure()) return;
  }

  std::mt19937 rng(20240611);
  const std::string interesting = "%@#^{}[]()<>,:=-\"\\/x.0123456789e \n\t\x01\xff";
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  for (int iteration = 0; iteration < 4000; ++iteration) {
    std::string mutated = text;
    int edits = 1 + static_cast<int>(pick(3));
    for (int e = 0; e < edits && !mutated.empty(); ++e) {
      size_t at = pick(mutated.size());
      switch (pick(4)) {
        case 0: mutated[at] = interesting[pick(interesting.size())]; break;
        case 1: mutated[at] = static_cast<char>(pick(256)); break;
        case 2: mutated.erase(at, 1 + pick(8)); break;
        default: mutated.insert(at, mutated.substr(pick(mutated.size()), 1 + pick(16))); break;
      }
    }
    parseOrReject(mutated);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace tessera::ir
