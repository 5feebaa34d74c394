#include "jit/sim/runtime/Mbarriers.h"

#include <utility>

namespace tessera::sim {

void Mbarrier::completeTransactions() {
  for (BulkTensorCopy& c : inFlight) {
    tx -= static_cast<int64_t>(c.map.boxBytes());
    counted.push_back(std::move(c));
  }
  inFlight.clear();
}

std::vector<BulkTensorCopy> Mbarrier::advance() {
  ++phase;
  pending = expected;
  tx = 0;
  return std::exchange(counted, {});
}

std::string Mbarrier::describe() const {
  return "phase " + std::to_string(phase) + ": " + std::to_string(pending) + " of " + std::to_string(expected) +
         " arrivals and " + std::to_string(tx) + " transaction bytes pending";
}

void Mbarriers::beginProgram() {
  barriers_.clear();
  waiters_.clear();
}

Mbarrier& Mbarriers::init(uint32_t offset, uint32_t count) {
  Mbarrier fresh;
  fresh.offset = offset;
  fresh.expected = fresh.pending = count;
  if (Mbarrier* existing = find(offset)) return *existing = std::move(fresh);
  return barriers_.emplace_back(std::move(fresh));
}

Mbarrier* Mbarriers::find(uint32_t offset) {
  for (Mbarrier& m : barriers_)
    if (m.offset == offset) return &m;
  return nullptr;
}

std::vector<uint32_t> Mbarriers::takeSatisfiedWaiters(const Mbarrier& barrier) {
  std::vector<uint32_t> woken;
  size_t kept = 0;
  for (const MbarrierWaiter& w : waiters_) {
    if (w.offset == barrier.offset && barrier.parityCompleted(w.parity)) woken.push_back(w.thread);
    else waiters_[kept++] = w;
  }
  waiters_.resize(kept);
  return woken;
}

}  // namespace tessera::sim
