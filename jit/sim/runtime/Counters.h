// What the emulator counts, per launch and per tile-IR op (plain data: the report, Python and the text table
// read it). Global requests are measured in 32-byte sectors, shared requests in wavefronts; see docs/Sim.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tessera::sim {

struct GlobalAccessCounters {
  uint64_t requests = 0;        // warp-level requests (the lanes of a warp executing one access once)
  uint64_t sectors = 0;         // distinct 32-byte sectors the requests touched
  uint64_t requestedBytes = 0;  // distinct bytes the lanes asked for
  // requested / transferred (sectors * 32) bytes, 0..1; 1 when there was no request.
  double efficiency() const;
  double sectorsPerRequest() const;
};

struct SharedAccessCounters {
  uint64_t requests = 0;
  uint64_t wavefronts = 0;     // shared-memory passes the requests needed
  uint64_t bankConflicts = 0;  // wavefronts beyond one per 128-byte phase
};

// Warp-level instructions by class (one per request or completed collective).
enum class InstructionClass : uint8_t {
  GlobalLoad, GlobalStore, GlobalAtomic, SharedLoad, SharedStore, SharedAtomic,
  CpAsync, LdMatrix, StMatrix, Mma, Shuffle, Vote, WarpSync,
};
inline constexpr size_t kInstructionClassCount = 13;
const char* instructionClassName(InstructionClass c);

// Lane accesses of global memory by width: 1, 2, 4, 8, 16 bytes, anything else.
inline constexpr size_t kAccessWidthClasses = 6;
size_t accessWidthClass(uint32_t bytes);
const char* accessWidthName(size_t widthClass);

struct Counters {
  GlobalAccessCounters globalLoad, globalStore;
  SharedAccessCounters sharedLoad, sharedStore;
  std::array<uint64_t, kAccessWidthClasses> globalAccessWidths{};
  uint64_t barriers = 0;  // barriers a program completed (one per program per barrier, not per warp)
  std::array<uint64_t, kInstructionClassCount> warpInstructions{};

  double globalLoadEfficiency() const { return globalLoad.efficiency(); }
  double globalStoreEfficiency() const { return globalStore.efficiency(); }
  uint64_t sharedBankConflicts() const { return sharedLoad.bankConflicts + sharedStore.bankConflicts; }
  uint64_t& instructions(InstructionClass c) { return warpInstructions[static_cast<size_t>(c)]; }
  uint64_t instructions(InstructionClass c) const { return warpInstructions[static_cast<size_t>(c)]; }
  bool empty() const;
  Counters& operator+=(const Counters& other);
};

}  // namespace tessera::sim
