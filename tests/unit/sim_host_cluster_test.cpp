// A hand-written NVPTX module using LLVM 19's cluster intrinsics (%cluster_ctarank, %clusterid, %cluster_nctarank,
// barrier.cluster.arrive / wait), rewritten for the host and launched in clusters on the emulator's runtime: the
// program of the last rank publishes a value before the cluster barrier, and every program reads it after. The
// other ranks run before it, so they read it only because the rewritten barrier made them wait. Then the inline
// asm of backends/nvptx/InlineAsmTable.h for clusters: a TMA multicast from rank 0 into both programs, and each
// program's arrival on rank 0's mbarrier (mapa + a remote arrive) that hands the buffer back.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "TmaTestKernel.h"
#include "jit/sim/HostJit.h"
#include "jit/sim/HostModule.h"
#include "jit/sim/RuntimeSymbols.h"
#include "jit/sim/runtime/Launch.h"
#include "jit/sim/runtime/TensorMap.h"

namespace tessera::testing {
namespace {

const char* const kClusterModule = R"(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()
declare i32 @llvm.nvvm.read.ptx.sreg.cluster.nctarank()
declare i32 @llvm.nvvm.read.ptx.sreg.clusterid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nclusterid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.cluster.ctaid.x()
declare void @llvm.nvvm.barrier.cluster.arrive()
declare void @llvm.nvvm.barrier.cluster.wait()

define ptx_kernel void @cluster_handshake(ptr addrspace(1) %mailbox, ptr addrspace(1) %seen) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %rank = call i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()
  %size = call i32 @llvm.nvvm.read.ptx.sreg.cluster.nctarank()
  %cluster = call i32 @llvm.nvvm.read.ptx.sreg.clusterid.x()
  %clusters = call i32 @llvm.nvvm.read.ptx.sreg.nclusterid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.cluster.ctaid.x()
  %last = sub i32 %size, 1
  %is_last = icmp eq i32 %rank, %last
  %first_thread = icmp eq i32 %tid, 0
  %publishes = and i1 %is_last, %first_thread
  %slot = getelementptr i32, ptr addrspace(1) %mailbox, i32 %cluster
  br i1 %publishes, label %publish, label %sync
publish:
  %value = add i32 %cluster, 100
  store i32 %value, ptr addrspace(1) %slot, align 4
  br label %sync
sync:
  call void @llvm.nvvm.barrier.cluster.arrive()
  call void @llvm.nvvm.barrier.cluster.wait()
  br i1 %first_thread, label %record, label %finish
record:
  %got = load i32, ptr addrspace(1) %slot, align 4
  %program = mul i32 %cluster, %size
  %index = add i32 %program, %rank
  %row = mul i32 %index, 4
  %p0 = getelementptr i32, ptr addrspace(1) %seen, i32 %row
  store i32 %got, ptr addrspace(1) %p0, align 4
  %r1 = add i32 %row, 1
  %p1 = getelementptr i32, ptr addrspace(1) %seen, i32 %r1
  store i32 %ctaid, ptr addrspace(1) %p1, align 4
  %r2 = add i32 %row, 2
  %p2 = getelementptr i32, ptr addrspace(1) %seen, i32 %r2
  store i32 %clusters, ptr addrspace(1) %p2, align 4
  br label %finish
finish:
  ret void
}
)";

TEST(SimHostCluster, ClusterIntrinsicsReachTheRuntimeAndTheBarrierOrdersThePrograms) {
  sim::HostJit jit(sim::rewriteForHost(kClusterModule, "cluster.ll"), sim::runtimeSymbols());
  constexpr uint32_t kClusterSize = 4, kClusters = 3;
  std::vector<uint32_t> mailbox(kClusters, 0), seen(4 * kClusters * kClusterSize, 0xDEAD);
  void* mailboxPtr = mailbox.data();
  void* seenPtr = seen.data();
  void* params[] = {&mailboxPtr, &seenPtr};
  sim::Program p;
  p.kernel = jit.kernel();
  p.numWarps = 2;
  p.sites = jit.sites();
  p.entry = jit.entry();
  p.clusterDims = {kClusterSize, 1, 1};
  sim::LaunchConfig config;
  config.threads = 2;
  config.allocations = {{reinterpret_cast<uint64_t>(mailbox.data()), mailbox.size() * 4},
                        {reinterpret_cast<uint64_t>(seen.data()), seen.size() * 4}};
  sim::Report r = sim::launch(p, {kClusterSize * kClusters, 1, 1}, params, config);
  ASSERT_FALSE(r.failed()) << r.str();
  for (uint32_t c = 0; c < kClusters; ++c)
    for (uint32_t rank = 0; rank < kClusterSize; ++rank) {
      const uint32_t* row = &seen[4 * (c * kClusterSize + rank)];
      EXPECT_EQ(row[0], 100 + c) << "cluster " << c << " rank " << rank;
      EXPECT_EQ(row[1], rank);  // %cluster_ctaid.x of a 1-d cluster is its rank
      EXPECT_EQ(row[2], kClusters);
    }
}

