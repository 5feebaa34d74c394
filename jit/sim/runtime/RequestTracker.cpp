#include "jit/sim/runtime/RequestTracker.h"

#include <array>

namespace tessera::sim {

namespace {
constexpr uint32_t kInitialOpenRequests = 4;
}

RequestTracker::RequestTracker(uint32_t numSites, uint32_t numWarps, uint32_t warpSize, SiteCounters& sink)
    : numWarps_(numWarps),
      warpSize_(warpSize),
      sink_(sink),
      queues_(size_t{numSites} * kRequestStreams * numWarps) {}

RequestTracker::Queue& RequestTracker::queue(uint32_t warp, uint32_t site, RequestStream stream) {
  uint32_t index = (site * kRequestStreams + static_cast<uint32_t>(stream)) * numWarps_ + warp;
  Queue& q = queues_[index];
  if (q.executions.empty()) {
    q.executions.assign(warpSize_, 0);
    q.slots.assign(kInitialOpenRequests, Slot{});
    q.accesses.assign(size_t{kInitialOpenRequests} * warpSize_, LaneAccess{});
  }
  if (!q.listed) {
    q.listed = true;
    dirty_.push_back(index);
  }
  return q;
}

bool RequestTracker::tryRecord(uint32_t warp, uint32_t site, RequestStream stream, const LaneAccess& access,
                               uint64_t liveLanes) {
  Queue& q = queue(warp, site, stream);
  uint32_t k = q.executions[access.lane];
  if (k < q.oldest) return recordLate(q, access);
  while (k - q.oldest >= q.slots.size()) {
    if (q.slots.size() >= kMaxOpenRequests) return false;
    grow(q);
  }
  return place(q, k, access, liveLanes);
}

void RequestTracker::record(uint32_t warp, uint32_t site, RequestStream stream, const LaneAccess& access,
                            uint64_t liveLanes) {
  Queue& q = queue(warp, site, stream);
  uint32_t k = q.executions[access.lane];
  if (k < q.oldest) {
    recordLate(q, access);
    return;
  }
  while (k - q.oldest >= q.slots.size()) {
    uint32_t index = q.oldest % q.slots.size();
    complete(q, index, q.slots[index]);
    advanceOldest(q);
  }
  place(q, k, access, liveLanes);
}

bool RequestTracker::place(Queue& q, uint32_t k, const LaneAccess& access, uint64_t liveLanes) {
  uint32_t index = k % q.slots.size();
  Slot& slot = q.slots[index];
  if (!slot.open || slot.execution != k) slot = Slot{k, true, 0};
  slot.lanes |= uint64_t{1} << access.lane;
  q.accesses[size_t{index} * warpSize_ + access.lane] = access;
  ++q.executions[access.lane];
  if (k >= q.next) q.next = k + 1;
  if ((slot.lanes & liveLanes) == liveLanes) {
    complete(q, index, slot);
    advanceOldest(q);
  }
  return true;
}

bool RequestTracker::recordLate(Queue& q, const LaneAccess& access) {
  ++q.executions[access.lane];
  auto [site, stream] = siteOf(q);
  sink_.addRequest(site, stream, &access, 1);
  return true;
}

std::pair<uint32_t, RequestStream> RequestTracker::siteOf(const Queue& q) const {
  size_t index = static_cast<size_t>(&q - queues_.data()) / numWarps_;
  return {static_cast<uint32_t>(index / kRequestStreams), static_cast<RequestStream>(index % kRequestStreams)};
}

void RequestTracker::grow(Queue& q) {
  size_t oldSize = q.slots.size(), newSize = oldSize * 2;
  std::vector<Slot> slots(newSize);
  std::vector<LaneAccess> accesses(newSize * warpSize_);
  for (size_t i = 0; i < oldSize; ++i) {
    if (!q.slots[i].open) continue;
    size_t to = q.slots[i].execution % newSize;
    slots[to] = q.slots[i];
    for (uint32_t l = 0; l < warpSize_; ++l) accesses[to * warpSize_ + l] = q.accesses[i * warpSize_ + l];
  }
  q.slots = std::move(slots);
  q.accesses = std::move(accesses);
}

void RequestTracker::complete(Queue& q, uint32_t index, Slot& slot) {
  if (!slot.open) return;
  std::array<LaneAccess, 64> lanes;
  size_t n = 0;
  const LaneAccess* row = &q.accesses[size_t{index} * warpSize_];
  for (uint32_t l = 0; l < warpSize_; ++l)
    if (slot.lanes >> l & 1) lanes[n++] = row[l];
  slot.open = false;
  auto [site, stream] = siteOf(q);
  sink_.addRequest(site, stream, lanes.data(), n);
}

void RequestTracker::advanceOldest(Queue& q) {
  while (q.oldest < q.next) {
    const Slot& s = q.slots[q.oldest % q.slots.size()];
    if (s.open && s.execution == q.oldest) break;
    ++q.oldest;
  }
}

void RequestTracker::flush() {
  for (uint32_t index : dirty_) {
    Queue& q = queues_[index];
    for (uint32_t k = q.oldest; k < q.next; ++k) {
      uint32_t i = k % q.slots.size();
      if (q.slots[i].open && q.slots[i].execution == k) complete(q, i, q.slots[i]);
    }
    std::fill(q.executions.begin(), q.executions.end(), 0);
    q.oldest = q.next = 0;
    q.listed = false;
  }
  dirty_.clear();
}

}  // namespace tessera::sim
