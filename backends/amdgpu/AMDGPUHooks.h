// LoweringHooks for AMD GPUs (amdgcn, wave64): workitem/workgroup intrinsics, lane ids from mbcnt, cross-lane
// exchange with ds_bpermute, s_barrier between workgroup fences, LDS (address space 3) for shared memory, and
// math from LLVM intrinsics plus expansions written here (no ROCm device libraries: see AMDGPUMath.h).
// debug_print and device_assert write to the runtime's printf buffer (PrintfBuffer.h), which needs no device
// library; device_assert then traps.
#pragma once

#include <string>

#include "backends/common/LoweringHooks.h"

namespace tessera::backends::amdgpu {

// The LDS array every kernel indexes. The hooks declare it unsized; AMDGPUTarget gives it the function's
// `smem_bytes` so the code object's group segment size is exactly the allocator's figure.
inline constexpr const char* kSharedMemorySymbol = "tessera_lds";
inline constexpr unsigned kLdsAddrSpace = 3;
inline constexpr unsigned kConstantAddrSpace = 4;

class AMDGPUHooks : public LoweringHooks {
 public:
  // `arch`: gfx90a or gfx942, which decides the MFMA instructions (MfmaLayoutPolicy.h, mfmaTiles).
  explicit AMDGPUHooks(std::string arch) : arch_(std::move(arch)) {}
  int warpSize() const override { return 64; }
  void configureKernel(llvm::Function& kernel, int numWarps) override;
  // Aggregates reach AMDGPU kernels by reference into the (constant) kernel-argument segment.
  llvm::Type* descriptorParameterType(llvm::LLVMContext& ctx) override { return llvm::PointerType::get(ctx, 4); }
  void declareDescriptorParameter(llvm::Function& kernel, unsigned argNo, int64_t bytes, int64_t align) override;
  llvm::Value* threadId(IRBuilder& b) override;
  llvm::Value* programId(IRBuilder& b, int axis) override;
  llvm::Value* numPrograms(IRBuilder& b, int axis) override;
  llvm::Value* shuffleXorI32(IRBuilder& b, llvm::Value* v, int laneMask) override;
  llvm::Value* shuffleIdxI32(IRBuilder& b, llvm::Value* v, llvm::Value* lane) override;
  void barrier(IRBuilder& b) override;
  llvm::Value* sharedMemoryBase(IRBuilder& b) override;
  llvm::Value* unaryMath(IRBuilder& b, ir::OpKind op, llvm::Value* x, bool fast) override;
  llvm::Value* fmod(IRBuilder& b, llvm::Value* x, llvm::Value* y) override;
  void print(IRBuilder& b, const std::string& format, const std::vector<llvm::Value*>& args) override;
  void assertFail(IRBuilder& b, const std::string& message, const std::string& file, unsigned line,
                  const std::string& function) override;
  llvm::SyncScope::ID atomicScope(llvm::LLVMContext& ctx, const std::string& scope) override;
  // v_mfma_f32_16x16x16 (f16 / bf16_1k) for f16/bf16 dots with an f32 accumulator, v_mfma_i32_16x16x32_i8
  // (gfx942) or 16x16x16i8 (gfx90a) for i8 dots with an i32 one (MfmaDot.cpp).
  bool lowerDot(KernelLowering& lowering, const ir::Op& dot) override;
  // Why the last dot lowerDot refused runs on FMAs (MfmaDot.cpp).
  std::string whyNoTensorCores(const ir::Op& dot) const override {
    (void)dot;
    return dotRefusal_;
  }

  // The lane within the wavefront (0..63), from mbcnt over a full mask.
  static llvm::Value* laneId(IRBuilder& b);

 private:
  std::string arch_;
  std::string dotRefusal_;  // why lowerDot last returned false
};

}  // namespace tessera::backends::amdgpu
