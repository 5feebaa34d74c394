// Groups the lanes' accesses into warp-level requests for the counters. A request is the k-th execution of a site
// by the lanes of one warp since the last barrier (exact for convergent code). Fibers run one lane after another,
// so the lanes of a request arrive at different times: each (warp, site) keeps a small ring of open requests.
// A request completes when every live lane of its warp contributed, or at the next barrier / the program's end
// (flush). A lane running more than the ring's capacity ahead of its warp at one site must first let the others
// catch up (tryRecord fails: yield, then record); if they still do not, its oldest open request completes as it
// is, and a lane arriving later for it makes a request of its own.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "jit/sim/runtime/AccessCost.h"
#include "jit/sim/runtime/SiteCounters.h"

namespace tessera::sim {

class RequestTracker {
 public:
  RequestTracker(uint32_t numSites, uint32_t numWarps, uint32_t warpSize, SiteCounters& sink);

  // Records the access of `access.lane` of `warp`; `liveLanes`: the warp's lanes that have not exited.
  // False (nothing recorded) when the lane is too far ahead of the others at this site.
  bool tryRecord(uint32_t warp, uint32_t site, RequestStream stream, const LaneAccess& access, uint64_t liveLanes);
  // Records it even so, completing the oldest open request first if need be.
  void record(uint32_t warp, uint32_t site, RequestStream stream, const LaneAccess& access, uint64_t liveLanes);
  // Every open request becomes a request as it is, and lane counts restart (barriers, the end of a program).
  void flush();
  // How many times `lane` of `warp` executed `site` since the last flush: the k of its next access there.
  uint32_t executions(uint32_t warp, uint32_t site, RequestStream stream, uint32_t lane) {
    return queue(warp, site, stream).executions[lane];
  }

  static constexpr uint32_t kMaxOpenRequests = 64;

 private:
  struct Slot {
    uint32_t execution = 0;  // k
    bool open = false;
    uint64_t lanes = 0;      // which lanes contributed
  };
  struct Queue {
    std::vector<uint32_t> executions;  // per lane: how many times it executed the site since the last flush
    std::vector<Slot> slots;           // ring indexed by k modulo its size
    std::vector<LaneAccess> accesses;  // slots.size() x warpSize
    uint32_t oldest = 0;               // k of the oldest open request
    uint32_t next = 0;                 // one past the highest k any lane reached
    bool listed = false;               // in dirty_
  };

  Queue& queue(uint32_t warp, uint32_t site, RequestStream stream);
  bool place(Queue& q, uint32_t index, const LaneAccess& access, uint64_t liveLanes);
  // The lane's request was completed without it (it was too far behind): its access is a request of its own.
  bool recordLate(Queue& q, const LaneAccess& access);
  std::pair<uint32_t, RequestStream> siteOf(const Queue& q) const;
  void grow(Queue& q);
  void complete(Queue& q, uint32_t index, Slot& slot);
  void advanceOldest(Queue& q);

  uint32_t numWarps_, warpSize_;
  SiteCounters& sink_;
  std::vector<Queue> queues_;     // [(site * kRequestStreams + stream) * numWarps + warp]
  std::vector<uint32_t> dirty_;   // queues with something since the last flush
};

}  // namespace tessera::sim
