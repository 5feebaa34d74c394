// Specialization facts (Triton's): 16-byte pointer alignment, integers divisible by 16 or equal to 1, argument
// checking, and how the facts reach the IR as argument attributes.
#include <gtest/gtest.h>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "jit/Specialization.h"
#include "tessera/tessera.h"

using namespace tessera;
using namespace tessera::jit;

namespace {

void axpy(Ptr<f32> x, Ptr<f32> y, Int n, Scalar<f32> alpha, Const<int> BLOCK) {
  Tensor offsets = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offsets < n;
  store(y + offsets, load(x + offsets, mask) * alpha + load(y + offsets, mask), mask);
}

KernelDef axpyKernel() { return kernel("axpy", axpy, {"x", "y", "n", "alpha", "BLOCK"}); }

template <class F>
std::string errorOf(F fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(JitSpecialization, PointerAlignmentAndIntegerFacts) {
  KernelDef k = axpyKernel();
  auto facts = argumentFacts(k.name(), k.runtimeParams(), {KernelArg::pointer(0x7f0000001000), KernelArg::pointer(0x7f0000001008), 4096, 2.0});
  ASSERT_EQ(facts.size(), 4u);
  EXPECT_TRUE(facts[0].divisibleBy16);
  EXPECT_FALSE(facts[1].divisibleBy16);  // 8-byte aligned only
  EXPECT_TRUE(facts[2].divisibleBy16);
  EXPECT_FALSE(facts[2].equalTo1);
  EXPECT_EQ(facts[3], ArgFacts{});  // floats carry no facts

  EXPECT_EQ(argumentFacts(k.name(), k.runtimeParams(), {KernelArg::pointer(0), KernelArg::pointer(16), 1, 2.0})[2],
            (ArgFacts{false, true}));
  // 1000 is a multiple of 8, not of 16 (a row of 1000 f16 is 16-byte aligned); 1004 of neither.
  ArgFacts byEight;
  byEight.divisibleBy8 = true;
  EXPECT_EQ(argumentFacts(k.name(), k.runtimeParams(), {KernelArg::pointer(0), KernelArg::pointer(16), 1000, 2.0})[2],
            byEight);
  EXPECT_EQ(argumentFacts(k.name(), k.runtimeParams(), {KernelArg::pointer(0), KernelArg::pointer(16), 1004, 2.0})[2],
            (ArgFacts{false, false}));
  EXPECT_FALSE(argumentFacts(k.name(), k.runtimeParams(), {KernelArg::pointer(0), KernelArg::pointer(16), 4096, 2.0})[2]
                   .divisibleBy8);  // divisible by 16: that fact alone
  EXPECT_EQ(argumentFacts(k.name(), k.runtimeParams(), {KernelArg::pointer(0), KernelArg::pointer(16), 0, 2.0})[2],
            (ArgFacts{true, false}));
}

// offsets32: only a pointer whose memory's size is known (DeviceBuffer, KernelArg::pointer(addr, bytes)), and only
// when it holds fewer than 2^31 elements of the pointee (f32 here: 2^33 bytes is 2^31 elements, one too many).
TEST(JitSpecialization, SizedPointersUnder2To31ElementsGetOffsets32) {
  KernelDef k = axpyKernel();
  auto factsOf = [&](KernelArg x) { return argumentFacts(k.name(), k.runtimeParams(), {x, KernelArg::pointer(16), 8, 2.0}); };
  EXPECT_FALSE(factsOf(KernelArg::pointer(256))[0].offsets32);  // a bare address: size unknown
  EXPECT_TRUE(factsOf(KernelArg::pointer(256, 4000))[0].offsets32);
  EXPECT_TRUE(factsOf(KernelArg::pointer(256, (uint64_t(1) << 33) - 4))[0].offsets32);
  EXPECT_FALSE(factsOf(KernelArg::pointer(256, uint64_t(1) << 33))[0].offsets32);
  EXPECT_FALSE(factsOf(KernelArg::pointer(256, (uint64_t(1) << 33) - 3))[0].offsets32);  // a partial element counts
  EXPECT_FALSE(factsOf(KernelArg::pointer(256, ~uint64_t(0)))[0].offsets32);
  const ArgFacts sized = factsOf(KernelArg::pointer(256, 4000))[0];
  EXPECT_TRUE(sized.divisibleBy16);
  EXPECT_FALSE(factsOf(KernelArg::pointer(256, 4000))[1].offsets32);
  EXPECT_FALSE(factsOf(KernelArg::pointer(256, 4000))[2].offsets32);  // integers never
}

TEST(JitSpecialization, BadArgumentsAreClearErrors) {
  KernelDef k = axpyKernel();
  std::vector<ParamInfo> params = k.runtimeParams();
  EXPECT_NE(errorOf([&] { argumentFacts("axpy", params, {KernelArg::pointer(0)}); })
                .find("kernel 'axpy' takes 4 runtime arguments, got 1"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { argumentFacts("axpy", params, {KernelArg::pointer(0), 5, 6, 2.0}); })
                .find("argument 'y' (ptr<f32>) must be a device pointer, got an integer"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { argumentFacts("axpy", params, {KernelArg::pointer(0), KernelArg::pointer(0), 6, 2}); })
                .find("argument 'alpha' (f32) must be a floating-point number"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              argumentFacts("axpy", params, {KernelArg::pointer(0), KernelArg::pointer(0), int64_t(1) << 40, 2.0});
            }).find("argument 'n' = 1099511627776 does not fit its type i32"),
            std::string::npos);
}

TEST(JitSpecialization, KeyDistinguishesEverySpecializationInput) {
  Specialization base;
  base.constants = {{"BLOCK", int64_t(1024)}};
  base.args = {{true, false}, {false, false}, {false, true}};
  base.numWarps = 4;
  base.target = "nvptx";
  base.arch = "sm_90a";
  EXPECT_EQ(base.key(), "BLOCK=1024;args=16,_,1;warps=4;stages=3;nvptx;sm_90a;fast");
  auto differs = [&](auto mutate) {
    Specialization s = base;
    mutate(s);
    return s.key() != base.key();
  };
  EXPECT_TRUE(differs([](Specialization& s) { s.constants["BLOCK"] = int64_t(512); }));
  EXPECT_TRUE(differs([](Specialization& s) { s.constants["BLOCK"] = 1024.0; }));
  EXPECT_TRUE(differs([](Specialization& s) { s.args[1].divisibleBy16 = true; }));
  EXPECT_TRUE(differs([](Specialization& s) { s.args[1].divisibleBy8 = true; }));
  EXPECT_TRUE(differs([](Specialization& s) { s.args[2].equalTo1 = false; }));
  EXPECT_TRUE(differs([](Specialization& s) { s.args[0].offsets32 = true; }));
  EXPECT_TRUE(differs([](Specialization& s) { s.args[1].offsets32 = true; }));
  EXPECT_TRUE(differs([](Specialization& s) { s.warpSpecialize = true; }));
  EXPECT_TRUE(differs([](Specialization& s) { s.pingPong = true; }));
  Specialization large = base;
  large.target = "amdgpu";
  large.arch = "gfx942";
  large.matrixInstrSize = 32;
  EXPECT_EQ(large.key(), "BLOCK=1024;args=16,_,1;warps=4;stages=3;amdgpu;gfx942;fast;matrix_instr_nonkdim=32");
  Specialization noTurns = base;
  noTurns.consumerTurns = false;
  EXPECT_EQ(noTurns.key(), "BLOCK=1024;args=16,_,1;warps=4;stages=3;nvptx;sm_90a;fast;no_consumer_turns");
  Specialization eight = base;
  eight.args[1].divisibleBy8 = true;
  EXPECT_EQ(eight.key(), "BLOCK=1024;args=16,8,1;warps=4;stages=3;nvptx;sm_90a;fast");
  Specialization narrow = base;
  narrow.args[0].offsets32 = narrow.args[1].offsets32 = true;
  EXPECT_EQ(narrow.key(), "BLOCK=1024;args=16r32,_r32,1;warps=4;stages=3;nvptx;sm_90a;fast");
  EXPECT_TRUE(differs([](Specialization& s) { s.numWarps = 8; }));
  EXPECT_TRUE(differs([](Specialization& s) { s.numStages = 1; }));
  EXPECT_TRUE(differs([](Specialization& s) { s.arch = "sm_80"; }));
  EXPECT_TRUE(differs([](Specialization& s) { s.fastMath = false; }));
}

TEST(JitSpecialization, FactsBecomeArgumentAttributesInTheIR) {
  KernelDef k = axpyKernel();
  auto module = k.trace({{"BLOCK", int64_t(256)}});
  ir::Function& f = *module->functions()[0];
  applySpecialization(f, {{true, false}, {false, false}, {false, true}, {}});
  EXPECT_EQ(f.argAttrs(0).at("divisibility").getInt(), 16);
  EXPECT_EQ(f.argAttrs(1).count("divisibility"), 0u);
  ArgFacts byEight;
  byEight.divisibleBy8 = true;
  auto eight = k.trace({{"BLOCK", int64_t(256)}});
  applySpecialization(*eight->functions()[0], {{}, {}, byEight, {}});
  EXPECT_EQ(eight->functions()[0]->argAttrs(2).at("divisibility").getInt(), 8);
  EXPECT_TRUE(f.argAttrs(2).at("equal_to_1").getBool());
  EXPECT_TRUE(f.argAttrs(3).empty());
  std::string text = ir::print(f);
  EXPECT_NE(text.find("%x: ptr<f32> {divisibility = 16}"), std::string::npos) << text;
  EXPECT_NE(text.find("%n: i32 {equal_to_1 = true}"), std::string::npos) << text;
  EXPECT_EQ(f.argAttrs(0).count("pointer_range"), 0u);
  EXPECT_THROW(applySpecialization(f, {{true, false}}), Error);

  // offsets32 becomes `pointer_range = 32`, which prints, parses back and verifies.
  auto sized = k.trace({{"BLOCK", int64_t(256)}});
  ir::Function& g = *sized->functions()[0];
  applySpecialization(g, {{true, false, true}, {false, false, true}, {}, {}});
  EXPECT_EQ(g.argAttrs(0).at("pointer_range").getInt(), 32);
  text = ir::print(g);
  EXPECT_NE(text.find("%x: ptr<f32> {divisibility = 16, pointer_range = 32}"), std::string::npos) << text;
  EXPECT_NE(text.find("%y: ptr<f32> {pointer_range = 32}"), std::string::npos) << text;
  EXPECT_EQ(ir::print(*ir::parseModule(ir::print(*sized))), ir::print(*sized));
}

namespace {
void read_block(TensorDesc<f16> src, Ptr<f16> out, Const<int> BLOCK) {
  store(out + expand_dims(arange(0, BLOCK), 1) * BLOCK + expand_dims(arange(0, BLOCK), 0), load(src, {0, 0}));
}
}  // namespace

// A descriptor specializes on its block (its type) and on whether the innermost dimension of its shape is divisible
// by 16, which reaches the IR as its `divisibility` and lets expand-descriptor-loads vectorize its masks. The outer
// dimensions do not matter: a ragged number of rows (attention's sequence length) keeps the rows' copies wide.
TEST(JitSpecialization, DescriptorShapeDivisibility) {
  KernelDef k = kernel("read_block", read_block, {"src", "out", "BLOCK"});
  auto factsOf = [&](std::vector<int64_t> shape) {
    return argumentFacts(k.name(), k.runtimeParams(),
                         {KernelArg::tensorDescriptor(4096, shape, {64, 1}, {16, 16}), KernelArg::pointer(4096)});
  };
  const std::vector<ArgFacts> even = factsOf({32, 64}), ragged = factsOf({32, 56}), raggedRows = factsOf({30, 64});
  EXPECT_TRUE(even[0].divisibleBy16);
  EXPECT_FALSE(ragged[0].divisibleBy16);
  EXPECT_TRUE(raggedRows[0].divisibleBy16);
  EXPECT_EQ(even[0].descriptorType, ragged[0].descriptorType);
  Specialization a, b;
  a.args = even;
  b.args = ragged;
  EXPECT_NE(a.key(), b.key());
  EXPECT_NE(a.key().find("args=tensordesc<16x16xf16>16,16;"), std::string::npos) << a.key();

  std::unique_ptr<ir::Module> m = k.trace({{"BLOCK", 16}}, descriptorTypes(k.runtimeParams(), even));
  applySpecialization(*m->functions()[0], even);
  EXPECT_NE(ir::print(*m).find("%src: tensordesc<16x16xf16> {divisibility = 16}"), std::string::npos) << ir::print(*m);
}
