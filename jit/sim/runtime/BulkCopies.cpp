#include "jit/sim/runtime/BulkCopies.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "jit/sim/runtime/Cluster.h"
#include "jit/sim/runtime/MemoryAccess.h"
#include "jit/sim/runtime/Worker.h"

namespace tessera::sim {

namespace {

constexpr uint32_t kMaxArrivals = (1u << 20) - 1;  // PTX ISA: an mbarrier's arrival count

std::string barrierName(uint32_t offset) { return "the mbarrier at shared offset " + std::to_string(offset); }

// The shared offset of the 8-byte mbarrier at `address`; the program ends when it is out of bounds.
uint32_t barrierOffset(Worker& w, SimThread& t, uint64_t address, uint32_t site) {
  std::optional<uint32_t> offset = sharedOperand(w, t, address, 8, 8, site, true);
  if (!offset) w.runner.endProgram(t);  // reported as out of bounds
  return *offset;
}

// The mbarrier at `offset` of `owner`, a program of t's cluster (t's own, or another: `remote`).
Mbarrier& initializedBarrier(Worker& w, SimThread& t, Worker& owner, uint32_t offset, uint32_t site) {
  Mbarrier* m = owner.mbarriers.find(offset);
  if (!m)
    w.fail(t, FindingKind::InvalidCall, site, [&] {
      return barrierName(offset) + " is used before mbarrier.init in " +
             (&owner == &w ? std::string("this program")
                           : "the cluster's program of rank " + std::to_string(owner.clusterRank));
    });
  return *m;
}

Mbarrier& initializedBarrier(Worker& w, SimThread& t, uint64_t address, uint32_t site) {
  return initializedBarrier(w, t, w, barrierOffset(w, t, address, site), site);
}

// The program of rank `program` of t's cluster; the program ends when there is none.
Worker& clusterProgram(Worker& w, SimThread& t, uint32_t program, uint32_t site) {
  if (program >= w.cluster.size())
    w.fail(t, FindingKind::InvalidCall, site, [&] {
      return "names the program of rank " + std::to_string(program) + " of a cluster of " +
             std::to_string(w.cluster.size());
    });
  return w.cluster.program(program);
}

// Calls visit(sharedOffset) for each element of `c`'s box, where it lands.
template <class Visit>
void forEachLanding(const BulkTensorCopy& c, Visit&& visit) {
  forEachBoxElement(c.map, c.coordinates.data(), [&](uint64_t boxByte, uint64_t address, bool inBounds) {
    visit(swizzledSharedAddress(c.sharedOffset + static_cast<uint32_t>(boxByte), c.map.swizzleBytes), address,
          inBounds);
  });
}

void land(Worker& w, const BulkTensorCopy& c) {
  if (c.landsNothing) return;
  const uint32_t bytes = c.map.elementBytes;
  forEachLanding(c, [&](uint32_t at, uint64_t address, bool inBounds) {
    if (inBounds && c.sourceValid) std::memcpy(w.sharedBase() + at, reinterpret_cast<const void*>(address), bytes);
    else std::memset(w.sharedBase() + at, 0, bytes);
    if (w.checks.tracksSharedMemory()) w.sharedChecker.landBulk(at, bytes, c.site, c.issuer, c.issueClock);
  });
}

// The current phase of `m` completed: its copies land, the next phase begins, and the waiters it satisfies wake
// (having acquired what was released into the barrier).
void completePhase(Worker& w, Mbarrier& m) {
  for (const BulkTensorCopy& c : m.advance()) land(w, c);
  if (w.checks.tracksSharedMemory()) m.completed = m.released;
  for (uint32_t thread : w.mbarriers.takeSatisfiedWaiters(m)) {
    if (w.checks.tracksSharedMemory()) w.sharedChecker.acquire(thread, m.completed);
    w.runner.wake(thread);
  }
}

// Whether every element of `c` lands inside shared memory, reporting the box when not.
bool landsInsideShared(Worker& w, const SimThread& t, const BulkTensorCopy& c, uint32_t site) {
  uint64_t end = 0;
  forEachLanding(c, [&](uint32_t at, uint64_t, bool) { end = std::max<uint64_t>(end, uint64_t{at} + c.map.elementBytes); });
  if (end <= w.sharedBytes()) return true;
  AccessDescription d{c.sharedOffset, c.map.boxBytes(), "shared", true};
  w.report(FindingKind::SharedOutOfBounds, &t, site, &d,
           "the box reaches shared offset " + std::to_string(end) + ", beyond the kernel's " +
               std::to_string(w.sharedBytes()) + " bytes of shared memory");
  return false;
}

// Whether every in-bounds element of `c` is inside launch memory (the first one that is not is reported).
bool sourceInsideLaunchMemory(Worker& w, const SimThread& t, const BulkTensorCopy& c, uint32_t site) {
  bool valid = true;
  forEachBoxElement(c.map, c.coordinates.data(), [&](uint64_t, uint64_t address, bool inBounds) {
    if (valid && inBounds) valid = globalReadable(w, t, address, c.map.elementBytes, site);
  });
  return valid;
}

// The tensor map operand of a `rank`-d cp.async.bulk.tensor; the program ends when it is not one of this runtime's
// or has another rank.
TensorMapFields operandMap(Worker& w, SimThread& t, const void* tensorMap, uint32_t rank, uint32_t site) {
  std::optional<TensorMapFields> map = tensorMap ? decodeTensorMap(tensorMap) : std::nullopt;
  if (!map)
    w.fail(t, FindingKind::InvalidCall, site, "the operand of cp.async.bulk.tensor is not a tensor map of the sim runtime");
  if (map->rank != rank)
    w.fail(t, FindingKind::InvalidCall, site, [&] {
      return "a " + std::to_string(rank) + "d cp.async.bulk.tensor of a " + std::to_string(map->rank) +
             "-dimensional tensor map";
    });
  return *map;
}

}  // namespace

void mbarrierInit(SimThread& t, uint64_t address, uint32_t count, uint32_t site) {
  Worker& w = *t.worker;
  w.site(t, site);
  const uint32_t offset = barrierOffset(w, t, address, site);
  if (count < 1 || count > kMaxArrivals)
    w.fail(t, FindingKind::InvalidCall, site, [&] {
      return "mbarrier.init of " + barrierName(offset) + " with " + std::to_string(count) +
             " arrivals (1 to 2^20 - 1)";
    });
  w.mbarriers.init(offset, count);
}

uint64_t mbarrierArrive(SimThread& t, uint64_t address, uint32_t count, uint32_t txBytes, uint32_t site) {
  Worker& w = *t.worker;
  w.site(t, site);
  Mbarrier& m = initializedBarrier(w, t, address, site);
  if (count < 1 || count > m.pending)
    w.fail(t, FindingKind::InvalidCall, site, [&] {
      return "arrives " + std::to_string(count) + " times on " + barrierName(m.offset) + ", in " + m.describe();
    });
  const uint64_t token = m.phase;
  if (w.checks.tracksSharedMemory()) w.sharedChecker.release(t.index, m.released);
  m.tx += txBytes;
  m.pending -= count;
  if (m.complete()) completePhase(w, m);
  return token;
}

void mbarrierArriveCluster(SimThread& t, uint64_t address, uint32_t program, uint32_t count, uint32_t site) {
  Worker& w = *t.worker;
  w.site(t, site);
  const uint32_t offset = barrierOffset(w, t, address, site);
  Worker& owner = clusterProgram(w, t, program, site);
  Mbarrier& m = initializedBarrier(w, t, owner, offset, site);
  if (count < 1 || count > m.pending)
    w.fail(t, FindingKind::InvalidCall, site, [&] {
      return "arrives " + std::to_string(count) + " times on " + barrierName(m.offset) +
             " of the cluster's program of rank " + std::to_string(program) + ", in " + m.describe();
    });
  if (w.checks.tracksSharedMemory()) w.sharedChecker.release(t.index, m.released);
  m.pending -= count;
  if (m.complete()) completePhase(owner, m);
}

uint32_t mbarrierTryWaitParity(SimThread& t, uint64_t address, uint32_t parity, uint32_t site) {
  Worker& w = *t.worker;
  w.site(t, site);
  Mbarrier& m = initializedBarrier(w, t, address, site);
  if (parity > 1)
    w.fail(t, FindingKind::InvalidCall, site, [&] { return "try_wait.parity " + std::to_string(parity) + " (0 or 1)"; });
  m.completeTransactions();
  if (m.complete()) completePhase(w, m);
  if (m.parityCompleted(parity)) {
    if (w.checks.tracksSharedMemory()) w.sharedChecker.acquire(t.index, m.completed);
    return 1;
  }
  w.mbarriers.addWaiter({t.index, m.offset, parity, site});
  w.runner.park(t, site);  // woken by the completion of that phase (`m` may have moved meanwhile)
  return 1;
}

void bulkTensorCopy(SimThread& t, uint64_t sharedAddress, const void* tensorMap, const int32_t* coordinates,
                    uint32_t rank, uint64_t mbarrierAddress, uint32_t programMask, uint32_t site) {
  Worker& w = *t.worker;
  w.site(t, site);
  const TensorMapFields map = operandMap(w, t, tensorMap, rank, site);
  const uint32_t barrier = barrierOffset(w, t, mbarrierAddress, site);
  if (programMask == 0 || programMask >> w.cluster.size())
    w.fail(t, FindingKind::InvalidCall, site, [&] {
      return "a multicast copy to the programs of mask " + std::to_string(programMask) + " of a cluster of " +
             std::to_string(w.cluster.size());
    });
  BulkTensorCopy copy;
  copy.map = map;
  copy.site = site;
  std::copy(coordinates, coordinates + rank, copy.coordinates.begin());
  std::optional<uint32_t> destination = sharedOperand(w, t, sharedAddress, 1, 128, site, true);
  // A copy whose destination is out of bounds still completes its bytes (landing none), so that a reported
  // fault does not also hang. Every program of the cluster has the same shared memory, so it lands in each or
  // in none.
  copy.sharedOffset = destination.value_or(0);
  copy.landsNothing = !destination || !landsInsideShared(w, t, copy, site);
  if (!copy.landsNothing) copy.sourceValid = sourceInsideLaunchMemory(w, t, copy, site);
  if (w.checks.tracksSharedMemory()) {
    copy.issuer = w.sharedChecker.clusterThread(t.index);
    copy.issueClock = w.sharedChecker.clockOf(t.index);
  }
  for (uint32_t program = 0; program < w.cluster.size(); ++program) {
    if (!(programMask >> program & 1)) continue;
    Worker& owner = w.cluster.program(program);
    Mbarrier& m = initializedBarrier(w, t, owner, barrier, site);
    if (!copy.landsNothing && w.checks.tracksSharedMemory())
      forEachLanding(copy, [&](uint32_t at, uint64_t, bool) {
        // Checked as the issuing thread's write (into another program's memory, for a multicast).
        SharedAccessIssues issues = owner.sharedChecker.issueBulk(w.accessor(t), at, copy.map.elementBytes, site);
        reportSharedIssues(w, t, issues, at, copy.map.elementBytes, site, true);
      });
    // complete_tx releases the issuing thread's accesses up to the issue (the copy's own write among them).
    if (w.checks.tracksSharedMemory()) w.sharedChecker.release(t.index, m.released);
    m.inFlight.push_back(copy);
  }
}

void bulkTensorStore(SimThread& t, const void* tensorMap, const int32_t* coordinates, uint32_t rank,
                     uint64_t sharedAddress, uint32_t site) {
  Worker& w = *t.worker;
  w.site(t, site);
  const TensorMapFields map = operandMap(w, t, tensorMap, rank, site);
  BulkTensorCopy box;  // where its elements come from, as a copy's land
  box.map = map;
  std::copy(coordinates, coordinates + rank, box.coordinates.begin());
  std::optional<uint32_t> source = sharedOperand(w, t, sharedAddress, 1, 128, site, false);
  if (!source) return;  // reported
  box.sharedOffset = *source;
  if (!landsInsideShared(w, t, box, site)) return;  // the box would be read from beyond shared memory (reported)
  const uint32_t bytes = map.elementBytes;
  forEachLanding(box, [&](uint32_t at, uint64_t address, bool inBounds) {
    if (!inBounds) return;
    if (w.checks.tracksSharedMemory())
      reportSharedIssues(w, t, w.sharedChecker.read(w.accessor(t), at, bytes, site), at, bytes, site, false);
    if (globalWritable(w, t, address, bytes, site))
      std::memcpy(reinterpret_cast<void*>(address), w.sharedBase() + at, bytes);
  });
}

bool completeCopiesInFlight(Worker& w) {
  bool completed = false;
  for (Mbarrier& m : w.mbarriers.barriers()) {
    if (m.inFlight.empty()) continue;
    m.completeTransactions();
    if (!m.complete()) continue;
    completePhase(w, m);
    completed = true;
  }
  return completed;
}

void dropUnlandedBulkCopies(Worker& w) {
  auto drop = [&](const BulkTensorCopy& c) {
    if (!c.landsNothing)
      forEachLanding(c, [&](uint32_t at, uint64_t, bool) { w.sharedChecker.clearPending(at, c.map.elementBytes); });
  };
  for (const Mbarrier& m : w.mbarriers.barriers()) {
    for (const BulkTensorCopy& c : m.inFlight) drop(c);
    for (const BulkTensorCopy& c : m.counted) drop(c);
  }
}

bool reportMbarrierHangs(Worker& w) {
  for (const MbarrierWaiter& waiter : w.mbarriers.waiters()) {
    const Mbarrier* m = w.mbarriers.find(waiter.offset);
    w.reportAlways(FindingKind::IncompleteMbarrierWait, &w.runner.threads()[waiter.thread], waiter.site, nullptr,
                   "waits for the phase of parity " + std::to_string(waiter.parity) + " of " +
                       barrierName(waiter.offset) + ", which never completes (" +
                       (m ? m->describe() : std::string("re-initialized")) + ")");
  }
  return !w.mbarriers.waiters().empty();
}

}  // namespace tessera::sim
