// Verifier tests. Programs are built with ir::Builder and Op::create directly (no parser), so each test controls
// exactly which rule is broken. Every rejection asserts the message names the op, and that the error carries
// the offending op's location.
#include "ir/Verifier.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/Layout.h"

namespace {

using namespace tessera;
using namespace tessera::ir;

const Location kGoodLoc{"ok.tir", 1, 1};
const Location kBadLoc{"bad.tir", 42, 7};

Type T(const std::vector<int64_t>& shape, Type element) { return Type::tile(shape, element); }
Type S(ScalarKind k) { return Type::scalar(k); }
const Type f32 = Type::f32(), f16 = Type::f16(), i32 = Type::i32(), i64 = Type::i64(), i1 = Type::i1();
const Type i8 = S(ScalarKind::I8), u32 = S(ScalarKind::U32), bf16 = S(ScalarKind::BF16), f64 = S(ScalarKind::F64);
const Type f8 = S(ScalarKind::F8E4M3);

// Two distinct one-dimensional blocked layouts, and a two-dimensional one.
Layout blocked1(int64_t spt) { return Layout::blocked({spt}, {32}, {4}, {0}); }
Layout blocked2() { return Layout::blocked({1, 1}, {4, 8}, {4, 1}, {1, 0}); }

std::string messages(const std::vector<Error>& errors) {
  std::string s;
  for (const Error& e : errors) s += "\n  " + std::string(e.what());
  return s;
}

// A kernel under construction: a function with a few arguments and a set of well-formed values that the cases
// combine into one ill-formed op.
struct Kernel {
  std::unique_ptr<Function> other;  // declared first: destroyed after `module`, whose ops may use its values
  Module module;
  Function* fn;
  Builder b;
  Value *pf, *n, *x, *pi, *p8;                 // ptr<f32>, i32, f32, ptr<i32>, ptr<f8e4m3> arguments
  Value *c0, *c1, *c16, *n64, *one, *yes;      // i32 0, 1, 16; i64; f32 1.0; i1 true
  Value *f4, *i4, *m4, *q4, *pf4, *pi4, *p84;  // tile<4x...>: f32, i32, i1, f8e4m3, ptr<f32>, ptr<i32>, ptr<f8e4m3>

  Kernel() {
    fn = module.addFunction(
        std::make_unique<Function>("k", std::vector<Type>{Type::ptr(f32), i32, f32, Type::ptr(i32), Type::ptr(f8)}));
    fn->setLoc({"fn.tir", 3, 1});
    pf = fn->argument(0), n = fn->argument(1), x = fn->argument(2), pi = fn->argument(3), p8 = fn->argument(4);
    b.setInsertionPointToEnd(fn->body());
    b.setLoc(kGoodLoc);
    c0 = b.constantInt(0, i32);
    c1 = b.constantInt(1, i32);
    c16 = b.constantInt(16, i32);
    n64 = b.constantInt(64, i64);
    one = b.constantFloat(1.0, f32);
    yes = b.constantBool(true);
    f4 = b.constantFloat(2.0, T({4}, f32));
    i4 = b.constantInt(3, T({4}, i32));
    m4 = b.constantBool(true, T({4}, i1));
    q4 = b.cast(f4, f8);
    pf4 = b.splat(pf, {4});
    pi4 = b.splat(pi, {4});
    p84 = b.splat(p8, {4});
  }

  Op* op(OpKind kind, const std::vector<Value*>& operands, const std::vector<Type>& results, AttrDict attrs = {}) {
    return b.create(kind, operands, results, std::move(attrs));
  }

  // Fills region `r` of `parent` with `body`, then returns the insertion point to the function body's end.
  void inRegion(Op* parent, unsigned r, const std::function<void()>& body) {
    b.setInsertionPointToEnd(parent->region(r));
    body();
    b.setInsertionPointToEnd(fn->body());
  }

  // A reduce/scan op with a well-formed combine region (2N scalar arguments, yields N sums), so that a case
  // can break exactly one thing about the op itself.
  Op* combineOp(OpKind kind, const std::vector<Value*>& inputs, const std::vector<Type>& results, AttrDict attrs) {
    Op* o = op(kind, inputs, results, std::move(attrs));
    std::vector<Value*> args;
    for (int pass = 0; pass < 2; ++pass)
      for (Value* in : inputs) args.push_back(o->region(0)->addArgument(in->type().element()));
    inRegion(o, 0, [&] {
      std::vector<Value*> sums;
      for (size_t i = 0; i < inputs.size(); ++i)
        sums.push_back(b.binary(OpKind::Add, args[i], args[inputs.size() + i]));
      b.yield(sums);
    });
    return o;
  }

  // A for loop over [0, 16) carrying `inits`, whose body yields `body()`'s values.
  Op* loop(const std::vector<Value*>& inits, const std::function<std::vector<Value*>(Op*)>& body) {
    Op* o = b.forOp(c0, c16, c1, inits);
    inRegion(o, 0, [&] { b.yield(body(o)); });
    return o;
  }

