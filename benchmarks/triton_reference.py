"""Triton versions of the tutorial kernels, the third column of benchmarks/bench_tutorials.py.

They follow the same algorithms as the Tessera kernels in frontend/tessera/kernels/ (one row per program for
softmax and layer norm, a chunked three-pass layer norm forward, a two-stage dw/db reduction in the backward,
grouped tile ordering for matmul, autotuned over the configurations Tessera's is tuned over, a one-pass
online-softmax attention forward, autotuned as Tessera's in the full sweep, and FlashAttention-2's backward in
the three kernels Tessera's takes), so the comparison is about code generation rather than about the algorithm. Each
wrapper writes into tensors the caller allocated, so benchmark timings exclude allocation.

Importing this module imports triton; bench_tutorials.py imports it only once torch and a GPU were found.
"""

import triton
import triton.language as tl


def next_power_of_2(n):
    return 1 << (int(n) - 1).bit_length()


def num_warps_for(block):
    """More warps for longer rows, so each thread keeps a modest number of elements in registers."""
    return 16 if block >= 8192 else 8 if block >= 2048 else 4


# --- vector add -------------------------------------------------------------------------------------------------

@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def vector_add(x, y, out, block=1024):
    n = out.numel()
    _add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block, num_warps=4)
    return out


# --- softmax ----------------------------------------------------------------------------------------------------

@triton.jit
def _softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    numerator = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, numerator / tl.sum(numerator, axis=0), mask=mask)


def softmax(x, out):
    rows, cols = x.shape
    block = next_power_of_2(cols)
    _softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=block, num_warps=num_warps_for(block))
    return out


# --- layer norm forward -----------------------------------------------------------------------------------------

@triton.jit
def _layernorm_fwd_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, row_stride, n_cols, eps,
                          BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * row_stride
    y_row = y_ptr + row * row_stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        centered = tl.where(mask, tl.load(x_row + cols, mask=mask, other=0.0) - mean, 0.0)
        acc += centered * centered
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        normalized = (tl.load(x_row + cols, mask=mask, other=0.0) - mean) * rstd
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        tl.store(y_row + cols, normalized * w + b, mask=mask)


def layernorm_fwd(x, weight, bias, eps, y, mean, rstd, block):
    rows, cols = x.shape
    _layernorm_fwd_kernel[(rows,)](x, y, weight, bias, mean, rstd, x.stride(0), cols, eps, BLOCK=block,
                                   num_warps=num_warps_for(block))
    return y, mean, rstd


# --- layer norm backward (two-stage dw/db) ----------------------------------------------------------------------

@triton.jit
def _layernorm_bwd_dx_kernel(x_ptr, dy_ptr, dx_ptr, w_ptr, mean_ptr, rstd_ptr, partial_dw_ptr, partial_db_ptr,
                             row_stride, n_rows, n_cols, rows_per_program, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    dw_acc = tl.zeros([BLOCK], dtype=tl.float32)
    db_acc = tl.zeros([BLOCK], dtype=tl.float32)
    first_row = pid * rows_per_program
    end_row = tl.minimum(first_row + rows_per_program, n_rows)
    for row in range(first_row, end_row):
        offsets = row.to(tl.int64) * row_stride + cols
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0)
        row_rstd = tl.load(rstd_ptr + row)
        x_hat = tl.where(mask, (x - tl.load(mean_ptr + row)) * row_rstd, 0.0)
        g = dy * w
        c1 = tl.sum(x_hat * g, axis=0) / n_cols
        c2 = tl.sum(g, axis=0) / n_cols
        tl.store(dx_ptr + offsets, (g - (x_hat * c1 + c2)) * row_rstd, mask=mask)
        dw_acc += dy * x_hat
        db_acc += dy
    slot = pid * n_cols + cols
    tl.store(partial_dw_ptr + slot, dw_acc, mask=mask)
    tl.store(partial_db_ptr + slot, db_acc, mask=mask)


@triton.jit
def _layernorm_bwd_dwdb_kernel(partial_dw_ptr, partial_db_ptr, dw_ptr, db_ptr, n_partials, n_cols,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw_acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    db_acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, n_partials, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < n_partials) & (cols[None, :] < n_cols)
        offsets = rows[:, None] * n_cols + cols[None, :]
        dw_acc += tl.load(partial_dw_ptr + offsets, mask=mask, other=0.0)
        db_acc += tl.load(partial_db_ptr + offsets, mask=mask, other=0.0)
    col_mask = cols < n_cols
    tl.store(dw_ptr + cols, tl.sum(dw_acc, axis=0), mask=col_mask)
    tl.store(db_ptr + cols, tl.sum(db_acc, axis=0), mask=col_mask)


