#include "jit/sim/runtime/WarpCollectives.h"

#include "jit/sim/SimABI.h"

namespace tessera::sim {

ShuffleSource shuffleSource(uint32_t mode, uint32_t lane, uint32_t laneOrDelta, uint32_t clampSegment) {
  // PTX: c packs the clamp value (bits 0-4) and the segment mask (bits 8-12). The lanes of a segment share the
  // bits of the segment mask; maxLane is the highest lane (lowest for up) a lane may read within its segment.
  const int32_t b = static_cast<int32_t>(laneOrDelta & 31);
  const int32_t clamp = static_cast<int32_t>(clampSegment & 31);
  const int32_t segment = static_cast<int32_t>(clampSegment >> 8 & 31);
  const int32_t self = static_cast<int32_t>(lane & 31);
  const int32_t maxLane = (self & segment) | (clamp & ~segment);
  const int32_t minLane = self & segment;
  int32_t j = self;
  bool valid = false;
  switch (mode) {
    case kShuffleUp:
      j = self - b;
      valid = j >= maxLane;
      break;
    case kShuffleDown:
      j = self + b;
      valid = j <= maxLane;
      break;
    case kShuffleBfly:
      j = self ^ b;
      valid = j <= maxLane;
      break;
    case kShuffleIdx:
      j = minLane | (b & ~segment);
      valid = j <= maxLane;
      break;
    default:
      break;
  }
  return {valid ? static_cast<uint32_t>(j) : lane, valid};
}

uint32_t voteResult(uint32_t mode, uint64_t mask, uint64_t predicates) {
  uint64_t yes = predicates & mask;
  switch (mode) {
    case kVoteAll: return yes == mask;
    case kVoteAny: return yes != 0;
    case kVoteUni: return yes == 0 || yes == mask;
    case kVoteBallot: return static_cast<uint32_t>(yes);
    default: return 0;
  }
}

uint32_t bpermuteSourceLane(uint32_t byteAddress, uint32_t warpSize) { return (byteAddress >> 2) % warpSize; }

uint64_t resolveShuffle(SimThread* lanes, uint32_t warpSize, uint64_t mask) {
  uint64_t readOutside = 0;
  for (uint32_t l = 0; l < warpSize; ++l) {
    if (!(mask >> l & 1)) continue;
    CollectiveArrival& a = lanes[l].arrival;
    ShuffleSource s = shuffleSource(a.op, l, a.operand, a.clampSegment);
    a.valid = s.valid;
    if (s.lane < warpSize && (mask >> s.lane & 1)) {
      a.result = lanes[s.lane].arrival.value;
    } else {
      a.result = 0;
      readOutside |= uint64_t{1} << l;
    }
  }
  return readOutside;
}

void resolveVote(SimThread* lanes, uint32_t warpSize, uint64_t mask) {
  uint64_t predicates = 0;
  for (uint32_t l = 0; l < warpSize; ++l)
    if ((mask >> l & 1) && lanes[l].arrival.value) predicates |= uint64_t{1} << l;
  for (uint32_t l = 0; l < warpSize; ++l)
    if (mask >> l & 1) lanes[l].arrival.result = voteResult(lanes[l].arrival.op, mask, predicates);
}

void resolveBpermute(SimThread* lanes, uint32_t warpSize, uint64_t mask) {
  for (uint32_t l = 0; l < warpSize; ++l) {
    if (!(mask >> l & 1)) continue;
    CollectiveArrival& a = lanes[l].arrival;
    uint32_t source = bpermuteSourceLane(a.operand, warpSize);
    a.result = (mask >> source & 1) ? lanes[source].arrival.value : 0;
  }
}

}  // namespace tessera::sim
