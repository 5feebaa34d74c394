// Thread-block clusters on the emulator (jit/sim/runtime/Cluster.h): a cluster's programs run together, their
// identities are PTX's (%clusterid, %cluster_ctaid, %cluster_ctarank and their counts), the cluster barrier makes
// the threads of one program wait for those of the others, and what goes wrong with it (a thread that never
// arrives, arriving twice, waiting without arriving, exited threads) is reported rather than hung on. A TMA
// multicast lands in every program of its mask, each consumer hands the buffer back through an arrival on the
// issuer's mbarrier, and racecheck follows that protocol across programs: an issue that does not wait for every
// program's consumers races with their reads.
#include <numeric>
#include <string>

#include "SimRuntimeTestUtil.h"
#include "ir/Error.h"
#include "jit/sim/runtime/TensorMap.h"

namespace {

using namespace simtest;

enum Site : uint32_t { kStore, kLoad, kArrive, kWait, kBarrier, kSharedStore, kSharedLoad, kTrap };
SiteTable clusterSites() {
  return {site(SiteKind::Store, AddressSpace::Global, 4, "store", 10),
          site(SiteKind::Load, AddressSpace::Global, 4, "load", 11),
          syncSite(SiteKind::Barrier, "cluster_arrive", 12),
          syncSite(SiteKind::Barrier, "cluster_wait", 13),
          syncSite(SiteKind::Barrier, "barrier", 14),
          site(SiteKind::Store, AddressSpace::Shared, 4, "store", 15),
          site(SiteKind::Load, AddressSpace::Shared, 4, "load", 16),
          syncSite(SiteKind::Trap, "trap", 17)};
}

constexpr std::array<uint32_t, 3> kGrid{4, 2, 2};
constexpr uint32_t kPrograms = kGrid[0] * kGrid[1] * kGrid[2];
constexpr uint32_t kQueries = 14;

uint32_t linearProgram() {
  return __tsim_program_id(0) + kGrid[0] * (__tsim_program_id(1) + kGrid[1] * __tsim_program_id(2));
}

// Thread 0 of each program writes what it knows of its cluster.
void identities(void** params) {
  if (__tsim_thread_id(0) != 0) return;
  uint32_t* out = static_cast<uint32_t*>(params[0]) + kQueries * linearProgram();
  uint32_t i = 0;
  for (uint32_t axis = 0; axis < 3; ++axis) {
    store(out + i++, __tsim_cluster_query(kClusterCtaId, axis), kStore);
    store(out + i++, __tsim_cluster_query(kClusterNumCtaId, axis), kStore);
    store(out + i++, __tsim_cluster_query(kClusterId, axis), kStore);
    store(out + i++, __tsim_cluster_query(kNumClusters, axis), kStore);
  }
  store(out + i++, __tsim_cluster_query(kClusterCtaRank, 0), kStore);
  store(out + i++, __tsim_cluster_query(kClusterNumCtaRank, 0), kStore);
}

TEST(SimRuntimeCluster, ProgramsKnowTheirClusterAsPtxSaysAndEachRunsOnce) {
  for (unsigned threads : {1u, 3u}) {
    std::vector<uint32_t> out(kQueries * kPrograms, 0xDEAD);
    void* params[] = {out.data()};
    Program p = program("identities", 1, 0, clusterSites(), identities);
    p.clusterDims = {2, 1, 2};
    Report r = launch(p, kGrid, params, config({range(out)}, threads));
    ASSERT_FALSE(r.failed()) << r.str();
    for (uint32_t z = 0; z < kGrid[2]; ++z)
      for (uint32_t y = 0; y < kGrid[1]; ++y)
        for (uint32_t x = 0; x < kGrid[0]; ++x) {
          const uint32_t* got = &out[kQueries * (x + kGrid[0] * (y + kGrid[1] * z))];
          const uint32_t id[3] = {x, y, z};
          for (uint32_t axis = 0; axis < 3; ++axis) {
            SCOPED_TRACE("program (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) +
                         ") axis " + std::to_string(axis));
            EXPECT_EQ(got[4 * axis], id[axis] % p.clusterDims[axis]);
            EXPECT_EQ(got[4 * axis + 1], p.clusterDims[axis]);
            EXPECT_EQ(got[4 * axis + 2], id[axis] / p.clusterDims[axis]);
            EXPECT_EQ(got[4 * axis + 3], kGrid[axis] / p.clusterDims[axis]);
          }
          EXPECT_EQ(got[12], x % 2 + 2 * (z % 2));  // rank: x + nx * (y + ny * z) within the cluster
          EXPECT_EQ(got[13], 4u);
        }
  }
}

// The program of rank 1 publishes a value before the cluster barrier; rank 0 reads it after. Rank 0 runs first
// (programs of a cluster start in rank order), so it reads 0 unless the barrier made it wait.
void handshake(void** params) {
  uint32_t* mailbox = static_cast<uint32_t*>(params[0]);
  uint32_t* seen = static_cast<uint32_t*>(params[1]);
  const uint32_t cluster = __tsim_cluster_query(kClusterId, 0);
  const uint32_t rank = __tsim_cluster_query(kClusterCtaRank, 0);
  const uint32_t tid = __tsim_thread_id(0);
  if (rank == 1 && tid == 0) store(mailbox + cluster, 100 + cluster, kStore);
  __tsim_cluster_arrive(0, kArrive);
  __tsim_cluster_wait(kWait);
  if (rank == 0) store(seen + cluster * 64 + tid, load<uint32_t>(mailbox + cluster, kLoad), kStore);
}

TEST(SimRuntimeCluster, TheClusterBarrierMakesEveryThreadWaitForThePeerProgram) {
  std::vector<uint32_t> mailbox(4, 0), seen(4 * 64, 0);
  void* params[] = {mailbox.data(), seen.data()};
  Program p = program("handshake", 2, 0, clusterSites(), handshake);
  p.clusterDims = {2, 1, 1};
  Report r = launch(p, {8, 1, 1}, params, config({range(mailbox), range(seen)}));
  ASSERT_FALSE(r.failed()) << r.str();
  for (uint32_t c = 0; c < 4; ++c)
    for (uint32_t t = 0; t < 64; ++t) EXPECT_EQ(seen[c * 64 + t], 100 + c) << "cluster " << c << " thread " << t;

  // Without clusters the same kernel's programs run alone, each of rank 0: they read what nobody wrote.
  p.clusterDims = {1, 1, 1};
  std::vector<uint32_t> empty(8, 0), seenAlone(8 * 64, 7);
  void* alone[] = {empty.data(), seenAlone.data()};
  r = launch(p, {8, 1, 1}, alone, config({range(empty), range(seenAlone)}));
  ASSERT_FALSE(r.failed()) << r.str();
  EXPECT_EQ(seenAlone, std::vector<uint32_t>(8 * 64, 0));
}

// Rank 1's thread 0 waits at the cluster barrier while its other threads wait at bar.sync for it: nothing can
// complete.
void crossedBarriers(void**) {
  const uint32_t rank = __tsim_cluster_query(kClusterCtaRank, 0);
  if (rank == 1 && __tsim_thread_id(0) != 0) {
    __tsim_barrier(kBarrier);
    return;
  }
  __tsim_cluster_arrive(0, kArrive);
  __tsim_cluster_wait(kWait);
  if (rank == 1) __tsim_barrier(kBarrier);
}

TEST(SimRuntimeCluster, APhaseThatCannotCompleteIsAHangNamingWhereTheOthersAre) {
  Program p = program("crossed", 1, 0, clusterSites(), crossedBarriers);
  p.clusterDims = {2, 1, 1};
  Report r = launch(p, {2, 1, 1}, nullptr, config({}));
  ASSERT_TRUE(r.failed());
  const Finding* f = firstFinding(r, FindingKind::BarrierDivergence);
  ASSERT_NE(f, nullptr) << r.str();
  EXPECT_EQ(f->program, (std::array<uint32_t, 3>{0, 0, 0}));
  EXPECT_EQ(f->line, 13u);  // the wait
  EXPECT_NE(f->message.find("the cluster barrier never completes: 33 of the cluster's 64 threads arrived in phase 0"),
            std::string::npos)
      << f->message;
  EXPECT_NE(f->message.find("31 in the program of rank 1 wait elsewhere (a barrier, collective or mbarrier at "
                            "kernels.py:14:1 (barrier))"),
            std::string::npos)
      << f->message;
  // Rank 1 reports its own hang too: its bar.sync and its thread at the cluster barrier.
  EXPECT_GE(r.findingCount(FindingKind::BarrierDivergence), 2u) << r.str();
}

void rankOneExits(void**) {
  if (__tsim_cluster_query(kClusterCtaRank, 0) == 1) return;
  __tsim_cluster_arrive(0, kArrive);
  __tsim_cluster_wait(kWait);
}

TEST(SimRuntimeCluster, ThreadsThatExitedWithoutArrivingAreReportedOnceAndDoNotHang) {
  Program p = program("exits", 1, 0, clusterSites(), rankOneExits);
  p.clusterDims = {2, 1, 1};
  Report r = launch(p, {4, 1, 1}, nullptr, config({}));
  EXPECT_EQ(r.findingCount(FindingKind::BarrierDivergence), 2u) << r.str();  // once per cluster
  const Finding* f = firstFinding(r, FindingKind::BarrierDivergence);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("32 of the cluster's 64 threads missing: they had exited without arriving"),
            std::string::npos)
      << f->message;
  EXPECT_EQ(r.findingCount(), 2u) << r.str();
}

