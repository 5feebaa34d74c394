// Running a kernel's programs on the emulator: the entry point of the runtime half. The LLVM half (the rewriting of
// a GPU module into host code, its JIT and the "sim" DeviceRuntime) builds a Program from a compiled kernel and
// calls launch(); tests can also write programs by hand as C++ functions that call the SimABI.h functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jit/sim/SimABI.h"
#include "jit/sim/runtime/Checks.h"
#include "jit/sim/runtime/FiberStack.h"
#include "jit/sim/runtime/GlobalMemoryChecker.h"
#include "jit/sim/runtime/IsaWarpMatrix.h"
#include "jit/sim/runtime/Report.h"

namespace tessera::sim {


// A compiled kernel as the emulator runs it. Programs are one-dimensional blocks of numWarps * warpSize threads
// (thread ids on axes 1 and 2 are 0), as the backends launch them.
struct Program {
  std::string kernel;
  std::string target = "nvptx";  // "nvptx" or "amdgpu"
  uint32_t warpSize = 32;        // 32, or 64 (AMD wave64)
  uint32_t numWarps = 4;
  uint32_t sharedBytes = 0;      // the kernel's shared memory (static and dynamic)
  SiteTable sites;
  void (*entry)(void** params) = nullptr;  // runs one thread of the kernel
  std::vector<std::string> printfFormats;  // amdgpu: the module's llvm.printf.fmts strings
  // nvptx: programs per thread-block cluster along each axis (sm_90; each divides the grid's, at most 16 programs
  // in all). A cluster's programs run together (Cluster.h).
  std::array<uint32_t, 3> clusterDims{1, 1, 1};
};

struct LaunchConfig {
  Checks checks;                           // which checks report (Checks.h; bounds are always checked)
  std::vector<MemoryRange> allocations;    // the device memory the kernel may touch
  unsigned threads = 0;                    // host threads; 0: the hardware's; 1: in order, on the caller's thread
  uint32_t maxFindingsPerKind = 10;        // findings kept per kind (all are counted)
  size_t stackBytes = kDefaultFiberStackBytes;  // per GPU thread
  bool echoOutput = false;                 // also print the kernel's printf output on stdout
  uint32_t printfBufferBytes = 1u << 20;   // amdgpu
  // mma / ldmatrix semantics: the ISA's (WarpMatrix.h); tests plant others. Null: reported as unsupported.
  const WarpMatrixSemantics* matrix = &isaWarpMatrix();
};

// Runs every program of `grid` and returns what happened. Throws tessera::Error for an invalid program or grid
// (nothing runs then); what the kernel does wrong is in the report (Report::throwIfFailed turns it into an error).
Report launch(const Program& program, const std::array<uint32_t, 3>& grid, void** params,
              const LaunchConfig& config = {});

}  // namespace tessera::sim