def layernorm_bwd(x, dy, weight, mean, rstd, dx, dw, db, partial_dw, partial_db, rows_per_program,
                  block_m=32, block_n=128):
    """partial_dw/partial_db: [cdiv(rows, rows_per_program), cols] scratch buffers."""
    rows, cols = x.shape
    block = next_power_of_2(cols)
    programs = triton.cdiv(rows, rows_per_program)
    _layernorm_bwd_dx_kernel[(programs,)](x, dy, dx, weight, mean, rstd, partial_dw, partial_db, x.stride(0), rows,
                                          cols, rows_per_program, BLOCK=block, num_warps=num_warps_for(block))
    _layernorm_bwd_dwdb_kernel[(triton.cdiv(cols, block_n),)](partial_dw, partial_db, dw, db, programs, cols,
                                                              BLOCK_M=block_m, BLOCK_N=block_n, num_warps=4)
    return dx, dw, db


# --- matmul -----------------------------------------------------------------------------------------------------

@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    programs_per_group = GROUP_M * num_pid_n
    first_pm = (pid // programs_per_group) * GROUP_M
    group_rows = tl.minimum(num_pid_m - first_pm, GROUP_M)
    pm = first_pm + (pid % programs_per_group) % group_rows
    pn = (pid % programs_per_group) // group_rows

    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None].to(tl.int64) * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None].to(tl.int64) * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


# The configuration without autotuning, a common good choice for large f16/bf16 problems on recent GPUs.
MATMUL_CONFIG = dict(BM=128, BN=128, BK=64, GROUP_M=8, num_warps=8, num_stages=3)
_tuned_matmuls = {}  # configs -> the kernel autotuned over them


def matmul_tuner(configs):
    """_matmul_kernel autotuned per (M, N, K) over configs, (BM, BN, BK, num_warps, num_stages) tuples, as
    Triton's matmul tutorial tunes its kernel (made once per set of configs)."""
    configs = tuple(tuple(c) for c in configs)
    if configs not in _tuned_matmuls:
        _tuned_matmuls[configs] = triton.autotune(
            configs=[triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP_M": 8}, num_warps=warps, num_stages=stages)
                     for bm, bn, bk, warps, stages in configs],
            key=["M", "N", "K"])(_matmul_kernel)
    return _tuned_matmuls[configs]


def matmul(a, b, c, configs=None):
    """c = a @ b for f16 or bf16 a and b, accumulated in f32, stored in c's dtype: autotuned over configs
    (matmul_tuner), or MATMUL_CONFIG when there are none."""
    M, K = a.shape
    N = b.shape[1]
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    if configs is None:
        cfg = MATMUL_CONFIG
        _matmul_kernel[(triton.cdiv(M, cfg["BM"]) * triton.cdiv(N, cfg["BN"]),)](*args, **cfg)
        return c
    matmul_tuner(configs)[lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)](*args)
    return c


def matmul_best_config(configs):
    """The config the tuner chose for its last problem, as (BM, BN, BK, num_warps, num_stages); None before one."""
    best = getattr(matmul_tuner(configs), "best_config", None)
    if best is None:
        return None
    return (best.kwargs["BM"], best.kwargs["BN"], best.kwargs["BK"], best.num_warps, best.num_stages)


# --- attention forward ------------------------------------------------------------------------------------------

