// Runs one program (CTA / workgroup) of the emulator: one fiber per GPU thread, scheduled round-robin; a thread
// runs until it blocks at a barrier, a warp collective or an mbarrier wait (parked until woken), or exits. The runner releases barriers (every live
// thread arrived), completes collectives (every lane of the mask arrived at the same kind, mask and site), and
// notices when nothing can run while threads still wait: a deadlock, which on a GPU would hang. What these events
// mean (counters, checks, collective results, findings) is the Events' business.
//
// Fibers switch directly to the next ready fiber; the host thread's own context is resumed only when nothing is
// ready or the program ends. A fiber never resumes after its thread exited or its program ended.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "jit/sim/runtime/Fiber.h"
#include "jit/sim/runtime/SimThread.h"

namespace tessera::sim {

enum class CollectiveKind : uint8_t {
  WarpSync, Shuffle, Vote, Bpermute, LdMatrix, StMatrix, Mma,
  WgmmaFence, WgmmaCommit, WgmmaWait, WgmmaMma,  // warpgroup collectives (groupCollective)
};
const char* collectiveName(CollectiveKind kind);

// A collective some lanes of a warp have arrived at.
struct PendingCollective {
  CollectiveKind kind = CollectiveKind::WarpSync;
  uint32_t site = 0;
  uint64_t mask = 0;     // the lanes it needs
  uint64_t arrived = 0;  // the lanes there so far
  uint32_t warps = 1;    // > 1: a group collective of that many warps (this warp's part of it)
};

class ProgramRunner {
 public:
  // The CTA's 16 hardware barriers as bar.sync with an id uses them (barrier 0 without a count is barrier()).
  static constexpr uint32_t kNamedBarriers = 16;
  struct NamedBarrier {
    uint32_t expected = 0;  // the threads it waits for; 0: none arrived since it last completed
    uint32_t site = 0;      // the first arrival's
    std::vector<uint32_t> waiters;
    uint32_t arrivals = 0;  // threads that arrived without waiting (bar.arrive)
    uint32_t arriver = 0;   // the first of them
  };

  class Events {
   public:
    // The barrier every live thread reached (the first arrival's site); `threadsExited`: some threads of the
    // program had exited before it; `mixedSites`: threads arrived from different barrier sites.
    virtual void barrierReleased(uint32_t site, bool threadsExited, bool mixedSites) = 0;
    // The named barrier `id` completed: `threads` arrived (its count of them), the first at `site`.
    virtual void namedBarrierReleased(uint32_t id, const std::vector<uint32_t>& threads, uint32_t site) {}
    // `thread` arrived at named barrier `id` without waiting (bar.arrive); the barrier's waiters are ordered after
    // its accesses so far once it completes.
    virtual void namedBarrierArrived(uint32_t id, uint32_t thread) {}
    // Every lane of `collective` arrived: compute each lane's results (their arrivals).
    virtual void resolveCollective(uint32_t warp, const PendingCollective& collective) = 0;
    // `thread` arrived at (kind, mask, site) while lanes it shares with `other` wait there. The program ends.
    virtual void collectiveMismatch(const SimThread& thread, CollectiveKind kind, uint64_t mask, uint32_t site,
                                    const PendingCollective& other) = 0;
    // Nothing can run and threads still wait: asynchronous work still in flight completes now (as late as it may:
    // a warp-specialized producer issues copies that only other threads wait for). True when that made a thread
    // ready; false: deadlock() follows.
    virtual bool completeAsynchronousWork() { return false; }
    // Nothing can run and threads still wait (read threads() and pendingCollectives()). The program ends.
    virtual void deadlock() = 0;
    // The kernel body threw on `thread` (only C++ test kernels can). The program ends.
    virtual void threadFailed(const SimThread& thread, const char* what) = 0;
    // Every thread exited while named barrier `id` had arrivals that nothing waited for (`n`: its state).
    virtual void namedBarrierLeftArrived(uint32_t id, const NamedBarrier& n) {}
    // `thread` exited (its fiber is about to switch away for good).
    virtual void threadExited(const SimThread& thread) {}

   protected:
    ~Events() = default;
  };
  using Body = void (*)(void* context);

  // Threads are given `worker` (for the ABI functions to find their program's state).
  ProgramRunner(uint32_t warpSize, uint32_t numWarps, size_t stackBytes, Worker* worker);

  uint32_t warpSize() const { return warpSize_; }
  uint32_t numWarps() const { return numWarps_; }
  uint32_t numThreads() const { return static_cast<uint32_t>(threads_.size()); }
  const std::vector<SimThread>& threads() const { return threads_; }
  // The threads of `warp`, lane by lane (collective results are written into their arrivals).
  SimThread* warpThreads(uint32_t warp) { return &threads_[size_t{warp} * warpSize_]; }
  const std::vector<PendingCollective>& pendingCollectives(uint32_t warp) const { return pending_[warp]; }
  uint64_t liveLanes(uint32_t warp) const { return liveLanes_[warp]; }
  uint64_t fullWarpMask() const { return fullWarpMask_; }
  const FiberStack& stackOf(const SimThread& t) const { return fibers_[t.index]->stack(); }
  bool ended() const { return ended_; }

