// The JIT compile pipeline: verified tile IR in, a loadable GPU artifact out. jit/Compiler.cpp reads top to
// bottom as the list of stages; each stage's IR is kept in the result, dumped and timed when asked (docs/JIT.md,
// "Dumps and timings").
#pragma once

#include "backends/Target.h"
#include "ir/IR.h"
#include "jit/CompiledKernel.h"

namespace tessera::jit {

// The most shared-memory stages a pipelined loop may use (TargetOptions::numStages).
inline constexpr int kMaxNumStages = 8;
// Throws tessera::Error, `context` first, unless `matrixInstrSize` (TargetOptions::matrixInstrSize, Python's
// matrix_instr_nonkdim) is 0 (the target's choice), 16 or 32.
void checkMatrixInstrSize(const std::string& context, int matrixInstrSize);
// Throws tessera::Error, `context` first, unless `clusterDims` (LaunchOptions::clusterDims) is 1x1x1, or at least
// 1 along each axis and at most 8 programs in all, for nvptx at sm_90 or later, and not `persistent`.
void checkClusterDims(const std::string& context, const std::string& target, const std::string& arch,
                      const std::array<int, 3>& clusterDims, bool persistent);

// Compiles a copy of `f` for `target` (the input is not modified) through the default pipeline
// (transforms/Pipeline.h). Throws tessera::Error naming the kernel and the failing stage: invalid input, a pass
// that fails or leaves invalid IR, an op the target cannot lower.
CompiledKernel compile(const ir::Function& f, const backends::Target& target, const backends::TargetOptions& options,
                       KeptIR kept = KeptIR::All);

}  // namespace tessera::jit
