// Fused attention forward (tutorials/05_attention.md), flash-attention style: out = softmax(Q K^T * sm_scale) V
// for Q, K, V, out of shape [batch, heads, seq_len, HEAD_DIM] with the head dimension contiguous. Each program
// computes BM query rows of one (batch, head): grid = (cdiv(seq_len, BM), batch * heads). It walks K and V once, in
// blocks of BN keys, keeping the softmax's running row max and row sum in f32 (the online softmax) and rescaling
// the f32 accumulator whenever the max grows, so the seq_len x seq_len score matrix never exists in memory.
//
// `attention_fwd_of<In>` takes f16 or bf16 inputs (out has the input type). CAUSAL = 1 lets query row i see keys
// 0..i only: blocks wholly above the diagonal are never visited, and only the blocks on it are masked.
#pragma once

#include <cmath>
#include <numbers>

#include "tessera/tessera.h"

namespace tessera::kernels {

// The online softmax's running state for a program's BM query rows.
struct OnlineSoftmax {
  Tensor acc;      // [BM, HEAD_DIM] f32: sum over the keys seen so far of exp2(s - m) * v
  Tensor row_max;  // [BM] f32: m, the largest scaled score seen so far (in log2 units)
  Tensor row_sum;  // [BM] f32: sum of exp2(s - m) over the keys seen so far
};

// Folds a block of keys into `state` from their scores `s` ([BM, BN] f32, scaled to log2 units, masked scores at
// -inf) and their values, which `load_v` reads ([BN, HEAD_DIM]): traced after the row sums, where the kernels have
// always read V. P is rounded to `in_type` (f16 or bf16), like V.
template <class LoadV>
inline void fold_scores(OnlineSoftmax& state, const Tensor& s, ir::Type in_type, LoadV load_v) {
  Tensor new_max = maximum(state.row_max, max(s, 1));
  Tensor p = exp2(s - expand_dims(new_max, 1));
  Tensor rescale = exp2(state.row_max - new_max);  // 0 on the first block, where row_max is -inf
  state.row_sum = state.row_sum * rescale + sum(p, 1);
  Tensor v = load_v();
  state.acc = dot(cast(p, in_type), v, state.acc * expand_dims(rescale, 1));
  state.row_max = new_max;
}

// Folds the block of BN keys `offs_n` into `state`. `q` is the program's [BM, HEAD_DIM] query tile, `k_base` and
// `v_base` point at key / value row 0 of this (batch, head). `qk_scale` is sm_scale * log2(e): scores are kept in
// log2 units so that exp2 (one ex2.approx on NVIDIA GPUs) replaces exp. `key_in_range` ([BN] i1) and `visible`
// ([BM, BN] i1) are undefined for blocks known to be whole and fully visible; else they mask the loads of K and V
// and the scores.
inline void attend_block(OnlineSoftmax& state, const Tensor& q, const Tensor& k_base, const Tensor& v_base,
                         const Tensor& offs_n, Int stride_kn, Int stride_vn, const Tensor& qk_scale,
                         const Tensor& key_in_range, const Tensor& visible, int HEAD_DIM) {
  Tensor offs_d = arange(0, HEAD_DIM);
  const bool masked = key_in_range.defined();
  // K^T: [HEAD_DIM, BN], read straight from K's rows (d is contiguous, so it is the fast dimension).
  Tensor kt_ptrs = k_base + expand_dims(offs_n, 0) * stride_kn + expand_dims(offs_d, 1);
  Tensor kt = masked ? load(kt_ptrs, expand_dims(key_in_range, 0)) : load(kt_ptrs);
  Tensor s = dot(q, kt) * qk_scale;  // [BM, BN] f32
  if (visible.defined()) s = where(visible, s, -INFINITY);
  fold_scores(state, s, q.dtype(), [&] {
    Tensor v_ptrs = v_base + expand_dims(offs_n, 1) * stride_vn + expand_dims(offs_d, 0);
    return masked ? load(v_ptrs, expand_dims(key_in_range, 1)) : load(v_ptrs);
  });
}

// The scores a masked block keeps ([BM, BN] i1): causally, key n is visible to row m when n <= m; else when the key
// exists (`key_in_range`, [BN]). The causal mask alone also hides every key past seq_len from every row that is
// stored (rows < seq_len), and the rows past seq_len see key m0 < seq_len, so their sums stay positive: no NaN, and
// they are never stored. Leaving `key_in_range` out of it saves a compare and an and per score where registers are
// scarcest (64 scores per thread at 128x128 blocks on 8 warps; on gfx942 it ended the causal kernels' SGPR spills).
inline Tensor causal_or_in_range(const Tensor& offs_m, const Tensor& offs_n, const Tensor& key_in_range, int CAUSAL) {
  if (CAUSAL) return expand_dims(offs_m, 1) >= expand_dims(offs_n, 0);
  return expand_dims(key_in_range, 0);
}

// Throws for constants no attention kernel here can be traced with.
inline void check_attention_constants(int BM, int BN, int HEAD_DIM, int CAUSAL) {
  if (BM <= 0 || BN <= 0 || HEAD_DIM <= 0)
    throw Error("attention needs positive BM, BN and HEAD_DIM, got BM = " + std::to_string(int(BM)) + ", BN = " +
                std::to_string(int(BN)) + ", HEAD_DIM = " + std::to_string(int(HEAD_DIM)));
  if (CAUSAL != 0 && CAUSAL != 1) throw Error("CAUSAL must be 0 or 1, got " + std::to_string(int(CAUSAL)));
  if (CAUSAL && int(BM) % int(BN) != 0)
    throw Error("causal attention needs BM to be a multiple of BN (the diagonal is whole key blocks), got BM = " +
                std::to_string(int(BM)) + ", BN = " + std::to_string(int(BN)));
}

// The forward's body; `lse` (undefined, or a pointer to f32 [batch * heads, seq_len]) receives each row's
// log2-sum-exp2 of its scaled scores, m + log2(l), which the backward pass (attention_backward.h) recomputes P from.
template <class In>
inline void attention_fwd_impl(Ptr<In> q, Ptr<In> k, Ptr<In> v, Ptr<In> out, const Tensor& lse, Float sm_scale,
                               Int heads, Int seq_len, Int stride_qz, Int stride_qh, Int stride_qm, Int stride_kz,
                               Int stride_kh, Int stride_kn, Int stride_vz, Int stride_vh, Int stride_vn, Int stride_oz,
                               Int stride_oh, Int stride_om, int BM, int BN, int HEAD_DIM, int CAUSAL) {
  check_attention_constants(BM, BN, HEAD_DIM, CAUSAL);
  Tensor start_m = program_id(0);
  Tensor bh = program_id(1);
  Tensor batch = bh / heads, head = bh % heads;
  Tensor offs_m = start_m * BM + arange(0, BM);
  Tensor offs_d = arange(0, HEAD_DIM);
  Tensor row_in_range = expand_dims(offs_m < seq_len, 1);

  Tensor q_ptrs = q + batch * stride_qz + head * stride_qh + expand_dims(offs_m, 1) * stride_qm + expand_dims(offs_d, 0);
  Tensor q_tile = load(q_ptrs, row_in_range);  // rows past seq_len read 0 and are never stored
  Tensor k_base = k + batch * stride_kz + head * stride_kh;
  Tensor v_base = v + batch * stride_vz + head * stride_vh;
  Tensor qk_scale = sm_scale * static_cast<float>(std::numbers::log2e);

  OnlineSoftmax state{zeros<f32>({BM, HEAD_DIM}), full<f32>({BM}, -INFINITY), zeros<f32>({BM})};
  // Keys [0, unmasked_end) are visible to every row of the program and exist: no mask. Causal: the blocks left of
  // the diagonal. Otherwise: every whole block of BN keys.
  Tensor unmasked_end = CAUSAL ? start_m * BM : (seq_len / BN) * BN;
  // Keys [unmasked_end, masked_end): the diagonal blocks (causal) or the ragged last block, masked.
  Tensor masked_end = CAUSAL ? minimum((start_m + 1) * BM, seq_len) : Tensor(seq_len);
  for (Tensor start_n : range(0, unmasked_end, BN)) {
    Tensor offs_n = start_n + arange(0, BN);
    attend_block(state, q_tile, k_base, v_base, offs_n, stride_kn, stride_vn, qk_scale, Tensor(), Tensor(), HEAD_DIM);
  }
  for (Tensor start_n : range(unmasked_end, masked_end, BN)) {
    Tensor offs_n = start_n + arange(0, BN);
    Tensor key_in_range = offs_n < seq_len;
    Tensor visible = causal_or_in_range(offs_m, offs_n, key_in_range, CAUSAL);
    attend_block(state, q_tile, k_base, v_base, offs_n, stride_kn, stride_vn, qk_scale, key_in_range, visible,
                 HEAD_DIM);
  }

  Tensor result = state.acc / expand_dims(state.row_sum, 1);
  Tensor o_ptrs =
      out + batch * stride_oz + head * stride_oh + expand_dims(offs_m, 1) * stride_om + expand_dims(offs_d, 0);
  store(o_ptrs, cast(result, q_tile.dtype()), row_in_range);
  if (lse.defined()) store(lse + bh * seq_len + offs_m, state.row_max + log2(state.row_sum), offs_m < seq_len);
}

template <class In>
inline void attention_fwd_of(Ptr<In> q, Ptr<In> k, Ptr<In> v, Ptr<In> out, Float sm_scale, Int heads, Int seq_len,
                             Int stride_qz, Int stride_qh, Int stride_qm, Int stride_kz, Int stride_kh, Int stride_kn,
                             Int stride_vz, Int stride_vh, Int stride_vn, Int stride_oz, Int stride_oh, Int stride_om,
                             Const<int> BM, Const<int> BN, Const<int> HEAD_DIM, Const<int> CAUSAL) {
  attention_fwd_impl<In>(q, k, v, out, Tensor(), sm_scale, heads, seq_len, stride_qz, stride_qh, stride_qm, stride_kz,
                         stride_kh, stride_kn, stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_om, BM, BN,
                         HEAD_DIM, CAUSAL);
}

// attention_fwd_of with Q, K, V and out read and written through tensor descriptors of shape
// [batch * heads, seq_len, HEAD_DIM] (blocks [1, BM, HEAD_DIM] for Q and out, [1, BN, HEAD_DIM] for K and V), as
// Triton's Hopper tutorial reads them: each block arrives whole, zero past seq_len, and the output block's rows
// past seq_len are never written (on sm_90a a TMA store), so the kernel computes no pointers and masks only the
// scores of keys past seq_len (and causally). grid = (cdiv(seq_len, BM), batch * heads).
// Throws unless descriptor `name`'s block is [1, rows, HEAD_DIM]: the kernel reads each block as a [rows, HEAD_DIM]
// matrix.
inline void check_attention_block(const TensorDescBase& desc, const char* name, int rows, int HEAD_DIM) {
  const std::vector<int64_t>& block = desc.value().type().blockShape();
  const std::vector<int64_t> want{1, rows, HEAD_DIM};
  if (block != want) {
    auto str = [](const std::vector<int64_t>& v) {
      std::string out;
      for (int64_t d : v) out += (out.empty() ? "[" : ", ") + std::to_string(d);
      return out + "]";
    };
    throw Error(std::string("attention_fwd_desc: descriptor '") + name + "' must have blocks of " + str(want) +
                " ([1, " + (std::string(name) == "k" || std::string(name) == "v" ? "BN" : "BM") +
                ", HEAD_DIM]), got " + str(block));
  }
}

// With `OverlapSoftmax` (the "..._overlap" kernels), each key loop computes the scores of its first block before it
// and, in the iteration that folds block j, issues Q K^T of block j+1 first: on sm_90a that product stays in flight
// on the tensor cores while the threads run block j's softmax (FlashAttention-3's overlap within a warpgroup),
// carried unscaled to the next iteration. The last iteration's next block lies past the loop's keys (TMA reads it
// as zeros past seq_len) and is never folded. It costs the registers of a second [BM, BN] f32 tile.
template <class In, bool OverlapSoftmax = false>
inline void attention_fwd_desc_of(TensorDesc<In> q, TensorDesc<In> k, TensorDesc<In> v, TensorDesc<In> out,
                                  Float sm_scale, Int seq_len, Const<int> BM, Const<int> BN, Const<int> HEAD_DIM,
                                  Const<int> CAUSAL) {
  check_attention_constants(BM, BN, HEAD_DIM, CAUSAL);
  check_attention_block(q, "q", BM, HEAD_DIM);
  check_attention_block(k, "k", BN, HEAD_DIM);
  check_attention_block(v, "v", BN, HEAD_DIM);
  check_attention_block(out, "out", BM, HEAD_DIM);
  Tensor start_m = program_id(0);
  Tensor bh = program_id(1);
  Tensor m0 = start_m * BM;
  Tensor offs_m = m0 + arange(0, BM);
  Tensor q_tile = reshape(load(q, {bh, m0, 0}), {BM, HEAD_DIM});
  Tensor qk_scale = sm_scale * static_cast<float>(std::numbers::log2e);
  OnlineSoftmax state{zeros<f32>({BM, HEAD_DIM}), full<f32>({BM}, -INFINITY), zeros<f32>({BM})};
  // K's block read as a matrix and transposed, V's as a matrix: on sm_90a both reach their dots' shared buffers by
  // TMA copies through the reshape (and K's trans); elsewhere expand-descriptor-loads reads them at rank 2 (and
  // transpose-loads K at transposed addresses), as attention_fwd's pointers do. Q, which both key loops read, is
  // read at rank 2 everywhere (its buffer's row order is one a TMA box cannot land). On sm_90a the output block
  // leaves by a TMA store. Zeros past seq_len.
  auto scores_of = [&](const auto& start_n) {  // Q K^T of the block at start_n, unscaled
    return dot(q_tile, trans(reshape(load(k, {bh, start_n, 0}), {BN, HEAD_DIM})));
  };
  auto fold = [&](Tensor s, const Tensor& start_n, const Tensor& visible) {
    s = s * qk_scale;
    if (visible.defined()) s = where(visible, s, -INFINITY);
    fold_scores(state, s, q_tile.dtype(), [&] { return reshape(load(v, {bh, start_n, 0}), {BN, HEAD_DIM}); });
  };
  auto visible_in = [&](const Tensor& start_n) {
    Tensor offs_n = start_n + arange(0, BN);
    return causal_or_in_range(offs_m, offs_n, offs_n < seq_len, CAUSAL);
  };
  Tensor unmasked_end = CAUSAL ? m0 : (seq_len / BN) * BN;
  Tensor masked_end = CAUSAL ? minimum((start_m + 1) * BM, seq_len) : Tensor(seq_len);
  if constexpr (!OverlapSoftmax) {
    for (Tensor start_n : range(0, unmasked_end, BN)) fold(scores_of(start_n), start_n, Tensor());
    for (Tensor start_n : range(unmasked_end, masked_end, BN)) fold(scores_of(start_n), start_n, visible_in(start_n));
  } else {
    Tensor scores = scores_of(0);
    for (Tensor start_n : range(0, unmasked_end, BN)) {
      Tensor current = scores;
      scores = scores_of(start_n + BN);
      fold(current, start_n, Tensor());
    }
    scores = scores_of(unmasked_end);
    for (Tensor start_n : range(unmasked_end, masked_end, BN)) {
      Tensor current = scores;
      scores = scores_of(start_n + BN);
      fold(current, start_n, visible_in(start_n));
    }
  }
  Tensor result = state.acc / expand_dims(state.row_sum, 1);
  store(out, {bh, m0, 0}, cast(result, q_tile.dtype()));  // [BM, HEAD_DIM] into the [1, BM, HEAD_DIM] block
}

inline std::vector<std::string> attention_param_names() {
  return {"q",         "k",         "v",         "out",       "sm_scale",  "heads",     "seq_len",   "stride_qz",
          "stride_qh", "stride_qm", "stride_kz", "stride_kh", "stride_kn", "stride_vz", "stride_vh", "stride_vn",
          "stride_oz", "stride_oh", "stride_om", "BM",        "BN",        "HEAD_DIM",  "CAUSAL"};
}

// "attention_fwd" (f16) and "attention_fwd_bf16".
inline KernelDef attention_fwd_kernel() {
  return kernel("attention_fwd", attention_fwd_of<f16>, attention_param_names());
}
inline KernelDef attention_fwd_bf16_kernel() {
  return kernel("attention_fwd_bf16", attention_fwd_of<bf16>, attention_param_names());
}

inline std::vector<std::string> attention_desc_param_names() {
  return {"q", "k", "v", "out", "sm_scale", "seq_len", "BM", "BN", "HEAD_DIM", "CAUSAL"};
}

// "attention_fwd_desc" (f16) and "attention_fwd_desc_bf16".
inline KernelDef attention_fwd_desc_kernel() {
  return kernel("attention_fwd_desc", attention_fwd_desc_of<f16>, attention_desc_param_names());
}
inline KernelDef attention_fwd_desc_bf16_kernel() {
  return kernel("attention_fwd_desc_bf16", attention_fwd_desc_of<bf16>, attention_desc_param_names());
}
// "attention_fwd_desc_overlap" (f16) and "attention_fwd_desc_overlap_bf16": the softmax overlapped with the next
// block's Q K^T (OverlapSoftmax above).
inline KernelDef attention_fwd_desc_overlap_kernel() {
  return kernel("attention_fwd_desc_overlap", attention_fwd_desc_of<f16, true>, attention_desc_param_names());
}
inline KernelDef attention_fwd_desc_overlap_bf16_kernel() {
  return kernel("attention_fwd_desc_overlap_bf16", attention_fwd_desc_of<bf16, true>, attention_desc_param_names());
}

}  // namespace tessera::kernels
