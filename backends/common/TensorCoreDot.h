// Pieces shared by the tensor-core `dot` lowerings of the targets (NVPTX mma.sync, AMDGPU MFMA).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/common/LoweringHooks.h"
#include "backends/common/ThreadMap.h"
#include "transforms/AssignLayouts.h"

namespace tessera::backends {

struct TensorCoreDot {
  ir::ScalarKind input;  // F16 or BF16
  int64_t M, N, K;
};

// The dot's shape if it is a tensor-core candidate: f16 or bf16 rank-2 operands of one type, an f32 accumulator
// equal to the result type, and M, N, K multiples of the instruction's tile; nullopt otherwise (the FMA path runs).
// Used both by the layout policies (before layouts exist) and by the lowerings.
std::optional<TensorCoreDot> matchTensorCoreDot(const ir::Op& dot, int64_t tileM, int64_t tileN, int64_t tileK);

// A target's layout policy for tensor-core dots: the accumulator (operand 2) and the result of a qualifying dot get
// `accumulatorLayout`'s layout (the instruction's output fragments); everything else follows the default policy.
class TensorCoreLayoutPolicy : public transforms::LayoutPolicy {
 public:
  using AccumulatorLayoutFn = std::optional<ir::Layout> (*)(const ir::Op&, const transforms::PassOptions&);
  TensorCoreLayoutPolicy(const transforms::PassOptions& options, AccumulatorLayoutFn accumulatorLayout)
      : options_(options), accumulatorLayout_(accumulatorLayout), fallback_(options) {}
  std::optional<ir::Layout> operandLayout(const ir::Op& op, unsigned index) const override;
  std::optional<ir::Layout> resultLayout(const ir::Op& op, unsigned index) const override;

 private:
  transforms::PassOptions options_;
  AccumulatorLayoutFn accumulatorLayout_;
  transforms::DefaultLayoutPolicy fallback_;
};

// The warp's part of coordinate `dim`: the XOR over the set bits j of `warp` of bases[j][dim] (ThreadMap's
// linear description of how warps spread over the tile).
llvm::Value* warpCoordinatePart(IRBuilder& b, llvm::Value* warp, const std::vector<Coords>& bases, int dim);

}  // namespace tessera::backends
