// Fused attention backward (tutorials/05_attention.md), FlashAttention-2's algorithm: the gradients dQ, dK, dV of
// out = softmax(Q K^T * sm_scale) V, given dO, the forward's output O and the row statistics it saved
// (attention_fwd_lse: each row's log2-sum-exp2 of its scaled scores). P is recomputed block by block from Q, K and
// those statistics, so, as in the forward, no seq_len x seq_len matrix is ever stored:
//
//   1. attention_bwd_preprocess: delta = rowsum(O * dO), per query row (f32);
//   2. attention_bwd_dkdv: each program owns BN keys of one (batch, head) and walks the query blocks that see them,
//      accumulating dV += P^T dO and dK += dS^T Q in f32, where dS = P * (dO V^T - delta);
//   3. attention_bwd_dq: each program owns BM query rows and walks the key blocks they see: dQ += dS K.
//
// dK and dQ are then scaled by sm_scale (the scores' own factor). Q, K, V, O, dO, dQ, dK and dV share one layout,
// [batch, heads, seq_len, HEAD_DIM] with the head dimension contiguous, given by one set of strides (as Triton's
// tutorial assumes); the statistics are f32 [batch * heads, seq_len]. CAUSAL as in the forward.
#pragma once

#include <cmath>
#include <numbers>

#include "tessera/kernels/attention.h"

