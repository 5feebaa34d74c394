// The v_mfma_f32_16x16x16{f16,bf16} register fragments (MfmaFragments.h) as linear layouts (ir/LinearLayout.h): one
// wavefront of 64 lanes, input dimensions register (the element index v = 0..3) and lane, onto dim0 (rows) and dim1
// (columns) of the 16x16 block. Lane l holds A[l % 16][4 * (l / 16) + v], B[4 * (l / 16) + v][l % 16] and
// D[4 * (l / 16) + v][l % 16], per AMD's register layout for the instruction.
#pragma once

#include "ir/LinearLayout.h"

namespace tessera::backends::amdgpu {

ir::LinearLayout mfmaAccumulatorFragment();  // C/D, 16 x 16 (M x N)
ir::LinearLayout mfmaOperandAFragment();     // A, 16 x 16 (M x K)
ir::LinearLayout mfmaOperandBFragment();     // B, 16 x 16 (K x N)

}  // namespace tessera::backends::amdgpu
