// Which of the emulator's checks a launch runs, named and grouped like compute-sanitizer's tools. Each can be
// turned off alone; all are on by default. Out-of-bounds accesses (global, shared) and collectives that can never
// complete or whose lanes disagree are reported whatever the selection: the emulator cannot perform such an
// access, nor finish such a program, any more than a GPU could.
#pragma once

#include <string>

#include "jit/sim/runtime/Finding.h"

namespace tessera::sim {

struct Checks {
  bool memcheck = true;   // misaligned accesses (for their width, or the alignment the instruction promised)
  bool racecheck = true;  // shared-memory races; reads of shared bytes a cp.async has not landed yet; wgmma
                          // operands overwritten and accumulators read before their wait_group
  bool initcheck = true;  // reads of shared bytes not written in this program
  bool synccheck = true;  // barrier divergence, shuffles reading lanes outside their mask, wgmma without fence

  Checks() = default;
  Checks(bool all) : memcheck(all), racecheck(all), initcheck(all), synccheck(all) {}  // NOLINT: on/off together
  bool operator==(const Checks&) const = default;

  // Whether the shared-memory shadow (writers, readers, initialization) must be kept.
  bool tracksSharedMemory() const { return racecheck || initcheck; }
  // Whether the check `name` (one of kCheckNames) is on. Throws tessera::Error for another name.
  bool on(const std::string& name) const;
  // Whether a finding of `kind` is reported under this selection.
  bool reports(FindingKind kind) const;
  // "all", "none", or the names of those on, comma-separated ("memcheck,initcheck").
  std::string str() const;
  // The inverse of str(). Throws tessera::Error naming an unknown check.
  static Checks parse(const std::string& text);
};

// The four names, in str()'s order.
inline constexpr const char* kCheckNames[] = {"memcheck", "racecheck", "initcheck", "synccheck"};

}  // namespace tessera::sim
