// What NVIDIA's ptxas (run as a separate program, when installed) says a PTX kernel uses: registers, spills,
// stack and static shared memory, from `ptxas -v`. The autotuner prunes configs that spill with it before any
// launch; the benchmarks print it.
#pragma once

#include <optional>
#include <string>

namespace tessera::jit {

struct PtxasUsage {
  int registers = 0;
  int stackBytes = 0;         // "N bytes stack frame"
  int spillStoreBytes = 0;
  int spillLoadBytes = 0;
  int staticSharedBytes = 0;  // "N bytes smem": shared memory declared in the PTX (not dynamic shared memory)
};

// `explicitPath` when given (throws tessera::Error when it is not an executable file); otherwise $TESSERA_PTXAS,
// /usr/local/cuda/bin/ptxas, then ptxas on $PATH; nullopt when none exists.
std::optional<std::string> findPtxas(const std::string& explicitPath = "");

// Reads `ptxas -v` output. Throws tessera::Error quoting it when it lacks the register line (a format this parser
// does not know, or a failed run).
PtxasUsage parsePtxasVerbose(const std::string& log);

// Runs `ptxas -v -arch=<arch>` on `ptx` in a private temporary directory. Throws tessera::Error with ptxas's
// output when it fails.
PtxasUsage ptxasUsage(const std::string& ptxas, const std::string& ptx, const std::string& arch,
                      const std::string& kernelName);

}  // namespace tessera::jit
