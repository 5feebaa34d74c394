#include "jit/sim/runtime/ProgramRunner.h"

#include <exception>
#include <string>

namespace tessera::sim {

namespace detail {
constinit thread_local SimThread* tCurrentThread = nullptr;
}

const char* collectiveName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::WarpSync: return "warp sync";
    case CollectiveKind::Shuffle: return "shuffle";
    case CollectiveKind::Vote: return "vote";
    case CollectiveKind::Bpermute: return "ds_bpermute";
    case CollectiveKind::LdMatrix: return "ldmatrix";
    case CollectiveKind::StMatrix: return "stmatrix";
    case CollectiveKind::Mma: return "mma";
    case CollectiveKind::WgmmaFence: return "wgmma.fence";
    case CollectiveKind::WgmmaCommit: return "wgmma.commit_group";
    case CollectiveKind::WgmmaWait: return "wgmma.wait_group";
    case CollectiveKind::WgmmaMma: return "wgmma.mma_async";
  }
  return "collective";
}

ProgramRunner::ProgramRunner(uint32_t warpSize, uint32_t numWarps, size_t stackBytes, Worker* worker)
    : warpSize_(warpSize),
      numWarps_(numWarps),
      fullWarpMask_(warpSize >= 64 ? ~uint64_t{0} : (uint64_t{1} << warpSize) - 1),
      threads_(size_t{warpSize} * numWarps),
      ready_(threads_.size()),
      liveLanes_(numWarps),
      pending_(numWarps) {
  fibers_.reserve(threads_.size());
  starts_.reserve(threads_.size());
  barrierWaiters_.reserve(threads_.size());
  for (uint32_t i = 0; i < threads_.size(); ++i) {
    SimThread& t = threads_[i];
    t.index = i;
    t.warp = i / warpSize;
    t.lane = i % warpSize;
    t.worker = worker;
    fibers_.push_back(std::make_unique<Fiber>(stackBytes));
    starts_.push_back({this, i});
  }
}

void ProgramRunner::run(Body body, void* context, Events& events) {
  start(body, context, events);
  do runReady();
  while (waiting() && events.completeAsynchronousWork() && readyCount_ > 0);
  finish();
}

void ProgramRunner::start(Body body, void* context, Events& events) {
  body_ = body;
  bodyContext_ = context;
  events_ = &events;
  ended_ = false;
  live_ = numThreads();
  barrierArrived_ = 0;
  barrierWaiters_.clear();
  for (NamedBarrier& n : named_) {
    n.expected = 0;
    n.waiters.clear();
    n.arrivals = 0;
  }
  readyHead_ = readyCount_ = 0;
  for (uint32_t w = 0; w < numWarps_; ++w) {
    liveLanes_[w] = fullWarpMask_;
    pending_[w].clear();
  }
  for (SimThread& t : threads_) {
    t.state = ThreadState::Ready;
    t.warpSyncGeneration = 0;
    t.arrival = {};
    fibers_[t.index]->arm(&ProgramRunner::fiberMain, &starts_[t.index]);
    makeReady(t.index);
  }
}

void ProgramRunner::runReady() {
  while (!ended_ && readyCount_ > 0) {
    uint32_t next = ready_[readyHead_];
    readyHead_ = (readyHead_ + 1) % ready_.size();
    --readyCount_;
    threads_[next].state = ThreadState::Running;
    setCurrentThread(&threads_[next]);
    fibers_[next]->resumeFrom(host_);
  }
  setCurrentThread(nullptr);
}

void ProgramRunner::finish(bool quietly) {
  if (waiting()) {
    if (!quietly) events_->deadlock();
    ended_ = true;
  }
  // Every thread exited: a barrier with arrivals is one that some arrival was not matched by a wait.
  if (!ended_)
    for (uint32_t id = 0; id < kNamedBarriers; ++id)
      if (named_[id].arrivals) events_->namedBarrierLeftArrived(id, named_[id]);
  events_ = nullptr;
}

void ProgramRunner::fiberMain(void* start) {
  auto* s = static_cast<FiberStart*>(start);
  s->runner->threadMain(s->runner->threads_[s->index]);
}

