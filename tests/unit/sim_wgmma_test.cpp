// wgmma under the emulator (jit/sim/runtime/WarpgroupMatrix.*, WarpgroupOperations.*): hand-built NVPTX modules
// issue the backend's wgmma inline asm (backends/nvptx/WgmmaAsm.h) on operands a warpgroup copied into shared
// memory, and the result is compared with a naive matmul, for each swizzle mode (none, 32, 64, 128 bytes) and both
// majors (K-major, MN-major through the transpose immediates) of A and B, f16 and bf16, with and without scale-d.
// The swizzled operands are placed with the backend's NVMMA layout (MmaLinearLayouts.h) and the accumulator read
// back with the backend's wgmma fragment, so the emulator's reading of the ISA is checked against the backend's.
// A from registers (16-bit) is placed with the backend's wgmma A fragment (wgmmaOperandAFragment) and checked the
// same way. Then the asynchrony checks: an operand overwritten, an accumulator read before the wait, a missing fence, a
// warpgroup that does not all arrive.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "backends/nvptx/MmaLinearLayouts.h"
#include "backends/nvptx/WgmmaAsm.h"
#include "ir/Error.h"
#include "ir/FloatFormats.h"
#include "ir/Layout.h"
#include "jit/sim/HostJit.h"
#include "jit/sim/HostModule.h"
#include "jit/sim/RuntimeSymbols.h"
#include "jit/sim/runtime/Launch.h"
#include "jit/sim/runtime/WarpgroupMatrix.h"

namespace tessera::testing {
namespace {

using backends::nvptx::WgmmaInput;
using backends::nvptx::WgmmaMma;
using sim::FindingKind;

// ---- operands in shared memory

struct Operand {
  std::vector<uint8_t> bytes;  // the operand's region of shared memory
  uint32_t start = 0, leading = 0, stride = 0, swizzle = 0;  // descriptor fields in bytes (start: in the region)
};

uint64_t descriptor(const Operand& o, uint32_t regionOffset) {
  const uint64_t mode = o.swizzle == 128 ? 1 : o.swizzle == 64 ? 2 : o.swizzle == 32 ? 3 : 0;
  return ((regionOffset + o.start) >> 4 & 0x3FFF) | uint64_t(o.leading >> 4 & 0x3FFF) << 16 |
         uint64_t(o.stride >> 4 & 0x3FFF) << 32 | mode << 62;
}

// Stores the low `bytes` (1 or 2) bytes of `value`.
void put(std::vector<uint8_t>& image, uint32_t offset, uint16_t value, uint32_t bytes) {
  if (image.size() < offset + bytes) image.resize(offset + bytes, 0xEE);
  std::memcpy(&image[offset], &value, bytes);
}

// `values[row * K + k]` (rows along M or N, K = 32 bytes of elements of `eb` bytes along K) as a K-major or
// MN-major operand with the given swizzle. Swizzled operands sit inside a larger tile laid out by the backend's
// nvmmaSharedLayout, at its last K slice (K-major: the start address moves along the swizzled line; MN-major: to
// the second group of 16 K lines); the other elements hold filler.
Operand place(const std::vector<uint16_t>& values, uint32_t rows, bool mnMajor, uint32_t swizzle, uint32_t eb) {
  Operand o;
  o.swizzle = swizzle;
  const uint32_t K = 32 / eb, perChunk = 16 / eb;
  if (swizzle == 0) {
    // Core matrices of 8 x 16 bytes. K-major: 8 rows x 16 bytes of K; K neighbours LBO = 128 apart, row groups
    // SBO = 256. MN-major (16-bit): 8 K x 8 rows (rows contiguous); row chunks SBO = 128 apart, K groups LBO =
    // rows / 8 * 128.
    o.leading = mnMajor ? rows / 8 * 128 : 128;
    o.stride = mnMajor ? 128 : 256;
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t k = 0; k < K; ++k) {
        uint32_t at = mnMajor ? r / 8 * o.stride + k / 8 * o.leading + k % 8 * 16 + r % 8 * eb
                              : r / 8 * o.stride + k / perChunk * o.leading + r % 8 * 16 + k % perChunk * eb;
        put(o.bytes, at, values[r * K + k], eb);
      }
    return o;
  }
  const uint32_t lineElements = swizzle / eb;
  // K-major: rows x kTile, K contiguous; MN-major: 32 K lines x rows, rows contiguous.
  const uint32_t kTile = mnMajor ? 32 : std::max<uint32_t>(K, lineElements), k0 = kTile - K;
  const std::vector<int64_t> shape = mnMajor ? std::vector<int64_t>{kTile, rows} : std::vector<int64_t>{rows, kTile};
  ir::LinearLayout layout = backends::nvptx::nvmmaSharedLayout(shape, 1, eb, swizzle);
  std::map<std::pair<int64_t, int64_t>, uint32_t> offsetOf;
  for (int64_t e = 0; e < shape[0] * shape[1]; ++e) {
    std::vector<int64_t> at = layout.apply({e});
    offsetOf[{at[0], at[1]}] = static_cast<uint32_t>(e * eb);
  }
  for (uint32_t e = 0; e < shape[0] * shape[1]; ++e) put(o.bytes, e * eb, static_cast<uint16_t>(0x7C01 + e % 7), eb);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t k = 0; k < K; ++k)
      put(o.bytes, mnMajor ? offsetOf.at({k0 + k, r}) : offsetOf.at({r, k0 + k}), values[r * K + k], eb);
  // The start address is element (0, k0) of the unswizzled tile; 8-line groups are 8 lines apart; MN-major
  // blocks of one line's width hold all kTile lines.
  o.start = mnMajor ? k0 * swizzle : k0 * eb;
  o.stride = 8 * swizzle;
  o.leading = mnMajor ? kTile * swizzle : 16;  // K-major swizzled: not used (any value)
  return o;
}

