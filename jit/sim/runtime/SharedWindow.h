// A program's view of its cluster's SharedMemoryChecker (one checker per cluster, Cluster.h): offsets in the
// program's own shared memory and thread ids within the program, as the runtime knows them, become the checker's
// (the program's bytes after those of the lower ranks, thread ids numbered across the cluster), and the issues
// found come back in the program's terms (offsets in its shared memory; the other thread numbered within its own
// program, SharedAccessIssues::otherProgram). Accessors (Worker::accessor) are numbered across the cluster already.
#pragma once

#include <cstdint>
#include <vector>

#include "jit/sim/runtime/SharedMemoryChecker.h"

namespace tessera::sim {

class SharedWindow {
 public:
  using Clock = SharedMemoryChecker::Clock;

  // The window of the program of rank `program` among `programs`, each of `bytes` of shared memory and `threads`
  // threads.
  SharedWindow(SharedMemoryChecker& checker, uint32_t program, uint32_t programs, uint32_t bytes, uint32_t threads)
      : checker_(checker), program_(program), programs_(programs), base_(program * bytes), threads_(threads),
        first_(program * threads) {}

  uint32_t program() const { return program_; }
  uint32_t clusterThread(uint32_t thread) const { return first_ + thread; }

  // Barrier 0 of this program. In a cluster of several programs happens-before must follow it too, since it
  // orders an access of another program (a multicast copy's write, acquired by one thread) before what the other
  // threads do after it.
  void barrier() {
    checker_.barrier(program_);
    if (programs_ == 1 || !checker_.usesClocks()) return;
    std::vector<uint32_t> all(threads_);
    for (uint32_t t = 0; t < threads_; ++t) all[t] = first_ + t;
    checker_.synchronize(all);
  }

  void release(uint32_t thread, Clock& into) { checker_.release(clusterThread(thread), into); }
  void acquire(uint32_t thread, const Clock& from) { checker_.acquire(clusterThread(thread), from); }
  void synchronize(const std::vector<uint32_t>& threads) {
    std::vector<uint32_t> cluster;
    cluster.reserve(threads.size());
    for (uint32_t t : threads) cluster.push_back(clusterThread(t));
    checker_.synchronize(cluster);
  }
  void orderAfter(uint32_t thread, uint32_t source) { checker_.orderAfter(clusterThread(thread), clusterThread(source)); }
  uint32_t clockOf(uint32_t thread) const { return checker_.clockOf(clusterThread(thread)); }

  SharedAccessIssues read(const SharedAccessor& who, uint32_t offset, uint32_t bytes, uint32_t site) {
    return local(checker_.read(who, base_ + offset, bytes, site));
  }
  SharedAccessIssues write(const SharedAccessor& who, uint32_t offset, uint32_t bytes, uint32_t site,
                           bool unchanged = false) {
    return local(checker_.write(who, base_ + offset, bytes, site, unchanged));
  }
  SharedAccessIssues atomic(const SharedAccessor& who, uint32_t offset, uint32_t bytes, uint32_t site) {
    return local(checker_.atomic(who, base_ + offset, bytes, site));
  }
  SharedAccessIssues markPending(uint32_t offset, uint32_t bytes) {
    return local(checker_.markPending(base_ + offset, bytes));
  }
  SharedAccessIssues land(const SharedAccessor& who, uint32_t offset, uint32_t bytes, uint32_t site) {
    return local(checker_.land(who, base_ + offset, bytes, site));
  }
  void clearPending(uint32_t offset, uint32_t bytes) { checker_.clearPending(base_ + offset, bytes); }
  SharedAccessIssues issueBulk(const SharedAccessor& who, uint32_t offset, uint32_t bytes, uint32_t site) {
    return local(checker_.issueBulk(who, base_ + offset, bytes, site));
  }
  // `issuer` is numbered across the cluster (it may be a thread of another program: a multicast copy).
  void landBulk(uint32_t offset, uint32_t bytes, uint32_t site, uint32_t issuer, uint32_t issueClock) {
    checker_.landBulk(base_ + offset, bytes, site, issuer, issueClock);
  }
  void beginOperandRead(uint32_t offset, uint32_t bytes) { checker_.beginOperandRead(base_ + offset, bytes); }
  void endOperandRead(uint32_t offset, uint32_t bytes) { checker_.endOperandRead(base_ + offset, bytes); }

 private:
  SharedAccessIssues local(SharedAccessIssues issues) const {
    issues.raceOffset -= issues.race ? base_ : 0;
    issues.uninitializedOffset -= issues.uninitialized ? base_ : 0;
    issues.pendingOffset -= issues.pending ? base_ : 0;
    issues.operandOffset -= issues.operandOverwrite ? base_ : 0;
    if (issues.race) issues.otherThread -= issues.otherProgram * threads_;
    return issues;
  }

  SharedMemoryChecker& checker_;
  uint32_t program_, programs_, base_, threads_, first_;
};

}  // namespace tessera::sim
