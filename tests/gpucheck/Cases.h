// The GPU-vs-interpreter cases: the tutorial kernels at their default block sizes, and op kernels covering
// the op families of docs/IR.md on several dtypes. Each case carries random inputs (fixed seeds) and is run by
// checkAgainstInterpreter (GpuCheck.h) from tests/unit/jit_gpu_test.cpp and tools/tessera-gpu-check.cpp; the
// tests/unit/jit_compile_test.cpp compiles every one without a GPU.
#pragma once

#include <vector>

#include "tests/gpucheck/GpuCheck.h"

namespace tessera::gpucheck {

std::vector<CheckCase> allCases();

// The kernel of the cases "dot into a halved accumulator": acc = dot(A_k, B_k, acc * 0.5) over K for one BM x BN
// tile (A [BM, K], B [K, BN] row-major; parameters a, b, c, K and the Consts BM, BN, BK). On sm_90a its wgmma stays
// in flight across iterations behind a wait for the carried value (transforms/PipelineLoops.cpp).
KernelDef halvedAccumulatorDot();

}  // namespace tessera::gpucheck
