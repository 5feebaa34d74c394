// The lowering's IRBuilder folder (backends/common/IdentityFolder.h): integer identities with a constant operand
// fold to the other operand as they are built; nothing else is folded beyond LLVM's constant folding.
#include <gtest/gtest.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/common/LoweringHooks.h"

namespace tessera::backends {
namespace {

struct Builder {
  llvm::LLVMContext ctx;
  llvm::Module module{"m", ctx};
  llvm::Function* f = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {llvm::Type::getInt32Ty(ctx), llvm::Type::getFloatTy(ctx)},
                              false),
      llvm::GlobalValue::ExternalLinkage, "f", module);
  IRBuilder b{llvm::BasicBlock::Create(ctx, "entry", f)};
  llvm::Value* x = f->getArg(0);
  llvm::Value* y = f->getArg(1);
  llvm::Value* i32(int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); }
  size_t instructions() const { return f->getEntryBlock().size(); }
};

TEST(IdentityFolder, IntegerIdentitiesFoldToTheOtherOperand) {
  Builder t;
  EXPECT_EQ(t.b.CreateAdd(t.x, t.i32(0)), t.x);
  EXPECT_EQ(t.b.CreateAdd(t.i32(0), t.x), t.x);
  EXPECT_EQ(t.b.CreateNSWAdd(t.x, t.i32(0)), t.x);
  EXPECT_EQ(t.b.CreateSub(t.x, t.i32(0)), t.x);
  EXPECT_EQ(t.b.CreateOr(t.i32(0), t.x), t.x);
  EXPECT_EQ(t.b.CreateXor(t.x, t.i32(0)), t.x);
  EXPECT_EQ(t.b.CreateXor(t.i32(0), t.x), t.x);
  EXPECT_EQ(t.b.CreateShl(t.x, t.i32(0)), t.x);
  EXPECT_EQ(t.b.CreateLShr(t.x, t.i32(0)), t.x);
  EXPECT_EQ(t.b.CreateLShr(t.x, t.i32(0), "", /*isExact=*/true), t.x);
  EXPECT_EQ(t.b.CreateAShr(t.x, t.i32(0)), t.x);
  EXPECT_EQ(t.b.CreateMul(t.x, t.i32(1)), t.x);
  EXPECT_EQ(t.b.CreateMul(t.i32(1), t.x), t.x);
  EXPECT_EQ(t.b.CreateAnd(t.x, t.i32(-1)), t.x);
  EXPECT_EQ(t.b.CreateAnd(t.i32(-1), t.x), t.x);
  EXPECT_EQ(t.instructions(), 0u);
}

TEST(IdentityFolder, OtherOperationsAreBuiltAndConstantsStillFold) {
  Builder t;
  EXPECT_EQ(t.b.CreateAdd(t.i32(2), t.i32(3)), t.i32(5));  // LLVM's constant folding
  EXPECT_NE(t.b.CreateSub(t.i32(0), t.x), t.x);            // 0 - x is a negation
  EXPECT_NE(t.b.CreateShl(t.i32(0), t.x), t.x);
  EXPECT_NE(t.b.CreateMul(t.x, t.i32(0)), t.x);            // x * 0 is left to instcombine
  EXPECT_NE(t.b.CreateAnd(t.x, t.i32(0)), t.x);
  EXPECT_NE(t.b.CreateAdd(t.x, t.i32(1)), t.x);
  // x + 0.0 is not x for x = -0.0: floats are not folded.
  EXPECT_NE(t.b.CreateFAdd(t.y, llvm::ConstantFP::get(t.y->getType(), 0.0)), t.y);
  EXPECT_EQ(t.instructions(), 6u);
}

}  // namespace
}  // namespace tessera::backends
