// Row-wise softmax (tutorials/02_softmax.md), one row per program. BLOCK is the row length rounded up to a
// power of two; lanes past the row read -inf so they add nothing to the max or the sum.
#pragma once

#include <cmath>

#include "tessera/tessera.h"

namespace tessera::kernels {

inline void softmax(Ptr<f32> out, Ptr<f32> in, Int in_row_stride, Int out_row_stride, Int n_cols, Const<int> BLOCK) {
  Tensor row = program_id(0);
  Tensor cols = arange(0, BLOCK);
  Tensor mask = cols < n_cols;
  Tensor x = load(in + row * in_row_stride + cols, mask, -INFINITY);
  Tensor shifted = x - max(x, 0);  // subtracting the row max keeps exp() from overflowing
  Tensor numerator = exp(shifted);
  Tensor denominator = sum(numerator, 0);
  store(out + row * out_row_stride + cols, numerator / denominator, mask);
}

inline KernelDef softmax_kernel() {
  return kernel("softmax", softmax, {"out", "in", "in_row_stride", "out_row_stride", "n_cols", "BLOCK"});
}

}  // namespace tessera::kernels
