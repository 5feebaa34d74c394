"""GPU launches with torch tensors. They need torch and a CUDA device; without them the tests skip."""

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch sees no CUDA device", allow_module_level=True)

import tessera  # noqa: E402


def test_cuda_tensor_is_refused_by_the_interpreter_backend():
    x = torch.ones(64, device="cuda")
    with pytest.raises(TypeError, match="argument 'x' is a GPU array"):
        tessera.kernels.vector_add[1](x, x, x, 64, BLOCK=64)


def test_do_bench_times_with_cuda_events():
    x = torch.ones(1 << 20, device="cuda")
    ms = tessera.testing.do_bench(lambda: x.mul_(1.0), warmup=2, rep=10)
    assert 0 < ms < 100
