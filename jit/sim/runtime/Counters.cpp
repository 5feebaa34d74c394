#include "jit/sim/runtime/Counters.h"

namespace tessera::sim {

double GlobalAccessCounters::efficiency() const {
  return sectors ? static_cast<double>(requestedBytes) / static_cast<double>(sectors * 32) : 1.0;
}

double GlobalAccessCounters::sectorsPerRequest() const {
  return requests ? static_cast<double>(sectors) / static_cast<double>(requests) : 0.0;
}

const char* instructionClassName(InstructionClass c) {
  switch (c) {
    case InstructionClass::GlobalLoad: return "global load";
    case InstructionClass::GlobalStore: return "global store";
    case InstructionClass::GlobalAtomic: return "global atomic";
    case InstructionClass::SharedLoad: return "shared load";
    case InstructionClass::SharedStore: return "shared store";
    case InstructionClass::SharedAtomic: return "shared atomic";
    case InstructionClass::CpAsync: return "cp.async";
    case InstructionClass::LdMatrix: return "ldmatrix";
    case InstructionClass::StMatrix: return "stmatrix";
    case InstructionClass::Mma: return "mma";
    case InstructionClass::Shuffle: return "shuffle";
    case InstructionClass::Vote: return "vote";
    case InstructionClass::WarpSync: return "warp sync";
  }
  return "?";
}

size_t accessWidthClass(uint32_t bytes) {
  switch (bytes) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    case 16: return 4;
    default: return 5;
  }
}

const char* accessWidthName(size_t widthClass) {
  static const char* const names[kAccessWidthClasses] = {"1B", "2B", "4B", "8B", "16B", "other"};
  return widthClass < kAccessWidthClasses ? names[widthClass] : "?";
}

namespace {
void add(GlobalAccessCounters& a, const GlobalAccessCounters& b) {
  a.requests += b.requests;
  a.sectors += b.sectors;
  a.requestedBytes += b.requestedBytes;
}
void add(SharedAccessCounters& a, const SharedAccessCounters& b) {
  a.requests += b.requests;
  a.wavefronts += b.wavefronts;
  a.bankConflicts += b.bankConflicts;
}
}  // namespace

bool Counters::empty() const {
  if (globalLoad.requests || globalStore.requests || sharedLoad.requests || sharedStore.requests || barriers)
    return false;
  for (uint64_t n : warpInstructions)
    if (n) return false;
  return true;
}

Counters& Counters::operator+=(const Counters& o) {
  add(globalLoad, o.globalLoad);
  add(globalStore, o.globalStore);
  add(sharedLoad, o.sharedLoad);
  add(sharedStore, o.sharedStore);
  for (size_t i = 0; i < kAccessWidthClasses; ++i) globalAccessWidths[i] += o.globalAccessWidths[i];
  barriers += o.barriers;
  for (size_t i = 0; i < kInstructionClassCount; ++i) warpInstructions[i] += o.warpInstructions[i];
  return *this;
}

}  // namespace tessera::sim
