// The membar analysis: where shared-memory accesses of a function need a barrier between them. Walking the
// function in program order, it tracks the shared-memory byte ranges written and read since the last barrier on
// any path; an op that reads bytes written since then (RAW) or writes bytes read or written since then (WAR, WAW)
// conflicts, and a barrier right before it starts the state afresh. What each op accesses is described in
// analysis/SharedScratch.h: an op with scratch reads and writes its [smem_offset, smem_offset + smem_bytes) (the
// barrier between its own write and read phases is the lowering's), and loads, stores and atomics through shared
// pointers touch an unknown part, treated as all of shared memory. A local_store is checked against the reads of
// its own iteration stage by stage: a read of another stage of its buffer (differentStages: i % S against
// (i + c) % S, or two different constants) does not conflict with it; reads of earlier iterations or other blocks
// still do.
//
// Control flow: `if` joins the states of its two branches (union); a loop's body is analyzed from the union of
// the state on entry and the state at the end of the body (the back edge), iterated to a fixed point, so a body
// whose end touches bytes that its start touches conflicts at that op. What is pending on entry and conflicts with
// an access anywhere in the body gets a barrier before the loop (run once; insert-barriers drops it where one the
// body needs anyway orders the same), so only the back edge's conflicts put barriers in the body. Barriers already
// in the IR reset the state.
// A warp_specialize's consumer region is analyzed as straight-line code (its barriers are the consumers'); its
// producer region may only issue TMA copies, which mbarriers order, never a barrier.
#pragma once

#include <vector>

#include "ir/IR.h"

namespace tessera::transforms {

// Inserts a `barrier` before every op that conflicts, given the barriers inserted before it; returns the inserted
// barriers. Some may be redundant (placed against a state a later loop iteration of the analysis superseded).
std::vector<ir::Op*> insertConflictBarriers(ir::Function& f);

// Whether some op of `f` conflicts with the barriers as they are (no barrier is needed when false).
bool hasSharedMemoryConflict(ir::Function& f);

}  // namespace tessera::transforms
