// Every op family through the NVPTX backend, over the element types: each generated kernel is lowered, compiled
// for sm_90a and sm_80, and must be accepted by ptxas; targeted checks look at the LLVM IR or PTX for the semantics
// that need extra code (guards for division by zero and wide shifts, saturating casts, ...). Fixed kernels whose
// PTX is only grepped (masked loads, scalar atomics, shape ops, scans, control flow, fast math) are lit tests in
// tests/lit/nvptx.
#include <gtest/gtest.h>

#include "NVPTXTestUtil.h"

namespace tessera::testing {
namespace {

const std::string kL = "#blocked{order = [0], spt = [2], tpw = [32], wpc = [4]}";  // over 256: 2 registers

std::string tileOf(const std::string& elem) { return tileText("256", elem, kL); }

std::string binary(const std::string& elem, const std::string& op) {
  return elementwiseKernel(elem, 2, "  %r = " + op + " %v0, %v1 : " + tileOf(elem) + "\n", elem, kL);
}

std::string unary(const std::string& elem, const std::string& op) {
  return elementwiseKernel(elem, 1, "  %r = " + op + " %v0 : " + tileOf(elem) + "\n", elem, kL);
}

TEST(NVPTXOps, IntegerArithmetic) {
  for (const char* elem : {"i8", "u8", "i16", "i32", "u32", "i64", "u64"}) {
    for (const char* op : {"add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr"}) {
      SCOPED_TRACE(std::string(elem) + " " + op);
      Compiled c = compileAndAssemble(binary(elem, op));
      if (std::string(op) == "div" || std::string(op) == "rem") {  // division by zero is defined: guarded divisor
        EXPECT_NE(c.llvm.find("icmp eq"), std::string::npos) << c.llvm;
      }
      if (std::string(op) == "shl") {
        EXPECT_NE(c.llvm.find("icmp uge"), std::string::npos) << c.llvm;
      }
    }
    for (const char* op : {"neg", "not", "abs"}) {
      SCOPED_TRACE(std::string(elem) + " " + op);
      compileAndAssemble(unary(elem, op));
    }
  }
  for (const char* elem : {"i32", "u32", "i64", "u64"}) {
    SCOPED_TRACE(elem);
    Compiled c = compileAndAssemble(binary(elem, "umulhi"));
    EXPECT_NE(c.ptx.find("mul.hi"), std::string::npos) << c.ptx;
  }
}

// A masked store of 2, 4, 8 or 16 bytes is one predicated instruction (`@%p st.global`, the inline-asm table's
// st.global.pred entries: no branch); a 1-byte one has no such entry and branches around a plain store. With %n a
// multiple of 16 the mask is constant over a thread's two elements, which are then stored together.
TEST(NVPTXOps, MaskedStoresArePredicatedInstructions) {
  const std::string layout = "#blocked{order = [0], spt = [2], tpw = [32], wpc = [4]}";  // 2 consecutive registers
  struct Case {
    const char* elem;
    bool nDivisible;
    const char* store;  // the PTX store of a thread's elements
    bool predicated;
  };
  for (const Case& c : {Case{"u8", false, "st.global.u8", false}, Case{"u8", true, "st.global.b16", true},
                        Case{"f16", true, "st.global.b32", true}, Case{"f32", true, "st.global.v2.b32", true},
                        Case{"i64", true, "st.global.v4.b32", true}, Case{"f32", false, "st.global.b32", true}}) {
    const std::string elem = c.elem;
    SCOPED_TRACE(elem + (c.nDivisible ? " n % 16 == 0" : ""));
    auto tile = [&](const std::string& e) { return tileText("256", e, layout); };
    const std::string kernel =
        "func @k(%in: ptr<" + elem + "> {divisibility = 16}, %out: ptr<" + elem + "> {divisibility = 16}, %n: i32" +
        (c.nDivisible ? " {divisibility = 16}" : "") + ") attributes {num_warps = 4} {\n"
        "  %offs = arange {end = 256, start = 0} : " + tile("i32") + "\n"
        "  %nn = splat %n : " + tile("i32") + "\n"
        "  %mask = cmp %offs, %nn {pred = \"lt\"} : " + tile("i1") + "\n"
        "  %ib = splat %in : " + tile("ptr<" + elem + ">") + "\n"
        "  %ip = addptr %ib, %offs : " + tile("ptr<" + elem + ">") + "\n"
        "  %v = load %ip : " + tile(elem) + "\n"
        "  %ob = splat %out : " + tile("ptr<" + elem + ">") + "\n"
        "  %op = addptr %ob, %offs : " + tile("ptr<" + elem + ">") + "\n"
        "  store %op, %v, %mask\n  return\n}\n";
    const std::string ptx = compileAndAssemble(kernel).ptx;
    const size_t at = ptx.find(std::string(c.store) + " ");
    ASSERT_NE(at, std::string::npos) << ptx;
    const size_t lineStart = ptx.rfind('\n', at) + 1;
    const std::string line = ptx.substr(lineStart, ptx.find('\n', at) - lineStart);
    EXPECT_EQ(line.find("@%p") != std::string::npos, c.predicated) << line;
    EXPECT_EQ(ptx.find("bra") == std::string::npos, c.predicated) << ptx;
  }
}

TEST(NVPTXOps, FloatArithmeticAndMath) {
  for (const char* elem : {"f16", "bf16", "f32", "f64"}) {
    for (const char* op : {"add", "sub", "mul", "div", "rem", "min", "max"}) {
      SCOPED_TRACE(std::string(elem) + " " + op);
      compileAndAssemble(binary(elem, op));
    }
    for (const char* op : {"neg", "abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf",
                           "floor", "ceil"}) {
      SCOPED_TRACE(std::string(elem) + " " + op);
      // libdevice's transcendental functions use a local stack frame on some paths; only require acceptance.
      compileAndAssemble(unary(elem, op), /*clean=*/false);
    }
    SCOPED_TRACE(std::string(elem) + " fma");
    compileAndAssemble(elementwiseKernel(elem, 3, "  %r = fma %v0, %v1, %v2 : " + tileOf(elem) + "\n", elem, kL));
  }
}

TEST(NVPTXOps, CastsBetweenEveryPairOfTypes) {
  const std::vector<std::string> types = {"i1", "i8", "u8", "i32", "u32", "i64", "f16", "bf16", "f32", "f64",
                                          "f8e4m3", "f8e5m2"};
  for (const std::string& from : types)
    for (const std::string& to : types) {
      if (from == to) continue;
      SCOPED_TRACE(from + " -> " + to);
      Compiled c = compileAndAssemble(
          elementwiseKernel(from, 1, "  %r = cast %v0 : " + tileOf(to) + "\n", to, kL));
      bool floatToInt = (from[0] == 'f' || from[0] == 'b') && (to[0] == 'i' || to[0] == 'u') && to != "i1";
      if (floatToInt) {
        EXPECT_NE(c.llvm.find(".sat."), std::string::npos) << "float->int must saturate";
      }
    }
}

TEST(NVPTXOps, BitcastsCompareSelectAndPointers) {
  compileAndAssemble(elementwiseKernel("f32", 1, "  %r = bitcast %v0 : " + tileOf("i32") + "\n", "i32", kL));
  compileAndAssemble(elementwiseKernel("f8e4m3", 1, "  %r = bitcast %v0 : " + tileOf("u8") + "\n", "u8", kL));
  for (const char* elem : {"i32", "u32", "f32", "f16"})
    for (const char* pred : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      SCOPED_TRACE(std::string(elem) + " " + pred);
      std::string body = "  %c = cmp %v0, %v1 {pred = \"" + std::string(pred) + "\"} : " + tileOf("i1") + "\n" +
                         "  %r = select %c, %v0, %v1 : " + tileOf(elem) + "\n";
      compileAndAssemble(elementwiseKernel(elem, 2, body, elem, kL));
    }
  // Pointer arithmetic, comparison and casts to integers.
  std::string body = "  %q = addptr %p0, %offs : " + tileOf("ptr<f32>") + "\n" +
                     "  %c = cmp %q, %p1 {pred = \"lt\"} : " + tileOf("i1") + "\n" +
                     "  %a = cast %q : " + tileOf("i64") + "\n" + "  %z = constant {value = 0} : " + tileOf("i64") + "\n" +
                     "  %r = select %c, %a, %z : " + tileOf("i64") + "\n";
  compileAndAssemble(elementwiseKernel("f32", 2, body, "i64", kL));
}

TEST(NVPTXOps, AtomicsWithKindsSemanticsAndScopes) {
  struct Case { const char* elem; const char* kind; };
  for (Case k : {Case{"f32", "add"}, Case{"i32", "add"}, Case{"i32", "max"}, Case{"u32", "min"}, Case{"f32", "max"},
                 Case{"i32", "and"}, Case{"i64", "or"}, Case{"u64", "xor"}, Case{"f32", "xchg"}, Case{"f16", "add"}})
    for (const char* scope : {"cta", "gpu", "sys"}) {
      SCOPED_TRACE(std::string(k.elem) + " " + k.kind + " " + scope);
      std::string body = "  %r = atomic_rmw %p0, %v1 {kind = \"" + std::string(k.kind) + "\", scope = \"" + scope +
                         "\", sem = \"relaxed\"} : " + tileOf(k.elem) + "\n";
      compileAndAssemble(elementwiseKernel(k.elem, 2, body, k.elem, kL), /*clean=*/false);
    }
  for (const char* elem : {"i32", "f32", "i64"})
    for (const char* sem : {"relaxed", "acquire", "release", "acq_rel"}) {
      SCOPED_TRACE(std::string(elem) + " cas " + sem);
      std::string body = "  %r = atomic_cas %p0, %v1, %v2 {scope = \"gpu\", sem = \"" + std::string(sem) + "\"} : " +
                         tileOf(elem) + "\n";
      Compiled c = compileAndAssemble(elementwiseKernel(elem, 3, body, elem, kL));
      EXPECT_NE(c.ptx.find("atom"), std::string::npos);
    }
}

TEST(NVPTXOps, DotWithFmaForEveryInputType) {
  // 32x16 · 16x32 + 32x32, all in one 2-D blocked layout, operands staged through shared memory.
  const std::string layout = "#blocked{order = [1, 0], spt = [1, 4], tpw = [4, 8], wpc = [4, 1]}";
  struct Case { const char* in; const char* acc; const char* precision; };
  for (Case k : {Case{"f16", "f32", "ieee"}, Case{"f16", "f16", "ieee"}, Case{"bf16", "f32", "ieee"},
                 Case{"f32", "f32", "ieee"}, Case{"f32", "f32", "tf32"}, Case{"i8", "i32", "ieee"},
                 Case{"f8e4m3", "f32", "ieee"}, Case{"f8e5m2", "f32", "ieee"}}) {
    SCOPED_TRACE(std::string(k.in) + " -> " + k.acc + " " + k.precision);
    Compiled c = compileAndAssemble(dotKernel({k.in, k.acc, 32, 32, 16, k.precision, layout, layout}));
    EXPECT_EQ(countOccurrences(c.ptx, "bar.sync"), 1) << c.ptx;
    const char* mac = std::string(k.acc) == "i32" ? "mad.lo.s32" : "fma.rn.f32";
    EXPECT_NE(c.ptx.find(mac), std::string::npos) << c.ptx;
  }
}

}  // namespace
}  // namespace tessera::testing
