// The warp-level operations of the ABI: each lane checks its arguments and arrives at the collective
// (ProgramRunner::collective); when the last lane of the mask arrives, resolveWarpCollective computes every
// lane's result (exchanges from WarpCollectives, matrix operations through WarpMatrixSemantics) and counts the
// warp-level instruction.
#pragma once

#include <cstdint>

#include "jit/sim/runtime/ProgramRunner.h"
#include "jit/sim/runtime/SimThread.h"

namespace tessera::sim {

class Worker;

void barrier(SimThread& t, uint32_t site);
void warpSync(SimThread& t, uint32_t mask, uint32_t site);
// bar.sync id[, count] (SimABI.h): checks the id and count, then waits at the barrier.
void namedBarrier(SimThread& t, uint32_t id, uint32_t count, uint32_t site);
void namedBarrierArrive(SimThread& t, uint32_t id, uint32_t count, uint32_t site);
// setmaxnreg (SimABI.h): checks the PTX rules (RegisterCounts.h).
void setMaxRegisters(SimThread& t, bool increase, uint32_t registers, uint32_t site);
uint32_t shuffle(SimThread& t, uint32_t mode, uint32_t mask, uint32_t value, uint32_t laneOrDelta,
                 uint32_t clampSegment, uint32_t* valid, uint32_t site);
uint32_t vote(SimThread& t, uint32_t mode, uint32_t mask, uint32_t predicate, uint32_t site);
uint32_t bpermute(SimThread& t, uint32_t byteAddress, uint32_t value, uint32_t site);
void ldmatrix(SimThread& t, uint32_t matrices, uint32_t transpose, uint64_t address, uint32_t* out, uint32_t site);
void stmatrix(SimThread& t, uint32_t matrices, uint32_t transpose, uint64_t address, const uint32_t* in,
              uint32_t site);
void mma(SimThread& t, uint32_t kind, const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d,
         uint32_t site);

// Called (through ProgramRunner::Events) on the last lane to arrive.
void resolveWarpCollective(Worker& w, uint32_t warp, const PendingCollective& collective);

}  // namespace tessera::sim
