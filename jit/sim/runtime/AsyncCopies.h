// cp.async bookkeeping per thread: copies are issued into the thread's open group, cp.async.commit_group closes
// it, and cp.async.wait_group N lands every committed group but the N most recent. Copies not yet committed are
// not waited for (cp.async.wait_all is commit, then wait 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::sim {

struct AsyncCopy {
  uint32_t sharedOffset = 0;
  uint64_t globalAddress = 0;
  uint32_t bytes = 0;           // written to shared memory
  uint32_t sourceBytes = 0;     // read from global memory (the rest is zero-filled)
  bool sourceValid = false;     // the global range was inside launch memory
  uint32_t site = 0;
  uint32_t group = 0;           // kOpenGroup until committed
};

class AsyncCopies {
 public:
  static constexpr uint32_t kOpenGroup = 0xFFFFFFFF;

  explicit AsyncCopies(uint32_t numThreads) : threads_(numThreads) {}

  void beginProgram();
  void issue(uint32_t thread, AsyncCopy copy);
  void commit(uint32_t thread);
  // Removes the copies cp.async.wait_group(pendingGroups) waits for and calls land(copy) on each, oldest first.
  template <class Land>
  void wait(uint32_t thread, uint32_t pendingGroups, Land&& land) {
    PerThread& t = threads_[thread];
    if (pendingGroups >= t.committed) return;
    uint32_t lastLanding = t.committed - pendingGroups;  // groups are numbered 1, 2, ...
    size_t kept = 0;
    for (size_t i = 0; i < t.copies.size(); ++i) {
      AsyncCopy& c = t.copies[i];
      if (c.group != kOpenGroup && c.group <= lastLanding) land(c);
      else t.copies[kept++] = c;
    }
    t.copies.resize(kept);
  }
  // Every copy not waited for (the program ends: they are dropped after this).
  template <class Visit>
  void forEachOutstanding(Visit&& visit) const {
    for (const PerThread& t : threads_)
      for (const AsyncCopy& c : t.copies) visit(c);
  }

 private:
  struct PerThread {
    std::vector<AsyncCopy> copies;
    uint32_t committed = 0;  // groups committed so far
  };
  std::vector<PerThread> threads_;
};

}  // namespace tessera::sim
