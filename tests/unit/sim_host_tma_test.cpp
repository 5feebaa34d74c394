// A hand-written NVPTX module with an mbarrier and a TMA copy, rewritten for the host and run by the emulator's
// runtime: the intrinsics (mbarrier.init) and the inline asm of backends/nvptx/InlineAsmTable.h
// (arrive.expect_tx, try_wait.parity in a loop, cp.async.bulk.tensor.2d) reach the runtime with the shared
// addresses, the tensor map and the coordinates in the right places, and the box lands with zeros outside the
// tensor. A wait for more bytes than any copy brings is a hang.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "backends/nvptx/InlineAsmTable.h"
#include "jit/sim/HostJit.h"
#include "jit/sim/HostModule.h"
#include "jit/sim/RuntimeSymbols.h"
#include "jit/sim/runtime/Launch.h"
#include "jit/sim/runtime/TensorMap.h"

namespace tessera::testing {
namespace {

// The table's asm string of `operation` as an LLVM IR string literal.
std::string asmOf(std::string_view operation) {
  for (const backends::nvptx::InlineAsmEntry& e : backends::nvptx::kInlineAsmTable) {
    if (e.operation != operation) continue;
    std::string text = "\"";
    for (char c : e.asmString) {
      if (c == '\n') text += "\\0A";
      else if (c == '\t') text += "\\09";
      else text += c;
    }
    return text + "\", \"" + std::string(e.constraints) + "\"";
  }
  ADD_FAILURE() << "no inline asm '" << operation << "'";
  return "";
}

// 128 threads: thread 0 initializes the barrier (shared offset 0), expects `expectBytes` and copies the 16 x 64
// f16 box at (x0, y0) to shared offset 1024; every thread waits, then copies 16 bytes of the box out.
std::string tmaModule(int expectBytes, int x0, int y0) {
  return std::string(
             "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n"
             "target triple = \"nvptx64-nvidia-cuda\"\n"
             "@global_smem = external addrspace(3) global [0 x i8], align 16\n"
             "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
             "declare void @llvm.nvvm.barrier0()\n"
             "declare void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3), i32)\n"
             "define ptx_kernel void @tma_load(ptr %desc, ptr addrspace(1) %out) {\n"
             "entry:\n"
             "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
             "  %box = getelementptr i8, ptr addrspace(3) @global_smem, i32 1024\n"
             "  %bar = ptrtoint ptr addrspace(3) @global_smem to i32\n"
             "  %boxAt = ptrtoint ptr addrspace(3) %box to i32\n"
             "  %first = icmp eq i32 %tid, 0\n"
             "  br i1 %first, label %init, label %synced\n"
             "init:\n"
             "  call void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3) @global_smem, i32 1)\n"
             "  br label %synced\n"
             "synced:\n"
             "  call void @llvm.nvvm.barrier0()\n"
             "  br i1 %first, label %issue, label %wait\n"
             "issue:\n"
             "  call void asm sideeffect ") +
         asmOf("mbarrier.arrive.expect_tx") + "(i32 %bar, i32 " + std::to_string(expectBytes) +
         ")\n"
         "  %map = ptrtoint ptr %desc to i64\n"
         "  call void asm sideeffect " +
         asmOf("cp.async.bulk.tensor.2d") + "(i32 %boxAt, i64 %map, i32 " + std::to_string(x0) + ", i32 " +
         std::to_string(y0) +
         ", i32 %bar)\n"
         "  br label %wait\n"
         "wait:\n"
         "  %done = call i32 asm sideeffect " +
         asmOf("mbarrier.try_wait.parity") +
         "(i32 %bar, i32 0)\n"
         "  %ready = icmp ne i32 %done, 0\n"
         "  br i1 %ready, label %read, label %wait\n"
         "read:\n"
         "  %offset = mul i32 %tid, 16\n"
         "  %src = getelementptr i8, ptr addrspace(3) %box, i32 %offset\n"
         "  %v = load <4 x i32>, ptr addrspace(3) %src, align 16\n"
         "  %dst = getelementptr i8, ptr addrspace(1) %out, i32 %offset\n"
         "  store <4 x i32> %v, ptr addrspace(1) %dst, align 16\n"
         "  ret void\n"
         "}\n";
}

struct TmaRun {
  sim::Report report;
  std::vector<uint16_t> out;
};

constexpr uint32_t kRows = 20, kCols = 48, kBoxRows = 16, kBoxCols = 64;

TmaRun runTma(const std::vector<uint16_t>& tensor, int expectBytes, int x0, int y0) {
  sim::HostJit jit(sim::rewriteForHost(tmaModule(expectBytes, x0, y0), "tma.ll"), sim::runtimeSymbols());
  sim::TensorMapFields f;
  f.rank = 2;
  f.elementBytes = 2;
  f.globalAddress = reinterpret_cast<uint64_t>(tensor.data());
  f.dims = {kCols, kRows};
  f.strides = {0, kCols * 2};
  f.box = {kBoxCols, kBoxRows};
  EXPECT_EQ(sim::tensorMapError(f), "");
  alignas(64) std::array<std::byte, sim::kTensorMapBytes> map = sim::encodeTensorMap(f);
  TmaRun run;
  run.out.assign(kBoxRows * kBoxCols, 0xFFFF);
  void* desc = map.data();
  void* out = run.out.data();
  void* params[] = {&desc, &out};
  sim::Program p;
  p.kernel = jit.kernel();
  p.numWarps = 4;
  p.sharedBytes = 1024 + kBoxRows * kBoxCols * 2;
  p.sites = jit.sites();
  p.entry = jit.entry();
  sim::LaunchConfig config;
  config.threads = 1;
  config.allocations = {{f.globalAddress, tensor.size() * 2}, {reinterpret_cast<uint64_t>(out), run.out.size() * 2}};
  run.report = sim::launch(p, {1, 1, 1}, params, config);
  return run;
}

TEST(SimHostTma, AsmCopyLandsTheBoxWithZerosOutsideTheTensor) {
  static std::vector<uint16_t> tensor(kRows * kCols);  // malloc: 16-byte aligned, as a map needs
  std::iota(tensor.begin(), tensor.end(), uint16_t(1));
  TmaRun run = runTma(tensor, kBoxRows * kBoxCols * 2, -8, 4);
  EXPECT_FALSE(run.report.failed()) << run.report.str();
  for (uint32_t r = 0; r < kBoxRows; ++r)
    for (uint32_t c = 0; c < kBoxCols; ++c) {
      const int x = int(c) - 8, y = int(r) + 4;
      const uint16_t expected = x >= 0 && x < int(kCols) && y < int(kRows) ? tensor[y * kCols + x] : 0;
      ASSERT_EQ(run.out[r * kBoxCols + c], expected) << "row " << r << " column " << c;
    }
}

TEST(SimHostTma, ExpectingMoreBytesThanTheCopyBringsHangs) {
  static std::vector<uint16_t> tensor(kRows * kCols, 1);
  TmaRun run = runTma(tensor, kBoxRows * kBoxCols * 2 + 128, 0, 0);
  EXPECT_EQ(run.report.findingCount(sim::FindingKind::IncompleteMbarrierWait), 128u) << run.report.str();
  EXPECT_EQ(run.report.findingCount(), 128u) << run.report.str();
}

}  // namespace
}  // namespace tessera::testing
