// The NVPTX layout policy: a `dot` that the mma.sync lowering can run (f16 or bf16 inputs, f32 accumulator,
// M % 16 == 0, N % 8 == 0, K % 16 == 0, warps of 32) gets its accumulator and result in the blocked layout whose
// per-thread registers are the mma C/D fragments: sizePerThread [1, 2], threadsPerWarp [8, 4], warpsPerCTA
// [1, numWarps], order [1, 0]. A warp's 8 lanes rows repeat every 8 rows, so a thread holds rows g and g + 8 of
// every 16-row block, columns 2 * (lane % 4) + {0, 1}. Everything else follows the default policy.
#pragma once

#include <optional>

#include "backends/common/TensorCoreDot.h"
#include "transforms/AssignLayouts.h"

namespace tessera::backends::nvptx {

// The mma accumulator layout for `dot`, or nullopt when the dot is not an mma candidate.
std::optional<ir::Layout> mmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options);

class NVPTXLayoutPolicy : public TensorCoreLayoutPolicy {
 public:
  explicit NVPTXLayoutPolicy(const transforms::PassOptions& options) : TensorCoreLayoutPolicy(options, &mmaAccumulatorLayout) {}
};

}  // namespace tessera::backends::nvptx