  void finish() {
    b.setInsertionPointToEnd(fn->body());
    if (!fn->body()->terminator()) b.ret();
  }
};

AttrDict rmwAttrs(const std::string& kind = "add") {
  return {{"kind", Attr::string(kind)}, {"sem", Attr::string("acq_rel")}, {"scope", Attr::string("gpu")}};
}
AttrDict axisAttr(int64_t axis) { return {{"axis", Attr::integer(axis)}}; }

// ---------------------------------------------------------------- accepted programs

// One function exercising every op kind.
TEST(VerifierAccepts, FunctionUsingEveryOpKind) {
  Function fn("all_ops", {Type::ptr(f32), i32, Type::ptr(i32), Type::tensorDesc({16, 32}, f32)});
  Value *pf = fn.argument(0), *n = fn.argument(1), *pi = fn.argument(2), *desc = fn.argument(3);
  Builder b(fn.body());
  unsigned line = 1;
  auto at = [&] { b.setLoc({"all.tir", line++, 1}); };

  at();
  Value* pid = b.programId(0);
  at();
  b.numPrograms(1);
  at();
  Value* range = b.arange(0, 16);
  Value* c0 = b.constantInt(0, i32);
  Value* c1 = b.constantInt(1, i32);
  Value* c16 = b.constantInt(16, i32);
  Value* fone = b.constantFloat(1.0, f32);
  Value* yes = b.constantBool(true);
  at();
  Value* pids = b.splat(pid, {16});
  Value* off = b.binary(OpKind::Add, range, pids);
  for (OpKind k : {OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Min, OpKind::Max, OpKind::And,
                   OpKind::Or, OpKind::Xor, OpKind::Shl, OpKind::Shr, OpKind::UMulHi})
    b.binary(k, off, range);
  for (OpKind k : {OpKind::Neg, OpKind::Not, OpKind::Abs}) b.unary(k, off);
  Value* mask = b.cmp("lt", off, b.splat(n, {16}));
  Value* ptrs = b.addptr(b.splat(pf, {16}), off);
  Value* x = b.load(ptrs, mask, b.splat(fone, {16}));
  for (OpKind k : {OpKind::Exp, OpKind::Exp2, OpKind::Log, OpKind::Log2, OpKind::Sqrt, OpKind::Rsqrt, OpKind::Sin,
                   OpKind::Cos, OpKind::Tanh, OpKind::Erf, OpKind::Floor, OpKind::Ceil})
    b.unary(k, x);
  Value* y = b.fma(x, x, x);
  Value* sel = b.select(mask, x, y);
  b.cast(x, i32);
  b.bitcast(x, i32);
  at();
  b.store(ptrs, sel, mask);
  Value* iptrs = b.addptr(b.splat(pi, {16}), off);
  b.atomicRMW("add", iptrs, off, mask);
  b.atomicCAS(iptrs, off, off);
  at();
  Value* block = b.descLoad(desc, {pid, n});
  at();
  b.descStore(desc, {n, pid}, block);
  at();
  b.descField(desc, "stride", 1);
  Value* row = b.expandDims(x, 0);          // tile<1x16xf32>
  Value* rows = b.broadcast(row, {4, 16});  // tile<4x16xf32>
  b.reshape(rows, {64});
  b.trans(rows, {1, 0});
  b.cat(x, x);
  Value* pairs = b.join(x, x);  // tile<16x2xf32>
  b.split(pairs);
  auto sum = [](Builder& ib, const std::vector<Value*>& a) {
    return std::vector<Value*>{ib.binary(OpKind::Add, a[0], a[1])};
  };
  at();
  b.reduce({x}, 0, sum);
  at();
  b.scan({x}, 0, /*reverse=*/false, sum);
  at();
  Value* product = b.dot(b.constantFloat(1.0, T({16, 16}, f16)), b.constantFloat(1.0, T({16, 16}, f16)),
                         b.constantFloat(0.0, T({16, 16}, f32)));
  product->definingOp()->setAttr("pending", Attr::integer(1));  // left in flight: only a dot_wait reads it
  at();
  b.create(OpKind::DotWait, {product}, {product->type()}, {{"pending", Attr::integer(0)}});

  at();
  Op* loop = b.forOp(c0, c16, c1, {fone});
  {
    Builder ib(loop->region(0));
    ib.yield({ib.binary(OpKind::Add, loop->region(0)->argument(1), fone)});
  }
  at();
  Op* branch = b.ifOp(yes, {f32});
  Builder(branch->region(0)).yield({fone});
  Builder(branch->region(1)).yield({loop->result(0)});
  at();
  Op* wh = b.whileOp({c0});
  {
    Builder before(wh->region(0));
    before.yield({before.cmp("lt", wh->region(0)->argument(0), n)});
    Builder after(wh->region(1));
    after.yield({after.binary(OpKind::Add, wh->region(1)->argument(0), c1)});
  }
  at();
  b.debugPrint("x = ", {x, branch->result(0)});
  at();
  b.deviceAssert(mask, "out of range");
  at();
  b.hint(off, {{"multiple_of", Attr::intArray({16})}, {"max_contiguous", Attr::intArray({16})}});
  at();
  b.create1(OpKind::ConvertLayout, {x}, blocked1(4).apply(x->type()), {{"smem_bytes", Attr::integer(0)}});
  at();
  b.create(OpKind::Barrier, {}, {});
  at();
  // Shared buffers and asynchronous copies.
  Type buffer = Type::sharedBuffer(2, {4}, f32, std::make_shared<const Attr>(Layout::shared(1, 1, 1, {0}).toAttr()));
  Value* buf = b.create1(OpKind::LocalAlloc, {}, buffer);
  at();
  Value* stage = b.constantInt(1, i32);
  at();
  Value* copy = b.create1(OpKind::AsyncCopy, {b.splat(pf, {4}), buf, stage, b.constantBool(true, Type::tile({4}, Type::i1()))},
                          Type::asyncToken());
  at();
  Value* group = b.create1(OpKind::AsyncCommitGroup, {copy}, Type::asyncToken());
  at();
  Value* landed = b.create1(OpKind::AsyncWait, {group}, Type::asyncToken(), {{"pending", Attr::integer(0)}});
  at();
  Value* read = b.create1(OpKind::LocalLoad, {buf, stage, landed}, Type::tile({4}, f32));
  at();
  b.create1(OpKind::LocalStore, {read, buf, stage}, Type::asyncToken());
  at();
  Value* barriers = b.create1(OpKind::MbarrierAlloc, {}, Type::mbarriers(2));
  Type blocks =
      Type::sharedBuffer(2, {16, 32}, f32, std::make_shared<const Attr>(Layout::shared(1, 1, 1, {1, 0}).toAttr()));
  Value* blockBuf = b.create1(OpKind::LocalAlloc, {}, blocks);
  at();
  Value* issued = b.create1(OpKind::AsyncTmaCopy, {desc, pid, n, blockBuf, stage, barriers}, Type::asyncToken());
  at();
  Value* arrived = b.create1(OpKind::MbarrierWait, {barriers, stage, stage, issued}, Type::asyncToken());
  at();
  b.create1(OpKind::LocalLoad, {blockBuf, stage, arrived}, Type::tile({16, 32}, f32));
  at();
  b.create(OpKind::MbarrierArrive, {barriers, stage}, {});
  at();
  Op* roles = b.create(OpKind::WarpSpecialize, {}, {},
                       {{"producer_warps", Attr::integer(4)}, {"producer_registers", Attr::integer(40)},
                        {"consumer_registers", Attr::integer(232)}, {"consumer_groups", Attr::integer(2)}});
  Builder(roles->region(0), nullptr).create(OpKind::Yield, {}, {});
  Builder consumers(roles->region(1), nullptr);
  consumers.create1(OpKind::ConsumerGroup, {}, Type::i32());
  consumers.create(OpKind::TurnWait, {}, {}, {{"groups", Attr::integer(2)}, {"only_group", Attr::integer(0)},
                                              {"sequence", Attr::integer(1)}});
  consumers.create(OpKind::TurnPass, {}, {}, {{"groups", Attr::integer(2)}});
  consumers.create(OpKind::Yield, {}, {});
  at();
  b.ret();

  std::set<OpKind> used;
  fn.walk([&](Op* op) { used.insert(op->kind()); });
  for (int k = 0; k < numOpKinds(); ++k)
    EXPECT_TRUE(used.count(static_cast<OpKind>(k))) << "op kind never used: " << opName(static_cast<OpKind>(k));

  std::vector<Error> errors = verifyAll(fn);
  EXPECT_TRUE(errors.empty()) << messages(errors);
  EXPECT_NO_THROW(verify(fn));
}

// Corner cases docs/IR.md allows, so that the verifier is not stricter than the spec.
TEST(VerifierAccepts, SpecCornerCases) {
  Kernel k;
  Builder& b = k.b;
  b.load(k.pf);                       // scalar load, no mask
  b.load(k.pf4, k.m4);                // mask without other
  b.cmp("eq", k.pf, k.pf);            // pointers compare as addresses
  b.cmp("ne", k.yes, k.yes);          // i1 compares
  b.binary(OpKind::Xor, k.m4, k.m4);  // i1 bitwise
  b.unary(OpKind::Not, k.yes);
  b.select(k.yes, k.x, k.one);  // scalar condition with scalar values
  b.select(k.m4, k.q4, k.q4);   // fp8 may be selected
  b.join(k.x, k.one);           // scalars join into tile<2xf32>
  b.split(b.join(k.x, k.one));  // ... and split back to scalars
  b.expandDims(k.x, 0);         // rank 0 -> tile<1xf32>
  b.cast(k.pf, i64);            // pointer <-> i64/u64
  b.cast(k.n64, Type::ptr(f16));
  b.cast(k.pf4, Type::ptr(i8));         // pointer -> pointer
  b.cast(k.pf4, i1);                    // anything -> i1
  b.cast(k.q4, f32);                    // fp8 casts
  b.bitcast(k.pf, S(ScalarKind::U64));  // pointers are 64-bit for bitcast
  b.bitcast(k.q4, i8);
  b.store(k.p84, k.q4, k.m4);  // fp8 storage
  b.load(k.p84);
  Value* a8 = b.cast(b.constantFloat(1.0, T({16, 32}, f32)), f8);
  Value* b8 = b.cast(b.constantFloat(1.0, T({32, 16}, f32)), f8);
  b.dot(a8, b8, b.constantFloat(0.0, T({16, 16}, f32)));  // fp8 dot inputs
  b.dot(b.constantInt(1, T({16, 16}, i8)), b.constantInt(1, T({16, 16}, i8)), b.constantInt(0, T({16, 16}, i32)));
  b.dot(b.constantFloat(1.0, T({16, 16}, f16)), b.constantFloat(1.0, T({16, 16}, f16)),
        b.constantFloat(0.0, T({16, 16}, f16)), "tf32");  // f16 accumulation
  b.atomicRMW("xchg", b.cast(k.pf4, Type::ptr(f16)), b.constantFloat(1.0, T({4}, f16)));
  b.atomicRMW("max", k.pf, k.x, nullptr, "relaxed", "cta");
  b.atomicCAS(k.pf4, k.f4, k.f4, "acquire", "sys");
  b.hint(k.n, {{"multiple_of", Attr::integer(8)}});                          // scalars take an int
  b.constantBool(true, i32);                                                 // bool value for an int type
  b.reduce({k.f4, k.i4}, 0, [](Builder& ib, const std::vector<Value*>& a) {  // two inputs, two results
    return std::vector<Value*>{ib.binary(OpKind::Add, a[0], a[2]), ib.binary(OpKind::Max, a[1], a[3])};
  });
  Op* wide = b.forOp(k.n64, k.n64, k.n64, {});  // i64 bounds, nothing carried
  Builder(wide->region(0)).yield({});
  Op* outer = k.loop({k.f4}, [&](Op* o) {      // nested regions use outer values
    Op* inner = b.ifOp(k.yes, {T({4}, f32)});  // k.b inserts into the loop body while `body` runs
    Builder(inner->region(0)).yield({Builder(inner->region(0)).binary(OpKind::Add, o->region(0)->argument(1), k.f4)});
    Builder(inner->region(1)).yield({k.f4});
    return std::vector<Value*>{inner->result(0)};
  });
  b.binary(OpKind::Add, outer->result(0), k.f4);
  // Layout encodings: element-wise ops on identically laid-out tiles; shape-changing ops may drop or change
  // the encoding (the layout passes give reduce results slice layouts).
  Value* laid = b.create1(OpKind::ConvertLayout, {k.f4}, blocked1(1).apply(k.f4->type()));
  Value* sum = b.binary(OpKind::Add, laid, laid);
  b.cmp("lt", laid, sum);
  b.reduce({sum}, 0, [](Builder& ib, const std::vector<Value*>& a) {
    return std::vector<Value*>{ib.binary(OpKind::Add, a[0], a[1])};
  });
  b.create1(OpKind::ConvertLayout, {sum}, blocked1(2).apply(k.f4->type()),
            {{"smem_offset", Attr::integer(256)}, {"smem_bytes", Attr::integer(64)}});
  b.create1(OpKind::ConvertLayout, {sum}, k.f4->type());
  b.create(OpKind::Barrier, {}, {});
  k.finish();
  std::vector<Error> errors = verifyAll(*k.fn);
  EXPECT_TRUE(errors.empty()) << messages(errors);
}

// ---------------------------------------------------------------- rejections (table-driven)

struct Rejection {
  std::string name;
  std::string expected;               // substring of the message, starting with the op's quoted name
  std::function<Op*(Kernel&)> build;  // builds the ill-formed op (and what it needs); returns it
};

void PrintTo(const Rejection& r, std::ostream* os) { *os << r.name; }

std::vector<Rejection> rejections() {
  using K = OpKind;
  return {
      // ---- structure: counts
      {"AddThreeOperands", "'add' expects 2 operands, got 3",
       [](Kernel& k) {
         return k.op(K::Add, {k.f4, k.f4, k.f4}, {T({4}, f32)});
       }},
      {"AddTwoResults", "'add' expects 1 result, got 2",
       [](Kernel& k) {
         return k.op(K::Add, {k.f4, k.f4}, {T({4}, f32), T({4}, f32)});
       }},
      {"LoadFourOperands", "'load' expects 1 to 3 operands, got 4",
       [](Kernel& k) {
         return k.op(K::Load, {k.pf4, k.m4, k.f4, k.f4}, {T({4}, f32)});
       }},
      {"StoreOneOperand", "'store' expects 2 to 3 operands, got 1",
       [](Kernel& k) { return k.op(K::Store, {k.pf4}, {}); }},
      {"AtomicRmwOneOperand", "'atomic_rmw' expects 2 to 3 operands, got 1",
       [](Kernel& k) { return k.op(K::AtomicRMW, {k.pf4}, {T({4}, f32)}, rmwAttrs()); }},
      {"DeviceAssertWithResult", "'device_assert' expects 0 results, got 1",
       [](Kernel& k) {
         return k.op(K::DeviceAssert, {k.yes}, {i1}, {{"msg", Attr::string("m")}});
       }},
      {"ReduceWithoutInputs", "'reduce' expects at least one input, got none",
       [](Kernel& k) {
         Op* o = k.op(K::Reduce, {}, {}, axisAttr(0));
         k.inRegion(o, 0, [&] { k.b.yield({}); });
         return o;
       }},
      {"ReduceResultCount", "'reduce' expects one result per input (2), got 1",
       [](Kernel& k) {
         return k.combineOp(K::Reduce, {k.f4, k.f4}, {f32}, axisAttr(0));
       }},
      {"ForTooFewOperands", "'for' expects at least 3 operands (lower bound, upper bound, step), got 2",
       [](Kernel& k) {
         Op* o = k.op(K::For, {k.c0, k.c16}, {});
         k.inRegion(o, 0, [&] { k.b.yield({}); });
         return o;
       }},
      {"ForResultCount", "'for' expects one result per carried value (1), got 0",
       [](Kernel& k) {
         Op* o = k.op(K::For, {k.c0, k.c16, k.c1, k.one}, {});
         k.inRegion(o, 0, [&] { k.b.yield({}); });
         return o;
       }},
      {"WhileResultCount", "'while' expects one result per carried value (1), got 2",
       [](Kernel& k) {
         Op* o = k.op(K::While, {k.c0}, {i32, i32});
         k.inRegion(o, 0, [&] { k.b.yield({k.yes}); });
         k.inRegion(o, 1, [&] { k.b.yield({k.c0}); });
         return o;
       }},

      // ---- structure: terminators and yields
      {"ReturnInTheMiddle", "'return' is a terminator and must be the last op of its block",
       [](Kernel& k) {
         Op* r = k.b.ret();
         k.b.constantInt(5, i32);
         return r;
       }},
      {"ReturnInsideIf", "'return' may only terminate a function body, not a region of 'if'",
       [](Kernel& k) {
         Op* branch = k.b.ifOp(k.yes, {});
         Op* r = nullptr;
         k.inRegion(branch, 0, [&] { r = k.b.ret(); });
         k.inRegion(branch, 1, [&] { k.b.yield({}); });
         return r;
       }},
      {"YieldEndsFunctionBody", "'yield' may only terminate a region of 'for', 'if', 'while', 'reduce' or 'scan'",
       [](Kernel& k) { return k.b.yield({}); }},
      {"YieldInTheMiddleOfARegion", "'yield' is a terminator and must be the last op of its block",
       [](Kernel& k) {
         Op* early = nullptr;
         k.loop({k.one}, [&](Op* o) {
           early = k.b.yield({o->region(0)->argument(1)});
           return std::vector<Value*>{k.b.binary(K::Add, o->region(0)->argument(1), k.one)};
         });
         return early;
       }},
      {"IfElseWithoutYield", "'if' region #1 must end with 'yield'",
       [](Kernel& k) {
         Op* branch = k.b.ifOp(k.yes, {});
         k.inRegion(branch, 0, [&] { k.b.yield({}); });
         k.inRegion(branch, 1, [&] { k.b.constantInt(1, i32); });
         return branch;
       }},
      {"ForYieldsWrongType", "'yield' in region #0 of 'for' must yield the carried types (f32), got (i32)",
       [](Kernel& k) {
         Op* y = nullptr;
         Op* o = k.b.forOp(k.c0, k.c16, k.c1, {k.one});
         k.inRegion(o, 0, [&] { y = k.b.yield({o->region(0)->argument(0)}); });
         return y;
       }},
      {"IfYieldsTooFew", "'yield' in region #0 of 'if' must yield the result types (f32), got ()",
       [](Kernel& k) {
         Op* y = nullptr;
         Op* branch = k.b.ifOp(k.yes, {f32});
         k.inRegion(branch, 0, [&] { y = k.b.yield({}); });
         k.inRegion(branch, 1, [&] { k.b.yield({k.one}); });
         return y;
       }},
      {"WhileBeforeYieldsNonBool", "'yield' in region #0 of 'while' must yield one i1 scalar condition (i1), got (i32)",
       [](Kernel& k) {
         Op* y = nullptr;
         Op* o = k.b.whileOp({k.c0});
         k.inRegion(o, 0, [&] { y = k.b.yield({o->region(0)->argument(0)}); });
         k.inRegion(o, 1, [&] { k.b.yield({o->region(1)->argument(0)}); });
         return y;
       }},
      {"WhileAfterYieldsWrongType", "'yield' in region #1 of 'while' must yield the carried types (i32), got (f32)",
       [](Kernel& k) {
         Op* y = nullptr;
         Op* o = k.b.whileOp({k.c0});
         k.inRegion(o, 0, [&] { k.b.yield({k.yes}); });
         k.inRegion(o, 1, [&] { y = k.b.yield({k.one}); });
         return y;
       }},
      {"ReduceYieldsTooMany",
       "'yield' in region #0 of 'reduce' must yield the combined element types (f32), got (f32, f32)",
       [](Kernel& k) {
         Op* y = nullptr;
         k.b.reduce({k.f4}, 0, [&](Builder& ib, const std::vector<Value*>& a) {
           return std::vector<Value*>{a[0], a[1]};
         });
         y = k.fn->body()->back()->region(0)->back();
         return y;
       }},
      {"ScanYieldsWrongType", "'yield' in region #0 of 'scan' must yield the combined element types (f32), got (i1)",
       [](Kernel& k) {
         Op* o = k.b.scan({k.f4}, 0, false, [&](Builder& ib, const std::vector<Value*>& a) {
           return std::vector<Value*>{ib.cmp("lt", a[0], a[1])};
         });
         return o->region(0)->back();
       }},

      // ---- SSA
      {"UseBeforeDefinition", "'add' operand #0 is used before its definition",
       [](Kernel& k) {
         Value* later = k.b.constantInt(2, i32);
         k.b.setInsertionPoint(later->definingOp());
         Op* use = k.op(K::Add, {later, k.c1}, {i32});
         k.b.setInsertionPointToEnd(k.fn->body());
         return use;
       }},
      {"OpUsesItsOwnResult", "'add' operand #1 is used before its definition",
       [](Kernel& k) {
         Op* o = k.op(K::Add, {k.c1, k.c1}, {i32});
         o->setOperand(1, o->result(0));
         return o;
       }},
      {"RegionValueUsedOutside", "'add' operand #0 is not defined in this block or an enclosing one",
       [](Kernel& k) {
         Value* inner = nullptr;
         k.loop({}, [&](Op* o) {
           inner = k.b.binary(K::Add, o->region(0)->argument(0), k.c1);
           return std::vector<Value*>{};
         });
         return k.op(K::Add, {inner, k.c1}, {i32});
       }},
      {"InductionVariableUsedOutside", "'mul' operand #1 is not defined in this block or an enclosing one",
       [](Kernel& k) {
         Op* o = k.loop({}, [&](Op*) { return std::vector<Value*>{}; });
         return k.op(K::Mul, {k.c1, o->region(0)->argument(0)}, {i32});
       }},
      {"ValueOfAnotherFunction", "'add' operand #1 is not defined in this block or an enclosing one",
       [](Kernel& k) {
         k.other = std::make_unique<Function>("other", std::vector<Type>{i32});
         return k.op(K::Add, {k.c1, k.other->argument(0)}, {i32});
       }},
      {"ReduceRegionUsesOuterValue", "'add' operand #1 is defined outside the enclosing 'reduce' region",
       [](Kernel& k) {
         Op* culprit = nullptr;
         k.b.reduce({k.f4}, 0, [&](Builder& ib, const std::vector<Value*>& a) {
           Value* s = ib.binary(K::Add, a[0], k.one);
           culprit = s->definingOp();
           return std::vector<Value*>{s};
         });
         return culprit;
       }},
      {"ScanRegionUsesOuterValue", "'max' operand #0 is defined outside the enclosing 'scan' region",
       [](Kernel& k) {
         Op* culprit = nullptr;
         k.b.scan({k.i4}, 0, true, [&](Builder& ib, const std::vector<Value*>& a) {
           Value* s = ib.binary(K::Max, k.c16, a[1]);
           culprit = s->definingOp();
           return std::vector<Value*>{s};
         });
         return culprit;
       }},
      {"ForRegionMissesCarriedArgument", "'for' region #0 must take 2 arguments",
       [](Kernel& k) {
         Op* o = k.op(K::For, {k.c0, k.c16, k.c1, k.one}, {f32});
         o->region(0)->addArgument(i32);
         k.inRegion(o, 0, [&] { k.b.yield({k.one}); });
         return o;
       }},
      {"ForInductionVariableType",
       "'for' region #0 must take 2 arguments (the induction variable, then the carried "
       "values) of types (i32, f32), got (i64, f32)",
       [](Kernel& k) {
         Op* o = k.op(K::For, {k.c0, k.c16, k.c1, k.one}, {f32});
         o->region(0)->addArgument(i64);
         Value* carried = o->region(0)->addArgument(f32);
         k.inRegion(o, 0, [&] { k.b.yield({carried}); });
         return o;
       }},
      {"WhileRegionWithoutArguments", "'while' region #0 must take 1 argument",
       [](Kernel& k) {
         Op* o = k.op(K::While, {k.c0}, {i32});
         o->region(1)->addArgument(i32);
         k.inRegion(o, 0, [&] { k.b.yield({k.yes}); });
         k.inRegion(o, 1, [&] { k.b.yield({k.c0}); });
         return o;
       }},
      {"ReduceRegionTileArguments", "'reduce' region #0 must take 2 arguments",
       [](Kernel& k) {
         Op* o = k.op(K::Reduce, {k.f4}, {f32}, axisAttr(0));
         Value* acc = o->region(0)->addArgument(T({4}, f32));
         o->region(0)->addArgument(T({4}, f32));
         k.inRegion(o, 0, [&] { k.b.yield({acc}); });
         return o;
       }},
      {"IfRegionWithArgument", "'if' region #0 must take 0 arguments",
       [](Kernel& k) {
         Op* o = k.b.ifOp(k.yes, {});
         o->region(0)->addArgument(i32);
         k.inRegion(o, 0, [&] { k.b.yield({}); });
         k.inRegion(o, 1, [&] { k.b.yield({}); });
         return o;
       }},

      // ---- types: legality of the types themselves
      {"PointerAddressSpace", "'cast' result #0 has type ptr<f32, 5> in address space 5",
       [](Kernel& k) { return k.b.cast(k.n64, Type::ptr(f32, 5))->definingOp(); }},
      {"EncodingIsNotALayout", "'add' result #0 has type tile<4xf32, 3> whose encoding is not a layout attribute",
       [](Kernel& k) {
         Type encoded = Type::tile({4}, f32, std::make_shared<const Attr>(Attr::integer(3)));
         return k.op(K::Add, {k.f4, k.f4}, {encoded});
       }},
      {"NullResultType", "'add' result #0 has no type",
       [](Kernel& k) {
         return k.op(K::Add, {k.f4, k.f4}, {Type()});
       }},

      // ---- types: fp8 is storage-only
      {"Fp8Add", "'add' cannot operate on fp8 operands (tile<4xf8e4m3>)",
       [](Kernel& k) { return k.b.binary(K::Add, k.q4, k.q4)->definingOp(); }},
      {"Fp8Neg", "'neg' cannot operate on fp8 operands",
       [](Kernel& k) { return k.b.unary(K::Neg, k.q4)->definingOp(); }},
      {"Fp8Exp", "'exp' cannot operate on fp8 operands",
       [](Kernel& k) { return k.b.unary(K::Exp, k.q4)->definingOp(); }},
      {"Fp8Cmp", "'cmp' cannot operate on fp8 operands",
       [](Kernel& k) { return k.b.cmp("lt", k.q4, k.q4)->definingOp(); }},
      {"Fp8Constant", "'constant' cannot produce fp8 (f8e4m3)",
       [](Kernel& k) { return k.b.constantFloat(1.0, f8)->definingOp(); }},
      {"Fp8Atomic", "'atomic_rmw' cannot operate on fp8 values",
       [](Kernel& k) { return k.b.atomicRMW("xchg", k.p84, k.q4)->definingOp(); }},

      // ---- constants, ids, ranges
      {"ConstantFloatForInt", "'constant' attribute 'value' must be an int or bool for integer type i32, got 1.5",
       [](Kernel& k) { return k.b.constantFloat(1.5, i32)->definingOp(); }},
      {"ConstantIntForFloat", "'constant' attribute 'value' must be a float for floating-point type tile<4xf32>, got 1",
       [](Kernel& k) { return k.b.constantInt(1, T({4}, f32))->definingOp(); }},
      {"ConstantPointer", "'constant' cannot produce a pointer (ptr<f32>)",
       [](Kernel& k) { return k.b.constantInt(0, Type::ptr(f32))->definingOp(); }},
      {"ConstantWithoutValue", "'constant' is missing required attribute 'value'",
       [](Kernel& k) { return k.op(K::Constant, {}, {i32}); }},
      {"ProgramIdAxis3", "'program_id' attribute 'axis' must be in 0..2, got 3",
       [](Kernel& k) { return k.b.programId(3)->definingOp(); }},
      {"ProgramIdAxisString", "'program_id' attribute 'axis' must be an int, got \"x\"",
       [](Kernel& k) {
         return k.op(K::ProgramId, {}, {i32}, {{"axis", Attr::string("x")}});
       }},
      {"ProgramIdI64", "'program_id' result must be i32, got i64",
       [](Kernel& k) { return k.op(K::ProgramId, {}, {i64}, axisAttr(0)); }},
      {"NumProgramsWithoutAxis", "'num_programs' is missing required attribute 'axis'",
       [](Kernel& k) { return k.op(K::NumPrograms, {}, {i32}); }},
      {"ArangeNotPowerOfTwo", "'arange' length end - start = 12 must be a positive power of two",
       [](Kernel& k) {
         return k.op(K::Arange, {}, {T({16}, i32)}, {{"start", Attr::integer(0)}, {"end", Attr::integer(12)}});
       }},
      {"ArangeEmpty", "'arange' length end - start = 0 must be a positive power of two",
       [](Kernel& k) {
         return k.op(K::Arange, {}, {T({1}, i32)}, {{"start", Attr::integer(4)}, {"end", Attr::integer(4)}});
       }},
      {"ArangeResultLength", "'arange' result must be tile<8xi32>, got tile<16xi32>",
       [](Kernel& k) {
         return k.op(K::Arange, {}, {T({16}, i32)}, {{"start", Attr::integer(8)}, {"end", Attr::integer(16)}});
       }},
      {"ArangeResultElement", "'arange' result must be tile<8xi32>, got tile<8xi64>",
       [](Kernel& k) {
         return k.op(K::Arange, {}, {T({8}, i64)}, {{"start", Attr::integer(0)}, {"end", Attr::integer(8)}});
       }},
      {"ArangeWithoutEnd", "'arange' is missing required attribute 'end'",
       [](Kernel& k) {
         return k.op(K::Arange, {}, {T({8}, i32)}, {{"start", Attr::integer(0)}});
       }},

      // ---- shapes
      {"SplatOfTile", "'splat' operand must be a scalar, got tile<4xf32>",
       [](Kernel& k) {
         return k.op(K::Splat, {k.f4}, {T({4, 4}, f32)});
       }},
      {"SplatElement", "'splat' result element type must be f32, got tile<4xi32>",
       [](Kernel& k) { return k.op(K::Splat, {k.x}, {T({4}, i32)}); }},
      {"BroadcastIncompatible", "'broadcast' cannot broadcast tile<4xf32> to tile<8xf32>: dimension 0",
       [](Kernel& k) { return k.b.broadcast(k.f4, {8})->definingOp(); }},
      {"BroadcastChangesRank", "'broadcast' result must have the operand's element type and rank 1, got tile<4x4xf32>",
       [](Kernel& k) {
         return k.b.broadcast(k.f4, {4, 4})->definingOp();
       }},
      {"BroadcastScalar", "'broadcast' operand must be a tile, got f32",
       [](Kernel& k) { return k.op(K::Broadcast, {k.x}, {T({4}, f32)}); }},
      {"ExpandDimsAxis", "'expand_dims' attribute 'axis' must be in 0..1, got 2",
       [](Kernel& k) {
         return k.op(K::ExpandDims, {k.f4}, {T({4, 1}, f32)}, axisAttr(2));
       }},
      {"ExpandDimsResult", "'expand_dims' result must be tile<1x4xf32>, got tile<4x1xf32>",
       [](Kernel& k) {
         return k.op(K::ExpandDims, {k.f4}, {T({4, 1}, f32)}, axisAttr(0));
       }},
      {"ReshapeElementCount", "'reshape' cannot reshape tile<4xf32> (4 elements) to tile<2x4xf32> (8 elements)",
       [](Kernel& k) {
         return k.b.reshape(k.f4, {2, 4})->definingOp();
       }},
      {"ReshapeElementType", "'reshape' result element type must be f32, got tile<2x2xi32>",
       [](Kernel& k) {
         return k.op(K::Reshape, {k.f4}, {T({2, 2}, i32)});
       }},
      {"TransNotPermutation", "'trans' attribute 'perm' [0, 0] is not a permutation of the 2 dimensions",
       [](Kernel& k) {
         Value* m = k.b.constantFloat(1.0, T({2, 4}, f32));
         return k.op(K::Trans, {m}, {T({2, 2}, f32)}, {{"perm", Attr::intArray({0, 0})}});
       }},
      {"TransResult", "'trans' result must be tile<4x2xf32>, got tile<2x4xf32>",
       [](Kernel& k) {
         Value* m = k.b.constantFloat(1.0, T({2, 4}, f32));
         return k.op(K::Trans, {m}, {T({2, 4}, f32)}, {{"perm", Attr::intArray({1, 0})}});
       }},
      {"TransWithoutPerm", "'trans' is missing required attribute 'perm'",
       [](Kernel& k) { return k.op(K::Trans, {k.f4}, {T({4}, f32)}); }},
      {"CatOperandTypes", "'cat' operands must have the same type, got tile<4xf32> and tile<4xi32>",
       [](Kernel& k) {
         return k.op(K::Cat, {k.f4, k.i4}, {T({8}, f32)});
       }},
      {"CatResult", "'cat' result must be tile<8xf32>, got tile<4xf32>",
       [](Kernel& k) {
         return k.op(K::Cat, {k.f4, k.f4}, {T({4}, f32)});
       }},
      {"JoinResult", "'join' result must be tile<4x2xf32>, got tile<2x4xf32>",
       [](Kernel& k) {
         return k.op(K::Join, {k.f4, k.f4}, {T({2, 4}, f32)});
       }},
      {"SplitLastDimensionNot2", "'split' operand's last dimension must be 2, got tile<4xf32>",
       [](Kernel& k) {
         return k.op(K::Split, {k.f4}, {T({2}, f32), T({2}, f32)});
       }},
      {"SplitSecondResult", "'split' result #1 must be tile<4xf32>, got tile<4xi32>",
       [](Kernel& k) {
         Value* pairs = k.b.join(k.f4, k.f4);
         return k.op(K::Split, {pairs}, {T({4}, f32), T({4}, i32)});
       }},

      // ---- element-wise
      {"AddOperandTypes", "'add' operands must have the same type, got tile<4xf32> and tile<4xi32>",
       [](Kernel& k) {
         return k.op(K::Add, {k.f4, k.i4}, {T({4}, f32)});
       }},
      {"AddResultType", "'add' result type must be tile<4xf32> (the operands'), got tile<4xi32>",
       [](Kernel& k) {
         return k.op(K::Add, {k.f4, k.f4}, {T({4}, i32)});
       }},
      {"AddOnBool", "'add' requires integer or floating-point (not i1) operands, got tile<4xi1>",
       [](Kernel& k) { return k.b.binary(K::Add, k.m4, k.m4)->definingOp(); }},
      {"SubOnPointers", "'sub' requires integer or floating-point (not i1) operands, got tile<4xptr<f32>>",
       [](Kernel& k) { return k.b.binary(K::Sub, k.pf4, k.pf4)->definingOp(); }},
      {"AndOnFloat", "'and' requires integer or i1 operands, got tile<4xf32>",
       [](Kernel& k) { return k.b.binary(K::And, k.f4, k.f4)->definingOp(); }},
      {"NotOnFloat", "'not' requires integer or i1 operands, got f32",
       [](Kernel& k) { return k.b.unary(K::Not, k.x)->definingOp(); }},
      {"ShlOnBool", "'shl' requires integer (not i1) operands, got tile<4xi1>",
       [](Kernel& k) { return k.b.binary(K::Shl, k.m4, k.m4)->definingOp(); }},
      {"UMulHiOnI16", "'umulhi' requires i32, i64, u32 or u64 operands, got i16",
       [](Kernel& k) {
         Value* h = k.b.constantInt(7, S(ScalarKind::I16));
         return k.b.binary(K::UMulHi, h, h)->definingOp();
       }},
      {"ExpOnInt", "'exp' requires floating-point operands, got tile<4xi32>",
       [](Kernel& k) { return k.b.unary(K::Exp, k.i4)->definingOp(); }},
      {"FmaMixedOperands", "'fma' operands must have the same type, got tile<4xf32> and f32",
       [](Kernel& k) {
         return k.op(K::Fma, {k.f4, k.f4, k.x}, {T({4}, f32)});
       }},
      {"CmpBadPredicate",
       "'cmp' attribute 'pred' must be one of \"eq\", \"ne\", \"lt\", \"le\", \"gt\", \"ge\", got \"lte\"",
       [](Kernel& k) { return k.b.cmp("lte", k.i4, k.i4)->definingOp(); }},
      {"CmpWithoutPredicate", "'cmp' is missing required attribute 'pred'",
       [](Kernel& k) {
         return k.op(K::Cmp, {k.i4, k.i4}, {T({4}, i1)});
       }},
      {"CmpResultNotBool", "'cmp' result must be tile<4xi1>, got tile<4xi32>",
       [](Kernel& k) {
         return k.op(K::Cmp, {k.i4, k.i4}, {T({4}, i32)}, {{"pred", Attr::string("eq")}});
       }},
      {"SelectScalarConditionOnTiles", "'select' condition must be tile<4xi1> (i1 with the values' shape), got i1",
       [](Kernel& k) { return k.b.select(k.yes, k.f4, k.f4)->definingOp(); }},
      {"SelectIntCondition", "'select' condition must be tile<4xi1> (i1 with the values' shape), got tile<4xi32>",
       [](Kernel& k) { return k.b.select(k.i4, k.f4, k.f4)->definingOp(); }},
      {"SelectMixedValues", "'select' operands must have the same type, got tile<4xf32> and tile<4xi32>",
       [](Kernel& k) { return k.b.select(k.m4, k.f4, k.i4)->definingOp(); }},

      // ---- conversions
      {"CastChangesShape", "'cast' result must keep the operand's shape [4], got tile<8xi32>",
       [](Kernel& k) { return k.op(K::Cast, {k.f4}, {T({8}, i32)}); }},
      {"CastFloatToPointer", "'cast' cannot cast f32 to pointer ptr<f32>",
       [](Kernel& k) { return k.b.cast(k.x, Type::ptr(f32))->definingOp(); }},
      {"CastPointerToI32", "'cast' cannot cast pointer ptr<f32> to i32",
       [](Kernel& k) { return k.b.cast(k.pf, i32)->definingOp(); }},
      {"BitcastWidths", "'bitcast' requires equal bit widths, got f32 (32 bits) and i64 (64 bits)",
       [](Kernel& k) { return k.b.bitcast(k.x, i64)->definingOp(); }},
      {"BitcastToBool", "'bitcast' cannot bitcast to or from i1",
       [](Kernel& k) { return k.b.bitcast(k.q4, i1)->definingOp(); }},
      {"BitcastChangesShape", "'bitcast' result must keep the operand's shape [4], got i32",
       [](Kernel& k) { return k.op(K::Bitcast, {k.f4}, {i32}); }},
      {"AddPtrOnInt", "'addptr' first operand must be a pointer or tile of pointers, got tile<4xi32>",
       [](Kernel& k) { return k.b.addptr(k.i4, k.i4)->definingOp(); }},
      {"AddPtrFloatOffset", "'addptr' offset must be an integer with the pointer's shape [4], got tile<4xf32>",
       [](Kernel& k) { return k.b.addptr(k.pf4, k.f4)->definingOp(); }},
      {"AddPtrScalarOffsetForTile", "'addptr' offset must be an integer with the pointer's shape [4], got i32",
       [](Kernel& k) { return k.b.addptr(k.pf4, k.n)->definingOp(); }},
      {"AddPtrResult", "'addptr' result type must be tile<4xptr<f32>>, got tile<4xptr<i32>>",
       [](Kernel& k) {
         return k.op(K::AddPtr, {k.pf4, k.i4}, {k.pi4->type()});
       }},

      // ---- memory
      {"LoadFromInt", "'load' first operand must be a pointer or tile of pointers, got tile<4xi32>",
       [](Kernel& k) { return k.op(K::Load, {k.i4}, {T({4}, i32)}); }},
      {"LoadIntMask", "'load' mask must be tile<4xi1>, got tile<4xi32>",
       [](Kernel& k) { return k.b.load(k.pf4, k.i4)->definingOp(); }},
      {"LoadOtherType", "'load' 'other' must be tile<4xf32> (the pointee in the pointer's shape), got tile<4xi32>",
       [](Kernel& k) { return k.b.load(k.pf4, k.m4, k.i4)->definingOp(); }},
      {"LoadResultType", "'load' result must be tile<4xf32>, got tile<4xf16>",
       [](Kernel& k) { return k.op(K::Load, {k.pf4}, {T({4}, f16)}); }},
      {"LoadCacheModifier", "'load' attribute 'cache' must be one of \"ca\", \"cg\", \"cv\", got \"cs\"",
       [](Kernel& k) {
         return k.op(K::Load, {k.pf4}, {T({4}, f32)}, {{"cache", Attr::string("cs")}});
       }},
      {"LoadEvictPolicy", "'load' attribute 'evict' must be one of \"first\", \"last\", got \"normal\"",
       [](Kernel& k) {
         return k.op(K::Load, {k.pf4}, {T({4}, f32)}, {{"evict", Attr::string("normal")}});
       }},
      {"LoadVolatileKind", "'load' attribute 'volatile' must be a bool, got 1",
       [](Kernel& k) {
         return k.op(K::Load, {k.pf4}, {T({4}, f32)}, {{"volatile", Attr::integer(1)}});
       }},
      {"StoreValueType", "'store' value must be tile<4xf32> (the pointee in the pointer's shape), got tile<4xi32>",
       [](Kernel& k) { return k.b.store(k.pf4, k.i4); }},
      {"StoreScalarMaskForTile", "'store' mask must be tile<4xi1>, got i1",
       [](Kernel& k) { return k.b.store(k.pf4, k.f4, k.yes); }},
      {"StoreToFloat", "'store' first operand must be a pointer or tile of pointers, got tile<4xf32>",
       [](Kernel& k) { return k.b.store(k.f4, k.f4); }},
      {"StoreCacheKind", "'store' attribute 'cache' must be a string, got 2",
       [](Kernel& k) {
         return k.op(K::Store, {k.pf4, k.f4}, {}, {{"cache", Attr::integer(2)}});
       }},
      {"AtomicRmwBadKind", "'atomic_rmw' attribute 'kind' must be one of",
       [](Kernel& k) { return k.b.atomicRMW("nand", k.pi4, k.i4)->definingOp(); }},
      {"AtomicRmwBadSem",
       "'atomic_rmw' attribute 'sem' must be one of \"relaxed\", \"acquire\", \"release\", "
       "\"acq_rel\", got \"seq_cst\"",
       [](Kernel& k) { return k.b.atomicRMW("add", k.pi4, k.i4, nullptr, "seq_cst")->definingOp(); }},
      {"AtomicRmwBadScope", "'atomic_rmw' attribute 'scope' must be one of \"cta\", \"gpu\", \"sys\", got \"device\"",
       [](Kernel& k) { return k.b.atomicRMW("add", k.pi4, k.i4, nullptr, "relaxed", "device")->definingOp(); }},
      {"AtomicRmwWithoutSem", "'atomic_rmw' is missing required attribute 'sem'",
       [](Kernel& k) {
         return k.op(K::AtomicRMW, {k.pi4, k.i4}, {T({4}, i32)},
                     {{"kind", Attr::string("add")}, {"scope", Attr::string("gpu")}});
       }},
      {"AtomicRmwAndOnFloat", "'atomic_rmw' kind \"and\" requires integer (not i1) values, got tile<4xf32>",
       [](Kernel& k) { return k.b.atomicRMW("and", k.pf4, k.f4)->definingOp(); }},
      {"AtomicRmwXchgOnI8",
       "'atomic_rmw' kind \"xchg\" requires a 16-, 32- or 64-bit non-pointer value, got tile<4xi8>",
       [](Kernel& k) {
         Value* bytes = k.b.cast(k.pi4, Type::ptr(i8));
         return k.b.atomicRMW("xchg", bytes, k.b.cast(k.i4, i8))->definingOp();
       }},
      {"AtomicRmwValueNotPointee", "'atomic_rmw' value must be tile<4xi32> (the pointee in the pointer's shape)",
       [](Kernel& k) { return k.b.atomicRMW("add", k.pi4, k.f4)->definingOp(); }},
      {"AtomicRmwResultType", "'atomic_rmw' result type must be tile<4xi32> (the value's), got tile<4xi64>",
       [](Kernel& k) {
         return k.op(K::AtomicRMW, {k.pi4, k.i4}, {T({4}, i64)}, rmwAttrs());
       }},
      {"AtomicCasOnI8", "'atomic_cas' requires 16-, 32- or 64-bit integer or floating-point values, got tile<4xi8>",
       [](Kernel& k) {
         Value* bytes = k.b.cast(k.pi4, Type::ptr(i8));
         Value* v = k.b.cast(k.i4, i8);
         return k.b.atomicCAS(bytes, v, v)->definingOp();
       }},
      {"AtomicCasMixedValues",
       "'atomic_cas' compare and new values must have the same type, got tile<4xi32> and "
       "tile<4xf32>",
       [](Kernel& k) { return k.b.atomicCAS(k.pf4, k.i4, k.f4)->definingOp(); }},
      {"AtomicCasWithoutScope", "'atomic_cas' is missing required attribute 'scope'",
       [](Kernel& k) {
         return k.op(K::AtomicCAS, {k.pf4, k.f4, k.f4}, {T({4}, f32)}, {{"sem", Attr::string("relaxed")}});
       }},

      // ---- reductions, scans, dot
      {"ReduceAxisOutOfRange", "'reduce' attribute 'axis' must be in 0..0, got 1",
       [](Kernel& k) { return k.combineOp(K::Reduce, {k.f4}, {f32}, axisAttr(1)); }},
      {"ReduceResultKeepsAxis", "'reduce' result must be f32, got tile<4xf32>",
       [](Kernel& k) { return k.combineOp(K::Reduce, {k.f4}, {T({4}, f32)}, axisAttr(0)); }},
      {"ReduceInputShapesDiffer", "'reduce' inputs must all have the same shape, got tile<4xf32> and tile<8xi32>",
       [](Kernel& k) {
         return k.combineOp(K::Reduce, {k.f4, k.b.arange(0, 8)}, {f32, i32}, axisAttr(0));
       }},
      {"ReduceScalarInput", "'reduce' inputs must be tiles (rank >= 1), got f32",
       [](Kernel& k) { return k.combineOp(K::Reduce, {k.x}, {f32}, axisAttr(0)); }},
      {"ReduceWithoutAxis", "'reduce' is missing required attribute 'axis'",
       [](Kernel& k) { return k.combineOp(K::Reduce, {k.f4}, {f32}, {}); }},
      {"ScanWithoutReverse", "'scan' is missing required attribute 'reverse'",
       [](Kernel& k) { return k.combineOp(K::Scan, {k.f4}, {T({4}, f32)}, axisAttr(0)); }},
      {"ScanResultShape", "'scan' result must be tile<4xf32>, got f32",
       [](Kernel& k) {
         return k.combineOp(K::Scan, {k.f4}, {f32}, {{"axis", Attr::integer(0)}, {"reverse", Attr::boolean(false)}});
       }},
      {"DotInnerDimensions", "'dot' shapes must be [M, K] x [K, N] + [M, N], got [16, 16] x [32, 16] + [16, 16]",
       [](Kernel& k) {
         Value* a = k.b.constantFloat(1.0, T({16, 16}, f16));
         Value* b = k.b.constantFloat(1.0, T({32, 16}, f16));
         return k.b.dot(a, b, k.b.constantFloat(0.0, T({16, 16}, f32)))->definingOp();
       }},
      {"DotRank1", "'dot' operands must be rank-2 tiles",
       [](Kernel& k) { return k.b.dot(k.f4, k.f4, k.f4)->definingOp(); }},
      {"DotMixedInputs", "'dot' a and b must have the same element type (or both be fp8), got tile<16x16xf16> and "
       "tile<16x16xbf16>",
       [](Kernel& k) {
         Value* a = k.b.constantFloat(1.0, T({16, 16}, f16));
         Value* b = k.b.constantFloat(1.0, T({16, 16}, bf16));
         return k.b.dot(a, b, k.b.constantFloat(0.0, T({16, 16}, f32)))->definingOp();
       }},
      {"DotBf16WithF16Accumulator", "'dot' accumulator element type f16 does not match inputs of bf16 (expected f32)",
       [](Kernel& k) {
         Value* a = k.b.constantFloat(1.0, T({16, 16}, bf16));
         return k.b.dot(a, a, k.b.constantFloat(0.0, T({16, 16}, f16)))->definingOp();
       }},
      {"DotI8WithF32Accumulator", "'dot' accumulator element type f32 does not match inputs of i8 (expected i32)",
       [](Kernel& k) {
         Value* a = k.b.constantInt(1, T({16, 16}, i8));
         return k.b.dot(a, a, k.b.constantFloat(0.0, T({16, 16}, f32)))->definingOp();
       }},
      {"DotF64Inputs", "'dot' input element type must be i8, f16, bf16, f32, f8e4m3 or f8e5m2, got f64",
       [](Kernel& k) {
         Value* a = k.b.constantFloat(1.0, T({16, 16}, f64));
         return k.b.dot(a, a, k.b.constantFloat(0.0, T({16, 16}, f64)))->definingOp();
       }},
      {"DotInputPrecision", "'dot' attribute 'input_precision' must be one of \"ieee\", \"tf32\", got \"tf64\"",
       [](Kernel& k) {
         Value* a = k.b.constantFloat(1.0, T({16, 16}, f32));
         return k.b.dot(a, a, a, "tf64")->definingOp();
       }},
      {"DotPendingReadByAdd", "'dot' has pending products, which only another dot's accumulator, a yield or a "
                              "dot_wait may read, but 'add'",
       [](Kernel& k) {
         Value* a = k.b.constantFloat(1.0, T({16, 16}, f16));
         Value* d = k.b.dot(a, a, k.b.constantFloat(0.0, T({16, 16}, f32)));
         d->definingOp()->setAttr("pending", Attr::integer(1));
         k.b.binary(K::Add, d, d);
         return d->definingOp();
       }},
      {"DotPendingNegative", "'dot' attribute 'pending' must be >= 0, got -1",
       [](Kernel& k) {
         Value* a = k.b.constantFloat(1.0, T({16, 16}, f16));
         Value* d = k.b.dot(a, a, k.b.constantFloat(0.0, T({16, 16}, f32)));
         d->definingOp()->setAttr("pending", Attr::integer(-1));
         return d->definingOp();
       }},
      {"DotWaitWithoutPending", "'dot_wait' is missing required attribute 'pending'",
       [](Kernel& k) {
         Value* acc = k.b.constantFloat(0.0, T({16, 16}, f32));
         return k.op(K::DotWait, {acc}, {acc->type()});
       }},
      {"DotWaitOfF16", "'dot_wait' operand #0 must be a tile of f32 or i32 (a dot accumulator), got tile<16x16xf16>",
       [](Kernel& k) {
         Value* acc = k.b.constantFloat(0.0, T({16, 16}, f16));
         return k.op(K::DotWait, {acc}, {acc->type()}, {{"pending", Attr::integer(0)}});
       }},
      {"DotWaitChangesType", "'dot_wait' result #0 must have its operand's type tile<16x16xf32>, got tile<8x16xf32>",
       [](Kernel& k) {
         Value* acc = k.b.constantFloat(0.0, T({16, 16}, f32));
         return k.op(K::DotWait, {acc}, {T({8, 16}, f32)}, {{"pending", Attr::integer(0)}});
       }},
      {"DotWaitOfNothing", "'dot_wait' takes one or more tiles and returns them: got 0 operands and 0 results",
       [](Kernel& k) { return k.op(K::DotWait, {}, {}, {{"pending", Attr::integer(0)}}); }},
      {"DotResultType", "'dot' result must be tile<16x16xf32>, got tile<16x16xf16>",
       [](Kernel& k) {
         Value* a = k.b.constantFloat(1.0, T({16, 16}, f16));
         Value* acc = k.b.constantFloat(0.0, T({16, 16}, f32));
         return k.op(K::Dot, {a, a, acc}, {T({16, 16}, f16)}, {{"input_precision", Attr::string("ieee")}});
       }},

      // ---- control flow
      {"ForUnsignedBounds",
       "'for' lower bound, upper bound and step must be scalars of one signed integer type, got "
       "u32, u32 and u32",
       [](Kernel& k) {
         Value* u = k.b.constantInt(1, u32);
         Op* o = k.b.forOp(u, u, u, {});
         k.inRegion(o, 0, [&] { k.b.yield({}); });
         return o;
       }},
      {"ForMixedBounds",
       "'for' lower bound, upper bound and step must be scalars of one signed integer type, got "
       "i32, i64 and i32",
       [](Kernel& k) {
         Op* o = k.b.forOp(k.c0, k.n64, k.c1, {});
         k.inRegion(o, 0, [&] { k.b.yield({}); });
         return o;
       }},
      {"ForTileBounds", "'for' lower bound, upper bound and step must be scalars of one signed integer type",
       [](Kernel& k) {
         Op* o = k.b.forOp(k.i4, k.i4, k.i4, {});
         k.inRegion(o, 0, [&] { k.b.yield({}); });
         return o;
       }},
      {"ForResultTypeDiffersFromInit", "'for' result #0 must have its initial value's type i32, got f32",
       [](Kernel& k) {
         Op* o = k.op(K::For, {k.c0, k.c16, k.c1, k.c0}, {f32});
         o->region(0)->addArgument(i32);
         Value* carried = o->region(0)->addArgument(f32);
         k.inRegion(o, 0, [&] { k.b.yield({carried}); });
         return o;
       }},
      {"WhileResultTypeDiffersFromInit", "'while' result #0 must have its initial value's type i32, got f32",
       [](Kernel& k) {
         Op* o = k.op(K::While, {k.c0}, {f32});
         o->region(0)->addArgument(i32);
         o->region(1)->addArgument(i32);
         k.inRegion(o, 0, [&] { k.b.yield({k.yes}); });
         k.inRegion(o, 1, [&] { k.b.yield({k.c0}); });
         return o;
       }},
      {"IfConditionI32", "'if' condition must be an i1 scalar, got i32",
       [](Kernel& k) {
         Op* o = k.b.ifOp(k.n, {});
         k.inRegion(o, 0, [&] { k.b.yield({}); });
         k.inRegion(o, 1, [&] { k.b.yield({}); });
         return o;
       }},
      {"IfConditionTile", "'if' condition must be an i1 scalar, got tile<4xi1>",
       [](Kernel& k) {
         Op* o = k.b.ifOp(k.m4, {});
         k.inRegion(o, 0, [&] { k.b.yield({}); });
         k.inRegion(o, 1, [&] { k.b.yield({}); });
         return o;
       }},

      // ---- debugging and hints
      {"DeviceAssertOnFloat", "'device_assert' condition must be i1 (scalar or tile), got f32",
       [](Kernel& k) { return k.b.deviceAssert(k.x, "m"); }},
      {"DeviceAssertWithoutMessage", "'device_assert' is missing required attribute 'msg'",
       [](Kernel& k) { return k.op(K::DeviceAssert, {k.m4}, {}); }},
      {"DebugPrintWithoutPrefix", "'debug_print' is missing required attribute 'prefix'",
       [](Kernel& k) {
         return k.op(K::DebugPrint, {k.f4, k.x}, {});
       }},
      {"DebugPrintPrefixKind", "'debug_print' attribute 'prefix' must be a string, got true",
       [](Kernel& k) {
         return k.op(K::DebugPrint, {k.f4}, {}, {{"prefix", Attr::boolean(true)}});
       }},
      {"HintArrayLength",
       "'hint' attribute 'multiple_of' must be an array of 1 ints (one per dimension of "
       "tile<4xi32>), got [16, 16]",
       [](Kernel& k) {
         return k.b.hint(k.i4, {{"multiple_of", Attr::intArray({16, 16})}})->definingOp();
       }},
      {"HintArrayOfFloats", "'hint' attribute 'max_contiguous' must be an array of 1 ints",
       [](Kernel& k) {
         return k.b.hint(k.i4, {{"max_contiguous", Attr::array({Attr::floating(4.0)})}})->definingOp();
       }},
      {"HintArrayOnScalar", "'hint' attribute 'max_contiguous' must be an int for a scalar, got [4]",
       [](Kernel& k) {
         return k.b.hint(k.n, {{"max_contiguous", Attr::intArray({4})}})->definingOp();
       }},
      {"HintNotPositive", "'hint' attribute 'max_constancy' entries must be positive, got [0]",
       [](Kernel& k) {
         return k.b.hint(k.i4, {{"max_constancy", Attr::intArray({0})}})->definingOp();
       }},
      {"HintResultType", "'hint' result type must be tile<4xi32> (the operand's), got tile<4xf32>",
       [](Kernel& k) { return k.op(K::Hint, {k.i4}, {T({4}, f32)}); }},

      // ---- layouts and synchronization
      {"UnknownLayout",
       "'add' result #0 has type tile<4xf32, #weird{}> whose encoding is not a valid layout: unknown "
       "layout '#weird'",
       [](Kernel& k) {
         Type weird = Type::tile({4}, f32, std::make_shared<const Attr>(Attr::layout("weird", {})));
         return k.op(K::Add, {k.f4, k.f4}, {weird});
       }},
      {"MalformedBlockedLayout", "whose encoding is not a valid layout: blocked layout",
       [](Kernel& k) {
         AttrDict params{{"spt", Attr::intArray({3})},
                         {"tpw", Attr::intArray({32})},
                         {"wpc", Attr::intArray({4})},
                         {"order", Attr::intArray({0})}};
         Type bad = Type::tile({4}, f32, std::make_shared<const Attr>(Attr::layout("blocked", params)));
         return k.op(K::ConvertLayout, {k.f4}, {bad});
       }},
      {"LayoutRankDiffersFromTile", "whose layout has rank 2, not 1",
       [](Kernel& k) {
         Type bad = Type::tile({4}, f32, std::make_shared<const Attr>(blocked2().toAttr()));
         return k.op(K::ConvertLayout, {k.f4}, {bad});
       }},
      {"ElementwiseOperandsInDifferentLayouts", "'add' operands must have the same type, got tile<4xf32, #blocked",
       [](Kernel& k) {
         Value* a = k.b.create1(K::ConvertLayout, {k.f4}, blocked1(1).apply(k.f4->type()));
         Value* b = k.b.create1(K::ConvertLayout, {k.f4}, blocked1(2).apply(k.f4->type()));
         return k.b.binary(K::Add, a, b)->definingOp();
       }},
      {"ConvertLayoutChangesShape",
       "'convert_layout' result must keep the operand's shape and element type "
       "(tile<4xf32>), got tile<8xf32, #blocked",
       [](Kernel& k) { return k.op(K::ConvertLayout, {k.f4}, {blocked1(1).apply(T({8}, f32))}); }},
      {"ConvertLayoutChangesElement",
       "'convert_layout' result must keep the operand's shape and element type "
       "(tile<4xf32>), got tile<4xi32, #blocked",
       [](Kernel& k) { return k.op(K::ConvertLayout, {k.f4}, {blocked1(1).apply(T({4}, i32))}); }},
      {"ConvertLayoutOfScalar", "'convert_layout' operand must be a tile, got f32",
       [](Kernel& k) { return k.op(K::ConvertLayout, {k.x}, {f32}); }},
      {"ConvertLayoutNegativeSmemOffset", "'convert_layout' attribute 'smem_offset' must not be negative, got -16",
       [](Kernel& k) {
         return k.op(K::ConvertLayout, {k.f4}, {blocked1(1).apply(k.f4->type())},
                     {{"smem_offset", Attr::integer(-16)}});
       }},
      {"ConvertLayoutSmemBytesKind", "'convert_layout' attribute 'smem_bytes' must be an int, got \"64\"",
       [](Kernel& k) {
         return k.op(K::ConvertLayout, {k.f4}, {blocked1(1).apply(k.f4->type())}, {{"smem_bytes", Attr::string("64")}});
       }},
      {"ConvertLayoutExchangePadNotAWord", "'convert_layout' attribute 'exchange_pad' must be a multiple of 4 bytes "
                                           "from 0 to 128, got 6",
       [](Kernel& k) {
         return k.op(K::ConvertLayout, {k.f4}, {blocked1(1).apply(k.f4->type())}, {{"exchange_pad", Attr::integer(6)}});
       }},
      {"ConvertLayoutExchangeSwizzleShape", "'convert_layout' attribute 'exchange_swizzle' must be [phases, stride "
                                            "bytes] (powers of two, phases >= 2, stride >= 32) beside an "
                                            "'exchange_pad', got [8, 48]",
       [](Kernel& k) {
         return k.op(K::ConvertLayout, {k.f4}, {blocked1(1).apply(k.f4->type())},
                     {{"exchange_pad", Attr::integer(0)}, {"exchange_swizzle", Attr::intArray({8, 48})}});
       }},
      {"BarrierWithOperand", "'barrier' expects 0 operands, got 1",
       [](Kernel& k) { return k.op(K::Barrier, {k.yes}, {}); }},
  };
}

class VerifierRejects : public ::testing::TestWithParam<Rejection> {};

TEST_P(VerifierRejects, NamesTheOpAtItsLocation) {
  const Rejection& c = GetParam();
  Kernel k;
  Op* culprit = c.build(k);
  ASSERT_NE(culprit, nullptr);
  culprit->setLoc(kBadLoc);
  k.finish();

  std::vector<Error> errors = verifyAll(*k.fn);
  ASSERT_EQ(errors.size(), 1u) << "expected exactly one error:" << messages(errors);
  const Error& e = errors.front();
  EXPECT_EQ(e.message().rfind(std::string("'") + culprit->name() + "' ", 0), 0u) << e.message();
  EXPECT_NE(e.message().find(c.expected), std::string::npos) << "message: " << e.message();
  EXPECT_EQ(e.location(), kBadLoc) << e.what();

  try {
    verify(*k.fn);
    ADD_FAILURE() << "verify() accepted the program";
  } catch (const Error& thrown) {
    EXPECT_EQ(thrown.message(), e.message());
    EXPECT_EQ(thrown.location(), kBadLoc);
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, VerifierRejects, ::testing::ValuesIn(rejections()),
                         [](const ::testing::TestParamInfo<Rejection>& info) { return info.param.name; });

TEST(VerifierRejectsTable, IsLargeAndCoversDistinctRules) {
  std::set<std::string> names, expectations;
  for (const Rejection& r : rejections()) {
    names.insert(r.name);
    expectations.insert(r.expected);
  }
  EXPECT_GE(names.size(), 50u);
  EXPECT_EQ(names.size(), rejections().size()) << "duplicate case names";
  EXPECT_EQ(expectations.size(), rejections().size()) << "two cases expect the same message";
}

// ---------------------------------------------------------------- function- and module-level rules

TEST(VerifierFunction, BodyMustEndWithReturn) {
  Kernel k;
  k.b.binary(OpKind::Add, k.f4, k.f4);  // no return
  std::vector<Error> errors = verifyAll(*k.fn);
  ASSERT_EQ(errors.size(), 1u) << messages(errors);
  EXPECT_NE(errors[0].message().find("function @k body must end with 'return'"), std::string::npos)
      << errors[0].message();
  EXPECT_EQ(errors[0].location(), k.fn->loc());
  EXPECT_THROW(verify(*k.fn), Error);
}

TEST(VerifierFunction, EmptyBodyIsRejected) {
  Function fn("empty", {});
  fn.setLoc({"e.tir", 9, 2});
  std::vector<Error> errors = verifyAll(fn);
  ASSERT_EQ(errors.size(), 1u) << messages(errors);
  EXPECT_NE(errors[0].message().find("function @empty body must end with 'return'"), std::string::npos);
  EXPECT_EQ(errors[0].location(), fn.loc());
}

TEST(VerifierFunction, ArgumentTypeIsChecked) {
  Function fn("shared", {Type::ptr(f32, 7)});
  fn.setLoc({"s.tir", 4, 1});
  Builder(fn.body()).ret();
  std::vector<Error> errors = verifyAll(fn);
  ASSERT_EQ(errors.size(), 1u) << messages(errors);
  EXPECT_NE(errors[0].message().find("function @shared argument #0 has type ptr<f32, 7> in address space 7"),
            std::string::npos)
      << errors[0].message();
  EXPECT_EQ(errors[0].location(), fn.loc());
}

TEST(VerifierModule, VerifiesEveryFunctionAndRejectsDuplicateNames) {
  Module m;
  Function* good = m.addFunction(std::make_unique<Function>("a", std::vector<Type>{}));
  Builder(good->body()).ret();
  EXPECT_NO_THROW(verify(m));

  Function* bad = m.addFunction(std::make_unique<Function>("b", std::vector<Type>{i32}));
  Builder bb(bad->body());
  bb.setLoc(kBadLoc);
  bb.programId(5);
  bb.ret();
  try {
    verify(m);
    ADD_FAILURE() << "module with a bad function verified";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("'program_id' attribute 'axis' must be in 0..2, got 5"), std::string::npos);
    EXPECT_EQ(e.location(), kBadLoc);
  }

  Module dup;
  for (int i = 0; i < 2; ++i) {
    Function* f = dup.addFunction(std::make_unique<Function>("same", std::vector<Type>{}));
    f->setLoc({"d.tir", static_cast<unsigned>(10 + i), 1});
    Builder(f->body()).ret();
  }
  try {
    verify(dup);
    ADD_FAILURE() << "duplicate function names verified";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("duplicate function @same"), std::string::npos);
    EXPECT_EQ(e.location(), (Location{"d.tir", 11, 1}));
  }
}

