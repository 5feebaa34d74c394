// The data exchanges of warp collectives (jit/sim/runtime/WarpCollectives.h), against the PTX ISA's shfl.sync
// and vote.sync and AMD's ds_bpermute_b32, computed here lane by lane from the documented examples.
#include <gtest/gtest.h>

#include <vector>

#include "jit/sim/SimABI.h"
#include "jit/sim/runtime/WarpCollectives.h"

namespace tessera::sim {
namespace {

constexpr uint32_t kFullClamp = 0x1F;  // c for idx/down/bfly over the whole warp; up uses 0

TEST(SimRuntimeShuffle, DownReadsHigherLanesAndClampsAtTheWarpEnd) {
  for (uint32_t lane = 0; lane < 32; ++lane) {
    ShuffleSource s = shuffleSource(kShuffleDown, lane, 3, kFullClamp);
    EXPECT_EQ(s.valid, lane + 3 <= 31) << lane;
    EXPECT_EQ(s.lane, lane + 3 <= 31 ? lane + 3 : lane) << lane;  // out of range: its own value
  }
}

TEST(SimRuntimeShuffle, UpReadsLowerLanes) {
  for (uint32_t lane = 0; lane < 32; ++lane) {
    ShuffleSource s = shuffleSource(kShuffleUp, lane, 4, 0);
    EXPECT_EQ(s.valid, lane >= 4) << lane;
    EXPECT_EQ(s.lane, lane >= 4 ? lane - 4 : lane) << lane;
  }
}

TEST(SimRuntimeShuffle, ButterflyAndIndex) {
  for (uint32_t lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(shuffleSource(kShuffleBfly, lane, 16, kFullClamp).lane, lane ^ 16);
    EXPECT_TRUE(shuffleSource(kShuffleBfly, lane, 1, kFullClamp).valid);
    EXPECT_EQ(shuffleSource(kShuffleIdx, lane, 7, kFullClamp).lane, 7u);
  }
}

TEST(SimRuntimeShuffle, SegmentsOfEightLanes) {
  // __shfl_sync(mask, v, src, width = 8): c = ((32 - 8) << 8) | 0x1f. Index 5 is lane 5 of each segment;
  // down by 3 stays inside the segment.
  const uint32_t c = (24u << 8) | 0x1F;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t base = lane & ~7u;
    EXPECT_EQ(shuffleSource(kShuffleIdx, lane, 5, c).lane, base + 5) << lane;
    ShuffleSource down = shuffleSource(kShuffleDown, lane, 3, c);
    EXPECT_EQ(down.valid, (lane & 7) + 3 <= 7) << lane;
    EXPECT_EQ(down.lane, down.valid ? lane + 3 : lane) << lane;
  }
}

TEST(SimRuntimeVote, AllAnyUniBallotOverTheMask) {
  const uint64_t mask = 0x0000FFFF;
  EXPECT_EQ(voteResult(kVoteAll, mask, 0xFFFF0000FFFF), 1u);
  EXPECT_EQ(voteResult(kVoteAll, mask, 0x7FFF), 0u);
  EXPECT_EQ(voteResult(kVoteAny, mask, 0xFFFF0000), 0u);  // lanes outside the mask do not vote
  EXPECT_EQ(voteResult(kVoteAny, mask, 0x10), 1u);
  EXPECT_EQ(voteResult(kVoteUni, mask, 0), 1u);
  EXPECT_EQ(voteResult(kVoteUni, mask, 0x1), 0u);
  EXPECT_EQ(voteResult(kVoteBallot, mask, 0xF00F0081), 0x0081u);
}

TEST(SimRuntimeBpermute, ByteAddressSelectsTheLaneModuloTheWave) {
  EXPECT_EQ(bpermuteSourceLane(0, 64), 0u);
  EXPECT_EQ(bpermuteSourceLane(4 * 37, 64), 37u);
  EXPECT_EQ(bpermuteSourceLane(4 * 37 + 3, 64), 37u);  // the low two bits are ignored
  EXPECT_EQ(bpermuteSourceLane(4 * (64 + 5), 64), 5u);
}

TEST(SimRuntimeCollectives, ResolveWritesEachLanesResult) {
  std::vector<SimThread> lanes(32);
  for (uint32_t l = 0; l < 32; ++l) {
    lanes[l].arrival.op = kShuffleIdx;
    lanes[l].arrival.value = 100 + l;
    lanes[l].arrival.operand = (l + 1) % 32;  // rotate left by one
    lanes[l].arrival.clampSegment = kFullClamp;
  }
  EXPECT_EQ(resolveShuffle(lanes.data(), 32, 0xFFFFFFFF), 0u);
  for (uint32_t l = 0; l < 32; ++l) EXPECT_EQ(lanes[l].arrival.result, 100 + (l + 1) % 32);

  // Lanes 0-15 only: lane 15 reads lane 16, outside the mask.
  uint64_t outside = resolveShuffle(lanes.data(), 32, 0xFFFF);
  EXPECT_EQ(outside, uint64_t{1} << 15);
  EXPECT_EQ(lanes[15].arrival.result, 0u);

  std::vector<SimThread> wave(64);
  for (uint32_t l = 0; l < 64; ++l) {
    wave[l].arrival.value = 1000 + l;
    wave[l].arrival.operand = 4 * (63 - l);  // reverse the wave
  }
  resolveBpermute(wave.data(), 64, ~uint64_t{0});
  for (uint32_t l = 0; l < 64; ++l) EXPECT_EQ(wave[l].arrival.result, 1000 + 63 - l);

  for (uint32_t l = 0; l < 32; ++l) {
    lanes[l].arrival.op = kVoteBallot;
    lanes[l].arrival.value = l % 3 == 0;
  }
  resolveVote(lanes.data(), 32, 0xFFFFFFFF);
  EXPECT_EQ(lanes[7].arrival.result, 0x49249249u);
}

}  // namespace
}  // namespace tessera::sim
