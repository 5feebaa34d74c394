// The AMDGPU target: lowers laid-out tile IR through the shared lowering with AMDGPUHooks (wave64) and gives the
// LDS array the allocator's size; optimizing runs O3; emitting writes an ELF object with LLVM's AMDGPU backend
// and links it with ld.lld into an HSA code object (object version 4, what the HIP 5.2 runtime loads).
#pragma once

#include <string>

#include "backends/Target.h"

namespace tessera::backends::amdgpu {

inline constexpr const char* kTriple = "amdgcn-amd-amdhsa";
inline constexpr int kMaxLdsBytes = 65536;  // per workgroup on gfx90a and gfx942

// ld.lld used to link code objects: $TESSERA_LD_LLD, /usr/bin/ld.lld-19 or /usr/lib/llvm-19/bin/ld.lld; empty
// when none exists.
std::string lldPath();

class AMDGPUTarget : public Target {
 public:
  const char* name() const override { return "amdgpu"; }
  int warpSize() const override { return 64; }
  std::string defaultArch() const override { return "gfx90a"; }
  std::string binaryFormat() const override { return "hsaco"; }
  std::string toolchainIdentity() const override;  // LLVM and the ld.lld that links the code object
  std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Function& f, llvm::LLVMContext& ctx,
                                            const TargetOptions& opts) const override;
  void optimize(llvm::Module& m, const TargetOptions& opts) const override;
  std::string emit(llvm::Module& m, const TargetOptions& opts) const override;
  std::string emitAssembly(const llvm::Module& m, const TargetOptions& opts) const override;  // the GCN ISA
  // VGPRs spilled to scratch, from the code object's metadata (CodeObjectMetadata.h). SGPR spills alone are not
  // reported: they go to VGPR lanes, not memory, while VGPRs remain.
  std::string spillReport(const std::string& artifact, const std::string& kernelName) const override;
  std::vector<std::pair<std::string, int64_t>> artifactResources(const std::string& artifact,
                                                                 const std::string& kernelName) const override;
  int64_t maxSharedBytes(const std::string&) const override { return kMaxLdsBytes; }
  int64_t sharedBytesPerMultiprocessor(const std::string&) const override { return kMaxLdsBytes; }  // per CU
  // f16/bf16 dots get MFMA accumulator layouts (MfmaLayoutPolicy.h).
  std::shared_ptr<const transforms::LayoutPolicy> layoutPolicy(const transforms::PassOptions& options) const override;
};

}  // namespace tessera::backends::amdgpu
