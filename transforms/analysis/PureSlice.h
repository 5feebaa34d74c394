// The pure ops that compute some values, to recompute them elsewhere: another iteration's copy offsets
// (pipeline-loops), a producer's own loop bounds (warp specialization), a skipped tile's iteration counts
// (ping-pong-consumers).
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/Builder.h"
#include "ir/IR.h"

namespace tessera::transforms {

// The ops of `body` (directly in it) that compute `roots` from values defined outside it or from its arguments, in
// body order; false when one of them is not pure (or holds a region), so it could not be recomputed.
bool pureSliceOf(ir::Block& body, const std::vector<ir::Value*>& roots, std::vector<ir::Op*>& slice);

// Clones `slice` at `b` with `mapping` (original values -> the values to use instead), extending it with the
// clones' results.
void cloneSlice(ir::Builder& b, const std::vector<ir::Op*>& slice,
                std::unordered_map<const ir::Value*, ir::Value*>& mapping);

}  // namespace tessera::transforms
