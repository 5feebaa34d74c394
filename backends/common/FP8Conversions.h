// Software conversions for the storage-only OCP FP8 formats (held as i8 in registers), shared by every target:
// no hardware conversion instruction exists on all supported GPUs (sm_80 has none).
#pragma once

#include "backends/common/LoweringHooks.h"
#include "ir/Types.h"

namespace tessera::backends {

// fp8 byte (`from` is f8e4m3 or f8e5m2) -> f32, exactly.
llvm::Value* decodeFP8(IRBuilder& b, llvm::Value* byte, ir::Type from);
// f32 or f64 -> fp8 byte: round to nearest even, saturate to the largest finite value (infinities too), NaN ->
// the canonical NaN with the sign kept: the semantics of `cast` (the interpreter's roundTo then encode).
llvm::Value* encodeFP8(IRBuilder& b, llvm::Value* x, ir::Type to);

}  // namespace tessera::backends
