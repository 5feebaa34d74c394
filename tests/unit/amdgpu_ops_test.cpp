// Every op family through the AMDGPU backend over the element types, for gfx90a and gfx942. No AMD GPU exists
// here: each generated kernel goes through the JIT pipeline (layouts for wave64), is emitted as an HSA code object
// and inspected with llvm-readelf-19 / llvm-objdump-19 (kernel symbol, wavefront size 64, LDS = the allocator's
// smem_bytes, no scratch). Nothing is executed on AMD hardware. Fixed kernels whose code is only grepped (shape
// ops, reductions, scans, control flow, atomics, the kernel ABI) are lit tests in tests/lit/amdgpu.
#include <gtest/gtest.h>

#include <functional>

#include "AMDGPUTestUtil.h"

namespace tessera::testing {
namespace {

std::string tileOf(const std::string& elem) { return tileText("256", elem, ""); }

std::string binary(const std::string& elem, const std::string& op) {
  return elementwiseKernel(elem, 2, "  %r = " + op + " %v0, %v1 : " + tileOf(elem) + "\n", elem, "");
}
std::string unary(const std::string& elem, const std::string& op) {
  return elementwiseKernel(elem, 1, "  %r = " + op + " %v0 : " + tileOf(elem) + "\n", elem, "");
}

// Compiles for both archs and checks both code objects (and runs `check` on each, if given); returns the gfx90a
// compilation.
jit::CompiledKernel compileBoth(const std::string& text, bool noSpills = true,
                                const std::function<void(const jit::CompiledKernel&)>& check = nullptr) {
  jit::CompiledKernel first;
  for (const char* arch : kAmdArchs) {
    SCOPED_TRACE(arch);
    jit::CompiledKernel k = compileTextForAmdgpu(text, arch);
    expectGoodCodeObject(k, arch, noSpills);
    if (check) check(k);
    if (std::string(arch) == "gfx90a") first = k;
  }
  return first;
}

TEST(AMDGPUOpsNoHardware, IntegerArithmetic) {
  for (const char* elem : {"i8", "u8", "i16", "i32", "u32", "i64", "u64"}) {
    for (const char* op : {"add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr"}) {
      SCOPED_TRACE(std::string(elem) + " " + op);
      compileBoth(binary(elem, op));
    }
    for (const char* op : {"neg", "not", "abs"}) {
      SCOPED_TRACE(std::string(elem) + " " + op);
      compileBoth(unary(elem, op));
    }
  }
}

TEST(AMDGPUOpsNoHardware, FloatArithmeticAndMath) {
  for (const char* elem : {"f16", "bf16", "f32", "f64"}) {
    for (const char* op : {"add", "sub", "mul", "div", "rem", "min", "max"}) {
      SCOPED_TRACE(std::string(elem) + " " + op);
      compileBoth(binary(elem, op));
    }
    for (const char* op : {"neg", "abs", "sqrt", "rsqrt", "floor", "ceil"}) {
      SCOPED_TRACE(std::string(elem) + " " + op);
      compileBoth(unary(elem, op));
    }
  }
  for (const char* elem : {"f16", "bf16", "f32"})
    for (const char* op : {"exp", "exp2", "log", "log2", "sin", "cos", "tanh", "erf"}) {
      SCOPED_TRACE(std::string(elem) + " " + op);
      compileBoth(unary(elem, op));
    }
}

// There are no ROCm device libraries (ocml) here: f64 exp/exp2/log/log2/sin/cos/tanh/erf are the portable inline
// expansions of backends/common/ScalarMath.h (their accuracy is measured on the host by lowering_math_test), sqrt
// and rsqrt use the hardware square root. None of them may become a call (to libm, which ld.lld would reject as
// an undefined symbol, or to any function): the optimized IR, the disassembly and the symbol table are checked.
TEST(AMDGPUOpsNoHardware, F64MathCompilesInlineWithoutDeviceLibs) {
  for (const char* op : {"exp", "exp2", "log", "log2", "sin", "cos", "tanh", "erf", "sqrt", "rsqrt"}) {
    SCOPED_TRACE(op);
    compileBoth(unary("f64", op), true, [&](const jit::CompiledKernel& k) {
      EXPECT_FALSE(std::regex_search(k.optimizedLLVMIR, std::regex(R"(call [^\n]*@(?!llvm\.))")))
          << "non-intrinsic call in\n" << k.optimizedLLVMIR;
      if (!haveLlvmTools()) return;
      std::string dis = disassemble(k.binary);
      EXPECT_EQ(dis.find("s_swappc"), std::string::npos) << "call in f64 " << op << ":\n" << dis;
      EXPECT_EQ(dis.find("s_setpc"), std::string::npos) << "jump through a register in f64 " << op << ":\n" << dis;
      EXPECT_NE(dis.find("v_fma_f64"), std::string::npos) << dis;  // the arithmetic is really there
      std::string syms = runTool(kReadelf, "--syms", k.binary);
      EXPECT_FALSE(std::regex_search(syms, std::regex(R"( UND[ \t]+\S)"))) << "undefined symbol:\n" << syms;
    });
  }
}

TEST(AMDGPUOpsNoHardware, CastsBetweenEveryPairOfTypes) {
  const std::vector<std::string> types = {"i1", "i8", "u8", "i32", "u32", "i64", "f16", "bf16", "f32", "f64",
                                          "f8e4m3", "f8e5m2"};
  for (const std::string& from : types)
    for (const std::string& to : types) {
      if (from == to) continue;
      SCOPED_TRACE(from + " -> " + to);
      compileBoth(elementwiseKernel(from, 1, "  %r = cast %v0 : " + tileOf(to) + "\n", to, ""));
    }
}

TEST(AMDGPUOpsNoHardware, BitcastsCompareSelectPointersAndMaskedLoads) {
  compileBoth(elementwiseKernel("f32", 1, "  %r = bitcast %v0 : " + tileOf("i32") + "\n", "i32", ""));
  for (const char* elem : {"i32", "u32", "f32", "f16"})
    for (const char* pred : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      SCOPED_TRACE(std::string(elem) + " " + pred);
      compileBoth(elementwiseKernel(elem, 2,
                                    "  %c = cmp %v0, %v1 {pred = \"" + std::string(pred) + "\"} : " + tileOf("i1") +
                                        "\n  %r = select %c, %v0, %v1 : " + tileOf(elem) + "\n",
                                    elem, ""));
    }
  compileBoth(elementwiseKernel("f32", 2,
                                "  %q = addptr %p0, %offs : " + tileOf("ptr<f32>") + "\n  %c = cmp %q, %p1 {pred = \"lt\"} : " +
                                    tileOf("i1") + "\n  %a = cast %q : " + tileOf("i64") +
                                    "\n  %z = constant {value = 0} : " + tileOf("i64") +
                                    "\n  %r = select %c, %a, %z : " + tileOf("i64") + "\n",
                                "i64", ""));
  compileBoth(elementwiseKernel("f32", 2,
                                "  %z = constant {value = 128} : " + tileOf("i32") + "\n  %m = cmp %offs, %z {pred = \"lt\"} : " +
                                    tileOf("i1") + "\n  %d = constant {value = -1.5} : " + tileOf("f32") +
                                    "\n  %r = load %p1, %m, %d {volatile = true} : " + tileOf("f32") + "\n",
                                "f32", ""));
}

TEST(AMDGPUOpsNoHardware, AtomicsWithKindsSemanticsAndScopes) {
  struct Case { const char* elem; const char* kind; };
  for (Case k : {Case{"f32", "add"}, Case{"i32", "add"}, Case{"i32", "max"}, Case{"u32", "min"}, Case{"f32", "max"},
                 Case{"i32", "and"}, Case{"i64", "or"}, Case{"u64", "xor"}, Case{"f32", "xchg"}, Case{"f16", "add"}})
    for (const char* scope : {"cta", "gpu", "sys"}) {
      SCOPED_TRACE(std::string(k.elem) + " " + k.kind + " " + scope);
      compileBoth(elementwiseKernel(k.elem, 2,
                                    "  %r = atomic_rmw %p0, %v1 {kind = \"" + std::string(k.kind) + "\", scope = \"" +
                                        scope + "\", sem = \"relaxed\"} : " + tileOf(k.elem) + "\n",
                                    k.elem, ""));
    }
  for (const char* sem : {"relaxed", "acquire", "release", "acq_rel"}) {
    SCOPED_TRACE(std::string("cas ") + sem);
    jit::CompiledKernel c = compileBoth(elementwiseKernel(
        "i32", 3, "  %r = atomic_cas %p0, %v1, %v2 {scope = \"gpu\", sem = \"" + std::string(sem) + "\"} : " +
                      tileOf("i32") + "\n",
        "i32", ""));
    EXPECT_NE(disassemble(c.binary).find("global_atomic_cmpswap"), std::string::npos);
  }
}

TEST(AMDGPUOpsNoHardware, DotForEveryInputType) {
  struct Case { const char* in; const char* acc; const char* precision; };
  for (Case c : {Case{"f16", "f32", "ieee"}, Case{"f16", "f16", "ieee"}, Case{"bf16", "f32", "ieee"},
                 Case{"f32", "f32", "ieee"}, Case{"f32", "f32", "tf32"}, Case{"i8", "i32", "ieee"},
                 Case{"f8e4m3", "f32", "ieee"}, Case{"f8e5m2", "f32", "ieee"}}) {
    SCOPED_TRACE(std::string(c.in) + " -> " + c.acc + " " + c.precision);
    jit::CompiledKernel k = compileBoth(dotKernel({c.in, c.acc, 32, 32, 16, c.precision}));
    EXPECT_GT(k.sharedBytes, 0);  // operands are staged in LDS
    EXPECT_NE(disassemble(k.binary).find("s_barrier"), std::string::npos);
  }
}

}  // namespace
}  // namespace tessera::testing
