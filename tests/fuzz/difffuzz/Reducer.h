// Delta debugging over a failing Program: removes statements (halves, quarters, ... single ones), replaces loops
// and branches by their bodies, simplifies constants, masks, trip counts and addressing, shrinks every tile
// dimension, then the dimensions of one statement's tile and each class of tied dimensions alone
// (ShapeClasses.h), the grid and the warp count, and drops unused buffers, keeping each change while the program
// still fails the same way. Deterministic: the same program and predicate give the same result.
#pragma once

#include <functional>
#include <iosfwd>

#include "tests/fuzz/difffuzz/Program.h"

namespace tessera::fuzz {

struct ReduceStats {
  int checks = 0;  // predicate evaluations
  size_t statementsBefore = 0, statementsAfter = 0;
};

// `stillFails` says whether a candidate shows the original failure. Stops after `maxChecks` evaluations.
Program reduceProgram(Program p, const std::function<bool(const Program&)>& stillFails, int maxChecks,
                      ReduceStats& stats);

}  // namespace tessera::fuzz
