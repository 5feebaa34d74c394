// ptxas, NVIDIA's PTX assembler, run as a separate program: ahead-of-time exports embed a cubin next to the PTX
// when it is installed, so a launch on a matching GPU skips the driver's PTX JIT.
#pragma once

#include <optional>
#include <string>

namespace tessera::jit::aot {

// `explicitPath` when given (throws tessera::Error when it is not an executable file); otherwise $TESSERA_PTXAS,
// /usr/local/cuda/bin/ptxas, then ptxas on $PATH; nullopt when none exists.
std::optional<std::string> findPtxas(const std::string& explicitPath = "");

// Assembles `ptx` for `arch` ("sm_90a") into a cubin. Throws tessera::Error with ptxas's log when it fails.
std::string assembleCubin(const std::string& ptxas, const std::string& ptx, const std::string& arch,
                          const std::string& kernelName);

}  // namespace tessera::jit::aot
