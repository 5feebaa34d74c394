// Float math for AMDGPU without the ROCm device libraries (ocml is not available here).
//
// f32, accuracy as lowered by LLVM 19's AMDGPU backend or by the expansions in AMDGPUMath.cpp:
//   exp, exp2, log, log2   llvm.exp/exp2/log/log2.f32: the backend's accurate expansions (about 1 ulp, denormals
//                          handled). With fast math: v_exp_f32 / v_log_f32 directly (1 ulp, no denormal results).
//   rsqrt                  fast: v_rsq_f32 (1 ulp); otherwise 1 / sqrt(x) (two correctly rounded steps).
//   sin, cos               llvm.sin/cos.f32 -> v_sin/v_cos_f32 after scaling by 1/(2*pi): absolute error grows with
//                          |x| (fine for |x| up to a few hundred, poor beyond).
//   tanh                   odd Taylor polynomial below |x| = 0.25, 1 - 2 / (exp(2|x|) + 1) above: relative error
//                          within a few 1e-7.
//   erf                    Taylor polynomial below |x| = 0.5, Abramowitz-Stegun 7.1.26 above: absolute error
//                          below 2e-7.
// f64: rsqrt is 1 / sqrt (two correctly rounded steps); exp, exp2, log, log2, sin, cos, tanh and erf are the
//   portable inline expansions of backends/common/ScalarMath.h (ocml's are not available): at most 0.63 ulp as
//   measured on the host, sin/cos for |x| < 2^50 only (no Payne-Hanek reduction). Fast math does not change them.
// fmod (f32 and f64): exact, by long division over the significand bits (integer arithmetic, no rounding).
#pragma once

#include "backends/common/LoweringHooks.h"

namespace tessera::backends::amdgpu {

// Null when there is no lowering for `op` on this type.
llvm::Value* unaryMath(IRBuilder& b, ir::OpKind op, llvm::Value* x, bool fast);
llvm::Value* exactFmod(IRBuilder& b, llvm::Value* x, llvm::Value* y);

}  // namespace tessera::backends::amdgpu