  const NamedBarrier& namedBarrierState(uint32_t id) const { return named_[id]; }

  // Runs one program: each thread calls body(context) on its fiber. Returns when every thread exited or the
  // program ended (endProgram, a mismatch, a deadlock, a failed thread). It is start(), then runReady() and the
  // Events' completeAsynchronousWork() while they make progress, then finish().
  void run(Body body, void* context, Events& events);
  // run() in steps, for the programs of a cluster, which run interleaved on one host thread (Cluster.h):
  void start(Body body, void* context, Events& events);
  // Runs ready threads until none is ready or the program ended.
  void runReady();
  bool hasReady() const { return !ended_ && readyCount_ > 0; }
  // Threads that have not exited, of a program not ended.
  bool waiting() const { return !ended_ && live_ > 0; }
  // After the last runReady(): threads still waiting are a deadlock (reported unless `quietly`, which ends the
  // program as another program of its cluster failing would); arrivals left at named barriers are reported.
  void finish(bool quietly = false);

  // Called by the running thread `t` (currentThreadOrNull()):
  void barrier(SimThread& t, uint32_t site);
  // bar.sync id, count: `t` waits until `count` threads (the caller checked it: a multiple of the warp size, at
  // most numThreads()) have arrived at barrier `id` (< kNamedBarriers), then the barrier resets. Exited threads
  // never arrive. A barrier already under way keeps the count of its first arrival (the caller checks it).
  void namedBarrier(SimThread& t, uint32_t id, uint32_t count, uint32_t site);
  // bar.arrive id, count: `t` counts towards barrier `id`'s `count` threads without waiting for it (it may complete
  // the barrier, releasing its waiters).
  void namedBarrierArrive(SimThread& t, uint32_t id, uint32_t count, uint32_t site);
  // `t.arrival` holds its operands; on return it holds its results. `mask` must include t's lane.
  void collective(SimThread& t, CollectiveKind kind, uint64_t mask, uint32_t site);
  // A collective of whole warps: every lane of the `warps` consecutive warps containing t's (warps divides
  // numWarps) must arrive at (kind, site). Resolved once, through resolveCollective(first warp of the group, ...).
  void groupCollective(SimThread& t, CollectiveKind kind, uint32_t warps, uint32_t site);
  // Lets the other ready threads run first.
  void yield(SimThread& t);
  // Suspends `t` at the wait `site` (an mbarrier's, or the cluster barrier's: `state`) until another thread wakes
  // it (what it waits for is the caller's).
  void park(SimThread& t, uint32_t site, ThreadState state = ThreadState::AtMbarrier);
  // Makes the parked thread `index` ready again.
  void wake(uint32_t index) { makeReady(index); }
  // Ends the program now (after a fatal finding): no thread of it runs again.
  [[noreturn]] void endProgram(SimThread& t);

 private:
  struct FiberStart {
    ProgramRunner* runner;
    uint32_t index;
  };
  static void fiberMain(void* start);
  void threadMain(SimThread& t);
  [[noreturn]] void exitThread(SimThread& t);
  void releaseBarrier(const SimThread& releaser);
  // Named barrier `id` has all its threads (`last` arrived last): it resets and its waiters go on.
  void completeNamedBarrier(SimThread& last, uint32_t id);
  // Joins t to its warp's pending collective (kind, mask, site), ending the program on a mismatch.
  PendingCollective& arrive(SimThread& t, CollectiveKind kind, uint64_t mask, uint32_t site);
  // Makes every thread of warps [first, first + warps) that the mask names ready, except `running`.
  void wake(uint32_t firstWarp, uint32_t warps, uint64_t mask, const SimThread& running);
  // Suspends `t` and runs the next ready thread (or, with none, the host context). `exiting`: `t` never resumes.
  void switchAway(SimThread& t, bool exiting);
  void makeReady(uint32_t index);

  uint32_t warpSize_;
  uint32_t numWarps_;
  uint64_t fullWarpMask_;
  std::vector<SimThread> threads_;
  std::vector<std::unique_ptr<Fiber>> fibers_;
  std::vector<FiberStart> starts_;
  Fiber::Context host_;

  // Ready queue: a ring of thread indices (each thread is in it at most once).
  std::vector<uint32_t> ready_;
  uint32_t readyHead_ = 0, readyCount_ = 0;

  uint32_t live_ = 0;
  std::vector<uint64_t> liveLanes_;
  uint32_t barrierArrived_ = 0;
  uint32_t barrierSite_ = 0;
  bool barrierMixedSites_ = false;
  std::vector<uint32_t> barrierWaiters_;
  std::array<NamedBarrier, kNamedBarriers> named_;
  std::vector<std::vector<PendingCollective>> pending_;  // per warp; usually one full-warp collective at most

  Body body_ = nullptr;
  void* bodyContext_ = nullptr;
  Events* events_ = nullptr;
  bool ended_ = false;
};

}  // namespace tessera::sim