@triton.jit
def _attend(acc, row_max, row_sum, q, k_base, v_base, offs_m, start_n, seq_len, stride_kn, stride_vn, qk_scale,
            BN: tl.constexpr, HEAD_DIM: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """Folds the keys start_n .. start_n + BN into the online softmax (scores in log2 units)."""
    offs_n = start_n + tl.arange(0, BN)
    offs_d = tl.arange(0, HEAD_DIM)
    key_ok = offs_n < seq_len
    # Keys past seq_len load as zeros (`other`: Triton leaves masked-off lanes undefined), so that their P of 0
    # times V's row stays 0.
    kt = tl.load(k_base + offs_n[None, :] * stride_kn + offs_d[:, None], mask=key_ok[None, :] if MASKED else None,
                 other=0.0 if MASKED else None)
    s = tl.dot(q, kt) * qk_scale
    if MASKED:
        visible = key_ok[None, :]
        if CAUSAL:
            visible = visible & (offs_m[:, None] >= offs_n[None, :])
        s = tl.where(visible, s, float("-inf"))
    new_max = tl.maximum(row_max, tl.max(s, 1))
    p = tl.math.exp2(s - new_max[:, None])
    rescale = tl.math.exp2(row_max - new_max)
    row_sum = row_sum * rescale + tl.sum(p, 1)
    v = tl.load(v_base + offs_n[:, None] * stride_vn + offs_d[None, :], mask=key_ok[:, None] if MASKED else None,
                other=0.0 if MASKED else None)
    acc = tl.dot(p.to(v.dtype), v, acc * rescale[:, None])
    return acc, new_max, row_sum


@triton.jit
def _attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, sm_scale, heads, seq_len, stride_qz, stride_qh,
                          stride_qm, stride_kz, stride_kh, stride_kn, stride_vz, stride_vh, stride_vn, stride_oz,
                          stride_oh, stride_om, BM: tl.constexpr, BN: tl.constexpr, HEAD_DIM: tl.constexpr,
                          CAUSAL: tl.constexpr, SAVE_LSE: tl.constexpr):
    """With SAVE_LSE, also stores each row's log2-sum-exp2 of its scaled scores at lse_ptr[bh * seq_len + row] (f32),
    for the backward; without, lse_ptr is not read."""
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    batch = bh // heads
    head = bh % heads
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m[:, None] < seq_len
    q = tl.load(q_ptr + batch * stride_qz + head * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :],
                mask=row_ok, other=0.0)
    k_base = k_ptr + batch * stride_kz + head * stride_kh
    v_base = v_ptr + batch * stride_vz + head * stride_vh
    qk_scale = sm_scale * 1.4426950408889634  # log2(e)
    acc = tl.zeros([BM, HEAD_DIM], dtype=tl.float32)
    row_max = tl.full([BM], float("-inf"), dtype=tl.float32)
    row_sum = tl.zeros([BM], dtype=tl.float32)
    # Keys every row sees (left of the diagonal, or whole blocks), then the masked ones (diagonal, or ragged end).
    if CAUSAL:
        unmasked_end = start_m * BM
        masked_end = tl.minimum((start_m + 1) * BM, seq_len)
    else:
        unmasked_end = (seq_len // BN) * BN
        masked_end = seq_len
    for start_n in range(0, unmasked_end, BN):
        acc, row_max, row_sum = _attend(acc, row_max, row_sum, q, k_base, v_base, offs_m, start_n, seq_len, stride_kn,
                                        stride_vn, qk_scale, BN, HEAD_DIM, False, CAUSAL)
    for start_n in range(unmasked_end, masked_end, BN):
        acc, row_max, row_sum = _attend(acc, row_max, row_sum, q, k_base, v_base, offs_m, start_n, seq_len, stride_kn,
                                        stride_vn, qk_scale, BN, HEAD_DIM, True, CAUSAL)
    out = acc / row_sum[:, None]
    tl.store(o_ptr + batch * stride_oz + head * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :],
             out.to(o_ptr.dtype.element_ty), mask=row_ok)
    if SAVE_LSE:
        tl.store(lse_ptr + bh * seq_len + offs_m, row_max + tl.math.log2(row_sum), mask=offs_m < seq_len)


# One fixed configuration per head dimension, when the caller gives no configs to tune over.
ATTENTION_CONFIGS = {64: dict(BM=128, BN=64, num_warps=4, num_stages=3),
                     128: dict(BM=128, BN=64, num_warps=8, num_stages=3)}
_tuned_attentions = {}  # configs -> the kernel autotuned over them


def attention_tuner(configs):
    """_attention_fwd_kernel autotuned per sequence length, head dim and causality over configs, (BM, BN,
    num_warps, num_stages) tuples with BM a multiple of BN, as Triton's fused-attention tutorial tunes its kernel
    (made once per set of configs; Triton's autotuner also keys on the tensors' dtypes)."""
    configs = tuple(tuple(c) for c in configs)
    if configs not in _tuned_attentions:
        _tuned_attentions[configs] = triton.autotune(
            configs=[triton.Config({"BM": bm, "BN": bn}, num_warps=warps, num_stages=stages)
                     for bm, bn, warps, stages in configs],
            key=["seq_len", "HEAD_DIM", "CAUSAL"])(_attention_fwd_kernel)
    return _tuned_attentions[configs]


