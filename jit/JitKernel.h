// A GPU kernel handle over a KernelDef: compiles on the first launch of each specialization (see
// Specialization.h), through the compiled-kernel cache (memory, then disk), loads the binary through the target's
// DeviceRuntime (the CUDA driver for nvptx PTX, the HIP runtime for amdgpu code objects) and launches it.
// LaunchOptions::target picks the target; "auto" takes the first with a device (nvptx, then amdgpu);
// LaunchOptions::runtime launches on another runtime instead (the emulator).
//
//   tessera::jit::JitKernel add(tessera::kernels::vector_add_kernel());
//   DeviceBuffer x = DeviceBuffer::fromHost(hx), y = ..., out(n * 4);
//   add.launch({cdiv(n, 1024), 1, 1}, {x, y, out, n}, {{"BLOCK", 1024}}, {.numWarps = 4});
//
// compileOnly() runs the same specialization and compilation without a GPU, for inspecting the IR after every
// pass, the LLVM IR and the PTX or code object.
#pragma once

#include <array>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "jit/Cache.h"
#include "jit/CompiledKernel.h"
#include "jit/CudaDriver.h"
#include "jit/DeviceRuntime.h"
#include "jit/HipRuntime.h"
#include "jit/KernelArg.h"
#include "jit/LoadedKernel.h"
#include "jit/Specialization.h"
#include "tessera/Kernel.h"

namespace tessera::jit {

struct LaunchOptions {
  int numWarps = 4;
  int numStages = 3;  // shared-memory stages of pipelined loops; 1: no pipelining
  DeviceStream stream = nullptr;  // a cu::Stream or hip::Stream of the target's runtime; null: the default stream
  std::string target = "nvptx";   // "nvptx", "amdgpu", or "auto": the first target with a device
  std::string arch;               // empty: the GPU's own arch when launching, the target's default in compileOnly
  bool fastMath = true;
  // A persistent kernel (transforms/MakePersistent.cpp): the launch starts at most as many programs as the GPU
  // holds at once, and each loops over the grid's tiles. Same results; part of the specialization.
  bool persistent = false;
  // Warp specialization (sm_90a, transforms/PipelineLoops.cpp): one more warpgroup issues the TMA copies of the
  // kernel's main loop and the num_warps warps only wait for them; setmaxnreg moves registers to them. Same
  // results; part of the specialization.
  bool warpSpecialize = false;
  // Ping-pong consumers (sm_90a, transforms/PingPongConsumers.cpp; implies persistent and warpSpecialize): two
  // groups of num_warps consumer warps, each on its own tiles, one group's epilogue beside the other's main loop.
  // Same results; part of the specialization.
  bool pingPong = false;
  // The M and N of AMD's matrix instructions (Triton's matrix_instr_nonkdim): 16 (v_mfma_*_16x16x16), 32
  // (v_mfma_f32_32x32x8 for 16-bit dots that split into 32x32 blocks per wave), 0 the target's choice (16). Other
  // targets ignore it (one autotune config list serves every target). Part of the specialization on AMDGPU.
  int matrixInstrSize = 0;
  // Thread-block clusters (sm_90): the launch groups its programs into clusters of this shape, each dimension of
  // which must divide the grid's; the programs of a cluster run at once, on one GPC. Part of the specialization
  // (CompiledKernel::clusterDims). Not with persistent kernels yet.
  std::array<int, 3> clusterDims{1, 1, 1};
  // Launch on this runtime instead of the target's (the emulator, sim::simRuntime): target and an empty arch
  // then come from it. It must outlive the JitKernel, which keeps kernels loaded on it.
  DeviceRuntime* runtime = nullptr;
};

class JitKernel {
 public:
  explicit JitKernel(KernelDef def, KernelCache& cache = KernelCache::global(),
                     CudaDriver& driver = CudaDriver::instance());
  // Launches amdgpu kernels through `hip` (tests pass runtimes over libraries that are not HIP).
  JitKernel(KernelDef def, KernelCache& cache, CudaDriver& driver, HipRuntime& hip);
  ~JitKernel();

  // Compiles (first use of this specialization) and enqueues the launch on options.stream. Asynchronous.
  void launch(const LaunchGrid& grid, const std::vector<KernelArg>& args, const Constants& constants,
              const LaunchOptions& options = {});

  // Compiles and loads the specialization `launch` would use, without launching (for registers, spills...).
  LoadedKernel& prepare(const std::vector<KernelArg>& args, const Constants& constants, const LaunchOptions& options = {});

  // Specializes for `args` (pointer values only matter for their alignment: KernelArg::pointer(256) will do)
  // and compiles, without touching a GPU, keeping the texts `kept` asks for (all of them by default; what a
  // launch keeps, keptForLaunchOn, to share the launch's cache entry).
  std::shared_ptr<const CompiledKernel> compileOnly(const std::vector<KernelArg>& args, const Constants& constants,
                                                    const LaunchOptions& options = {}, KeptIR kept = KeptIR::All);
  // What a launch on `runtime` keeps of its compile: the optimized LLVM IR only where the runtime runs it.
  static KeptIR keptForLaunchOn(const DeviceRuntime& runtime) {
    return runtime.loadsLLVMIR() ? KeptIR::ForEmulator : KeptIR::ForLaunch;
  }

  // What a launch with these arguments would compile for, and the traced, specialized IR it would compile.
  Specialization specialize(const std::vector<KernelArg>& args, const Constants& constants,
                            const LaunchOptions& options) const;
  std::unique_ptr<ir::Module> specializedIR(const Specialization& s) const;

  const KernelDef& definition() const { return def_; }
  size_t loadedVariants() const;  // specializations loaded on the GPU so far
  // The runtime a launch with `target` ("auto" included) would use; throws like selectRuntime.
  DeviceRuntime& runtimeFor(const std::string& target) const;

 private:
  std::shared_ptr<const CompiledKernel> compileSpecialization(const Specialization& s, KeptIR kept);
  LaunchOptions resolveForLaunch(const LaunchOptions& options) const;
  std::string resolveTarget(const std::string& target) const;

  KernelDef def_;
  KernelCache& cache_;
  std::unique_ptr<DeviceRuntime> cuda_;
  std::unique_ptr<DeviceRuntime> hip_;
  mutable std::mutex mutex_;
  // By runtime and Specialization::key(): one specialization may be loaded on a GPU and on the emulator.
  std::map<std::pair<uint64_t, std::string>, std::unique_ptr<LoadedKernel>> loaded_;  // by DeviceRuntime::instanceId
};

}  // namespace tessera::jit
