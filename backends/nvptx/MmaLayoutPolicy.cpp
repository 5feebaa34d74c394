#include "backends/nvptx/MmaLayoutPolicy.h"

#include "backends/common/TensorCoreDot.h"
#include "ir/IR.h"

namespace tessera::backends::nvptx {

std::optional<ir::Layout> mmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (options.warpSize != kMmaWarpSize || !matchTensorCoreDot(dot, kMmaTiles)) return std::nullopt;
  return ir::Layout::blocked({1, 2}, {8, 4}, {1, options.numWarps}, {1, 0});
}

}  // namespace tessera::backends::nvptx
