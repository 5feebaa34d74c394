// Everything one host thread needs to run programs of a launch: a runner with its fibers, the program's shared
// memory and its shadow, request tracking and counters, cp.async, wgmma and mbarrier state, findings and printed
// output. Programs run one after another on a worker, beside the other programs of their cluster (Cluster.h); no
// fiber ever leaves its worker's host thread. The `__tsim_*` functions reach the running program's state through
// currentThread()->worker.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jit/sim/runtime/AsyncCopies.h"
#include "jit/sim/runtime/Finding.h"
#include "jit/sim/runtime/LaunchContext.h"
#include "jit/sim/runtime/Mbarriers.h"
#include "jit/sim/runtime/ProgramRunner.h"
#include "jit/sim/runtime/RegisterCounts.h"
#include "jit/sim/runtime/RequestTracker.h"
#include "jit/sim/runtime/SharedMemoryChecker.h"
#include "jit/sim/runtime/SharedWindow.h"
#include "jit/sim/runtime/SiteCounters.h"
#include "jit/sim/runtime/WarpgroupOperations.h"

namespace tessera::sim {

// An access as findings describe it.
struct AccessDescription {
  uint64_t address = 0;  // the shared offset for shared memory
  uint64_t bytes = 0;
  const char* space = "global";
  bool write = false;
};

class Cluster;

class Worker final : public ProgramRunner::Events {
 public:
  // A worker of `cluster` (whose programs it runs: those of rank `clusterRank`), checking shared memory in the
  // cluster's `checker`.
  Worker(const LaunchContext& launch, Cluster& cluster, uint32_t clusterRank, SharedMemoryChecker& checker);
  ~Worker();

  // A program's run: beginProgram, then its runner runs (Cluster::run), then endProgram.
  void beginProgram(uint64_t programIndex);
  void endProgram();
  static void threadBody(void* worker);

  // ---- the running program, for the ABI functions
  const LaunchContext& launch;
  const SiteTable& sites;
  const Checks checks;
  ProgramRunner runner;
  SiteCounters counters;
  RequestTracker requests;
  SharedWindow sharedChecker;  // this program's part of the cluster's checker
  AsyncCopies asyncCopies;
  WgmmaGroups wgmma;
  Mbarriers mbarriers;
  RegisterCounts registerCounts;
  FindingLog findings;
  std::array<uint32_t, 3> programId{};
  uint64_t programIndex = 0;
  Cluster& cluster;
  const uint32_t clusterRank;

  std::byte* sharedBase() const { return shared_.get(); }
  uint32_t sharedBytes() const { return launch.program.sharedBytes; }
  // `t` as the cluster's checker knows it (its thread and warp numbered across the cluster).
  SharedAccessor accessor(const SimThread& t) const {
    return {sharedChecker.clusterThread(t.index), clusterRank * runner.numWarps() + t.warp, t.warpSyncGeneration, 0,
            clusterRank};
  }
  // A warp sync of every live lane of `warp` completed: later accesses of its lanes are ordered after earlier ones.
  void warpSynced(uint32_t warp, uint64_t mask);

  // The site `id`, or (after an InvalidCall finding) the end of the program.
  const Site& site(SimThread& t, uint32_t id) {
    if (id < sites.size()) [[likely]]
      return sites[id];
    invalidSite(t, id);
  }
  // Records a finding if the launch's checks report its kind (and it is still under the cap). `site` and
  // `access` are optional.
  void report(FindingKind kind, const SimThread* t, std::optional<uint32_t> site, const AccessDescription* access,
              const std::string& message);
  // The same whatever the checks: for what the emulator cannot carry out (a hang, an access it cannot perform).
  void reportAlways(FindingKind kind, const SimThread* t, std::optional<uint32_t> site,
                    const AccessDescription* access, const std::string& message);
  // Records a finding and ends the program. The message is made here, by `makeMessage()`, and freed before the
  // program ends: the calling fiber switches away for good, so a string its frames owned would never be freed.
  template <class MakeMessage>
  [[noreturn]] void fail(SimThread& t, FindingKind kind, std::optional<uint32_t> site, const MakeMessage& makeMessage) {
    report(kind, &t, site, nullptr, makeMessage());
    runner.endProgram(t);
  }
  [[noreturn]] void fail(SimThread& t, FindingKind kind, std::optional<uint32_t> site, const char* message) {
    fail(t, kind, site, [message] { return std::string(message); });
  }
  // "file:line:col (op)" or "site N" for messages.
  std::string describeSite(uint32_t site) const;
  std::string describeThread(uint32_t thread) const;
  // A thread of the program of rank `program` in this one's cluster (numbered within it).
  std::string describeThread(uint32_t program, uint32_t thread) const;

  void print(const std::string& text);
  // Printed text per program, in the order the programs ran here.
  const std::vector<std::pair<uint64_t, std::string>>& output() const { return output_; }

  // Scratch buffers for warp matrix operations (no allocation per operation).
  std::vector<uint32_t> scratchA, scratchB, scratchC, scratchD;
  std::vector<uint64_t> scratchRows;
  // stmatrix instructions this worker completed: each one's number tells racecheck which row writes were one
  // warp instruction.
  uint32_t matrixStores = 0;

 private:
  [[noreturn]] void invalidSite(SimThread& t, uint32_t id);
  // Per named barrier, what the threads that arrived without waiting (bar.arrive) released for its waiters.
  std::array<SharedMemoryChecker::Clock, ProgramRunner::kNamedBarriers> namedArrivals_;

  // ProgramRunner::Events
  void barrierReleased(uint32_t site, bool threadsExited, bool mixedSites) override;
  void namedBarrierReleased(uint32_t id, const std::vector<uint32_t>& threads, uint32_t site) override;
  void namedBarrierArrived(uint32_t id, uint32_t thread) override;
  void namedBarrierLeftArrived(uint32_t id, const ProgramRunner::NamedBarrier& n) override;
  // Reports each named barrier that threads wait at (the program cannot go on); false when there is none.
  bool reportNamedBarrierHangs(const std::function<std::string(const SimThread&)>& whereIs);
  void resolveCollective(uint32_t warp, const PendingCollective& collective) override;
  void collectiveMismatch(const SimThread& thread, CollectiveKind kind, uint64_t mask, uint32_t site,
                          const PendingCollective& other) override;
  bool completeAsynchronousWork() override;
  void deadlock() override;
  void threadFailed(const SimThread& thread, const char* what) override;
  void threadExited(const SimThread& thread) override;

  struct AlignedFree {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], AlignedFree> shared_;
  std::vector<uint32_t> warpSyncGeneration_;
  bool divergenceReported_ = false;
  std::vector<std::pair<uint64_t, std::string>> output_;
};

}  // namespace tessera::sim
