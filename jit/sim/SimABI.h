// The contract between host code rewritten from a GPU kernel (jit/sim/HostModule.cpp) and the emulator runtime
// (jit/sim/runtime/). The rewriting step replaces each GPU operation of the optimized LLVM module, and each
// load, store and atomic, by a call of one of these functions; ORC resolves them to the runtime. docs/Sim.md
// describes the model.
//
// The runtime knows which thread is calling (the current fiber), so no call passes a thread id. Calls that touch
// memory or synchronize pass a *site*: an index into the kernel's site table, which says which instruction it is
// (kind, address space, width), which tile-IR op produced it and the kernel author's file:line, so that findings
// and counters can name them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::sim {

// ---- sites

enum class SiteKind : uint8_t {
  Load, Store, AtomicRMW, AtomicCAS, MemSet, MemCopy,  // memory accesses
  Barrier, WarpSync, Shuffle, Vote, Bpermute,         // synchronization and exchanges
  LdMatrix, StMatrix, Mma, Mfma,                       // warp-level matrix operations
  CpAsync, CpAsyncCommit, CpAsyncWait,                 // asynchronous copies (sm_80+)
  Wgmma, WgmmaFence, WgmmaCommit, WgmmaWait,           // warpgroup matrix operations (sm_90a)
  WgmmaRegisterRead,                                   // a read of registers a wgmma.mma_async writes
  Mbarrier, BulkTensorCopy, BulkTensorStore,           // mbarriers and TMA copies (sm_90)
  Print, Assert, Trap,                                 // debugging
};

// Address spaces, numbered as in the GPU module (NVPTX and AMDGPU agree on these four).
enum class AddressSpace : uint8_t { Generic = 0, Global = 1, Shared = 3, Constant = 4 };

struct Site {
  SiteKind kind = SiteKind::Load;
  AddressSpace space = AddressSpace::Generic;  // memory sites only
  uint32_t bytes = 0;                          // access width (memory sites; per lane)
  uint32_t align = 0;                          // alignment the instruction promises, in bytes
  std::string op;                              // the tile-IR op that produced it ("load", "dot", ...), or ""
  std::string file;                            // the kernel author's source location of that op, or ""
  uint32_t line = 0, column = 0;
  std::string instruction;                     // the GPU module's instruction, printed (for reports)
};
using SiteTable = std::vector<Site>;

// ---- operation codes passed through the ABI

enum AtomicOp : uint32_t {
  kAtomicXchg, kAtomicAdd, kAtomicSub, kAtomicAnd, kAtomicOr, kAtomicXor, kAtomicMax, kAtomicMin,
  kAtomicUMax, kAtomicUMin, kAtomicFAdd, kAtomicFMax, kAtomicFMin,
};
enum ShuffleMode : uint32_t { kShuffleIdx, kShuffleUp, kShuffleDown, kShuffleBfly };  // PTX shfl.sync modes
enum VoteMode : uint32_t { kVoteAll, kVoteAny, kVoteUni, kVoteBallot };               // PTX vote.sync modes

// Thread-block cluster identities (sm_90 special registers), for __tsim_cluster_query.
enum ClusterQuery : uint32_t {
  kClusterCtaId,       // %cluster_ctaid: the program's position in its cluster (axis 0..2)
  kClusterNumCtaId,    // %cluster_nctaid: the cluster's programs along the axis
  kClusterId,          // %clusterid: the cluster's position in the grid of clusters
  kNumClusters,        // %nclusterid
  kClusterCtaRank,     // %cluster_ctarank: x + nx * (y + ny * z) of %cluster_ctaid (axis ignored)
  kClusterNumCtaRank,  // %cluster_nctarank: the cluster's programs (axis ignored)
};