void ProgramRunner::threadMain(SimThread& t) {
  // Nothing may unwind past this frame (there is no caller to unwind into): a failure becomes an event. The
  // message is copied out so that the program ends outside the handler.
  std::string failure;
  bool failed = false;
  try {
    body_(bodyContext_);
  } catch (const std::exception& e) {
    failure = e.what();
    failed = true;
  } catch (...) {
    failure = "an exception that is not a std::exception";
    failed = true;
  }
  if (failed) {
    events_->threadFailed(t, failure.c_str());
    failure.clear();
    failure.shrink_to_fit();
    endProgram(t);
  }
  exitThread(t);
}

void ProgramRunner::exitThread(SimThread& t) {
  t.state = ThreadState::Exited;
  --live_;
  liveLanes_[t.warp] &= ~(uint64_t{1} << t.lane);
  // The threads still waiting at a barrier may be all that is left.
  if (barrierArrived_ > 0 && barrierArrived_ == live_) releaseBarrier(t);
  events_->threadExited(t);
  switchAway(t, /*exiting=*/true);
  __builtin_unreachable();  // an exited thread is never resumed
}

void ProgramRunner::endProgram(SimThread& t) {
  ended_ = true;
  setCurrentThread(nullptr);
  fibers_[t.index]->exitTo(host_);
  __builtin_unreachable();  // the host context never resumes a fiber of an ended program
}

void ProgramRunner::makeReady(uint32_t index) {
  ready_[(readyHead_ + readyCount_) % ready_.size()] = index;
  ++readyCount_;
  threads_[index].state = ThreadState::Ready;
}

void ProgramRunner::switchAway(SimThread& t, bool exiting) {
  Fiber& self = *fibers_[t.index];
  if (readyCount_ == 0) {
    setCurrentThread(nullptr);
    if (exiting) self.exitTo(host_);
    else self.suspendTo(host_);
    return;
  }
  uint32_t next = ready_[readyHead_];
  readyHead_ = (readyHead_ + 1) % ready_.size();
  --readyCount_;
  SimThread& n = threads_[next];
  n.state = ThreadState::Running;
  if (next == t.index) return;  // an exiting thread is in no queue
  setCurrentThread(&n);
  if (exiting) self.exitTo(*fibers_[next]);
  else self.suspendTo(*fibers_[next]);
}

void ProgramRunner::yield(SimThread& t) {
  if (readyCount_ == 0) return;
  makeReady(t.index);
  switchAway(t, /*exiting=*/false);
}

void ProgramRunner::park(SimThread& t, uint32_t site, ThreadState state) {
  t.state = state;
  t.waitSite = site;
  switchAway(t, /*exiting=*/false);
}

void ProgramRunner::barrier(SimThread& t, uint32_t site) {
  t.state = ThreadState::AtBarrier;
  t.waitSite = site;
  if (barrierArrived_ == 0) {
    barrierSite_ = site;
    barrierMixedSites_ = false;
  } else if (site != barrierSite_) {
    barrierMixedSites_ = true;
  }
  barrierWaiters_.push_back(t.index);
  if (++barrierArrived_ == live_) {
    releaseBarrier(t);
    return;
  }
  switchAway(t, /*exiting=*/false);
}

void ProgramRunner::namedBarrier(SimThread& t, uint32_t id, uint32_t count, uint32_t site) {
  NamedBarrier& n = named_[id];
  t.state = ThreadState::AtBarrier;
  t.waitSite = site;
  if (n.expected == 0) {
    n.expected = count;
    n.site = site;
  }
  n.waiters.push_back(t.index);
  if (n.waiters.size() + n.arrivals < n.expected) {
    switchAway(t, /*exiting=*/false);
    return;  // resumed: the last thread to arrive released it
  }
  completeNamedBarrier(t, id);
}

void ProgramRunner::namedBarrierArrive(SimThread& t, uint32_t id, uint32_t count, uint32_t site) {
  NamedBarrier& n = named_[id];
  if (n.expected == 0) {
    n.expected = count;
    n.site = site;
  }
  if (n.arrivals++ == 0) n.arriver = t.index;
  events_->namedBarrierArrived(id, t.index);
  if (n.waiters.size() + n.arrivals >= n.expected) completeNamedBarrier(t, id);
}

