// The sm_90 operations of the ABI on mbarriers and bulk tensor copies (SimABI.h): checking their operands,
// updating the barriers' phases (Mbarriers.h), suspending waiters, and landing each copy's box in shared memory
// when its barrier's phase completes: out-of-range elements as zeros, swizzled as the tensor map says. TMA stores,
// the other way, out-of-range elements not written.
#pragma once

#include <cstdint>

#include "jit/sim/runtime/SimThread.h"

namespace tessera::sim {

class Worker;

void mbarrierInit(SimThread& t, uint64_t address, uint32_t count, uint32_t site);
uint64_t mbarrierArrive(SimThread& t, uint64_t address, uint32_t count, uint32_t txBytes, uint32_t site);
uint32_t mbarrierTryWaitParity(SimThread& t, uint64_t address, uint32_t parity, uint32_t site);
// Another program of the cluster's mbarrier at the offset of `address` in this one (mbarrier.arrive.release.cluster
// .shared::cluster after mapa): `count` arrivals.
void mbarrierArriveCluster(SimThread& t, uint64_t address, uint32_t program, uint32_t count, uint32_t site);
// A TMA copy into the shared memory of the programs of the cluster in `programMask` (bit r: rank r; a plain copy is
// the multicast to the calling program alone), landing at the same offset in each when the phase of each one's
// mbarrier at the offset of `mbarrierAddress` completes.
void bulkTensorCopy(SimThread& t, uint64_t sharedAddress, const void* tensorMap, const int32_t* coordinates,
                    uint32_t rank, uint64_t mbarrierAddress, uint32_t programMask, uint32_t site);
// A TMA store, done at once: each element of the box inside the tensor is read from shared memory (swizzled as the
// map says; checked as the issuing thread's read) and written to global memory (checked as its store).
void bulkTensorStore(SimThread& t, const void* tensorMap, const int32_t* coordinates, uint32_t rank,
                     uint64_t sharedAddress, uint32_t site);

// Nothing else can run: every copy in flight completes its transaction bytes, and each phase that completes lands
// its copies and wakes its waiters. True when a phase completed.
bool completeCopiesInFlight(Worker& w);
// The program ends: copies that never landed leave their bytes pending no longer.
void dropUnlandedBulkCopies(Worker& w);
// The program cannot go on: reports every thread waiting on an mbarrier phase; false when there is none.
bool reportMbarrierHangs(Worker& w);

}  // namespace tessera::sim
