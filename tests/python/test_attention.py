"""The fused attention forward (tutorial 5, kernels/attention.h) against a float64 reference: small blocks on the
interpreter, in eager mode and on the emulator; ISSUE 12's configurations (BM 128 with BN 64/128 and head dims
64/128 on 8 warps, BM = BN = 64 with head dim 64 on 4 warps) on the emulator for sm_80, sm_90a and gfx942 (where
they fit in its LDS; else the compiler's error). Sequence lengths are multiples of neither block. And the backward
(kernels/attention_backward.h) against torch's float64 autograd, at the end."""

import math
import re

import pytest

torch = pytest.importorskip("torch")

import tessera  # noqa: E402

KERNELS = {torch.float16: tessera.kernels.attention_fwd, torch.bfloat16: tessera.kernels.attention_fwd_bf16}
# P and the output are rounded to the input type (8 significant bits for bf16, 11 for f16); inputs are N(0, 1).
TOLERANCE = {torch.float16: 2e-3, torch.bfloat16: 1.5e-2}


def attention(q, k, v, causal, BM, BN, num_warps=4, **launch):
    """q, k and v are [batch, heads, seq_len, head_dim] views of contiguous tensors (any order of the first three
    dimensions); the result is contiguous [batch, heads, seq_len, head_dim]."""
    batch, heads, seq_len, head_dim = q.shape
    out = torch.full_like(q, math.nan, memory_format=torch.contiguous_format)
    strides = [x.stride(i) for x in (q, k, v, out) for i in range(3)]
    KERNELS[q.dtype][(tessera.cdiv(seq_len, BM), batch * heads)](
        *(x if x.is_contiguous() else x.transpose(1, 2) for x in (q, k, v)), out, 1 / math.sqrt(head_dim), heads,
        seq_len, *strides, BM=BM, BN=BN, HEAD_DIM=head_dim, CAUSAL=int(causal), num_warps=num_warps, **launch)
    return out


def reference(q, k, v, causal):
    q, k, v = (x.double() for x in (q, k, v))
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        seq_len = q.shape[-2]
        s = s.masked_fill(~torch.ones(seq_len, seq_len, dtype=torch.bool).tril(), -math.inf)
    return torch.softmax(s, dim=-1) @ v


def random_qkv(shape, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=gen).to(dtype) for _ in range(3)]


def check(out, q, k, v, causal):
    tol = TOLERANCE[q.dtype]
    torch.testing.assert_close(out.double(), reference(q, k, v, causal), atol=tol, rtol=tol)


LAUNCHES = [pytest.param({"backend": b}, id=b) for b in ("interpreter", "eager")] + [
    pytest.param({"backend": "sim", "arch": arch}, id=f"sim-{arch}", marks=pytest.mark.sim)
    for arch in ("sm_80", "sm_90a", "gfx942")]


