// IR that LLVM 19's AMDGPU instruction selection cannot select, rewritten after the optimizer (which would fold
// the rewrite back) into IR it can. Each rewrite computes the same values.
//   - i1 -> bf16 (uitofp/sitofp, scalar or vector) aborts with "Cannot select: bf16 = uint_to_fp": converted
//     through f32 instead (0 and +-1 are exact in both).
#pragma once

#include <llvm/IR/Module.h>

namespace tessera::backends::amdgpu {

void rewriteUnselectableIR(llvm::Module& m);

}  // namespace tessera::backends::amdgpu
