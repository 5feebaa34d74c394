// What a shared layout (#shared or #linear_shared) over a tile keeps consecutive in memory: the question every
// vectorized access of a shared buffer asks (the lowering's stores and loads, stage-copies-in-registers' choice of
// the layouts its copies store from).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/Layout.h"

namespace tessera::ir {

// How many elements along `dim`, from a multiple of that many, are consecutive in memory whatever the other
// coordinates: #shared, vec along its fastest dimension and 1 along the others; #linear_shared, the run of dim's
// low bits onto offsets 1, 2, 4, ... that no other coordinate bit's offset reaches into (a swizzle of units
// narrower than the run cuts it: AMD's 8-byte chunks under 16-byte copies). 1 for other layouts.
int64_t sharedRunAlong(const Layout& shared, const std::vector<int64_t>& shape, int dim);

// The dimension offset 1 runs along (#shared: its order's first).
int sharedFastestDim(const Layout& shared, const std::vector<int64_t>& shape);

}  // namespace tessera::ir
