// Per-byte shadow of a program's shared memory, for racecheck and initcheck:
//  - a race: two different threads, at least one writing, the same byte, no barrier between. Lanes of one warp
//    are also ordered by a warp sync both passed between the accesses (only syncs of all live lanes of the
//    warp count: SimThread::warpSyncGeneration). Lanes of one warp writing the same byte in one store instruction
//    (the same execution of the same site) do not race: the hardware keeps one lane's value, and the lowering
//    has every lane that holds a replicated element store the same value. A write that leaves the bytes as they were
//    (another warp storing the same replicated value) races with nothing: every order gives the same memory, as
//    compute-sanitizer's racecheck, too, ranks same-value writes below real hazards. Atomics do not race with each other;
//    races between an atomic and a plain access are not reported.
//  - a read of a byte nothing wrote in this program;
//  - a read of a byte a cp.async will write but whose wait has not come yet, or a bulk tensor copy whose mbarrier
//    phase has not completed. A bulk copy's bytes, once landed, race with no read: the phase completion that
//    lands them is what a reader waits for (whether each reader did wait is not tracked);
//  - a write (or a cp.async into) a byte a wgmma.mma_async reads whose wait_group has not come yet.
// Barriers advance an epoch; accesses in different epochs never race. Epochs keep counting across programs, so
// a new program starts without clearing the shadow (bytes last written in an older epoch are "unwritten").
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::sim {

// Who accesses: the thread, its warp and the warp syncs it has passed.
struct SharedAccessor {
  uint32_t thread = 0;
  uint32_t warp = 0;
  uint32_t warpSyncGeneration = 0;
  uint32_t execution = 0;  // writes: the k-th execution of the site by this thread since the last barrier
};

// What an access found (the first offending byte of each problem).
struct SharedAccessIssues {
  bool race = false;
  bool otherWrote = false;     // the earlier access of the race was a write
  bool manyReaders = false;    // ... reads by several threads (otherThread is one of them)
  uint32_t otherThread = 0;
  uint32_t otherSite = 0;
  uint32_t raceOffset = 0;
  bool uninitialized = false;
  uint32_t uninitializedOffset = 0;
  bool pending = false;
  uint32_t pendingOffset = 0;
  bool operandOverwrite = false;  // the byte is an operand of an incomplete wgmma
  uint32_t operandOffset = 0;
  bool any() const { return race || uninitialized || pending || operandOverwrite; }
};

class SharedMemoryChecker {
 public:
  SharedMemoryChecker(uint32_t bytes, uint32_t warpSize);

  void beginProgram();  // forget everything of the previous program
  void barrier();       // accesses after this never race with those before

  // [offset, offset + bytes) must lie within the shared memory (the caller checks bounds first).
  SharedAccessIssues read(const SharedAccessor& who, uint32_t offset, uint32_t bytes, uint32_t site);
  // `unchanged`: the write stores the bytes already there.
  SharedAccessIssues write(const SharedAccessor& who, uint32_t offset, uint32_t bytes, uint32_t site,
                           bool unchanged = false);
  // An atomic read-modify-write: reads like a read (uninitialized, pending), writes without racing other atomics.
  SharedAccessIssues atomic(const SharedAccessor& who, uint32_t offset, uint32_t bytes, uint32_t site);

  // cp.async: the bytes are pending from the copy's issue until it lands (a write by the issuing thread). The
  // issue reports a wgmma operand among them.
  SharedAccessIssues markPending(uint32_t offset, uint32_t bytes);
  SharedAccessIssues land(const SharedAccessor& who, uint32_t offset, uint32_t bytes, uint32_t site);
  void clearPending(uint32_t offset, uint32_t bytes);
  // A bulk tensor copy: issued by `who` (checked as its write: it must not overwrite what other threads read or
  // wrote unordered), pending until it lands, then written by the asynchronous proxy.
  SharedAccessIssues issueBulk(const SharedAccessor& who, uint32_t offset, uint32_t bytes, uint32_t site);
  void landBulk(uint32_t offset, uint32_t bytes, uint32_t site);

  // wgmma.mma_async: the bytes are read from its issue until its wait_group completes it (counted: several
  // incomplete wgmmas may read one byte).
  void beginOperandRead(uint32_t offset, uint32_t bytes);
  void endOperandRead(uint32_t offset, uint32_t bytes);

 private:
  static constexpr uint16_t kManyThreads = 0xFFFF;
  static constexpr uint16_t kAtomicWriter = 0xFFFE;
  static constexpr uint16_t kBulkCopyWriter = 0xFFFD;
  struct ByteState {
    uint32_t writeEpoch = 0;  // epoch of the last write; below programEpoch_: not written in this program
    uint32_t readEpoch = 0;
    uint32_t writeSync = 0;   // the writer's warp-sync generation
    uint32_t readSync = 0;    // the highest of the readers'
    uint32_t writeSite = 0, readSite = 0;
    uint32_t writeExecution = 0;      // the writer's SharedAccessor::execution
    uint16_t writer = 0, reader = 0;  // thread; reader kManyThreads when several read in readEpoch
    uint16_t readerWarp = 0;          // their warp; kManyThreads when from several warps
    uint8_t pending = 0;
    uint16_t operandReads = 0;  // incomplete wgmmas reading the byte
  };

  bool ordered(uint32_t otherThread, uint32_t otherSync, const SharedAccessor& who) const {
    return otherThread / warpSize_ == who.warp && who.warpSyncGeneration > otherSync;
  }
  // False (noting why) when the byte is pending or was not written in this program.
  bool checkWritten(const ByteState& b, uint32_t offset, SharedAccessIssues& issues) const;
  static void checkOperand(const ByteState& b, uint32_t offset, SharedAccessIssues& issues);
  bool racesWithWriter(const ByteState& b, const SharedAccessor& who) const;
  // `who` writes the byte in the same warp store instruction as its last writer.
  bool sameWarpInstruction(const ByteState& b, const SharedAccessor& who, uint32_t site) const {
    return b.writer / warpSize_ == who.warp && b.writeSite == site && b.writeExecution == who.execution;
  }
  static void noteRace(SharedAccessIssues& issues, bool otherWrote, uint16_t other, uint32_t otherSite,
                       uint32_t offset);
  void checkRead(ByteState& b, uint32_t offset, const SharedAccessor& who, SharedAccessIssues& issues) const;
  void checkWrite(ByteState& b, uint32_t offset, const SharedAccessor& who, uint32_t site,
                  SharedAccessIssues& issues) const;
  void recordRead(ByteState& b, const SharedAccessor& who, uint32_t site) const;

  std::vector<ByteState> shadow_;
  uint32_t warpSize_;
  uint32_t epoch_ = 0;
  uint32_t programEpoch_ = 1;
};

}  // namespace tessera::sim
