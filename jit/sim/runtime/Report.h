// The outcome of an emulated launch: findings, counters (for the launch and per tile-IR op) and the kernel's
// printed output, as plain data, plus the text forms that errors and `--report` print.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "jit/sim/runtime/Counters.h"
#include "jit/sim/runtime/Finding.h"

namespace tessera::sim {

// The counters of one tile-IR op (the sites the site table attributes to the same op name and source location).
struct OpCounters {
  std::string op;  // "" for sites no op claims
  std::string file;
  uint32_t line = 0, column = 0;
  Counters counters;
};

struct Report {
  std::string kernel;
  std::array<uint32_t, 3> grid{};
  std::array<uint32_t, 3> clusterDims{1, 1, 1};  // the programs of a cluster (Program::clusterDims)
  std::vector<Finding> findings;                            // the first of each kind, in program order
  std::array<uint64_t, kFindingKindCount> findingCounts{};  // every finding, kept or not
  Counters total;
  std::vector<OpCounters> ops;  // in site order of their first site
  std::string output;           // what the kernel printed, program by program

  uint64_t findingCount() const;
  uint64_t findingCount(FindingKind kind) const { return findingCounts[static_cast<size_t>(kind)]; }
  bool failed() const { return findingCount() > 0; }

  std::string countersTable() const;  // one row per op, then the totals
  std::string findingsText() const;   // the kept findings, then counts of those not kept
  std::string str() const;            // both
  // Throws tessera::Error with the findings when there are any.
  void throwIfFailed() const;
};

}  // namespace tessera::sim