// ---- the kernel

std::string escapeForIR(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += "\\0A";
    else if (c == '\t') out += "\\09";
    else if (c == '"') out += "\\22";
    else if (c == '\\') out += "\\5C";
    else out += c;
  }
  return out;
}

enum class Plant { None, OverwriteOperand, ReadBeforeWait, NoFence, ThreeWarpsArrive };

// Source lines the findings must name (the kernel's debug locations, in kernel.py).
constexpr unsigned kOverwriteLine = 40, kEarlyReadLine = 41, kMmaLine = 30;

// A one-warpgroup kernel: copy `imageBytes` of `image` into shared memory (16 bytes per thread per round), barrier,
// load this thread's n/2 accumulator registers from c (thread-major) and, for A in registers, its four A words from
// aIn (thread-major), fence, mma_async, commit, wait 0, store the registers to out (thread-major).
// As one group (`asGroup`: the fence, the mma_async, commit and wait in one asm, as the backend emits a dot), no
// plant but ThreeWarpsArrive applies.
std::string kernelIR(const WgmmaMma& mma, uint32_t imageBytes, Plant plant, bool asGroup = false) {
  const int r = mma.n / 2;
  std::string floats = "{";
  for (int i = 0; i < r; ++i) floats += std::string(i ? ", " : "") + "float";
  floats += "}";
  std::string ir =
      "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n"
      "target triple = \"nvptx64-nvidia-cuda\"\n"
      "@global_smem = external addrspace(3) global [0 x i8], align 16\n"
      "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
      "declare void @llvm.nvvm.barrier0()\n"
      "define ptx_kernel void @wgmma_kernel(ptr addrspace(1) %image, i64 %descA, i64 %descB, i32 %scaleD, "
      "ptr addrspace(1) %cIn, ptr addrspace(1) %out, ptr addrspace(1) %aIn) !dbg !2 {\n"
      "entry:\n"
      "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !10\n"
      "  %tid64 = zext i32 %tid to i64\n";
  for (uint32_t j = 0; j * 2048 < imageBytes; ++j) {
    const std::string s = std::to_string(j);
    ir += "  %c" + s + " = add i64 %tid64, " + std::to_string(128 * j) + "\n" +  //
          "  %o" + s + " = mul i64 %c" + s + ", 16\n" +
          "  %g" + s + " = getelementptr i8, ptr addrspace(1) %image, i64 %o" + s + "\n" +
          "  %v" + s + " = load <4 x i32>, ptr addrspace(1) %g" + s + ", align 16, !dbg !10\n" +
          "  %s" + s + " = getelementptr i8, ptr addrspace(3) @global_smem, i64 %o" + s + "\n" +
          "  store <4 x i32> %v" + s + ", ptr addrspace(3) %s" + s + ", align 16, !dbg !10\n";
  }
  ir += "  call void @llvm.nvvm.barrier0(), !dbg !10\n  %base = mul i64 %tid64, " + std::to_string(r) + "\n";
  std::string accumulator;
  for (int i = 0; i < r; ++i) {
    const std::string s = std::to_string(i);
    ir += "  %ci" + s + " = add i64 %base, " + s + "\n  %cp" + s + " = getelementptr float, ptr addrspace(1) %cIn, i64 %ci" +
          s + "\n  %acc" + s + " = load float, ptr addrspace(1) %cp" + s + ", align 4, !dbg !10\n";
    accumulator += ", float %acc" + s;
  }
  std::string aOperand = "i64 %descA";
  if (mma.aInRegisters) {
    aOperand.clear();
    for (int i = 0; i < 4; ++i) {
      const std::string s = std::to_string(i);
      ir += "  %ai" + s + " = add i64 %tid64, " + std::to_string(128 * i) + "\n  %ap" + s +
            " = getelementptr i32, ptr addrspace(1) %aIn, i64 %ai" + s + "\n  %a" + s +
            " = load i32, ptr addrspace(1) %ap" + s + ", align 4, !dbg !10\n";
      aOperand += std::string(i ? ", " : "") + "i32 %a" + s;
    }
  }
  if (plant == Plant::ThreeWarpsArrive) ir += "  %lastWarp = icmp uge i32 %tid, 96\n  br i1 %lastWarp, label %done, label %issue\nissue:\n";
  const backends::nvptx::WgmmaGroup group{mma, 1, 1, 0};
  if (asGroup)
    ir += "  %w = call " + floats + " asm sideeffect \"" + escapeForIR(backends::nvptx::wgmmaGroupAsm(group)) +
          "\", \"" + backends::nvptx::wgmmaGroupConstraints(group) + "\"(" + aOperand + ", i64 %descB, i32 %scaleD" +
          accumulator + "), !dbg !11\n";
  if (plant != Plant::NoFence && !asGroup)
    ir += "  call void asm sideeffect \"" + escapeForIR(backends::nvptx::kWgmmaFenceAsm) + "\", \"\"(), !dbg !10\n";
  if (!asGroup) {
    ir += "  %d = call " + floats + " asm sideeffect \"" + escapeForIR(backends::nvptx::wgmmaMmaAsm(mma)) + "\", \"" +
          backends::nvptx::wgmmaMmaConstraints(mma.n, mma.aInRegisters) + "\"(" + aOperand + ", i64 %descB, i32 %scaleD" +
          accumulator +
          "), !dbg !11\n";
    ir += "  call void asm sideeffect \"" + escapeForIR(backends::nvptx::kWgmmaCommitAsm) + "\", \"\"(), !dbg !10\n";
    if (plant == Plant::OverwriteOperand)  // every thread overwrites 4 bytes at the start of the shared memory (A)
      ir += "  %own = getelementptr i32, ptr addrspace(3) @global_smem, i32 %tid\n"
            "  store i32 0, ptr addrspace(3) %own, align 4, !dbg !12\n";
    std::string waited;
    for (int i = 0; i < r; ++i) {
      ir += "  %d" + std::to_string(i) + " = extractvalue " + floats + " %d, " + std::to_string(i) + "\n";
      waited += std::string(i ? ", " : "") + "float %d" + std::to_string(i);
    }
    if (plant == Plant::ReadBeforeWait)
      ir += "  %early = getelementptr float, ptr addrspace(1) %out, i64 %base\n"
            "  store float %d0, ptr addrspace(1) %early, align 4, !dbg !13\n";
    ir += "  %w = call " + floats + " asm sideeffect \"" + escapeForIR(backends::nvptx::wgmmaWaitAsm(0)) + "\", \"" +
          backends::nvptx::wgmmaWaitConstraints(r) + "\"(" + waited + "), !dbg !10\n";
  }
  for (int i = 0; i < r; ++i) {
    const std::string s = std::to_string(i);
    ir += "  %w" + s + " = extractvalue " + floats + " %w, " + s + "\n  %op" + s +
          " = getelementptr float, ptr addrspace(1) %out, i64 %ci" + s + "\n  store float %w" + s +
          ", ptr addrspace(1) %op" + s + ", align 4, !dbg !10\n";
  }
  if (plant == Plant::ThreeWarpsArrive) ir += "  br label %done\ndone:\n";
  ir += "  ret void, !dbg !10\n}\n"
        "!llvm.dbg.cu = !{!0}\n"
        "!llvm.module.flags = !{!20}\n"
        "!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus, file: !1, producer: \"test\", isOptimized: true, "
        "runtimeVersion: 0, emissionKind: LineTablesOnly)\n"
        "!1 = !DIFile(filename: \"kernel.py\", directory: \"\")\n"
        "!2 = distinct !DISubprogram(name: \"wgmma_kernel\", scope: !1, file: !1, line: 1, type: !3, scopeLine: 1, "
        "spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)\n"
        "!3 = !DISubroutineType(types: !{})\n"
        "!10 = !DILocation(line: 20, column: 1, scope: !2)\n"
        "!11 = !DILocation(line: " + std::to_string(kMmaLine) + ", column: 1, scope: !2)\n"
        "!12 = !DILocation(line: " + std::to_string(kOverwriteLine) + ", column: 1, scope: !2)\n"
        "!13 = !DILocation(line: " + std::to_string(kEarlyReadLine) + ", column: 1, scope: !2)\n"
        "!20 = !{i32 2, !\"Debug Info Version\", i32 3}\n";
  return ir;
}

