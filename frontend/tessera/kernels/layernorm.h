// Layer normalization (tutorials/03_layernorm.md).
//
// Forward: one row per program, walking the row in BLOCK-wide chunks (so rows longer than a block work). It
// saves each row's mean and 1/std for the backward pass.
//
// Backward, with x_hat = (x - mean) * rstd and g = dy * w (all per row, N = n_cols):
//   dx = rstd * (g - (x_hat * sum(g * x_hat) + sum(g)) / N)
//   dw = sum over rows of dy * x_hat,   db = sum over rows of dy
// dx is per row, but dw and db reduce over every row, i.e. across programs. Each backward program takes a run
// of rows_per_program consecutive rows and sums their dw/db contributions in registers; the per-program sums
// are then combined either
//   * in two stages: each program stores its sums as one row of a [programs, n_cols] buffer, and a second
//     kernel (layernorm_bwd_dwdb) sums that buffer's columns. Deterministic, costs a buffer and a launch; or
//   * with atomics: each program atomic_add's its sums straight into dw/db (zeroed first). One kernel, but
//     the order of the float additions, and so the rounding, varies from run to run on a GPU.
// The backward keeps a whole row in one BLOCK-wide tile (BLOCK >= n_cols) because the running dw/db sums cover
// every column; layer norm rows (the model's hidden size) fit comfortably.
#pragma once

#include <utility>

#include "tessera/tessera.h"

