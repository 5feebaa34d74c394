// The programs of one cluster (sm_90 thread-block clusters, Program::clusterDims), run together on one host
// thread: one Worker per program, their threads interleaved as one program's are, so that a thread may wait for
// threads of the other programs (the cluster barrier, barrier.cluster.arrive / wait). A launch without clusters
// runs clusters of one program, which is then exactly the single program's run.
//
// The cluster barrier (PTX ISA, "barrier.cluster"): each thread arrives, then waits; a phase completes when every
// thread of the cluster arrived or exited (exited threads are reported once as barrier divergence, as for
// bar.sync); a wait returns once the phase its thread arrived in completed. Arriving twice without a wait, or
// waiting without an arrival, ends the program. Racecheck: an arrival (unless .relaxed) releases its thread's
// accesses so far, and a wait acquires what its phase's arrivals released, across the cluster's programs (one
// checker serves them all: SharedWindow.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jit/sim/runtime/LaunchContext.h"
#include "jit/sim/runtime/SharedMemoryChecker.h"
#include "jit/sim/runtime/SimThread.h"

namespace tessera::sim {

class Worker;

class Cluster {
 public:
  explicit Cluster(const LaunchContext& launch);
  ~Cluster();

  // Runs the programs of cluster `clusterIndex` (LaunchContext::programOf) to their end.
  void run(uint64_t clusterIndex);

  uint32_t size() const { return static_cast<uint32_t>(programs_.size()); }
  Worker& program(uint32_t rank) { return *programs_[rank]; }
  const std::vector<std::unique_ptr<Worker>>& programs() const { return programs_; }

  // barrier.cluster.arrive[.relaxed] and barrier.cluster.wait by `t`, a thread of the program of rank `rank`.
  void arrive(SimThread& t, uint32_t rank, bool relaxed, uint32_t site);
  void wait(SimThread& t, uint32_t rank, uint32_t site);
  // `t` of `rank` exited: the phase may now be complete.
  void threadExited(const SimThread& t, uint32_t rank);
  // For a deadlock report: what keeps the current phase from completing (where the threads that have not arrived
  // are, per program).
  std::string barrierHang() const;

 private:
  void completePhase(SimThread* running, uint32_t rank);
  uint32_t threadsPerProgram() const;

  const LaunchContext& launch_;
  SharedMemoryChecker checker_;  // the shared memory of every program (SharedWindow)
  std::vector<std::unique_ptr<Worker>> programs_;

  // The cluster barrier.
  uint32_t phase_ = 0;            // phases completed
  uint32_t arrived_ = 0;          // threads that arrived in the current phase and have not exited
  uint32_t exited_ = 0;           // threads of the cluster that exited
  uint32_t arrivedThenExited_ = 0;  // of them, those that had arrived in the current phase
  uint32_t site_ = 0;             // the current phase's first arrival
  bool divergenceReported_ = false;
  std::vector<uint32_t> arrivedIn_;  // per thread (rank * threads + index): 1 + the phase it arrived in, 0: none
  struct Waiter {
    uint32_t rank, thread;
  };
  std::vector<Waiter> waiters_;
  // Racecheck: what the arrivals released in the current phase, and as of the last completion (what a wait
  // acquires).
  SharedMemoryChecker::Clock released_, completed_;
};

}  // namespace tessera::sim