void ProgramRunner::completeNamedBarrier(SimThread& last, uint32_t id) {
  NamedBarrier& n = named_[id];
  // Reset before the event and the wake-ups: a released thread may arrive again before the others run.
  std::vector<uint32_t> waited = std::move(n.waiters);
  n.waiters.clear();
  n.expected = 0;
  n.arrivals = 0;
  events_->namedBarrierReleased(id, waited, n.site);
  for (uint32_t index : waited) {
    if (index == last.index) threads_[index].state = ThreadState::Running;
    else makeReady(index);
  }
}

void ProgramRunner::releaseBarrier(const SimThread& releaser) {
  events_->barrierReleased(barrierSite_, live_ < numThreads(), barrierMixedSites_);
  for (uint32_t index : barrierWaiters_) {
    if (index == releaser.index) threads_[index].state = ThreadState::Running;
    else makeReady(index);
  }
  barrierWaiters_.clear();
  barrierArrived_ = 0;
}

PendingCollective& ProgramRunner::arrive(SimThread& t, CollectiveKind kind, uint64_t mask, uint32_t site) {
  std::vector<PendingCollective>& pending = pending_[t.warp];
  PendingCollective* joined = nullptr;
  for (PendingCollective& p : pending) {
    if (!(p.mask & mask)) continue;  // a collective of other lanes of this warp
    if (p.kind != kind || p.mask != mask || p.site != site) {
      PendingCollective other = p;
      events_->collectiveMismatch(t, kind, mask, site, other);
      endProgram(t);
    }
    joined = &p;
    break;
  }
  if (!joined) joined = &pending.emplace_back(PendingCollective{kind, site, mask, 0});
  joined->arrived |= uint64_t{1} << t.lane;
  t.state = ThreadState::AtCollective;
  t.waitSite = site;
  return *joined;
}

void ProgramRunner::wake(uint32_t firstWarp, uint32_t warps, uint64_t mask, const SimThread& running) {
  for (uint32_t w = firstWarp; w < firstWarp + warps; ++w)
    for (uint32_t l = 0; l < warpSize_; ++l) {
      const uint32_t index = w * warpSize_ + l;
      if ((mask >> l & 1) && index != running.index) makeReady(index);
    }
}

void ProgramRunner::collective(SimThread& t, CollectiveKind kind, uint64_t mask, uint32_t site) {
  std::vector<PendingCollective>& pending = pending_[t.warp];
  PendingCollective& joined = arrive(t, kind, mask, site);
  if (joined.arrived != mask) {
    switchAway(t, /*exiting=*/false);
    return;  // resumed: the last lane to arrive resolved it
  }
  PendingCollective done = joined;
  pending.erase(pending.begin() + (&joined - pending.data()));
  events_->resolveCollective(t.warp, done);
  t.state = ThreadState::Running;
  wake(t.warp, 1, done.mask, t);
}

void ProgramRunner::groupCollective(SimThread& t, CollectiveKind kind, uint32_t warps, uint32_t site) {
  PendingCollective& joined = arrive(t, kind, fullWarpMask_, site);
  joined.warps = warps;
  const uint32_t first = t.warp / warps * warps;
  // The group completes when each of its warps has a complete part at the same collective.
  auto completePart = [&](uint32_t w) -> PendingCollective* {
    for (PendingCollective& p : pending_[w])
      if (p.kind == kind && p.site == site && p.warps == warps && p.arrived == fullWarpMask_) return &p;
    return nullptr;
  };
  for (uint32_t w = first; w < first + warps; ++w)
    if (!completePart(w)) {
      switchAway(t, /*exiting=*/false);
      return;  // resumed: the last thread of the group to arrive resolved it
    }
  PendingCollective done = joined;
  for (uint32_t w = first; w < first + warps; ++w) {
    PendingCollective* part = completePart(w);
    pending_[w].erase(pending_[w].begin() + (part - pending_[w].data()));
  }
  events_->resolveCollective(first, done);
  t.state = ThreadState::Running;
  wake(first, warps, fullWarpMask_, t);
}

}  // namespace tessera::sim
