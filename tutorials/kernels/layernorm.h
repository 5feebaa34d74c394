// Tutorial 3 kernel: layer normalization forward, one row per program, walking the row in BLOCK-wide
// chunks (so rows longer than a block work). Saves each row's mean and 1/std for the backward pass.
#pragma once

#include "tessera/tessera.h"

namespace tutorials {
using namespace tessera;

inline void layernorm_fwd(Ptr<f32> x, Ptr<f32> y, Ptr<f32> weight, Ptr<f32> bias, Ptr<f32> mean_out,
                          Ptr<f32> rstd_out, Int row_stride, Int n_cols, Float eps, Const<int> BLOCK) {
  Tensor row = program_id(0);
  Tensor x_row = x + row * row_stride;
  Tensor y_row = y + row * row_stride;

  Tensor partial_sum = zeros<f32>({BLOCK});
  for (Tensor start : range(0, n_cols, BLOCK)) {
    Tensor cols = start + arange(0, BLOCK);
    partial_sum += load(x_row + cols, cols < n_cols);
  }
  Tensor mean = sum(partial_sum, 0) / n_cols;

  Tensor partial_var = zeros<f32>({BLOCK});
  for (Tensor start : range(0, n_cols, BLOCK)) {
    Tensor cols = start + arange(0, BLOCK);
    Tensor mask = cols < n_cols;
    Tensor centered = where(mask, load(x_row + cols, mask) - mean, 0.0f);
    partial_var += centered * centered;
  }
  Tensor rstd = rsqrt(sum(partial_var, 0) / n_cols + eps);
  store(mean_out + row, mean);
  store(rstd_out + row, rstd);

  for (Tensor start : range(0, n_cols, BLOCK)) {
    Tensor cols = start + arange(0, BLOCK);
    Tensor mask = cols < n_cols;
    Tensor normalized = (load(x_row + cols, mask) - mean) * rstd;
    store(y_row + cols, normalized * load(weight + cols, mask) + load(bias + cols, mask), mask);
  }
}

inline KernelDef layernorm_fwd_kernel() {
  return kernel("layernorm_fwd", layernorm_fwd,
                {"x", "y", "weight", "bias", "mean", "rstd", "row_stride", "n_cols", "eps", "BLOCK"});
}

}  // namespace tutorials
