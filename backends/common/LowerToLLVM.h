// Entry point of the shared lowering: a laid-out tile-IR function -> one LLVM kernel, with the target's
// specifics supplied by LoweringHooks. See KernelLowering.h for how values are represented.
// The shared-memory scratch each op uses follows the contract in transforms/analysis/SharedScratch.h.
#pragma once

#include <memory>

#include "backends/common/LoweringHooks.h"
#include "ir/IR.h"

namespace tessera::backends {

struct LoweringOptions {
  int numWarps = 4;
  bool fastMath = true;
};

// The module's named metadata that lists its tensor-map descriptor parameters: one !{i32 argNo, i32 swizzle bytes}
// per parameter whose tensor map the runtime must encode (jit/Compiler.cpp copies it to CompiledKernel).
inline constexpr const char* kTensorMapsMetadata = "tessera.tensor_maps";
// The module's named metadata that says how each dot was lowered: one !{!"location", !"instruction", !"note"} per
// dot, in program order (KernelLowering::noteDot; jit/Compiler.cpp copies it to CompiledKernel::dots).
inline constexpr const char* kDotsMetadata = "tessera.dots";

// Lowers `f` into a new module. The module's triple and data layout are left to the caller (the target).
// Throws tessera::Error naming the op for anything it cannot lower.
std::unique_ptr<llvm::Module> lowerFunction(const ir::Function& f, llvm::LLVMContext& ctx, LoweringHooks& hooks,
                                            const LoweringOptions& opts);

}  // namespace tessera::backends
