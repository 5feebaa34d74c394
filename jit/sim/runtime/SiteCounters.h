// Counters per site (instruction of the kernel), filled as requests complete; the report sums them per tile-IR
// op and per launch. Which counter a request feeds follows from its site's kind and the space its lanes hit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "jit/sim/SimABI.h"
#include "jit/sim/runtime/AccessCost.h"
#include "jit/sim/runtime/Counters.h"

namespace tessera::sim {

// The request streams of a site: cp.async sites have two (the global read, then the shared write).
enum class RequestStream : uint32_t { Primary = 0, AsyncCopyDestination = 1 };
inline constexpr uint32_t kRequestStreams = 2;

class SiteCounters {
 public:
  explicit SiteCounters(const SiteTable& sites) : sites_(&sites), counters_(sites.size()) {}

  // A complete request: the lanes of one warp executing `site` once (lanes in any order, global and shared
  // lanes mixed when the site is a generic access).
  void addRequest(uint32_t site, RequestStream stream, const LaneAccess* lanes, size_t count);
  void addInstruction(uint32_t site, InstructionClass c) { ++counters_[site].instructions(c); }
  void addBarrier(uint32_t site) { ++counters_[site].barriers; }

  const std::vector<Counters>& perSite() const { return counters_; }
  void clear();

 private:
  void addGlobal(Counters& c, SiteKind kind, RequestStream stream, const LaneAccess* lanes, size_t count);
  void addShared(Counters& c, SiteKind kind, RequestStream stream, const LaneAccess* lanes, size_t count);

  const SiteTable* sites_;
  std::vector<Counters> counters_;
};

}  // namespace tessera::sim
