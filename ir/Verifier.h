// The verifier: rejects every ill-formed program. Errors are tessera::Error whose message names the op
// ("'add' operands must have the same type, got tile<4xf32> and tile<4xi32>") and whose location is the op's.
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"

namespace tessera::ir {

// Throws tessera::Error on the first problem found.
void verify(const Module& m);
void verify(const Function& f);
// Collects every problem instead of stopping at the first (for tools and tests).
std::vector<Error> verifyAll(const Function& f);

}  // namespace tessera::ir