// Rank 0 misuses the barrier; rank 1 arrives and waits as it should.
bool misuser() { return __tsim_cluster_query(kClusterCtaRank, 0) == 0; }
void arrivesTwice(void**) {
  __tsim_cluster_arrive(0, kArrive);
  if (misuser()) __tsim_cluster_arrive(0, kArrive);
  __tsim_cluster_wait(kWait);
}
void waitsFirst(void**) {
  if (misuser()) __tsim_cluster_wait(kWait);
  __tsim_cluster_arrive(0, kArrive);
  __tsim_cluster_wait(kWait);
}

TEST(SimRuntimeCluster, ArrivingTwiceOrWaitingWithoutArrivingEndsTheProgramWithAFinding) {
  for (auto [kernel, expected] : {std::pair{&arrivesTwice, "barrier.cluster.arrive again before this thread waited"},
                                  std::pair{&waitsFirst, "barrier.cluster.wait without a barrier.cluster.arrive"}}) {
    Program p = program("misuse", 1, 0, clusterSites(), kernel);
    p.clusterDims = {2, 1, 1};
    Report r = launch(p, {2, 1, 1}, nullptr, config({}));
    const Finding* f = firstFinding(r, FindingKind::BarrierDivergence);
    ASSERT_NE(f, nullptr) << r.str();
    EXPECT_NE(f->message.find(expected), std::string::npos) << f->message;
    EXPECT_TRUE(f->hasThread);
    EXPECT_EQ(f->program, (std::array<uint32_t, 3>{0, 0, 0}));
    // The other program of the cluster, left waiting for it, ends with it rather than report a hang.
    EXPECT_EQ(r.findingCount(), 1u) << r.str();
  }
}

