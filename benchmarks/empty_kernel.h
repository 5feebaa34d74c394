// The kernel of the launch-overhead benchmark: typical launch arguments (two arrays, an int, a float, a Const)
// and no body, so a launch costs only the launch path itself. Included by launch_overhead.cpp and loaded by
// launch_overhead.py (tessera.load reads the TESSERA_PY_KERNEL line).
#pragma once

#include "tessera/tessera.h"

namespace bench {
using namespace tessera;

inline void empty(Ptr<f32> x, Ptr<f32> y, Int n, Float alpha, Const<int> BLOCK) {}

inline KernelDef empty_kernel() { return kernel("empty", empty, {"x", "y", "n", "alpha", "BLOCK"}); }

}  // namespace bench

// tessera.load binds at global scope, so the binding line names the kernel with its namespace.
TESSERA_PY_KERNEL(bench::empty, x, y, n, alpha, BLOCK);
