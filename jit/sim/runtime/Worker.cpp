#include "jit/sim/runtime/Worker.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>

#include "jit/sim/runtime/BulkCopies.h"
#include "jit/sim/runtime/Cluster.h"
#include "jit/sim/runtime/WarpOperations.h"

namespace tessera::sim {

namespace {

constexpr std::align_val_t kSharedAlignment{4096};

// "0-3, 7, 9-10"
std::string laneList(uint64_t lanes) {
  std::string s;
  for (uint32_t l = 0; l < 64;) {
    if (!(lanes >> l & 1)) {
      ++l;
      continue;
    }
    uint32_t end = l;
    while (end + 1 < 64 && (lanes >> (end + 1) & 1)) ++end;
    if (!s.empty()) s += ", ";
    s += end == l ? std::to_string(l) : std::to_string(l) + "-" + std::to_string(end);
    l = end + 1;
  }
  return s;
}

std::string hexMask(uint64_t mask) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, mask);
  return buf;
}

}  // namespace

void Worker::AlignedFree::operator()(std::byte* p) const { ::operator delete[](p, kSharedAlignment); }

Worker::Worker(const LaunchContext& l, Cluster& c, uint32_t rank, SharedMemoryChecker& checker)
    : launch(l),
      sites(l.program.sites),
      checks(l.config.checks),
      runner(l.program.warpSize, l.program.numWarps, l.config.stackBytes, this),
      counters(l.program.sites),
      requests(static_cast<uint32_t>(l.program.sites.size()), l.program.numWarps, l.program.warpSize, counters),
      sharedChecker(checker, rank, l.clusterSize(), l.program.sharedBytes, l.program.numWarps * l.program.warpSize),
      asyncCopies(l.program.numWarps * l.program.warpSize),
      wgmma(l.program.numWarps % 4 == 0 ? l.program.numWarps / 4 : 0),
      findings(l.config.maxFindingsPerKind),
      cluster(c),
      clusterRank(rank),
      shared_(static_cast<std::byte*>(::operator new[](std::max<size_t>(l.program.sharedBytes, 1), kSharedAlignment))),
      warpSyncGeneration_(l.program.numWarps) {}

Worker::~Worker() = default;

void Worker::beginProgram(uint64_t index) {
  programIndex = index;
  programId = launch.programId(index);
  // Shared memory holds stale data on a GPU; all-ones bytes are NaN as floats, so an unchecked read shows.
  std::memset(shared_.get(), 0xFF, sharedBytes());
  for (SharedMemoryChecker::Clock& c : namedArrivals_) c.clear();
  asyncCopies.beginProgram();
  wgmma.beginProgram();
  mbarriers.beginProgram();
  registerCounts.beginProgram(runner.numThreads(), runner.numWarps(), runner.warpSize());
  std::fill(warpSyncGeneration_.begin(), warpSyncGeneration_.end(), 0);
  divergenceReported_ = false;
}

void Worker::threadBody(void* worker) {
  auto* w = static_cast<Worker*>(worker);
  w->launch.program.entry(w->launch.params);
}

void Worker::endProgram() {
  requests.flush();
  // Copies never waited for are dropped; their bytes must not stay pending for the next program.
  asyncCopies.forEachOutstanding([&](const AsyncCopy& c) { sharedChecker.clearPending(c.sharedOffset, c.bytes); });
  dropIncompleteWgmmas(*this);
  dropUnlandedBulkCopies(*this);
}

void Worker::warpSynced(uint32_t warp, uint64_t mask) {
  uint64_t live = runner.liveLanes(warp);
  if ((mask & live) != live) return;  // a partial sync orders nothing (SharedMemoryChecker.h)
  uint32_t generation = ++warpSyncGeneration_[warp];
  SimThread* lanes = runner.warpThreads(warp);
  for (uint32_t l = 0; l < runner.warpSize(); ++l)
    if (mask >> l & 1) lanes[l].warpSyncGeneration = generation;
}

std::string Worker::describeSite(uint32_t id) const {
  if (id >= sites.size()) return "site " + std::to_string(id);
  const Site& s = sites[id];
  std::string where = s.file.empty() ? "site " + std::to_string(id)
                                     : s.file + ":" + std::to_string(s.line) + ":" + std::to_string(s.column);
  if (!s.op.empty()) where += " (" + s.op + ")";
  return where;
}

std::string Worker::describeThread(uint32_t thread) const {
  return "warp " + std::to_string(thread / runner.warpSize()) + " lane " + std::to_string(thread % runner.warpSize());
}

std::string Worker::describeThread(uint32_t program, uint32_t thread) const {
  if (program == clusterRank) return describeThread(thread);
  return describeThread(thread) + " of the cluster's program of rank " + std::to_string(program);
}

void Worker::report(FindingKind kind, const SimThread* t, std::optional<uint32_t> site,
                    const AccessDescription* access, const std::string& message) {
  if (checks.reports(kind)) reportAlways(kind, t, site, access, message);
}

