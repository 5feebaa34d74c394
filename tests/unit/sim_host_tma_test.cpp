// A hand-written NVPTX module with an mbarrier and a TMA copy, rewritten for the host and run by the emulator's
// runtime: the intrinsics (mbarrier.init) and the inline asm of backends/nvptx/InlineAsmTable.h
// (arrive.expect_tx, try_wait.parity in a loop, cp.async.bulk.tensor.2d) reach the runtime with the shared
// addresses, the tensor map and the coordinates in the right places, and the box lands with zeros outside the
// tensor. A wait for more bytes than any copy brings is a hang. A TMA store writes only the box's elements inside the
// tensor; one whose staging another thread wrote without a barrier races, and one outside launch memory is
// reported.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "TmaTestKernel.h"
#include "jit/sim/HostJit.h"
#include "jit/sim/HostModule.h"
#include "jit/sim/RuntimeSymbols.h"
#include "jit/sim/runtime/Launch.h"
#include "jit/sim/runtime/TensorMap.h"

namespace tessera::testing {
namespace {

struct TmaRun {
  sim::Report report;
  std::vector<uint16_t> out;
};

constexpr uint32_t kRows = 20, kCols = 48, kBoxRows = 16, kBoxCols = 64;

// The map of `tensor` (kRows x kCols f16) in boxes of kBoxRows x kBoxCols.
sim::TensorMapFields boxMap(const std::vector<uint16_t>& tensor) {
  sim::TensorMapFields f;
  f.rank = 2;
  f.elementBytes = 2;
  f.globalAddress = reinterpret_cast<uint64_t>(tensor.data());
  f.dims = {kCols, kRows};
  f.strides = {0, kCols * 2};
  f.box = {kBoxCols, kBoxRows};
  EXPECT_EQ(sim::tensorMapError(f), "");
  return f;
}

TmaRun runTma(const std::vector<uint16_t>& tensor, int expectBytes, int x0, int y0) {
  sim::HostJit jit(sim::rewriteForHost(tmaModule(expectBytes, x0, y0), "tma.ll"), sim::runtimeSymbols());
  const sim::TensorMapFields f = boxMap(tensor);
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

// Thread 0 fills shared memory with the 16 x 64 f16 box 1, 2, ... (row-major) and fences it; after a barrier when
// `synced`, thread `issuer` stores it with the TMA store sequence of the table (cp.async.bulk.tensor.2d.global.
// shared::cta.bulk_group, commit, wait).
std::string tmaStoreModule(int issuer, bool synced) {
  return "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n"
         "target triple = \"nvptx64-nvidia-cuda\"\n"
         "@global_smem = external addrspace(3) global [0 x i8], align 16\n"
         "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
         "declare void @llvm.nvvm.barrier0()\n"
         "define ptx_kernel void @tma_store(ptr %desc, i32 %x0, i32 %y0) {\n"
         "entry:\n"
         "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
         "  %first = icmp eq i32 %tid, 0\n"
         "  br i1 %first, label %fill, label %filled\n"
         "fill:\n"
         "  %i = phi i32 [ 0, %entry ], [ %next, %fill ]\n"
         "  %low = trunc i32 %i to i16\n"
         "  %v = add i16 %low, 1\n"
         "  %at = getelementptr i16, ptr addrspace(3) @global_smem, i32 %i\n"
         "  store i16 %v, ptr addrspace(3) %at, align 2\n"
         "  %next = add i32 %i, 1\n"
         "  %more = icmp ult i32 %next, " + std::to_string(kBoxRows * kBoxCols) + "\n"
         "  br i1 %more, label %fill, label %fence\n"
         "fence:\n"
         "  call void asm sideeffect " + asmOf("fence.proxy.async.shared::cta") + "()\n"
         "  br label %filled\n"
         "filled:\n" + (synced ? "  call void @llvm.nvvm.barrier0()\n" : "") +
         "  %issues = icmp eq i32 %tid, " + std::to_string(issuer) + "\n"
         "  br i1 %issues, label %store, label %done\n"
         "store:\n"
         "  %smem = ptrtoint ptr addrspace(3) @global_smem to i32\n"
         "  %map = ptrtoint ptr %desc to i64\n"
         "  call void asm sideeffect " + asmOf("cp.async.bulk.tensor.store.2d") +
         "(i64 %map, i32 %x0, i32 %y0, i32 %smem)\n"
         "  call void asm sideeffect " + asmOf("cp.async.bulk.commit_group") + "()\n"
         "  call void asm sideeffect " + asmOf("cp.async.bulk.wait_group.read.0") + "()\n"
         "  br label %done\n"
         "done:\n"
         "  ret void\n"
         "}\n";
}

struct TmaStore {
  int x0 = 0, y0 = 0;
  int issuer = 0;
  bool synced = true;
  bool launchMemory = true;  // whether the tensor is launch memory
};

// Runs tmaStoreModule (one warp) on `tensor` (kRows x kCols f16).
sim::Report runTmaStore(std::vector<uint16_t>& tensor, TmaStore s) {
  sim::HostJit jit(sim::rewriteForHost(tmaStoreModule(s.issuer, s.synced), "tma_store.ll"), sim::runtimeSymbols());
  const sim::TensorMapFields f = boxMap(tensor);
  alignas(64) std::array<std::byte, sim::kTensorMapBytes> map = sim::encodeTensorMap(f);
  void* desc = map.data();
  void* params[] = {&desc, &s.x0, &s.y0};
  sim::Program p;
  p.kernel = jit.kernel();
  p.numWarps = 1;
  p.sharedBytes = kBoxRows * kBoxCols * 2;
  p.sites = jit.sites();
  p.entry = jit.entry();
  sim::LaunchConfig config;
  config.threads = 1;
  if (s.launchMemory) config.allocations = {{f.globalAddress, tensor.size() * 2}};
  return sim::launch(p, {1, 1, 1}, params, config);
}

TEST(SimHostTma, AsmStoreWritesOnlyTheBoxElementsInsideTheTensor) {
  static std::vector<uint16_t> tensor(kRows * kCols);  // malloc: 16-byte aligned, as a map needs
  for (int issuer : {0, 5}) {  // the filling thread itself, or another after the barrier
    SCOPED_TRACE(issuer);
    std::fill(tensor.begin(), tensor.end(), uint16_t(0xFFFF));
    sim::Report report = runTmaStore(tensor, {.x0 = -8, .y0 = 10, .issuer = issuer});
    EXPECT_FALSE(report.failed()) << report.str();
    for (uint32_t y = 0; y < kRows; ++y)
      for (uint32_t x = 0; x < kCols; ++x) {
        const int r = int(y) - 10, c = int(x) + 8;  // the box element landing at (x, y)
        const bool inBox = r >= 0 && r < int(kBoxRows) && c < int(kBoxCols);
        ASSERT_EQ(tensor[y * kCols + x], inBox ? uint16_t(r * kBoxCols + c + 1) : uint16_t(0xFFFF))
            << "row " << y << " column " << x;
      }
  }
}

TEST(SimHostTma, AsmStoreOfStagingAnotherThreadWroteUnorderedIsARace) {
  static std::vector<uint16_t> tensor(kRows * kCols, 0);
  sim::Report report = runTmaStore(tensor, {.issuer = 5, .synced = false});
  EXPECT_GT(report.findingCount(sim::FindingKind::SharedRace), 0u) << report.str();
  EXPECT_NE(report.str().find("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"), std::string::npos);
}

TEST(SimHostTma, AsmStoreOutsideLaunchMemoryIsReported) {
  static std::vector<uint16_t> tensor(kRows * kCols, 0);
  sim::Report report = runTmaStore(tensor, {.launchMemory = false});
  EXPECT_GT(report.findingCount(sim::FindingKind::GlobalOutOfBounds), 0u) << report.str();
  EXPECT_EQ(report.findingCount(), report.findingCount(sim::FindingKind::GlobalOutOfBounds)) << report.str();
}

}  // namespace
}  // namespace tessera::testing
