// Every memory access of an emulated kernel goes through here: where the address points (the program's shared
// memory, a launch allocation, a runtime block, the thread's own stack, or nowhere), the checks (bounds always;
// alignment, races, uninitialized and pending reads when checks are on), the access itself (not performed when
// out of bounds: loads read zeros), and the record of the lane's part of a warp request for the counters.
#pragma once

#include <cstdint>
#include <optional>

#include "jit/sim/SimABI.h"
#include "jit/sim/runtime/AccessCost.h"
#include "jit/sim/runtime/SharedMemoryChecker.h"
#include "jit/sim/runtime/SimThread.h"

namespace tessera::sim {

class Worker;

void loadMemory(SimThread& t, void* dst, uint64_t address, uint32_t bytes, uint32_t site);
void storeMemory(SimThread& t, uint64_t address, const void* src, uint32_t bytes, uint32_t site);
uint64_t atomicRmwMemory(SimThread& t, uint32_t op, uint64_t address, uint64_t value, uint32_t bytes, uint32_t site);
uint64_t atomicCasMemory(SimThread& t, uint64_t address, uint64_t expected, uint64_t desired, uint32_t bytes,
                         uint32_t site);
void memsetMemory(SimThread& t, uint64_t address, uint32_t value, uint64_t bytes, uint32_t site);
// Overlapping ranges are allowed (memmove); both pointers are classified as generic ones.
void memcpyMemory(SimThread& t, uint64_t dst, uint64_t src, uint64_t bytes, uint32_t site);

void asyncCopy(SimThread& t, uint64_t sharedAddress, uint64_t globalAddress, uint32_t bytes, uint32_t sourceBytes,
               uint32_t site);
void asyncCopyCommit(SimThread& t, uint32_t site);
void asyncCopyWait(SimThread& t, uint32_t pendingGroups, uint32_t site);

// Reports what the shared-memory checker found about an access of `t` at `offset`.
void reportSharedIssues(Worker& w, const SimThread& t, const SharedAccessIssues& issues, uint64_t offset,
                        uint64_t bytes, uint32_t site, bool write);

// The shared-memory offset of `bytes` at the shared host address `address`, operand of an instruction that is
// no plain access (an mbarrier, a bulk copy's destination); out-of-bounds (then nullopt) and, under memcheck,
// addresses not a multiple of `align` are reported.
std::optional<uint32_t> sharedOperand(Worker& w, const SimThread& t, uint64_t address, uint64_t bytes, uint32_t align,
                                      uint32_t site, bool write);
// Whether `bytes` at the global `address` lie inside launch memory; reports them when not.
bool globalReadable(Worker& w, const SimThread& t, uint64_t address, uint64_t bytes, uint32_t site);
bool globalWritable(Worker& w, const SimThread& t, uint64_t address, uint64_t bytes, uint32_t site);

// A row read of a warp matrix instruction on behalf of `lane` (not necessarily the running thread). Returns the
// lane's part of the request, or false when the row is out of bounds (then `dst` is zero-filled).
bool readSharedRow(Worker& w, const SimThread& lane, uint64_t address, uint32_t bytes, void* dst, uint32_t site,
                   LaneAccess& counted);
// A row write (stmatrix), checked as a store of `lane`'s; `execution` names the warp instruction, so that its
// lanes writing one byte do not race (SharedAccessor::execution). False when the row is out of bounds (not written).
bool writeSharedRow(Worker& w, const SimThread& lane, uint64_t address, uint32_t bytes, const void* src,
                    uint32_t site, uint32_t execution, LaneAccess& counted);

}  // namespace tessera::sim