void Worker::reportAlways(FindingKind kind, const SimThread* t, std::optional<uint32_t> site,
                          const AccessDescription* access, const std::string& message) {
  if (!findings.admit(kind)) return;
  Finding f;
  f.kind = kind;
  f.kernel = launch.program.kernel;
  f.program = programId;
  f.programIndex = programIndex;
  if (t) {
    f.hasThread = true;
    f.warp = t->warp;
    f.lane = t->lane;
  }
  if (site && *site < sites.size()) {
    const Site& s = sites[*site];
    f.hasSite = true;
    f.site = *site;
    f.op = s.op;
    f.file = s.file;
    f.line = s.line;
    f.column = s.column;
    f.instruction = s.instruction;
  }
  if (access) {
    f.hasAccess = true;
    f.address = access->address;
    f.bytes = access->bytes;
    f.space = access->space;
    f.write = access->write;
  }
  f.message = message;
  findings.add(std::move(f));
}

void Worker::invalidSite(SimThread& t, uint32_t id) {
  fail(t, FindingKind::InvalidCall, std::nullopt, [&] {
    return "site " + std::to_string(id) + " is not in the kernel's site table (" + std::to_string(sites.size()) +
           " sites)";
  });
}

void Worker::print(const std::string& text) {
  if (output_.empty() || output_.back().first != programIndex) output_.emplace_back(programIndex, std::string());
  output_.back().second += text;
}

void Worker::barrierReleased(uint32_t site, bool threadsExited, bool mixedSites) {
  sharedChecker.barrier();
  requests.flush();
  if (site < sites.size()) counters.addBarrier(site);
  if (!(threadsExited || mixedSites) || divergenceReported_) return;
  divergenceReported_ = true;  // once per program: every later barrier would repeat it
  const std::vector<SimThread>& threads = runner.threads();
  const SimThread* firstExited = nullptr;
  std::map<uint32_t, uint32_t> arrivalsBySite;
  uint32_t exited = 0;
  for (const SimThread& t : threads) {
    if (t.state == ThreadState::Exited) {
      ++exited;
      if (!firstExited) firstExited = &t;
    } else if (t.state == ThreadState::AtBarrier) {
      ++arrivalsBySite[t.waitSite];
    }
  }
  std::string message;
  if (threadsExited) {
    message = std::to_string(threads.size() - exited) + " of " + std::to_string(threads.size()) +
              " threads reached it; the others had exited (";
    std::string list;
    for (uint32_t w = 0; w < runner.numWarps(); ++w) {
      uint64_t gone = ~runner.liveLanes(w) & runner.fullWarpMask();
      if (!gone) continue;
      if (!list.empty()) list += "; ";
      list += "warp " + std::to_string(w) + " lanes " + laneList(gone);
    }
    message += list + ")";
  }
  if (mixedSites) {
    if (!message.empty()) message += "; ";
    message += "threads arrived from different barriers:";
    for (const auto& [s, n] : arrivalsBySite) message += " " + describeSite(s) + " (" + std::to_string(n) + " threads)";
  }
  report(FindingKind::BarrierDivergence, threadsExited ? firstExited : nullptr, site, nullptr, message);
}

void Worker::namedBarrierReleased(uint32_t id, const std::vector<uint32_t>& threads, uint32_t site) {
  if (checks.tracksSharedMemory()) {
    // Arriving is a release and waiting an acquire (the PTX memory model): the waiters are ordered after each
    // other and after the arrivals; the threads that only arrived are ordered after nothing.
    sharedChecker.synchronize(threads);
    for (uint32_t t : threads) sharedChecker.acquire(t, namedArrivals_[id]);
  }
  namedArrivals_[id].clear();
  if (site < sites.size()) counters.addBarrier(site);
}

void Worker::namedBarrierArrived(uint32_t id, uint32_t thread) {
  if (checks.tracksSharedMemory()) sharedChecker.release(thread, namedArrivals_[id]);
}

// The hardware forgets a barrier's arrivals when the program exits, but an arrival no wait matched is a turn
// handed to nobody: in a loop over tiles it would complete the next tile's barrier too early.
void Worker::namedBarrierLeftArrived(uint32_t id, const ProgramRunner::NamedBarrier& n) {
  report(FindingKind::BarrierDivergence, &runner.threads()[n.arriver], n.site, nullptr,
         "barrier " + std::to_string(id) + ": " + std::to_string(n.arrivals) + " of the " +
             std::to_string(n.expected) + " threads it counts arrived without waiting (bar.arrive) and no thread " +
             "waited there before the program ended: an arrival that no bar.sync matches");
}

bool Worker::reportNamedBarrierHangs(const std::function<std::string(const SimThread&)>& whereIs) {
  const std::vector<SimThread>& threads = runner.threads();
  bool reported = false;
  for (uint32_t id = 0; id < ProgramRunner::kNamedBarriers; ++id) {
    const ProgramRunner::NamedBarrier& n = runner.namedBarrierState(id);
    if (!n.expected) continue;
    if (n.waiters.empty()) continue;  // only arrivals (bar.arrive): nobody waits there
    std::vector<bool> arrived(threads.size());
    for (uint32_t index : n.waiters) arrived[index] = true;
    std::map<std::string, uint32_t> others;
    for (const SimThread& t : threads)
      if (!arrived[t.index]) ++others[whereIs(t)];
    std::string message = "barrier " + std::to_string(id) + " never completes: " + std::to_string(n.waiters.size()) +
                          " of the " + std::to_string(n.expected) + " threads it waits for arrived" +
                          (n.arrivals ? " (" + std::to_string(n.arrivals) + " more without waiting, bar.arrive)" : "") +
                          "; of the others,";
    bool first = true;
    for (const auto& [place, count] : others) {
      message += std::string(first ? "" : ";") + " " + std::to_string(count) + " " + place;
      first = false;
    }
    reportAlways(FindingKind::BarrierDivergence, &threads[n.waiters.front()], n.site, nullptr, message);
    reported = true;
  }
  return reported;
}