// Thread 0 writes a shared word, the cluster barrier (released or relaxed), then thread 32 reads it.
uint32_t gRelaxed = 0;
void sharedAcrossTheBarrier(void**) {
  const uint32_t tid = __tsim_thread_id(0);
  if (tid == 0) store(shared<uint32_t>(0), 5u, kSharedStore);
  __tsim_cluster_arrive(gRelaxed, kArrive);
  __tsim_cluster_wait(kWait);
  if (tid == 32) (void)load<uint32_t>(shared<uint32_t>(0), kSharedLoad);
}

TEST(SimRuntimeCluster, TheBarrierOrdersSharedMemoryUnlessRelaxed) {
  Program p = program("shared_order", 2, 64, clusterSites(), sharedAcrossTheBarrier);
  p.clusterDims = {2, 1, 1};
  gRelaxed = 0;
  Report ordered = launch(p, {2, 1, 1}, nullptr, config({}));
  EXPECT_FALSE(ordered.failed()) << ordered.str();
  gRelaxed = 1;
  Report relaxed = launch(p, {2, 1, 1}, nullptr, config({}));
  EXPECT_EQ(relaxed.findingCount(FindingKind::SharedRace), 2u) << relaxed.str();  // one per program
}

void trapsWhileThePeerWaits(void**) {
  if (__tsim_cluster_query(kClusterCtaRank, 0) == 0 && __tsim_thread_id(0) == 0) __tsim_trap(kTrap);
  __tsim_cluster_arrive(0, kArrive);
  __tsim_cluster_wait(kWait);
}

