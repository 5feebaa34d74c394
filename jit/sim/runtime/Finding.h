// What the emulator's checks find (plain data for the report, Python and the error text), and the per-worker log
// that keeps the first findings of each kind and counts the rest.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::sim {

enum class FindingKind : uint8_t {
  GlobalOutOfBounds,        // a global (or generic) access outside every launch allocation
  Misaligned,               // address not a multiple of the width, or of the alignment the instruction promised
  SharedOutOfBounds,        // beyond the kernel's shared-memory size
  SharedRace,               // two threads, one writing, the same byte, no barrier between
  UninitializedSharedRead,  // a shared byte read before anything in this program wrote it
  PendingAsyncCopyRead,     // a shared byte read while a cp.async (or bulk copy) into it has not landed
  BarrierDivergence,        // a barrier not every thread reached (exited threads, different barriers)
  IncompleteCollective,     // a warp collective some lane of its mask never reaches (would hang)
  CollectiveMismatch,       // lanes of one mask at different collectives
  ShuffleOutsideMask,       // a shuffle reading a lane that is not in its mask (undefined)
  AssertionFailed,
  Trap,
  InvalidCall,              // the rewritten code called the runtime with impossible arguments
  Unsupported,              // an operation the emulator does not implement
  KernelException,          // a C++ kernel (tests) threw
  BadPrintfRecord,          // the AMD printf buffer holds a record no format explains
  WgmmaOperandOverwrite,    // a shared byte a wgmma.mma_async reads, written before the wait_group completing it
  WgmmaRegisterRead,        // a register a wgmma.mma_async writes, read before the wait_group completing it
  WgmmaMissingFence,        // a wgmma.mma_async with no wgmma.fence since the warpgroup's last wait_group
  IncompleteMbarrierWait,   // an mbarrier wait on a phase that never completes (would hang)
};
inline constexpr size_t kFindingKindCount = 20;
const char* findingKindName(FindingKind kind);

struct Finding {
  FindingKind kind = FindingKind::InvalidCall;
  std::string kernel;
  std::array<uint32_t, 3> program{};
  uint64_t programIndex = 0;  // linear: x + gx * (y + gy * z); orders findings
  bool hasThread = false;
  uint32_t warp = 0, lane = 0;
  // The access, when there is one. For shared memory, `address` is the offset in the program's shared memory.
  bool hasAccess = false;
  uint64_t address = 0;
  uint64_t bytes = 0;
  std::string space;  // "global", "shared", "generic", "constant"
  bool write = false;
  // The site and what the site table says of it.
  bool hasSite = false;
  uint32_t site = 0;
  std::string op, file, instruction;
  uint32_t line = 0, column = 0;
  std::string message;  // what went wrong, naming other threads and sites involved

  std::string str() const;  // one line (plus the instruction, if known)
};

// A worker's findings: the first `cap` of each kind, in the order they happened, and a count of every one.
class FindingLog {
 public:
  explicit FindingLog(uint32_t capPerKind) : cap_(capPerKind) {}
  // Counts a finding of `kind`; true when it is to be kept (then add() it).
  bool admit(FindingKind kind) { return ++counts_[static_cast<size_t>(kind)] <= cap_; }
  void add(Finding f) { findings_.push_back(std::move(f)); }
  const std::vector<Finding>& findings() const { return findings_; }
  const std::array<uint64_t, kFindingKindCount>& counts() const { return counts_; }

 private:
  uint32_t cap_;
  std::vector<Finding> findings_;
  std::array<uint64_t, kFindingKindCount> counts_{};
};

}  // namespace tessera::sim