// ---- one launch: A and B placed as asked, C given, D read back as a 64 x n matrix

constexpr uint32_t kBRegion = 8192;  // A's region is at 0, B's here (both 1024-byte aligned)

struct Case {
  WgmmaMma mma;
  uint32_t swizzleA = 0, swizzleB = 0;
  bool scaleD = true;
  Plant plant = Plant::None;
  bool asGroup = false;
};

struct Outcome {
  sim::Report report;
  std::vector<float> d, expected;  // 64 x n, row-major
};

uint16_t encode(WgmmaInput input, double v) {
  switch (input) {
    case WgmmaInput::F16: return ir::encodeF16(v);
    case WgmmaInput::BF16: return ir::encodeBF16(v);
    case WgmmaInput::E4M3: return ir::encodeF8E4M3(v);
    case WgmmaInput::E5M2: return ir::encodeF8E5M2(v);
  }
  return 0;
}

// Values of `input`: multiples of 1/64 in [-1, 1) (exact in f16 and bf16), rounded to the 8-bit formats (then
// still multiples of 1/64). Every sum of K products of them, plus a multiple of 1/64 below 1, is exact in f32.
std::vector<double> samples(size_t n, uint32_t seed, WgmmaInput input) {
  std::vector<double> v(n);
  for (double& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<double>(static_cast<int>(seed >> 25) - 64) / 64.0;
    if (input == WgmmaInput::E4M3) x = ir::roundToF8E4M3(x);
    if (input == WgmmaInput::E5M2) x = ir::roundToF8E5M2(x);
  }
  return v;
}

