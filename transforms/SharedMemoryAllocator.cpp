#include "transforms/SharedMemoryAllocator.h"

#include <algorithm>
#include <numeric>

#include "transforms/analysis/SharedScratch.h"

namespace tessera::transforms {

int64_t assignSharedOffsets(std::vector<SharedBuffer>& buffers) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].live.start < buffers[b].live.start;
  });
  std::vector<size_t> placed;
  int64_t total = 0;
  for (size_t i : order) {
    SharedBuffer& buffer = buffers[i];
    if (buffer.bytes < 0) throw Error("shared-memory allocation: a buffer has a negative size");
    int64_t bytes = alignToShared(buffer.bytes);
    std::vector<const SharedBuffer*> conflicts;
    for (size_t j : placed)
      if (buffers[j].live.overlaps(buffer.live)) conflicts.push_back(&buffers[j]);
    std::sort(conflicts.begin(), conflicts.end(),
              [](const SharedBuffer* a, const SharedBuffer* b) { return a->offset < b->offset; });
    const int64_t align = std::max<int64_t>(buffer.align, kSharedAlignment);
    auto aligned = [&](int64_t v) { return (v + align - 1) / align * align; };
    int64_t offset = 0;  // lowest aligned offset past every conflicting buffer that starts below it
    for (const SharedBuffer* c : conflicts) {
      if (offset + bytes <= c->offset) break;
      offset = std::max(offset, aligned(c->offset + alignToShared(c->bytes)));
    }
    buffer.offset = offset;
    total = std::max(total, offset + bytes);
    placed.push_back(i);
  }
  return total;
}

}  // namespace tessera::transforms