def attention(q, k, v, out, causal, sm_scale, configs=None):
    """out = softmax(q k^T * sm_scale) v for [batch, heads, seq_len, head_dim] f16 or bf16 tensors whose head
    dimension is contiguous; causal: query i sees keys 0..i. Autotuned over configs (attention_tuner), or
    ATTENTION_CONFIGS' one for the head dim when there are none."""
    batch, heads, seq_len, head_dim = q.shape
    strides = [x.stride(i) for x in (q, k, v, out) for i in range(3)]
    args = (q, k, v, out, out, sm_scale, heads, seq_len, *strides)  # lse_ptr: not read without SAVE_LSE
    if configs is None:
        cfg = ATTENTION_CONFIGS[head_dim]
        _attention_fwd_kernel[(triton.cdiv(seq_len, cfg["BM"]), batch * heads)](*args, HEAD_DIM=head_dim,
                                                                                CAUSAL=causal, SAVE_LSE=False, **cfg)
        return out
    attention_tuner(configs)[lambda meta: (triton.cdiv(seq_len, meta["BM"]), batch * heads)](
        *args, HEAD_DIM=head_dim, CAUSAL=causal, SAVE_LSE=False)
    return out


def attention_best_config(configs):
    """The config the attention tuner chose for its last problem, as (BM, BN, num_warps, num_stages); None before
    one."""
    best = getattr(attention_tuner(configs), "best_config", None)
    if best is None:
        return None
    return (best.kwargs["BM"], best.kwargs["BN"], best.num_warps, best.num_stages)


# --- attention backward -----------------------------------------------------------------------------------------
# FlashAttention-2's algorithm, as Tessera's attention_bwd_* kernels (frontend/tessera/kernels/attention_backward.h):
# delta = rowsum(O * dO); one program per BN keys accumulates dV += P^T dO and dK += dS^T Q over the query blocks
# that see them; one per BM queries accumulates dQ += dS K over the key blocks they see, P recomputed from the
# forward's log2-sum-exp2 statistic and dS = P * (dO V^T - delta). Q, K, V, O, dO and the gradients share one
# layout [batch, heads, seq_len, HEAD_DIM] (head dimension contiguous); the statistics are f32 [batch * heads,
# seq_len]. Rows past seq_len load as zeros, so they add nothing to dK and dV; only dQ masks keys past seq_len.

@triton.jit
def _attention_bwd_preprocess_kernel(o_ptr, do_ptr, delta_ptr, heads, seq_len, stride_z, stride_h, stride_m,
                                     BM: tl.constexpr, HEAD_DIM: tl.constexpr):
    bh = tl.program_id(1)
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    rows = offs_m < seq_len
    offsets = ((bh // heads) * stride_z + (bh % heads) * stride_h + offs_m[:, None] * stride_m +
               tl.arange(0, HEAD_DIM)[None, :])
    o = tl.load(o_ptr + offsets, mask=rows[:, None], other=0.0).to(tl.float32)
    do = tl.load(do_ptr + offsets, mask=rows[:, None], other=0.0).to(tl.float32)
    tl.store(delta_ptr + bh * seq_len + offs_m, tl.sum(o * do, 1), mask=rows)


@triton.jit
def _query_rows(q_ptr, do_ptr, lse_ptr, delta_ptr, base, bh, offs_m, offs_d, seq_len, stride_m):
    """Q, dO, the statistic and delta of query rows offs_m (zeros past seq_len), and the rows' element offsets."""
    rows = offs_m < seq_len
    q_offsets = base + offs_m[:, None] * stride_m + offs_d[None, :]
    q = tl.load(q_ptr + q_offsets, mask=rows[:, None], other=0.0)
    do = tl.load(do_ptr + q_offsets, mask=rows[:, None], other=0.0)
    lse = tl.load(lse_ptr + bh * seq_len + offs_m, mask=rows, other=0.0)
    delta = tl.load(delta_ptr + bh * seq_len + offs_m, mask=rows, other=0.0)
    return q, do, lse, delta, q_offsets


@triton.jit
def _fold_queries(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, base, bh, start_m, offs_n, offs_d, seq_len,
                  stride_m, qk_scale, BM: tl.constexpr, DIAGONAL: tl.constexpr):
    """Folds the query block at start_m into the dK and dV of keys offs_n; DIAGONAL: it straddles the diagonal."""
    offs_m = start_m + tl.arange(0, BM)
    q, do, lse, delta, _ = _query_rows(q_ptr, do_ptr, lse_ptr, delta_ptr, base, bh, offs_m, offs_d, seq_len, stride_m)
    pt = tl.math.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])  # P^T, [BN, BM]
    if DIAGONAL:
        pt = tl.where(offs_n[:, None] <= offs_m[None, :], pt, 0.0)
    dv = tl.dot(pt.to(q.dtype), do, dv)
    dst = pt * (tl.dot(v, tl.trans(do)) - delta[None, :])
    dk = tl.dot(dst.to(q.dtype), q, dk)
    return dk, dv


