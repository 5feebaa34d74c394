// Counting a loop's iterations over a whole program, for what counts phases across it: a TMA copy's mbarrier
// completes one phase per copy, so the copy of a loop's iteration waits for a parity that depends on every copy
// the barrier saw before, in this program.
//
// A `for` in the function's body runs once per program: its iteration in the program is its own,
// (iv - lb) / step. A `for` directly in a persistent kernel's tile loop (make-persistent) runs once per tile:
// its iteration in the program is the iterations it ran in the program's earlier tiles (its "base") plus its own.
// The tile loop carries the base, one i32 per such loop: 0 before the first tile, plus the loop's trip count
// after it runs; the loop records which carried value is its base in the attribute `iteration_base` (the carried
// value's index), so that every pass asking gets the same one.
#pragma once

#include "ir/Builder.h"
#include "ir/IR.h"

namespace tessera::transforms {

// Whether `loop` is a `for` whose iterations can be counted over the program: one in the program's body
// (ir::programBody: the function's, or a persistent kernel's tile loop's).
bool countsProgramIterations(const ir::Op& loop);

// `loop`'s base: null for a loop in the function's body (0), else the tile loop's carried value for it, added to
// the tile loop on first request. `loop` must count program iterations.
ir::Value* iterationBase(ir::Op& loop);

// `loop`'s iteration in the program, an i32 built at `b` (inside the loop's body): base + (iv - lb) / step.
ir::Value* programIteration(ir::Builder& b, ir::Op& loop);

// Whether `op` is a persistent kernel's tile loop (make-persistent): what it holds outside its inner loops runs once
// per tile, and so once per iteration of it.
bool isTileLoop(const ir::Op& op);

// The tile loop's iteration in the program, an i32 built at `b` (inside its body): (iv - lb) / step.
ir::Value* tileOfProgram(ir::Builder& b, ir::Op& tiles);

// How many iterations a `for` from `lb` to `ub` by `step` (> 0) runs, an i32 built at `b`: (ub - lb + step - 1) /
// step when ub > lb, else 0.
ir::Value* tripCount(ir::Builder& b, ir::Value* lb, ir::Value* ub, ir::Value* step);

}  // namespace tessera::transforms