@pytest.mark.parametrize("launch", LAUNCHES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_small_blocks(launch, dtype, causal):
    # 2 x 3 (batch, head) pairs; q is stored [batch, seq_len, heads, head_dim] (its strides say so). 53 rows: one
    # whole and one ragged block of 32 queries, three whole and one ragged block of 16 keys.
    q, k, v = random_qkv((2, 3, 53, 64), dtype)
    q = q.transpose(1, 2).contiguous().transpose(1, 2)
    out = attention(q, k, v, causal, BM=32, BN=16, **launch)
    check(out, q, k, v, causal)


DESC_KERNELS = {torch.float16: tessera.kernels.attention_fwd_desc, torch.bfloat16: tessera.kernels.attention_fwd_desc_bf16}
OVERLAP_KERNELS = {torch.float16: tessera.kernels.attention_fwd_desc_overlap,
                   torch.bfloat16: tessera.kernels.attention_fwd_desc_overlap_bf16}


def attention_desc(q, k, v, causal, BM, BN, num_warps=4, overlap=False, **launch):
    """attention_fwd_desc (with `overlap`, attention_fwd_desc_overlap) on contiguous [batch, heads, seq_len,
    head_dim] tensors, through descriptors of their [batch * heads, seq_len, head_dim] views."""
    batch, heads, seq_len, head_dim = q.shape
    out = torch.full_like(q, math.nan)
    descs = [tessera.TensorDescriptor(x.reshape(batch * heads, seq_len, head_dim), (1, block, head_dim))
             for x, block in ((q, BM), (k, BN), (v, BN), (out, BM))]
    kernels = OVERLAP_KERNELS if overlap else DESC_KERNELS
    kernels[q.dtype][(tessera.cdiv(seq_len, BM), batch * heads)](
        *descs, 1 / math.sqrt(head_dim), seq_len, BM=BM, BN=BN, HEAD_DIM=head_dim, CAUSAL=int(causal),
        num_warps=num_warps, **launch)
    return out


# The descriptor kernel: 2 x 3 (batch, head) pairs of 53 rows, so that the blocks of every head but the last end
# inside the [6, 53, 64] tensors (the rows past seq_len belong to the next head and must not be read or written).
@pytest.mark.parametrize("launch", LAUNCHES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_descriptor_kernel_small_blocks(launch, dtype, causal):
    q, k, v = random_qkv((2, 3, 53, 64), dtype)
    check(attention_desc(q, k, v, causal, BM=32, BN=16, **launch), q, k, v, causal)


@pytest.mark.parametrize("seq_len", [1, 16, 40])
def test_sequence_shorter_than_or_equal_to_a_block(seq_len):
    q, k, v = random_qkv((1, 1, seq_len, 16), torch.float16)
    for causal in (False, True):
        check(attention(q, k, v, causal, BM=32, BN=16), q, k, v, causal)


def test_head_dim_128_and_rows_past_the_end_are_not_written():
    q, k, v = random_qkv((1, 2, 70, 128), torch.float16)
    out = torch.full((1, 2, 80, 128), 7.0, dtype=torch.float16)  # 10 spare rows per head: its strides say 80
    strides = [x.stride(i) for x in (q, k, v, out) for i in range(3)]
    tessera.kernels.attention_fwd[(3, 2)](q, k, v, out, 1 / math.sqrt(128), 2, 70, *strides, BM=32, BN=32,
                                           HEAD_DIM=128, CAUSAL=1)
    check(out[:, :, :70], q, k, v, True)
    assert bool((out[:, :, 70:] == 7.0).all())


@pytest.mark.parametrize("constants, message", [
    (dict(BM=32, BN=0, HEAD_DIM=64, CAUSAL=1), "positive BM, BN and HEAD_DIM, got BM = 32, BN = 0, HEAD_DIM = 64"),
    (dict(BM=32, BN=16, HEAD_DIM=-64, CAUSAL=0), "positive BM, BN and HEAD_DIM"),
    (dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=2), "CAUSAL must be 0 or 1, got 2"),
])
def test_bad_constants_are_clear_errors(constants, message):
    with pytest.raises(tessera.Error, match=message):
        tessera.kernels.attention_fwd.trace(**constants)


# The descriptor kernel reads each block as a [BM or BN, HEAD_DIM] matrix: other blocks are named before tracing
# goes further (a reshape error deep in the library would name neither the descriptor nor the constants).
@pytest.mark.parametrize("blocks, message", [
    (((1, 32, 64), (1, 16, 32), (1, 16, 64), (1, 32, 64)),
     r"descriptor 'k' must have blocks of \[1, 16, 64\] \(\[1, BN, HEAD_DIM\]\), got \[1, 16, 32\]"),
    (((32, 64), (1, 16, 64), (1, 16, 64), (1, 32, 64)),
     r"descriptor 'q' must have blocks of \[1, 32, 64\] \(\[1, BM, HEAD_DIM\]\), got \[32, 64\]"),
])
def test_descriptor_blocks_that_do_not_match_the_constants_are_clear_errors(blocks, message):
    x = torch.zeros(2, 64, 64, dtype=torch.float16)
    descs = [tessera.TensorDescriptor(x if len(b) == 3 else x.reshape(128, 64), b) for b in blocks]
    with pytest.raises(tessera.Error, match=message):
        tessera.kernels.attention_fwd_desc[(2, 2)](*descs, 0.125, 64, BM=32, BN=16, HEAD_DIM=64, CAUSAL=0)


def test_causal_needs_bm_a_multiple_of_bn():
    with pytest.raises(tessera.Error, match=r"causal attention needs BM to be a multiple of BN.*BM = 16, BN = 32"):
        tessera.kernels.attention_fwd.trace(BM=16, BN=32, HEAD_DIM=64, CAUSAL=1)
    tessera.kernels.attention_fwd.trace(BM=16, BN=32, HEAD_DIM=64, CAUSAL=0)  # without the diagonal, any blocks


def test_causal_skips_the_blocks_above_the_diagonal():
    """Only the first query block runs; the keys and values after it are NaN. The causal kernel never reads them
    (its rows are right); the non-causal one does (NaN)."""
    q, k, v = random_qkv((1, 1, 64, 16), torch.float16)
    k_poisoned, v_poisoned = k.clone(), v.clone()
    k_poisoned[:, :, 16:] = math.nan
    v_poisoned[:, :, 16:] = math.nan
    strides = [x.stride(i) for x in (q, k, v, q) for i in range(3)]
    for causal in (True, False):
        out = torch.zeros_like(q)
        tessera.kernels.attention_fwd[(1, 1)](q, k_poisoned, v_poisoned, out, 0.25, 1, 64, *strides, BM=16, BN=16,
                                              HEAD_DIM=16, CAUSAL=int(causal))
        if causal:
            torch.testing.assert_close(out[:, :, :16].double(), reference(q, k, v, True)[:, :, :16], atol=2e-3,
                                       rtol=2e-3)
        else:
            assert bool(out[:, :, :16].isnan().all())


# ISSUE 12's configurations: (BM, BN, HEAD_DIM, num_warps). On the emulator, two query blocks (the second ragged)
# of one head; f16 for sm_80 and gfx942, bf16 for sm_90a. Every one fits gfx942's 64 KiB of LDS: the conversions
# whose padded [128, 128] f32 exchange would need 66048 bytes go through their scratch in rounds.
CONFIGS = [(128, 64, 64, 8), (128, 128, 64, 8), (128, 64, 128, 8), (128, 128, 128, 8), (64, 64, 64, 4)]


@pytest.mark.sim
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "{}x{}_d{}_w{}".format(*c))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("arch, dtype", [("sm_80", torch.float16), ("sm_90a", torch.bfloat16),
                                         ("gfx942", torch.float16)], ids=["sm_80-f16", "sm_90a-bf16", "gfx942-f16"])
