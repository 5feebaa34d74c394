"""GPU launches with torch tensors, checked against torch: on a CUDA GPU (skipped, with the reason, without torch's
CUDA device and Tessera's CUDA driver), and on the emulator (backend="sim") for sm_80, sm_90a and gfx942 with CPU
tensors. Both run the tutorial kernels at realistic tile sizes; the emulator on fewer rows and programs."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tessera  # noqa: E402

K = tessera.kernels


def _cuda_missing():
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    if not tessera._C.cuda_available():
        return f"Tessera's CUDA driver is unavailable: {tessera._C.cuda_unavailable_reason()}"
    return None


CUDA_MISSING = _cuda_missing()
requires_cuda = pytest.mark.skipif(CUDA_MISSING is not None, reason=CUDA_MISSING or "")


class Gpu:
    """Where a test's kernels run: the CUDA GPU (tensors on it), or the emulator of one arch (CPU tensors)."""

    def __init__(self, arch=None):
        self.arch = arch
        self.device = "cpu" if arch else "cuda"
        self.options = {"backend": "sim", "arch": arch} if arch else {}
        self.emulated = arch is not None

    def sync(self):
        if not self.emulated:
            torch.cuda.synchronize()

    def size(self, on_gpu, emulated):
        return emulated if self.emulated else on_gpu


@pytest.fixture(params=[pytest.param(None, id="cuda", marks=requires_cuda)] +
                [pytest.param(arch, id=f"sim-{arch}", marks=pytest.mark.sim) for arch in ("sm_80", "sm_90a", "gfx942")])
def gpu(request):
    return Gpu(request.param)


@pytest.fixture
def gen(gpu):
    return torch.Generator(device=gpu.device).manual_seed(1234)


def test_vector_add_matches_torch(gpu, gen):
    n = gpu.size(98_000, 2_500)  # not a multiple of BLOCK
    x = torch.randn(n, device=gpu.device, generator=gen)
    y = torch.randn(n, device=gpu.device, generator=gen)
    out = torch.full((n + 64,), 7.0, device=gpu.device)
    K.vector_add[lambda meta: (tessera.cdiv(n, meta["BLOCK"]),)](x, y, out[:n], n, BLOCK=1024, **gpu.options)
    gpu.sync()
    torch.testing.assert_close(out[:n], x + y, rtol=0, atol=0)
    assert torch.all(out[n:] == 7.0)


def _next_power_of_2(n):
    return 1 << (n - 1).bit_length()


@pytest.mark.parametrize("cols", [4096, 4095, 1000])
def test_softmax_matches_torch(gpu, gen, cols):
    rows = gpu.size(300, 2)
    x = torch.randn(rows, cols, device=gpu.device, generator=gen) * 4
    out = torch.empty_like(x)
    K.softmax[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=_next_power_of_2(cols), num_warps=8,
                       **gpu.options)
    gpu.sync()
    torch.testing.assert_close(out, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cols", [4096, 1000])
def test_layernorm_matches_torch(gpu, gen, cols):
    rows, eps = gpu.size(256, 2), 1e-5
    x = torch.randn(rows, cols, device=gpu.device, generator=gen) * 3 + 1
    w = torch.randn(cols, device=gpu.device, generator=gen)
    b = torch.randn(cols, device=gpu.device, generator=gen)
    y = torch.empty_like(x)
    mean = torch.empty(rows, device=gpu.device)
    rstd = torch.empty(rows, device=gpu.device)
    K.layernorm_fwd[(rows,)](x, y, w, b, mean, rstd, x.stride(0), cols, eps, BLOCK=_next_power_of_2(cols),
                             num_warps=8, **gpu.options)
    gpu.sync()
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (cols,), w, b, eps), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(mean, x.mean(dim=1), rtol=1e-5, atol=1e-5)


# (BM, BN, BK, num_warps) and the emulator's sizes: one program of the 128x128 tiles (edges masked, four K
# steps), two by two programs of the 64x64 ones.
MATMUL_TILES = [pytest.param((128, 128, 64, 8), (120, 100, 200), id="128x128x64-8warps"),
                pytest.param((64, 64, 32, 4), (100, 120, 70), id="64x64x32-4warps")]


def _matmul(gpu, gen, tiles, emulated_size):
    BM, BN, BK, num_warps = tiles
    M, N, K_ = emulated_size if gpu.emulated else (300, 260, 200)
    a = torch.randn(M, K_, device=gpu.device, generator=gen).half()
    b = torch.randn(K_, N, device=gpu.device, generator=gen).half()
    c = torch.empty(M, N, device=gpu.device)
    grid = lambda meta: (tessera.cdiv(M, meta["BM"]) * tessera.cdiv(N, meta["BN"]),)
    K.matmul[grid](a, b, c, M, N, K_, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                   BM=BM, BN=BN, BK=BK, GROUP_M=8, num_warps=num_warps, **gpu.options)
    gpu.sync()
    return a, b, c


