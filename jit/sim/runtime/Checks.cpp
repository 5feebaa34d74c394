#include "jit/sim/runtime/Checks.h"

#include "ir/Error.h"

namespace tessera::sim {

namespace {

bool* field(Checks& c, const std::string& name) {
  if (name == "memcheck") return &c.memcheck;
  if (name == "racecheck") return &c.racecheck;
  if (name == "initcheck") return &c.initcheck;
  if (name == "synccheck") return &c.synccheck;
  return nullptr;
}

}  // namespace

bool Checks::on(const std::string& name) const {
  Checks copy = *this;
  const bool* value = field(copy, name);
  if (!value)
    throw Error("sim: unknown check '" + name + "': expected memcheck, racecheck, initcheck or synccheck");
  return *value;
}

bool Checks::reports(FindingKind kind) const {
  switch (kind) {
    case FindingKind::Misaligned: return memcheck;
    case FindingKind::SharedRace:
    case FindingKind::PendingAsyncCopyRead:
    case FindingKind::WgmmaOperandOverwrite:
    case FindingKind::WgmmaRegisterRead: return racecheck;
    case FindingKind::UninitializedSharedRead: return initcheck;
    case FindingKind::BarrierDivergence:
    case FindingKind::ShuffleOutsideMask:
    case FindingKind::WgmmaMissingFence: return synccheck;
    default: return true;  // faults, hangs, mismatched collectives (the program ends), assertions, invalid calls
  }
}

std::string Checks::str() const {
  if (*this == Checks(true)) return "all";
  if (*this == Checks(false)) return "none";
  std::string s;
  for (const char* name : kCheckNames)
    if (on(name)) s += std::string(s.empty() ? "" : ",") + name;
  return s;
}

Checks Checks::parse(const std::string& text) {
  if (text == "all") return Checks(true);
  Checks c(false);
  if (text == "none") return c;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string name = text.substr(start, end - start);
    bool* on = field(c, name);
    if (!on)
      throw Error("sim: unknown check '" + name + "' in '" + text +
                  "': expected all, none, or a comma-separated list of memcheck, racecheck, initcheck, synccheck");
    *on = true;
    start = end + 1;
  }
  return c;
}

}  // namespace tessera::sim
