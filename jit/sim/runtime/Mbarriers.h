// The mbarrier objects of the running program (PTX ISA, "mbarrier"), by their offset in shared memory, and the
// threads waiting on them. A barrier counts its current phase's pending arrivals and transaction bytes; the phase
// completes when both are zero: its bulk tensor copies land, the next phase starts with the expected arrivals,
// and the waiters it satisfies wake. try_wait.parity P asks whether the phase of parity P (the current phase or
// the one before it) has completed, which it has unless the current phase has parity P. The transaction count
// may dip below zero (a copy completing before its expect_tx), as the ISA allows.
//
// Copies are in flight from their issue until a thread waits on their barrier: only then do their bytes count
// against the transaction count (and land, if that completes the phase). Until their phase completes, their
// destination bytes are pending, so a read that did not wait for them is reported whatever the schedule.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "jit/sim/runtime/TensorMap.h"

namespace tessera::sim {

// A cp.async.bulk.tensor global -> shared copy, waiting for its barrier's phase to complete.
struct BulkTensorCopy {
  uint32_t sharedOffset = 0;  // the box's destination (unswizzled)
  TensorMapFields map;
  std::array<int32_t, kTensorMapMaxRank> coordinates{};
  bool sourceValid = true;    // every in-bounds element is inside launch memory (else the box lands as zeros)
  bool landsNothing = false;  // its destination is out of bounds (reported at its issue)
  uint32_t site = 0;
  uint32_t issuer = 0, issueClock = 0;  // the issuing thread (numbered across the cluster) and its clock then
                                        // (racecheck: the landing's writer)
};

struct Mbarrier {
  uint32_t offset = 0;
  uint32_t expected = 0;  // arrivals per phase (mbarrier.init's count)
  uint32_t pending = 0;   // arrivals the current phase still waits for
  int64_t tx = 0;         // transaction bytes the current phase still waits for
  uint32_t phase = 0;     // phases completed so far
  std::vector<BulkTensorCopy> inFlight;  // issued, their bytes not counted yet
  std::vector<BulkTensorCopy> counted;   // their bytes counted: they land when the current phase completes
  // Racecheck's happens-before (SharedMemoryChecker.h): what arrivals and copy issues released into the barrier so
  // far, and that as of its last phase completion (what a satisfied wait acquires).
  std::vector<uint32_t> released, completed;

  bool complete() const { return pending == 0 && tx == 0; }
  // The copies in flight complete their transactions (a thread waits on the barrier).
  void completeTransactions();
  // Whether try_wait.parity(parity) succeeds now.
  bool parityCompleted(uint32_t parity) const { return (phase & 1) != (parity & 1); }
  // Ends the current phase (complete() held): the counted copies are the caller's to land.
  std::vector<BulkTensorCopy> advance();
  // "phase 3: 1 of 2 arrivals and 4096 transaction bytes pending"
  std::string describe() const;
};

struct MbarrierWaiter {
  uint32_t thread = 0;
  uint32_t offset = 0;  // the barrier
  uint32_t parity = 0;
  uint32_t site = 0;
};

class Mbarriers {
 public:
  void beginProgram();
  // mbarrier.init: a new barrier (or a re-initialized one) at `offset`.
  Mbarrier& init(uint32_t offset, uint32_t count);
  // The initialized barrier at `offset`, or null.
  Mbarrier* find(uint32_t offset);
  void addWaiter(const MbarrierWaiter& waiter) { waiters_.push_back(waiter); }
  // Removes the waiters of `barrier` that its current phase satisfies and returns their threads.
  std::vector<uint32_t> takeSatisfiedWaiters(const Mbarrier& barrier);
  const std::vector<MbarrierWaiter>& waiters() const { return waiters_; }
  const std::vector<Mbarrier>& barriers() const { return barriers_; }
  std::vector<Mbarrier>& barriers() { return barriers_; }

 private:
  std::vector<Mbarrier> barriers_;  // few per program: a linear search is the fastest map
  std::vector<MbarrierWaiter> waiters_;
};

}  // namespace tessera::sim