namespace tessera::kernels {

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

// The part both backward variants share: dx for rows [pid * rows_per_program, ...) of this program, and the
// program's partial dw and db (over its rows) as two BLOCK-wide tiles.
// `cols` is arange(0, BLOCK) and `mask` is cols < n_cols.
inline std::pair<Tensor, Tensor> layernorm_bwd_rows(Ptr<f32> x, Ptr<f32> dy, Ptr<f32> dx, Ptr<f32> weight,
                                                    Ptr<f32> mean, Ptr<f32> rstd, Int row_stride, Int n_rows,
                                                    Int n_cols, Int rows_per_program, const Tensor& cols,
                                                    const Tensor& mask) {
  Tensor w = load(weight + cols, mask);  // loop-invariant: read once per program, not once per row
  Tensor n = cast<f32>(n_cols);

  Tensor first_row = program_id(0) * rows_per_program;
  Tensor end_row = minimum(first_row + rows_per_program, n_rows);
  const int64_t block = cols.shape()[0];
  Tensor dw_partial = zeros<f32>({block});
  Tensor db_partial = zeros<f32>({block});
  for (Tensor row : range(first_row, end_row)) {  // dw_partial and db_partial are carried from row to row
    Tensor offsets = row * row_stride + cols;
    Tensor x_row = load(x + offsets, mask);
    Tensor dy_row = load(dy + offsets, mask);
    Tensor row_rstd = load(rstd + row);  // saved by the forward pass: no second pass over x for the stats
    // Lanes past the row must not contribute: (0 - mean) * rstd is not 0, so zero x_hat there explicitly.
    Tensor x_hat = where(mask, (x_row - load(mean + row)) * row_rstd, 0.0f);
    Tensor g = dy_row * w;  // already 0 past the row: dy and w were loaded as 0 there
    Tensor c1 = sum(x_hat * g, 0) / n;
    Tensor c2 = sum(g, 0) / n;
    store(dx + offsets, (g - (x_hat * c1 + c2)) * row_rstd, mask);
    dw_partial += dy_row * x_hat;
    db_partial += dy_row;
  }
  return {dw_partial, db_partial};
}

// Backward, two-stage variant, stage 1: dx, and this program's dw/db sums as row program_id(0) of
// partial_dw / partial_db ([programs, n_cols], row stride n_cols).
inline void layernorm_bwd_dx(Ptr<f32> x, Ptr<f32> dy, Ptr<f32> dx, Ptr<f32> weight, Ptr<f32> mean, Ptr<f32> rstd,
                             Ptr<f32> partial_dw, Ptr<f32> partial_db, Int row_stride, Int n_rows, Int n_cols,
                             Int rows_per_program, Const<int> BLOCK) {
  Tensor cols = arange(0, BLOCK);
  Tensor mask = cols < n_cols;
  auto [dw_partial, db_partial] =
      layernorm_bwd_rows(x, dy, dx, weight, mean, rstd, row_stride, n_rows, n_cols, rows_per_program, cols, mask);
  Tensor slot = program_id(0) * n_cols + cols;
  store(partial_dw + slot, dw_partial, mask);
  store(partial_db + slot, db_partial, mask);
}

// Stage 2: dw[c] = sum of partial_dw[:, c] (and db alike). Each program owns BLOCK_N columns and walks the
// n_partials rows BLOCK_M at a time, adding whole [BLOCK_M, BLOCK_N] tiles before one final reduction.
inline void layernorm_bwd_dwdb(Ptr<f32> partial_dw, Ptr<f32> partial_db, Ptr<f32> dw, Ptr<f32> db, Int n_partials,
                               Int n_cols, Const<int> BLOCK_M, Const<int> BLOCK_N) {
  Tensor cols = program_id(0) * BLOCK_N + arange(0, BLOCK_N);
  Tensor dw_sum = zeros<f32>({BLOCK_M, BLOCK_N});
  Tensor db_sum = zeros<f32>({BLOCK_M, BLOCK_N});
  for (Tensor start : range(0, n_partials, BLOCK_M)) {
    Tensor rows = start + arange(0, BLOCK_M);
    Tensor mask = (expand_dims(rows, 1) < n_partials) & (expand_dims(cols, 0) < n_cols);  // [BLOCK_M, BLOCK_N]
    Tensor offsets = expand_dims(rows, 1) * n_cols + expand_dims(cols, 0);
    dw_sum += load(partial_dw + offsets, mask);
    db_sum += load(partial_db + offsets, mask);
  }
  Tensor col_mask = cols < n_cols;
  store(dw + cols, sum(dw_sum, 0), col_mask);
  store(db + cols, sum(db_sum, 0), col_mask);
}

// Backward, atomics variant: dx, then this program's dw/db sums added atomically into dw/db, which the caller
// must zero first.
inline void layernorm_bwd_atomic(Ptr<f32> x, Ptr<f32> dy, Ptr<f32> dx, Ptr<f32> weight, Ptr<f32> mean,
                                 Ptr<f32> rstd, Ptr<f32> dw, Ptr<f32> db, Int row_stride, Int n_rows, Int n_cols,
                                 Int rows_per_program, Const<int> BLOCK) {
  Tensor cols = arange(0, BLOCK);
  Tensor mask = cols < n_cols;
  auto [dw_partial, db_partial] =
      layernorm_bwd_rows(x, dy, dx, weight, mean, rstd, row_stride, n_rows, n_cols, rows_per_program, cols, mask);
  atomic_add(dw + cols, dw_partial, mask);
  atomic_add(db + cols, db_partial, mask);
}

inline KernelDef layernorm_bwd_dx_kernel() {
  return kernel("layernorm_bwd_dx", layernorm_bwd_dx,
                {"x", "dy", "dx", "weight", "mean", "rstd", "partial_dw", "partial_db", "row_stride", "n_rows",
                 "n_cols", "rows_per_program", "BLOCK"});
}

inline KernelDef layernorm_bwd_dwdb_kernel() {
  return kernel("layernorm_bwd_dwdb", layernorm_bwd_dwdb,
                {"partial_dw", "partial_db", "dw", "db", "n_partials", "n_cols", "BLOCK_M", "BLOCK_N"});
}

inline KernelDef layernorm_bwd_atomic_kernel() {
  return kernel("layernorm_bwd_atomic", layernorm_bwd_atomic,
                {"x", "dy", "dx", "weight", "mean", "rstd", "dw", "db", "row_stride", "n_rows", "n_cols",
                 "rows_per_program", "BLOCK"});
}

}  // namespace tessera::kernels
