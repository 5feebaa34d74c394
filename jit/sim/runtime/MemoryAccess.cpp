#include "jit/sim/runtime/MemoryAccess.h"

#include <cstring>
#include <string>

#include "jit/sim/runtime/HostAtomics.h"
#include "jit/sim/runtime/Worker.h"

namespace tessera::sim {

namespace {

enum class Target : uint8_t { Global, Shared, RuntimeBlock, Stack, OutOfBoundsGlobal, OutOfBoundsShared };

struct Resolved {
  Target target;
  uint64_t sharedOffset;  // Shared and OutOfBoundsShared
};

Resolved resolve(const Worker& w, const SimThread& t, uint64_t address, uint64_t bytes, AddressSpace space) {
  const uint64_t base = reinterpret_cast<uint64_t>(w.sharedBase());
  const uint64_t size = w.sharedBytes();
  const uint64_t offset = address - base;
  const bool insideShared = address >= base && offset <= size && bytes <= size - offset;
  if (space == AddressSpace::Shared) return {insideShared ? Target::Shared : Target::OutOfBoundsShared, offset};
  if (space == AddressSpace::Generic && address >= base && offset < size)
    return {insideShared ? Target::Shared : Target::OutOfBoundsShared, offset};
  switch (w.launch.global.find(address, bytes)) {
    case RegionKind::Allocation: return {Target::Global, 0};
    case RegionKind::RuntimeBlock: return {Target::RuntimeBlock, 0};
    case RegionKind::None: break;
  }
  if (space == AddressSpace::Generic && w.runner.stackOf(t).contains(address, bytes)) return {Target::Stack, 0};
  return {Target::OutOfBoundsGlobal, 0};
}

const char* spaceName(AddressSpace space) {
  switch (space) {
    case AddressSpace::Global: return "global";
    case AddressSpace::Shared: return "shared";
    case AddressSpace::Constant: return "constant";
    case AddressSpace::Generic: return "generic";
  }
  return "generic";
}

AccessDescription describe(const Resolved& r, uint64_t address, uint64_t bytes, AddressSpace space, bool write) {
  bool shared = r.target == Target::Shared || r.target == Target::OutOfBoundsShared;
  return {shared ? r.sharedOffset : address, bytes, shared ? "shared" : spaceName(space), write};
}

// Reports what makes the access impossible (out of bounds) or wrong (misaligned); true when it can be performed.
bool admissible(Worker& w, const SimThread& t, const Resolved& r, uint64_t address, uint64_t bytes, uint32_t align,
                AddressSpace space, uint32_t site, bool write) {
  if (r.target == Target::OutOfBoundsGlobal) {
    AccessDescription d = describe(r, address, bytes, space, write);
    w.report(FindingKind::GlobalOutOfBounds, &t, site, &d, "outside every allocation of the launch");
    return false;
  }
  if (r.target == Target::OutOfBoundsShared) {
    AccessDescription d = describe(r, address, bytes, space, write);
    w.report(FindingKind::SharedOutOfBounds, &t, site, &d,
             "beyond the kernel's " + std::to_string(w.sharedBytes()) + " bytes of shared memory");
    return false;
  }
  if (w.checks.memcheck && (r.target == Target::Global || r.target == Target::Shared)) {
    uint64_t at = r.target == Target::Shared ? r.sharedOffset : address;
    if (GlobalMemoryChecker::misaligned(at, bytes, align)) {
      AccessDescription d = describe(r, address, bytes, space, write);
      bool natural = GlobalMemoryChecker::misaligned(at, bytes, 0);
      w.report(FindingKind::Misaligned, &t, site, &d,
               natural ? "not a multiple of its width"
                       : "not a multiple of the " + std::to_string(align) + "-byte alignment the instruction promises");
    }
  }
  return true;
}

// The lane's part of the warp request (global and shared memory only).
void track(Worker& w, SimThread& t, uint32_t site, RequestStream stream, const Resolved& r, uint64_t address,
           uint32_t bytes) {
  if (r.target != Target::Global && r.target != Target::Shared) return;
  bool shared = r.target == Target::Shared;
  LaneAccess a{shared ? r.sharedOffset : address, bytes, static_cast<uint16_t>(t.lane),
               shared ? MemorySpace::Shared : MemorySpace::Global};
  if (w.requests.tryRecord(t.warp, site, stream, a, w.runner.liveLanes(t.warp))) return;
  w.runner.yield(t);  // let the warp's other lanes catch up with this one
  w.requests.record(t.warp, site, stream, a, w.runner.liveLanes(t.warp));
}

}  // namespace

void reportSharedIssues(Worker& w, const SimThread& t, const SharedAccessIssues& issues, uint64_t offset,
                        uint64_t bytes, uint32_t site, bool write) {
  if (!issues.any()) return;
  AccessDescription d{offset, bytes, "shared", write};
  if (issues.race) {
    std::string other = issues.manyReaders ? "reads by several threads (one at " + w.describeSite(issues.otherSite) + ")"
                                           : std::string(issues.otherWrote ? "a write" : "a read") + " by " +
                                                 w.describeThread(issues.otherProgram, issues.otherThread) + " at " +
                                                 w.describeSite(issues.otherSite);
    w.report(FindingKind::SharedRace, &t, site, &d,
             "byte " + std::to_string(issues.raceOffset) + " conflicts with " + other + ", with no barrier between");
  }
  if (issues.uninitialized)
    w.report(FindingKind::UninitializedSharedRead, &t, site, &d,
             "byte " + std::to_string(issues.uninitializedOffset) + " was not written in this program");
  if (issues.pending)
    w.report(FindingKind::PendingAsyncCopyRead, &t, site, &d,
             "byte " + std::to_string(issues.pendingOffset) +
                 " is the destination of an async copy that has not landed (a cp.async not waited for, or a bulk "
                 "copy whose mbarrier phase has not completed)");
  if (issues.operandOverwrite)
    w.report(FindingKind::WgmmaOperandOverwrite, &t, site, &d,
             "byte " + std::to_string(issues.operandOffset) +
                 " is an operand of a wgmma.mma_async whose wgmma.wait_group has not come yet");
}

void loadMemory(SimThread& t, void* dst, uint64_t address, uint32_t bytes, uint32_t siteId) {
  Worker& w = *t.worker;
  const Site& s = w.site(t, siteId);
  Resolved r = resolve(w, t, address, bytes, s.space);
  if (!admissible(w, t, r, address, bytes, s.align, s.space, siteId, false)) {
    std::memset(dst, 0, bytes);
    return;
  }
  if (r.target == Target::Shared && w.checks.tracksSharedMemory())
    reportSharedIssues(w, t, w.sharedChecker.read(w.accessor(t), static_cast<uint32_t>(r.sharedOffset), bytes, siteId),
                       r.sharedOffset, bytes, siteId, false);
  std::memcpy(dst, reinterpret_cast<const void*>(address), bytes);
  track(w, t, siteId, RequestStream::Primary, r, address, bytes);
}

void storeMemory(SimThread& t, uint64_t address, const void* src, uint32_t bytes, uint32_t siteId) {
  Worker& w = *t.worker;
  const Site& s = w.site(t, siteId);
  Resolved r = resolve(w, t, address, bytes, s.space);
  if (!admissible(w, t, r, address, bytes, s.align, s.space, siteId, true)) return;
  if (r.target == Target::Shared && w.checks.tracksSharedMemory()) {
    SharedAccessor who = w.accessor(t);
    who.execution = w.requests.executions(t.warp, siteId, RequestStream::Primary, t.lane);
    const bool unchanged = std::memcmp(reinterpret_cast<const void*>(address), src, bytes) == 0;
    reportSharedIssues(w, t, w.sharedChecker.write(who, static_cast<uint32_t>(r.sharedOffset), bytes, siteId, unchanged),
                       r.sharedOffset, bytes, siteId, true);
  }
  std::memcpy(reinterpret_cast<void*>(address), src, bytes);
  track(w, t, siteId, RequestStream::Primary, r, address, bytes);
}

namespace {

// Shared by both kinds of atomics: resolves and checks; null when the atomic must not be performed.
void* atomicTarget(Worker& w, SimThread& t, const Site& s, Resolved& r, uint64_t address, uint32_t bytes,
                   uint32_t siteId) {
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
    w.fail(t, FindingKind::InvalidCall, siteId,
           [&] { return "an atomic of " + std::to_string(bytes) + " bytes (1, 2, 4 or 8)"; });
  r = resolve(w, t, address, bytes, s.space);
  if (!admissible(w, t, r, address, bytes, s.align, s.space, siteId, true)) return nullptr;
  if (address % bytes) {  // a host atomic needs natural alignment (reported by admissible under memcheck)
    if (!w.checks.memcheck) {
      AccessDescription d = describe(r, address, bytes, s.space, true);
      w.reportAlways(FindingKind::Misaligned, &t, siteId, &d, "an atomic must be aligned to its width");
    }
    return nullptr;
  }
  if (r.target == Target::Shared && w.checks.tracksSharedMemory())
    reportSharedIssues(w, t, w.sharedChecker.atomic(w.accessor(t), static_cast<uint32_t>(r.sharedOffset), bytes, siteId),
                       r.sharedOffset, bytes, siteId, true);
  return reinterpret_cast<void*>(address);
}

}  // namespace

namespace {

// Resolves, checks and performs one atomic (`perform` gets the host address), then records it.
template <class Perform>
uint64_t atomicAccess(SimThread& t, uint64_t address, uint32_t bytes, uint32_t siteId, Perform perform) {
  Worker& w = *t.worker;
  const Site& s = w.site(t, siteId);
  Resolved r{};
  void* p = atomicTarget(w, t, s, r, address, bytes, siteId);
  if (!p) return 0;
  uint64_t old = perform(w, p);
  track(w, t, siteId, RequestStream::Primary, r, address, bytes);
  return old;
}

}  // namespace

uint64_t atomicRmwMemory(SimThread& t, uint32_t op, uint64_t address, uint64_t value, uint32_t bytes,
                         uint32_t siteId) {
  return atomicAccess(t, address, bytes, siteId, [&](Worker& w, void* p) {
    std::optional<uint64_t> old = hostAtomicRmw(op, p, value, bytes);
    if (!old)
      w.fail(t, FindingKind::InvalidCall, siteId, [&] {
        return "atomic operation " + std::to_string(op) + " does not exist on " + std::to_string(bytes) + " bytes";
      });
    return *old;
  });
}

uint64_t atomicCasMemory(SimThread& t, uint64_t address, uint64_t expected, uint64_t desired, uint32_t bytes,
                         uint32_t siteId) {
  return atomicAccess(t, address, bytes, siteId, [&](Worker&, void* p) {
    return *hostAtomicCas(p, expected, desired, bytes);  // atomicTarget checked the width
  });
}

void memsetMemory(SimThread& t, uint64_t address, uint32_t value, uint64_t bytes, uint32_t siteId) {
  Worker& w = *t.worker;
  const Site& s = w.site(t, siteId);
  if (bytes == 0) return;
  Resolved r = resolve(w, t, address, bytes, s.space);
  if (!admissible(w, t, r, address, bytes, s.align, s.space, siteId, true)) return;
  if (r.target == Target::Shared && w.checks.tracksSharedMemory())
    reportSharedIssues(w, t,
                       w.sharedChecker.write(w.accessor(t), static_cast<uint32_t>(r.sharedOffset),
                                             static_cast<uint32_t>(bytes), siteId),
                       r.sharedOffset, bytes, siteId, true);
  std::memset(reinterpret_cast<void*>(address), static_cast<int>(value & 0xFF), bytes);
}

void memcpyMemory(SimThread& t, uint64_t dst, uint64_t src, uint64_t bytes, uint32_t siteId) {
  Worker& w = *t.worker;
  const Site& s = w.site(t, siteId);
  if (bytes == 0) return;
  Resolved from = resolve(w, t, src, bytes, AddressSpace::Generic);
  Resolved to = resolve(w, t, dst, bytes, AddressSpace::Generic);
  bool readable = admissible(w, t, from, src, bytes, s.align, AddressSpace::Generic, siteId, false);
  bool writable = admissible(w, t, to, dst, bytes, s.align, AddressSpace::Generic, siteId, true);
  if (!readable || !writable) return;
  if (w.checks.tracksSharedMemory() && from.target == Target::Shared)
    reportSharedIssues(w, t,
                       w.sharedChecker.read(w.accessor(t), static_cast<uint32_t>(from.sharedOffset),
                                            static_cast<uint32_t>(bytes), siteId),
                       from.sharedOffset, bytes, siteId, false);
  if (w.checks.tracksSharedMemory() && to.target == Target::Shared)
    reportSharedIssues(w, t,
                       w.sharedChecker.write(w.accessor(t), static_cast<uint32_t>(to.sharedOffset),
                                             static_cast<uint32_t>(bytes), siteId),
                       to.sharedOffset, bytes, siteId, true);
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
}

void asyncCopy(SimThread& t, uint64_t sharedAddress, uint64_t globalAddress, uint32_t bytes, uint32_t sourceBytes,
               uint32_t siteId) {
  Worker& w = *t.worker;
  w.site(t, siteId);
  if ((bytes != 4 && bytes != 8 && bytes != 16) || sourceBytes > bytes)
    w.fail(t, FindingKind::InvalidCall, siteId, [&] {
      return "cp.async of " + std::to_string(bytes) + " bytes reading " + std::to_string(sourceBytes) +
             " (4, 8 or 16 bytes, reading at most as many)";
    });
  Resolved to = resolve(w, t, sharedAddress, bytes, AddressSpace::Shared);
  if (!admissible(w, t, to, sharedAddress, bytes, bytes, AddressSpace::Shared, siteId, true)) return;
  Resolved from{Target::Global, 0};
  if (sourceBytes) {
    from = resolve(w, t, globalAddress, sourceBytes, AddressSpace::Global);
    admissible(w, t, from, globalAddress, sourceBytes, bytes, AddressSpace::Global, siteId, false);
  }
  AsyncCopy copy;
  copy.sharedOffset = static_cast<uint32_t>(to.sharedOffset);
  copy.globalAddress = globalAddress;
  copy.bytes = bytes;
  copy.sourceBytes = sourceBytes;
  copy.sourceValid = from.target == Target::Global || from.target == Target::RuntimeBlock;
  copy.site = siteId;
  if (w.checks.tracksSharedMemory())
    reportSharedIssues(w, t, w.sharedChecker.markPending(copy.sharedOffset, bytes), copy.sharedOffset, bytes, siteId,
                       true);
  w.asyncCopies.issue(t.index, copy);
  if (sourceBytes && copy.sourceValid) track(w, t, siteId, RequestStream::Primary, from, globalAddress, sourceBytes);
  track(w, t, siteId, RequestStream::AsyncCopyDestination, to, sharedAddress, bytes);
}

void asyncCopyCommit(SimThread& t, uint32_t siteId) {
  Worker& w = *t.worker;
  w.site(t, siteId);
  w.asyncCopies.commit(t.index);
}

void asyncCopyWait(SimThread& t, uint32_t pendingGroups, uint32_t siteId) {
  Worker& w = *t.worker;
  w.site(t, siteId);
  w.asyncCopies.wait(t.index, pendingGroups, [&](const AsyncCopy& c) {
    // The copy lands now: the global bytes are read at the wait, the rest of the destination zero-filled.
    uint8_t data[16] = {};
    if (c.sourceValid) std::memcpy(data, reinterpret_cast<const void*>(c.globalAddress), c.sourceBytes);
    if (w.checks.tracksSharedMemory())
      reportSharedIssues(w, t, w.sharedChecker.land(w.accessor(t), c.sharedOffset, c.bytes, c.site), c.sharedOffset,
                         c.bytes, c.site, true);
    std::memcpy(w.sharedBase() + c.sharedOffset, data, c.bytes);
  });
}

std::optional<uint32_t> sharedOperand(Worker& w, const SimThread& t, uint64_t address, uint64_t bytes, uint32_t align,
                                      uint32_t site, bool write) {
  Resolved r = resolve(w, t, address, bytes, AddressSpace::Shared);
  if (!admissible(w, t, r, address, bytes, align, AddressSpace::Shared, site, write)) return std::nullopt;
  return static_cast<uint32_t>(r.sharedOffset);
}

bool globalReadable(Worker& w, const SimThread& t, uint64_t address, uint64_t bytes, uint32_t site) {
  Resolved r = resolve(w, t, address, bytes, AddressSpace::Global);
  return admissible(w, t, r, address, bytes, 1, AddressSpace::Global, site, false);
}

bool globalWritable(Worker& w, const SimThread& t, uint64_t address, uint64_t bytes, uint32_t site) {
  Resolved r = resolve(w, t, address, bytes, AddressSpace::Global);
  return admissible(w, t, r, address, bytes, 1, AddressSpace::Global, site, true);
}

bool readSharedRow(Worker& w, const SimThread& lane, uint64_t address, uint32_t bytes, void* dst, uint32_t site,
                   LaneAccess& counted) {
  Resolved r = resolve(w, lane, address, bytes, AddressSpace::Shared);
  if (!admissible(w, lane, r, address, bytes, bytes, AddressSpace::Shared, site, false)) {
    std::memset(dst, 0, bytes);
    return false;
  }
  if (w.checks.tracksSharedMemory())
    reportSharedIssues(w, lane, w.sharedChecker.read(w.accessor(lane), static_cast<uint32_t>(r.sharedOffset), bytes, site),
                       r.sharedOffset, bytes, site, false);
  std::memcpy(dst, reinterpret_cast<const void*>(address), bytes);
  counted = {r.sharedOffset, bytes, static_cast<uint16_t>(lane.lane), MemorySpace::Shared};
  return true;
}

bool writeSharedRow(Worker& w, const SimThread& lane, uint64_t address, uint32_t bytes, const void* src,
                    uint32_t site, uint32_t execution, LaneAccess& counted) {
  Resolved r = resolve(w, lane, address, bytes, AddressSpace::Shared);
  if (!admissible(w, lane, r, address, bytes, bytes, AddressSpace::Shared, site, true)) return false;
  if (w.checks.tracksSharedMemory()) {
    SharedAccessor who = w.accessor(lane);
    who.execution = execution;
    const bool unchanged = std::memcmp(reinterpret_cast<const void*>(address), src, bytes) == 0;
    const uint32_t offset = static_cast<uint32_t>(r.sharedOffset);
    reportSharedIssues(w, lane, w.sharedChecker.write(who, offset, bytes, site, unchanged), offset, bytes, site, true);
  }
  std::memcpy(reinterpret_cast<void*>(address), src, bytes);
  counted = {r.sharedOffset, bytes, static_cast<uint16_t>(lane.lane), MemorySpace::Shared};
  return true;
}

}  // namespace tessera::sim
