// What one warp-level memory request costs: 32-byte sectors for global memory, wavefronts for shared memory.
//  - Global: the distinct sectors the lanes' bytes fall in, and the distinct bytes they asked for.
//  - Shared (32 banks of 4 bytes): the request splits into phases of 128 bytes by lane: 32 lanes per phase for
//    accesses of up to 4 bytes, 16 for 8-byte and 8 for 16-byte accesses. A phase needs as many wavefronts as
//    the most distinct 4-byte words any one bank must deliver (lanes reading the same word share it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::sim {

enum class MemorySpace : uint8_t { Global, Shared };

// One lane's part of a request: for shared memory the address is the offset in the program's shared memory.
struct LaneAccess {
  uint64_t address = 0;
  uint32_t bytes = 0;
  uint16_t lane = 0;
  MemorySpace space = MemorySpace::Global;
};

struct GlobalRequestCost {
  uint64_t sectors = 0;
  uint64_t requestedBytes = 0;
};
// `lanes` in any order; at most 64.
GlobalRequestCost globalRequestCost(const LaneAccess* lanes, size_t count);

struct SharedRequestCost {
  uint64_t phases = 0;
  uint64_t wavefronts = 0;
  uint64_t bankConflicts() const { return wavefronts - phases; }
};
// `lanes` in any order; at most 64.
SharedRequestCost sharedRequestCost(const LaneAccess* lanes, size_t count);

}  // namespace tessera::sim
