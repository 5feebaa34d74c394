// The result of compiling one specialized kernel: the loadable artifact plus everything needed to launch it
// and to inspect how it was produced. Plain data, so the cache can store and reload it byte for byte.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tessera::jit {

// The texts a compile keeps beside its binary (CompiledKernel). Printing them is not free: on the 128x128x64
// matmul, the tile IR after each of 17 passes and the LLVM IR as lowered and optimized were 30% of jit::compile.
//   All:         the tile IR after every pass (irAfterPass, "input" first), the LLVM IR as lowered and
//                optimized: what inspection wants (JitKernel::compileOnly, Python's compile(), tessera-aot).
//   ForLaunch:   the tile IR after the last pass only (irAfterPass holds one entry; the LLVM IR stays empty):
//                what a launch on a GPU keeps.
//   ForEmulator: ForLaunch and the optimized LLVM IR, which the emulator runs (DeviceRuntime::loadsLLVMIR).
// TESSERA_DUMP_IR, TESSERA_DUMP_LLVM and TESSERA_DUMP_DIR print and keep everything either way.
enum class KeptIR { All, ForLaunch, ForEmulator };

// How the lowering ran one dot (backends::kDotsMetadata): the instruction ("wgmma m64n128k16 f16", "mma.sync
// m16n8k16 bf16", "v_mfma_f32_32x32x8f16", "fma") and, where a faster one was passed over or none could run it,
// why ("not wgmma: ...", mma.sync's refusal); `location` is the dot's source line.
struct DotReport {
  std::string location, instruction, note;
  bool operator==(const DotReport&) const = default;
};

struct CompiledKernel {
  std::string name;         // the kernel's (function's) name: the symbol to look up in the loaded module
  std::string target;       // "nvptx", "amdgpu"
  std::string arch;         // "sm_90a", "gfx942", ...
  std::string format;       // "ptx" or "hsaco"
  int numWarps = 0;
  int warpSize = 0;
  int64_t sharedBytes = 0;  // dynamic shared memory the launch must provide (function attribute smem_bytes)
  std::string binary;       // PTX text or code-object bytes
  std::string llvmIR;       // LLVM IR as lowered, before LLVM's optimizations
  std::string optimizedLLVMIR;  // LLVM IR after Target::optimize: the module Target::emit turned into `binary`
  std::vector<std::pair<std::string, std::string>> irAfterPass;  // (stage, tile IR text), in pipeline order
  // The runtime parameters whose tensor descriptor carries a TMA tensor map the launch must encode, and the
  // swizzle (0, 32, 64 or 128 bytes) the kernel's shared buffers expect of it.
  std::vector<std::pair<unsigned, int>> tensorMaps;  // (parameter, swizzle bytes)
  // A persistent kernel (transforms/MakePersistent.cpp): it takes the launch grid as three i32 arguments after the
  // kernel's own, and its programs loop over the grid's tiles; a launch starts at most as many as are resident.
  bool persistent = false;
  // Warps beyond numWarps that a warp-specialized kernel's program also runs (its producers; 0 without).
  int producerWarps = 0;
  // Groups of numWarps consumer warps, each running its own tiles (ping-pong consumers; 1 without).
  int consumerGroups = 1;
  // The thread-block clusters its launches group programs into (LaunchOptions::clusterDims; 1x1x1: none).
  std::array<int, 3> clusterDims{1, 1, 1};
  std::vector<DotReport> dots;  // one per dot, in program order

  int threadsPerProgram() const { return (numWarps * consumerGroups + producerWarps) * warpSize; }
  bool operator==(const CompiledKernel&) const = default;
};

}  // namespace tessera::jit
