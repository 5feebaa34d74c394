// The command line that benchmarks/compile_time and benchmarks/kernel_resources share.
#pragma once

#include <string>

namespace tessera::bench {

struct BenchOptions {
  std::string csvPath;   // --csv FILE: also write the table as CSV
  std::string only;      // --only SUBSTRING: only the cases whose name contains it
  std::string ptxDir;    // --ptx-dir DIR: also write each case's PTX to DIR/<case>.ptx
  std::string ptxas;     // --ptxas PATH (default kDefaultPtxas)
  int runs = 3;          // --runs N: each time is the median of N runs

  bool selects(const std::string& caseName) const { return caseName.find(only) != std::string::npos; }
};

// Parses argv; on a bad or unknown argument prints `what` and the usage to stderr and exits with status 2.
BenchOptions parseBenchOptions(int argc, char** argv, const std::string& what);

}  // namespace tessera::bench

namespace tessera::bench {

// With --ptx-dir, writes `ptx` to DIR/<caseName>.ptx (creating DIR); without it, does nothing.
void savePtx(const BenchOptions& options, const std::string& caseName, const std::string& ptx);

}  // namespace tessera::bench