Outcome run(const Case& c) {
  const uint32_t n = static_cast<uint32_t>(c.mma.n), registers = n / 2;
  const uint32_t K = static_cast<uint32_t>(backends::nvptx::wgmmaK(c.mma.inputA)), eb = 32 / K;
  const std::vector<double> a = samples(64 * K, 1, c.mma.inputA), b = samples(K * n, 2, c.mma.inputB),
                            acc = samples(64 * n, 3, WgmmaInput::F16);
  std::vector<uint16_t> aRows(64 * K), bRows(n * K);  // (row, k) order
  for (uint32_t m = 0; m < 64; ++m)
    for (uint32_t k = 0; k < K; ++k) aRows[m * K + k] = encode(c.mma.inputA, a[m * K + k]);
  for (uint32_t j = 0; j < n; ++j)
    for (uint32_t k = 0; k < K; ++k) bRows[j * K + k] = encode(c.mma.inputB, b[k * n + j]);
  const Operand opA = place(aRows, 64, c.mma.transposeA, c.swizzleA, eb);
  // A in registers: word w of thread t at aWords[w * 128 + t] holds elements 2w (low half) and 2w + 1 of its fragment.
  std::vector<uint32_t> aWords(4 * 128, 0);
  if (c.mma.aInRegisters) {
    const ir::LinearLayout aFragment = backends::nvptx::wgmmaOperandAFragment();
    for (uint32_t t = 0; t < 128; ++t)
      for (uint32_t e = 0; e < 8; ++e) {
        const std::vector<int64_t> p = aFragment.apply({int64_t(e), int64_t(t % 32), int64_t(t / 32)});
        aWords[e / 2 * 128 + t] |= uint32_t{aRows[p[0] * K + p[1]]} << (16 * (e % 2));
      }
  }
  const Operand opB = place(bRows, n, c.mma.transposeB, c.swizzleB, eb);
  EXPECT_LE(opA.bytes.size(), kBRegion);
  std::vector<uint8_t> image(kBRegion + opB.bytes.size(), 0xEE);
  image.resize((image.size() + 2047) / 2048 * 2048, 0xEE);
  std::memcpy(image.data(), opA.bytes.data(), opA.bytes.size());
  std::memcpy(image.data() + kBRegion, opB.bytes.data(), opB.bytes.size());

  // The accumulator fragment (the backend's): (register, lane, warp) -> (row, col).
  const ir::LinearLayout fragment = backends::nvptx::wgmmaAccumulatorFragment(n);
  auto position = [&](uint32_t thread, uint32_t reg) {
    return fragment.apply({int64_t(reg), int64_t(thread % 32), int64_t(thread / 32)});
  };
  std::vector<float> cIn(128 * registers), out(128 * registers, -1.0f);
  for (uint32_t t = 0; t < 128; ++t)
    for (uint32_t reg = 0; reg < registers; ++reg) {
      std::vector<int64_t> p = position(t, reg);
      cIn[t * registers + reg] = static_cast<float>(acc[p[0] * n + p[1]]);
    }

  sim::HostJit jit(sim::rewriteForHost(kernelIR(c.mma, static_cast<uint32_t>(image.size()), c.plant, c.asGroup), "kernel.ll"),
                   sim::runtimeSymbols());
  sim::Program program;
  program.kernel = jit.kernel();
  program.numWarps = 4;
  program.sharedBytes = static_cast<uint32_t>(image.size());
  program.sites = jit.sites();
  program.entry = jit.entry();
  sim::LaunchConfig config;
  config.threads = 1;
  auto range = [](const auto& v) { return sim::MemoryRange{reinterpret_cast<uint64_t>(v.data()), v.size() * sizeof(v[0])}; };
  config.allocations = {range(image), range(cIn), range(out), range(aWords)};
  void* imagePtr = image.data();
  void* cPtr = cIn.data();
  void* outPtr = out.data();
  void* aPtr = aWords.data();
  uint64_t descA = descriptor(opA, 0), descB = descriptor(opB, kBRegion);
  uint32_t scaleD = c.scaleD;
  void* params[] = {&imagePtr, &descA, &descB, &scaleD, &cPtr, &outPtr, &aPtr};

  Outcome o{sim::launch(program, {1, 1, 1}, params, config), std::vector<float>(64 * n), std::vector<float>(64 * n)};
  for (uint32_t t = 0; t < 128; ++t)
    for (uint32_t reg = 0; reg < registers; ++reg) {
      std::vector<int64_t> p = position(t, reg);
      o.d[p[0] * n + p[1]] = out[t * registers + reg];
    }
  for (uint32_t m = 0; m < 64; ++m)
    for (uint32_t j = 0; j < n; ++j) {
      double sum = c.scaleD ? acc[m * n + j] : 0.0;
      for (uint32_t k = 0; k < K; ++k) sum += a[m * K + k] * b[k * n + j];
      o.expected[m * n + j] = static_cast<float>(sum);
    }
  return o;
}

