// The NVPTX layout policy: a `dot` that the mma.sync lowering can run (f16 or bf16 inputs, f32 accumulator,
// M % 16 == 0, N % 8 == 0, K % 16 == 0, warps of 32) gets its accumulator and result in the blocked layout whose
// per-thread registers are the mma C/D fragments: sizePerThread [1, 2], threadsPerWarp [8, 4], warpsPerCTA
// [1, numWarps], order [1, 0]. A warp's 8 lanes rows repeat every 8 rows, so a thread holds rows g and g + 8 of
// every 16-row block, columns 2 * (lane % 4) + {0, 1}. Everything else follows the default policy.
#pragma once

#include <optional>

#include "transforms/AssignLayouts.h"

namespace tessera::backends::nvptx {

// The mma accumulator layout for `dot`, or nullopt when the dot is not an mma candidate.
std::optional<ir::Layout> mmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options);

class NVPTXLayoutPolicy : public transforms::LayoutPolicy {
 public:
  explicit NVPTXLayoutPolicy(const transforms::PassOptions& options) : options_(options), fallback_(options) {}
  std::optional<ir::Layout> operandLayout(const ir::Op& op, unsigned index) const override;
  std::optional<ir::Layout> resultLayout(const ir::Op& op, unsigned index) const override;

 private:
  transforms::PassOptions options_;
  transforms::DefaultLayoutPolicy fallback_;
};

}  // namespace tessera::backends::nvptx
