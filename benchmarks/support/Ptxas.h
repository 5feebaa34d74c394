// Runs NVIDIA's ptxas on PTX and reads back what `ptxas -v` says about the kernel: the resources it uses and how
// long it took. The benchmarks use it only where ptxas is installed; without it they say so.
#pragma once

#include <string>

#include "jit/PtxasUsage.h"

namespace tessera::bench {

inline constexpr const char* kDefaultPtxas = "/usr/local/cuda/bin/ptxas";

// What ptxas -v reports about the kernel (jit/PtxasUsage.h), and how long ptxas took.
struct PtxasReport : jit::PtxasUsage {
  double reportedMs = 0;      // "Compile time = N ms", ptxas's own measure (0 if it does not say), median
  double cpuSeconds = 0;      // the ptxas process's CPU time (start-up included), median of the runs
};

bool ptxasInstalled(const std::string& ptxas);

// "13.0, V13.0.88" from `ptxas --version`, or "absent".
std::string ptxasVersion(const std::string& ptxas);

// Assembles `ptx` for `arch` `runs` times with -v. Throws tessera::Error with ptxas's output when it fails or
// when its report lacks the register line (a format this parser does not know).
PtxasReport runPtxas(const std::string& ptxas, const std::string& ptx, const std::string& arch, int runs);

}  // namespace tessera::bench
