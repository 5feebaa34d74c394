// Entry point of the shared lowering: a laid-out tile-IR function -> one LLVM kernel, with the target's
// specifics supplied by LoweringHooks. See KernelLowering.h for how values are represented.
#pragma once

#include <memory>

#include "backends/common/LoweringHooks.h"
#include "ir/IR.h"

namespace tessera::backends {

struct LoweringOptions {
  int numWarps = 4;
  bool fastMath = true;
};

// Lowers `f` into a new module. The module's triple and data layout are left to the caller (the target).
// Throws tessera::Error naming the op for anything it cannot lower.
std::unique_ptr<llvm::Module> lowerFunction(const ir::Function& f, llvm::LLVMContext& ctx, LoweringHooks& hooks,
                                            const LoweringOptions& opts);

// Bytes of shared-memory scratch the lowering of `op` needs at its `smem_offset` (0 when it needs none, or when it
// can remap registers without shared memory). The allocation pass must reserve at least this much.
int64_t requiredScratchBytes(const ir::Op& op, int numWarps, int warpSize);

}  // namespace tessera::backends
