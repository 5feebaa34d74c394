// Every op family through the AMDGPU backend, for gfx90a and gfx942. No AMD GPU exists here: each kernel goes
// through the JIT pipeline (layouts for wave64), is emitted as an HSA code object and inspected with
// llvm-readelf-19 / llvm-objdump-19 (kernel symbol, wavefront size 64, LDS = the allocator's smem_bytes, no
// scratch). Nothing is executed on AMD hardware.
#include <gtest/gtest.h>

#include <functional>

#include "AMDGPUTestUtil.h"
#include "ir/Error.h"

namespace tessera::testing {
namespace {

std::string tileOf(const std::string& elem) { return "tile<256x" + elem + ">"; }

// Loads `operands` tiles of `elem` (%v0, %v1, ...), runs `body` (which defines %r of `resultElem`), stores %r.
std::string elementwiseKernel(const std::string& elem, int operands, const std::string& body,
                              const std::string& resultElem) {
  std::string it = tileOf("i32");
  std::string s = "func @k(%in: ptr<" + elem + "> {divisibility = 16}, %out: ptr<" + resultElem +
                  "> {divisibility = 16}) {\n";
  s += "  %offs = arange {end = 256, start = 0} : " + it + "\n";
  s += "  %ib = splat %in : " + tileOf("ptr<" + elem + ">") + "\n";
  for (int i = 0; i < operands; ++i) {
    std::string n = std::to_string(i);
    s += "  %k" + n + " = constant {value = " + std::to_string(256 * i) + "} : " + it + "\n";
    s += "  %o" + n + " = add %offs, %k" + n + " : " + it + "\n";
    s += "  %p" + n + " = addptr %ib, %o" + n + " : " + tileOf("ptr<" + elem + ">") + "\n";
    s += "  %v" + n + " = load %p" + n + " : " + tileOf(elem) + "\n";
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
  jit::CompiledKernel hi = compileBoth(binary("u32", "umulhi"));
  EXPECT_NE(disassemble(hi.binary).find("v_mul_hi_u32"), std::string::npos);
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
  // Fast math uses the hardware's exp/log/rsq directly.
  std::string dis = disassemble(compileBoth(unary("f32", "exp2")).binary);
  EXPECT_NE(dis.find("v_exp_f32"), std::string::npos) << dis;
  dis = disassemble(compileBoth(unary("f32", "rsqrt")).binary);
  EXPECT_NE(dis.find("v_rsq_f32"), std::string::npos) << dis;
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
      compileBoth(elementwiseKernel(from, 1, "  %r = cast %v0 : " + tileOf(to) + "\n", to));
    }
}

TEST(AMDGPUOpsNoHardware, BitcastsCompareSelectPointersAndMaskedLoads) {
  compileBoth(elementwiseKernel("f32", 1, "  %r = bitcast %v0 : " + tileOf("i32") + "\n", "i32"));
  for (const char* elem : {"i32", "u32", "f32", "f16"})
    for (const char* pred : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      SCOPED_TRACE(std::string(elem) + " " + pred);
      compileBoth(elementwiseKernel(elem, 2,
                                    "  %c = cmp %v0, %v1 {pred = \"" + std::string(pred) + "\"} : " + tileOf("i1") +
                                        "\n  %r = select %c, %v0, %v1 : " + tileOf(elem) + "\n",
                                    elem));
    }
  compileBoth(elementwiseKernel("f32", 2,
                                "  %q = addptr %p0, %offs : " + tileOf("ptr<f32>") + "\n  %c = cmp %q, %p1 {pred = \"lt\"} : " +
                                    tileOf("i1") + "\n  %a = cast %q : " + tileOf("i64") +
                                    "\n  %z = constant {value = 0} : " + tileOf("i64") +
                                    "\n  %r = select %c, %a, %z : " + tileOf("i64") + "\n",
                                "i64"));
  compileBoth(elementwiseKernel("f32", 2,
                                "  %z = constant {value = 128} : " + tileOf("i32") + "\n  %m = cmp %offs, %z {pred = \"lt\"} : " +
                                    tileOf("i1") + "\n  %d = constant {value = -1.5} : " + tileOf("f32") +
                                    "\n  %r = load %p1, %m, %d {volatile = true} : " + tileOf("f32") + "\n",
                                "f32"));
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
                                    k.elem));
    }
  for (const char* sem : {"relaxed", "acquire", "release", "acq_rel"}) {
    SCOPED_TRACE(std::string("cas ") + sem);
    jit::CompiledKernel c = compileBoth(elementwiseKernel(
        "i32", 3, "  %r = atomic_cas %p0, %v1, %v2 {scope = \"gpu\", sem = \"" + std::string(sem) + "\"} : " +
                      tileOf("i32") + "\n",
        "i32"));
    EXPECT_NE(disassemble(c.binary).find("global_atomic_cmpswap"), std::string::npos);
  }
  jit::CompiledKernel cta = compileBoth(elementwiseKernel(
      "i32", 2, "  %r = atomic_rmw %p0, %v1 {kind = \"add\", scope = \"cta\", sem = \"relaxed\"} : " + tileOf("i32") + "\n",
      "i32"));
  EXPECT_NE(cta.llvmIR.find("syncscope(\"workgroup\")"), std::string::npos);
  // A scalar atomic runs once; its old value reaches every thread through LDS.
  jit::CompiledKernel scalar = compileBoth(R"(
func @counter(%p: ptr<i32>, %out: ptr<i32> {divisibility = 16}) {
  %one = constant {value = 1} : i32
  %old = atomic_rmw %p, %one {kind = "add", scope = "gpu", sem = "acq_rel"} : i32
  %offs = arange {end = 256, start = 0} : tile<256xi32>
  %v = splat %old : tile<256xi32>
  %ob = splat %out : tile<256xptr<i32>>
  %op = addptr %ob, %offs : tile<256xptr<i32>>
  store %op, %v
  return
}
)");
  EXPECT_GT(scalar.sharedBytes, 0);
  EXPECT_NE(disassemble(scalar.binary).find("s_barrier"), std::string::npos);
}

