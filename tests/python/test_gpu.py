"""GPU launches with torch tensors, checked against torch. They need torch, a CUDA device and Tessera's CUDA
driver; without them the tests skip (with the reason)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch sees no CUDA device", allow_module_level=True)

import tessera  # noqa: E402

if not tessera._C.cuda_available():
    pytest.skip(f"Tessera's CUDA driver is unavailable: {tessera._C.cuda_unavailable_reason()}",
                allow_module_level=True)

K = tessera.kernels


@pytest.fixture
def gen():
    return torch.Generator(device="cuda").manual_seed(1234)


def test_vector_add_matches_torch(gen):
    n = 98_000  # not a multiple of BLOCK
    x = torch.randn(n, device="cuda", generator=gen)
    y = torch.randn(n, device="cuda", generator=gen)
    out = torch.full((n + 64,), 7.0, device="cuda")
    K.vector_add[lambda meta: (tessera.cdiv(n, meta["BLOCK"]),)](x, y, out[:n], n, BLOCK=1024)
    torch.cuda.synchronize()
    torch.testing.assert_close(out[:n], x + y, rtol=0, atol=0)
    assert torch.all(out[n:] == 7.0)


def test_softmax_matches_torch(gen):
    rows, cols = 300, 781
    x = torch.randn(rows, cols, device="cuda", generator=gen) * 4
    out = torch.empty_like(x)
    K.softmax[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=1024, num_warps=8)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


def test_layernorm_matches_torch(gen):
    rows, cols, eps = 256, 1000, 1e-5
    x = torch.randn(rows, cols, device="cuda", generator=gen) * 3 + 1
    w = torch.randn(cols, device="cuda", generator=gen)
    b = torch.randn(cols, device="cuda", generator=gen)
    y = torch.empty_like(x)
    mean = torch.empty(rows, device="cuda")
    rstd = torch.empty(rows, device="cuda")
    K.layernorm_fwd[(rows,)](x, y, w, b, mean, rstd, x.stride(0), cols, eps, BLOCK=1024, num_warps=8)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (cols,), w, b, eps), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(mean, x.mean(dim=1), rtol=1e-5, atol=1e-5)


def test_matmul_matches_torch(gen):
    M, N, K_ = 300, 260, 200
    a = torch.randn(M, K_, device="cuda", generator=gen).half()
    b = torch.randn(K_, N, device="cuda", generator=gen).half()
    c = torch.empty(M, N, device="cuda")
    grid = lambda meta: (tessera.cdiv(M, meta["BM"]) * tessera.cdiv(N, meta["BN"]),)
    K.matmul[grid](a, b, c, M, N, K_, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                   BM=64, BN=64, BK=32, GROUP_M=8)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-3)


def test_launch_runs_on_the_current_torch_stream(gen):
    n = 1 << 20
    x = torch.randn(n, device="cuda", generator=gen)
    out = torch.zeros(n, device="cuda")
    side, observer = torch.cuda.Stream(), torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time queued ahead of the launch on `side`
        K.vector_add[(tessera.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024)
    with torch.cuda.stream(observer):  # another stream sees `out` before the launch ran: it waits behind the sleep
        snapshot = out.clone()
    observer.synchronize()
    assert not side.query()
    assert torch.all(snapshot == 0)
    side.synchronize()
    torch.testing.assert_close(out, 2 * x, rtol=0, atol=0)


def test_numpy_arrays_with_backend_cuda_are_copied_both_ways():
    n = 5000
    x = np.random.default_rng(1).standard_normal(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    K.vector_add[(tessera.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024, backend="cuda")
    np.testing.assert_array_equal(out, 2 * x)


def test_real_tensor_checks():
    x = torch.ones(64, device="cuda")
    with pytest.raises(TypeError, match=r"argument 'y' must be a float32 array .*'<f8'"):
        K.vector_add[1](x, x.double(), x, 64, BLOCK=64)
    with pytest.raises(ValueError, match="argument 'out' must be C-contiguous"):
        K.vector_add[1](x, x, torch.ones(128, device="cuda")[::2], 64, BLOCK=64)
    with pytest.raises(TypeError, match="argument 'y' is a numpy"):
        K.vector_add[1](x, np.ones(64, np.float32), x, 64, BLOCK=64)


def test_cuda_tensor_is_refused_by_the_interpreter_backend():
    x = torch.ones(64, device="cuda")
    with pytest.raises(TypeError, match="argument 'x' is a GPU array"):
        K.vector_add[1](x, x, x, 64, BLOCK=64, backend="interpreter")


def test_do_bench_times_tessera_launches(gen):
    n = 1 << 24
    x = torch.randn(n, device="cuda", generator=gen)
    out = torch.empty_like(x)
    ms = tessera.testing.do_bench(lambda: K.vector_add[(tessera.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024),
                                  warmup=5, rep=20)
    assert 0 < ms < 100
    # 3 * 64 MiB moved: a real GPU does it in well under a millisecond; far below that would mean no work.
    assert ms > 0.01
    torch.testing.assert_close(out, 2 * x, rtol=0, atol=0)


def test_cupy_arrays_launch_too():
    cp = pytest.importorskip("cupy")
    n = 4096
    x = cp.arange(n, dtype=cp.float32)
    out = cp.zeros(n, dtype=cp.float32)
    K.vector_add[(tessera.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024)
    cp.cuda.runtime.deviceSynchronize()
    assert cp.array_equal(out, 2 * x)