// ---- products

struct ProductCase {
  const char* name;
  Case c;
};

class WgmmaProduct : public ::testing::TestWithParam<ProductCase> {};

TEST_P(WgmmaProduct, MatchesANaiveMatmul) {
  const Outcome o = run(GetParam().c);
  EXPECT_FALSE(o.report.failed()) << o.report.str();
  EXPECT_EQ(o.d, o.expected);
}

std::vector<ProductCase> productCases() {
  std::vector<ProductCase> cases;
  const auto f16 = WgmmaInput::F16, bf16 = WgmmaInput::BF16;
  // Each swizzle mode with both majors of A and B (B MN-major needs n >= the swizzle line's elements).
  for (uint32_t swizzle : {0u, 32u, 64u, 128u}) {
    static std::vector<std::string> names;
    for (int trans = 0; trans < 4; ++trans) {
      const bool ta = trans & 1, tb = trans & 2;
      names.push_back(std::string("swizzle") + std::to_string(swizzle) + (ta ? "_A_M_major" : "_A_K_major") +
                      (tb ? "_B_N_major" : "_B_K_major"));
      cases.push_back({names.back().c_str(), {{64, f16, f16, ta, tb}, swizzle, swizzle}});
    }
  }
  cases.push_back({"bf16_n128_mixed_swizzles", {{128, bf16, bf16, false, true}, 128, 64}});
  cases.push_back({"n256_B_spans_two_128B_blocks", {{256, f16, f16, false, true}, 128, 128}});
  cases.push_back({"n8_K_major_interleave", {{8, bf16, bf16, true, false}, 0, 0}});
  cases.push_back({"scale_d_0_ignores_C", {{32, f16, f16, false, false}, 64, 32, false}});
  // A from registers (attention's chained dots): B of either major, f16 and bf16, scale-d 0 and 1.
  cases.push_back({"A_in_registers_B_N_major_n64", {{64, f16, f16, false, true, true}, 0, 128}});
  cases.push_back({"A_in_registers_B_K_major_n128", {{128, bf16, bf16, false, false, true}, 0, 32}});
  cases.push_back({"A_in_registers_B_K_major_n16_scale_d_0", {{16, f16, f16, false, false, true}, 0, 64, false}});
  cases.push_back({"A_in_registers_B_N_major_n256", {{256, bf16, bf16, false, true, true}, 0, 64}});
  // 8-bit floats (m64nNk32, both K-major): each swizzle mode with each pairing of e4m3 and e5m2.
  const auto e4m3 = WgmmaInput::E4M3, e5m2 = WgmmaInput::E5M2;
  for (uint32_t swizzle : {0u, 32u, 64u, 128u}) {
    static std::vector<std::string> names;
    names.reserve(16);
    for (auto [inA, inB, label] : {std::tuple{e4m3, e4m3, "e4m3_e4m3"}, std::tuple{e4m3, e5m2, "e4m3_e5m2"},
                                   std::tuple{e5m2, e4m3, "e5m2_e4m3"}, std::tuple{e5m2, e5m2, "e5m2_e5m2"}}) {
      names.push_back(std::string("fp8_swizzle") + std::to_string(swizzle) + "_" + label);
      cases.push_back({names.back().c_str(), {{swizzle == 64 ? 128 : 64, inA, inB, false, false}, swizzle, swizzle}});
    }
  }
  cases.push_back({"fp8_n256_mixed_swizzles", {{256, e5m2, e4m3, false, false}, 128, 32}});
  cases.push_back({"fp8_n8_scale_d_0", {{8, e4m3, e4m3, false, false}, 0, 0, false}});
  // As the backend emits them: one group asm, which the emulator expands into the instructions above.
  cases.push_back({"group_f16_A_M_major_B_N_major", {{64, f16, f16, true, true}, 64, 128, true, Plant::None, true}});
  cases.push_back({"group_A_in_registers_n128", {{128, bf16, bf16, false, false, true}, 0, 32, true, Plant::None, true}});
  cases.push_back({"group_fp8_scale_d_0", {{64, e4m3, e5m2, false, false}, 32, 32, false, Plant::None, true}});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Layouts, WgmmaProduct, ::testing::ValuesIn(productCases()),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- the asynchrony and warpgroup checks

const sim::Finding* firstFinding(const sim::Report& r, FindingKind kind) {
  for (const sim::Finding& f : r.findings)
    if (f.kind == kind) return &f;
  return nullptr;
}

TEST(WgmmaChecks, AnOperandOverwrittenBeforeTheWaitIsReported) {
  // A without swizzle: the 512 bytes the threads overwrite are all read.
  const Outcome o = run({{64, WgmmaInput::F16, WgmmaInput::F16, false, false}, 0, 128, true, Plant::OverwriteOperand});
  EXPECT_EQ(o.report.findingCount(FindingKind::WgmmaOperandOverwrite), 128u) << o.report.str();
  const sim::Finding* f = firstFinding(o.report, FindingKind::WgmmaOperandOverwrite);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kernel, "wgmma_kernel");
  EXPECT_EQ(f->file, "kernel.py");
  EXPECT_EQ(f->line, kOverwriteLine);
  ASSERT_TRUE(f->hasThread);
  EXPECT_EQ(f->address, 4 * (32 * f->warp + f->lane));  // the 4 bytes that thread overwrote
  EXPECT_TRUE(f->write);
  EXPECT_EQ(f->space, "shared");
}

