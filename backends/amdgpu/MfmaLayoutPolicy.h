// The AMDGPU layout policy: a `dot` that the MFMA lowering can run (f16 or bf16 inputs, f32 accumulator,
// M, N, K multiples of 16, wave64) gets its accumulator and result in the blocked layout whose per-thread
// registers are the v_mfma_f32_16x16x16 C/D fragments: sizePerThread [4, 1], threadsPerWarp [4, 16],
// warpsPerCTA [1, numWarps], order [1, 0]: lane l holds rows 4 * (l / 16) + {0..3} of column l % 16 of every
// 16x16 block. Everything else follows the default policy.
#pragma once

#include <optional>

#include "transforms/AssignLayouts.h"

namespace tessera::backends::amdgpu {

// The MFMA accumulator layout for `dot`, or nullopt when the dot is not an MFMA candidate.
std::optional<ir::Layout> mfmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options);

class AMDGPULayoutPolicy : public transforms::LayoutPolicy {
 public:
  explicit AMDGPULayoutPolicy(const transforms::PassOptions& options) : options_(options), fallback_(options) {}
  std::optional<ir::Layout> operandLayout(const ir::Op& op, unsigned index) const override;
  std::optional<ir::Layout> resultLayout(const ir::Op& op, unsigned index) const override;

 private:
  transforms::PassOptions options_;
  transforms::DefaultLayoutPolicy fallback_;
};

}  // namespace tessera::backends::amdgpu
