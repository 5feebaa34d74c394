// The warpgroup matrix operations of the ABI (wgmma.fence, commit_group, wait_group, mma_async): each thread
// checks its arguments and arrives at a collective of its warpgroup's 128 threads (ProgramRunner::groupCollective);
// the last to arrive resolves it here.
//
// Asynchrony: an mma_async computes its result when it is issued (the registers it writes are the thread's own,
// so no other thread can observe them early) and joins the warpgroup's open group; commit_group closes the group;
// wait_group N completes every committed group but the N most recent. Until then the checks (racecheck) report
// what would read or write data the hardware has not finished with: a write to a shared byte the wgmma reads
// (WgmmaOperandOverwrite), and a read of the registers it writes (WgmmaRegisterRead, from the calls the rewriting
// inserts before every instruction reading them other than wgmma's own). A wgmma.mma_async needs a wgmma.fence
// since the warpgroup's last wait_group (synccheck: WgmmaMissingFence).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "jit/sim/runtime/ProgramRunner.h"
#include "jit/sim/runtime/SimThread.h"

namespace tessera::sim {

class Worker;

// What one thread brings to a wgmma.mma_async (its arrival's `operands`).
struct WgmmaArrival {
  uint32_t n = 0, inputA = 0, inputB = 0, transposes = 0;
  uint64_t descA = 0, descB = 0;
  const uint32_t* a = nullptr;  // A from registers: this thread's four fragment registers (descA unused)
  uint32_t scaleD = 0;
  const uint32_t* c = nullptr;
  uint32_t* d = nullptr;
  uint32_t issue = 0;
  bool operator==(const WgmmaArrival& o) const {  // the operands every thread of the warpgroup must agree on
    return n == o.n && inputA == o.inputA && inputB == o.inputB && transposes == o.transposes && descA == o.descA && descB == o.descB &&
           (a == nullptr) == (o.a == nullptr) && scaleD == o.scaleD && issue == o.issue;
  }
};

// The wgmma groups of each warpgroup of the running program.
class WgmmaGroups {
 public:
  static constexpr uint32_t kOpenGroup = 0xFFFFFFFF;
  struct Operation {
    uint32_t group = kOpenGroup;   // numbered 1, 2, ... as committed
    std::vector<uint32_t> chunks;  // the 16-byte shared chunks it reads (offsets), while incomplete
  };
  struct Issue {
    uint32_t group = kOpenGroup;  // of the instruction's last execution
    uint32_t site = 0;
  };
  struct Warpgroup {
    std::vector<Operation> incomplete;
    std::unordered_map<uint32_t, Issue> lastExecution;  // by issue id
    uint32_t committed = 0, completed = 0;
    bool fenced = false;
    bool complete(uint32_t group) const { return group != kOpenGroup && group <= completed; }
  };

  explicit WgmmaGroups(uint32_t warpgroups) : warpgroups(warpgroups) {}
  void beginProgram();
  std::vector<Warpgroup> warpgroups;
};

void wgmmaFence(SimThread& t, uint32_t site);
void wgmmaCommit(SimThread& t, uint32_t site);
void wgmmaWait(SimThread& t, uint32_t pendingGroups, uint32_t site);
void wgmmaMma(SimThread& t, const WgmmaArrival& operands, uint32_t site);
void wgmmaRegisterRead(SimThread& t, uint32_t issue, uint32_t site);

// Called on the last thread of the warpgroup (warps firstWarp..firstWarp + 3) to arrive.
void resolveWarpgroupCollective(Worker& w, uint32_t firstWarp, const PendingCollective& collective);
// The program ends: no operation stays an operand reader in the shared-memory shadow.
void dropIncompleteWgmmas(Worker& w);

}  // namespace tessera::sim
