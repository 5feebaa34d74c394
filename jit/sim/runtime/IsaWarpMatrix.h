// The warp-matrix semantics the runtime uses by default: WarpMatrix.{h,cpp} (written from the PTX and AMD ISA
// documents) behind the runtime's WarpMatrixSemantics interface.
#pragma once

#include "jit/sim/runtime/WarpMatrixSemantics.h"

namespace tessera::sim {

const WarpMatrixSemantics& isaWarpMatrix();

}  // namespace tessera::sim
