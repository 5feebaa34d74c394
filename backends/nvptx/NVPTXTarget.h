// The NVPTX target: lowers laid-out tile IR through the shared lowering with NVPTXHooks; optimizing links the
// libdevice functions it calls and runs O3; emitting writes PTX with LLVM's NVPTX backend.
#pragma once

#include "backends/Target.h"

namespace tessera::backends::nvptx {

// libdevice, when the CUDA toolkit provides it (TESSERA_LIBDEVICE overrides the path).
std::string libdevicePath();

class NVPTXTarget : public Target {
 public:
  const char* name() const override { return "nvptx"; }
  int warpSize() const override { return 32; }
  std::string defaultArch() const override { return "sm_90a"; }
  std::string binaryFormat() const override { return "ptx"; }
  std::string toolchainIdentity() const override;  // LLVM and the libdevice it links
  // f16/bf16 dots get mma.sync accumulator layouts (MmaLayoutPolicy.h).
  std::shared_ptr<const transforms::LayoutPolicy> layoutPolicy(const transforms::PassOptions& options) const override;
  // The opt-in limit of the arch's GPUs (SharedMemoryLimits.h): 163 KB on sm_80, 99 KB on sm_86/89, 227 KB on sm_90.
  int64_t maxSharedBytes(const std::string& arch) const override;
  int64_t sharedBytesPerMultiprocessor(const std::string& arch) const override;
  std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Function& f, llvm::LLVMContext& ctx,
                                            const TargetOptions& opts) const override;
  void optimize(llvm::Module& m, const TargetOptions& opts) const override;
  std::string emit(llvm::Module& m, const TargetOptions& opts) const override;
  std::string emitAssembly(const llvm::Module& m, const TargetOptions& opts) const override;  // the PTX
};

}  // namespace tessera::backends::nvptx
