// A small work-sharing pool for independent jobs (the autotuner compiles its configs with it): `threads` workers
// take indices from a shared counter until none are left. Each job's exception is kept and rethrown by the
// caller's own code through the returned vector, so one failing job never stops the others.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <vector>

namespace tessera::jit {

// Runs body(0) .. body(n - 1) on min(threads, n) threads (the calling thread is one of them) and waits for all.
// Returns, per index, the exception its body threw (null when it returned).
std::vector<std::exception_ptr> parallelFor(size_t n, unsigned threads, const std::function<void(size_t)>& body);

// The worker count to use by default: TESSERA_COMPILE_THREADS when set (>= 1), else the hardware's thread count.
unsigned defaultCompileThreads();

}  // namespace tessera::jit