TEST(WgmmaChecks, AnAccumulatorReadBeforeTheWaitIsReported) {
  const Outcome o = run({{64, WgmmaInput::F16, WgmmaInput::F16, false, false}, 0, 0, true, Plant::ReadBeforeWait});
  EXPECT_EQ(o.report.findingCount(FindingKind::WgmmaRegisterRead), 128u) << o.report.str();
  const sim::Finding* f = firstFinding(o.report, FindingKind::WgmmaRegisterRead);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->line, kEarlyReadLine);
  EXPECT_NE(f->message.find("kernel.py:" + std::to_string(kMmaLine)), std::string::npos) << f->message;
  // The reads after the wait are not reported, and the product is still right.
  EXPECT_EQ(o.report.findingCount(), 128u) << o.report.str();
}

TEST(WgmmaChecks, AnMmaWithoutAFenceIsReported) {
  const Outcome o = run({{16, WgmmaInput::BF16, WgmmaInput::BF16, false, false}, 32, 32, true, Plant::NoFence});
  EXPECT_EQ(o.report.findingCount(FindingKind::WgmmaMissingFence), 1u) << o.report.str();
  const sim::Finding* f = firstFinding(o.report, FindingKind::WgmmaMissingFence);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->line, kMmaLine);
  EXPECT_EQ(o.d, o.expected);
}

TEST(WgmmaChecks, EveryThreadOfTheWarpgroupMustArrive) {
  const Outcome o = run({{16, WgmmaInput::F16, WgmmaInput::F16, false, false}, 0, 0, true, Plant::ThreeWarpsArrive});
  EXPECT_GE(o.report.findingCount(FindingKind::IncompleteCollective), 1u) << o.report.str();
  const sim::Finding* f = firstFinding(o.report, FindingKind::IncompleteCollective);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("wgmma.fence never completes"), std::string::npos) << f->message;
}

TEST(WgmmaChecks, EveryThreadOfTheWarpgroupMustArriveAtAGroup) {
  const Outcome o =
      run({{16, WgmmaInput::F16, WgmmaInput::F16, false, false}, 0, 0, true, Plant::ThreeWarpsArrive, true});
  const sim::Finding* f = firstFinding(o.report, FindingKind::IncompleteCollective);
  ASSERT_NE(f, nullptr) << o.report.str();
  EXPECT_NE(f->message.find("wgmma.fence never completes"), std::string::npos) << f->message;
  EXPECT_EQ(f->line, kMmaLine);  // the group's source line: its instructions carry it
}

TEST(WgmmaChecks, ACorrectKernelHasNoFinding) {
  const Outcome clean = run({{64, WgmmaInput::F16, WgmmaInput::F16, true, true}, 64, 128});
  EXPECT_EQ(clean.report.findingCount(), 0u) << clean.report.str();
  EXPECT_EQ(clean.d, clean.expected);
}

// ---- the descriptor and the table

TEST(WgmmaDescriptor, FieldsDecodeAsThePtxIsaLaysThemOut) {
  const uint64_t bits = (uint64_t{0x123} << 0) | (uint64_t{0x45} << 16) | (uint64_t{0x40} << 32) |
                        (uint64_t{5} << 49) | (uint64_t{2} << 62);
  const sim::MatrixDescriptor d = sim::decodeMatrixDescriptor(bits);
  EXPECT_EQ(d.startAddress, 0x1230u);
  EXPECT_EQ(d.leadingByteOffset, 0x450u);
  EXPECT_EQ(d.strideByteOffset, 0x400u);
  EXPECT_EQ(d.baseOffset, 5u);
  EXPECT_EQ(d.swizzleBytes, 64u);
  EXPECT_EQ(sim::decodeMatrixDescriptor(uint64_t{1} << 62).swizzleBytes, 128u);
  EXPECT_EQ(sim::decodeMatrixDescriptor(uint64_t{3} << 62).swizzleBytes, 32u);
  EXPECT_EQ(sim::decodeMatrixDescriptor(0).swizzleBytes, 0u);
}