// Warp-level matrix multiply-accumulates (D = A * B + C). Names: shape, then A/B type, then C/D type. Operands
// travel as the instruction's 32-bit registers per lane, in the order the PTX / AMD ISA lists them (packed
// 16-bit and 8-bit elements in a register, low half first; f32 and s32 as their bits).
enum MmaKind : uint32_t {
  // NVIDIA mma.sync.aligned.*.row.col (sm_80+)
  kMmaM16N8K16_F16_F32, kMmaM16N8K16_BF16_F32, kMmaM16N8K16_F16_F16,
  kMmaM16N8K8_F16_F32, kMmaM16N8K8_BF16_F32,
  kMmaM16N8K8_TF32_F32, kMmaM16N8K4_TF32_F32,
  kMmaM16N8K32_S8_S32, kMmaM16N8K32_U8_S32, kMmaM16N8K16_S8_S32,
  kMmaM16N8K32_E4M3_F32, kMmaM16N8K32_E5M2_F32,  // sm_89+
  // AMD MFMA (wave64): v_mfma_<D>_<M>x<N>x<K><A/B>
  kMfmaF32_16x16x16F16, kMfmaF32_16x16x16BF16, kMfmaF32_32x32x8F16, kMfmaF32_32x32x8BF16,
  kMfmaI32_16x16x32I8,  // gfx942
  kMfmaI32_16x16x16I8,  // gfx90a
};

// The input types of a wgmma.mma_async (A's and B's; D is f32).
enum WgmmaInputKind : uint32_t { kWgmmaF16, kWgmmaBF16, kWgmmaE4M3, kWgmmaE5M2 };

}  // namespace tessera::sim

