// The interface every GPU backend implements: NVPTX (PTX for NVIDIA GPUs) and AMDGPU (HSA code objects for AMD
// GPUs). Backend-internal: it may name LLVM types, and nothing under frontend/ includes it.
//
// The JIT (jit/Compiler.cpp) runs the default pass pipeline with the target's warp size and layout policy, then
// takes the kernel through three LLVM stages, each a call here so that each one's result can be seen on its own:
// lowerToLLVM, optimize, emit.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/common/Toolchain.h"
#include "ir/IR.h"
#include "transforms/PassManager.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tessera::backends {

struct TargetOptions {
  std::string arch;        // "sm_90a", "sm_80", "gfx942"...; empty = the target's default
  int numWarps = 4;
  int numStages = 3;       // shared-memory stages of pipelined loops (transforms::PassOptions::numStages)
  bool fastMath = true;    // approximate exp2/log2/rsqrt/division where the vendor compilers use them
  bool persistent = false; // programs loop over the grid's tiles (transforms::PassOptions::persistent)
  bool warpSpecialize = false;  // a producer warpgroup issues the TMA copies (transforms::PassOptions::warpSpecialize)
  bool consumerTurns = true;    // transforms::PassOptions::consumerTurns
  bool pingPong = false;        // two consumer groups on their own tiles (transforms::PassOptions::pingPong)
  int matrixInstrSize = 0;      // matrix instructions' M and N (transforms::PassOptions::matrixInstrSize)
  std::array<int, 3> clusterDims{1, 1, 1};  // thread-block clusters the kernel is launched in (nvptx, sm_90)
};

class Target {
 public:
  virtual ~Target() = default;
  virtual const char* name() const = 0;     // "nvptx", "amdgpu"
  virtual int warpSize() const = 0;         // 32 or 64
  virtual std::string defaultArch() const = 0;
  virtual std::string binaryFormat() const = 0;  // "ptx" or "hsaco"
  // Everything outside Tessera that shapes the artifact (LLVM, and libdevice or ld.lld where the target uses
  // them), down to the build: part of the JIT cache key (backends/common/Toolchain.h).
  virtual std::string toolchainIdentity() const { return llvmIdentity(); }

  // The layouts this target's lowering wants for particular ops (tensor-core dot accumulators, ...), used by
  // assign-layouts; null means the target-independent default.
  virtual std::shared_ptr<const transforms::LayoutPolicy> layoutPolicy(const transforms::PassOptions&) const {
    return nullptr;
  }
  // The most shared memory one program may use on `arch` (empty: the default arch); 0 where the target does not
  // know. Pipelining keeps its stages within it; the emulator refuses kernels above it, as the GPU would.
  virtual int64_t maxSharedBytes(const std::string& /*arch*/) const { return 0; }
  // The shared memory one multiprocessor (compute unit) of `arch` holds for all its programs; 0 where unknown.
  virtual int64_t sharedBytesPerMultiprocessor(const std::string& /*arch*/) const { return 0; }

  // What the default pass pipeline needs from this target for `numWarps` warps, `numStages` pipeline stages and
  // `arch` (empty: the default): the warp size, the shared-memory limit and the layout policy. The JIT and
  // `tessera-opt --target` both build their passes from it.
  transforms::PassOptions passOptions(int numWarps, int numStages = 3, const std::string& arch = "") const {
    transforms::PassOptions requested;
    requested.numWarps = numWarps;
    requested.numStages = numStages;
    requested.arch = arch;
    return passOptions(std::move(requested));
  }
  // `requested` (the warp count, stages, arch and the target-independent choices) completed with this target's
  // warp size, shared-memory limit and layout policy, which sees every choice (matrixInstrSize).
  transforms::PassOptions passOptions(transforms::PassOptions requested) const {
    requested.warpSize = warpSize();
    requested.maxSharedBytes = maxSharedBytes(requested.arch);
    requested.layoutPolicy = layoutPolicy(requested);
    return requested;
  }

  // Lowers a function whose tiles all carry layouts and whose shared-memory buffers have offsets (the output
  // of the layout and allocation passes) to an LLVM module holding one kernel named after the function.
  // Throws tessera::Error naming the op for anything it cannot lower.
  virtual std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Function& f, llvm::LLVMContext& ctx,
                                                    const TargetOptions& opts) const = 0;
  // Prepares a lowered module for code generation, in place: links what the kernel calls from the vendor's
  // bitcode libraries (libdevice on NVPTX), internalizes everything but the kernel, runs LLVM's optimization
  // (backends/common/OptimizeModule.h: the kernel pipeline on NVPTX, O3 on AMDGPU) and verifies the result (tessera::Error if invalid). The module afterwards is exactly what emit() turns into
  // the artifact, so it can be inspected or executed by other means.
  virtual void optimize(llvm::Module& m, const TargetOptions& opts) const = 0;
  // Generates the loadable artifact from an optimized module: PTX text, or an HSA code object (ELF). Code
  // generation rewrites the module as it goes: keep a copy if you need the optimized module afterwards.
  virtual std::string emit(llvm::Module& m, const TargetOptions& opts) const = 0;
  // The target's assembly for an optimized module, for people to read (PTX, AMDGPU ISA); `m` is left unchanged.
  virtual std::string emitAssembly(const llvm::Module& m, const TargetOptions& opts) const = 0;
  // Why the artifact emit() made for kernel `kernelName` spills registers to memory, as the artifact itself
  // records it (an AMDGPU code object's metadata); "" where it does not spill, or where the artifact does not say
  // (PTX: ptxas decides, and jit/PtxasUsage.h asks it). The autotuner prunes such configurations before launching.
  virtual std::string spillReport(const std::string& artifact, const std::string& kernelName) const {
    (void)artifact, (void)kernelName;
    return "";
  }
  // The resources the artifact records for kernel `kernelName`, as named figures in its own terms (an AMDGPU code
  // object's metadata: "vgprs", "agprs", "sgprs", "vgpr_spills", "sgpr_spills", "lds_bytes", "scratch_bytes" per
  // work-item); empty where the artifact records none (PTX: ptxas decides them, jit/KernelResources.h asks it).
  virtual std::vector<std::pair<std::string, int64_t>> artifactResources(const std::string& artifact,
                                                                         const std::string& kernelName) const {
    (void)artifact, (void)kernelName;
    return {};
  }
};

// "nvptx" or "amdgpu"; throws tessera::Error for an unknown name.
std::unique_ptr<Target> createTarget(const std::string& name);

}  // namespace tessera::backends
