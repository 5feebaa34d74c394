// CPU time, not wall time: the benchmarks run on shared machines, where other work would inflate wall times.
#pragma once

#include <functional>
#include <vector>

namespace tessera::bench {

double threadCpuSeconds();    // of the calling thread
double childrenCpuSeconds();  // of the child processes this one has waited for, together
double cpuSecondsOf(const std::function<void()>& body);  // the calling thread's CPU time spent in `body`
double median(std::vector<double> values);                // of a non-empty list

}  // namespace tessera::bench
