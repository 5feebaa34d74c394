// The emulator's checks on hand-written kernels that plant each bug class: a missing barrier (race), an
// out-of-bounds and a misaligned global access, shared accesses beyond the kernel's size, uninitialized shared
// reads, cp.async data read before its wait, barrier divergence, collectives some lane never reaches, shuffles
// from lanes outside the mask, assertions and traps. The correct variants report nothing.
#include <cstring>
#include <numeric>

#include "SimRuntimeTestUtil.h"
#include "ir/Error.h"

namespace {

using namespace simtest;

// ---- a block reduction through shared memory: 4 warps, one float per thread, tree of halvings.
enum ReduceSite : uint32_t { kLoadIn, kStoreShared, kLoadSharedA, kLoadSharedB, kStoreSum, kBarrier, kStoreOut };
SiteTable reduceSites() {
  return {site(SiteKind::Load, AddressSpace::Global, 4, "load", 10),
          site(SiteKind::Store, AddressSpace::Shared, 4, "reduce", 11),
          site(SiteKind::Load, AddressSpace::Shared, 4, "reduce", 12),
          site(SiteKind::Load, AddressSpace::Shared, 4, "reduce", 13),
          site(SiteKind::Store, AddressSpace::Shared, 4, "reduce", 14),
          syncSite(SiteKind::Barrier, "reduce", 15),
          site(SiteKind::Store, AddressSpace::Global, 4, "store", 16)};
}

template <bool kBarriers>
void blockReduce(void** params) {
  const float* in = static_cast<const float*>(params[0]);
  float* out = static_cast<float*>(params[1]);
  uint32_t tid = __tsim_thread_id(0), n = __tsim_threads_per_program(0), program = __tsim_program_id(0);
  store(shared<float>(tid), load<float>(in + program * n + tid, kLoadIn), kStoreShared);
  if (kBarriers) __tsim_barrier(kBarrier);
  for (uint32_t s = n / 2; s > 0; s /= 2) {
    if (tid < s)
      store(shared<float>(tid), load<float>(shared<float>(tid), kLoadSharedA) + load<float>(shared<float>(tid + s), kLoadSharedB),
            kStoreSum);
    if (kBarriers) __tsim_barrier(kBarrier);
  }
  if (tid == 0) store(out + program, load<float>(shared<float>(0), kLoadSharedA), kStoreOut);
}

struct ReduceData {
  std::vector<float> in = std::vector<float>(2 * 128), out = std::vector<float>(2, -1.0f);
  void* params[2];
  ReduceData() {
    std::iota(in.begin(), in.end(), 0.0f);
    params[0] = in.data();
    params[1] = out.data();
  }
};

TEST(SimRuntimeChecks, BlockReductionWithBarriersIsCleanAndRight) {
  ReduceData d;
  Report r = launch(program("reduce", 4, 128 * 4, reduceSites(), &blockReduce<true>), {2, 1, 1}, d.params,
                    config({range(d.in), range(d.out)}));
  EXPECT_FALSE(r.failed()) << r.str();
  EXPECT_EQ(d.out[0], 127.0f * 128 / 2);
  EXPECT_EQ(d.out[1], (128.0f + 255) * 128 / 2);
  EXPECT_EQ(r.total.barriers, 2u * 8);  // per program: one after the stores, seven halvings
}

TEST(SimRuntimeChecks, MissingBarrierIsARaceNamingBothThreadsAndTheSite) {
  ReduceData d;
  Report r = launch(program("reduce", 4, 128 * 4, reduceSites(), &blockReduce<false>), {2, 1, 1}, d.params,
                    config({range(d.in), range(d.out)}));
  ASSERT_GT(r.findingCount(FindingKind::SharedRace), 0u) << r.str();
  const Finding* f = firstFinding(r, FindingKind::SharedRace);
  // Without barriers thread 0 runs its whole reduction first, last reading shared[1] (site 13) at s = 1; thread
  // 1 then stores its input into shared[1] (site 11): the first race, a write after another thread's read.
  EXPECT_EQ(f->kernel, "reduce");
  EXPECT_EQ(f->program, (std::array<uint32_t, 3>{0, 0, 0}));
  EXPECT_EQ(f->warp, 0u);
  EXPECT_EQ(f->lane, 1u);
  EXPECT_EQ(f->file, kKernelFile);
  EXPECT_EQ(f->line, 11u);
  EXPECT_EQ(f->space, "shared");
  EXPECT_EQ(f->address, 4u);
  EXPECT_TRUE(f->write);
  EXPECT_NE(f->message.find("a read by warp 0 lane 0 at kernels.py:13:1 (reduce), with no barrier between"),
            std::string::npos)
      << f->message;
  EXPECT_NE(f->str().find("warp 0 lane 1 at kernels.py:11:1 (reduce)"), std::string::npos) << f->str();
  EXPECT_LE(r.findings.size(), kFindingKindCount * 10);
}

// ---- global bounds and alignment
enum GlobalSite : uint32_t { kLoad4, kLoad16, kLoad16Promised, kStore4, kLoad16Align4 };
SiteTable globalSites() {
  return {site(SiteKind::Load, AddressSpace::Global, 4, "load", 20),
          site(SiteKind::Load, AddressSpace::Global, 16, "load", 21),
          site(SiteKind::Load, AddressSpace::Global, 4, "load", 22, 8),
          site(SiteKind::Store, AddressSpace::Global, 4, "store", 23),
          site(SiteKind::Load, AddressSpace::Global, 16, "load", 24, 4)};
}

void copyPastTheEnd(void** params) {
  const float* in = static_cast<const float*>(params[0]);
  float* out = static_cast<float*>(params[1]);
  uint32_t tid = __tsim_thread_id(0);
  store(out + tid, load<float>(in + tid, kLoad4), kStore4);  // `in` has 100 floats, the program 128 threads
}

TEST(SimRuntimeChecks, OutOfBoundsGlobalLoadIsReportedAndReadsZero) {
  std::vector<float> in(100, 7.0f), out(128, -1.0f);
  void* params[] = {in.data(), out.data()};
  Report r = launch(program("copy", 4, 0, globalSites(), &copyPastTheEnd), {1, 1, 1}, params,
                    config({range(in), range(out)}));
  EXPECT_EQ(r.findingCount(FindingKind::GlobalOutOfBounds), 28u);
  EXPECT_EQ(r.findingCount(), 28u);
  EXPECT_EQ(r.findings.size(), 10u);  // the first ten are kept
  const Finding* f = firstFinding(r, FindingKind::GlobalOutOfBounds);
  EXPECT_EQ(f->warp, 3u);
  EXPECT_EQ(f->lane, 4u);  // thread 100
  EXPECT_EQ(f->address, addr(in.data() + 100));
  EXPECT_EQ(f->bytes, 4u);
  EXPECT_EQ(f->space, "global");
  EXPECT_EQ(f->line, 20u);
  EXPECT_EQ(out[99], 7.0f);
  EXPECT_EQ(out[100], 0.0f);
  EXPECT_NE(r.str().find("18 more out-of-bounds global access finding(s) not shown (28 in all)"), std::string::npos)
      << r.str();
  EXPECT_THROW(r.throwIfFailed(), tessera::Error);
}

void misalignedVectorLoad(void** params) {
  const char* in = static_cast<const char*>(params[0]);
  if (__tsim_thread_id(0) != 0) return;
  struct alignas(16) V {
    float f[4];
  } v;
  __tsim_load(&v, addr(in + 4), 16, kLoad16);  // 16-byte access at a 4-byte boundary
  __tsim_load(&v, addr(in + 16), 16, kLoad16);
  __tsim_load(&v, addr(in + 4), 4, kLoad16Promised);  // the instruction promised 8-byte alignment
  // `load <4 x float>, align 4` promises 4 bytes only: valid IR, which code generation splits; not reported.
  __tsim_load(&v, addr(in + 4), 16, kLoad16Align4);
}

TEST(SimRuntimeChecks, MisalignedAccessesAreReported) {
  alignas(16) static float in[16] = {};
  void* params[] = {in};
  Report r = launch(program("misaligned", 1, 0, globalSites(), &misalignedVectorLoad), {1, 1, 1}, params,
                    config({{addr(in), sizeof in}}));
  ASSERT_EQ(r.findingCount(FindingKind::Misaligned), 2u) << r.str();
  EXPECT_EQ(r.findings[0].line, 21u);
  EXPECT_EQ(r.findings[0].bytes, 16u);
  EXPECT_NE(r.findings[0].message.find("multiple of its width"), std::string::npos);
  EXPECT_EQ(r.findings[1].line, 22u);
  EXPECT_NE(r.findings[1].message.find("8-byte alignment the instruction promises"), std::string::npos);

  LaunchConfig off = config({{addr(in), sizeof in}});
  off.checks = false;
  EXPECT_FALSE(launch(program("misaligned", 1, 0, globalSites(), &misalignedVectorLoad), {1, 1, 1}, params, off).failed());
}

// ---- shared bounds, initialization, cp.async
enum SharedSite : uint32_t { kSLoad, kSStore, kAsync, kCommit, kWait, kSBarrier, kGLoad };
SiteTable sharedSites() {
  return {site(SiteKind::Load, AddressSpace::Shared, 4, "load", 30),
          site(SiteKind::Store, AddressSpace::Shared, 4, "store", 31),
          site(SiteKind::CpAsync, AddressSpace::Shared, 16, "async_copy", 32),
          syncSite(SiteKind::CpAsyncCommit, "async_copy", 33),
          syncSite(SiteKind::CpAsyncWait, "async_copy", 34),
          syncSite(SiteKind::Barrier, "barrier", 35),
          site(SiteKind::Load, AddressSpace::Global, 4, "load", 36)};
}

void sharedPastTheEnd(void**) {
  uint32_t tid = __tsim_thread_id(0);
  store(shared<uint32_t>(tid), tid, kSStore);  // 32 threads, 64 bytes of shared memory
}

TEST(SimRuntimeChecks, SharedAccessBeyondTheKernelsSizeIsReported) {
  Report r = launch(program("smem", 1, 64, sharedSites(), &sharedPastTheEnd), {1, 1, 1}, nullptr, config({}));
  EXPECT_EQ(r.findingCount(FindingKind::SharedOutOfBounds), 16u) << r.str();
  const Finding* f = firstFinding(r, FindingKind::SharedOutOfBounds);
  EXPECT_EQ(f->lane, 16u);
  EXPECT_EQ(f->address, 64u);  // the shared offset
  EXPECT_TRUE(f->write);
  EXPECT_NE(f->message.find("64 bytes of shared memory"), std::string::npos);
}

void readsUnwrittenShared(void**) {
  uint32_t tid = __tsim_thread_id(0);
  if (tid < 16) store(shared<uint32_t>(tid), tid, kSStore);
  __tsim_barrier(kSBarrier);
  (void)load<uint32_t>(shared<uint32_t>(31 - tid), kSLoad);
}

TEST(SimRuntimeChecks, ReadOfSharedBytesNotWrittenInThisProgramIsReported) {
  // Two programs: the second must not count the first's writes as its own.
  Report r = launch(program("uninit", 1, 128, sharedSites(), &readsUnwrittenShared), {2, 1, 1}, nullptr, config({}));
  EXPECT_EQ(r.findingCount(FindingKind::UninitializedSharedRead), 32u) << r.str();  // lanes 0-15 in each
  const Finding* f = firstFinding(r, FindingKind::UninitializedSharedRead);
  EXPECT_EQ(f->lane, 0u);
  EXPECT_EQ(f->address, 124u);
  EXPECT_EQ(r.findingCount(), 32u);
}

template <bool kWaitFirst>
void asyncCopyThenRead(void** params) {
  const uint32_t* in = static_cast<const uint32_t*>(params[0]);
  uint32_t* out = static_cast<uint32_t*>(params[1]);
  uint32_t tid = __tsim_thread_id(0);
  __tsim_cp_async(addr(shared<uint32_t>(4 * tid)), addr(in + 4 * tid), 16, 16, kAsync);
  __tsim_cp_async_commit(kCommit);
  if (kWaitFirst) __tsim_cp_async_wait(0, kWait);
  out[tid] = load<uint32_t>(shared<uint32_t>(4 * tid + 1), kSLoad);
}

TEST(SimRuntimeChecks, AsyncCopyDataReadBeforeTheWaitIsReported) {
  std::vector<uint32_t> in(128), out(32);
  std::iota(in.begin(), in.end(), 1000u);
  void* params[] = {in.data(), out.data()};
  Report early = launch(program("cpasync", 1, 512, sharedSites(), &asyncCopyThenRead<false>), {1, 1, 1}, params,
                        config({range(in), range(out)}));
  EXPECT_EQ(early.findingCount(FindingKind::PendingAsyncCopyRead), 32u) << early.str();
  EXPECT_EQ(early.findingCount(), 32u);
  EXPECT_EQ(firstFinding(early, FindingKind::PendingAsyncCopyRead)->address, 4u);

  Report waited = launch(program("cpasync", 1, 512, sharedSites(), &asyncCopyThenRead<true>), {1, 1, 1}, params,
                         config({range(in), range(out)}));
  EXPECT_FALSE(waited.failed()) << waited.str();
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(out[t], 1000 + 4 * t + 1);
}

void asyncCopyGroups(void** params) {
  const uint32_t* in = static_cast<const uint32_t*>(params[0]);
  uint32_t* out = static_cast<uint32_t*>(params[1]);
  uint32_t tid = __tsim_thread_id(0);
  // Two groups; wait_group 1 lands the first only. A third copy is never committed: wait 0 leaves it.
  __tsim_cp_async(addr(shared<uint32_t>(tid)), addr(in + tid), 4, 4, kAsync);
  __tsim_cp_async_commit(kCommit);
  __tsim_cp_async(addr(shared<uint32_t>(32 + tid)), addr(in + 32 + tid), 4, 2, kAsync);  // 2 bytes read, 2 zeroed
  __tsim_cp_async_commit(kCommit);
  __tsim_cp_async_wait(1, kWait);
  out[tid] = load<uint32_t>(shared<uint32_t>(tid), kSLoad);
  __tsim_cp_async_wait(0, kWait);
  out[32 + tid] = load<uint32_t>(shared<uint32_t>(32 + tid), kSLoad);
  __tsim_cp_async(addr(shared<uint32_t>(64 + tid)), addr(in + tid), 4, 4, kAsync);
  __tsim_cp_async_wait(0, kWait);
  (void)load<uint32_t>(shared<uint32_t>(64 + tid), kSLoad);  // still pending
}

TEST(SimRuntimeChecks, AsyncCopyGroupsLandInOrderWithZeroFill) {
  std::vector<uint32_t> in(64, 0xAABBCCDDu), out(64);
  void* params[] = {in.data(), out.data()};
  Report r = launch(program("groups", 1, 512, sharedSites(), &asyncCopyGroups), {1, 1, 1}, params,
                    config({range(in), range(out)}));
  EXPECT_EQ(out[0], 0xAABBCCDDu);
  EXPECT_EQ(out[32], 0x0000CCDDu);
  EXPECT_EQ(r.findingCount(FindingKind::PendingAsyncCopyRead), 32u) << r.str();
  EXPECT_EQ(r.findingCount(), 32u);
}

// ---- barriers and warp collectives
enum SyncSite : uint32_t { kBar, kShfl, kSync, kWLoad, kWStore, kOtherShfl };
SiteTable syncSites() {
  return {syncSite(SiteKind::Barrier, "barrier", 40),    syncSite(SiteKind::Shuffle, "reduce", 41),
          syncSite(SiteKind::WarpSync, "reduce", 42),    site(SiteKind::Load, AddressSpace::Shared, 4, "load", 43),
          site(SiteKind::Store, AddressSpace::Shared, 4, "store", 44), syncSite(SiteKind::Shuffle, "scan", 45)};
}

void exitsBeforeTheBarrier(void**) {
  if (__tsim_thread_id(0) == 37) return;
  __tsim_barrier(kBar);
  __tsim_barrier(kBar);
}

TEST(SimRuntimeChecks, ThreadExitingBeforeABarrierIsBarrierDivergence) {
  Report r = launch(program("diverge", 2, 0, syncSites(), &exitsBeforeTheBarrier), {1, 1, 1}, nullptr, config({}));
  ASSERT_EQ(r.findingCount(FindingKind::BarrierDivergence), 1u) << r.str();  // once per program
  const Finding* f = firstFinding(r, FindingKind::BarrierDivergence);
  EXPECT_EQ(f->line, 40u);
  EXPECT_EQ(f->warp, 1u);
  EXPECT_EQ(f->lane, 5u);
  EXPECT_NE(f->message.find("63 of 64 threads reached it"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("warp 1 lanes 5"), std::string::npos) << f->message;
  EXPECT_EQ(r.total.barriers, 2u);  // the live threads went on
}

void laneSkipsTheShuffle(void**) {
  uint32_t lane = __tsim_lane_id();
  if (lane == 31) return;
  uint32_t valid;
  (void)__tsim_shuffle(kShuffleBfly, 0xFFFFFFFF, lane, 1, 0x1F, &valid, kShfl);
}

TEST(SimRuntimeChecks, ShuffleALaneNeverReachesIsReportedNotHung) {
  Report r = launch(program("hang", 1, 0, syncSites(), &laneSkipsTheShuffle), {3, 1, 1}, nullptr, config({}));
  EXPECT_EQ(r.findingCount(FindingKind::IncompleteCollective), 3u) << r.str();  // every program ends
  const Finding* f = firstFinding(r, FindingKind::IncompleteCollective);
  EXPECT_EQ(f->line, 41u);
  EXPECT_NE(f->message.find("shuffle with mask 0xffffffff never completes: lanes 0-30 arrived"), std::string::npos)
      << f->message;
  EXPECT_NE(f->message.find("lanes 31 exited"), std::string::npos) << f->message;
}

void waitsAtBarrierInsteadOfShuffle(void**) {
  if (__tsim_lane_id() == 3) {
    __tsim_barrier(kBar);
    return;
  }
  (void)__tsim_shuffle(kShuffleIdx, 0xFFFFFFFF, 1, 0, 0x1F, nullptr, kShfl);
  __tsim_barrier(kBar);
}

TEST(SimRuntimeChecks, LaneWaitingAtABarrierInsteadIsNamedWithItsSite) {
  Report r = launch(program("hang", 1, 0, syncSites(), &waitsAtBarrierInsteadOfShuffle), {1, 1, 1}, nullptr, config({}));
  const Finding* f = firstFinding(r, FindingKind::IncompleteCollective);
  ASSERT_NE(f, nullptr) << r.str();
  EXPECT_NE(f->message.find("lanes 3 waits at the barrier at kernels.py:40:1 (barrier)"), std::string::npos)
      << f->message;
}

void lanesAtDifferentShuffles(void**) {
  uint32_t lane = __tsim_lane_id();
  (void)__tsim_shuffle(kShuffleIdx, 0xFFFFFFFF, lane, 0, 0x1F, nullptr, lane < 16 ? kShfl : kOtherShfl);
}

TEST(SimRuntimeChecks, LanesAtDifferentCollectivesAreAMismatch) {
  Report r = launch(program("mismatch", 1, 0, syncSites(), &lanesAtDifferentShuffles), {1, 1, 1}, nullptr, config({}));
  const Finding* f = firstFinding(r, FindingKind::CollectiveMismatch);
  ASSERT_NE(f, nullptr) << r.str();
  EXPECT_EQ(f->lane, 16u);
  EXPECT_EQ(f->line, 45u);
  EXPECT_NE(f->message.find("lanes 0-15 of warp 0 wait at shuffle with mask 0xffffffff at kernels.py:41:1"),
            std::string::npos)
      << f->message;
}

void shufflesOutsideItsMask(void** params) {
  uint32_t* out = static_cast<uint32_t*>(params[0]);
  uint32_t lane = __tsim_lane_id();
  if (lane >= 16) return;
  // Lanes 0-15 rotate by one: lane 15 reads lane 16, which is not in the mask.
  out[lane] = __tsim_shuffle(kShuffleIdx, 0xFFFF, 100 + lane, lane + 1, 0x1F, nullptr, kShfl);
}

TEST(SimRuntimeChecks, ShuffleFromALaneOutsideTheMaskIsReported) {
  std::vector<uint32_t> out(16);
  void* params[] = {out.data()};
  Report r = launch(program("wrong_lane", 1, 0, syncSites(), &shufflesOutsideItsMask), {1, 1, 1}, params, config({}));
  ASSERT_EQ(r.findingCount(FindingKind::ShuffleOutsideMask), 1u) << r.str();
  const Finding* f = firstFinding(r, FindingKind::ShuffleOutsideMask);
  EXPECT_EQ(f->lane, 15u);
  EXPECT_NE(f->message.find("reads lane 16, which is not in the mask 0xffff"), std::string::npos) << f->message;
  EXPECT_EQ(out[14], 115u);
  EXPECT_EQ(out[15], 0u);
}

template <bool kSync>
void warpExchangesThroughShared(void**) {
  uint32_t lane = __tsim_lane_id();
  store(shared<uint32_t>(lane), lane, kWStore);
  if (kSync) __tsim_warp_sync(0xFFFFFFFF, kSync);
  (void)load<uint32_t>(shared<uint32_t>(lane ^ 1), kWLoad);
}

TEST(SimRuntimeChecks, WarpSyncOrdersLanesOfAWarp) {
  Report synced = launch(program("warp", 1, 128, syncSites(), &warpExchangesThroughShared<true>), {1, 1, 1}, nullptr,
                         config({}));
  EXPECT_FALSE(synced.failed()) << synced.str();
  EXPECT_EQ(synced.total.instructions(InstructionClass::WarpSync), 1u);
  Report unsynced = launch(program("warp", 1, 128, syncSites(), &warpExchangesThroughShared<false>), {1, 1, 1},
                           nullptr, config({}));
  // Lanes run one after another. An even lane reads its odd neighbour's word before that lane wrote it
  // (uninitialized); the odd lane then writes the word the even lane read (a race) and reads the even lane's word
  // written without a sync between (another race).
  EXPECT_EQ(unsynced.findingCount(FindingKind::SharedRace), 32u) << unsynced.str();
  EXPECT_EQ(unsynced.findingCount(FindingKind::UninitializedSharedRead), 16u);
  EXPECT_FALSE(synced.failed());
}

void manyReadersThenAWriter(void**) {
  uint32_t tid = __tsim_thread_id(0);
  if (tid == 0) store(shared<uint32_t>(0), 1u, kWStore);
  __tsim_barrier(kBar);
  if (tid < 40) (void)load<uint32_t>(shared<uint32_t>(0), kWLoad);
  else if (tid == 40) store(shared<uint32_t>(0), 2u, kWStore);
}

TEST(SimRuntimeChecks, WriteAfterReadsOfSeveralThreadsIsARace) {
  Report r = launch(program("readers", 2, 16, syncSites(), &manyReadersThenAWriter), {1, 1, 1}, nullptr, config({}));
  ASSERT_EQ(r.findingCount(FindingKind::SharedRace), 1u) << r.str();
  const Finding* f = firstFinding(r, FindingKind::SharedRace);
  EXPECT_EQ(f->warp, 1u);
  EXPECT_EQ(f->lane, 8u);
  EXPECT_NE(f->message.find("conflicts with reads by several threads (one at kernels.py:43:1 (load))"),
            std::string::npos)
      << f->message;
}

// Every lane of a warp storing its lane id to one word: one store instruction, which the hardware serializes.
// Storing there again in a second execution of the site, with no barrier, races with the other lanes' first
// store; so does another warp's store of other values. Another warp storing the same values leaves memory as it
// was, in any order: no race (the lowering's layout conversions store replicated elements from several warps).
template <int kExecutions, bool kTwoWarps, bool kSameValues = false>
void replicatedStores(void**) {
  uint32_t warp = __tsim_warp_id(), lane = __tsim_lane_id();
  if (warp == 1 && !kTwoWarps) return;
  for (int i = 0; i < kExecutions; ++i) store(shared<uint32_t>(0), kSameValues ? 7u : lane + 32 * warp + 64 * i, kWStore);
}

TEST(SimRuntimeChecks, LanesOfOneStoreInstructionDoNotRace) {
  Report once = launch(program("replicated", 2, 16, syncSites(), &replicatedStores<1, false>), {1, 1, 1}, nullptr,
                       config({}));
  EXPECT_FALSE(once.failed()) << once.str();
  Report twice = launch(program("replicated", 2, 16, syncSites(), &replicatedStores<2, false>), {1, 1, 1}, nullptr,
                        config({}));
  EXPECT_GT(twice.findingCount(FindingKind::SharedRace), 0u) << twice.str();
  Report twoWarps = launch(program("replicated", 2, 16, syncSites(), &replicatedStores<1, true>), {1, 1, 1}, nullptr,
                           config({}));
  EXPECT_GT(twoWarps.findingCount(FindingKind::SharedRace), 0u) << twoWarps.str();
  Report sameValues = launch(program("replicated", 2, 16, syncSites(), &replicatedStores<1, true, true>), {1, 1, 1},
                             nullptr, config({}));
  EXPECT_EQ(sameValues.findingCount(FindingKind::SharedRace), 0u) << sameValues.str();
}

TEST(SimRuntimeChecks, ChecksOffSkipsRacesButNotBounds) {
  ReduceData d;
  LaunchConfig off = config({range(d.in), range(d.out)});
  off.checks = false;
  EXPECT_FALSE(launch(program("reduce", 4, 128 * 4, reduceSites(), &blockReduce<false>), {2, 1, 1}, d.params, off).failed());
  std::vector<float> in(100), out(128);
  void* params[] = {in.data(), out.data()};
  LaunchConfig offBounds = config({range(in), range(out)});
  offBounds.checks = false;
  EXPECT_EQ(launch(program("copy", 4, 0, globalSites(), &copyPastTheEnd), {1, 1, 1}, params, offBounds)
                .findingCount(FindingKind::GlobalOutOfBounds),
            28u);
}

// ---- generic addresses: the shared window, the thread's own stack, launch memory, anything else
enum GenericSite : uint32_t { kGenLoad, kGenStore };
SiteTable genericSites() {
  return {site(SiteKind::Load, AddressSpace::Generic, 4, "load", 50),
          site(SiteKind::Store, AddressSpace::Generic, 4, "store", 51)};
}

// Not instrumented by ASan: it would move `local` to its fake stack, off the fiber's, where a kernel's locals live.
__attribute__((no_sanitize("address"))) void genericAccesses(void** params) {
  uint32_t* buffer = static_cast<uint32_t*>(params[0]);
  uint32_t* elsewhere = static_cast<uint32_t*>(params[1]);
  uint32_t tid = __tsim_thread_id(0);
  uint32_t local = 5;
  uint32_t fromStack;
  __tsim_load(&fromStack, addr(&local), 4, kGenLoad);
  __tsim_store(addr(shared<uint32_t>(tid)), &fromStack, 4, kGenStore);
  uint32_t fromShared;
  __tsim_load(&fromShared, addr(shared<uint32_t>(tid)), 4, kGenLoad);
  __tsim_store(addr(buffer + tid), &fromShared, 4, kGenStore);
  if (tid == 0) __tsim_store(addr(elsewhere), &fromShared, 4, kGenStore);
}

TEST(SimRuntimeChecks, GenericAddressesAreClassified) {
  std::vector<uint32_t> buffer(32), notPassed(1, 9);
  void* params[] = {buffer.data(), notPassed.data()};
  Report r = launch(program("generic", 1, 128, genericSites(), &genericAccesses), {1, 1, 1}, params,
                    config({range(buffer)}));
  EXPECT_EQ(buffer[31], 5u);
  ASSERT_EQ(r.findingCount(), 1u) << r.str();
  EXPECT_EQ(r.findings[0].kind, FindingKind::GlobalOutOfBounds);
  EXPECT_EQ(r.findings[0].space, "generic");
  EXPECT_EQ(notPassed[0], 9u);  // not performed
  // Stack accesses are not counted; shared and global ones are, at the same (generic) sites.
  EXPECT_EQ(r.total.sharedLoad.requests, 1u);
  EXPECT_EQ(r.total.sharedStore.requests, 1u);
  EXPECT_EQ(r.total.globalStore.requests, 1u);
  EXPECT_EQ(r.total.globalLoad.requests, 0u);
}

// ---- assertions and traps end their program; the others still run
enum DebugSite : uint32_t { kAssert, kTrap, kDStore };
void assertsInProgramOne(void** params) {
  uint32_t* out = static_cast<uint32_t*>(params[0]);
  uint32_t program = __tsim_program_id(0);
  if (program == 1 && __tsim_thread_id(0) == 3) __tsim_assert_fail("x < n", "kernel.cpp", 7, "kern", kAssert);
  if (program == 2) __tsim_trap(kTrap);
  __tsim_barrier(kAssert);
  if (__tsim_thread_id(0) == 0) store(out + program, 1u, kDStore);
}

TEST(SimRuntimeChecks, AssertionsAndTrapsEndTheirProgram) {
  std::vector<uint32_t> out(4);
  void* params[] = {out.data()};
  SiteTable sites = {syncSite(SiteKind::Assert, "assert", 60), syncSite(SiteKind::Trap, "trap", 61),
                     site(SiteKind::Store, AddressSpace::Global, 4, "store", 62)};
  Report r = launch(program("asserts", 1, 0, sites, &assertsInProgramOne), {4, 1, 1}, params, config({range(out)}));
  EXPECT_EQ(out, (std::vector<uint32_t>{1, 0, 0, 1}));
  ASSERT_EQ(r.findingCount(FindingKind::AssertionFailed), 1u) << r.str();
  EXPECT_EQ(r.findingCount(FindingKind::Trap), 1u);
  const Finding* f = firstFinding(r, FindingKind::AssertionFailed);
  EXPECT_EQ(f->program[0], 1u);
  EXPECT_EQ(f->lane, 3u);
  EXPECT_EQ(f->message, "x < n (kernel.cpp:7, in kern)");
  EXPECT_EQ(firstFinding(r, FindingKind::Trap)->program[0], 2u);
}

void usesAnUnknownSite(void**) { __tsim_barrier(99); }

TEST(SimRuntimeChecks, CallsWithASiteOutsideTheTableAreInvalid) {
  Report r = launch(program("bad_site", 1, 0, syncSites(), &usesAnUnknownSite), {1, 1, 1}, nullptr, config({}));
  ASSERT_EQ(r.findingCount(FindingKind::InvalidCall), 1u) << r.str();  // the first thread ends the program
  EXPECT_NE(r.findings[0].message.find("site 99 is not in the kernel's site table (6 sites)"), std::string::npos);
}

}  // namespace