TEST(SimRuntimeCluster, AProgramThatTrapsEndsItsClusterWithoutAHangReport) {
  Program p = program("trap", 1, 0, clusterSites(), trapsWhileThePeerWaits);
  p.clusterDims = {2, 1, 1};
  Report r = launch(p, {2, 1, 1}, nullptr, config({}));
  EXPECT_EQ(r.findingCount(FindingKind::Trap), 1u) << r.str();
  EXPECT_EQ(r.findingCount(), 1u) << r.str();
}

TEST(SimRuntimeCluster, ClustersThatDoNotFitTheGridOrTheTargetAreClearErrors) {
  Program p = program("bad", 1, 0, clusterSites(), identities);
  auto message = [&](std::array<uint32_t, 3> grid) -> std::string {
    try {
      launch(p, grid, nullptr, config({}));
    } catch (const tessera::Error& e) {
      return e.what();
    }
    return "no error";
  };
  p.clusterDims = {2, 1, 1};
  EXPECT_NE(message({3, 1, 1}).find("grid (3, 1, 1) is not a whole number of clusters of (2, 1, 1)"),
            std::string::npos);
  p.clusterDims = {4, 4, 2};
  EXPECT_NE(message({4, 4, 2}).find("clusters of (4, 4, 2) programs (a cluster has 1 to 16)"), std::string::npos);
  p.clusterDims = {0, 1, 1};
  EXPECT_NE(message({4, 1, 1}).find("a cluster has 1 to 16"), std::string::npos);
  p.clusterDims = {8, 1, 1};
  p.numWarps = 32;
  EXPECT_NE(message({8, 1, 1}).find("clusters of 8192 threads; the emulator checks clusters of at most 4096"),
            std::string::npos);
  p.numWarps = 1;
  p.clusterDims = {2, 1, 1};
  p.target = "amdgpu";
  p.warpSize = 64;
  EXPECT_NE(message({2, 1, 1}).find("clusters of programs are an nvptx (sm_90) feature"), std::string::npos);
}

// ---- TMA multicast: rank 0 copies each iteration's box into both programs of the cluster; every program's
// consumers read it, then hand the buffer back with one arrival on rank 0's `empty` barrier.

enum MulticastSite : uint32_t {
  kInit, kExpect, kCopy, kWaitFull, kSharedRead, kOutStore, kSync, kHandBack, kWaitEmpty, kClusterArrive, kClusterWait
};
SiteTable multicastSites() {
  return {syncSite(SiteKind::Mbarrier, "init", 30),        syncSite(SiteKind::Mbarrier, "expect", 31),
          syncSite(SiteKind::BulkTensorCopy, "load", 32),  syncSite(SiteKind::Mbarrier, "wait", 33),
          site(SiteKind::Load, AddressSpace::Shared, 4, "dot", 34), site(SiteKind::Store, AddressSpace::Global, 4, "store", 35),
          syncSite(SiteKind::Barrier, "barrier", 36),      syncSite(SiteKind::Mbarrier, "hand_back", 37),
          syncSite(SiteKind::Mbarrier, "wait_empty", 38),  syncSite(SiteKind::Barrier, "cluster_arrive", 39),
          syncSite(SiteKind::Barrier, "cluster_wait", 40)};
}
constexpr uint32_t kBoxElements = 64, kIterations = 3, kBoxOffset = 1024, kMulticastThreads = 64;

struct MulticastLaunch {
  std::array<std::byte, kTensorMapBytes> map;
  bool waitForEmpty = true;   // the issuer waits until both programs handed the buffer back
  bool syncBeforeHandBack = true;  // the consumers' reads are ordered before their thread 0's arrival
};
MulticastLaunch gMulticast;  // the tests run one host thread

