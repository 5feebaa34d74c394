// Which results may differ between backends, and by how much. Everything else must agree bit for bit.
//
// Approximate: exp exp2 log log2 rsqrt sin cos tanh erf sigmoid. docs/IR.md lets backends use approximate
// instructions for them (with fast math, the default, NVPTX uses ex2.approx / lg2.approx / sin.approx /
// rsqrt.approx and AMDGPU the v_exp / v_log / v_rsq family), while the interpreter computes in double precision
// and rounds once. Their results are stored straight to an output buffer compared within approxTolerance, and
// feed nothing else: an error of one ulp becomes any error at all after a cast to an integer, a comparison or a
// floor, so nothing downstream of them could be compared at all. Their inputs are bounded (|x| <= 16), where
// the approximate instructions are accurate.
//
// Exact (not in the list): + - * / % min max fma sqrt floor ceil abs neg, casts and bitcasts are one IEEE
// operation each (correctly rounded everywhere); sums, scans and dots of floats are exact because the generator
// only applies them to values whose every partial sum is representable (multiples of 2^-k below 2^m that fit
// the type's significand, Generator.cpp), so the order a backend chooses does not matter.
#pragma once

#include "ir/Types.h"
#include "tests/gpucheck/GpuCheck.h"

namespace tessera::fuzz {

// The tolerance for one approximate operation on an input |x| <= 16, rounded to `dtype`. f32: the approximate
// instructions are within 2 ulp relative (ex2.approx, lg2.approx) or 2^-20.5 absolute (sin.approx, cos.approx on
// small arguments), and tanh.approx is within 2^-11 relative; f16/bf16/fp8 are computed in f32 and rounded once,
// so one ulp of the narrow type; f64 goes through libdevice / ocml, within a few ulp.
inline gpucheck::Tolerance approxTolerance(ir::ScalarKind dtype) {
  switch (dtype) {
    case ir::ScalarKind::F64: return {1e-14, 1e-14, false};
    case ir::ScalarKind::F32: return {1e-6, 1e-3, false};
    case ir::ScalarKind::F16: return {1e-3, 1e-3, false};
    case ir::ScalarKind::BF16: return {8e-3, 8e-3, false};
    default: return {0.25, 0.25, false};  // fp8: one ulp of e5m2's 2 significand bits
  }
}

}  // namespace tessera::fuzz
