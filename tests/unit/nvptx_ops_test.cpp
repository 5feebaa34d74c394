// Every op family through the NVPTX backend: each kernel is lowered, compiled for sm_90a and sm_80, and must be
// accepted by ptxas; targeted checks look at the LLVM IR or PTX for the semantics that need extra code (guards
// for division by zero and wide shifts, saturating casts, fp8 conversions, scopes of atomics, ...).
#include <gtest/gtest.h>

#include "NVPTXTestUtil.h"

namespace tessera::testing {
namespace {

const std::string kL = "#blocked{order = [0], spt = [2], tpw = [32], wpc = [4]}";  // over 256: 2 registers

std::string tileOf(const std::string& elem) { return "tile<256x" + elem + ", " + kL + ">"; }

// A kernel that loads `operands` tiles of `elem` and stores `result` (an expression over %v0, %v1, %v2 given as
// op lines that define %r of type `resultElem`).
std::string elementwiseKernel(const std::string& elem, int operands, const std::string& body,
                              const std::string& resultElem) {
  std::string t = tileOf(elem), it = tileOf("i32");
  std::string s = "func @k(%in: ptr<" + elem + "> {divisibility = 16}, %out: ptr<" + resultElem +
                  "> {divisibility = 16}) attributes {num_warps = 4} {\n";
  s += "  %offs = arange {end = 256, start = 0} : " + it + "\n";
  s += "  %ib = splat %in : " + tileOf("ptr<" + elem + ">") + "\n";
  for (int i = 0; i < operands; ++i) {
    s += "  %k" + std::to_string(i) + " = constant {value = " + std::to_string(256 * i) + "} : " + it + "\n";
    s += "  %o" + std::to_string(i) + " = add %offs, %k" + std::to_string(i) + " : " + it + "\n";
    s += "  %p" + std::to_string(i) + " = addptr %ib, %o" + std::to_string(i) + " : " + tileOf("ptr<" + elem + ">") + "\n";
    s += "  %v" + std::to_string(i) + " = load %p" + std::to_string(i) + " : " + t + "\n";
  }
  s += body;
  s += "  %ob = splat %out : " + tileOf("ptr<" + resultElem + ">") + "\n";
  s += "  %op = addptr %ob, %offs : " + tileOf("ptr<" + resultElem + ">") + "\n";
  s += "  store %op, %r\n  return\n}\n";
  return s;
}

std::string binary(const std::string& elem, const std::string& op) {
  return elementwiseKernel(elem, 2, "  %r = " + op + " %v0, %v1 : " + tileOf(elem) + "\n", elem);
}

std::string unary(const std::string& elem, const std::string& op) {
  return elementwiseKernel(elem, 1, "  %r = " + op + " %v0 : " + tileOf(elem) + "\n", elem);
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
    compileAndAssemble(elementwiseKernel(elem, 3, "  %r = fma %v0, %v1, %v2 : " + tileOf(elem) + "\n", elem));
  }
  // f32 min/max follow fmin/fmax (the non-NaN operand wins): PTX min/max.f32 do exactly that.
  EXPECT_NE(compileIR(binary("f32", "min")).ptx.find("min.f32"), std::string::npos);
  // Fast math uses the approximate SFU instructions; accurate math calls libdevice (inlined).
  EXPECT_NE(compileIR(unary("f32", "exp2")).ptx.find("ex2.approx.f32"), std::string::npos);
  EXPECT_NE(compileIR(unary("f32", "rsqrt")).ptx.find("rsqrt.approx.f32"), std::string::npos);
  Compiled accurate = compileIR(unary("f32", "exp2"), "sm_90a", 4, /*fastMath=*/false);
  EXPECT_NE(accurate.llvm.find("__nv_exp2f"), std::string::npos);
  EXPECT_EQ(accurate.ptx.find("call"), std::string::npos) << "libdevice must be linked and inlined";
}

TEST(NVPTXOps, CastsBetweenEveryPairOfTypes) {
  const std::vector<std::string> types = {"i1", "i8", "u8", "i32", "u32", "i64", "f16", "bf16", "f32", "f64",
                                          "f8e4m3", "f8e5m2"};
  for (const std::string& from : types)
    for (const std::string& to : types) {
      if (from == to) continue;
      SCOPED_TRACE(from + " -> " + to);
      Compiled c = compileAndAssemble(
          elementwiseKernel(from, 1, "  %r = cast %v0 : " + tileOf(to) + "\n", to));
      bool floatToInt = (from[0] == 'f' || from[0] == 'b') && (to[0] == 'i' || to[0] == 'u') && to != "i1";
      if (floatToInt) {
        EXPECT_NE(c.llvm.find(".sat."), std::string::npos) << "float->int must saturate";
      }
    }
}

TEST(NVPTXOps, BitcastsCompareSelectAndPointers) {
  compileAndAssemble(elementwiseKernel("f32", 1, "  %r = bitcast %v0 : " + tileOf("i32") + "\n", "i32"));
  compileAndAssemble(elementwiseKernel("f8e4m3", 1, "  %r = bitcast %v0 : " + tileOf("u8") + "\n", "u8"));
  for (const char* elem : {"i32", "u32", "f32", "f16"})
    for (const char* pred : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      SCOPED_TRACE(std::string(elem) + " " + pred);
      std::string body = "  %c = cmp %v0, %v1 {pred = \"" + std::string(pred) + "\"} : " + tileOf("i1") + "\n" +
                         "  %r = select %c, %v0, %v1 : " + tileOf(elem) + "\n";
      compileAndAssemble(elementwiseKernel(elem, 2, body, elem));
    }
  // Pointer arithmetic, comparison and casts to integers.
  std::string body = "  %q = addptr %p0, %offs : " + tileOf("ptr<f32>") + "\n" +
                     "  %c = cmp %q, %p1 {pred = \"lt\"} : " + tileOf("i1") + "\n" +
                     "  %a = cast %q : " + tileOf("i64") + "\n" + "  %z = constant {value = 0} : " + tileOf("i64") + "\n" +
                     "  %r = select %c, %a, %z : " + tileOf("i64") + "\n";
  compileAndAssemble(elementwiseKernel("f32", 2, body, "i64"));
}

TEST(NVPTXOps, MaskedLoadWithOtherAndVolatile) {
  std::string body = "  %z = constant {value = 128} : " + tileOf("i32") + "\n" +
                     "  %m = cmp %offs, %z {pred = \"lt\"} : " + tileOf("i1") + "\n" +
                     "  %d = constant {value = -1.5} : " + tileOf("f32") + "\n" +
                     "  %r = load %p1, %m, %d {volatile = true} : " + tileOf("f32") + "\n";
  Compiled c = compileAndAssemble(elementwiseKernel("f32", 2, body, "f32"));
  EXPECT_NE(c.ptx.find("ld.volatile.global"), std::string::npos) << c.ptx;
  EXPECT_NE(c.ptx.find("0fBFC00000"), std::string::npos) << "the `other` value -1.5 must appear";
}

TEST(NVPTXOps, AtomicsWithKindsSemanticsAndScopes) {
  struct Case { const char* elem; const char* kind; };
  for (Case k : {Case{"f32", "add"}, Case{"i32", "add"}, Case{"i32", "max"}, Case{"u32", "min"}, Case{"f32", "max"},
                 Case{"i32", "and"}, Case{"i64", "or"}, Case{"u64", "xor"}, Case{"f32", "xchg"}, Case{"f16", "add"}})
    for (const char* scope : {"cta", "gpu", "sys"}) {
      SCOPED_TRACE(std::string(k.elem) + " " + k.kind + " " + scope);
      std::string body = "  %r = atomic_rmw %p0, %v1 {kind = \"" + std::string(k.kind) + "\", scope = \"" + scope +
                         "\", sem = \"relaxed\"} : " + tileOf(k.elem) + "\n";
      compileAndAssemble(elementwiseKernel(k.elem, 2, body, k.elem), /*clean=*/false);
    }
  for (const char* elem : {"i32", "f32", "i64"})
    for (const char* sem : {"relaxed", "acquire", "release", "acq_rel"}) {
      SCOPED_TRACE(std::string(elem) + " cas " + sem);
      std::string body = "  %r = atomic_cas %p0, %v1, %v2 {scope = \"gpu\", sem = \"" + std::string(sem) + "\"} : " +
                         tileOf(elem) + "\n";
      Compiled c = compileAndAssemble(elementwiseKernel(elem, 3, body, elem));
      EXPECT_NE(c.ptx.find("atom"), std::string::npos);
    }
  Compiled cta = compileIR(elementwiseKernel(
      "i32", 2, "  %r = atomic_rmw %p0, %v1 {kind = \"add\", scope = \"cta\", sem = \"relaxed\"} : " + tileOf("i32") + "\n",
      "i32"));
  EXPECT_NE(cta.llvm.find("syncscope(\"block\")"), std::string::npos) << cta.llvm;
}

TEST(NVPTXOps, ScalarAtomicBroadcastsItsResult) {
  // A scalar atomic runs in one thread; its old value reaches every thread through shared memory.
  std::string text = R"(
func @counter(%p: ptr<i32>, %out: ptr<i32> {divisibility = 16}) attributes {num_warps = 4, smem_bytes = 16} {
  %one = constant {value = 1} : i32
  %old = atomic_rmw %p, %one {kind = "add", scope = "gpu", sem = "acq_rel", smem_bytes = 16, smem_offset = 0} : i32
  %offs = arange {end = 256, start = 0} : #T
  %v = splat %old : #V
  %ob = splat %out : #P
  %op = addptr %ob, %offs : #P
  store %op, %v
  return
}
)";
  Compiled c = compileAndAssemble(withLayouts(text, {{"#T", tileOf("i32")}, {"#V", tileOf("i32")},
                                                     {"#P", tileOf("ptr<i32>")}}));
  EXPECT_EQ(countOccurrences(c.ptx, "atom.global"), 1) << c.ptx;
  EXPECT_GE(countOccurrences(c.ptx, "bar.sync"), 1);
  EXPECT_GT(countOccurrences(c.ptx, "ld.shared"), 0);
}

