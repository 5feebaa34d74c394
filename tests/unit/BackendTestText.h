// Text helpers shared by the backend tests that generate kernels over many element types and ops (the NVPTX and
// AMDGPU op matrices, the mma/MFMA layout policies); fixed kernels whose output is only grepped are lit tests
// under tests/lit/{nvptx,amdgpu}. A layout gives laid-out IR for the lowering, with the scratch the allocator
// would give; an empty layout gives layout-free IR for the JIT pipeline.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::testing {

inline int countOccurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size())) ++n;
  return n;
}

// `tile<SHAPE x elem>`, in `layout` unless it is empty.
inline std::string tileText(const std::string& shape, const std::string& elem, const std::string& layout) {
  return "tile<" + shape + "x" + elem + (layout.empty() ? "" : ", " + layout) + ">";
}

// A kernel @k(%in, %out) that loads `operands` 256-element tiles of `elem` from %in at offsets 0, 256, ... (%v0,
// %v1, ...; their pointers are %p0, %p1, ..., the offsets %offs), runs `body`, which defines %r of `resultElem`,
// and stores %r. Laid out (`layout` not empty), the kernel says it runs 4 warps.
inline std::string elementwiseKernel(const std::string& elem, int operands, const std::string& body,
                                     const std::string& resultElem, const std::string& layout) {
  auto tile = [&](const std::string& e) { return tileText("256", e, layout); };
  std::string s = "func @k(%in: ptr<" + elem + "> {divisibility = 16}, %out: ptr<" + resultElem +
                  "> {divisibility = 16}) " + (layout.empty() ? "" : "attributes {num_warps = 4} ") + "{\n";
  s += "  %offs = arange {end = 256, start = 0} : " + tile("i32") + "\n";
  s += "  %ib = splat %in : " + tile("ptr<" + elem + ">") + "\n";
  for (int i = 0; i < operands; ++i) {
    const std::string n = std::to_string(i);
    s += "  %k" + n + " = constant {value = " + std::to_string(256 * i) + "} : " + tile("i32") + "\n";
    s += "  %o" + n + " = add %offs, %k" + n + " : " + tile("i32") + "\n";
    s += "  %p" + n + " = addptr %ib, %o" + n + " : " + tile("ptr<" + elem + ">") + "\n";
    s += "  %v" + n + " = load %p" + n + " : " + tile(elem) + "\n";
  }
  s += body;
  s += "  %ob = splat %out : " + tile("ptr<" + resultElem + ">") + "\n";
  s += "  %op = addptr %ob, %offs : " + tile("ptr<" + resultElem + ">") + "\n";
  s += "  store %op, %r\n  return\n}\n";
  return s;
}

// dot(a, b, c) of an m x k by k x n tile product into c (m x n of `acc`), each operand loaded row-major, stored back
// to c. Laid out, a and b are in `operandLayout`, c in `accLayout`, and the dot has the scratch for staging both
// operands; otherwise the IR is layout-free. inLoop: a and b are loaded, and the dot accumulates, in a `for` of %n
// iterations (a fourth parameter), as a matmul's K loop does.
struct DotKernel {
  std::string in, acc;
  int64_t m = 32, n = 32, k = 16;
  std::string precision = "ieee";
  std::string operandLayout{}, accLayout{};  // empty: layout-free
  bool inLoop = false;
};

inline std::string dotKernel(const DotKernel& d) {
  const bool laidOut = !d.accLayout.empty();
  auto slice = [](int dim, const std::string& parent) {
    return parent.empty() ? parent : "#slice{dim = " + std::to_string(dim) + ", parent = " + parent + "}";
  };
  auto load = [&](const std::string& name, const std::string& ptr, const std::string& elem, int64_t rows,
                  int64_t cols, const std::string& layout) {
    const std::string R = std::to_string(rows), C = std::to_string(cols), RC = R + "x" + C;
    const std::string v = "%" + name;
    std::string r;
    r += "  " + v + "i = arange {end = " + R + ", start = 0} : " + tileText(R, "i32", slice(1, layout)) + "\n";
    r += "  " + v + "j = arange {end = " + C + ", start = 0} : " + tileText(C, "i32", slice(0, layout)) + "\n";
    r += "  " + v + "i2 = expand_dims " + v + "i {axis = 1} : " + tileText(R + "x1", "i32", layout) + "\n";
    r += "  " + v + "j2 = expand_dims " + v + "j {axis = 0} : " + tileText("1x" + C, "i32", layout) + "\n";
    r += "  " + v + "k = constant {value = " + C + "} : " + tileText(R + "x1", "i32", layout) + "\n";
    r += "  " + v + "ik = mul " + v + "i2, " + v + "k : " + tileText(R + "x1", "i32", layout) + "\n";
    r += "  " + v + "ib = broadcast " + v + "ik : " + tileText(RC, "i32", layout) + "\n";
    r += "  " + v + "jb = broadcast " + v + "j2 : " + tileText(RC, "i32", layout) + "\n";
    r += "  " + v + "o = add " + v + "ib, " + v + "jb : " + tileText(RC, "i32", layout) + "\n";
    r += "  " + v + "s = splat %" + ptr + " : " + tileText(RC, "ptr<" + elem + ">", layout) + "\n";
    r += "  " + v + "p = addptr " + v + "s, " + v + "o : " + tileText(RC, "ptr<" + elem + ">", layout) + "\n";
    r += "  " + v + "v = load " + v + "p : " + tileText(RC, elem, layout) + "\n";
    return r;
  };
  const int64_t bytes = d.in == "f32" ? 4 : d.in == "f16" || d.in == "bf16" ? 2 : 1;
  const std::string scratch =
      std::to_string((d.m * d.k * bytes + 15) / 16 * 16 + (d.k * d.n * bytes + 15) / 16 * 16);
  const std::string accTile = tileText(std::to_string(d.m) + "x" + std::to_string(d.n), d.acc, d.accLayout);
  std::string s = "func @dot(%a: ptr<" + d.in + "> {divisibility = 16}, %b: ptr<" + d.in +
                  "> {divisibility = 16}, %c: ptr<" + d.acc + "> {divisibility = 16}" + (d.inLoop ? ", %n: i32" : "") +
                  ") " + (laidOut ? "attributes {num_warps = 4, smem_bytes = " + scratch + "} " : "") + "{\n";
  s += load("z", "c", d.acc, d.m, d.n, d.accLayout);
  const std::string operands =
      load("x", "a", d.in, d.m, d.k, d.operandLayout) + load("y", "b", d.in, d.k, d.n, d.operandLayout);
  const std::string dot = "dot %xv, %yv, " + std::string(d.inLoop ? "%acc" : "%zv") + " {input_precision = \"" +
                          d.precision + "\"" + (laidOut ? ", smem_bytes = " + scratch + ", smem_offset = 0" : "") +
                          "} : " + accTile + "\n";
  if (!d.inLoop) {
    s += operands + "  %d = " + dot;
  } else {
    s += "  %lb = constant {value = 0} : i32\n  %one = constant {value = 1} : i32\n";
    s += "  %d = for %lb, %n, %one, %zv : " + accTile + " {\n  ^(%i: i32, %acc: " + accTile + "):\n";
    s += operands + "  %dn = " + dot + "  yield %dn\n  }\n";
  }
  s += "  store %zp, %d\n  return\n}\n";
  return s;
}

}  // namespace tessera::testing
