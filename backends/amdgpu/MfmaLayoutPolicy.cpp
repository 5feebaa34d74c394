#include "backends/amdgpu/MfmaLayoutPolicy.h"

#include <algorithm>

#include "backends/amdgpu/MfmaFragments.h"
#include "backends/common/TensorCoreDot.h"
#include "ir/IR.h"
#include "transforms/analysis/ChainedDots.h"

namespace tessera::backends::amdgpu {

std::optional<ir::Layout> mfmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (options.warpSize != kMfmaWaveSize) return std::nullopt;
  const std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, kMfmaTiles);
  if (!shape) return std::nullopt;
  if (shape->M % (kMfmaM * options.numWarps) == 0 && transforms::isChainedDot(dot))
    return ir::Layout::blocked({4, 1}, {4, 16}, {options.numWarps, 1}, {1, 0});
  return ir::Layout::blocked({4, 1}, {4, 16}, {1, options.numWarps}, {1, 0});
}

ir::Layout mfmaOperandLdsLayout(int64_t K, unsigned index) {
  const MfmaSwizzle s = mfmaSwizzleFor(K);
  return ir::Layout::shared(kMfmaOperandElements, s.perPhase, s.maxPhase,
                            index == 0 ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1});
}

namespace {

// The LDS that operand buffers in `stages` stages would take for every MFMA dot of the function holding `dot`: both
// operands of each, whether or not they come from loads, so the sum does not change while async-copy-dot-operands
// rewrites the function one operand at a time.
int64_t operandBufferBytes(const ir::Op& dot, int64_t stages) {
  auto bytesOf = [&](const ir::Op& d) -> int64_t {
    std::optional<TensorCoreDot> s = matchTensorCoreDot(d, kMfmaTiles);
    if (!s) return 0;
    return stages * (s->M * s->K + s->K * s->N) * d.operand(0)->type().element().storageBytes();
  };
  ir::Function* f = dot.parentBlock() ? dot.parentBlock()->parentFunction() : nullptr;
  if (!f) return bytesOf(dot);
  int64_t total = 0;
  f->walk([&](ir::Op* op) {
    if (op->is(ir::OpKind::Dot)) total += bytesOf(*op);
  });
  return total;
}

}  // namespace

std::optional<ir::Layout> mfmaOperandSharedLayout(const ir::Op& dot, unsigned index,
                                                  const transforms::PassOptions& options) {
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, kMfmaTiles);
  if (options.warpSize != kMfmaWaveSize || !shape || index > 1) return std::nullopt;
  // gfx9's LDS is 64 KiB: where the copies of the operands would not fit in it, the dots stage their operands in
  // their own scratch instead (one copy, live only while the dot runs). pipeline-loops takes fewer stages than
  // num_stages where they would not fit, but not fewer than 2: those must.
  const int64_t stages = std::min<int64_t>(options.numStages, 2);
  if (options.maxSharedBytes > 0 && operandBufferBytes(dot, stages) > options.maxSharedBytes) return std::nullopt;
  return mfmaOperandLdsLayout(shape->K, index);
}

}  // namespace tessera::backends::amdgpu