def test_standard_configs_on_the_emulator(config, causal, arch, dtype):
    BM, BN, head_dim, num_warps = config
    q, k, v = random_qkv((1, 1, BM + BN // 2 + 3, head_dim), dtype)
    launch = dict(BM=BM, BN=BN, num_warps=num_warps, backend="sim", arch=arch)
    check(attention(q, k, v, causal, **launch), q, k, v, causal)


# gfx942 with bf16 inputs where the chained dots take the transposed MFMA fragments (M a multiple of 16 rows per
# wave) and P V takes P from registers: P's registers are bf16 there (the "1k" MFMA reads them as i16 vectors).
@pytest.mark.sim
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("config", [(64, 64, 64, 4), (128, 64, 64, 8)], ids=lambda c: "{}x{}_d{}_w{}".format(*c))
def test_gfx942_bf16_p_in_registers(config, causal):
    BM, BN, head_dim, num_warps = config
    q, k, v = random_qkv((1, 1, BM + BN // 2 + 3, head_dim), torch.bfloat16)
    check(attention(q, k, v, causal, BM=BM, BN=BN, num_warps=num_warps, backend="sim", arch="gfx942"), q, k, v,
          causal)


# matrix_instr_nonkdim=32 on gfx942: where each wave owns whole 32-row blocks (BM 128 on 4 waves) and the blocks'
# N and K are multiples of 32, both chained dots run v_mfma_f32_32x32x8 on the transposed 32x32 fragments (lane l:
# row l % 32, columns 8 j + 4 (l / 32) + 0..3), and P still goes to P V in registers, a K step of 8 per 4 of them.
# At 8 waves (16 rows each) they keep 16x16.
@pytest.mark.sim
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("config", [(128, 64, 64, 4), (128, 32, 128, 4)], ids=lambda c: "{}x{}_d{}_w{}".format(*c))
def test_gfx942_attention_on_32x32_mfma(config, causal, dtype):
    BM, BN, head_dim, num_warps = config
    meta = dict(BM=BM, BN=BN, HEAD_DIM=head_dim, CAUSAL=int(causal))
    kernel = KERNELS[dtype]
    large = kernel.compile(target="amdgpu", arch="gfx942", num_warps=num_warps, matrix_instr_nonkdim=32, **meta)
    instruction = "llvm.amdgcn.mfma.f32.32x32x8" + ("f16" if dtype == torch.float16 else "bf16.1k")
    assert instruction in large.llvm_ir and "mfma.f32.16x16x16" not in large.llvm_ir
    assert "a_in_registers = true" in large.ir_stages[-1][1]
    assert large.resources()["scratch_bytes"] == 0
    small = kernel.compile(target="amdgpu", arch="gfx942", num_warps=8, matrix_instr_nonkdim=32, **meta)
    assert "32x32x8" not in small.llvm_ir and "mfma.f32.16x16x16" in small.llvm_ir
    q, k, v = random_qkv((1, 2, BM + BN // 2 + 3, head_dim), dtype)
    check(attention(q, k, v, causal, BM=BM, BN=BN, num_warps=num_warps, backend="sim", arch="gfx942",
                    matrix_instr_nonkdim=32), q, k, v, causal)


# The descriptor kernel at the first configuration on each emulated arch (on sm_90a its output leaves by a TMA
# store), over two heads whose query blocks end inside the tensors.
@pytest.mark.sim
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("arch, config", [("sm_80", (128, 64, 64, 8)), ("sm_90a", (128, 64, 64, 8)),
                                          ("gfx942", (64, 64, 64, 4))], ids=["sm_80", "sm_90a", "gfx942"])
def test_descriptor_kernel_on_the_emulator(arch, config, causal):
    BM, BN, head_dim, num_warps = config
    q, k, v = random_qkv((1, 2, BM + BN // 2 + 3, head_dim), torch.bfloat16 if arch == "sm_90a" else torch.float16)
    launch = dict(BM=BM, BN=BN, num_warps=num_warps, backend="sim", arch=arch)
    check(attention_desc(q, k, v, causal, **launch), q, k, v, causal)


# Warp-specialized on sm_90a: a producer warpgroup issues K's and V's TMA copies for both key loops (the unmasked
# blocks, then the rest) into one set of buffers, the kernel's warps consume. Two heads of a ragged length (the
# second loop runs), and at seq_len 64 = BM (it runs no iteration); the emulator's racecheck and barrier checks find
# nothing, also where 8 warps (two warpgroups) take turns issuing Q K^T. The kernel has one producer region, and the same shared memory as without it but for the handing-back
# barriers.
@pytest.mark.sim
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("config, seq_len", [((128, 64, 64, 8), 195), ((64, 64, 64, 4), 131), ((64, 64, 64, 4), 64)],
                         ids=["128x64-8w", "64x64-4w", "one-block"])
def test_descriptor_kernel_warp_specialized_on_the_emulator(config, seq_len, causal):
    BM, BN, head_dim, num_warps = config
    q, k, v = random_qkv((1, 2, seq_len, head_dim), torch.float16)
    launch = dict(BM=BM, BN=BN, num_warps=num_warps, backend="sim", arch="sm_90a", warp_specialize=True)
    check(attention_desc(q, k, v, causal, **launch), q, k, v, causal)
    assert tessera.sim.last_report()["findings"] == []
    descs = {name: tessera.TensorDescriptor(q.reshape(2, seq_len, head_dim), (1, block, head_dim))
             for name, block in (("q", BM), ("k", BN), ("v", BN), ("out", BM))}
    constants = dict(arch="sm_90a", num_warps=num_warps, specialization=descs, BM=BM, BN=BN, HEAD_DIM=head_dim,
                     CAUSAL=int(causal))
    specialized = tessera.kernels.attention_fwd_desc.compile(warp_specialize=True, **constants)
    plain = tessera.kernels.attention_fwd_desc.compile(**constants)
    final = specialized.ir_stages[-1][1]
    assert final.count("warp_specialize {") == 1 and final.count("async_tma_copy") == 4  # K and V, two loops
    # Two consumer warpgroups take turns issuing each loop's Q K^T (order-consumer-groups); one has nobody to.
    two_groups = num_warps == 8
    assert final.count("turn_wait {groups = 2}") == (2 if two_groups else 0)
    assert final.count("turn_pass {groups = 2}") == (2 if two_groups else 0)
    assert final.count("turn_pass {groups = 2, only_group = 1}") == (2 if two_groups else 0)
    assert final.count("turn_wait {groups = 2, only_group = 0}") == (2 if two_groups else 0)
    assert specialized.shared_bytes == plain.shared_bytes + 32  # + the empty barriers (3 stages, 16-byte aligned)


@pytest.mark.parametrize("config, reason", [
    ((16, 32, 64, 4), r"the wgmma lowering takes f16 .*; this dot is f16 x f16 -> f32, M x N x K = 16 x 32 x 64"),
    ((64, 64, 64, 8), r"each of the 8 warps takes whole 16-row blocks: M = 64 must be a multiple of 128"),
], ids=["16-rows", "64-rows-8w"])
def test_warp_specialize_refusal_names_each_dot_and_why_it_is_not_fed_by_tma(config, reason):
    # No loop's dots run on wgmma, so no copy is a TMA copy and no producer can take them: the error says so for
    # both dots of the key loop (Q K^T and P V, whose B operands K and V are the copies), at their lines.
    BM, BN, head_dim, num_warps = config
    q, k, v = random_qkv((1, 1, 40, head_dim), torch.float16)
    with pytest.raises(tessera.Error, match="warp_specialize needs a loop") as info:
        attention_desc(q, k, v, False, BM=BM, BN=BN, num_warps=num_warps, backend="sim", arch="sm_90a",
                       warp_specialize=True)
    lines = str(info.value).splitlines()[1:]
    assert len(lines) == 2, lines
    for line in lines:
        assert re.match(r"  \S*attention\.h:\d+:\d+: operand B of this dot is copied by async_copy: the dot does "
                        r"not run on wgmma, which TMA copies feed: ", line), line
    assert re.search(reason, lines[0]), lines[0]
    assert len({line.split(": ")[0] for line in lines}) == 2  # two dots, two lines of attention.h


# Persistent as well: the programs of one emulated multiprocessor each loop over several (query block, head) tiles,
# the producer running both key loops of every tile into one set of stages, the consumers counting their parities on
# across loops and tiles (a count that restarted per loop or per tile hangs a wait, which the emulator reports).
# At 128x128, head dim 128, the output's staging for its TMA store lives beside the stages (the producer fills them
# for the next tile meanwhile): pipeline-loops counts it and keeps 2 stages, which fit sm_90a (3 would not, and the
# emulator, like the driver, refuses a launch over the limit).
@pytest.mark.sim
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("config, seq_len",
                         [((128, 64, 64, 8), 195), ((64, 64, 64, 4), 131), ((128, 128, 128, 8), 150)],
                         ids=["128x64-8w", "64x64-4w", "128x128-d128-8w"])
def test_descriptor_kernel_persistent_and_warp_specialized_on_the_emulator(config, seq_len, causal):
    BM, BN, head_dim, num_warps = config
    q, k, v = random_qkv((2, 2, seq_len, head_dim), torch.float16)
    runtime = tessera.sim.runtime(arch="sm_90a")
    runtime.multiprocessors = 1
    try:
        out = attention_desc(q, k, v, causal, BM=BM, BN=BN, num_warps=num_warps, backend="sim", arch="sm_90a",
                             warp_specialize=True, persistent=True)
    finally:
        runtime.multiprocessors = 0
    check(out, q, k, v, causal)
    report = tessera.sim.last_report()
    assert report["findings"] == []
    tiles = 4 * -(-seq_len // BM)
    assert report["grid"][0] < tiles, "every program should run several tiles"
    descs = {name: tessera.TensorDescriptor(q.reshape(4, seq_len, head_dim), (1, block, head_dim))
             for name, block in (("q", BM), ("k", BN), ("v", BN), ("out", BM))}
    final = tessera.kernels.attention_fwd_desc.compile(
        arch="sm_90a", num_warps=num_warps, specialization=descs, BM=BM, BN=BN, HEAD_DIM=head_dim,
        CAUSAL=int(causal), warp_specialize=True, persistent=True).ir_stages[-1][1]
    assert final.count("warp_specialize {") == 1 and final.count("persistent_tiles = true") == 1
    assert final.count("async_tma_copy") == 4  # K and V, two loops, one producer
    assert final.count("iteration_base") == 1  # the first loop's count, which the second goes on with


# The softmax overlapped with the next key block's Q K^T (attention_fwd_desc_overlap): each key loop computes its
# first block's scores before it and, in the iteration that folds block j, issues block j+1's first. On sm_90a that
# product is left in flight (pending = 1) through block j's softmax, besides P V; the carried scores are waited for
# before the next product is issued. Right on the interpreter, eager mode and every emulated arch, causal and not,
# at ragged lengths (the last iteration's next block lies past the keys: zeros, never folded); plain,
# warp-specialized and persistent on sm_90a with no finding (a read of the scores before their wait is one).
def waits_leaving_a_group_pending(final_ir):
    return sum("dot_wait" in line and "pending = 1" in line for line in final_ir.splitlines())


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("launch", [{"backend": "interpreter"}, {"backend": "eager"},
                                    pytest.param({"backend": "sim", "arch": "sm_80"}, marks=pytest.mark.sim),
                                    pytest.param({"backend": "sim", "arch": "gfx942"}, marks=pytest.mark.sim)],
                         ids=["interpreter", "eager", "sim-sm_80", "sim-gfx942"])
def test_overlapped_softmax_matches_on_every_backend(launch, causal):
    q, k, v = random_qkv((1, 2, 131, 64), torch.float16)
    check(attention_desc(q, k, v, causal, BM=64, BN=64, overlap=True, **launch), q, k, v, causal)


@pytest.mark.sim
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("variant", [{}, {"warp_specialize": True}, {"warp_specialize": True, "persistent": True}],
                         ids=["plain", "ws", "ws-persistent"])
@pytest.mark.parametrize("config, seq_len", [((128, 64, 64, 8), 195), ((64, 64, 64, 4), 131)],
                         ids=["128x64-8w", "64x64-4w"])
def test_overlapped_softmax_on_sm90a(config, seq_len, variant, causal):
    BM, BN, head_dim, num_warps = config
    q, k, v = random_qkv((1, 2, seq_len, head_dim), torch.bfloat16)
    out = attention_desc(q, k, v, causal, BM=BM, BN=BN, num_warps=num_warps, overlap=True, backend="sim",
                         arch="sm_90a", **variant)
    check(out, q, k, v, causal)
    assert tessera.sim.last_report()["findings"] == []
    descs = {name: tessera.TensorDescriptor(q.reshape(2, seq_len, head_dim), (1, block, head_dim))
             for name, block in (("q", BM), ("k", BN), ("v", BN), ("out", BM))}
    finals = [kernel.compile(arch="sm_90a", num_warps=num_warps, specialization=descs, BM=BM, BN=BN,
                             HEAD_DIM=head_dim, CAUSAL=int(causal), **variant).ir_stages[-1][1]
              for kernel in (tessera.kernels.attention_fwd_desc_bf16, tessera.kernels.attention_fwd_desc_overlap_bf16)]
    # With the overlap, each key loop waits for O with one group, the next scores, still pending; without it, the
    # waits in the loops leave none.
    assert waits_leaving_a_group_pending(finals[0]) == 0
    assert waits_leaving_a_group_pending(finals[1]) == 2
    # Warp-specialized on 8 warps, the two consumer warpgroups take turns issuing the next block's Q K^T in each
    # key loop, as they take turns issuing Q K^T without the overlap.
    two_groups = bool(variant) and num_warps == 8
    for final in finals:
        assert final.count("turn_wait {groups = 2}") == (2 if two_groups else 0)
        assert final.count("turn_pass {groups = 2}") == (2 if two_groups else 0)
        assert final.count("turn_pass {groups = 2, only_group = 1}") == (2 if two_groups else 0)
        assert final.count("turn_wait {groups = 2, only_group = 0}") == (2 if two_groups else 0)


# Warp-specialized, each key loop's first block (copied before the loop, its scores carried in) goes through the
# loop's ring of stages: the producer copies it into the stage before the loop's first and arrives at V's barrier
# there, the consumers hand that stage back after its Q K^T. Its own buffers (one per loop) were live beside the
# stages: at 128x128, d 128, 3 stages, 295040 bytes, over an H100's 232448; now the plain kernel's, plus the empty
# barriers. Right and clean on the emulator, causal and not, at a ragged length.
@pytest.mark.sim
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_overlap_first_key_blocks_share_the_stages(causal):
    seq_len, head_dim = 300, 128
    q, k, v = random_qkv((1, 1, seq_len, head_dim), torch.float16)
    launch = dict(BM=128, BN=128, num_warps=8, num_stages=3)
    check(attention_desc(q, k, v, causal, overlap=True, backend="sim", arch="sm_90a", warp_specialize=True, **launch),
          q, k, v, causal)
    assert tessera.sim.last_report()["findings"] == []
    descs = {name: tessera.TensorDescriptor(q.reshape(1, seq_len, head_dim), (1, 128, head_dim))
             for name in ("q", "k", "v", "out")}
    constants = dict(arch="sm_90a", num_warps=8, num_stages=3, specialization=descs, BM=128, BN=128,
                     HEAD_DIM=head_dim, CAUSAL=int(causal))
    kernel = tessera.kernels.attention_fwd_desc_overlap
    specialized = kernel.compile(warp_specialize=True, **constants)
    plain = kernel.compile(**constants)
    assert specialized.shared_bytes == plain.shared_bytes + 32 <= 232448
    final = specialized.ir_stages[-1][1]
    producer = final[final.index("warp_specialize {"):final.index("\n  } {\n")]
    # K and V in each loop, and each loop's first key block, all issued by the producer into the ring.
    assert producer.count("async_tma_copy %k") == 4 and producer.count("async_tma_copy %v") == 2
    assert final.count("async_tma_copy") == 6 and final.count("mbarriers<1>") == 0
    assert producer.count("mbarrier_arrive") == 2  # V's barrier at each first block's position


# Persistent, each key loop's first block is copied once per tile by TMA too (its barrier's parity: the tile's
# iteration in the program), instead of by cp.async; warp-specialized, the producer copies it into the ring, its
# position counted among the tiles' iterations. Right and clean on the emulator, where each program runs several
# tiles, causal and not.
@pytest.mark.sim
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("warp_specialize", [False, True], ids=["plain", "ws"])
def test_overlap_persistent_first_key_blocks_by_tma(warp_specialize, causal):
    seq_len, head_dim = 300, 64
    q, k, v = random_qkv((2, 2, seq_len, head_dim), torch.float16)
    launch = dict(BM=128, BN=64, num_warps=8, persistent=True, warp_specialize=warp_specialize)
    check(attention_desc(q, k, v, causal, overlap=True, backend="sim", arch="sm_90a", **launch), q, k, v, causal)
    assert tessera.sim.last_report()["findings"] == []
    descs = {name: tessera.TensorDescriptor(q.reshape(4, seq_len, head_dim), (1, block, head_dim))
             for name, block in (("q", 128), ("k", 64), ("v", 64), ("out", 128))}
    final = tessera.kernels.attention_fwd_desc_overlap.compile(
        arch="sm_90a", specialization=descs, HEAD_DIM=head_dim, CAUSAL=int(causal), **launch).ir_stages[-1][1]
    assert final.count(" = async_copy ") == 1  # Q's alone
    # Plain: each loop's first block has a barrier of its own, K and V their stages'; warp-specialized, the ring's.
    assert final.count("mbarriers<1>") == (0 if warp_specialize else 2)


# TESSERA_NO_CONSUMER_TURNS=1 compiles the warp-specialized kernel without the turns (to measure their worth on a GPU
# in one process): a kernel of its own, correct and clean on the emulator; unset, the turns are back.
@pytest.mark.sim
def test_consumer_turns_can_be_switched_off(monkeypatch):
    q, k, v = random_qkv((1, 1, 200, 64), torch.float16)
    launch = dict(BM=128, BN=64, num_warps=8, backend="sim", arch="sm_90a", warp_specialize=True)
    descs = {name: tessera.TensorDescriptor(q.reshape(1, 200, 64), (1, block, 64))
             for name, block in (("q", 128), ("k", 64), ("v", 64), ("out", 128))}
    constants = dict(arch="sm_90a", num_warps=8, specialization=descs, BM=128, BN=64, HEAD_DIM=64, CAUSAL=0,
                     warp_specialize=True)
    monkeypatch.setenv("TESSERA_NO_CONSUMER_TURNS", "1")
    assert "turn_" not in tessera.kernels.attention_fwd_desc.compile(**constants).ir_stages[-1][1]
    check(attention_desc(q, k, v, False, **launch), q, k, v, False)
    assert tessera.sim.last_report()["findings"] == []
    monkeypatch.delenv("TESSERA_NO_CONSUMER_TURNS")
    assert "turn_wait" in tessera.kernels.attention_fwd_desc.compile(**constants).ir_stages[-1][1]


# A ragged sequence length keeps the descriptor kernel's copies 16 bytes wide: the launch specializes a descriptor on
# its innermost dimension's divisibility (d = 64), not on every dimension's (53 rows), so the masks along d are
# constant over each row's 8 elements. With every dimension's, all of Q's, K's and V's copies were 2-byte loads.
def test_descriptor_kernel_copies_stay_wide_at_a_ragged_sequence_length():
    x = torch.zeros(6, 53, 64, dtype=torch.float16)
    descs = {name: tessera.TensorDescriptor(x, (1, block, 64)) for name, block in (("q", 128), ("k", 64), ("v", 64),
                                                                                   ("out", 128))}
    ptx = tessera.kernels.attention_fwd_desc.compile(arch="sm_80", num_warps=8, specialization=descs, BM=128, BN=64,
                                                     HEAD_DIM=64, CAUSAL=0).ptx
    assert "cp.async.cg.shared.global" in ptx and "ld.global.b16" not in ptx


# AMD: the MFMA reads K^T and V from LDS buffers K-contiguous; V arrives N-contiguous, and its copy stores 4 keys of
# a column per 8-byte store, its lanes spread over the swizzle's phases (stage-copies-in-registers): no LDS access
# of the kernel conflicts. Copied in the pointers' layout, V's 2-byte stores had 4608 extra wavefronts at 128x64 and
# 64x64, and 8-byte stores with lanes along the columns alone 768 and 2304. At head dimension 128, Q's and K's rows
# are 256 bytes: copied 16 lanes to a row, two lanes of a store phase met in each bank (2048 extra wavefronts at
# 128x64, 1536 at 128x128, where the dots stage K and V themselves); now 8 lanes to a row, a phase writing two.
@pytest.mark.sim
@pytest.mark.parametrize("config", [(128, 64, 64, 8), (64, 64, 64, 4), (128, 128, 64, 8), (128, 64, 128, 8),
                                    (128, 128, 128, 8)], ids=lambda c: "{}x{}_d{}_w{}".format(*c))
def test_gfx942_attention_lds_is_conflict_free(config):
    BM, BN, head_dim, num_warps = config
    q, k, v = random_qkv((1, 1, 2 * BM, head_dim), torch.float16)
    check(attention(q, k, v, False, BM=BM, BN=BN, num_warps=num_warps, backend="sim", arch="gfx942"), q, k, v, False)
    report = tessera.sim.last_report()
    assert report["shared_bank_conflicts"] == 0


# Attention as Triton's tutorials write the scores, dot(q, trans(k)) with K loaded in [BN, d] blocks of its rows
# (KT_LOAD = 0), or with K^T loaded directly as kernels/attention.h does (KT_LOAD = 1), for one (batch, head) of
# contiguous [seq_len, HEAD_DIM] tensors. transpose-loads turns the first into the second.
USER_ATTENTION = """\
#pragma once
#include <cmath>
#include "tessera/kernels/attention.h"
using namespace tessera;
using tessera::kernels::OnlineSoftmax, tessera::kernels::fold_scores;  // the online softmax step, as the library's

inline void user_attention(Ptr<f16> q, Ptr<f16> k, Ptr<f16> v, Ptr<f16> out, Float sm_scale, Int seq_len,
                           Const<int> BM, Const<int> BN, Const<int> HEAD_DIM, Const<int> CAUSAL,
                           Const<int> KT_LOAD) {
  Tensor offs_m = program_id(0) * BM + arange(0, BM);
  Tensor offs_d = arange(0, HEAD_DIM);
  Tensor row_in_range = expand_dims(offs_m < seq_len, 1);
  Tensor q_tile = load(q + expand_dims(offs_m, 1) * HEAD_DIM + expand_dims(offs_d, 0), row_in_range);
  Tensor qk_scale = sm_scale * 1.4426950408889634f;
  OnlineSoftmax state{zeros<f32>({BM, HEAD_DIM}), full<f32>({BM}, -INFINITY), zeros<f32>({BM})};
  for (Tensor start_n : range(0, seq_len, BN)) {
    Tensor offs_n = start_n + arange(0, BN);
    Tensor kt = KT_LOAD ? load(k + expand_dims(offs_n, 0) * HEAD_DIM + expand_dims(offs_d, 1),
                               expand_dims(offs_n < seq_len, 0))
                        : trans(load(k + expand_dims(offs_n, 1) * HEAD_DIM + expand_dims(offs_d, 0),
                                     expand_dims(offs_n < seq_len, 1)));
    Tensor visible = expand_dims(offs_n < seq_len, 0);
    if (CAUSAL) visible = visible & (expand_dims(offs_m, 1) >= expand_dims(offs_n, 0));
    Tensor s = where(visible, dot(q_tile, kt) * qk_scale, -INFINITY);
    fold_scores(state, s, q_tile.dtype(), [&] {
      return load(v + expand_dims(offs_n, 1) * HEAD_DIM + expand_dims(offs_d, 0), expand_dims(offs_n < seq_len, 1));
    });
  }
  store(out + expand_dims(offs_m, 1) * HEAD_DIM + expand_dims(offs_d, 0),
        cast(state.acc / expand_dims(state.row_sum, 1), q_tile.dtype()), row_in_range);
}
TESSERA_PY_KERNEL(user_attention, q, k, v, out, sm_scale, seq_len, BM, BN, HEAD_DIM, CAUSAL, KT_LOAD);
"""


# The arch and (BM, BN, head dim, warps) the user-written kernels below run at on the emulator.
USER_KERNEL_CONFIGS = pytest.mark.parametrize(
    "arch, config", [("sm_90a", (128, 64, 64, 8)), ("sm_80", (128, 64, 64, 8)), ("gfx942", (64, 64, 64, 4))],
    ids=["sm_90a", "sm_80", "gfx942"])


@pytest.fixture(scope="module")
def user_kernels(tmp_path_factory):
    """USER_ATTENTION and DESCRIPTOR_ATTENTION (below, after USER_ATTENTION's includes), one tessera.load."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TESSERA_CACHE_DIR", str(tmp_path_factory.mktemp("tessera-cache")))
        header = tmp_path_factory.mktemp("kernels") / "user_attention.h"
        header.write_text(USER_ATTENTION + DESCRIPTOR_ATTENTION)
        yield tessera.load(header)


@pytest.fixture
def user_attention(user_kernels):
    return user_kernels.user_attention


@pytest.mark.sim
@USER_KERNEL_CONFIGS
def test_scores_of_a_transposed_k_block_match_and_compile_as_k_transposed(user_attention, arch, config):
    BM, BN, head_dim, num_warps = config
    q, k, v = random_qkv((1, 1, BM + BN // 2 + 3, head_dim), torch.float16)
    seq_len = q.shape[2]
    constants = dict(BM=BM, BN=BN, HEAD_DIM=head_dim, num_warps=num_warps, backend="sim", arch=arch)
    for causal in (False, True):
        out = torch.full_like(q, math.nan)
        user_attention[(tessera.cdiv(seq_len, BM), 1)](q, k, v, out, 1 / math.sqrt(head_dim), seq_len,
                                                        CAUSAL=int(causal), KT_LOAD=0, **constants)
        check(out, q, k, v, causal)
    # No transpose is left: K^T arrives as the kernel that loads it directly gets it (the same copies into the same
    # shared buffers).
    transposed, direct = (user_attention.compile(CAUSAL=0, KT_LOAD=kt_load, **constants) for kt_load in (0, 1))
    final = transposed.ir_stages[-1][1]
    assert " trans " not in final
    assert final.count("async_copy") == direct.ir_stages[-1][1].count("async_copy") > 0
    assert transposed.shared_bytes == direct.shared_bytes


# The same attention through 3-d tensor descriptors ([batch * heads, seq_len, HEAD_DIM], blocks [1, BM or BN,
# HEAD_DIM]) as Triton's Hopper tutorial reads Q, K and V: each block reshaped to a matrix, K's transposed.
# No reshape or transpose is left. On sm_90a K and V arrive by TMA, each copy where the pointer kernel (K^T loaded
# directly) has a cp.async, their buffers read as K^T and V by wgmma; Q by cp.async (its buffer permutes rows).
# Elsewhere expand-descriptor-loads reads the blocks at rank 2 and transpose-loads K^T at transposed addresses:
# the same copies as the pointer kernel's.
DESCRIPTOR_ATTENTION = """\
inline void desc_attention(TensorDesc<f16> q, TensorDesc<f16> k, TensorDesc<f16> v, Ptr<f16> out, Float sm_scale,
                           Int seq_len, Const<int> BM, Const<int> BN, Const<int> HEAD_DIM, Const<int> CAUSAL) {
  Tensor m0 = program_id(0) * BM, bh = program_id(1);
  Tensor offs_m = m0 + arange(0, BM);
  Tensor q_tile = reshape(load(q, {bh, m0, 0}), {BM, HEAD_DIM});
  Tensor qk_scale = sm_scale * 1.4426950408889634f;
  OnlineSoftmax state{zeros<f32>({BM, HEAD_DIM}), full<f32>({BM}, -INFINITY), zeros<f32>({BM})};
  for (Tensor start_n : range(0, seq_len, BN)) {
    Tensor offs_n = start_n + arange(0, BN);
    Tensor kb = reshape(load(k, {bh, start_n, 0}), {BN, HEAD_DIM});
    Tensor visible = expand_dims(offs_n < seq_len, 0);
    if (CAUSAL) visible = visible & (expand_dims(offs_m, 1) >= expand_dims(offs_n, 0));
    Tensor s = where(visible, dot(q_tile, trans(kb)) * qk_scale, -INFINITY);
    fold_scores(state, s, q_tile.dtype(), [&] { return reshape(load(v, {bh, start_n, 0}), {BN, HEAD_DIM}); });
  }
  Tensor o_ptrs = out + (bh * seq_len + expand_dims(offs_m, 1)) * HEAD_DIM + expand_dims(arange(0, HEAD_DIM), 0);
  store(o_ptrs, cast(state.acc / expand_dims(state.row_sum, 1), q_tile.dtype()), expand_dims(offs_m < seq_len, 1));
}
TESSERA_PY_KERNEL(desc_attention, q, k, v, out, sm_scale, seq_len, BM, BN, HEAD_DIM, CAUSAL);
"""


@pytest.fixture
def desc_attention(user_kernels):
    return user_kernels.desc_attention


@pytest.mark.sim
@USER_KERNEL_CONFIGS
def test_descriptor_blocks_reshaped_and_transposed_match_and_compile_to_copies(desc_attention, user_attention, arch,
                                                                             config):
    BM, BN, head_dim, num_warps = config
    q, k, v = random_qkv((2, 1, BM + BN // 2 + 3, head_dim), torch.float16)  # two heads: blocks of the first end
    seq_len = q.shape[2]                                                       # inside the tensor, not at its end
    descriptors = [tessera.TensorDescriptor(x.reshape(2, seq_len, head_dim), (1, block, head_dim))
                   for x, block in ((q, BM), (k, BN), (v, BN))]
    constants = dict(BM=BM, BN=BN, HEAD_DIM=head_dim, num_warps=num_warps, backend="sim", arch=arch)
    for causal in (False, True):
        out = torch.full_like(q, math.nan)
        desc_attention[(tessera.cdiv(seq_len, BM), 2)](*descriptors, out, 1 / math.sqrt(head_dim), seq_len,
                                                        CAUSAL=int(causal), **constants)
        check(out, q, k, v, causal)
    compiled = desc_attention.compile(specialization=dict(zip("qkv", descriptors)), CAUSAL=0, **constants)
    final = compiled.ir_stages[-1][1]
    assert " trans " not in final and " reshape " not in final
    pointers = user_attention.compile(CAUSAL=0, KT_LOAD=1, **constants).ir_stages[-1][1]
    if arch == "sm_90a":
        assert final.count("async_copy") == 1  # Q's
        assert final.count("async_tma_copy") == pointers.count("async_copy") - 1 > 0
    else:
        assert final.count("async_copy") == pointers.count("async_copy") > 0
        assert "async_tma_copy" not in final


# The causal diagonal blocks mask each score with one comparison, key <= row (`offs_m >= offs_n`), and no `and`
# with the keys' range (frontend/tessera/kernels/attention.h, causal_or_in_range): a key past seq_len is past every
# stored row. The non-causal kernel's ragged block keeps the range mask. Checked on the traced IR of both kernels.
@pytest.mark.parametrize("kernel", ["attention_fwd", "attention_fwd_desc"])
def test_causal_mask_is_one_comparison_per_score(kernel):
    # head_dim 16: the loads' and the store's masks ([*, head_dim], [head_dim, *]) are not [BM, BN] tiles
    BM, BN, head_dim = 64, 32, 16
    compiled = {}
    for causal in (0, 1):
        constants = dict(arch="sm_80", num_warps=4, BM=BM, BN=BN, HEAD_DIM=head_dim, CAUSAL=causal)
        if kernel == "attention_fwd_desc":
            q = torch.zeros((2, 100, head_dim), dtype=torch.float16)
            constants["specialization"] = {name: tessera.TensorDescriptor(q, (1, block, head_dim))
                                           for name, block in (("q", BM), ("k", BN), ("v", BN), ("out", BM))}
        traced = getattr(tessera.kernels, kernel).compile(**constants).ir_stages[0][1]
        compiled[causal] = traced[traced.rindex(" = for "):]  # the masked loop (and the epilogue)
    scores_mask = re.compile(r"= (\w+) .*: tile<%dx%dxi1" % (BM, BN))
    causal_ops = scores_mask.findall(compiled[1])
    assert causal_ops == ["cmp"], causal_ops  # one comparison over the [BM, BN] scores: no `and`
    assert 'pred = "ge"' in [line for line in compiled[1].splitlines() if scores_mask.search(line)][0]
    assert "cmp" not in scores_mask.findall(compiled[0])  # non-causal: the [BN] key range, broadcast


# ---- the backward (kernels/attention_backward.h: attention_fwd_lse, then attention_bwd_preprocess, attention_bwd_dkdv
# and attention_bwd_dq) against torch's float64 autograd: small blocks on every backend; larger blocks, the ones
# whose PTX has no spills at head dim 64, on the emulator.

BACKWARD_SUFFIX = {torch.float16: "", torch.bfloat16: "_bf16"}
# dQ, dK, dV and O are rounded to the input type, and so are P and dS before their products: a few of its ulps of
# the largest gradient.
BACKWARD_TOLERANCE = {torch.float16: 4e-3, torch.bfloat16: 3e-2}


def backward_kernel(name, dtype):
    return getattr(tessera.kernels, name + BACKWARD_SUFFIX[dtype])


def forward_and_backward(q, k, v, d_o, causal, fwd_blocks, dkdv_blocks, dq_blocks, **launch):
    """Tessera's O, log2-sum-exp2 statistics and gradients for contiguous [batch, heads, seq_len, head_dim] inputs.
    Each *_blocks is (BM, BN, num_warps)."""
    batch, heads, seq_len, head_dim = q.shape
    scale = 1 / math.sqrt(head_dim)
    layout = (heads, seq_len, *(q.stride(i) for i in range(3)))
    nan = lambda: torch.full_like(q, math.nan)  # noqa: E731
    out, dq, dk, dv = nan(), nan(), nan(), nan()
    lse = torch.full((batch * heads, seq_len), math.nan)
    delta = torch.full((batch * heads, seq_len), math.nan)
    bm, bn, warps = fwd_blocks
    backward_kernel("attention_fwd_lse", q.dtype)[(tessera.cdiv(seq_len, bm), batch * heads)](
        q, k, v, out, lse, scale, *layout, BM=bm, BN=bn, HEAD_DIM=head_dim, CAUSAL=int(causal), num_warps=warps, **launch)
    backward_kernel("attention_bwd_preprocess", q.dtype)[(tessera.cdiv(seq_len, bm), batch * heads)](
        out, d_o, delta, *layout, BM=bm, HEAD_DIM=head_dim, num_warps=warps, **launch)
    bm, bn, warps = dkdv_blocks
    backward_kernel("attention_bwd_dkdv", q.dtype)[(tessera.cdiv(seq_len, bn), batch * heads)](
        q, k, v, d_o, lse, delta, dk, dv, scale, *layout, BM=bm, BN=bn, HEAD_DIM=head_dim, CAUSAL=int(causal),
        num_warps=warps, **launch)
    bm, bn, warps = dq_blocks
    backward_kernel("attention_bwd_dq", q.dtype)[(tessera.cdiv(seq_len, bm), batch * heads)](
        q, k, v, d_o, lse, delta, dq, scale, *layout, BM=bm, BN=bn, HEAD_DIM=head_dim, CAUSAL=int(causal),
        num_warps=warps, **launch)
    return out, lse, dq, dk, dv


def backward_reference(q, k, v, d_o, causal):
    """O, the statistics in log2 units, and dQ, dK, dV by float64 autograd."""
    q, k, v = (x.double().requires_grad_() for x in (q, k, v))
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        seq_len = q.shape[-2]
        s = s.masked_fill(~torch.ones(seq_len, seq_len, dtype=torch.bool).tril(), -math.inf)
    out = torch.softmax(s, dim=-1) @ v
    out.backward(d_o.double())
    lse = (torch.logsumexp(s, dim=-1) / math.log(2)).reshape(-1, q.shape[-2])
    return out.detach(), lse.detach(), q.grad, k.grad, v.grad


def check_backward(got, want, dtype):
    tol = BACKWARD_TOLERANCE[dtype]
    for name, g, w in zip(("out", "lse", "dq", "dk", "dv"), got, want):
        scale = w.abs().max().item()
        torch.testing.assert_close(g.double(), w, atol=tol * scale, rtol=0, msg=lambda m, name=name: f"{name}: {m}")


def backward_inputs(shape, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=gen).to(dtype) for _ in range(4)]


@pytest.mark.parametrize("launch", LAUNCHES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_backward_small_blocks(launch, dtype, causal):
    # 2 x 2 (batch, head) pairs of 53 rows: the last query and key blocks are ragged.
    q, k, v, d_o = backward_inputs((2, 2, 53, 32), dtype)
    got = forward_and_backward(q, k, v, d_o, causal, (32, 16, 4), (32, 16, 4), (32, 16, 4), **launch)
    check_backward(got, backward_reference(q, k, v, d_o, causal), dtype)


@pytest.mark.sim
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("arch, dtype, dkdv, dq", [
    # dK and dV over 128 keys with 8 warps, dQ over 128 rows with 8 warps: every dot on wgmma and no spills at head
    # dim 64 on sm_90a (ptxas 13.0); mma.sync on sm_80.
    ("sm_90a", torch.float16, (64, 128, 8), (128, 64, 8)), ("sm_80", torch.bfloat16, (64, 128, 8), (128, 64, 8)),
    # 64 x 64 on 4 warps within gfx942's 64 KiB of LDS: pipeline-loops counts K's and V's buffers, which the loop's
    # dots read through tiles loaded before it, and keeps fewer stages.
    ("gfx942", torch.float16, (64, 64, 4), (64, 64, 4))], ids=["sm_90a", "sm_80", "gfx942"])
def test_backward_large_blocks_on_the_emulator(arch, dtype, dkdv, dq, causal):
    q, k, v, d_o = backward_inputs((1, 2, 195, 64), dtype, seed=1)
    got = forward_and_backward(q, k, v, d_o, causal, (64, 64, 4), dkdv, dq, backend="sim", arch=arch)
    check_backward(got, backward_reference(q, k, v, d_o, causal), dtype)


def test_backward_dots_on_wgmma_on_sm90a():
    """Q and dO each feed one dot as they are and another transposed: transpose-loads reads them once per
    orientation, so every operand arrives by a copy into the shared buffer its wgmma reads."""
    for name, blocks in (("attention_bwd_dkdv", dict(BM=64, BN=128)), ("attention_bwd_dq", dict(BM=128, BN=64))):
        compiled = getattr(tessera.kernels, name).compile(arch="sm_90a", num_warps=8, HEAD_DIM=64, CAUSAL=1, **blocks)
        instructions = [d["instruction"] for d in compiled.dots]
        # Causal: a loop over the diagonal's blocks, masked, and one over the rest.
        assert len(instructions) == 2 * (4 if name.endswith("dkdv") else 3)
        assert all(i.startswith("wgmma m64") for i in instructions), compiled.dots


def test_backward_fits_in_amd_lds_with_the_stages_requested():
    # 3 stages of dK/dV's four 8 KiB copies beside K and V (16 KiB) would need 112 KiB: fewer stages fit in 64 KiB.
    compiled = tessera.kernels.attention_bwd_dkdv.compile(target="amdgpu", arch="gfx942", num_warps=4, num_stages=3,
                                                          BM=64, BN=64, HEAD_DIM=64, CAUSAL=1)
    assert compiled.shared_bytes <= 65536


def test_backward_causal_must_be_zero_or_one():
    with pytest.raises(tessera.Error, match="CAUSAL must be 0 or 1, got 2"):
        tessera.kernels.attention_bwd_dq.compile(BM=32, BN=16, HEAD_DIM=32, CAUSAL=2)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_backward_masks_only_the_blocks_that_need_it(causal):
    """Rows and keys past seq_len load as zeros and reach no stored gradient, so dK/dV masks only the causal
    diagonal and dQ the causal diagonal or the ragged last key block: 0 or 1 key loops with a select in each."""
    for name, masked_loops in (("attention_bwd_dkdv", 1 if causal else 0), ("attention_bwd_dq", 1)):
        compiled = getattr(tessera.kernels, name).compile(BM=32, BN=16, HEAD_DIM=32, CAUSAL=int(causal))
        traced = compiled.ir_stages[0][1]
        loops = traced.split(" = for ")[1:]  # each loop's body, and what follows it up to the next
        assert len(loops) == (2 if causal or name.endswith("dq") else 1), traced
        assert sum("select" in loop for loop in loops) == masked_loops, traced


def test_backward_dq_masks_the_keys_past_seq_len_however_small_the_statistics():
    # Every score is about -185 (log2 units): exp2(0 - lse) of a zero-filled key past seq_len would overflow to
    # inf, and inf times K's zero row is NaN in dQ, unless the ragged key block is masked.
    # Half of each Q and K row is 8 and -8, the other half random, so that dQ does not cancel to rounding noise.
    q, k, v, d_o = backward_inputs((1, 1, 21, 16), torch.float16, seed=4)
    q[..., :8], k[..., :8] = 8.0, -8.0
    for causal in (False, True):
        got = forward_and_backward(q, k, v, d_o, causal, (16, 16, 4), (16, 16, 4), (16, 16, 4))
        want = backward_reference(q, k, v, d_o, causal)
        assert torch.isfinite(got[2]).all()
        check_backward(got, want, torch.float16)
