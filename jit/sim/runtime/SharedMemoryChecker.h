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
// Barrier 0 advances its program's epoch; two accesses by threads of one program in different epochs never race.
// Epochs keep counting across programs, so a new program starts without clearing the shadow (bytes last written
// in an older epoch are "unwritten").
//
// One checker serves a whole cluster (Cluster.h): the shared memory of its programs one after another, thread
// ids numbered across the cluster (program rank * threads per program + thread), and an epoch per program. An
// access by a thread of another program than the earlier access's (a multicast copy's write) is ordered only by
// happens-before, which then also follows barrier 0 (SharedWindow::barrier).
// Within an epoch, accesses are also ordered by happens-before through mbarriers and named barriers (vector
// clocks, allocated at a program's first such synchronization): an mbarrier arrive, and the issue of a bulk copy
// (its complete_tx), release the thread's accesses so far into the barrier; a wait that the completion of a phase
// satisfies acquires what was released into the barrier before that completion; a named barrier orders its
// participants' earlier accesses before their later ones. Each byte keeps its last writer as (thread, clock) and
// up to kReaderSlots readers as (thread, clock); with more readers in one epoch a write races with them unless a warp
// sync orders them all (the epoch rule, no happens-before). A landed bulk copy's bytes are its issuing thread's write
// at its issue, so that a reader that did not wait for its phase (nor pass a barrier 0 after it) races with it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::sim {

// Who accesses: the thread, its warp and the warp syncs it has passed.
struct SharedAccessor {
  uint32_t thread = 0;  // numbered across the cluster, as its warp
  uint32_t warp = 0;
  uint32_t warpSyncGeneration = 0;
  uint32_t execution = 0;  // writes: the k-th execution of the site by this thread since the last barrier
  uint32_t program = 0;    // its program's rank in the cluster
};

// What an access found (the first offending byte of each problem).
struct SharedAccessIssues {
  bool race = false;
  bool otherWrote = false;     // the earlier access of the race was a write
  bool manyReaders = false;    // ... reads by several threads (otherThread is one of them)
  uint32_t otherThread = 0;    // numbered across the cluster (SharedWindow numbers it within otherProgram)
  uint32_t otherProgram = 0;
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

  // The cluster: `programs` programs of `threadsPerProgram` threads each (their bytes divide the checker's).
  void setPrograms(uint32_t programs, uint32_t threadsPerProgram);
  void beginProgram();  // forget everything of the cluster's previous programs
  // Barrier 0 of `program`: its threads' later accesses never race with their earlier ones.
  void barrier(uint32_t program);
  uint32_t programOf(uint32_t thread) const { return thread / threadsPerProgram_; }
  bool usesClocks() const { return !clocks_.empty(); }

  // Happens-before (the clocks of the cluster's threads, see above). A Clock is a barrier's vector (empty: nothing
  // released into it yet).
  using Clock = std::vector<uint32_t>;
  // Joins `thread`'s accesses so far into `into`, then starts the thread's next clock value.
  void release(uint32_t thread, Clock& into);
  // `thread`'s later accesses are ordered after what was released into `from`.
  void acquire(uint32_t thread, const Clock& from);
  // Every one of `threads` is ordered after every one's accesses so far (a named barrier).
  void synchronize(const std::vector<uint32_t>& threads);
  // `thread` is ordered after `source`'s accesses so far (the warpgroup's wgmma operand reads, recorded as its
  // first thread's, once a wait_group completed them).
  void orderAfter(uint32_t thread, uint32_t source);
  uint32_t clockOf(uint32_t thread) const { return clocks_.empty() ? 1 : clocks_[std::size_t{thread} * threads_ + thread]; }

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
  // Lands the bytes as `issuer`'s write at clock `issueClock` (its clock when it issued the copy).
  void landBulk(uint32_t offset, uint32_t bytes, uint32_t site, uint32_t issuer, uint32_t issueClock);

  // wgmma.mma_async: the bytes are read from its issue until its wait_group completes it (counted: several
  // incomplete wgmmas may read one byte).
  void beginOperandRead(uint32_t offset, uint32_t bytes);
  void endOperandRead(uint32_t offset, uint32_t bytes);

