"""Launches through Tessera's CUDA path on the recording driver (tests/fake_cuda), in a process of its own: the
CUDA driver is loaded once per process, from TESSERA_LIBCUDA. test_descriptor.py runs it:

    fake_cuda_launch.py <kernels header> <scenario>

and reads what it prints (one JSON object: what the compiler says of the kernel, the launch's error if any) and
the driver's log (TESSERA_FAKE_CUDA_LOG)."""

import json
import sys

import numpy as np

import tessera


class FakeGpuArray:
    """A GPU array as torch or CuPy present one (__cuda_array_interface__), over host memory: the recording
    driver's device memory is host memory."""

    def __init__(self, array):
        self.host = array
        self.__cuda_array_interface__ = {
            "shape": array.shape, "typestr": array.dtype.str, "data": (array.ctypes.data, False), "version": 3,
            "strides": None, "stream": 7,
        }


def main(header, scenario):
    module = tessera.load(header)
    k = module.desc_matmul
    M, N, K = 100, 72, 96
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.full((M, N), 3.0, np.float32)
    blocks = dict(BM=64, BN=64, BK=32)
    options = ({"ping_pong": True} if scenario == "ping_pong" else
               {"warp_specialize": scenario != "plain", "persistent": scenario == "persistent"})
    grid = (tessera.cdiv(M, 64), tessera.cdiv(N, 64))
    compiled = k.compile(arch="sm_90a", specialization={"a": (64, 32), "b": (32, 64)}, **blocks, **options)
    out = {"shared_bytes": compiled.shared_bytes,
           "threads": 32 * (compiled.num_warps * compiled.consumer_groups + compiled.producer_warps),
           "a": a.ctypes.data, "b": b.ctypes.data, "c": c.ctypes.data}
    if scenario in ("gpu_arrays", "persistent", "ping_pong"):
        args = (tessera.TensorDescriptor(FakeGpuArray(a), (64, 32)), tessera.TensorDescriptor(FakeGpuArray(b), (32, 64)),
                FakeGpuArray(c))
    else:  # numpy arrays: copied to device buffers and back
        args = (tessera.TensorDescriptor(a, (64, 32)), tessera.TensorDescriptor(b, (32, 64)), c)
    try:
        k[grid](*args, M, N, K, backend="cuda", **blocks, **options)
    except tessera.Error as e:
        out["error"] = str(e)
    # Nothing ran: a staged c comes back from its device buffer as it went in.
    out["c_unchanged"] = bool((c == 3.0).all())
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
