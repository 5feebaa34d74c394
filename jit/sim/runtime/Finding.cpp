#include "jit/sim/runtime/Finding.h"

#include <cinttypes>
#include <cstdio>

namespace tessera::sim {

const char* findingKindName(FindingKind kind) {
  switch (kind) {
    case FindingKind::GlobalOutOfBounds: return "out-of-bounds global access";
    case FindingKind::Misaligned: return "misaligned access";
    case FindingKind::SharedOutOfBounds: return "out-of-bounds shared access";
    case FindingKind::SharedRace: return "shared-memory race";
    case FindingKind::UninitializedSharedRead: return "uninitialized shared read";
    case FindingKind::PendingAsyncCopyRead: return "read of pending async copy data";
    case FindingKind::BarrierDivergence: return "barrier divergence";
    case FindingKind::IncompleteCollective: return "incomplete warp collective";
    case FindingKind::CollectiveMismatch: return "warp collective mismatch";
    case FindingKind::ShuffleOutsideMask: return "shuffle from a lane outside the mask";
    case FindingKind::AssertionFailed: return "assertion failed";
    case FindingKind::Trap: return "trap";
    case FindingKind::InvalidCall: return "invalid runtime call";
    case FindingKind::Unsupported: return "unsupported operation";
    case FindingKind::KernelException: return "kernel exception";
    case FindingKind::BadPrintfRecord: return "bad printf record";
    case FindingKind::WgmmaOperandOverwrite: return "wgmma operand overwritten before its wait";
    case FindingKind::WgmmaRegisterRead: return "wgmma accumulator read before its wait";
    case FindingKind::WgmmaMissingFence: return "wgmma without wgmma.fence";
    case FindingKind::IncompleteMbarrierWait: return "mbarrier wait that never completes";
  }
  return "finding";
}

std::string Finding::str() const {
  std::string s = findingKindName(kind);
  s += " in " + kernel + ", program (" + std::to_string(program[0]) + ", " + std::to_string(program[1]) + ", " +
       std::to_string(program[2]) + ")";
  if (hasThread) s += ", warp " + std::to_string(warp) + " lane " + std::to_string(lane);
  if (hasSite) {
    s += " at ";
    s += file.empty() ? "<unknown location>" : file + ":" + std::to_string(line) + ":" + std::to_string(column);
    if (!op.empty()) s += " (" + op + ")";
  }
  if (hasAccess) {
    char buf[96];
    std::snprintf(buf, sizeof buf, ": %s of %" PRIu64 " bytes at %s 0x%" PRIx64, write ? "write" : "read", bytes,
                  space == "shared" ? "shared offset" : (space + " address").c_str(), address);
    s += buf;
  }
  if (!message.empty()) s += ": " + message;
  if (!instruction.empty()) s += "\n    instruction: " + instruction;
  return s;
}

}  // namespace tessera::sim