@triton.jit
def _attention_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, sm_scale, heads,
                               seq_len, stride_z, stride_h, stride_m, BM: tl.constexpr, BN: tl.constexpr,
                               HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr):
    bh = tl.program_id(1)
    base = (bh // heads) * stride_z + (bh % heads) * stride_h
    start_n = tl.program_id(0) * BN
    offs_n = start_n + tl.arange(0, BN)
    offs_d = tl.arange(0, HEAD_DIM)
    key_rows = (offs_n < seq_len)[:, None]
    kv_offsets = base + offs_n[:, None] * stride_m + offs_d[None, :]
    k = tl.load(k_ptr + kv_offsets, mask=key_rows, other=0.0)
    v = tl.load(v_ptr + kv_offsets, mask=key_rows, other=0.0)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e)
    dk = tl.zeros([BN, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BN, HEAD_DIM], dtype=tl.float32)
    if CAUSAL:
        # Query blocks from the one holding key start_n see some of these keys; from the first multiple of BM at or
        # after start_n + BN on, every row sees all of them.
        unmasked_m = tl.minimum(tl.cdiv(start_n + BN, BM) * BM, seq_len)
        for start_m in range((start_n // BM) * BM, unmasked_m, BM):
            dk, dv = _fold_queries(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, base, bh, start_m, offs_n, offs_d,
                                   seq_len, stride_m, qk_scale, BM, True)
        for start_m in range(unmasked_m, seq_len, BM):
            dk, dv = _fold_queries(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, base, bh, start_m, offs_n, offs_d,
                                   seq_len, stride_m, qk_scale, BM, False)
    else:
        for start_m in range(0, seq_len, BM):
            dk, dv = _fold_queries(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, base, bh, start_m, offs_n, offs_d,
                                   seq_len, stride_m, qk_scale, BM, False)
    tl.store(dk_ptr + kv_offsets, (dk * sm_scale).to(dk_ptr.dtype.element_ty), mask=key_rows)
    tl.store(dv_ptr + kv_offsets, dv.to(dv_ptr.dtype.element_ty), mask=key_rows)


@triton.jit
def _fold_keys(dq, q, do, lse, delta, k_ptr, v_ptr, base, offs_m, offs_d, start_n, seq_len, stride_m, qk_scale,
               BN: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """Folds the key block at start_n into dQ; MASKED: it straddles the diagonal (causal) or seq_len."""
    offs_n = start_n + tl.arange(0, BN)
    key_ok = offs_n < seq_len
    kv_offsets = base + offs_n[:, None] * stride_m + offs_d[None, :]
    k = tl.load(k_ptr + kv_offsets, mask=key_ok[:, None], other=0.0)
    v = tl.load(v_ptr + kv_offsets, mask=key_ok[:, None], other=0.0)
    p = tl.math.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])  # [BM, BN]
    if MASKED:
        visible = key_ok[None, :]
        if CAUSAL:
            visible = visible & (offs_m[:, None] >= offs_n[None, :])
        p = tl.where(visible, p, 0.0)
    ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
    return tl.dot(ds.to(q.dtype), k, dq)


@triton.jit
def _attention_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, sm_scale, heads, seq_len,
                             stride_z, stride_h, stride_m, BM: tl.constexpr, BN: tl.constexpr, HEAD_DIM: tl.constexpr,
                             CAUSAL: tl.constexpr):
    bh = tl.program_id(1)
    base = (bh // heads) * stride_z + (bh % heads) * stride_h
    start_m = tl.program_id(0) * BM
    offs_m = start_m + tl.arange(0, BM)
    offs_d = tl.arange(0, HEAD_DIM)
    q, do, lse, delta, q_offsets = _query_rows(q_ptr, do_ptr, lse_ptr, delta_ptr, base, bh, offs_m, offs_d, seq_len,
                                               stride_m)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e)
    dq = tl.zeros([BM, HEAD_DIM], dtype=tl.float32)
    # Keys every row here sees (the whole key blocks before the first row, causally; else every whole block), then
    # the masked ones, as in the forward.
    if CAUSAL:
        unmasked_end = (start_m // BN) * BN
        masked_end = tl.minimum(start_m + BM, seq_len)
    else:
        unmasked_end = (seq_len // BN) * BN
        masked_end = seq_len
    for start_n in range(0, unmasked_end, BN):
        dq = _fold_keys(dq, q, do, lse, delta, k_ptr, v_ptr, base, offs_m, offs_d, start_n, seq_len, stride_m,
                        qk_scale, BN, False, CAUSAL)
    for start_n in range(unmasked_end, masked_end, BN):
        dq = _fold_keys(dq, q, do, lse, delta, k_ptr, v_ptr, base, offs_m, offs_d, start_n, seq_len, stride_m,
                        qk_scale, BN, True, CAUSAL)
    tl.store(dq_ptr + q_offsets, (dq * sm_scale).to(dq_ptr.dtype.element_ty), mask=(offs_m < seq_len)[:, None])


def attention_forward_lse(q, k, v, out, lse, causal, sm_scale):
    """The forward at ATTENTION_CONFIGS' config for the head dim, also saving the statistics lse ([batch * heads,
    seq_len] f32) the backward needs."""
    batch, heads, seq_len, head_dim = q.shape
    cfg = ATTENTION_CONFIGS[head_dim]
    strides = [x.stride(i) for x in (q, k, v, out) for i in range(3)]
    _attention_fwd_kernel[(triton.cdiv(seq_len, cfg["BM"]), batch * heads)](
        q, k, v, out, lse, sm_scale, heads, seq_len, *strides, HEAD_DIM=head_dim, CAUSAL=causal, SAVE_LSE=True, **cfg)
    return out


def attention_backward(q, k, v, out, d_o, lse, delta, dq, dk, dv, causal, sm_scale, blocks):
    """dq, dk, dv of out = attention(q, k, v) given d_o and the forward's out and lse (attention_forward_lse); all
    [batch, heads, seq_len, head_dim] with one set of strides; delta is [batch * heads, seq_len] f32 scratch.
    blocks: ((BM, BN, num_warps) of the dK/dV kernel, (BM, BN, num_warps) of the dQ kernel), 3 stages."""
    batch, heads, seq_len, head_dim = q.shape
    layout = (heads, seq_len, q.stride(0), q.stride(1), q.stride(2))
    (dkdv_bm, dkdv_bn, dkdv_warps), (dq_bm, dq_bn, dq_warps) = blocks
    rows = (triton.cdiv(seq_len, dq_bm), batch * heads)
    _attention_bwd_preprocess_kernel[rows](out, d_o, delta, *layout, BM=dq_bm, HEAD_DIM=head_dim, num_warps=dq_warps)
    _attention_bwd_dkdv_kernel[(triton.cdiv(seq_len, dkdv_bn), batch * heads)](
        q, k, v, d_o, lse, delta, dk, dv, sm_scale, *layout, BM=dkdv_bm, BN=dkdv_bn, HEAD_DIM=head_dim, CAUSAL=causal,
        num_warps=dkdv_warps, num_stages=3)
    _attention_bwd_dq_kernel[rows](q, k, v, d_o, lse, delta, dq, sm_scale, *layout, BM=dq_bm, BN=dq_bn,
                                   HEAD_DIM=head_dim, CAUSAL=causal, num_warps=dq_warps, num_stages=3)
    return dq, dk, dv


__all__ = ["attention", "attention_backward", "attention_best_config", "attention_forward_lse", "attention_tuner",
           "layernorm_bwd", "layernorm_fwd", "matmul", "matmul_best_config", "matmul_tuner", "softmax", "vector_add"]
