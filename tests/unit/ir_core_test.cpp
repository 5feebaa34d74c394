// The IR core: type interning and validation, attributes, use lists, cloning.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/Builder.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

using namespace tessera;
using namespace tessera::ir;

TEST(Types, AreInternedAndClassified) {
  Type a = Type::tile({4, 8}, Type::f32());
  EXPECT_EQ(a, Type::tile({4, 8}, Type::scalar(ScalarKind::F32)));
  EXPECT_NE(a, Type::tile({8, 4}, Type::f32()));
  EXPECT_EQ(a.str(), "tile<4x8xf32>");
  EXPECT_EQ(a.numElements(), 32);
  EXPECT_EQ(a.rank(), 2);
  EXPECT_TRUE(a.isFloat());
  EXPECT_EQ(Type::tile({}, Type::i32()), Type::i32());  // rank 0 is the element type itself
  Type p = Type::ptr(Type::f16(), kSharedAddrSpace);
  EXPECT_EQ(p.str(), "ptr<f16, 3>");
  EXPECT_TRUE(Type::tile({16}, p).isPtr());
  EXPECT_EQ(Type::tile({16}, p).pointee(), Type::f16());
  EXPECT_TRUE(Type::scalar(ScalarKind::U8).isUnsigned());
  EXPECT_TRUE(Type::scalar(ScalarKind::I8).isSigned());
  EXPECT_TRUE(Type::i1().isUnsigned());
  EXPECT_TRUE(Type::scalar(ScalarKind::F8E5M2).isFP8());
  EXPECT_FALSE(Type::scalar(ScalarKind::F8E5M2).isArithmeticFloat());
}

TEST(Types, RejectIllegalShapes) {
  EXPECT_TRUE(Type::checkTileShape({3}).has_value());
  EXPECT_TRUE(Type::checkTileShape({0}).has_value());
  EXPECT_TRUE(Type::checkTileShape({2, 2, 2, 2}).has_value());              // rank 4
  EXPECT_TRUE(Type::checkTileShape({1 << 11, 1 << 10}).has_value());        // 2^21 elements
  EXPECT_TRUE(Type::checkTileShape({2, int64_t(1) << 62}).has_value());     // would overflow int64 if multiplied
  EXPECT_FALSE(Type::checkTileShape({1 << 10, 1 << 10}).has_value());       // exactly 2^20
  EXPECT_THROW(Type::tile({6}, Type::f32()), Error);
}

TEST(Attributes, PrintAndCompare) {
  EXPECT_EQ(Attr::floating(1.0).str(), "1.0");
  EXPECT_EQ(Attr::floating(0.1).str(), "0.1");
  EXPECT_EQ(Attr::floating(-INFINITY).str(), "-inf");
  EXPECT_EQ(Attr::floating(NAN), Attr::floating(NAN));  // bitwise equality
  // A NaN's sign survives the round trip (layout_fuzzer found "-nan" printed as "nan", which parses to another NaN).
  EXPECT_EQ(Attr::floating(std::copysign(NAN, -1.0)).str(), "-nan");
  EXPECT_EQ(Attr::floating(std::copysign(NAN, 1.0)).str(), "nan");
  EXPECT_NE(Attr::floating(std::copysign(NAN, -1.0)), Attr::floating(NAN));
  EXPECT_NE(Attr::floating(0.0), Attr::floating(-0.0));
  EXPECT_EQ(Attr::intArray({1, 0}).str(), "[1, 0]");
  EXPECT_EQ(Attr::string("a\"b\n").str(), "\"a\\\"b\\n\"");
  Attr layout = Attr::layout("blocked", {{"order", Attr::intArray({0})}, {"spt", Attr::intArray({4})}});
  EXPECT_EQ(layout.str(), "#blocked{order = [0], spt = [4]}");
  EXPECT_EQ(Type::tile({16}, Type::f32(), std::make_shared<Attr>(layout)).str(), "tile<16xf32, #blocked{order = [0], spt = [4]}>");
}

TEST(IRStructure, UseListsFollowEdits) {
  Function f("k", {Type::i32(), Type::i32()});
  Builder b(f.body());
  Value* x = f.argument(0);
  Value* y = f.argument(1);
  Value* s = b.binary(OpKind::Add, x, x);
  Value* t = b.binary(OpKind::Mul, s, y);
  b.ret();
  EXPECT_EQ(x->uses().size(), 2u);
  EXPECT_EQ(s->uses().size(), 1u);
  s->replaceAllUsesWith(y);
  EXPECT_FALSE(s->hasUses());
  EXPECT_EQ(y->uses().size(), 2u);
  EXPECT_EQ(t->definingOp()->operand(0), y);
  f.body()->erase(s->definingOp());
  EXPECT_TRUE(x->uses().empty());
  verify(f);
}

TEST(IRStructure, NestingFollowsRegionsAtAnyDepth) {
  Function f("k", {Type::i32()});
  Builder b(f.body());
  Value* c = b.constantInt(1, Type::i32());
  Op* outer = b.forOp(b.constantInt(0, Type::i32()), f.argument(0), c, {});
  Builder inOuter(outer->region(0));
  Op* inner = inOuter.forOp(c, f.argument(0), c, {});
  Builder inInner(inner->region(0));
  Op* add = inInner.binary(OpKind::Add, c, c)->definingOp();
  inInner.yield({});
  inOuter.yield({});
  b.ret();
  verify(f);
  EXPECT_TRUE(add->isNestedIn(*inner));
  EXPECT_TRUE(add->isNestedIn(*outer));
  EXPECT_TRUE(inner->isNestedIn(*outer));
  EXPECT_FALSE(outer->isNestedIn(*inner));
  EXPECT_FALSE(outer->isNestedIn(*outer));
  EXPECT_FALSE(c->definingOp()->isNestedIn(*outer));
}

TEST(IRStructure, CloneIsDeepAndIndependent) {
  Function f("k", {Type::i32()});
  Builder b(f.body());
  Value* c = b.constantInt(1, Type::i32());
  Op* loop = b.forOp(b.constantInt(0, Type::i32()), f.argument(0), c, {c});
  Builder inner(loop->region(0));
  inner.yield({inner.binary(OpKind::Add, loop->region(0)->argument(1), c)});
  b.ret();
  verify(f);
  auto copy = f.clone();
  EXPECT_EQ(print(*copy), print(f));
  // Editing the copy leaves the original alone.
  copy->body()->front()->setAttr("value", Attr::integer(5));
  EXPECT_NE(print(*copy), print(f));
  EXPECT_EQ(loop->region(0)->front()->operand(1), c);
}