// Row-major 32x64 offsets, then `body` on %x (loaded) storing through %optrs.
std::string shapeKernel(const std::string& body) {
  return R"(
func @k(%in: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}) {
  %i = arange {end = 32, start = 0} : tile<32xi32>
  %j = arange {end = 64, start = 0} : tile<64xi32>
  %i2 = expand_dims %i {axis = 1} : tile<32x1xi32>
  %j2 = expand_dims %j {axis = 0} : tile<1x64xi32>
  %k64 = constant {value = 64} : tile<32x1xi32>
  %i64 = mul %i2, %k64 : tile<32x1xi32>
  %ib = broadcast %i64 : tile<32x64xi32>
  %jb = broadcast %j2 : tile<32x64xi32>
  %offs = add %ib, %jb : tile<32x64xi32>
  %base = splat %in : tile<32x64xptr<f32>>
  %ptrs = addptr %base, %offs : tile<32x64xptr<f32>>
  %x = load %ptrs : tile<32x64xf32>
  %obase = splat %out : tile<32x64xptr<f32>>
  %optrs = addptr %obase, %offs : tile<32x64xptr<f32>>
)" + body + "  return\n}\n";
}

TEST(AMDGPUOpsNoHardware, ShapeOpsReductionsAndScans) {
  // Transpose then store transposed: the layouts differ, so data goes through LDS with ds_bpermute-free code.
  compileBoth(shapeKernel(R"(
  %t = trans %x {perm = [1, 0]} : tile<64x32xf32>
  %u = trans %t {perm = [1, 0]} : tile<32x64xf32>
  store %optrs, %u
)"));
  compileBoth(shapeKernel(R"(
  %f = reshape %x : tile<2048xf32>
  %g = reshape %f : tile<32x64xf32>
  store %optrs, %g
)"));
  compileBoth(shapeKernel(R"(
  %jn = join %x, %x : tile<32x64x2xf32>
  %a, %b = split %jn : tile<32x64xf32>, tile<32x64xf32>
  %s = add %a, %b : tile<32x64xf32>
  store %optrs, %s
)"));
  // Row reductions cross lanes: the exchange is ds_bpermute, never an NVIDIA shuffle.
  for (const char* axis : {"0", "1"}) {
    SCOPED_TRACE(std::string("reduce axis ") + axis);
    std::string dim = std::string(axis) == "0" ? "64" : "32";
    std::string keep = std::string(axis) == "0" ? "tile<1x64xf32>" : "tile<32x1xf32>";
    jit::CompiledKernel k = compileBoth(shapeKernel(
        "  %m = reduce %x {axis = " + std::string(axis) + "} : tile<" + dim + "xf32> {\n  ^(%p: f32, %q: f32):\n"
        "    %mx = max %p, %q : f32\n    yield %mx\n  }\n" +
        "  %m2 = expand_dims %m {axis = " + axis + "} : " + keep + "\n  %mb = broadcast %m2 : tile<32x64xf32>\n" +
        "  store %optrs, %mb\n"));
    std::string dis = disassemble(k.binary);
    EXPECT_NE(dis.find("ds_bpermute_b32"), std::string::npos) << dis;
  }
  for (const char* reverse : {"false", "true"}) {
    SCOPED_TRACE(std::string("scan reverse = ") + reverse);
    compileBoth(elementwiseKernel("f32", 1,
                                  "  %r = scan %v0 {axis = 0, reverse = " + std::string(reverse) + "} : " +
                                      tileOf("f32") + " {\n  ^(%a: f32, %b: f32):\n    %s = add %a, %b : f32\n"
                                      "    yield %s\n  }\n",
                                  "f32"));
  }
}

std::string dotKernel(const std::string& in, const std::string& acc, const std::string& precision, int m = 32,
                      int n = 32, int k = 16) {
  auto load = [&](const std::string& name, const std::string& ptr, const std::string& elem, int rows, int cols) {
    std::string R = std::to_string(rows), C = std::to_string(cols), t = "tile<" + R + "x" + C;
    std::string r;
    r += "  %" + name + "i = arange {end = " + R + ", start = 0} : tile<" + R + "xi32>\n";
    r += "  %" + name + "j = arange {end = " + C + ", start = 0} : tile<" + C + "xi32>\n";
    r += "  %" + name + "i2 = expand_dims %" + name + "i {axis = 1} : tile<" + R + "x1xi32>\n";
    r += "  %" + name + "j2 = expand_dims %" + name + "j {axis = 0} : tile<1x" + C + "xi32>\n";
    r += "  %" + name + "k = constant {value = " + C + "} : tile<" + R + "x1xi32>\n";
    r += "  %" + name + "ik = mul %" + name + "i2, %" + name + "k : tile<" + R + "x1xi32>\n";
    r += "  %" + name + "ib = broadcast %" + name + "ik : " + t + "xi32>\n";
    r += "  %" + name + "jb = broadcast %" + name + "j2 : " + t + "xi32>\n";
    r += "  %" + name + "o = add %" + name + "ib, %" + name + "jb : " + t + "xi32>\n";
    r += "  %" + name + "s = splat %" + ptr + " : " + t + "xptr<" + elem + ">>\n";
    r += "  %" + name + "p = addptr %" + name + "s, %" + name + "o : " + t + "xptr<" + elem + ">>\n";
    r += "  %" + name + "v = load %" + name + "p : " + t + "x" + elem + ">\n";
    return r;
  };
  std::string s = "func @dot(%a: ptr<" + in + "> {divisibility = 16}, %b: ptr<" + in + "> {divisibility = 16}, %c: ptr<" +
                  acc + "> {divisibility = 16}) {\n";
  s += load("x", "a", in, m, k) + load("y", "b", in, k, n) + load("z", "c", acc, m, n);
  s += "  %d = dot %xv, %yv, %zv {input_precision = \"" + precision + "\"} : tile<" + std::to_string(m) + "x" +
       std::to_string(n) + "x" + acc + ">\n";
  s += "  store %zp, %d\n  return\n}\n";
  return s;
}

TEST(AMDGPUOpsNoHardware, DotForEveryInputType) {
  struct Case { const char* in; const char* acc; const char* precision; };
  for (Case c : {Case{"f16", "f32", "ieee"}, Case{"f16", "f16", "ieee"}, Case{"bf16", "f32", "ieee"},
                 Case{"f32", "f32", "ieee"}, Case{"f32", "f32", "tf32"}, Case{"i8", "i32", "ieee"},
                 Case{"f8e4m3", "f32", "ieee"}, Case{"f8e5m2", "f32", "ieee"}}) {
    SCOPED_TRACE(std::string(c.in) + " -> " + c.acc + " " + c.precision);
    jit::CompiledKernel k = compileBoth(dotKernel(c.in, c.acc, c.precision));
    EXPECT_GT(k.sharedBytes, 0);  // operands are staged in LDS
    EXPECT_NE(disassemble(k.binary).find("s_barrier"), std::string::npos);
  }
}

TEST(AMDGPUOpsNoHardware, IfAndWhile) {
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
  %r = if %big : tile<256xf32> {
    yield %v0
  } {
    %neg = neg %v0 : tile<256xf32>
    yield %neg
  }
)";
  jit::CompiledKernel k = compileBoth(elementwiseKernel("f32", 1, body, "f32"));
  EXPECT_NE(k.llvmIR.find("while.before"), std::string::npos);
  EXPECT_NE(k.llvmIR.find("if.then"), std::string::npos);
}

// debug_print and device_assert: amdgpu_printf_test.cpp.

TEST(AMDGPUOpsNoHardware, CodeObjectVersion4AndKernelAbi) {
  jit::CompiledKernel k = compileTextForAmdgpu(binary("f32", "add"), "gfx942");
  EXPECT_NE(k.llvmIR.find("amdgpu_kernel void @k"), std::string::npos) << k.llvmIR;
  EXPECT_NE(k.llvmIR.find("\"amdgpu-flat-work-group-size\"=\"1,256\""), std::string::npos) << k.llvmIR;
  EXPECT_NE(k.llvmIR.find("!\"amdhsa_code_object_version\", i32 400"), std::string::npos) << k.llvmIR;
  EXPECT_EQ(k.warpSize, 64);
  if (!haveLlvmTools()) GTEST_SKIP() << "llvm-readelf-19 not installed";
  CodeObjectNotes n = readNotes(k.binary);
  // Code object v4 metadata is version 1.1 (v5 would be 1.2).
  EXPECT_TRUE(std::regex_search(n.text, std::regex(R"(amdhsa\.version:\s*\n\s*- 1\n\s*- 1\n)"))) << n.text;
  EXPECT_NE(n.text.find(".max_flat_workgroup_size: 256"), std::string::npos) << n.text;
  // Eight warps: 512 work-items.
  jit::CompiledKernel eight = compileTextForAmdgpu(binary("f32", "add"), "gfx90a", 8);
  EXPECT_NE(readNotes(eight.binary).text.find(".max_flat_workgroup_size: 512"), std::string::npos);
}

TEST(AMDGPUOpsNoHardware, UnknownArchIsAClearError) {
  try {
    compileTextForAmdgpu(binary("f32", "add"), "gfx1100");
    ADD_FAILURE() << "gfx1100 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported arch 'gfx1100'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::testing
