#include "backends/amdgpu/MfmaLayoutPolicy.h"

#include "backends/amdgpu/MfmaFragments.h"
#include "backends/common/TensorCoreDot.h"
#include "ir/IR.h"

namespace tessera::backends::amdgpu {

std::optional<ir::Layout> mfmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (options.warpSize != kMfmaWaveSize || !matchTensorCoreDot(dot, kMfmaTiles)) return std::nullopt;
  return ir::Layout::blocked({4, 1}, {4, 16}, {1, options.numWarps}, {1, 0});
}

}  // namespace tessera::backends::amdgpu
