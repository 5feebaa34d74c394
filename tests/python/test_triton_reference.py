"""What the benchmark's Triton kernels (benchmarks/triton_reference.py) compute, checked without Triton or a GPU:
each runs on the numpy stand-in of triton_on_numpy.py (masked-off lanes of a load without `other` read NaN, out
of bounds raises) on CPU tensors, against the benchmark's own references, at ragged sizes. A Triton column that
is wrong would otherwise first show on a lent GPU, as FAIL cells."""

import sys

import pytest

import triton_on_numpy
from benchmark_modules import CpuTorch, load

torch = pytest.importorskip("torch")
bench = load("bench_tutorials")


@pytest.fixture
def ref(monkeypatch):
    triton_on_numpy.install(monkeypatch)
    return load("triton_reference")


def _random(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def test_the_stand_in_reads_nan_where_a_load_gives_no_other_and_refuses_out_of_bounds(ref):
    tl = sys.modules["triton.language"]
    x = torch.arange(4, dtype=torch.float32)
    p = triton_on_numpy.pointer_to(x)
    got = tl.load(p + tl.arange(0, 8), mask=tl.arange(0, 8) < 4)
    assert got[:4].tolist() == [0, 1, 2, 3] and all(v != v for v in got[4:])  # NaN
    assert tl.load(p + tl.arange(0, 8), mask=tl.arange(0, 8) < 4, other=0.0)[4:].tolist() == [0] * 4
    with pytest.raises(IndexError, match="load of element 4 of a tensor of 4 elements"):
        tl.load(p + tl.arange(0, 8))
    with pytest.raises(IndexError, match="store of element 4"):
        tl.store(p + tl.arange(0, 8), 1.0)


def test_vector_add_softmax_and_layernorm(ref):
    x, y = _random(3000), _random(3000, seed=1)
    assert torch.equal(ref.vector_add(x, y, torch.empty(3000)), x + y)
    rows = _random(5, 300)
    torch.testing.assert_close(ref.softmax(rows, torch.empty_like(rows)), torch.softmax(rows, -1))
    w, b = _random(300, seed=2), _random(300, seed=3)
    y, mean, rstd = ref.layernorm_fwd(rows, w, b, 1e-5, torch.empty_like(rows), torch.empty(5), torch.empty(5), 128)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(rows, (300,), w, b, 1e-5), rtol=1e-4, atol=1e-4)
    dy = _random(5, 300, seed=4)
    leaves = [t.clone().requires_grad_() for t in (rows, w, b)]
    want = torch.autograd.grad(torch.nn.functional.layer_norm(leaves[0], (300,), leaves[1], leaves[2], 1e-5),
                               leaves, dy)
    got = ref.layernorm_bwd(rows, dy, w, mean, rstd, torch.empty_like(rows), torch.empty(300), torch.empty(300),
                            torch.empty(3, 300), torch.empty(3, 300), 2)
    for g, e in zip(got, want):
        torch.testing.assert_close(g, e, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("configs", [None, [(32, 32, 32, 4, 3)]])
def test_matmul(ref, configs):
    a, b = _random(70, 96, dtype=torch.float16), _random(96, 40, dtype=torch.float16, seed=1)
    c = ref.matmul(a, b, torch.full((70, 40), float("nan"), dtype=torch.float16), configs)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("configs", [None, [(64, 32, 4, 3)]])
def test_attention_forward(ref, causal, configs):
    # 200 rows: ragged for every block, and more than one block each way.
    q, k, v = (_random(1, 2, 200, 64, dtype=torch.float16, seed=s) for s in range(3))
    out = ref.attention(q, k, v, torch.full_like(q, float("nan")), causal, 64 ** -0.5, configs)
    torch.testing.assert_close(out.float(), bench._attention_reference(CpuTorch(torch), q, k, v, causal), rtol=1e-2,
                               atol=1e-2)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_backward(ref, causal):
    q, k, v, d_o = (_random(1, 2, 200, 64, dtype=torch.float16, seed=s) for s in range(4))
    scale = 64 ** -0.5
    out = torch.full_like(q, float("nan"))
    lse, delta = torch.full((2, 200), float("nan")), torch.full((2, 200), float("nan"))
    ref.attention_forward_lse(q, k, v, out, lse, causal, scale)
    torch.testing.assert_close(out.float(), bench._attention_reference(CpuTorch(torch), q, k, v, causal), rtol=1e-2,
                               atol=1e-2)
    grads = ref.attention_backward(q, k, v, out, d_o, lse, delta, *(torch.full_like(q, float("nan")) for _ in range(3)),
                                   causal, scale, bench.ATTENTION_BWD_BLOCKS[64])
    want = bench.attention_bwd_reference(torch, q, k, v, d_o, causal)
    for g, e in zip(grads, want):  # the benchmark's own tolerance: 1% of the gradient's largest element (f16)
        torch.testing.assert_close(g.float(), e, rtol=0, atol=1e-2 * float(e.abs().max()))
