// stmatrix under the emulator: hand-written NVPTX modules issue the stmatrix.x{1,2,4} inline asm of
// backends/nvptx/InlineAsmTable.h with registers holding a distinct value per lane, matrix and half, and the shared
// memory read back must hold each value where the PTX ISA puts it (and nothing elsewhere). The rows are shared
// stores like any other: a misaligned or out-of-bounds row is a finding at the asm's source line, another warp
// reading them with no barrier between is a race, and the counters see one shared store request whose matrices
// are one 128-byte phase each.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "TmaTestKernel.h"
#include "jit/sim/HostJit.h"
#include "jit/sim/HostModule.h"
#include "jit/sim/RuntimeSymbols.h"
#include "jit/sim/runtime/Launch.h"

namespace tessera::testing {
namespace {

using sim::FindingKind;

// Source lines of the kernel's statements (kernel.py), which findings and per-op counters name.
constexpr uint32_t kFillLine = 10, kStMatrixLine = 20, kReadBarrierLine = 30, kCopyLine = 40;

struct Kernel {
  uint32_t matrices = 4;
  uint32_t pitch = 144;      // bytes between the rows of a matrix; matrix m's rows start at byte 16 m
  uint32_t misalign = 0;     // added to every row address
  uint32_t sharedBytes = 8 * 144;
  uint32_t warps = 1;        // warp 0 stores; the last warp copies shared memory out
  bool barrierBeforeCopy = true;
};

// Every thread zero-fills shared memory, barrier; warp 0 issues stmatrix: lane l's register m holds
// 0x4000 + 0x100 m + 2 l in its low half and one more in its high half, lane 8 m + r gives the address of row r of
// matrix m (the other lanes give an address far outside shared memory, which the ISA says is ignored); a barrier
// unless left out; the last warp copies shared memory to `out`.
std::string kernelIR(const Kernel& k) {
  const std::string words = std::to_string(k.sharedBytes / 4), threads = std::to_string(32 * k.warps);
  std::string registers, operands;
  for (uint32_t m = 0; m < k.matrices; ++m) {
    const std::string s = std::to_string(m);
    registers += "  %lo" + s + " = add i32 %lo, " + std::to_string(0x4000 + 0x100 * m) + "\n";
    registers += "  %hi" + s + " = add i32 %lo" + s + ", 1\n";
    registers += "  %high" + s + " = shl i32 %hi" + s + ", 16\n";
    registers += "  %r" + s + " = or i32 %lo" + s + ", %high" + s + "\n";
    operands += ", i32 %r" + s;
  }
  return "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n"
         "target triple = \"nvptx64-nvidia-cuda\"\n"
         "@global_smem = external addrspace(3) global [0 x i8], align 16\n"
         "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
         "declare void @llvm.nvvm.barrier0()\n"
         "define ptx_kernel void @stmatrix_kernel(ptr addrspace(1) %out) !dbg !2 {\n"
         "entry:\n"
         "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !10\n"
         "  %lane = and i32 %tid, 31\n"
         "  %warp = lshr i32 %tid, 5\n"
         "  br label %fill\n"
         "fill:\n"
         "  %f = phi i32 [ %tid, %entry ], [ %fnext, %fill ]\n"
         "  %fp = getelementptr i32, ptr addrspace(3) @global_smem, i32 %f\n"
         "  store i32 0, ptr addrspace(3) %fp, align 4, !dbg !10\n"
         "  %fnext = add i32 %f, " + threads + "\n"
         "  %fmore = icmp ult i32 %fnext, " + words + "\n"
         "  br i1 %fmore, label %fill, label %filled\n"
         "filled:\n"
         "  call void @llvm.nvvm.barrier0(), !dbg !10\n"
         "  %storer = icmp eq i32 %warp, 0\n"
         "  br i1 %storer, label %store, label %stored\n"
         "store:\n"
         "  %row = and i32 %lane, 7\n"
         "  %matrix = lshr i32 %lane, 3\n"
         "  %rowAt = mul i32 %row, " + std::to_string(k.pitch) + "\n"
         "  %matrixAt = shl i32 %matrix, 4\n"
         "  %at0 = add i32 %rowAt, %matrixAt\n"
         "  %at1 = add i32 %at0, " + std::to_string(k.misalign) + "\n"
         "  %base = ptrtoint ptr addrspace(3) @global_smem to i32\n"
         "  %at2 = add i32 %base, %at1\n"
         "  %used = icmp ult i32 %lane, " + std::to_string(8 * k.matrices) + "\n"
         "  %at = select i1 %used, i32 %at2, i32 -256\n"
         "  %lo = shl i32 %lane, 1\n" + registers +
         "  call void asm sideeffect " + asmOf("stmatrix.x" + std::to_string(k.matrices)) + "(i32 %at" + operands +
         "), !dbg !11\n"
         "  br label %stored\n"
         "stored:\n" +
         (k.barrierBeforeCopy ? "  call void @llvm.nvvm.barrier0(), !dbg !12\n" : "") +
         "  %copier = icmp eq i32 %warp, " + std::to_string(k.warps - 1) + "\n"
         "  br i1 %copier, label %copy, label %done\n"
         "copy:\n"
         "  %c = phi i32 [ %lane, %stored ], [ %cnext, %copy ]\n"
         "  %cp = getelementptr i32, ptr addrspace(3) @global_smem, i32 %c\n"
         "  %v = load i32, ptr addrspace(3) %cp, align 4, !dbg !13\n"
         "  %op = getelementptr i32, ptr addrspace(1) %out, i32 %c\n"
         "  store i32 %v, ptr addrspace(1) %op, align 4, !dbg !13\n"
         "  %cnext = add i32 %c, 32\n"
         "  %cmore = icmp ult i32 %cnext, " + words + "\n"
         "  br i1 %cmore, label %copy, label %done\n"
         "done:\n"
         "  ret void, !dbg !10\n"
         "}\n"
         "!llvm.dbg.cu = !{!0}\n"
         "!llvm.module.flags = !{!20}\n"
         "!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus, file: !1, producer: \"test\", isOptimized: true, "
         "runtimeVersion: 0, emissionKind: LineTablesOnly)\n"
         "!1 = !DIFile(filename: \"kernel.py\", directory: \"\")\n"
         "!2 = distinct !DISubprogram(name: \"stmatrix_kernel\", scope: !1, file: !1, line: 1, type: !3, scopeLine: 1, "
         "spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)\n"
         "!3 = !DISubroutineType(types: !{})\n"
         "!10 = !DILocation(line: " + std::to_string(kFillLine) + ", column: 1, scope: !2)\n"
         "!11 = !DILocation(line: " + std::to_string(kStMatrixLine) + ", column: 1, scope: !2)\n"
         "!12 = !DILocation(line: " + std::to_string(kReadBarrierLine) + ", column: 1, scope: !2)\n"
         "!13 = !DILocation(line: " + std::to_string(kCopyLine) + ", column: 1, scope: !2)\n"
         "!20 = !{i32 2, !\"Debug Info Version\", i32 3}\n";
}

struct Outcome {
  sim::Report report;
  std::vector<uint16_t> shared;  // what the last warp copied out
};

Outcome run(const Kernel& k) {
  sim::HostJit jit(sim::rewriteForHost(kernelIR(k), "kernel.ll"), sim::runtimeSymbols());
  Outcome r;
  r.shared.assign(k.sharedBytes / 2, 0xDEAD);
  sim::Program p;
  p.kernel = jit.kernel();
  p.numWarps = k.warps;
  p.sharedBytes = k.sharedBytes;
  p.sites = jit.sites();
  p.entry = jit.entry();
  sim::LaunchConfig config;
  config.threads = 1;
  config.allocations = {{reinterpret_cast<uint64_t>(r.shared.data()), r.shared.size() * 2}};
  void* out = r.shared.data();
  void* params[] = {&out};
  r.report = sim::launch(p, {1, 1, 1}, params, config);
  return r;
}

// What the PTX ISA says the kernel's stmatrix leaves in shared memory, written from the fragment's definition:
// element c of row r of matrix m comes from lane 4 r + c / 2, register m, half c % 2 (low first); with the
// kernel's register values that is 0x4000 + 0x100 m + 8 r + c. Its 16-byte row lies at row r's address.
std::vector<uint16_t> expectedShared(const Kernel& k) {
  std::vector<uint16_t> expected(k.sharedBytes / 2, 0);
  for (uint32_t m = 0; m < k.matrices; ++m)
    for (uint32_t r = 0; r < 8; ++r) {
      const uint32_t lane = 4 * r, rowAt = r * k.pitch + 16 * m + k.misalign;
      for (uint32_t c = 0; c < 8; ++c) {
        const uint32_t source = lane + c / 2, half = c % 2;
        const uint32_t at = (rowAt + 2 * c) / 2;
        if (at < expected.size()) expected[at] = static_cast<uint16_t>(0x4000 + 0x100 * m + 2 * source + half);
      }
    }
  return expected;
}

const sim::OpCounters* opAt(const sim::Report& r, uint32_t line) {
  for (const sim::OpCounters& op : r.ops)
    if (op.line == line) return &op;
  return nullptr;
}

TEST(SimHostStMatrix, RowsLandWhereTheIsaPutsThem) {
  for (uint32_t matrices : {1u, 2u, 4u}) {
    SCOPED_TRACE("x" + std::to_string(matrices));
    Kernel k;
    k.matrices = matrices;
    Outcome r = run(k);
    ASSERT_FALSE(r.report.failed()) << r.report.str();
    const std::vector<uint16_t> expected = expectedShared(k);
    for (size_t i = 0; i < expected.size(); ++i)
      ASSERT_EQ(r.shared[i], expected[i]) << "shared byte " << 2 * i << " (row " << 2 * i / k.pitch << ", byte "
                                          << 2 * i % k.pitch << ")";
    // Spot checks of the formula: matrix m row 0 begins with lane 0's low and high halves, row 7 ends with lane
    // 31's high half.
    for (uint32_t m = 0; m < matrices; ++m) {
      EXPECT_EQ(r.shared[8 * m], 0x4000 + 0x100 * m);
      EXPECT_EQ(r.shared[8 * m + 1], 0x4001 + 0x100 * m);
      EXPECT_EQ(r.shared[(7 * k.pitch + 16 * m + 14) / 2], 0x4000 + 0x100 * m + 63);
    }
  }
}

TEST(SimHostStMatrix, MisalignedAndOutOfBoundsRowsAreFindingsAtTheAsmsLine) {
  Kernel k;
  k.misalign = 4;
  Outcome r = run(k);
  // Every one of the 32 rows is 4 bytes off its 16-byte alignment (still written, as misaligned stores are).
  EXPECT_EQ(r.report.findingCount(FindingKind::Misaligned), 32u) << r.report.str();
  EXPECT_EQ(r.report.findingCount(), 32u) << r.report.str();
  const sim::Finding& f = r.report.findings.at(0);
  EXPECT_EQ(f.kind, FindingKind::Misaligned);
  EXPECT_EQ(f.kernel, "stmatrix_kernel");
  EXPECT_TRUE(f.hasThread);
  EXPECT_EQ(f.warp, 0u);
  EXPECT_EQ(f.lane, 0u);
  EXPECT_EQ(f.file, "kernel.py");
  EXPECT_EQ(f.line, kStMatrixLine);
  EXPECT_EQ(f.address, 4u);
  EXPECT_EQ(f.bytes, 16u);
  EXPECT_EQ(f.space, "shared");
  EXPECT_TRUE(f.write);
  EXPECT_EQ(r.shared, expectedShared(k));

  // Shared memory ending 16 bytes into the last row (matrix 3, row 7, at 7 * 144 + 48): that row alone is beyond
  // it, reported for lane 31, which gave its address, and not written.
  Kernel small;
  small.sharedBytes = 7 * 144 + 48 + 8;
  Outcome o = run(small);
  EXPECT_EQ(o.report.findingCount(FindingKind::SharedOutOfBounds), 1u) << o.report.str();
  EXPECT_EQ(o.report.findingCount(), 1u) << o.report.str();
  const sim::Finding& g = o.report.findings.at(0);
  EXPECT_EQ(g.kind, FindingKind::SharedOutOfBounds);
  EXPECT_EQ(g.lane, 31u);
  EXPECT_EQ(g.line, kStMatrixLine);
  EXPECT_EQ(g.address, 7u * 144 + 48);
  EXPECT_EQ(g.bytes, 16u);
  std::vector<uint16_t> expected = expectedShared(small);
  for (uint32_t i = 0; i < 4; ++i) expected[(7 * 144 + 48) / 2 + i] = 0;  // not written
  EXPECT_EQ(o.shared, expected);
}

TEST(SimHostStMatrix, AnotherWarpReadingTheRowsWithoutABarrierRaces) {
  Kernel k;
  k.warps = 2;
  k.barrierBeforeCopy = false;
  Outcome racy = run(k);
  EXPECT_GT(racy.report.findingCount(FindingKind::SharedRace), 0u) << racy.report.str();
  EXPECT_EQ(racy.report.findingCount(), racy.report.findingCount(FindingKind::SharedRace)) << racy.report.str();
  // Warp 1's copy loop runs partly before warp 0's last lane arrives and the stmatrix is performed, partly after:
  // a row write conflicts with an earlier read, or a read with an earlier row write (reads alone would not race).
  // Either way the pair is the stmatrix and the copy.
  const std::string stmatrixAt = "kernel.py:" + std::to_string(kStMatrixLine) + ":1",
                    copyAt = "kernel.py:" + std::to_string(kCopyLine) + ":1";
  for (const sim::Finding& f : racy.report.findings) {
    SCOPED_TRACE(f.str());
    EXPECT_EQ(f.kernel, "stmatrix_kernel");
    if (f.line == kStMatrixLine) {
      EXPECT_EQ(f.warp, 0u);
      EXPECT_TRUE(f.write);
      EXPECT_EQ(f.bytes, 16u);
      EXPECT_NE(f.message.find("a read by warp 1 lane"), std::string::npos);
      EXPECT_NE(f.message.find(copyAt), std::string::npos);
    } else {
      EXPECT_EQ(f.line, kCopyLine);
      EXPECT_EQ(f.warp, 1u);
      EXPECT_FALSE(f.write);
      EXPECT_NE(f.message.find("a write by warp 0 lane"), std::string::npos);
      EXPECT_NE(f.message.find(stmatrixAt), std::string::npos);
    }
  }

  k.barrierBeforeCopy = true;
  Outcome synced = run(k);
  EXPECT_FALSE(synced.report.failed()) << synced.report.str();
  EXPECT_EQ(synced.shared, expectedShared(k));
}

TEST(SimHostStMatrix, CountsOneSharedStoreRequestWithAPhasePerMatrix) {
  // Rows 144 bytes (36 words) apart: row r of a matrix starts at bank 4 r + 4 m (mod 32), so its 8 rows of 4 words
  // cover the 32 banks once: one wavefront per matrix.
  Kernel padded;
  Outcome p = run(padded);
  ASSERT_FALSE(p.report.failed()) << p.report.str();
  const sim::OpCounters* op = opAt(p.report, kStMatrixLine);
  ASSERT_NE(op, nullptr) << p.report.countersTable();
  EXPECT_EQ(op->counters.instructions(sim::InstructionClass::StMatrix), 1u);
  EXPECT_EQ(op->counters.instructions(sim::InstructionClass::SharedStore), 0u);
  EXPECT_EQ(op->counters.sharedStore.requests, 1u);
  EXPECT_EQ(op->counters.sharedStore.wavefronts, 4u);
  EXPECT_EQ(op->counters.sharedStore.bankConflicts, 0u);
  EXPECT_EQ(op->counters.sharedLoad.requests, 0u);
  EXPECT_EQ(p.report.total.instructions(sim::InstructionClass::StMatrix), 1u);

  // Rows 128 bytes apart: the 8 rows of matrix m all lie on banks 4 m .. 4 m + 3, 8 distinct words on each bank:
  // 8 wavefronts for each of the 4 phases, 32 in all, 28 of them conflicts.
  Kernel unpadded;
  unpadded.pitch = 128;
  unpadded.sharedBytes = 8 * 128;
  Outcome u = run(unpadded);
  ASSERT_FALSE(u.report.failed()) << u.report.str();
  op = opAt(u.report, kStMatrixLine);
  ASSERT_NE(op, nullptr) << u.report.countersTable();
  EXPECT_EQ(op->counters.sharedStore.requests, 1u);
  EXPECT_EQ(op->counters.sharedStore.wavefronts, 32u);
  EXPECT_EQ(op->counters.sharedStore.bankConflicts, 28u);

  // .x1: one phase, the addresses of lanes 8-31 (outside shared memory) ignored.
  Kernel one;
  one.matrices = 1;
  Outcome x1 = run(one);
  ASSERT_FALSE(x1.report.failed()) << x1.report.str();
  op = opAt(x1.report, kStMatrixLine);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->counters.sharedStore.requests, 1u);
  EXPECT_EQ(op->counters.sharedStore.wavefronts, 1u);
}

}  // namespace
}  // namespace tessera::testing
