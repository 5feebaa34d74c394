// ptxas, NVIDIA's PTX assembler, run as a separate program: ahead-of-time exports embed a cubin next to the PTX
// when it is installed, so a launch on a matching GPU skips the driver's PTX JIT.
#pragma once

#include <string>

#include "jit/PtxasUsage.h"  // findPtxas

namespace tessera::jit::aot {

// Assembles `ptx` for `arch` ("sm_90a") into a cubin. Throws tessera::Error with ptxas's log when it fails.
std::string assembleCubin(const std::string& ptxas, const std::string& ptx, const std::string& arch,
                          const std::string& kernelName);

}  // namespace tessera::jit::aot