void multicastPipeline(void** params) {
  uint32_t* out = static_cast<uint32_t*>(params[0]);
  const uint32_t tid = __tsim_thread_id(0), rank = __tsim_cluster_query(kClusterCtaRank, 0);
  const uint64_t full = addr(shared<uint64_t>(0)), empty = addr(shared<uint64_t>(1));
  if (tid == 0) {
    __tsim_mbarrier_init(full, 1, kInit);
    __tsim_mbarrier_init(empty, 2, kInit);  // one arrival per program of the cluster
  }
  // Every program's barriers exist before any program uses another's.
  __tsim_cluster_arrive(0, kClusterArrive);
  __tsim_cluster_wait(kClusterWait);
  for (uint32_t i = 0; i < kIterations; ++i) {
    if (tid == 0) {
      __tsim_mbarrier_arrive(full, 1, kBoxElements * 4, kExpect);
      if (rank == 0) {
        if (i > 0 && gMulticast.waitForEmpty) __tsim_mbarrier_try_wait_parity(empty, (i - 1) & 1, kWaitEmpty);
        const int32_t coordinates[1] = {static_cast<int32_t>(i * kBoxElements)};
        __tsim_bulk_tensor_copy_multicast(addr(shared<std::byte>(kBoxOffset)), gMulticast.map.data(), coordinates, 1,
                                          full, 0b11, kCopy);
      }
    }
    __tsim_mbarrier_try_wait_parity(full, i & 1, kWaitFull);
    const uint32_t value = load<uint32_t>(shared<uint32_t>(kBoxOffset / 4 + tid), kSharedRead);
    store(out + (rank * kIterations + i) * kBoxElements + tid, value, kOutStore);
    if (gMulticast.syncBeforeHandBack) __tsim_barrier(kSync);
    if (tid == 0) __tsim_mbarrier_arrive_cluster(empty, 0, 1, kHandBack);
  }
  __tsim_cluster_arrive(0, kClusterArrive);
  __tsim_cluster_wait(kClusterWait);
}

Report runMulticast(std::vector<uint32_t>& out, void (*kernel)(void**) = multicastPipeline) {
  static std::vector<uint32_t> tensor = [] {
    std::vector<uint32_t> t(kBoxElements * kIterations);
    std::iota(t.begin(), t.end(), 1u);
    return t;
  }();
  TensorMapFields f;
  f.rank = 1;
  f.elementBytes = 4;
  f.globalAddress = addr(tensor.data());
  f.dims = {tensor.size()};
  f.box = {kBoxElements};
  EXPECT_EQ(tensorMapError(f), "");
  gMulticast.map = encodeTensorMap(f);
  out.assign(2 * kIterations * kBoxElements, 0);
  void* params[] = {out.data()};
  Program p = program("multicast", kMulticastThreads / 32, kBoxOffset + kBoxElements * 4, multicastSites(), kernel);
  p.clusterDims = {2, 1, 1};
  return launch(p, {2, 1, 1}, params, config({{addr(tensor.data()), tensor.size() * 4}, range(out)}));
}

TEST(SimRuntimeCluster, AMulticastCopyLandsInEveryProgramOfItsMaskAndTheProtocolIsRaceFree) {
  gMulticast = {};
  std::vector<uint32_t> out;
  Report r = runMulticast(out);
  ASSERT_FALSE(r.failed()) << r.str();
  for (uint32_t rank = 0; rank < 2; ++rank)
    for (uint32_t i = 0; i < kIterations; ++i)
      for (uint32_t e = 0; e < kBoxElements; ++e)
        ASSERT_EQ(out[(rank * kIterations + i) * kBoxElements + e], i * kBoxElements + e + 1)
            << "rank " << rank << " iteration " << i << " element " << e;
}

TEST(SimRuntimeCluster, AMulticastIssuedBeforeEveryProgramHandedTheBufferBackIsReported) {
  // The issuer runs ahead: the other program's barrier is given more bytes than its phase expects, which on a GPU
  // lands a later box over one not read yet. Here its phase never completes: a hang, named.
  gMulticast = {};
  gMulticast.waitForEmpty = false;
  std::vector<uint32_t> out;
  Report r = runMulticast(out);
  const Finding* f = firstFinding(r, FindingKind::IncompleteMbarrierWait);
  ASSERT_NE(f, nullptr) << r.str();
  EXPECT_EQ(f->program, (std::array<uint32_t, 3>{1, 0, 0}));
  EXPECT_NE(f->message.find("-512 transaction bytes pending"), std::string::npos) << f->message;
}