// 64 threads per program: full (offset 0, one arrival) and empty (offset 8, one arrival per program) barriers;
// rank 0's thread 0 multicasts the 64-word box at coordinate 0 into offset 1024 of both programs; every thread
// stores its word of it; then each program's thread 0 hands the buffer back on rank 0's empty barrier, which rank
// 0 waits for.
std::string multicastModule() {
  return std::string(R"(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
@global_smem = external addrspace(3) global [0 x i8], align 16
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()
declare void @llvm.nvvm.barrier0()
declare void @llvm.nvvm.barrier.cluster.arrive()
declare void @llvm.nvvm.barrier.cluster.wait()
declare void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3), i32)
define ptx_kernel void @multicast(ptr %map, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %rank = call i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()
  %full = ptrtoint ptr addrspace(3) @global_smem to i32
  %emptyAt = getelementptr i8, ptr addrspace(3) @global_smem, i32 8
  %empty = ptrtoint ptr addrspace(3) %emptyAt to i32
  %boxAt = getelementptr i8, ptr addrspace(3) @global_smem, i32 1024
  %box = ptrtoint ptr addrspace(3) %boxAt to i32
  %first = icmp eq i32 %tid, 0
  %issuer = icmp eq i32 %rank, 0
  br i1 %first, label %init, label %synced
init:
  call void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3) @global_smem, i32 1)
  call void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3) %emptyAt, i32 2)
  br label %synced
synced:
  call void @llvm.nvvm.barrier.cluster.arrive()
  call void @llvm.nvvm.barrier.cluster.wait()
  br i1 %first, label %expect, label %wait
expect:
  call void asm sideeffect )") + asmOf("mbarrier.arrive.expect_tx") + R"((i32 %full, i32 256)
  br i1 %issuer, label %issue, label %wait
issue:
  %mapWord = ptrtoint ptr %map to i64
  call void asm sideeffect )" + asmOf("cp.async.bulk.tensor.multicast.1d") + R"((i32 %box, i64 %mapWord, i32 0, i32 %full, i16 3)
  br label %wait
wait:
  %landed = call i32 asm sideeffect )" + asmOf("mbarrier.try_wait.parity") + R"((i32 %full, i32 0)
  %ready = icmp ne i32 %landed, 0
  br i1 %ready, label %read, label %wait
read:
  %wordAt = getelementptr i32, ptr addrspace(3) %boxAt, i32 %tid
  %word = load i32, ptr addrspace(3) %wordAt, align 4
  %slot = mul i32 %rank, 64
  %index = add i32 %slot, %tid
  %outAt = getelementptr i32, ptr addrspace(1) %out, i32 %index
  store i32 %word, ptr addrspace(1) %outAt, align 4
  call void @llvm.nvvm.barrier0()
  br i1 %first, label %handBack, label %finish
handBack:
  call void asm sideeffect )" + asmOf("mbarrier.arrive.cluster") + R"((i32 %empty, i32 0)
  br i1 %issuer, label %waitEmpty, label %finish
waitEmpty:
  %emptied = call i32 asm sideeffect )" + asmOf("mbarrier.try_wait.parity") + R"((i32 %empty, i32 0)
  %both = icmp ne i32 %emptied, 0
  br i1 %both, label %finish, label %waitEmpty
finish:
  call void @llvm.nvvm.barrier.cluster.arrive()
  call void @llvm.nvvm.barrier.cluster.wait()
  ret void
}
)";
}

TEST(SimHostCluster, MulticastAndRemoteArrivalAsmReachTheRuntime) {
  sim::HostJit jit(sim::rewriteForHost(multicastModule(), "multicast.ll"), sim::runtimeSymbols());
  static std::vector<uint32_t> tensor = [] {
    std::vector<uint32_t> t(64);
    std::iota(t.begin(), t.end(), 7u);
    return t;
  }();
  sim::TensorMapFields f;
  f.rank = 1;
  f.elementBytes = 4;
  f.globalAddress = reinterpret_cast<uint64_t>(tensor.data());
  f.dims = {64};
  f.box = {64};
  ASSERT_EQ(sim::tensorMapError(f), "");
  alignas(64) std::array<std::byte, sim::kTensorMapBytes> map = sim::encodeTensorMap(f);
  std::vector<uint32_t> out(128, 0);
  void* mapPtr = map.data();
  void* outPtr = out.data();
  void* params[] = {&mapPtr, &outPtr};
  sim::Program p;
  p.kernel = jit.kernel();
  p.numWarps = 2;
  p.sharedBytes = 1024 + 256;
  p.sites = jit.sites();
  p.entry = jit.entry();
  p.clusterDims = {2, 1, 1};
  sim::LaunchConfig config;
  config.threads = 1;
  config.allocations = {{f.globalAddress, tensor.size() * 4}, {reinterpret_cast<uint64_t>(out.data()), out.size() * 4}};
  sim::Report r = sim::launch(p, {2, 1, 1}, params, config);
  ASSERT_FALSE(r.failed()) << r.str();
  for (uint32_t i = 0; i < 128; ++i) EXPECT_EQ(out[i], tensor[i % 64]) << "rank " << i / 64 << " word " << i % 64;
}

}  // namespace
}  // namespace tessera::testing
