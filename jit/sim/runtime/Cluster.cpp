#include "jit/sim/runtime/Cluster.h"

#include <algorithm>
#include <map>

#include "jit/sim/runtime/Worker.h"

namespace tessera::sim {

Cluster::Cluster(const LaunchContext& launch)
    : launch_(launch), checker_(launch.clusterSize() * launch.program.sharedBytes, launch.program.warpSize) {
  const uint32_t size = launch.clusterSize();
  checker_.setPrograms(size, launch.program.numWarps * launch.program.warpSize);
  for (uint32_t rank = 0; rank < size; ++rank)
    programs_.push_back(std::make_unique<Worker>(launch, *this, rank, checker_));
  arrivedIn_.assign(size_t{size} * threadsPerProgram(), 0);
}

Cluster::~Cluster() = default;

uint32_t Cluster::threadsPerProgram() const { return programs_.front()->runner.numThreads(); }

void Cluster::run(uint64_t clusterIndex) {
  phase_ = arrived_ = exited_ = arrivedThenExited_ = 0;
  divergenceReported_ = false;
  std::fill(arrivedIn_.begin(), arrivedIn_.end(), 0);
  waiters_.clear();
  checker_.beginProgram();
  released_.clear();
  completed_.clear();
  for (uint32_t rank = 0; rank < size(); ++rank) {
    Worker& w = *programs_[rank];
    w.beginProgram(launch_.programOf(clusterIndex, rank));
    w.runner.start(&Worker::threadBody, &w, w);
  }
  // Each program runs until none of its threads can; a thread of one may make threads of another ready (a
  // completed cluster barrier). When no thread of any can run, asynchronous work in flight completes.
  for (;;) {
    bool ran = false;
    for (auto& w : programs_)
      if (w->runner.hasReady()) {
        w->runner.runReady();
        ran = true;
      }
    if (ran) continue;
    bool woke = false;
    for (auto& w : programs_) {
      ProgramRunner::Events& events = *w;
      if (w->runner.waiting() && events.completeAsynchronousWork() && w->runner.hasReady()) woke = true;
    }
    if (!woke) break;
  }
  // A program that ended on a fatal finding leaves the others of its cluster waiting for it, perhaps: they end
  // with it rather than report a hang of their own (on a GPU a trap ends the whole launch).
  bool failed = std::any_of(programs_.begin(), programs_.end(), [](const auto& w) { return w->runner.ended(); });
  for (auto& w : programs_) {
    w->runner.finish(/*quietly=*/failed);
    w->endProgram();
  }
}

void Cluster::arrive(SimThread& t, uint32_t rank, bool relaxed, uint32_t site) {
  Worker& w = *programs_[rank];
  uint32_t& arrivedIn = arrivedIn_[size_t{rank} * threadsPerProgram() + t.index];
  if (arrivedIn)
    w.fail(t, FindingKind::BarrierDivergence, site,
           "barrier.cluster.arrive again before this thread waited for the phase it arrived in "
           "(barrier.cluster.wait)");
  arrivedIn = phase_ + 1;
  if (arrived_++ == 0) site_ = site;
  if (!relaxed && w.checks.tracksSharedMemory()) w.sharedChecker.release(t.index, released_);
  if (arrived_ + exited_ - arrivedThenExited_ == size() * threadsPerProgram()) completePhase(&t, rank);
}

void Cluster::wait(SimThread& t, uint32_t rank, uint32_t site) {
  Worker& w = *programs_[rank];
  uint32_t& arrivedIn = arrivedIn_[size_t{rank} * threadsPerProgram() + t.index];
  if (!arrivedIn)
    w.fail(t, FindingKind::BarrierDivergence, site,
           "barrier.cluster.wait without a barrier.cluster.arrive before it");
  if (arrivedIn - 1 == phase_) {  // its phase has not completed
    waiters_.push_back({rank, t.index});
    w.runner.park(t, site, ThreadState::AtClusterBarrier);
  }
  arrivedIn = 0;
  if (w.checks.tracksSharedMemory()) w.sharedChecker.acquire(t.index, completed_);
}

void Cluster::threadExited(const SimThread& t, uint32_t rank) {
  ++exited_;
  if (arrivedIn_[size_t{rank} * threadsPerProgram() + t.index] == phase_ + 1) ++arrivedThenExited_;
  if (arrived_ > 0 && arrived_ + exited_ - arrivedThenExited_ == size() * threadsPerProgram())
    completePhase(nullptr, rank);
}

void Cluster::completePhase(SimThread* running, uint32_t rank) {
  // Threads that exited without arriving: the phase completes without them, as bar.sync does, once reported.
  const uint32_t missing = exited_ - arrivedThenExited_;
  if (missing && !divergenceReported_) {
    divergenceReported_ = true;
    programs_[rank]->report(FindingKind::BarrierDivergence, running, site_, nullptr,
                            "the cluster barrier completed with " + std::to_string(missing) + " of the cluster's " +
                                std::to_string(size() * threadsPerProgram()) +
                                " threads missing: they had exited without arriving");
  }
  ++phase_;
  arrived_ = arrivedThenExited_ = 0;
  completed_ = std::move(released_);
  released_.clear();
  std::vector<Waiter> waiters = std::move(waiters_);
  waiters_.clear();
  for (const Waiter& waiter : waiters) programs_[waiter.rank]->runner.wake(waiter.thread);
}

std::string Cluster::barrierHang() const {
  // Where the threads that have not arrived are, per program of the cluster.
  std::map<std::string, uint32_t> places;
  const uint32_t threads = threadsPerProgram();
  for (uint32_t r = 0; r < size(); ++r) {
    const Worker& w = *programs_[r];
    for (const SimThread& t : w.runner.threads()) {
      if (arrivedIn_[size_t{r} * threads + t.index] == phase_ + 1) continue;
      std::string where = t.state == ThreadState::Exited ? "exited"
                          : t.state == ThreadState::AtClusterBarrier
                              ? "wait at the cluster barrier at " + w.describeSite(t.waitSite)
                              : "wait elsewhere (a barrier, collective or mbarrier at " + w.describeSite(t.waitSite) +
                                    ")";
      ++places["in the program of rank " + std::to_string(r) + " " + where];
    }
  }
  std::string message = "the cluster barrier never completes: " + std::to_string(arrived_) + " of the cluster's " +
                        std::to_string(size() * threads) + " threads arrived in phase " + std::to_string(phase_) +
                        "; of the others,";
  bool first = true;
  for (const auto& [place, count] : places) {
    message += std::string(first ? "" : ";") + " " + std::to_string(count) + " " + place;
    first = false;
  }
  return message;
}

}  // namespace tessera::sim
