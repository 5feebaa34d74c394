// Pieces shared by the tensor-core `dot` lowerings of the targets (NVPTX mma.sync, AMDGPU MFMA).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/common/LoweringHooks.h"
#include "backends/common/ThreadMap.h"

namespace tessera::backends {

struct TensorCoreDot {
  ir::ScalarKind input;  // F16 or BF16
  int64_t M, N, K;
};

// The dot's shape if it is a tensor-core candidate: f16 or bf16 operands of one type, an f32 accumulator equal to
// the result type, and M, N, K multiples of the instruction's tile; nullopt otherwise (the FMA path runs).
std::optional<TensorCoreDot> matchTensorCoreDot(const ir::Op& dot, int64_t tileM, int64_t tileN, int64_t tileK);

// The warp's part of coordinate `dim`: the XOR over the set bits j of `warp` of bases[j][dim] (ThreadMap's
// linear description of how warps spread over the tile).
llvm::Value* warpCoordinatePart(IRBuilder& b, llvm::Value* warp, const std::vector<Coords>& bases, int dim);

}  // namespace tessera::backends