// ---------------------------------------------------------------- verifyAll vs verify

TEST(VerifierCollect, VerifyAllKeepsGoingAndVerifyThrowsTheFirst) {
  Kernel k;
  k.b.setLoc({"multi.tir", 10, 3});
  k.b.binary(OpKind::Add, k.f4, k.i4);  // operand types differ
  k.b.setLoc({"multi.tir", 11, 3});
  k.b.programId(7);  // axis out of range
  k.b.setLoc({"multi.tir", 12, 3});
  Op* branch = k.b.ifOp(k.n, {});  // condition is not i1
  k.inRegion(branch, 0, [&] { k.b.yield({}); });
  k.inRegion(branch, 1, [&] { k.b.yield({}); });
  k.b.setLoc({"multi.tir", 13, 3});
  k.b.unary(OpKind::Sqrt, k.q4);  // fp8 arithmetic
  k.b.setLoc(kGoodLoc);
  k.finish();

  std::vector<Error> errors = verifyAll(*k.fn);
  ASSERT_EQ(errors.size(), 4u) << messages(errors);
  const char* expected[] = {"'add' operands must have the same type, got tile<4xf32> and tile<4xi32>",
                            "'program_id' attribute 'axis' must be in 0..2, got 7",
                            "'if' condition must be an i1 scalar, got i32", "'sqrt' cannot operate on fp8"};
  for (unsigned i = 0; i < 4; ++i) {
    EXPECT_NE(errors[i].message().find(expected[i]), std::string::npos) << errors[i].message();
    EXPECT_EQ(errors[i].location(), (Location{"multi.tir", 10 + i, 3}));
  }
  try {
    verify(*k.fn);
    ADD_FAILURE() << "verify accepted the program";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), errors[0].message());
    EXPECT_EQ(std::string(e.what()), "multi.tir:10:3: error: " + errors[0].message());
  }
}

