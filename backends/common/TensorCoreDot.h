// Pieces shared by the tensor-core `dot` lowerings of the targets (NVPTX mma.sync, AMDGPU MFMA).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/common/LoweringHooks.h"
#include "backends/common/ThreadMap.h"
#include "transforms/AssignLayouts.h"

namespace tessera::backends {

// One tensor-core instruction a target offers for dots: its input and accumulator element kinds and its tile.
// F32 inputs stand for tf32: such an instruction reads only the top 10 mantissa bits, so it serves only dots that
// allow it (input_precision = "tf32").
struct TensorCoreTile {
  ir::ScalarKind input, accumulator;
  int64_t m, n, k;
};

struct TensorCoreDot {
  TensorCoreTile tile;  // the instruction that runs it
  int64_t M, N, K;
};

// The dot's shape and instruction if it is a tensor-core candidate: rank-2 operands of one element type (with
// `mixedFp8`, for instructions that take it, also one fp8 format in A and the other in B; the tile matches A's),
// an accumulator equal to the result type, and the first of `tiles` whose element kinds match and whose tile
// divides M, N and K; nullopt otherwise (the FMA path runs). Used both by the layout policies (before layouts
// exist) and by the lowerings.
std::optional<TensorCoreDot> matchTensorCoreDot(const ir::Op& dot, std::span<const TensorCoreTile> tiles,
                                                bool mixedFp8 = false);
// Why matchTensorCoreDot refused `dot`, in words for errors and the dot report: what `instructions` ("mma.sync",
// ...) take, from `tiles`, and what this dot is ("f32 x f32 -> f32, M x N x K = 64 x 64 x 32").
std::string tensorCoreRefusal(const ir::Op& dot, std::span<const TensorCoreTile> tiles,
                              const std::string& instructions);

// Whether B [K, N] of `dot` is K-contiguous where a tensor-core lowering finds it: in the shared buffer a
// local_load reads it from (transforms::dotOperandBuffer), laid out with K fastest; or, before async-copy-dot-
// operands, in the load the pass would copy (transforms::dotOperandSourceLoad), whose blocked layout runs fastest
// along K (a transposed B, as attention's K^T read from K's rows is). A buffer laid out K-major then receives each
// thread's contiguous bytes of such a load in one run. False for a desc_load (its block has N innermost).
bool dotBKContiguous(const ir::Op& dot);

// A target's layout policy for tensor-core dots: the accumulator (operand 2) and the result of a qualifying dot get
// `accumulatorLayout`'s layout (the instruction's output fragments); its a and b operands are read from shared
// buffers laid out as `operandSharedLayout` says, when one is given and answers; everything else follows the
// default policy.
class TensorCoreLayoutPolicy : public transforms::LayoutPolicy {
 public:
  using AccumulatorLayoutFn = std::optional<ir::Layout> (*)(const ir::Op&, const transforms::PassOptions&);
  using OperandSharedLayoutFn = std::optional<ir::Layout> (*)(const ir::Op&, unsigned, const transforms::PassOptions&);
  TensorCoreLayoutPolicy(const transforms::PassOptions& options, AccumulatorLayoutFn accumulatorLayout,
                         OperandSharedLayoutFn operandSharedLayout = nullptr)
      : options_(options),
        accumulatorLayout_(accumulatorLayout),
        operandSharedLayout_(operandSharedLayout),
        fallback_(options) {}
  std::optional<ir::Layout> operandLayout(const ir::Op& op, unsigned index) const override;
  std::optional<ir::Layout> resultLayout(const ir::Op& op, unsigned index) const override;
  std::optional<ir::Layout> dotOperandSharedLayout(const ir::Op& dot, unsigned index) const override;

 private:
  transforms::PassOptions options_;
  AccumulatorLayoutFn accumulatorLayout_;
  OperandSharedLayoutFn operandSharedLayout_;
  transforms::DefaultLayoutPolicy fallback_;
};

// The warp's part of coordinate `dim`: the XOR over the set bits j of `warp` of bases[j][dim] (ThreadMap's
// linear description of how warps spread over the tile).
llvm::Value* warpCoordinatePart(IRBuilder& b, llvm::Value* warp, const std::vector<Coords>& bases, int dim);

}  // namespace tessera::backends
