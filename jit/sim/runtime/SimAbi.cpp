// The `extern "C"` functions of SimABI.h: each finds the calling GPU thread and hands over to the runtime part
// that implements it.
#include "jit/sim/SimABI.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "jit/sim/runtime/BulkCopies.h"
#include "jit/sim/runtime/Cluster.h"
#include "jit/sim/runtime/KernelPrintf.h"
#include "jit/sim/runtime/MemoryAccess.h"
#include "jit/sim/runtime/WarpOperations.h"
#include "jit/sim/runtime/Worker.h"

using namespace tessera::sim;

namespace {

SimThread& current() {
  SimThread* t = currentThreadOrNull();
  if (!t) [[unlikely]] {
    // Host code called the runtime outside an emulated program: a bug of the caller, not of a kernel.
    std::fputs("tessera sim: a __tsim_* function was called outside an emulated program\n", stderr);
    std::abort();
  }
  return *t;
}

uint32_t checkedAxis(SimThread& t, uint32_t axis, const char* what) {
  if (axis > 2)
    t.worker->fail(t, FindingKind::InvalidCall, std::nullopt,
                   [&] { return std::string(what) + " of axis " + std::to_string(axis); });
  return axis;
}

}  // namespace

extern "C" {

uint32_t __tsim_thread_id(uint32_t axis) {
  SimThread& t = current();
  return checkedAxis(t, axis, "thread id") == 0 ? t.index : 0;
}

uint32_t __tsim_threads_per_program(uint32_t axis) {
  SimThread& t = current();
  return checkedAxis(t, axis, "threads per program") == 0 ? t.worker->runner.numThreads() : 1;
}

uint32_t __tsim_program_id(uint32_t axis) {
  SimThread& t = current();
  return t.worker->programId[checkedAxis(t, axis, "program id")];
}

uint32_t __tsim_num_programs(uint32_t axis) {
  SimThread& t = current();
  return t.worker->launch.grid[checkedAxis(t, axis, "number of programs")];
}

uint32_t __tsim_cluster_query(uint32_t query, uint32_t axis) {
  SimThread& t = current();
  Worker& w = *t.worker;
  const std::array<uint32_t, 3>& dims = w.launch.program.clusterDims;
  switch (query) {
    case kClusterCtaRank: return w.clusterRank;
    case kClusterNumCtaRank: return w.cluster.size();
    case kClusterCtaId: return w.programId[checkedAxis(t, axis, "cluster program id")] % dims[axis];
    case kClusterNumCtaId: return dims[checkedAxis(t, axis, "cluster programs")];
    case kClusterId: return w.programId[checkedAxis(t, axis, "cluster id")] / dims[axis];
    case kNumClusters: return w.launch.clusterGrid()[checkedAxis(t, axis, "number of clusters")];
    default: break;
  }
  w.fail(t, FindingKind::InvalidCall, std::nullopt,
         [&] { return "cluster query " + std::to_string(query) + " (not a ClusterQuery)"; });
}

void __tsim_cluster_arrive(uint32_t relaxed, uint32_t site) {
  SimThread& t = current();
  t.worker->site(t, site);
  t.worker->cluster.arrive(t, t.worker->clusterRank, relaxed != 0, site);
}

void __tsim_cluster_wait(uint32_t site) {
  SimThread& t = current();
  t.worker->site(t, site);
  t.worker->cluster.wait(t, t.worker->clusterRank, site);
}

uint32_t __tsim_lane_id(void) { return current().lane; }
uint32_t __tsim_warp_id(void) { return current().warp; }

void* __tsim_shared_base(void) { return current().worker->sharedBase(); }

void __tsim_load(void* dst, uint64_t address, uint32_t bytes, uint32_t site) {
  loadMemory(current(), dst, address, bytes, site);
}

void __tsim_store(uint64_t address, const void* src, uint32_t bytes, uint32_t site) {
  storeMemory(current(), address, src, bytes, site);
}

uint64_t __tsim_atomic_rmw(uint32_t op, uint64_t address, uint64_t value, uint32_t bytes, uint32_t site) {
  return atomicRmwMemory(current(), op, address, value, bytes, site);
}

uint64_t __tsim_atomic_cas(uint64_t address, uint64_t expected, uint64_t desired, uint32_t bytes, uint32_t site) {
  return atomicCasMemory(current(), address, expected, desired, bytes, site);
}

void __tsim_memset(uint64_t address, uint32_t value, uint64_t bytes, uint32_t site) {
  memsetMemory(current(), address, value, bytes, site);
}

void __tsim_memcpy(uint64_t dst, uint64_t src, uint64_t bytes, uint32_t site) {
  memcpyMemory(current(), dst, src, bytes, site);
}

void __tsim_barrier(uint32_t site) { barrier(current(), site); }

void __tsim_warp_sync(uint32_t mask, uint32_t site) { warpSync(current(), mask, site); }

void __tsim_named_barrier(uint32_t id, uint32_t count, uint32_t site) { namedBarrier(current(), id, count, site); }

void __tsim_named_barrier_arrive(uint32_t id, uint32_t count, uint32_t site) {
  namedBarrierArrive(current(), id, count, site);
}

void __tsim_setmaxnreg(uint32_t increase, uint32_t registers, uint32_t site) {
  setMaxRegisters(current(), increase != 0, registers, site);
}

uint32_t __tsim_shuffle(uint32_t mode, uint32_t mask, uint32_t value, uint32_t laneOrDelta, uint32_t clampSegment,
                        uint32_t* valid, uint32_t site) {
  return shuffle(current(), mode, mask, value, laneOrDelta, clampSegment, valid, site);
}

uint32_t __tsim_vote(uint32_t mode, uint32_t mask, uint32_t predicate, uint32_t site) {
  return vote(current(), mode, mask, predicate, site);
}

uint32_t __tsim_bpermute(uint32_t byteAddress, uint32_t value, uint32_t site) {
  return bpermute(current(), byteAddress, value, site);
}

void __tsim_ldmatrix(uint32_t matrices, uint32_t transpose, uint64_t address, uint32_t* out, uint32_t site) {
  ldmatrix(current(), matrices, transpose, address, out, site);
}

void __tsim_stmatrix(uint32_t matrices, uint32_t transpose, uint64_t address, const uint32_t* in, uint32_t site) {
  stmatrix(current(), matrices, transpose, address, in, site);
}

void __tsim_mma(uint32_t kind, const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d, uint32_t site) {
  mma(current(), kind, a, b, c, d, site);
}

void __tsim_cp_async(uint64_t sharedAddress, uint64_t globalAddress, uint32_t bytes, uint32_t srcBytes,
                     uint32_t site) {
  asyncCopy(current(), sharedAddress, globalAddress, bytes, srcBytes, site);
}

void __tsim_cp_async_commit(uint32_t site) { asyncCopyCommit(current(), site); }

void __tsim_cp_async_wait(uint32_t pendingGroups, uint32_t site) { asyncCopyWait(current(), pendingGroups, site); }

void __tsim_wgmma_fence(uint32_t site) { wgmmaFence(current(), site); }

void __tsim_wgmma_commit(uint32_t site) { wgmmaCommit(current(), site); }

void __tsim_wgmma_wait(uint32_t pendingGroups, uint32_t site) { wgmmaWait(current(), pendingGroups, site); }

void __tsim_wgmma_mma(uint32_t n, uint32_t inputA, uint32_t inputB, uint32_t transposes, uint64_t descA,
                      const uint32_t* a, uint64_t descB, uint32_t scaleD, const uint32_t* c, uint32_t* d,
                      uint32_t issue, uint32_t site) {
  const WgmmaArrival operands{n, inputA, inputB, transposes, descA, descB, a, scaleD, c, d, issue};
  wgmmaMma(current(), operands, site);
}

void __tsim_wgmma_register_read(uint32_t issue, uint32_t site) { wgmmaRegisterRead(current(), issue, site); }
void __tsim_mbarrier_init(uint64_t address, uint32_t count, uint32_t site) {
  mbarrierInit(current(), address, count, site);
}

uint64_t __tsim_mbarrier_arrive(uint64_t address, uint32_t count, uint32_t txBytes, uint32_t site) {
  return mbarrierArrive(current(), address, count, txBytes, site);
}

uint32_t __tsim_mbarrier_try_wait_parity(uint64_t address, uint32_t parity, uint32_t site) {
  return mbarrierTryWaitParity(current(), address, parity, site);
}

void __tsim_bulk_tensor_copy(uint64_t sharedAddress, const void* tensorMap, const int32_t* coordinates, uint32_t rank,
                             uint64_t mbarrierAddress, uint32_t site) {
  SimThread& t = current();
  bulkTensorCopy(t, sharedAddress, tensorMap, coordinates, rank, mbarrierAddress, 1u << t.worker->clusterRank, site);
}

void __tsim_bulk_tensor_copy_multicast(uint64_t sharedAddress, const void* tensorMap, const int32_t* coordinates,
                                       uint32_t rank, uint64_t mbarrierAddress, uint32_t programMask, uint32_t site) {
  bulkTensorCopy(current(), sharedAddress, tensorMap, coordinates, rank, mbarrierAddress, programMask, site);
}

void __tsim_mbarrier_arrive_cluster(uint64_t address, uint32_t program, uint32_t count, uint32_t site) {
  mbarrierArriveCluster(current(), address, program, count, site);
}

void __tsim_bulk_tensor_store(const void* tensorMap, const int32_t* coordinates, uint32_t rank, uint64_t sharedAddress,
                              uint32_t site) {
  bulkTensorStore(current(), tensorMap, coordinates, rank, sharedAddress, site);
}

int32_t __tsim_vprintf(const char* format, const void* args, uint32_t site) {
  SimThread& t = current();
  t.worker->site(t, site);
  uint32_t consumed = 0;
  t.worker->print(formatCudaPrintf(format, args, &consumed));
  return static_cast<int32_t>(consumed);
}

void __tsim_assert_fail(const char* message, const char* file, uint32_t line, const char* function, uint32_t site) {
  SimThread& t = current();
  t.worker->fail(t, FindingKind::AssertionFailed, site, [&] {
    return std::string(message ? message : "") + " (" + (file ? file : "?") + ":" + std::to_string(line) +
           (function ? std::string(", in ") + function : std::string()) + ")";
  });
}

void __tsim_trap(uint32_t site) {
  SimThread& t = current();
  t.worker->fail(t, FindingKind::Trap, site, "the kernel trapped");
}

const void* __tsim_dispatch_ptr(void) { return current().worker->launch.amd.dispatchPacket(); }
const void* __tsim_implicitarg_ptr(void) { return current().worker->launch.amd.implicitArguments(); }

}  // extern "C"