TEST(WgmmaAsmTable, AcceptsExactlyTheGeneratedStrings) {
  const WgmmaMma mma{128, WgmmaInput::BF16, WgmmaInput::BF16, false, true};
  std::optional<backends::nvptx::WgmmaAsm> found =
      backends::nvptx::findWgmmaAsm(backends::nvptx::wgmmaMmaAsm(mma), backends::nvptx::wgmmaMmaConstraints(128));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kind, backends::nvptx::WgmmaAsm::Kind::Mma);
  EXPECT_EQ(found->mma, mma);
  EXPECT_EQ(found->registers, 64);
  EXPECT_NE(backends::nvptx::wgmmaMmaAsm(mma).find("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"),
            std::string::npos);
  // A string that differs in one space, or constraints for another N, are not in the table.
  std::string spaced = backends::nvptx::wgmmaMmaAsm(mma);
  spaced.replace(spaced.find("p, 1"), 4, "p,  1");
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(spaced, backends::nvptx::wgmmaMmaConstraints(128)));
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(backends::nvptx::wgmmaMmaAsm(mma), backends::nvptx::wgmmaMmaConstraints(64)));
  std::optional<backends::nvptx::WgmmaAsm> wait =
      backends::nvptx::findWgmmaAsm(backends::nvptx::wgmmaWaitAsm(1), backends::nvptx::wgmmaWaitConstraints(96));
  ASSERT_TRUE(wait);
  EXPECT_EQ(wait->pendingGroups, 1);
  EXPECT_EQ(wait->registers, 96);
}

TEST(WgmmaAsmTable, AInRegistersTakesFourWordsAndNoTransposeOfA) {
  using backends::nvptx::WgmmaAsm;
  const WgmmaMma mma{128, WgmmaInput::F16, WgmmaInput::F16, false, true, true};
  const std::string text = backends::nvptx::wgmmaMmaAsm(mma);
  // D in $0..$63, A's words $64..$67, B's descriptor $68, scale-d $69; imm-scale-a/b, then imm-trans-b alone.
  EXPECT_NE(text.find("setp.ne.b32 p, $69, 0;"), std::string::npos) << text;
  EXPECT_NE(text.find("$63}, {$64, $65, $66, $67}, $68, p, 1, 1, 1;"), std::string::npos) << text;
  EXPECT_EQ(backends::nvptx::wgmmaMmaConstraints(128, true).find("=f,") , 0u);
  EXPECT_NE(backends::nvptx::wgmmaMmaConstraints(128, true).find(",=f,r,r,r,r,l,r,0,"), std::string::npos);
  std::optional<WgmmaAsm> found = backends::nvptx::findWgmmaAsm(text, backends::nvptx::wgmmaMmaConstraints(128, true));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->mma, mma);
  // The same string with the descriptor form's constraints is not in the table, nor A in registers transposed or
  // 8-bit.
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(text, backends::nvptx::wgmmaMmaConstraints(128)));
  for (const WgmmaMma& invalid : {WgmmaMma{64, WgmmaInput::F16, WgmmaInput::F16, true, false, true},
                                  WgmmaMma{64, WgmmaInput::E4M3, WgmmaInput::E4M3, false, false, true}})
    EXPECT_THROW(backends::nvptx::wgmmaMmaAsm(invalid), Error);
}

TEST(WgmmaAsmTable, EightBitInputsAreK32WithoutTransposeImmediates) {
  using backends::nvptx::WgmmaAsm;
  const WgmmaMma mixed{64, WgmmaInput::E4M3, WgmmaInput::E5M2, false, false};
  const std::string text = backends::nvptx::wgmmaMmaAsm(mixed);
  EXPECT_NE(text.find("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2 {"), std::string::npos) << text;
  EXPECT_NE(text.find("$32, $33, p, 1, 1;"), std::string::npos) << text;  // ends after imm-scale-b
  std::optional<WgmmaAsm> found = backends::nvptx::findWgmmaAsm(text, backends::nvptx::wgmmaMmaConstraints(64));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->mma, mixed);
  // The ISA has no transposed 8-bit instruction, nor one mixing 16-bit types or 16- and 8-bit ones.
  for (const WgmmaMma& invalid : {WgmmaMma{64, WgmmaInput::E4M3, WgmmaInput::E4M3, false, true},
                                  WgmmaMma{64, WgmmaInput::F16, WgmmaInput::BF16, false, false},
                                  WgmmaMma{64, WgmmaInput::F16, WgmmaInput::E4M3, false, false}})
    EXPECT_THROW(backends::nvptx::wgmmaMmaAsm(invalid), Error);
}

