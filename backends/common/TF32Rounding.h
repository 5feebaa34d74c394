// Rounding f32 to tf32 for dots with input_precision = "tf32": the FMA path rounds each input, the tensor-core
// path each staged element (the instruction itself only ignores the low mantissa bits). Both round as the
// interpreter does (ir::roundF32ToTF32), so every path gives the same products.
#pragma once

#include "backends/common/LoweringHooks.h"

namespace tessera::backends {

// The f32 `x` rounded to tf32 (10 mantissa bits, the low 13 bits zero), nearest-even; inf and NaN unchanged.
llvm::Value* roundToTF32(IRBuilder& b, llvm::Value* x);

}  // namespace tessera::backends
