// Tutorial 4 kernel: C = A x B with f16 inputs and an f32 accumulator. Each program computes one BM x BN tile
// of C, walking K in BK steps; programs are ordered in groups of GROUP_M rows of tiles so that programs running
// at the same time share rows of A and columns of B in the L2 cache.
#pragma once

#include "tessera/tessera.h"

namespace tutorials {
using namespace tessera;

inline void matmul(Ptr<f16> a, Ptr<f16> b, Ptr<f32> c, Int M, Int N, Int K, Int stride_am, Int stride_ak,
                   Int stride_bk, Int stride_bn, Int stride_cm, Int stride_cn, Const<int> BM, Const<int> BN,
                   Const<int> BK, Const<int> GROUP_M) {
  // Grouped ordering: program id -> (pm, pn).
  Tensor pid = program_id(0);
  Tensor num_pid_m = cdiv(M, BM);
  Tensor num_pid_n = cdiv(N, BN);
  Tensor programs_per_group = GROUP_M * num_pid_n;
  Tensor first_pm = (pid / programs_per_group) * GROUP_M;
  Tensor group_rows = minimum(num_pid_m - first_pm, GROUP_M);
  Tensor pm = first_pm + (pid % programs_per_group) % group_rows;
  Tensor pn = (pid % programs_per_group) / group_rows;

  Tensor rm = pm * BM + arange(0, BM);
  Tensor rn = pn * BN + arange(0, BN);
  Tensor rk = arange(0, BK);
  Tensor a_ptrs = a + expand_dims(rm, 1) * stride_am + expand_dims(rk, 0) * stride_ak;  // [BM, BK]
  Tensor b_ptrs = b + expand_dims(rk, 1) * stride_bk + expand_dims(rn, 0) * stride_bn;  // [BK, BN]

  Tensor acc = zeros<f32>({BM, BN});
  for (Tensor k : range(0, K, BK)) {  // acc, a_ptrs and b_ptrs become loop-carried values
    Tensor a_mask = (expand_dims(rm, 1) < M) & (expand_dims(rk, 0) + k < K);
    Tensor b_mask = (expand_dims(rk, 1) + k < K) & (expand_dims(rn, 0) < N);
    acc = dot(load(a_ptrs, a_mask, 0.0), load(b_ptrs, b_mask, 0.0), acc);
    a_ptrs += BK * stride_ak;
    b_ptrs += BK * stride_bk;
  }

  Tensor c_ptrs = c + expand_dims(rm, 1) * stride_cm + expand_dims(rn, 0) * stride_cn;
  store(c_ptrs, acc, (expand_dims(rm, 1) < M) & (expand_dims(rn, 0) < N));
}

inline KernelDef matmul_kernel() {
  return kernel("matmul", matmul,
                {"a", "b", "c", "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm",
                 "stride_cn", "BM", "BN", "BK", "GROUP_M"});
}

}  // namespace tutorials