 private:
  static constexpr uint16_t kManyThreads = 0xFFFF;
  static constexpr uint16_t kAtomicWriter = 0xFFFE;
  static constexpr uint8_t kReaderSlots = 4;
  static constexpr uint8_t kSeveralPrograms = 0xFF;
  struct ByteState {
    uint32_t writeEpoch = 0;  // epoch of the last write; below programEpoch_: not written in this program
    uint32_t readEpoch = 0;
    uint32_t writeSync = 0;   // the writer's warp-sync generation
    uint32_t readSync = 0;    // the highest of the readers'
    uint32_t writeSite = 0, readSite = 0;
    uint32_t writeExecution = 0;      // the writer's SharedAccessor::execution
    uint16_t writer = 0, reader = 0;  // thread; reader kManyThreads when several read in readEpoch
    uint16_t readerWarp = 0;          // their warp; kManyThreads when from several warps
    uint8_t writeProgram = 0;         // the writer's program (whose epoch writeEpoch is)
    uint8_t readProgram = 0;          // the readers' program; kSeveralPrograms when from several
    uint8_t pending = 0;
    uint16_t operandReads = 0;  // incomplete wgmmas reading the byte
    uint8_t readers = 0;        // readers in readEpoch in the slots; kReaderSlots + 1: more than fit
    uint32_t writeClock = 0;    // the writer's clock
    std::array<uint16_t, kReaderSlots> readThread{};
    std::array<uint32_t, kReaderSlots> readClock{};  // each reader's latest read
  };

  // Whether an access by `who` may race with an earlier one of `program` in `epoch` as far as barrier 0 goes: the
  // earlier one is of this run and no barrier 0 of their program separates them (another program's are ordered
  // by happens-before only).
  bool sameEpoch(uint32_t epoch, uint8_t program, const SharedAccessor& who) const {
    return epoch >= programEpoch_ && (program != who.program || epoch == epochs_[who.program]);
  }
  bool ordered(uint32_t otherThread, uint32_t otherSync, const SharedAccessor& who) const {
    return otherThread / warpSize_ == who.warp && who.warpSyncGeneration > otherSync;
  }
  // `other`'s access at `clock` happens before `who`'s now.
  bool happensBefore(uint32_t other, uint32_t clock, const SharedAccessor& who) const {
    return !clocks_.empty() && other < threads_ && clocks_[std::size_t{who.thread} * threads_ + other] >= clock;
  }
  // Every reader of the byte's epoch other than `who` happens before `who` (false when they overflowed the slots).
  bool readersHappenBefore(const ByteState& b, const SharedAccessor& who) const;
  uint32_t* clockVector(uint32_t thread);  // allocates the clocks on first use
  // False (noting why) when the byte is pending or was not written in this program.
  bool checkWritten(const ByteState& b, uint32_t offset, SharedAccessIssues& issues) const;
  static void checkOperand(const ByteState& b, uint32_t offset, SharedAccessIssues& issues);
  bool racesWithWriter(const ByteState& b, const SharedAccessor& who) const;
  // `who` writes the byte in the same warp store instruction as its last writer.
  bool sameWarpInstruction(const ByteState& b, const SharedAccessor& who, uint32_t site) const {
    return b.writer / warpSize_ == who.warp && b.writeSite == site && b.writeExecution == who.execution;
  }
  void noteRace(SharedAccessIssues& issues, bool otherWrote, uint16_t other, uint32_t otherSite,
                uint32_t offset) const;
  void checkRead(ByteState& b, uint32_t offset, const SharedAccessor& who, SharedAccessIssues& issues) const;
  void checkWrite(ByteState& b, uint32_t offset, const SharedAccessor& who, uint32_t site,
                  SharedAccessIssues& issues) const;
  void recordRead(ByteState& b, const SharedAccessor& who, uint32_t site) const;

  std::vector<ByteState> shadow_;
  uint32_t warpSize_;
  uint32_t lastEpoch_ = 0;          // epochs are numbered across programs: each barrier 0 takes the next
  uint32_t programEpoch_ = 1;       // the first epoch of the cluster's current programs
  std::vector<uint32_t> epochs_{0};  // each program's current epoch
  uint32_t threadsPerProgram_ = 1;
  uint32_t threads_ = 0;
  std::vector<uint32_t> clocks_;  // threads_ x threads_: row t is thread t's vector clock; empty until first used
};

}  // namespace tessera::sim