extern "C" {

// ---- identity of the calling thread (axis 0..2)
uint32_t __tsim_thread_id(uint32_t axis);             // tid / workitem id
uint32_t __tsim_threads_per_program(uint32_t axis);   // ntid / workgroup size
uint32_t __tsim_program_id(uint32_t axis);            // ctaid / workgroup id
uint32_t __tsim_num_programs(uint32_t axis);          // nctaid / number of workgroups
uint32_t __tsim_lane_id(void);
uint32_t __tsim_warp_id(void);

// ---- memory. Every access of the kernel, one call per instruction (a vector access is one call). Addresses are
// host addresses: global memory is host memory, shared memory is the program's buffer at __tsim_shared_base().
void* __tsim_shared_base(void);
void __tsim_load(void* dst, uint64_t address, uint32_t bytes, uint32_t site);
void __tsim_store(uint64_t address, const void* src, uint32_t bytes, uint32_t site);
// Read-modify-write on `bytes` (1..8) at `address`; `value` and the result (the old value) are raw bits, zero
// extended. Float ops reinterpret the bits (f16, f32, f64).
uint64_t __tsim_atomic_rmw(uint32_t op, uint64_t address, uint64_t value, uint32_t bytes, uint32_t site);
uint64_t __tsim_atomic_cas(uint64_t address, uint64_t expected, uint64_t desired, uint32_t bytes, uint32_t site);
void __tsim_memset(uint64_t address, uint32_t value, uint64_t bytes, uint32_t site);  // the low byte of value
// memcpy and memmove: the ranges may overlap; both pointers are classified as generic ones (the site's address
// space describes one pointer only).
void __tsim_memcpy(uint64_t dst, uint64_t src, uint64_t bytes, uint32_t site);

// ---- synchronization and warp exchanges. Each needs every thread it names to arrive (the whole program for
// barriers, the mask's lanes for warp operations); what never arrives is reported.
void __tsim_barrier(uint32_t site);                  // bar.sync 0 / barrier0 / s_barrier
void __tsim_warp_sync(uint32_t mask, uint32_t site); // bar.warp.sync
// bar.sync / barrier.sync `id`, `count` (NVPTX): waits until `count` threads (a multiple of the warp size, at most
// the program's) arrived at barrier `id` (0 to 15); kTsimAllThreads: every thread of the program. Barrier 0 for
// all threads is __tsim_barrier. Exited threads never arrive at a named barrier.
inline constexpr uint32_t kTsimAllThreads = 0xFFFFFFFFu;
void __tsim_named_barrier(uint32_t id, uint32_t count, uint32_t site);
// bar.arrive `id`, `count` (NVPTX): counts towards barrier `id`'s `count` threads without waiting (id 1 to 15).
void __tsim_named_barrier_arrive(uint32_t id, uint32_t count, uint32_t site);
// Thread-block clusters (sm_90; docs/Sim.md, runtime/Cluster.h). A launch without clusters is one of clusters of
// one program.
uint32_t __tsim_cluster_query(uint32_t query, uint32_t axis);  // ClusterQuery
// barrier.cluster.arrive[.relaxed] / barrier.cluster.wait: a phase completes when every thread of the cluster
// arrived (or exited); a wait returns once the phase its thread arrived in completed.
void __tsim_cluster_arrive(uint32_t relaxed, uint32_t site);
void __tsim_cluster_wait(uint32_t site);
// setmaxnreg.{inc,dec}.sync.aligned.u32 `registers` (sm_90a; increase nonzero: .inc): checked (24 to 256, a multiple
// of 8, the same in every warp of the warpgroup, not lowering (.inc) / raising (.dec) the warp's known count);
// no other effect.
void __tsim_setmaxnreg(uint32_t increase, uint32_t registers, uint32_t site);
// shfl.sync (32-lane warps): returns the value read; *valid (may be null) is the PTX predicate (source lane in
// range). Reading a lane outside the mask is reported and reads 0.
uint32_t __tsim_shuffle(uint32_t mode, uint32_t mask, uint32_t value, uint32_t laneOrDelta, uint32_t clampSegment,
                        uint32_t* valid, uint32_t site);
uint32_t __tsim_vote(uint32_t mode, uint32_t mask, uint32_t predicate, uint32_t site);
// AMD ds_bpermute_b32: lane (byteAddress / 4) mod wave size. AMD has no member mask: the lanes of the wave that
// have not exited take part.
uint32_t __tsim_bpermute(uint32_t byteAddress, uint32_t value, uint32_t site);

// ---- warp-level matrix operations (.aligned: every lane of the warp must arrive)
// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: `address` is this lane's row address (host address in
// the shared buffer); `out` receives `matrices` registers.
void __tsim_ldmatrix(uint32_t matrices, uint32_t transpose, uint64_t address, uint32_t* out, uint32_t site);
// stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 (sm_90), the inverse: `address` is this lane's row address
// (host address in the shared buffer; ignored for lanes beyond the matrices'), `in` holds `matrices` registers.
void __tsim_stmatrix(uint32_t matrices, uint32_t transpose, uint64_t address, const uint32_t* in, uint32_t site);
// mma.sync / MFMA of `kind` (MmaKind); register counts per lane follow from the kind.
void __tsim_mma(uint32_t kind, const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d, uint32_t site);

// ---- asynchronous copies (cp.async): `bytes` (4, 8, 16) from global to shared, of which the first `srcBytes`
// are read and the rest zero-filled; data lands when this thread waits for its group.
void __tsim_cp_async(uint64_t sharedAddress, uint64_t globalAddress, uint32_t bytes, uint32_t srcBytes,
                     uint32_t site);
void __tsim_cp_async_commit(uint32_t site);
// cp.async.wait_group N: lands every committed group but the N most recent. Copies not committed yet are not
// waited for, so cp.async.wait_all is __tsim_cp_async_commit then __tsim_cp_async_wait(0).
void __tsim_cp_async_wait(uint32_t pendingGroups, uint32_t site);

// ---- warpgroup matrix operations (wgmma, sm_90a). Each is a collective of the 128 threads of a warpgroup (warps
// 4g..4g+3): all must arrive. mma_async operations join the warpgroup's open group; commit_group closes it;
// wait_group N completes every committed group but the N most recent.
void __tsim_wgmma_fence(uint32_t site);
void __tsim_wgmma_commit(uint32_t site);
void __tsim_wgmma_wait(uint32_t pendingGroups, uint32_t site);
// wgmma.mma_async.sync.aligned.m64n{n}k{K}.f32.{inputA}.{inputB} (WgmmaInputKind; K = 16 for the 16-bit inputs, 32
// for the 8-bit ones) with A (64 x K) and B (K x n) in shared memory as the descriptors say, or A from registers
// when `a` is not null (16-bit inputs: this thread's four fragment registers; descA is then unused); `transposes`
// bit 0 is imm-trans-a, bit 1 imm-trans-b (16-bit inputs only); scaleD nonzero: D = A * B + C, else
// D = A * B. c and d: this thread's n / 2 accumulator registers. `issue` names the instruction (one id per
// wgmma.mma_async of the module) for __tsim_wgmma_register_read.
void __tsim_wgmma_mma(uint32_t n, uint32_t inputA, uint32_t inputB, uint32_t transposes, uint64_t descA,
                      const uint32_t* a, uint64_t descB, uint32_t scaleD, const uint32_t* c, uint32_t* d,
                      uint32_t issue, uint32_t site);
// An instruction at `site` reads registers that the wgmma.mma_async `issue` wrote: on hardware they are undefined
// until the wait_group that completes it.
void __tsim_wgmma_register_read(uint32_t issue, uint32_t site);
// ---- mbarriers and bulk tensor copies (sm_90). An mbarrier is named by the host address of its 8 bytes in shared
// memory; the runtime keeps its state (Mbarriers.h).
// mbarrier.init: `count` (1 to 2^20 - 1) arrivals per phase.
void __tsim_mbarrier_init(uint64_t address, uint32_t count, uint32_t site);
// mbarrier.arrive[.expect_tx]: adds `txBytes` to the current phase's pending transaction bytes, then arrives
// `count` times. Returns the state token (the phase it arrived in).
uint64_t __tsim_mbarrier_arrive(uint64_t address, uint32_t count, uint32_t txBytes, uint32_t site);
// mbarrier.try_wait.parity: returns 1 once the phase of parity `parity` has completed, suspending the thread until
// then (a GPU's try_wait may return 0 first; the kernel's loop would try again). A phase that can never complete
// is reported as a hang.
uint32_t __tsim_mbarrier_try_wait_parity(uint64_t address, uint32_t parity, uint32_t site);
// cp.async.bulk.tensor.<rank>d.shared::cluster.global.tile.mbarrier::complete_tx::bytes: the box at `coordinates`
// (`rank` of them, dimension 0 first) of the tensor map at `tensorMap` (TensorMap.h) into shared memory at
// `sharedAddress` (128-byte aligned), completing its bytes on the mbarrier at `mbarrierAddress`. The box lands
// when that barrier's phase completes.
void __tsim_bulk_tensor_copy(uint64_t sharedAddress, const void* tensorMap, const int32_t* coordinates, uint32_t rank,
                             uint64_t mbarrierAddress, uint32_t site);
// Thread-block clusters: mbarrier.arrive.release.cluster.shared::cluster.b64 on the mbarrier at the same offset
// as `address` (a shared address of the calling program, as mapa.shared::cluster maps it) in the cluster's program
// of rank `program`: `count` arrivals, releasing the calling thread's accesses so far.
void __tsim_mbarrier_arrive_cluster(uint64_t address, uint32_t program, uint32_t count, uint32_t site);
// cp.async.bulk.tensor...multicast::cluster: __tsim_bulk_tensor_copy's box into every program of the cluster whose
// rank is set in `programMask` (bit r: rank r), at the same shared offset, completing its bytes on each one's
// mbarrier at `mbarrierAddress`'s offset.
void __tsim_bulk_tensor_copy_multicast(uint64_t sharedAddress, const void* tensorMap, const int32_t* coordinates,
                                       uint32_t rank, uint64_t mbarrierAddress, uint32_t programMask, uint32_t site);
// cp.async.bulk.tensor.<rank>d.global.shared::cta.bulk_group: the box at `coordinates` of the tensor map at
// `tensorMap` from shared memory at `sharedAddress` (128-byte aligned) to global memory, elements outside the
// tensor not written. The emulator stores it at once, so the bulk group's commit and wait are no-ops.
void __tsim_bulk_tensor_store(const void* tensorMap, const int32_t* coordinates, uint32_t rank, uint64_t sharedAddress,
                              uint32_t site);

// ---- debugging
// CUDA vprintf: `args` holds the arguments at their natural alignment (null without arguments); returns the
// number of arguments read.
int32_t __tsim_vprintf(const char* format, const void* args, uint32_t site);
void __tsim_assert_fail(const char* message, const char* file, uint32_t line, const char* function, uint32_t site);
void __tsim_trap(uint32_t site);

// ---- AMDGPU: the HSA dispatch packet and implicit kernel arguments (the printf buffer pointer at byte 24)
const void* __tsim_dispatch_ptr(void);
const void* __tsim_implicitarg_ptr(void);

}  // extern "C"