// Two multicasts from rank 0 with the cluster barrier between them; with .relaxed arrivals rank 1's reads of the
// first box are not released to the issuer of the second.
void multicastAcrossTheClusterBarrier(void** params) {
  uint32_t* out = static_cast<uint32_t*>(params[0]);
  const uint32_t tid = __tsim_thread_id(0), rank = __tsim_cluster_query(kClusterCtaRank, 0);
  const uint64_t full = addr(shared<uint64_t>(0));
  if (tid == 0) __tsim_mbarrier_init(full, 1, kInit);
  __tsim_cluster_arrive(0, kClusterArrive);
  __tsim_cluster_wait(kClusterWait);
  for (uint32_t i = 0; i < 2; ++i) {
    if (tid == 0) {
      __tsim_mbarrier_arrive(full, 1, kBoxElements * 4, kExpect);
      const int32_t coordinates[1] = {static_cast<int32_t>(i * kBoxElements)};
      if (rank == 0)
        __tsim_bulk_tensor_copy_multicast(addr(shared<std::byte>(kBoxOffset)), gMulticast.map.data(), coordinates, 1,
                                          full, 0b11, kCopy);
    }
    __tsim_mbarrier_try_wait_parity(full, i, kWaitFull);
    store(out + (rank * kIterations + i) * kBoxElements + tid,
          load<uint32_t>(shared<uint32_t>(kBoxOffset / 4 + tid), kSharedRead), kOutStore);
    __tsim_cluster_arrive(gRelaxed && rank == 1, kClusterArrive);  // rank 1's arrivals relaxed, when asked
    __tsim_cluster_wait(kClusterWait);
  }
}

TEST(SimRuntimeCluster, OnlyAReleasingClusterBarrierOrdersTheOtherProgramsReadsBeforeTheNextMulticast) {
  gMulticast = {};
  for (uint32_t relaxed : {0u, 1u}) {
    gRelaxed = relaxed;
    std::vector<uint32_t> out;
    Report r = runMulticast(out, multicastAcrossTheClusterBarrier);
    if (!relaxed) {
      EXPECT_FALSE(r.failed()) << r.str();
      EXPECT_EQ(out[(1 * kIterations + 1) * kBoxElements + 5], kBoxElements + 6u);  // rank 1, second box
      continue;
    }
    ASSERT_EQ(r.findingCount(), r.findingCount(FindingKind::SharedRace)) << r.str();
    EXPECT_EQ(r.findingCount(FindingKind::SharedRace), 64u);  // one per word rank 1's 64 threads read
    for (const Finding& f : r.findings) {
      EXPECT_EQ(f.line, 32u);  // the second copy's issue
      EXPECT_NE(f.message.find("conflicts with a read by warp"), std::string::npos) << f.message;
      EXPECT_NE(f.message.find("of the cluster's program of rank 1 at kernels.py:34:1"), std::string::npos)
          << f.message;
    }
  }
}

TEST(SimRuntimeCluster, AHandBackBeforeTheOtherConsumersFinishedReadingRaces) {
  gMulticast = {};
  gMulticast.syncBeforeHandBack = false;
  std::vector<uint32_t> out;
  Report r = runMulticast(out);
  const Finding* f = firstFinding(r, FindingKind::SharedRace);
  ASSERT_NE(f, nullptr) << r.str();
  EXPECT_EQ(f->line, 32u) << r.str();
}

TEST(SimRuntimeCluster, RemoteArrivalsNameAProgramOfTheCluster) {
  Program p = program("bad_rank", 1, 64, multicastSites(), [](void**) {
    const uint64_t barrier = addr(shared<uint64_t>(0));
    if (__tsim_thread_id(0) == 0) __tsim_mbarrier_init(barrier, 1, kInit);
    __tsim_cluster_arrive(0, kClusterArrive);
    __tsim_cluster_wait(kClusterWait);
    if (__tsim_thread_id(0) == 0) __tsim_mbarrier_arrive_cluster(barrier, 2, 1, kHandBack);
  });
  p.clusterDims = {2, 1, 1};
  Report r = launch(p, {2, 1, 1}, nullptr, config({}));
  const Finding* f = firstFinding(r, FindingKind::InvalidCall);
  ASSERT_NE(f, nullptr) << r.str();
  EXPECT_NE(f->message.find("names the program of rank 2 of a cluster of 2"), std::string::npos) << f->message;
}

}  // namespace