// A missing required attribute is the verifier's own error, not Op::attr's exception escaping.
TEST(VerifierCollect, MissingAttributesDoNotEscapeAsExceptions) {
  Kernel k;
  for (OpKind kind : {OpKind::ProgramId, OpKind::NumPrograms}) k.op(kind, {}, {i32});
  k.op(OpKind::ExpandDims, {k.f4}, {T({1, 4}, f32)});
  k.op(OpKind::AtomicCAS, {k.pf4, k.f4, k.f4}, {T({4}, f32)});
  k.finish();
  std::vector<Error> errors;
  ASSERT_NO_THROW(errors = verifyAll(*k.fn));
  ASSERT_EQ(errors.size(), 4u) << messages(errors);
  EXPECT_NE(errors[0].message().find("'program_id' is missing required attribute 'axis'"), std::string::npos);
  EXPECT_NE(errors[1].message().find("'num_programs' is missing required attribute 'axis'"), std::string::npos);
  EXPECT_NE(errors[2].message().find("'expand_dims' is missing required attribute 'axis'"), std::string::npos);
  EXPECT_NE(errors[3].message().find("'atomic_cas' is missing required attribute 'sem'"), std::string::npos);
}

// A for loop whose region uses a value defined after the loop: not in scope, even though it is in an
// enclosing block.
TEST(VerifierSSA, RegionCannotSeeLaterValuesOfEnclosingBlock) {
  Kernel k;
  Op* loop = k.b.forOp(k.c0, k.c16, k.c1, {});
  Value* later = k.b.constantInt(9, i32);
  Builder inner(loop->region(0));
  inner.setLoc(kBadLoc);
  inner.binary(OpKind::Add, loop->region(0)->argument(0), later);
  inner.setLoc(kGoodLoc);
  inner.yield({});
  k.finish();
  std::vector<Error> errors = verifyAll(*k.fn);
  ASSERT_EQ(errors.size(), 1u) << messages(errors);
  EXPECT_NE(errors[0].message().find("'add' operand #1 is used before its definition"), std::string::npos)
      << errors[0].message();
  EXPECT_EQ(errors[0].location(), kBadLoc);
}

