#include "jit/sim/runtime/SharedMemoryChecker.h"

#include <algorithm>

namespace tessera::sim {

SharedMemoryChecker::SharedMemoryChecker(uint32_t bytes, uint32_t warpSize) : shadow_(bytes), warpSize_(warpSize) {}

void SharedMemoryChecker::beginProgram() {
  // Epoch 0 marks "never"; restart (clearing the shadow) long before the counter could wrap.
  if (epoch_ > 0xF0000000u) {
    std::fill(shadow_.begin(), shadow_.end(), ByteState{});
    epoch_ = 0;
  }
  programEpoch_ = ++epoch_;
}

void SharedMemoryChecker::barrier() { ++epoch_; }

bool SharedMemoryChecker::checkWritten(const ByteState& b, uint32_t offset, SharedAccessIssues& issues) const {
  if (b.pending) {
    if (!issues.pending) issues.pendingOffset = offset;
    issues.pending = true;
    return false;
  }
  if (b.writeEpoch < programEpoch_) {
    if (!issues.uninitialized) issues.uninitializedOffset = offset;
    issues.uninitialized = true;
    return false;
  }
  return true;
}

void SharedMemoryChecker::checkOperand(const ByteState& b, uint32_t offset, SharedAccessIssues& issues) {
  if (!b.operandReads || issues.operandOverwrite) return;
  issues.operandOverwrite = true;
  issues.operandOffset = offset;
}

bool SharedMemoryChecker::racesWithWriter(const ByteState& b, const SharedAccessor& who) const {
  return b.writeEpoch == epoch_ && b.writer != who.thread && b.writer != kAtomicWriter && b.writer != kBulkCopyWriter &&
         !ordered(b.writer, b.writeSync, who);
}

void SharedMemoryChecker::noteRace(SharedAccessIssues& issues, bool otherWrote, uint16_t other, uint32_t otherSite,
                                   uint32_t offset) {
  issues.race = true;
  issues.otherWrote = otherWrote;
  issues.manyReaders = other == kManyThreads;
  issues.otherThread = other == kManyThreads ? 0 : other;
  issues.otherSite = otherSite;
  issues.raceOffset = offset;
}

void SharedMemoryChecker::checkRead(ByteState& b, uint32_t offset, const SharedAccessor& who,
                                    SharedAccessIssues& issues) const {
  if (checkWritten(b, offset, issues) && !issues.race && racesWithWriter(b, who))
    noteRace(issues, true, b.writer, b.writeSite, offset);
}

void SharedMemoryChecker::checkWrite(ByteState& b, uint32_t offset, const SharedAccessor& who, uint32_t site,
                                     SharedAccessIssues& issues) const {
  if (issues.race) return;
  if (racesWithWriter(b, who) && !sameWarpInstruction(b, who, site)) {
    noteRace(issues, true, b.writer, b.writeSite, offset);
    return;
  }
  bool otherReaders = b.reader == kManyThreads || b.reader != who.thread;
  bool readersOrdered = b.readerWarp == who.warp && who.warpSyncGeneration > b.readSync;
  if (b.readEpoch == epoch_ && otherReaders && !readersOrdered) noteRace(issues, false, b.reader, b.readSite, offset);
}

void SharedMemoryChecker::recordRead(ByteState& b, const SharedAccessor& who, uint32_t site) const {
  if (b.readEpoch != epoch_) {
    b.readEpoch = epoch_;
    b.reader = static_cast<uint16_t>(who.thread);
    b.readerWarp = static_cast<uint16_t>(who.warp);
    b.readSync = who.warpSyncGeneration;
    b.readSite = site;
    return;
  }
  if (b.reader != who.thread) b.reader = kManyThreads;
  if (b.readerWarp != who.warp) b.readerWarp = kManyThreads;
  b.readSync = std::max(b.readSync, who.warpSyncGeneration);
}

SharedAccessIssues SharedMemoryChecker::read(const SharedAccessor& who, uint32_t offset, uint32_t bytes,
                                             uint32_t site) {
  SharedAccessIssues issues;
  for (uint32_t i = offset; i < offset + bytes; ++i) {
    ByteState& b = shadow_[i];
    checkRead(b, i, who, issues);
    recordRead(b, who, site);
  }
  return issues;
}

SharedAccessIssues SharedMemoryChecker::write(const SharedAccessor& who, uint32_t offset, uint32_t bytes,
                                              uint32_t site, bool unchanged) {
  SharedAccessIssues issues;
  for (uint32_t i = offset; i < offset + bytes; ++i) {
    ByteState& b = shadow_[i];
    checkOperand(b, i, issues);
    if (!unchanged) checkWrite(b, i, who, site, issues);
    b.writeEpoch = epoch_;
    b.writer = static_cast<uint16_t>(who.thread);
    b.writeSync = who.warpSyncGeneration;
    b.writeSite = site;
    b.writeExecution = who.execution;
  }
  return issues;
}

SharedAccessIssues SharedMemoryChecker::atomic(const SharedAccessor& who, uint32_t offset, uint32_t bytes,
                                               uint32_t site) {
  SharedAccessIssues issues;
  for (uint32_t i = offset; i < offset + bytes; ++i) {
    ByteState& b = shadow_[i];
    checkWritten(b, i, issues);
    checkOperand(b, i, issues);
    b.writeEpoch = epoch_;
    b.writer = kAtomicWriter;
    b.writeSite = site;
  }
  return issues;
}

SharedAccessIssues SharedMemoryChecker::markPending(uint32_t offset, uint32_t bytes) {
  SharedAccessIssues issues;
  for (uint32_t i = offset; i < offset + bytes; ++i) {
    checkOperand(shadow_[i], i, issues);
    shadow_[i].pending = 1;
  }
  return issues;
}

SharedAccessIssues SharedMemoryChecker::land(const SharedAccessor& who, uint32_t offset, uint32_t bytes,
                                             uint32_t site) {
  clearPending(offset, bytes);
  return write(who, offset, bytes, site);
}

void SharedMemoryChecker::clearPending(uint32_t offset, uint32_t bytes) {
  for (uint32_t i = offset; i < offset + bytes; ++i) shadow_[i].pending = 0;
}

void SharedMemoryChecker::beginOperandRead(uint32_t offset, uint32_t bytes) {
  for (uint32_t i = offset; i < offset + bytes; ++i) ++shadow_[i].operandReads;
}

void SharedMemoryChecker::endOperandRead(uint32_t offset, uint32_t bytes) {
  for (uint32_t i = offset; i < offset + bytes; ++i)
    if (shadow_[i].operandReads) --shadow_[i].operandReads;
}

SharedAccessIssues SharedMemoryChecker::issueBulk(const SharedAccessor& who, uint32_t offset, uint32_t bytes,
                                                  uint32_t site) {
  SharedAccessIssues issues = write(who, offset, bytes, site);
  markPending(offset, bytes);
  return issues;
}

void SharedMemoryChecker::landBulk(uint32_t offset, uint32_t bytes, uint32_t site) {
  for (uint32_t i = offset; i < offset + bytes; ++i) {
    ByteState& b = shadow_[i];
    b.pending = 0;
    b.writeEpoch = epoch_;
    b.writer = kBulkCopyWriter;
    b.writeSite = site;
  }
}

}  // namespace tessera::sim