// How often `needle` occurs in `haystack`.
size_t occurrences(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

TEST(WgmmaAsmTable, AGroupIsADotsWholeIssueInOneStatement) {
  using backends::nvptx::WgmmaAsm;
  using backends::nvptx::WgmmaGroup;
  // Two slices (repeats) of m64n64 (32 registers each), three K steps, one group left in flight.
  const WgmmaGroup g{{64, WgmmaInput::F16, WgmmaInput::F16, false, true}, 2, 3, 1};
  ASSERT_EQ(g.registers(), 64);
  ASSERT_EQ(g.issues(), 6);
  const std::string text = backends::nvptx::wgmmaGroupAsm(g);
  const std::string constraints = backends::nvptx::wgmmaGroupConstraints(g);
  EXPECT_EQ(text.find("{\n\t// tessera wgmma group: n 64 a f16 b f16 trans 0 1 a-registers 0 slices 2 steps 3 wait 1\n"),
            0u) << text;
  // D $0..$63; issue i's descriptors $(64 + 2i), $(65 + 2i); scale-d $76; the fences first, commit and wait last.
  EXPECT_NE(text.find("setp.ne.b32 p, $76, 0;\n\tfence.proxy.async.shared::cta;\n\twgmma.fence.sync.aligned;\n"),
            std::string::npos) << text;
  EXPECT_EQ(occurrences(text, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, "), 3u) << text;
  EXPECT_EQ(occurrences(text, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$32, "), 3u) << text;
  EXPECT_NE(text.find("$31}, $64, $65, p, 1, 1, 0, 1;"), std::string::npos) << text;
  EXPECT_NE(text.find("$63}, $66, $67, p, 1, 1, 0, 1;"), std::string::npos) << text;
  EXPECT_NE(text.find("$63}, $74, $75, p, 1, 1, 0, 1;\n\twgmma.commit_group.sync.aligned;\n\t"
                      "wgmma.wait_group.sync.aligned 1;\n}"),
            std::string::npos) << text;
  EXPECT_EQ(constraints.find("=f,"), 0u);
  EXPECT_NE(constraints.find(",=f,l,l,l,l,l,l,l,l,l,l,l,l,r,0,1,"), std::string::npos) << constraints;
  std::optional<WgmmaAsm> found = backends::nvptx::findWgmmaAsm(text, constraints);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kind, WgmmaAsm::Kind::Group);
  EXPECT_EQ(found->group, g);
  EXPECT_EQ(found->registers, 64);

  // A in registers: four words and B's descriptor per issue.
  const WgmmaGroup fromRegisters{{64, WgmmaInput::BF16, WgmmaInput::BF16, false, false, true}, 1, 2, 0};
  EXPECT_NE(backends::nvptx::wgmmaGroupConstraints(fromRegisters).find(",=f,r,r,r,r,l,r,r,r,r,l,r,0,"),
            std::string::npos);
  EXPECT_NE(backends::nvptx::wgmmaGroupAsm(fromRegisters).find("$31}, {$37, $38, $39, $40}, $41, p, 1, 1, 0;"),
            std::string::npos) << backends::nvptx::wgmmaGroupAsm(fromRegisters);
  EXPECT_TRUE(backends::nvptx::findWgmmaAsm(backends::nvptx::wgmmaGroupAsm(fromRegisters),
                                            backends::nvptx::wgmmaGroupConstraints(fromRegisters)));
}

TEST(WgmmaAsmTable, AGroupStringMustEqualTheOneItsHeaderDescribes) {
  using backends::nvptx::WgmmaGroup;
  const WgmmaGroup g{{128, WgmmaInput::F16, WgmmaInput::F16, false, true}, 1, 4, 1};
  const std::string text = backends::nvptx::wgmmaGroupAsm(g);
  const std::string constraints = backends::nvptx::wgmmaGroupConstraints(g);
  ASSERT_TRUE(backends::nvptx::findWgmmaAsm(text, constraints));
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  // The header says three steps but four follow; an operand renumbered; the wait's depth changed in the body;
  // the constraints of another group.
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(replaced("steps 4", "steps 3"), constraints));
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(replaced("$66, $67", "$67, $66"), constraints));
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(replaced("wait_group.sync.aligned 1", "wait_group.sync.aligned 0"),
                                             constraints));
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(text, backends::nvptx::wgmmaGroupConstraints({g.mma, 1, 3, 1})));
  // Headers outside the bounds or unreadable: no string is generated for them, none is accepted.
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(replaced("slices 1", "slices 0"), constraints));
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(replaced("wait 1", "wait 2"), constraints));
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(replaced("steps 4", "steps 4000000"), constraints));
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(replaced("a f16", "a f32"), constraints));
  EXPECT_FALSE(backends::nvptx::findWgmmaAsm(replaced("n 128", "n many"), constraints));
  EXPECT_THROW(backends::nvptx::wgmmaGroupAsm({g.mma, 1, 4, 2}), Error);
  EXPECT_THROW(backends::nvptx::wgmmaGroupAsm({g.mma, 0, 4, 0}), Error);
  EXPECT_THROW(backends::nvptx::wgmmaGroupAsm({{64, WgmmaInput::E4M3, WgmmaInput::E4M3, false, true}, 1, 1, 0}), Error);
}

TEST(WgmmaAsmTable, TheEmulatorRefusesAWgmmaStringOutsideTheTable) {
  std::string ir = kernelIR({64, WgmmaInput::F16, WgmmaInput::F16, false, false}, 2048, Plant::None);
  const std::string fence = escapeForIR(backends::nvptx::kWgmmaFenceAsm);
  ir.replace(ir.find(fence), fence.size(), "wgmma.fence.sync.aligned ;");
  try {
    sim::rewriteForHost(ir, "kernel.ll");
    FAIL() << "an inline asm outside the table was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not in backends/nvptx/InlineAsmTable.h"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::testing