// Ops.def's element column is what the verifier enforces: each op with the kSameType trait accepts exactly the
// element types of its column, checked here on a scalar of every kind and on a pointer.
TEST(VerifierElementTypes, SameTypeOpsAcceptExactlyTheirColumn) {
  std::vector<Type> types = {Type::ptr(f32)};
  for (unsigned kind = 0; kind <= static_cast<unsigned>(ScalarKind::F8E5M2); ++kind)
    types.push_back(S(static_cast<ScalarKind>(kind)));
  int checked = 0;
  for (int k = 0; k < numOpKinds(); ++k) {
    const OpInfo& info = opInfo(static_cast<OpKind>(k));
    if (!info.has(kSameType)) continue;
    for (Type t : types) {
      Function fn("k", {t});
      Builder b(fn.body());
      b.create(info.kind, std::vector<Value*>(info.numOperands, fn.argument(0)), {t});
      b.ret();
      std::vector<Error> errors = verifyAll(fn);
      EXPECT_EQ(errors.empty(), acceptsElement(info.elements, t)) << info.name << " on " << t.str() << messages(errors);
      if (!errors.empty()) {
        EXPECT_NE(errors[0].message().find(std::string("'") + info.name + "' "), std::string::npos) << messages(errors);
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(VerifierElementTypes, DescribesSetsInWords) {
  EXPECT_EQ(describeElements(kNumericElements), "integer or floating-point (not i1)");
  EXPECT_EQ(describeElements(kIntElements | kBoolElements), "integer or i1");
  EXPECT_EQ(describeElements(kIntElements), "integer (not i1)");
  EXPECT_EQ(describeElements(kFloatElements | kPointerElements), "floating-point or pointer");
  EXPECT_EQ(describeElements(elementsOf(ScalarKind::I32, ScalarKind::U64, ScalarKind::F8E5M2)), "i32, u64 or f8e5m2");
}

}  // namespace
