// The interval allocator of `allocate-shared-memory`: places buffers with live intervals in shared memory so that
// buffers live at the same time never share a byte.
#pragma once

#include <cstdint>
#include <vector>

#include "transforms/analysis/Liveness.h"

namespace tessera::transforms {

struct SharedBuffer {
  int64_t bytes = 0;  // rounded up to 16 when placed
  LiveInterval live;
  int64_t offset = -1;  // set by assignSharedOffsets
  int64_t align = 16;   // the offset's alignment: a power of two, at least 16
};

// Gives every buffer an offset aligned as it asks (at least 16 bytes) such that buffers with overlapping live intervals never share a
// byte; buffers with disjoint intervals may reuse bytes. Largest buffers are placed first, each at the lowest
// offset that fits between the buffers already placed whose intervals overlap its own. Returns the total (the
// highest end, a multiple of 16; 0 for no buffers).
int64_t assignSharedOffsets(std::vector<SharedBuffer>& buffers);

}  // namespace tessera::transforms
