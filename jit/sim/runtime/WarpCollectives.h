// The data exchanges of warp collectives, once every lane of the mask arrived: PTX shfl.sync (idx, up, down,
// bfly, with the clamp and segment mask of its c operand and its validity predicate), PTX vote.sync, and AMD
// ds_bpermute_b32. Written from the PTX ISA's and AMD ISA's descriptions of the instructions.
#pragma once

#include <cstdint>

#include "jit/sim/runtime/SimThread.h"

namespace tessera::sim {

// The lane a shfl.sync lane reads, and the PTX predicate: false when the computed lane is out of its segment
// (the lane then reads its own value).
struct ShuffleSource {
  uint32_t lane = 0;
  bool valid = false;
};
ShuffleSource shuffleSource(uint32_t mode, uint32_t lane, uint32_t laneOrDelta, uint32_t clampSegment);

// vote.sync over the lanes of `mask` (`predicates`: a bit per lane).
uint32_t voteResult(uint32_t mode, uint64_t mask, uint64_t predicates);

// The lane ds_bpermute_b32 reads for a byte address (bits 2.. of the address, modulo the wave size).
uint32_t bpermuteSourceLane(uint32_t byteAddress, uint32_t warpSize);

// Resolve one warp's collective: `lanes` are the warp's threads (lane i at lanes[i]); each lane of `mask` has
// its operands in its arrival and gets its result there.
// Shuffle returns the lanes that read a lane outside the mask (undefined on hardware; they read 0).
uint64_t resolveShuffle(SimThread* lanes, uint32_t warpSize, uint64_t mask);
void resolveVote(SimThread* lanes, uint32_t warpSize, uint64_t mask);
// Lanes reading a lane outside the mask (inactive on hardware) read 0.
void resolveBpermute(SimThread* lanes, uint32_t warpSize, uint64_t mask);

}  // namespace tessera::sim