void Worker::resolveCollective(uint32_t warp, const PendingCollective& collective) {
  resolveWarpCollective(*this, warp, collective);
}

void Worker::collectiveMismatch(const SimThread& t, CollectiveKind kind, uint64_t mask, uint32_t site,
                                const PendingCollective& other) {
  report(FindingKind::CollectiveMismatch, &t, site, nullptr,
         std::string(collectiveName(kind)) + " with mask " + hexMask(mask) + ", while lanes " +
             laneList(other.arrived) + " of warp " + std::to_string(t.warp) + " wait at " +
             collectiveName(other.kind) + " with mask " + hexMask(other.mask) + " at " + describeSite(other.site));
}

bool Worker::completeAsynchronousWork() { return completeCopiesInFlight(*this); }

void Worker::deadlock() {
  const std::vector<SimThread>& threads = runner.threads();
  // Where a lane that a collective waits for is instead.
  auto whereIs = [&](const SimThread& t) -> std::string {
    switch (t.state) {
      case ThreadState::Exited: return "exited";
      case ThreadState::AtBarrier: return "waits at the barrier at " + describeSite(t.waitSite);
      case ThreadState::AtCollective: return "waits at the collective at " + describeSite(t.waitSite);
      case ThreadState::AtMbarrier: return "waits on an mbarrier at " + describeSite(t.waitSite);
      case ThreadState::AtClusterBarrier: return "waits at the cluster barrier at " + describeSite(t.waitSite);
      default: return "is still running";
    }
  };
  bool reported = reportMbarrierHangs(*this);
  reported = reportNamedBarrierHangs(whereIs) || reported;
  for (const SimThread& t : threads)
    if (t.state == ThreadState::AtClusterBarrier) {
      reportAlways(FindingKind::BarrierDivergence, &t, t.waitSite, nullptr, cluster.barrierHang());
      reported = true;
      break;
    }
  for (uint32_t w = 0; w < runner.numWarps(); ++w) {
    for (const PendingCollective& p : runner.pendingCollectives(w)) {
      uint64_t missing = p.mask & ~p.arrived;
      if (!missing) {  // this warp's part of a group collective: other warps of the group are elsewhere
        report(FindingKind::IncompleteCollective, &threads[w * runner.warpSize()], p.site, nullptr,
               std::string(collectiveName(p.kind)) + " never completes: every lane of warp " + std::to_string(w) +
                   " arrived, but not every thread of warps " + std::to_string(w / p.warps * p.warps) + "-" +
                   std::to_string(w / p.warps * p.warps + p.warps - 1) + " (each must execute it)");
        reported = true;
        continue;
      }
      std::map<std::string, uint64_t> lanesByPlace;
      for (uint32_t l = 0; l < runner.warpSize(); ++l)
        if (missing >> l & 1) lanesByPlace[whereIs(threads[w * runner.warpSize() + l])] |= uint64_t{1} << l;
      std::string message = std::string(collectiveName(p.kind)) + " with mask " + hexMask(p.mask) +
                            " never completes: lanes " + laneList(p.arrived) + " arrived; of the others,";
      bool first = true;
      for (const auto& [place, lanes] : lanesByPlace) {
        message += std::string(first ? "" : ";") + " lanes " + laneList(lanes) + " " + place;
        first = false;
      }
      const SimThread* firstArrived = nullptr;
      for (uint32_t l = 0; l < runner.warpSize() && !firstArrived; ++l)
        if (p.arrived >> l & 1) firstArrived = &threads[w * runner.warpSize() + l];
      report(FindingKind::IncompleteCollective, firstArrived, p.site, nullptr, message);
      reported = true;
    }
  }
  if (reported) return;
  // Without a pending collective every live thread would be at the barrier and it would have been released;
  // say what the threads are doing all the same.
  std::map<std::string, uint32_t> places;
  for (const SimThread& t : threads) ++places[whereIs(t)];
  std::string message = "no thread can run:";
  for (const auto& [place, n] : places) message += " " + std::to_string(n) + " threads " + place + ";";
  reportAlways(FindingKind::BarrierDivergence, nullptr, std::nullopt, nullptr, message);  // a hang
}

void Worker::threadExited(const SimThread& t) { cluster.threadExited(t, clusterRank); }

void Worker::threadFailed(const SimThread& t, const char* what) {
  report(FindingKind::KernelException, &t, std::nullopt, nullptr, what);
}

}  // namespace tessera::sim
