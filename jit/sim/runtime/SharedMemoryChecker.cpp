#include "jit/sim/runtime/SharedMemoryChecker.h"

#include <algorithm>

namespace tessera::sim {

SharedMemoryChecker::SharedMemoryChecker(uint32_t bytes, uint32_t warpSize) : shadow_(bytes), warpSize_(warpSize) {}

void SharedMemoryChecker::setPrograms(uint32_t programs, uint32_t threadsPerProgram) {
  epochs_.assign(programs, programEpoch_);
  threadsPerProgram_ = threadsPerProgram;
  threads_ = programs * threadsPerProgram;
}

void SharedMemoryChecker::beginProgram() {
  // Epoch 0 marks "never"; restart (clearing the shadow) long before the counter could wrap.
  if (lastEpoch_ > 0xF0000000u) {
    std::fill(shadow_.begin(), shadow_.end(), ByteState{});
    lastEpoch_ = 0;
  }
  programEpoch_ = ++lastEpoch_;
  std::fill(epochs_.begin(), epochs_.end(), programEpoch_);
  if (!clocks_.empty()) clocks_.clear();  // the next program allocates them again if it synchronizes so
}

uint32_t* SharedMemoryChecker::clockVector(uint32_t thread) {
  if (clocks_.empty()) {
    // Every thread at clock 1 (what accesses before this recorded), knowing nothing of the others.
    clocks_.assign(size_t{threads_} * threads_, 0);
    for (uint32_t t = 0; t < threads_; ++t) clocks_[size_t{t} * threads_ + t] = 1;
  }
  return &clocks_[size_t{thread} * threads_];
}

void SharedMemoryChecker::release(uint32_t thread, Clock& into) {
  if (thread >= threads_) return;
  uint32_t* mine = clockVector(thread);
  if (into.empty()) into.assign(threads_, 0);
  for (uint32_t t = 0; t < threads_; ++t) into[t] = std::max(into[t], mine[t]);
  ++mine[thread];
}

void SharedMemoryChecker::acquire(uint32_t thread, const Clock& from) {
  if (thread >= threads_ || from.empty()) return;
  uint32_t* mine = clockVector(thread);
  for (uint32_t t = 0; t < threads_ && t < from.size(); ++t) mine[t] = std::max(mine[t], from[t]);
}

void SharedMemoryChecker::synchronize(const std::vector<uint32_t>& threads) {
  Clock joined;
  for (uint32_t t : threads) release(t, joined);
  for (uint32_t t : threads) acquire(t, joined);
}

void SharedMemoryChecker::orderAfter(uint32_t thread, uint32_t source) {
  if (thread >= threads_ || source >= threads_ || clocks_.empty()) return;
  uint32_t& known = clockVector(thread)[source];
  known = std::max(known, clocks_[size_t{source} * threads_ + source]);
}

void SharedMemoryChecker::barrier(uint32_t program) { epochs_[program] = ++lastEpoch_; }

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
  return sameEpoch(b.writeEpoch, b.writeProgram, who) && b.writer != who.thread && b.writer != kAtomicWriter &&
         !ordered(b.writer, b.writeSync, who) && !happensBefore(b.writer, b.writeClock, who);
}

bool SharedMemoryChecker::readersHappenBefore(const ByteState& b, const SharedAccessor& who) const {
  if (clocks_.empty() || b.readers > kReaderSlots) return false;
  for (uint8_t i = 0; i < b.readers; ++i)
    if (b.readThread[i] != who.thread && !happensBefore(b.readThread[i], b.readClock[i], who)) return false;
  return true;
}

void SharedMemoryChecker::noteRace(SharedAccessIssues& issues, bool otherWrote, uint16_t other, uint32_t otherSite,
                                   uint32_t offset) const {
  issues.race = true;
  issues.otherWrote = otherWrote;
  issues.manyReaders = other == kManyThreads;
  issues.otherThread = other == kManyThreads ? 0 : other;
  issues.otherProgram = other == kManyThreads ? 0 : programOf(other);
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
  if (sameEpoch(b.readEpoch, b.readProgram, who) && otherReaders && !readersOrdered && !readersHappenBefore(b, who))
    noteRace(issues, false, b.reader, b.readSite, offset);
}

void SharedMemoryChecker::recordRead(ByteState& b, const SharedAccessor& who, uint32_t site) const {
  const uint32_t clock = clockOf(who.thread);
  if (!sameEpoch(b.readEpoch, b.readProgram, who)) {
    b.readEpoch = epochs_[who.program];
    b.readProgram = static_cast<uint8_t>(who.program);
    b.reader = static_cast<uint16_t>(who.thread);
    b.readerWarp = static_cast<uint16_t>(who.warp);
    b.readSync = who.warpSyncGeneration;
    b.readSite = site;
    b.readers = 1;
    b.readThread[0] = static_cast<uint16_t>(who.thread);
    b.readClock[0] = clock;
    return;
  }
  uint8_t slot = 0;
  while (slot < b.readers && slot < kReaderSlots && b.readThread[slot] != who.thread) ++slot;
  if (slot < b.readers && slot < kReaderSlots) {
    b.readClock[slot] = clock;
  } else if (b.readers < kReaderSlots) {
    b.readThread[b.readers] = static_cast<uint16_t>(who.thread);
    b.readClock[b.readers++] = clock;
  } else {
    b.readers = kReaderSlots + 1;
  }
  if (b.reader != who.thread) b.reader = kManyThreads;
  if (b.readerWarp != who.warp) b.readerWarp = kManyThreads;
  if (b.readProgram != who.program) b.readProgram = kSeveralPrograms;
  else b.readEpoch = epochs_[who.program];
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
    b.writeEpoch = epochs_[who.program];
    b.writeProgram = static_cast<uint8_t>(who.program);
    b.writer = static_cast<uint16_t>(who.thread);
    b.writeSync = who.warpSyncGeneration;
    b.writeSite = site;
    b.writeExecution = who.execution;
    b.writeClock = clockOf(who.thread);
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
    b.writeEpoch = epochs_[who.program];
    b.writeProgram = static_cast<uint8_t>(who.program);
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

void SharedMemoryChecker::landBulk(uint32_t offset, uint32_t bytes, uint32_t site, uint32_t issuer,
                                   uint32_t issueClock) {
  for (uint32_t i = offset; i < offset + bytes; ++i) {
    ByteState& b = shadow_[i];
    b.pending = 0;
    b.writeEpoch = epochs_[programOf(issuer)];
    b.writeProgram = static_cast<uint8_t>(programOf(issuer));
    b.writer = static_cast<uint16_t>(issuer);
    b.writeSync = UINT32_MAX;  // no warp sync orders the asynchronous proxy's write
    b.writeSite = site;
    b.writeExecution = UINT32_MAX;
    b.writeClock = issueClock;
  }
}

}  // namespace tessera::sim
