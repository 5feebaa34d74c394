// Warp shuffles of any scalar the lowering holds (integers and floats of up to 64 bits, pointers), moved as 32-bit
// pieces through the target's LoweringHooks.
#pragma once

#include "backends/common/LoweringHooks.h"

namespace tessera::backends {

// The value of `v` in lane `lane ^ laneMask` of this warp.
llvm::Value* shuffleXor(IRBuilder& b, LoweringHooks& hooks, llvm::Value* v, int laneMask);
// The value of `v` in lane `lane` (i32, per thread) of this warp.
llvm::Value* shuffleIdx(IRBuilder& b, LoweringHooks& hooks, llvm::Value* v, llvm::Value* lane);

}  // namespace tessera::backends
