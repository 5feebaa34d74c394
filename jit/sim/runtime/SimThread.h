// One GPU thread of the running program, as the emulator's runtime sees it, and the host thread's pointer to the
// one running now: the `__tsim_*` functions take no thread id, they read currentThread().
#pragma once

#include <cstdint>

namespace tessera::sim {

class Worker;

enum class ThreadState : uint8_t { Ready, Running, AtBarrier, AtCollective, AtMbarrier, AtClusterBarrier, Exited };

// What a thread brings to a warp collective and what it gets back (WarpCollectives.cpp reads every lane's
// arrival once all have arrived). Registers live on the arriving fiber's stack, which stays put while it waits.
struct CollectiveArrival {
  uint32_t op = 0;                  // shuffle / vote mode, MmaKind, ldmatrix / stmatrix matrix count
  uint32_t value = 0;               // shuffle / bpermute value, vote predicate
  uint32_t operand = 0;             // shuffle lane or delta, bpermute byte address, ldmatrix / stmatrix .trans
  uint32_t clampSegment = 0;        // shuffle c operand
  uint64_t address = 0;             // ldmatrix / stmatrix row address
  const uint32_t* a = nullptr;      // mma operands (a: also the stmatrix registers)
  const uint32_t* b = nullptr;
  const uint32_t* c = nullptr;
  uint32_t* out = nullptr;          // mma D, ldmatrix registers
  const void* operands = nullptr;   // wgmma.mma_async: the thread's WgmmaArrival (WarpgroupOperations.h)
  uint32_t result = 0;              // shuffle / vote / bpermute result
  bool valid = false;               // shuffle predicate
};

struct SimThread {
  uint32_t index = 0;  // in the program: warp * warpSize + lane
  uint32_t warp = 0;
  uint32_t lane = 0;
  Worker* worker = nullptr;
  ThreadState state = ThreadState::Ready;
  uint32_t waitSite = 0;        // the barrier, collective or mbarrier wait it waits at
  uint32_t warpSyncGeneration = 0;  // warp syncs of its warp it has passed (orders same-warp shared accesses)
  CollectiveArrival arrival;
};

namespace detail {
extern constinit thread_local SimThread* tCurrentThread;
}

// The GPU thread running on this host thread; null outside a program.
inline SimThread* currentThreadOrNull() { return detail::tCurrentThread; }
inline void setCurrentThread(SimThread* t) { detail::tCurrentThread = t; }

}  // namespace tessera::sim
