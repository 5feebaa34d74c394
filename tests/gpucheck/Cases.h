// The GPU-vs-interpreter cases: the tutorial kernels at their default block sizes, and op kernels covering
// the op families of docs/IR.md on several dtypes. Each case carries random inputs (fixed seeds) and is run by
// checkAgainstInterpreter (GpuCheck.h) from tests/unit/jit_gpu_test.cpp and tools/tessera-gpu-check.cpp; the
// tests/unit/jit_compile_test.cpp compiles every one without a GPU.
#pragma once

#include <vector>

#include "tests/gpucheck/GpuCheck.h"

namespace tessera::gpucheck {

std::vector<CheckCase> allCases();

}  // namespace tessera::gpucheck