namespace tessera::kernels {

// The forward that also saves the statistics the backward needs: out, and lse[bh * seq_len + row].
template <class In>
inline void attention_fwd_lse_of(Ptr<In> q, Ptr<In> k, Ptr<In> v, Ptr<In> out, Ptr<f32> lse, Float sm_scale,
                                 Int heads, Int seq_len, Int stride_z, Int stride_h, Int stride_m, Const<int> BM,
                                 Const<int> BN, Const<int> HEAD_DIM, Const<int> CAUSAL) {
  attention_fwd_impl<In>(q, k, v, out, lse, sm_scale, heads, seq_len, stride_z, stride_h, stride_m, stride_z, stride_h,
                         stride_m, stride_z, stride_h, stride_m, stride_z, stride_h, stride_m, BM, BN, HEAD_DIM,
                         CAUSAL);
}

// delta[bh * seq_len + row] = sum over d of O[row, d] * dO[row, d]. grid = (cdiv(seq_len, BM), batch * heads).
template <class In>
inline void attention_bwd_preprocess_of(Ptr<In> o, Ptr<In> d_o, Ptr<f32> delta, Int heads, Int seq_len, Int stride_z,
                                        Int stride_h, Int stride_m, Const<int> BM, Const<int> HEAD_DIM) {
  Tensor bh = program_id(1);
  Tensor offs_m = program_id(0) * BM + arange(0, BM);
  Tensor rows = offs_m < seq_len;
  Tensor offsets = (bh / heads) * stride_z + (bh % heads) * stride_h + expand_dims(offs_m, 1) * stride_m +
                   expand_dims(arange(0, HEAD_DIM), 0);
  Tensor product =
      cast<f32>(load(o + offsets, expand_dims(rows, 1))) * cast<f32>(load(d_o + offsets, expand_dims(rows, 1)));
  store(delta + bh * seq_len + offs_m, sum(product, 1), rows);
}

// Throws for constants the backward kernels cannot be traced with (the diagonal need not be whole key blocks).
inline void check_attention_backward_constants(int BM, int BN, int HEAD_DIM, int CAUSAL) {
  check_attention_constants(BM, BN, HEAD_DIM, 0);
  if (CAUSAL != 0 && CAUSAL != 1) throw Error("CAUSAL must be 0 or 1, got " + std::to_string(CAUSAL));
}

// Why most blocks need no mask: the loads zero every row past seq_len (Q, dO, K, V, and the statistics), so a query
// row past seq_len adds nothing to dK or dV (its Q and dO are 0) and is never stored; a key past seq_len only
// changes its own rows of dK and dV, never stored either. Only dQ must mask keys past seq_len: there P's column
// exp2(0 - lse) would be finite only while lse > -128, and an inf times K's zero row is NaN. So dK/dV masks only
// the causal diagonal, and dQ the causal diagonal or the ragged last key block, as the forward does.

// dK and dV for BN keys. grid = (cdiv(seq_len, BN), batch * heads). Causally, only the query blocks from the one
// holding key start_n on see these keys, and the blocks starting at or after start_n + BN see all of them.
template <class In>
inline void attention_bwd_dkdv_of(Ptr<In> q, Ptr<In> k, Ptr<In> v, Ptr<In> d_o, Ptr<f32> lse, Ptr<f32> delta,
                                  Ptr<In> dk, Ptr<In> dv, Float sm_scale, Int heads, Int seq_len, Int stride_z,
                                  Int stride_h, Int stride_m, Const<int> BM, Const<int> BN, Const<int> HEAD_DIM,
                                  Const<int> CAUSAL) {
  check_attention_backward_constants(BM, BN, HEAD_DIM, CAUSAL);
  Tensor bh = program_id(1);
  Tensor base = (bh / heads) * stride_z + (bh % heads) * stride_h;
  Tensor start_n = program_id(0) * BN;
  Tensor offs_n = start_n + arange(0, BN);
  Tensor offs_d = arange(0, HEAD_DIM);
  Tensor key_rows = expand_dims(offs_n < seq_len, 1);
  Tensor kv_offsets = base + expand_dims(offs_n, 1) * stride_m + expand_dims(offs_d, 0);
  Tensor k_tile = load(k + kv_offsets, key_rows), v_tile = load(v + kv_offsets, key_rows);  // [BN, HEAD_DIM]
  Tensor qk_scale = sm_scale * static_cast<float>(std::numbers::log2e);

  Tensor dk_acc = zeros<f32>({BN, HEAD_DIM}), dv_acc = zeros<f32>({BN, HEAD_DIM});
  // Folds the query block at start_m in; `causal_mask`: the block straddles the diagonal.
  auto fold_queries = [&](const Tensor& start_m, bool causal_mask) {
    Tensor offs_m = start_m + arange(0, BM);
    Tensor query_rows = expand_dims(offs_m < seq_len, 1);
    Tensor q_offsets = base + expand_dims(offs_m, 1) * stride_m + expand_dims(offs_d, 0);
    Tensor q_tile = load(q + q_offsets, query_rows), do_tile = load(d_o + q_offsets, query_rows);  // [BM, HEAD_DIM]
    Tensor stats = bh * seq_len + offs_m;
    Tensor lse_m = load(lse + stats, offs_m < seq_len), delta_m = load(delta + stats, offs_m < seq_len);
    // P^T [BN, BM], from the scores in log2 units and each query row's statistic.
    Tensor st = dot(k_tile, trans(q_tile)) * qk_scale;
    Tensor pt = exp2(st - expand_dims(lse_m, 0));
    if (causal_mask) pt = where(expand_dims(offs_n, 1) <= expand_dims(offs_m, 0), pt, 0.0f);
    dv_acc = dot(cast(pt, q_tile.dtype()), do_tile, dv_acc);
    Tensor dpt = dot(v_tile, trans(do_tile));  // (dO V^T)^T, [BN, BM] f32
    Tensor dst = pt * (dpt - expand_dims(delta_m, 0));
    dk_acc = dot(cast(dst, q_tile.dtype()), q_tile, dk_acc);
  };
  if (CAUSAL) {
    // The first multiple of BM at or after start_n + BN: from there on every query row sees every key here.
    Tensor unmasked_m = minimum(((start_n + BN + (BM - 1)) / BM) * BM, seq_len);
    for (Tensor start_m : range((start_n / BM) * BM, unmasked_m, BM)) fold_queries(start_m, true);
    for (Tensor start_m : range(unmasked_m, seq_len, BM)) fold_queries(start_m, false);
  } else {
    for (Tensor start_m : range(0, seq_len, BM)) fold_queries(start_m, false);
  }
  store(dk + kv_offsets, cast(dk_acc * sm_scale, k_tile.dtype()), key_rows);
  store(dv + kv_offsets, cast(dv_acc, k_tile.dtype()), key_rows);
}

// dQ for BM query rows. grid = (cdiv(seq_len, BM), batch * heads). Causally, the keys up to the block's last row.
template <class In>
inline void attention_bwd_dq_of(Ptr<In> q, Ptr<In> k, Ptr<In> v, Ptr<In> d_o, Ptr<f32> lse, Ptr<f32> delta,
                                Ptr<In> dq, Float sm_scale, Int heads, Int seq_len, Int stride_z, Int stride_h,
                                Int stride_m, Const<int> BM, Const<int> BN, Const<int> HEAD_DIM, Const<int> CAUSAL) {
  check_attention_backward_constants(BM, BN, HEAD_DIM, CAUSAL);
  Tensor bh = program_id(1);
  Tensor base = (bh / heads) * stride_z + (bh % heads) * stride_h;
  Tensor offs_m = program_id(0) * BM + arange(0, BM);
  Tensor offs_d = arange(0, HEAD_DIM);
  Tensor query_rows = expand_dims(offs_m < seq_len, 1);
  Tensor q_offsets = base + expand_dims(offs_m, 1) * stride_m + expand_dims(offs_d, 0);
  Tensor q_tile = load(q + q_offsets, query_rows), do_tile = load(d_o + q_offsets, query_rows);
  Tensor stats = bh * seq_len + offs_m;
  Tensor lse_m = load(lse + stats, offs_m < seq_len), delta_m = load(delta + stats, offs_m < seq_len);
  Tensor qk_scale = sm_scale * static_cast<float>(std::numbers::log2e);

  Tensor dq_acc = zeros<f32>({BM, HEAD_DIM});
  // Folds the key block at start_n in; `masked`: it straddles the diagonal (causal) or seq_len.
  auto fold_keys = [&](const Tensor& start_n, bool masked) {
    Tensor offs_n = start_n + arange(0, BN);
    Tensor key_in_range = offs_n < seq_len;
    Tensor kv_offsets = base + expand_dims(offs_n, 1) * stride_m + expand_dims(offs_d, 0);
    Tensor k_tile = masked ? load(k + kv_offsets, expand_dims(key_in_range, 1)) : load(k + kv_offsets);
    Tensor v_tile = masked ? load(v + kv_offsets, expand_dims(key_in_range, 1)) : load(v + kv_offsets);
    Tensor s = dot(q_tile, trans(k_tile)) * qk_scale;  // [BM, BN]
    Tensor p = exp2(s - expand_dims(lse_m, 1));
    if (masked) p = where(causal_or_in_range(offs_m, offs_n, key_in_range, CAUSAL), p, 0.0f);
    Tensor dp = dot(do_tile, trans(v_tile));
    Tensor ds = p * (dp - expand_dims(delta_m, 1));
    dq_acc = dot(cast(ds, q_tile.dtype()), k_tile, dq_acc);
  };
  // Keys [0, unmasked_end) exist and every row here sees them, as in the forward: causally the whole key blocks
  // before the program's first row, else every whole block.
  Tensor start_m = program_id(0) * BM;
  Tensor unmasked_end = CAUSAL ? (start_m / BN) * BN : (seq_len / BN) * BN;
  Tensor masked_end = CAUSAL ? minimum(start_m + BM, seq_len) : Tensor(seq_len);
  for (Tensor start_n : range(0, unmasked_end, BN)) fold_keys(start_n, false);
  for (Tensor start_n : range(unmasked_end, masked_end, BN)) fold_keys(start_n, true);
  store(dq + q_offsets, cast(dq_acc * sm_scale, q_tile.dtype()), query_rows);
}

inline std::vector<std::string> attention_layout_params() {
  return {"heads", "seq_len", "stride_z", "stride_h", "stride_m"};
}

// "attention_fwd_lse", "attention_bwd_preprocess", "attention_bwd_dkdv", "attention_bwd_dq" (f16) and their
// "..._bf16" twins.
template <class In> inline KernelDef attention_fwd_lse_kernel_of(const std::string& suffix) {
  std::vector<std::string> names{"q", "k", "v", "out", "lse", "sm_scale"};
  for (const std::string& n : attention_layout_params()) names.push_back(n);
  for (const char* n : {"BM", "BN", "HEAD_DIM", "CAUSAL"}) names.push_back(n);
  return kernel("attention_fwd_lse" + suffix, attention_fwd_lse_of<In>, names);
}
template <class In> inline KernelDef attention_bwd_preprocess_kernel_of(const std::string& suffix) {
  std::vector<std::string> names{"o", "d_o", "delta"};
  for (const std::string& n : attention_layout_params()) names.push_back(n);
  for (const char* n : {"BM", "HEAD_DIM"}) names.push_back(n);
  return kernel("attention_bwd_preprocess" + suffix, attention_bwd_preprocess_of<In>, names);
}
template <class In> inline KernelDef attention_bwd_dkdv_kernel_of(const std::string& suffix) {
  std::vector<std::string> names{"q", "k", "v", "d_o", "lse", "delta", "dk", "dv", "sm_scale"};
  for (const std::string& n : attention_layout_params()) names.push_back(n);
  for (const char* n : {"BM", "BN", "HEAD_DIM", "CAUSAL"}) names.push_back(n);
  return kernel("attention_bwd_dkdv" + suffix, attention_bwd_dkdv_of<In>, names);
}
template <class In> inline KernelDef attention_bwd_dq_kernel_of(const std::string& suffix) {
  std::vector<std::string> names{"q", "k", "v", "d_o", "lse", "delta", "dq", "sm_scale"};
  for (const std::string& n : attention_layout_params()) names.push_back(n);
  for (const char* n : {"BM", "BN", "HEAD_DIM", "CAUSAL"}) names.push_back(n);
  return kernel("attention_bwd_dq" + suffix, attention_bwd_dq_of<In>, names);
}

}  // namespace tessera::kernels
