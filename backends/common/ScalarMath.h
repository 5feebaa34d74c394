// Portable f64 expansions for targets without a device math library (AMDGPU now; a CPU backend later).
//
// Each function is emitted inline as plain LLVM IR: fadd/fsub/fmul/fdiv, llvm.fma, llvm.fabs, llvm.copysign,
// llvm.rint, llvm.minnum/maxnum, llvm.ldexp, llvm.frexp, fptosi and selects (erf adds one loop with a fixed trip
// count). No libm call and no llvm.exp/llvm.sin/... on f64, which would become library calls on AMDGPU.
// The algorithms rely on exact error-free transformations (FMA products, TwoSum), so the emitted instructions
// carry no fast-math flags and must not be contracted or reassociated.
//
// Accuracy: max error in ulps of the exact result, measured by tests/unit/lowering_math_test.cpp against glibc's
// long double functions (special values, sweeps and ~0.5M random inputs per function; 3M more per function in a
// one-off run gave the figures in brackets). Every intermediate is kept unrounded (hi + lo), so each result is
// essentially rounded once:
//   exp    all x                           0.524 [0.528]   subnormal results rounded once, overflow -> +inf
//   exp2   all x                           0.524 [0.530]
//   log    x > 0, subnormals included      0.537 [0.540]
//   log2   x > 0, subnormals included      0.555 [0.554]
//   sin    |x| < 2^50                      0.558 [0.575]   no Payne-Hanek reduction: from 2^51 on the results
//   cos    |x| < 2^50                      0.594 [0.628]   are meaningless (but within [-1, 1])
//   tanh   all x                           0.566 [0.566]
//   erf    all x                           0.533 [0.539]
// Special values follow C: NaN -> NaN, exp(-inf) = 0, log(0) = -inf, log(x < 0) = NaN, sin(inf) = NaN,
// tanh(+-inf) = +-1, erf(+-inf) = +-1, and odd functions keep the sign of zero.
#pragma once

#include "backends/common/LoweringHooks.h"

namespace tessera::backends {

// exp, exp2, log, log2, sin, cos, tanh or erf of the f64 value `x`, at the builder's insertion point (which may
// move to a new block). Null for any other op or type.
llvm::Value* expandF64Math(IRBuilder& b, ir::OpKind op, llvm::Value* x);

}  // namespace tessera::backends
