// The costs of warp requests (jit/sim/runtime/AccessCost.h) and the grouping of lanes' accesses into requests
// (RequestTracker.h), with every expected number computed by hand in the comments.
#include <gtest/gtest.h>

#include <vector>

#include "jit/sim/SimABI.h"
#include "jit/sim/runtime/AccessCost.h"
#include "jit/sim/runtime/RequestTracker.h"
#include "jit/sim/runtime/SiteCounters.h"

namespace tessera::sim {
namespace {

std::vector<LaneAccess> lanes(uint32_t count, uint64_t base, uint64_t stride, uint32_t bytes,
                              MemorySpace space = MemorySpace::Global) {
  std::vector<LaneAccess> v;
  for (uint32_t l = 0; l < count; ++l) v.push_back({base + l * stride, bytes, static_cast<uint16_t>(l), space});
  return v;
}

TEST(SimRuntimeAccessCost, GlobalSectorsAndRequestedBytes) {
  // 32 lanes x 4 contiguous bytes from a 128-byte boundary: 128 bytes in 4 sectors.
  auto a = lanes(32, 4096, 4, 4);
  GlobalRequestCost c = globalRequestCost(a.data(), a.size());
  EXPECT_EQ(c.sectors, 4u);
  EXPECT_EQ(c.requestedBytes, 128u);
  // 16 bytes per lane: 512 bytes, 16 sectors.
  a = lanes(32, 4096, 16, 16);
  c = globalRequestCost(a.data(), a.size());
  EXPECT_EQ(c.sectors, 16u);
  EXPECT_EQ(c.requestedBytes, 512u);
  // A column of a row-major 32x32 f32 tile: 32 lanes 128 bytes apart, one sector each for 4 useful bytes.
  a = lanes(32, 4096, 128, 4);
  c = globalRequestCost(a.data(), a.size());
  EXPECT_EQ(c.sectors, 32u);
  EXPECT_EQ(c.requestedBytes, 128u);
  // Every lane reading the same word: 4 bytes, 1 sector.
  a = lanes(32, 4096, 0, 4);
  c = globalRequestCost(a.data(), a.size());
  EXPECT_EQ(c.sectors, 1u);
  EXPECT_EQ(c.requestedBytes, 4u);
  // Shifted by 16 bytes: 128 bytes over 5 sectors (16 in the first, 16 in the last).
  a = lanes(32, 4096 + 16, 4, 4);
  c = globalRequestCost(a.data(), a.size());
  EXPECT_EQ(c.sectors, 5u);
  EXPECT_EQ(c.requestedBytes, 128u);
  // Lanes in reverse order cost the same as in order.
  std::vector<LaneAccess> reversed(a.rbegin(), a.rend());
  c = globalRequestCost(reversed.data(), reversed.size());
  EXPECT_EQ(c.sectors, 5u);
  EXPECT_EQ(c.requestedBytes, 128u);
}

TEST(SimRuntimeAccessCost, SharedWavefrontsAndBankConflicts) {
  // A row of a 32x32 f32 array: 32 distinct banks, one wavefront.
  auto a = lanes(32, 0, 4, 4, MemorySpace::Shared);
  SharedRequestCost c = sharedRequestCost(a.data(), a.size());
  EXPECT_EQ(c.phases, 1u);
  EXPECT_EQ(c.wavefronts, 1u);
  EXPECT_EQ(c.bankConflicts(), 0u);
  // A column: every lane in bank 0, 32 distinct words: 32 wavefronts, 31 extra.
  a = lanes(32, 0, 128, 4, MemorySpace::Shared);
  c = sharedRequestCost(a.data(), a.size());
  EXPECT_EQ(c.wavefronts, 32u);
  EXPECT_EQ(c.bankConflicts(), 31u);
  // Broadcast: one word for everyone.
  a = lanes(32, 64, 0, 4, MemorySpace::Shared);
  EXPECT_EQ(sharedRequestCost(a.data(), a.size()).wavefronts, 1u);
  // Stride of 2 words: banks 0, 2, ..., 30 twice: 2-way, 1 extra.
  a = lanes(32, 0, 8, 4, MemorySpace::Shared);
  EXPECT_EQ(sharedRequestCost(a.data(), a.size()).bankConflicts(), 1u);
  // 8 bytes per lane, contiguous: two phases of 16 lanes x 8 bytes, each conflict-free.
  a = lanes(32, 0, 8, 8, MemorySpace::Shared);
  c = sharedRequestCost(a.data(), a.size());
  EXPECT_EQ(c.phases, 2u);
  EXPECT_EQ(c.wavefronts, 2u);
  // 16 bytes per lane, contiguous: four phases of 8 lanes.
  a = lanes(32, 0, 16, 16, MemorySpace::Shared);
  c = sharedRequestCost(a.data(), a.size());
  EXPECT_EQ(c.phases, 4u);
  EXPECT_EQ(c.bankConflicts(), 0u);
  // 16 bytes per lane, 128 bytes apart (ldmatrix rows of an unswizzled 64-wide f16 tile): in each phase all 8
  // lanes hit banks 0-3: 8 wavefronts per phase, 4 phases, 28 extra.
  a = lanes(32, 0, 128, 16, MemorySpace::Shared);
  c = sharedRequestCost(a.data(), a.size());
  EXPECT_EQ(c.wavefronts, 32u);
  EXPECT_EQ(c.bankConflicts(), 28u);
  // AMD wave64 (gfx9 LDS: 32 banks of 4 bytes; ds_read_b32 in half-waves, ds_read_b64 in quarter-waves, the same
  // phases by width as above). The MFMA dot's A operand staged unpadded, 32 f16 = 64 bytes per row: lane l reads 8
  // bytes of row l % 16 at byte 8 * (l / 16). Each quarter-wave reads 16 rows at one offset: even rows in one
  // bank pair, odd rows in another, 8 words per bank: 8 wavefronts per phase, 4 phases, 28 extra.
  std::vector<LaneAccess> mfma;
  for (uint16_t l = 0; l < 64; ++l) mfma.push_back({uint64_t(l % 16) * 64 + 8 * (l / 16), 8, l, MemorySpace::Shared});
  c = sharedRequestCost(mfma.data(), mfma.size());
  EXPECT_EQ(c.phases, 4u);
  EXPECT_EQ(c.wavefronts, 32u);
  EXPECT_EQ(c.bankConflicts(), 28u);
  // wave64 4-byte row: two half-wave phases, conflict-free.
  a = lanes(64, 0, 4, 4, MemorySpace::Shared);
  c = sharedRequestCost(a.data(), a.size());
  EXPECT_EQ(c.phases, 2u);
  EXPECT_EQ(c.bankConflicts(), 0u);
  // Only lanes 0-7 active with 16 bytes (ldmatrix .x1): one phase.
  a = lanes(8, 0, 16, 16, MemorySpace::Shared);
  EXPECT_EQ(sharedRequestCost(a.data(), a.size()).phases, 1u);
}

struct TrackerFixture {
  SiteTable sites;
  SiteCounters counters;
  RequestTracker tracker;
  TrackerFixture()
      : sites(makeSites()), counters(sites), tracker(static_cast<uint32_t>(sites.size()), 2, 32, counters) {}
  static SiteTable makeSites() {
    Site load;
    load.kind = SiteKind::Load;
    load.space = AddressSpace::Global;
    load.bytes = 4;
    return {load};
  }
  const GlobalAccessCounters& loads() const { return counters.perSite()[0].globalLoad; }
};

TEST(SimRuntimeRequestTracker, LanesOfTheSameExecutionFormOneRequest) {
  TrackerFixture f;
  const uint64_t all = 0xFFFFFFFF;
  // Each lane executes the site three times (k = 0, 1, 2) before the next lane runs, as fibers do.
  for (uint16_t lane = 0; lane < 32; ++lane)
    for (uint32_t k = 0; k < 3; ++k)
      ASSERT_TRUE(f.tracker.tryRecord(0, 0, RequestStream::Primary, {4096 + 512 * k + 4 * lane, 4, lane}, all));
  // Complete as the last lane arrives: three requests of 128 contiguous bytes.
  EXPECT_EQ(f.loads().requests, 3u);
  EXPECT_EQ(f.loads().sectors, 12u);
  EXPECT_EQ(f.loads().requestedBytes, 384u);
  EXPECT_EQ(f.counters.perSite()[0].globalAccessWidths[2], 96u);
}

TEST(SimRuntimeRequestTracker, PartialRequestsCompleteAtTheFlush) {
  TrackerFixture f;
  for (uint16_t lane = 0; lane < 16; ++lane)
    ASSERT_TRUE(f.tracker.tryRecord(1, 0, RequestStream::Primary, {4096u + 4u * lane, 4, lane}, 0xFFFFFFFF));
  EXPECT_EQ(f.loads().requests, 0u);
  f.tracker.flush();
  EXPECT_EQ(f.loads().requests, 1u);
  EXPECT_EQ(f.loads().sectors, 2u);  // 64 bytes
  // After the flush executions count from 0 again.
  for (uint16_t lane = 0; lane < 32; ++lane)
    f.tracker.tryRecord(1, 0, RequestStream::Primary, {8192u + 4u * lane, 4, lane}, 0xFFFFFFFF);
  EXPECT_EQ(f.loads().requests, 2u);
  EXPECT_EQ(f.loads().sectors, 6u);
}

TEST(SimRuntimeRequestTracker, ExitedLanesAreNotWaitedFor) {
  TrackerFixture f;
  const uint64_t live = 0x0000FFFF;
  for (uint16_t lane = 0; lane < 16; ++lane)
    f.tracker.tryRecord(0, 0, RequestStream::Primary, {4096u + 4u * lane, 4, lane}, live);
  EXPECT_EQ(f.loads().requests, 1u);
}

TEST(SimRuntimeRequestTracker, ALaneTooFarAheadMustWait) {
  TrackerFixture f;
  uint32_t k = 0;
  while (f.tracker.tryRecord(0, 0, RequestStream::Primary, {4096 + 128 * k, 4, 0}, 0xFFFFFFFF)) ++k;
  EXPECT_EQ(k, RequestTracker::kMaxOpenRequests);
  // Forced: the oldest request completes with the one lane it has.
  f.tracker.record(0, 0, RequestStream::Primary, {4096 + 128 * k, 4, 0}, 0xFFFFFFFF);
  EXPECT_EQ(f.loads().requests, 1u);
  EXPECT_EQ(f.loads().requestedBytes, 4u);
  // Lane 1 catching up joins the open requests (k = 1..64) and completes none alone.
  for (uint32_t j = 0; j <= k; ++j)
    ASSERT_TRUE(f.tracker.tryRecord(0, 0, RequestStream::Primary, {4096 + 128 * j + 4, 4, 1}, 0x3));
  // With only lanes 0 and 1 live, each of k = 1..64 completes as lane 1 arrives; k = 0 was already counted
  // without lane 1, so lane 1's k = 0 access is a request of its own.
  f.tracker.flush();
  EXPECT_EQ(f.loads().requests, 1u + k + 1);
  EXPECT_EQ(f.loads().requestedBytes, 4u + 8u * k + 4u);
}

}  // namespace
}  // namespace tessera::sim
