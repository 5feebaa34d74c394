// The kernels that benchmarks/compile_time and benchmarks/kernel_resources measure: the tutorial kernels and the
// standard matmul configurations (ISSUE 12's list), traced and specialized as a launch on large contiguous
// row-major tensors would be (16-byte aligned pointers to buffers of known size under 2^31 elements, sizes
// divisible by 16, unit strides equal to 1); a "ragged" case as one whose sizes and outer strides are not
// multiples of 16 (M = N = K = 1000).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backends/Target.h"
#include "ir/IR.h"
#include "tessera/Kernel.h"

namespace tessera::bench {

struct MatmulConfig {
  int bm, bn, bk, warps;
  int stages = 3;  // num_stages of the K loop's pipelined operand copies
};

// (BM, BN, BK, warps, stages): (128,128,64,4,3), (128,128,64,8,3), (128,256,64,8,3), (64,256,32,4,4),
// (128,64,64,4,4), (64,64,32,4,4) (issue 12, item 4).
const std::vector<MatmulConfig>& standardMatmulConfigs();

// Fused attention forward (kernels/attention.h): query and key blocks, head dimension, warps, causal or not.
struct AttentionConfig {
  int bm, bn, headDim, warps;
  bool causal;
};

// ISSUE 12's attention configurations, each causal and not: BM 128 with BN 64 and 128 and head dims 64 and 128 on
// 8 warps; BM = BN = 64, head dim 64 on 4 warps.
const std::vector<AttentionConfig>& standardAttentionConfigs();

struct KernelCase {
  std::string kernel;  // "matmul", "softmax", ...
  std::string config;  // "128x128x64_w8", "BLOCK=1024_w4"
  std::string dtype;   // the input element type: "f16", "bf16", "f8e4m3", "i8", "f32"
  std::string arch;    // "sm_90a"
  KernelDef def;
  Constants constants;
  int numWarps = 4;
  std::set<std::string> unitParams;  // integer parameters a launch passes as 1 (unit strides)
  int numStages = 3;
  DescriptorTypes descriptors;  // the type of each tensor descriptor parameter (its block)
  int64_t raggedSize = 0;  // 0: integer parameters (other than unit strides) divisible by 16; else all equal this
  bool persistent = false;  // compiled as a persistent kernel (jit::LaunchOptions::persistent)
  bool warpSpecialize = false;  // with a producer warpgroup (jit::LaunchOptions::warpSpecialize)
  bool pingPong = false;  // two consumer groups on their own tiles (jit::LaunchOptions::pingPong)
  int matrixInstrSize = 0;       // AMD's matrix instructions' M and N (jit::LaunchOptions::matrixInstrSize)

  std::string name() const;  // "matmul_f16_128x128x64_w8_sm_90a": unique, usable as a file name
  backends::TargetOptions targetOptions() const;  // the arch, warp count, stages and persistence
};

// The library matmul on `dtype` inputs ("f16", "bf16", "f8e4m3" or "i8"). Throws tessera::Error for another one.
KernelCase matmulCase(const std::string& dtype, const MatmulConfig& config, const std::string& arch);

// The descriptor matmul (kernels::matmul_desc_of) on f16 inputs, its descriptors' shapes multiples of 16 (what the
// pointer matmul's sizes are specialized as); the kernel is "matmul_desc".
KernelCase matmulDescriptorCase(const MatmulConfig& config, const std::string& arch);

// The descriptor matmuls bench_tutorials.py times on sm_90 GPUs, C in f16 as torch.matmul returns it: through
// pointers ("matmul_desc_out", kernels::matmul_desc_same_out_kernel) or, with `tmaStore`, through a descriptor too
// ("matmul_desc_tma_c": a TMA store).
KernelCase matmulDescriptorF16OutCase(const MatmulConfig& config, const std::string& arch, bool tmaStore);

// The same with B passed transposed ([N, K] row-major: stride_bk is the unit stride, not stride_bn), the K-major B
// that fp8 wgmma reads (backends/nvptx/WgmmaPlan.h); its config name ends in "_bT".
KernelCase matmulBTransposedCase(const std::string& dtype, const MatmulConfig& config, const std::string& arch);

// matmulCase with the sizes and outer strides of a ragged launch, M = N = K = `size`; its config name ends in
// "_ragged<size>". The JIT specializes on divisibility by 16 and by 8: 1000 keeps 16-byte aligned rows of f16,
// 999 does not.
KernelCase raggedMatmulCase(const std::string& dtype, const MatmulConfig& config, const std::string& arch,
                            int64_t size);

// The library attention forward on "f16" or "bf16" inputs. Throws tessera::Error for another type.
KernelCase attentionCase(const std::string& dtype, const AttentionConfig& config, const std::string& arch);

// The attention forward through tensor descriptors (kernels::attention_fwd_desc_of) on "f16" or "bf16" inputs:
// blocks [1, BM, HEAD_DIM] of Q and out, [1, BN, HEAD_DIM] of K and V.
KernelCase attentionDescriptorCase(const std::string& dtype, const AttentionConfig& config, const std::string& arch);
// The attention backward's dK/dV kernel ("attention_bwd_dkdv", BN keys per program) or dQ kernel
// ("attention_bwd_dq", BM rows per program) of kernels/attention_backward.h, on "f16" or "bf16" inputs.
KernelCase attentionBackwardCase(const std::string& kernel, const std::string& dtype, const AttentionConfig& config,
                                 const std::string& arch);
// The same kernel with the softmax overlapped with the next key block's Q K^T ("attention_fwd_desc_overlap").
KernelCase attentionOverlapCase(const std::string& dtype, const AttentionConfig& config, const std::string& arch);

// vector_add, softmax, layer norm (forward and both backward kernels), the tutorial's fused-epilogue matmul and
// the attention forward (f16, 128x64 blocks, head dim 64, 8 warps; causal and not).
std::vector<KernelCase> tutorialCases(const std::string& arch);

// The case's kernel traced at its constants, its arguments specialized as the file comment says.
std::unique_ptr<ir::Module> traceSpecialized(const KernelCase& c);

}  // namespace tessera::bench