const std::string kM = "#blocked{order = [1, 0], spt = [1, 2], tpw = [8, 4], wpc = [4, 1]}";  // 32x8 CTA tile

TEST(NVPTXOps, ShapeOpsInRegistersAndThroughSharedMemory) {
  const std::string P = kM;
  const std::string R = "#slice{dim = 1, parent = " + P + "}", C = "#slice{dim = 0, parent = " + P + "}";
  // Offsets of a 32x8 row-major tile in layout P.
  std::string prologue = R"(
  %i = arange {end = 32, start = 0} : tile<32xi32, #R>
  %j = arange {end = 8, start = 0} : tile<8xi32, #C>
  %i2 = expand_dims %i {axis = 1} : tile<32x1xi32, #P>
  %j2 = expand_dims %j {axis = 0} : tile<1x8xi32, #P>
  %k8 = constant {value = 8} : tile<32x1xi32, #P>
  %i8 = mul %i2, %k8 : tile<32x1xi32, #P>
  %ib = broadcast %i8 : tile<32x8xi32, #P>
  %jb = broadcast %j2 : tile<32x8xi32, #P>
  %offs = add %ib, %jb : tile<32x8xi32, #P>
  %base = splat %in : tile<32x8xptr<f32>, #P>
  %ptrs = addptr %base, %offs : tile<32x8xptr<f32>, #P>
  %x = load %ptrs : tile<32x8xf32, #P>
  %obase = splat %out : tile<32x8xptr<f32>, #P>
  %optrs = addptr %obase, %offs : tile<32x8xptr<f32>, #P>
)";
  auto kernel = [&](const std::string& body, const std::string& smem = "") {
    std::string attrs = smem.empty() ? "num_warps = 4" : "num_warps = 4, smem_bytes = " + smem;
    return withLayouts("func @k(%in: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}) attributes {" +
                           attrs + "} {\n" + prologue + body + "  return\n}\n",
                       {{"#P", P}, {"#R", R}, {"#C", C},
                        {"#T", "#blocked{order = [0, 1], spt = [2, 1], tpw = [4, 8], wpc = [1, 4]}"},
                        {"#F", "#blocked{order = [0], spt = [2], tpw = [32], wpc = [4]}"},
                        {"#G", "#blocked{order = [0], spt = [1], tpw = [32], wpc = [4]}"},
                        {"#J", "#blocked{order = [2, 1, 0], spt = [1, 2, 2], tpw = [8, 4, 1], wpc = [4, 1, 1]}"}});
  };
  // trans to 8x32 in a transposed layout: registers suffice (the same threads hold the same elements).
  Compiled t = compileAndAssemble(kernel(R"(
  %t = trans %x {perm = [1, 0]} : tile<8x32xf32, #T>
  %u = trans %t {perm = [1, 0]} : tile<32x8xf32, #P>
  store %optrs, %u
)"));
  EXPECT_EQ(countOccurrences(t.ptx, "bar.sync"), 0) << t.ptx;
  // reshape to 256 in a 1-D layout whose threads hold the same elements: registers suffice.
  Compiled f = compileAndAssemble(kernel(R"(
  %f = reshape %x : tile<256xf32, #F>
  %g = reshape %f : tile<32x8xf32, #P>
  store %optrs, %g
)"));
  EXPECT_EQ(countOccurrences(f.ptx, "bar.sync"), 0) << f.ptx;
  // ... and to one whose threads do not: through the padded exchange buffer (32 rows of 8+1, then 1 row of 257).
  Compiled r = compileAndAssemble(kernel(R"(
  %f = reshape %x {smem_bytes = 1152, smem_offset = 0} : tile<256xf32, #G>
  %g = reshape %f {smem_bytes = 1040, smem_offset = 1152} : tile<32x8xf32, #P>
  store %optrs, %g
)", "2192"));
  EXPECT_EQ(countOccurrences(r.ptx, "bar.sync"), 2) << r.ptx;
  // join/split in registers, cat through shared memory.
  compileAndAssemble(kernel(R"(
  %jn = join %x, %x : tile<32x8x2xf32, #J>
  %a, %b = split %jn : tile<32x8xf32, #P>, tile<32x8xf32, #P>
  %s = add %a, %b : tile<32x8xf32, #P>
  store %optrs, %s
)"));
  // cat in registers (the second operand lands in the second repetition), then a column reduction across warps.
  compileAndAssemble(kernel(R"(
  %c = cat %x, %x : tile<64x8xf32, #P>
  %m = reduce %c {axis = 0, smem_bytes = 128, smem_offset = 0} : tile<8xf32, #C> {
  ^(%p: f32, %q: f32):
    %mx = max %p, %q : f32
    yield %mx
  }
  %m2 = expand_dims %m {axis = 0} : tile<1x8xf32, #P>
  %mb = broadcast %m2 : tile<32x8xf32, #P>
  store %optrs, %mb
)", "128"));
}

TEST(NVPTXOps, ScanInclusiveAndReverse) {
  for (const char* reverse : {"false", "true"}) {
    std::string body = "  %r = scan %v0 {axis = 0, reverse = " + std::string(reverse) +
                       ", smem_bytes = 1024, smem_offset = 0} : " + tileOf("f32") +
                       " {\n  ^(%a: f32, %b: f32):\n    %s = add %a, %b : f32\n    yield %s\n  }\n";
    std::string text = elementwiseKernel("f32", 1, body, "f32");
    text.replace(text.find("num_warps = 4"), 13, "num_warps = 4, smem_bytes = 1024");
    Compiled c = compileAndAssemble(text);
    EXPECT_EQ(countOccurrences(c.ptx, "bar.sync"), 1) << c.ptx;  // between writing and reading the warp totals
  }
}

std::string dotKernel(const std::string& in, const std::string& acc, const std::string& precision) {
  // 32x16 · 16x32 + 32x32, operands in a 2-D blocked layout; staged through shared memory.
  const std::string L = "#blocked{order = [1, 0], spt = [1, 4], tpw = [4, 8], wpc = [4, 1]}";
  int64_t inBytes = in == "f32" ? 4 : in == "f16" || in == "bf16" ? 2 : 1;
  int64_t need = ((32 * 16 * inBytes + 15) / 16 * 16) + ((16 * 32 * inBytes + 15) / 16 * 16);
  std::string s = "func @dot(%a: ptr<" + in + "> {divisibility = 16}, %b: ptr<" + in + "> {divisibility = 16}, %c: ptr<" +
                  acc + "> {divisibility = 16}) attributes {num_warps = 4, smem_bytes = " + std::to_string(need) + "} {\n";
  auto load = [&](const std::string& name, const std::string& ptr, const std::string& elem, int rows, int cols) {
    std::string t = "tile<" + std::to_string(rows) + "x" + std::to_string(cols);
    std::string r;
    r += "  %" + name + "i = arange {end = " + std::to_string(rows) + ", start = 0} : tile<" + std::to_string(rows) +
         "xi32, #slice{dim = 1, parent = " + L + "}>\n";
    r += "  %" + name + "j = arange {end = " + std::to_string(cols) + ", start = 0} : tile<" + std::to_string(cols) +
         "xi32, #slice{dim = 0, parent = " + L + "}>\n";
    r += "  %" + name + "i2 = expand_dims %" + name + "i {axis = 1} : " + t.substr(0, t.find('x')) + "x1xi32, " + L + ">\n";
    r += "  %" + name + "j2 = expand_dims %" + name + "j {axis = 0} : tile<1x" + std::to_string(cols) + "xi32, " + L + ">\n";
    r += "  %" + name + "k = constant {value = " + std::to_string(cols) + "} : " + t.substr(0, t.find('x')) + "x1xi32, " + L + ">\n";
    r += "  %" + name + "ik = mul %" + name + "i2, %" + name + "k : " + t.substr(0, t.find('x')) + "x1xi32, " + L + ">\n";
    r += "  %" + name + "ib = broadcast %" + name + "ik : " + t + "xi32, " + L + ">\n";
    r += "  %" + name + "jb = broadcast %" + name + "j2 : " + t + "xi32, " + L + ">\n";
    r += "  %" + name + "o = add %" + name + "ib, %" + name + "jb : " + t + "xi32, " + L + ">\n";
    r += "  %" + name + "s = splat %" + ptr + " : " + t + "xptr<" + elem + ">, " + L + ">\n";
    r += "  %" + name + "p = addptr %" + name + "s, %" + name + "o : " + t + "xptr<" + elem + ">, " + L + ">\n";
    r += "  %" + name + "v = load %" + name + "p : " + t + "x" + elem + ", " + L + ">\n";
    return r;
  };
  s += load("x", "a", in, 32, 16) + load("y", "b", in, 16, 32) + load("z", "c", acc, 32, 32);
  s += "  %d = dot %xv, %yv, %zv {input_precision = \"" + precision + "\", smem_bytes = " + std::to_string(need) +
       ", smem_offset = 0} : tile<32x32x" + acc + ", " + L + ">\n";
  s += "  store %zp, %d\n  return\n}\n";
  return s;
}

TEST(NVPTXOps, DotWithFmaForEveryInputType) {
  struct Case { const char* in; const char* acc; const char* precision; };
  for (Case k : {Case{"f16", "f32", "ieee"}, Case{"f16", "f16", "ieee"}, Case{"bf16", "f32", "ieee"},
                 Case{"f32", "f32", "ieee"}, Case{"f32", "f32", "tf32"}, Case{"i8", "i32", "ieee"},
                 Case{"f8e4m3", "f32", "ieee"}, Case{"f8e5m2", "f32", "ieee"}}) {
    SCOPED_TRACE(std::string(k.in) + " -> " + k.acc + " " + k.precision);
    Compiled c = compileAndAssemble(dotKernel(k.in, k.acc, k.precision));
    EXPECT_EQ(countOccurrences(c.ptx, "bar.sync"), 1) << c.ptx;
    const char* mac = std::string(k.acc) == "i32" ? "mad.lo.s32" : "fma.rn.f32";
    EXPECT_NE(c.ptx.find(mac), std::string::npos) << c.ptx;
  }
}

TEST(NVPTXOps, IfWhileDebugPrintAndAssert) {
  std::string body = R"(
  %zero = constant {value = 0} : i32
  %ten = constant {value = 10} : i32
  %one = constant {value = 1} : i32
  %n = while %zero : i32 {
  ^(%w: i32):
    %c = cmp %w, %ten {pred = "lt"} : i1
    yield %c
  } {
  ^(%w2: i32):
    %w3 = add %w2, %one : i32
    yield %w3
  }
  %big = cmp %n, %ten {pred = "ge"} : i1
  %r = if %big : #T {
    yield %v0
  } {
    %neg = neg %v0 : #T
    yield %neg
  }
  %ok = cmp %r, %r {pred = "eq"} : #B
  device_assert %ok {msg = "values must not be NaN"}
  debug_print %n, %r {prefix = "n, r ="}
)";
  std::string text = withLayouts(elementwiseKernel("f32", 1, body, "f32"), {{"#T", tileOf("f32")}, {"#B", tileOf("i1")}});
  Compiled c = compileAndAssemble(text, /*clean=*/false);  // vprintf needs a local argument buffer
  EXPECT_NE(c.ptx.find("vprintf"), std::string::npos);
  EXPECT_NE(c.ptx.find("__assertfail"), std::string::npos);
  EXPECT_NE(c.llvm.find("while.before"), std::string::npos);
  EXPECT_NE(c.llvm.find("if.then"), std::string::npos);
}

TEST(NVPTXOps, UnknownArchAndTargetAreClearErrors) {
  EXPECT_THROW(compileIR(binary("f32", "add"), "sm_70"), Error);
  EXPECT_THROW(backends::createTarget("spirv"), Error);
}

}  // namespace
}  // namespace tessera::testing