@pytest.mark.parametrize("tiles, emulated_size", MATMUL_TILES)
def test_matmul_matches_torch(gpu, gen, tiles, emulated_size):
    # On gfx942 the 128x128 f32 accumulator's layout conversion (66048 bytes of buffer) goes through LDS in rounds.
    a, b, c = _matmul(gpu, gen, tiles, emulated_size)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
def test_descriptor_matmul_matches_torch(gpu, gen, dtype):
    # A and B through tensor descriptors (TMA copies and wgmma on sm_90a, masked loads elsewhere), C in the input
    # type; warp-specialized too where the launch runs on sm_90a. Ragged M and N; rows of multiples of 16 bytes.
    M, N, K_ = (100, 72, 96) if gpu.emulated else (1000, 520, 776)
    a = torch.randn(M, K_, device=gpu.device, generator=gen).to(dtype)
    b = torch.randn(K_, N, device=gpu.device, generator=gen).to(dtype)
    kernel = K.matmul_desc_f16_out if dtype == torch.float16 else K.matmul_desc_bf16_out
    arch = gpu.arch or tessera._C.cuda_arch()
    grid = (tessera.cdiv(M, 64) * tessera.cdiv(N, 64),)
    for warp_specialize in (False, True) if arch == "sm_90a" else (False,):
        c = torch.full((M, N), float("nan"), device=gpu.device, dtype=dtype)
        kernel[grid](tessera.TensorDescriptor(a, (64, 32)), tessera.TensorDescriptor(b, (32, 64)), c, M, N, K_, N, 1,
                     BM=64, BN=64, BK=32, GROUP_M=4, warp_specialize=warp_specialize, **gpu.options)
        gpu.sync()
        # f32 sums rounded once to f16 (2^-11) or bf16 (2^-8); the sums reach about sqrt(K) = 28.
        tolerance = dict(rtol=2e-3, atol=3e-2) if dtype == torch.float16 else dict(rtol=1e-2, atol=2e-1)
        torch.testing.assert_close(c.float(), a.float() @ b.float(), **tolerance)


@requires_cuda
def test_launch_runs_on_the_current_torch_stream():
    gen = torch.Generator(device="cuda").manual_seed(1234)
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


def test_numpy_arrays_are_copied_both_ways(gpu):
    n = 5000
    x = np.random.default_rng(1).standard_normal(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    K.vector_add[(tessera.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024, **(gpu.options or {"backend": "cuda"}))
    np.testing.assert_array_equal(out, 2 * x)


@requires_cuda
def test_real_tensor_checks():
    x = torch.ones(64, device="cuda")
    with pytest.raises(TypeError, match=r"argument 'y' must be a float32 array .*'<f8'"):
        K.vector_add[1](x, x.double(), x, 64, BLOCK=64)
    with pytest.raises(ValueError, match="argument 'out' must be C-contiguous"):
        K.vector_add[1](x, x, torch.ones(128, device="cuda")[::2], 64, BLOCK=64)
    with pytest.raises(TypeError, match="argument 'y' is a numpy"):
        K.vector_add[1](x, np.ones(64, np.float32), x, 64, BLOCK=64)


@requires_cuda
def test_cuda_tensor_is_refused_by_the_interpreter_and_the_emulator():
    x = torch.ones(64, device="cuda")
    with pytest.raises(TypeError, match="argument 'x' is a GPU array"):
        K.vector_add[1](x, x, x, 64, BLOCK=64, backend="interpreter")
    with pytest.raises(TypeError, match="argument 'x' is a GPU array; launches on the emulator take host arrays"):
        K.vector_add[1](x, x, x, 64, BLOCK=64, backend="sim")


@requires_cuda
def test_do_bench_times_tessera_launches():
    gen = torch.Generator(device="cuda").manual_seed(1234)
    n = 1 << 24
    x = torch.randn(n, device="cuda", generator=gen)
    out = torch.empty_like(x)
    ms = tessera.testing.do_bench(lambda: K.vector_add[(tessera.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024),
                                  warmup=5, rep=20)
    assert 0 < ms < 100
    # 3 * 64 MiB moved: a real GPU does it in well under a millisecond; far below that would mean no work.
    assert ms > 0.01
    torch.testing.assert_close(out, 2 * x, rtol=0, atol=0)


@requires_cuda
def test_cupy_arrays_launch_too():
    cp = pytest.importorskip("cupy")
    n = 4096
    x = cp.arange(n, dtype=cp.float32)
    out = cp.zeros(n, dtype=cp.float32)
    K.vector_add[(tessera.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024)
    cp.cuda.runtime.deviceSynchronize()
    assert cp.array_equal(out, 2 * x)
