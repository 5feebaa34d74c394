#include "jit/sim/runtime/SiteCounters.h"

#include <array>

namespace tessera::sim {

void SiteCounters::addRequest(uint32_t site, RequestStream stream, const LaneAccess* lanes, size_t count) {
  std::array<LaneAccess, 64> global, shared;
  size_t nGlobal = 0, nShared = 0;
  for (size_t i = 0; i < count; ++i) {
    if (lanes[i].space == MemorySpace::Shared) shared[nShared++] = lanes[i];
    else global[nGlobal++] = lanes[i];
  }
  Counters& c = counters_[site];
  SiteKind kind = (*sites_)[site].kind;
  if (nGlobal) addGlobal(c, kind, stream, global.data(), nGlobal);
  if (nShared) addShared(c, kind, stream, shared.data(), nShared);
}

void SiteCounters::addGlobal(Counters& c, SiteKind kind, RequestStream stream, const LaneAccess* lanes,
                             size_t count) {
  GlobalAccessCounters* target = nullptr;
  switch (kind) {
    case SiteKind::Load:
      target = &c.globalLoad;
      ++c.instructions(InstructionClass::GlobalLoad);
      break;
    case SiteKind::CpAsync:
      target = &c.globalLoad;
      ++c.instructions(InstructionClass::CpAsync);
      break;
    case SiteKind::Store:
      target = &c.globalStore;
      ++c.instructions(InstructionClass::GlobalStore);
      break;
    case SiteKind::AtomicRMW:
    case SiteKind::AtomicCAS:
      ++c.instructions(InstructionClass::GlobalAtomic);
      return;
    default:
      return;
  }
  GlobalRequestCost cost = globalRequestCost(lanes, count);
  ++target->requests;
  target->sectors += cost.sectors;
  target->requestedBytes += cost.requestedBytes;
  for (size_t i = 0; i < count; ++i) ++c.globalAccessWidths[accessWidthClass(lanes[i].bytes)];
}

void SiteCounters::addShared(Counters& c, SiteKind kind, RequestStream stream, const LaneAccess* lanes,
                             size_t count) {
  SharedAccessCounters* target = nullptr;
  switch (kind) {
    case SiteKind::Load:
      target = &c.sharedLoad;
      ++c.instructions(InstructionClass::SharedLoad);
      break;
    case SiteKind::LdMatrix:
      target = &c.sharedLoad;
      ++c.instructions(InstructionClass::LdMatrix);
      break;
    case SiteKind::Store:
      target = &c.sharedStore;
      ++c.instructions(InstructionClass::SharedStore);
      break;
    case SiteKind::StMatrix:
      target = &c.sharedStore;
      ++c.instructions(InstructionClass::StMatrix);
      break;
    case SiteKind::CpAsync:  // the destination side; the source side counted the instruction
      if (stream == RequestStream::AsyncCopyDestination) target = &c.sharedStore;
      break;
    case SiteKind::AtomicRMW:
    case SiteKind::AtomicCAS:
      ++c.instructions(InstructionClass::SharedAtomic);
      return;
    default:
      return;
  }
  if (!target) return;
  SharedRequestCost cost = sharedRequestCost(lanes, count);
  ++target->requests;
  target->wavefronts += cost.wavefronts;
  target->bankConflicts += cost.bankConflicts();
}

void SiteCounters::clear() {
  for (Counters& c : counters_) c = Counters{};
}

}  // namespace tessera::sim
