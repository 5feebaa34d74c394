"""tessera.TensorDescriptor arguments on the interpreter, in eager mode, on the emulator and through the CUDA launch
path (on the recording driver of tests/fake_cuda, which runs nothing): a kernel specializes
on each descriptor's block, and launches check a descriptor with the same rules as a GPU launch
(ir/TensorDescriptor.h). Compiled for sm_90a, the descriptor is a 256-byte parameter carrying a tensor map.
load(desc, {offsets...}) in a kernel reads a block, zero outside the tensor, and store(desc, {offsets...}, value)
writes one, nothing outside the tensor, on every backend."""

import json
import os
import pathlib
import struct
import subprocess
import sys

import numpy as np
import pytest

import tessera

HEADER = """\
#pragma once
#include "tessera/tessera.h"
using namespace tessera;

// Marks out[0:BLOCK]; the descriptor is only taken.
inline void take_desc(TensorDesc<f32> src, Ptr<f32> out, Const<int> BLOCK) {
  store(out + arange(0, BLOCK), 1.0f);
}
TESSERA_PY_KERNEL(take_desc, src, out, BLOCK);

// Program (i, j) copies the BM x BN block of src at (i * BM + shift, j * BN) to its place in out, whole: what lies
// outside src reads as zero.
inline void copy_blocks(TensorDesc<f32> src, Ptr<f32> out, Int shift, Int out_cols, Const<int> BM, Const<int> BN) {
  Tensor i = program_id(0), j = program_id(1);
  Tensor block = load(src, {i * BM + shift, j * BN});
  Tensor rows = i * BM + arange(0, BM), cols = j * BN + arange(0, BN);
  store(out + expand_dims(rows, 1) * out_cols + expand_dims(cols, 0), block);
}
TESSERA_PY_KERNEL(copy_blocks, src, out, shift, out_cols, BM, BN);

// Program (i, j) moves the BM x BN block of src at (i * BM, j * BN) to dst at (i * BM + shift, j * BN + shift),
// doubled: what falls outside dst is not written.
inline void shift_blocks(TensorDesc<f32> src, TensorDesc<f32> dst, Int shift, Const<int> BM, Const<int> BN) {
  Tensor i = program_id(0), j = program_id(1);
  store(dst, {i * BM + shift, j * BN + shift}, load(src, {i * BM, j * BN}) * 2.0f);
}
TESSERA_PY_KERNEL(shift_blocks, src, dst, shift, BM, BN);

// C = A x B with A and B read through descriptors (the loop warp_specialize hands to a producer warpgroup).
inline void desc_matmul(TensorDesc<f16> a, TensorDesc<f16> b, Ptr<f32> c, Int M, Int N, Int K, Const<int> BM,
                        Const<int> BN, Const<int> BK) {
  Tensor m0 = program_id(0) * BM, n0 = program_id(1) * BN;
  Tensor acc = zeros<f32>({BM, BN});
  for (Tensor k : range(0, K, BK)) acc = dot(load(a, {m0, k}), load(b, {k, n0}), acc);
  Tensor rows = expand_dims(m0 + arange(0, BM), 1), cols = expand_dims(n0 + arange(0, BN), 0);
  store(c + rows * N + cols, acc, (rows < M) & (cols < N));
}
TESSERA_PY_KERNEL(desc_matmul, a, b, c, M, N, K, BM, BN, BK);

// The same with C stored through a descriptor too (a TMA store on sm_90a): no masks or pointers in the kernel.
inline void desc_matmul_c(TensorDesc<f16> a, TensorDesc<f16> b, TensorDesc<f32> c, Int K, Const<int> BM,
                          Const<int> BN, Const<int> BK) {
  Tensor m0 = program_id(0) * BM, n0 = program_id(1) * BN;
  Tensor acc = zeros<f32>({BM, BN});
  for (Tensor k : range(0, K, BK)) acc = dot(load(a, {m0, k}), load(b, {k, n0}), acc);
  store(c, {m0, n0}, acc);
}
TESSERA_PY_KERNEL(desc_matmul_c, a, b, c, K, BM, BN, BK);
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TESSERA_CACHE_DIR", str(tmp_path_factory.mktemp("tessera-cache")))
        header = tmp_path_factory.mktemp("kernels") / "descriptors.h"
        header.write_text(HEADER)
        yield tessera.load(header)


def test_descriptor_defaults_to_the_arrays_shape_and_strides():
    a = np.zeros((30, 48), np.float32)
    d = tessera.TensorDescriptor(a, block_shape=[16, 32])
    assert (d.shape, d.strides, d.block_shape) == ((30, 48), (48, 1), (16, 32))
    d = tessera.TensorDescriptor(a, (8, 8), shape=(30, 40), strides=(48, 1))
    assert (d.shape, d.strides) == ((30, 40), (48, 1))


@pytest.mark.parametrize("backend", ["interpreter", "eager", pytest.param("sim", marks=pytest.mark.sim)])
def test_a_descriptor_launches_and_the_kernel_specializes_on_its_block(module, backend):
    k = module.take_desc
    assert k.params[0] == ("src", "descriptor", "f32")
    a = np.zeros((30, 48), np.float32)
    for block in [(16, 32), (8, 16)]:
        out = np.zeros(8, np.float32)
        k[(1,)](tessera.TensorDescriptor(a, block), out, BLOCK=8, backend=backend)
        np.testing.assert_array_equal(out, np.ones(8, np.float32))
    if backend == "interpreter":
        irs = [spec.ir for spec in k._specializations.values()]
        assert len(irs) == 2
        assert any("%src: tensordesc<16x32xf32>" in ir for ir in irs)
        assert any("%src: tensordesc<8x16xf32>" in ir for ir in irs)


@pytest.mark.parametrize("backend", ["interpreter", "eager"])
def test_bad_descriptors_are_refused_with_the_rule_they_break(module, backend):
    k = module.take_desc
    out = np.zeros(8, np.float32)
    a = np.zeros((30, 50), np.float32)  # rows of 200 bytes: not a multiple of 16
    with pytest.raises(tessera.Error, match=r"descriptor argument 'src': strides\[0\] is 50 elements \(200 bytes\)"):
        k[(1,)](tessera.TensorDescriptor(a, (16, 32)), out, BLOCK=8, backend=backend)
    with pytest.raises(TypeError, match="argument 'src' must be a tessera.TensorDescriptor of f32, got ndarray"):
        k[(1,)](a, out, BLOCK=8, backend=backend)
    with pytest.raises(TypeError, match="argument 'src' must be a float32 array"):
        k[(1,)](tessera.TensorDescriptor(np.zeros((32, 48), np.float16), (16, 32)), out, BLOCK=8, backend=backend)
    with pytest.raises(ValueError, match="'src': block dimension 48 is not a power of two"):
        k[(1,)](tessera.TensorDescriptor(np.zeros((32, 48), np.float32), (16, 48)), out, BLOCK=8, backend=backend)


def test_compiled_for_sm90a_the_descriptor_carries_a_tensor_map(module):
    k = module.take_desc
    ptx = k.compile(arch="sm_90a", specialization={"src": (16, 32)}, BLOCK=8).ptx
    assert ".param .align 64 .b8 take_desc_param_0[256]" in ptx
    ptx = k.compile(arch="sm_80", specialization={"src": (16, 32)}, BLOCK=8).ptx
    assert ".param .align 8 .b8 take_desc_param_0[40]" in ptx
    with pytest.raises(TypeError, match="specialization of descriptor 'src' must be a sequence of ints"):
        k.compile(arch="sm_90a", BLOCK=8)


FAKE_LIBCUDA = os.environ.get("TESSERA_FAKE_LIBCUDA", "")
requires_fake_cuda = pytest.mark.skipif(not os.path.exists(FAKE_LIBCUDA),
                                        reason="TESSERA_FAKE_LIBCUDA names no recording CUDA driver (ctest sets it)")


def launch_on_fake_cuda(tmp_path, scenario, **env):
    """Runs fake_cuda_launch.py's scenario on the recording driver; returns what it printed and the driver's log."""
    header = tmp_path / "descriptors.h"
    header.write_text(HEADER)
    log = tmp_path / "driver.log"
    env = dict(os.environ, TESSERA_LIBCUDA=FAKE_LIBCUDA, TESSERA_FAKE_CUDA_LOG=str(log),
               TESSERA_CACHE_DIR=str(tmp_path / "cache"), **env)
    script = pathlib.Path(__file__).with_name("fake_cuda_launch.py")
    run = subprocess.run([sys.executable, str(script), str(header), scenario], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return json.loads(run.stdout), calls


def calls_to(calls, name):
    return [c for c in calls if c["call"] == name]


def descriptor_param(hex_bytes):
    """A sm_90a descriptor parameter's 256 bytes: its fields (base, shape, strides: i64) and the tensor map at 128."""
    raw = bytes.fromhex(hex_bytes)
    assert len(raw) == 256
    base, rows, cols, row_stride, col_stride = struct.unpack_from("<Qqqqq", raw)
    return base, (rows, cols), (row_stride, col_stride), raw[128:].hex()


def check_matmul_launch(printed, calls, a_address, b_address, c_address, grid, extra_params=(), threads=256):
    # The tensor maps: innermost dimension first, byte strides of the outer ones, one box per TMA copy.
    maps = calls_to(calls, "cuTensorMapEncodeTiled")
    assert [(m["address"], m["data_type"], m["dims"], m["byte_strides"], m["box"], m["swizzle"]) for m in maps] == [
        (a_address, 6, [96, 100], [192], [32, 64], 2),  # f16; 64-byte rows: 64-byte swizzle
        (b_address, 6, [72, 96], [144], [64, 32], 3)]   # 128-byte rows: 128-byte swizzle
    [launch] = calls_to(calls, "cuLaunchKernel")
    assert launch["kernel"] == "desc_matmul"
    assert launch["grid"] == grid
    # 4 consumer warps (two groups of them with ping_pong) and the producers
    assert launch["block"] == [printed["threads"], 1, 1] == [threads, 1, 1]
    assert launch["shared"] == printed["shared_bytes"]
    params = launch["params"]
    assert len(params) == 6 + len(extra_params)
    assert descriptor_param(params[0]) == (a_address, (100, 96), (96, 1), maps[0]["map"])
    assert descriptor_param(params[1]) == (b_address, (96, 72), (72, 1), maps[1]["map"])
    assert struct.unpack("<Q", bytes.fromhex(params[2])) == (c_address,)
    assert [struct.unpack("<i", bytes.fromhex(p))[0] for p in params[3:]] == [100, 72, 96, *extra_params]


@requires_fake_cuda
def test_cuda_launches_of_numpy_descriptors_copy_their_arrays_and_encode_tensor_maps(tmp_path):
    printed, calls = launch_on_fake_cuda(tmp_path, "staged")
    allocs = calls_to(calls, "cuMemAlloc")
    assert [c["bytes"] for c in allocs] == [100 * 96 * 2, 96 * 72 * 2, 100 * 72 * 4]  # a, b, c copied in
    check_matmul_launch(printed, calls, *(c["address"] for c in allocs), grid=[2, 2, 1])
    assert printed["c_unchanged"]  # copied back from a device buffer the (recording) kernel never wrote


@requires_fake_cuda
@pytest.mark.parametrize("scenario", ["gpu_arrays", "persistent", "ping_pong"])
def test_cuda_launches_of_gpu_array_descriptors_map_the_arrays_in_place(tmp_path, scenario):
    printed, calls = launch_on_fake_cuda(tmp_path, scenario)
    assert calls_to(calls, "cuMemAlloc") == []
    # A persistent launch (ping_pong implies it) starts the programs the GPU holds (4 tiles here) and passes the
    # tile grid after them; ping_pong's programs run two groups of consumer warps.
    grid, extra = ([2, 2, 1], ()) if scenario == "gpu_arrays" else ([4, 1, 1], (2, 2, 1))
    check_matmul_launch(printed, calls, printed["a"], printed["b"], printed["c"], grid, extra,
                        threads=384 if scenario == "ping_pong" else 256)
    assert calls_to(calls, "cuLaunchKernel")[0]["stream"] == 7  # the arrays' __cuda_array_interface__ stream


@requires_fake_cuda
@pytest.mark.parametrize("failing", ["cuTensorMapEncodeTiled", "cuLaunchKernel"])
def test_cuda_launch_failures_name_the_driver_error_and_the_kernel(tmp_path, failing):
    printed, calls = launch_on_fake_cuda(tmp_path, "staged", TESSERA_FAKE_CUDA_FAIL=failing)
    assert (f"{failing} failed for kernel 'desc_matmul': CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources "
            "requested for launch)") in printed["error"]
    assert calls_to(calls, "cuLaunchKernel") == []


@pytest.mark.parametrize("backend", ["cuda", "interpreter", pytest.param("sim", marks=pytest.mark.sim)])
def test_a_descriptor_must_stay_inside_its_array(module, backend):
    a = np.zeros((32, 48), np.float32)
    out = np.zeros(8, np.float32)
    # 40 rows of 48: element 39 * 48 + 47, past the 1536 the array holds (checked before any driver is needed).
    with pytest.raises(ValueError, match="argument 'src': its shape and strides reach element 1919 of an array of "
                                         "1536 elements"):
        module.take_desc[(1,)](tessera.TensorDescriptor(a, (16, 32), shape=(40, 48)), out, BLOCK=8, backend=backend)
    with pytest.raises(ValueError, match="reach element 1536 of an array of 1536"):  # one past the end
        module.take_desc[(1,)](tessera.TensorDescriptor(a, (16, 32), shape=(32, 49), strides=(48, 1)), out, BLOCK=8,
                               backend=backend)
    module.take_desc[(1,)](tessera.TensorDescriptor(a, (16, 32), shape=(32, 48)), out, BLOCK=8, backend="interpreter")


def test_descriptors_take_shape_and_strides_from_tensors_and_gpu_arrays():
    torch = pytest.importorskip("torch")
    t = torch.zeros((6, 40), dtype=torch.float16)[:, :32]
    d = tessera.TensorDescriptor(t, (2, 16))
    assert (d.shape, d.strides) == ((6, 32), (40, 1))

    class Cai:
        __cuda_array_interface__ = {"shape": (3, 4, 8), "typestr": "<f2", "data": (0, False), "version": 3,
                                    "strides": None}
    assert tessera.TensorDescriptor(Cai(), (1, 2, 8)).strides == (32, 8, 1)
    Cai.__cuda_array_interface__ = dict(Cai.__cuda_array_interface__, strides=(128, 32, 2))
    assert tessera.TensorDescriptor(Cai(), (1, 2, 8)).strides == (64, 16, 1)
    with pytest.raises(TypeError, match="a TensorDescriptor's array must be a numpy array, a tensor or a GPU array"):
        tessera.TensorDescriptor([1.0, 2.0], (2,))


@pytest.mark.parametrize("backend", ["interpreter", "eager", pytest.param("sim", marks=pytest.mark.sim)])
def test_loads_through_a_descriptor_read_zeros_outside_the_tensor(module, backend):
    a = np.arange(37 * 52, dtype=np.float32).reshape(37, 52) + 1
    bm, bn, shift = 16, 32, -5
    grid = (3, 2)
    out = np.full((grid[0] * bm, grid[1] * bn), -1, np.float32)
    module.copy_blocks[grid](tessera.TensorDescriptor(a, (bm, bn)), out, shift, out.shape[1], BM=bm, BN=bn,
                             backend=backend)
    expected = np.zeros_like(out)
    expected[-shift:37 - shift, :52] = a  # row r of out is row r + shift of a
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("backend", ["interpreter", "eager"] +
                         [pytest.param(f"sim:{arch}", marks=pytest.mark.sim) for arch in ("sm_90a", "sm_80", "gfx942")])
@pytest.mark.parametrize("shift", [3, -5])
def test_stores_through_a_descriptor_write_only_inside_the_tensor(module, backend, shift):
    backend, _, arch = backend.partition(":")  # the emulator of each target's arch
    src = np.arange(37 * 52, dtype=np.float32).reshape(37, 52) + 1
    bm, bn = 16, 32
    grid = (tessera.cdiv(37, bm), tessera.cdiv(52, bn))
    padded = np.full((40, 52), -1, np.float32)  # dst is its first 48 columns: rows of 208 bytes
    module.shift_blocks[grid](tessera.TensorDescriptor(src, (bm, bn)),
                              tessera.TensorDescriptor(padded, (bm, bn), shape=(40, 48)), shift, BM=bm, BN=bn,
                              backend=backend, **({"arch": arch} if arch else {}))
    # The blocks cover rows [0, 48) and columns [0, 64) of src, reading zeros past its 37 x 52; each lands shifted.
    # dst (r, c) = 2 src (r - shift, c - shift) (zero outside src) where a block lands inside dst's 40 x 48; the
    # padding columns 48 to 51 are never written.
    covered = np.zeros((48, 64), np.float32)
    covered[:37, :52] = 2 * src
    expected = np.full_like(padded, -1)
    rows = slice(max(shift, 0), min(40, 48 + shift))
    cols = slice(max(shift, 0), min(48, 64 + shift))
    expected[rows, cols] = covered[rows.start - shift:rows.stop - shift, cols.start - shift:cols.stop - shift]
    np.testing.assert_array_equal(padded, expected)
    if backend == "sim":
        assert tessera.sim.last_report()["findings"] == []
        # sm_90a stores the block with TMA (staged in shared memory, cp.async.bulk.tensor), the others with masked
        # stores; both write exactly what the interpreter does.
        ptx = module.shift_blocks.compile(arch=arch, specialization={"src": (bm, bn), "dst": (bm, bn)}, BM=bm,
                                          BN=bn).binary if arch.startswith("sm_") else b""
        assert (b"cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in ptx) == (arch == "sm_90a")


@pytest.mark.sim
@pytest.mark.parametrize("variant, blocks", [({}, (64, 64, 32, 4)), ({"warp_specialize": True}, (64, 64, 32, 4)),
                                             ({"warp_specialize": True, "persistent": True}, (64, 64, 32, 4)),
                                             ({"persistent": True}, (64, 64, 32, 4)),
                                             ({"warp_specialize": True, "persistent": True}, (128, 256, 64, 8))],
                         ids=["plain", "ws", "ws-persistent", "persistent", "ws-persistent-128x256"])
def test_a_matmul_storing_c_through_a_descriptor_matches_numpy_on_the_emulator(module, variant, blocks):
    # C leaves by TMA stores (sm_90a) from the consumers' epilogue: ragged M and N, whose last blocks the store clips.
    # 128x256 on 8 warps, persistent and warp-specialized, is CUTLASS's usual H100 kernel: its f32 C block's staging
    # (128 KiB) beside 3 stages (144 KiB) would not fit, so pipeline-loops keeps 2.
    bm, bn, bk, warps = blocks
    M, N, Kd = (100, 72, 96) if bm == 64 else (200, 296, 160)
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (M, Kd)).astype(np.float16)
    b = rng.uniform(-1, 1, (Kd, N)).astype(np.float16)
    c = np.full((M, N), -7, np.float32)
    grid = (tessera.cdiv(M, bm), tessera.cdiv(N, bn))
    module.desc_matmul_c[grid](tessera.TensorDescriptor(a, (bm, bk)), tessera.TensorDescriptor(b, (bk, bn)),
                               tessera.TensorDescriptor(c, (bm, bn)), Kd, BM=bm, BN=bn, BK=bk, backend="sim",
                               arch="sm_90a", num_warps=warps, **variant)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    assert tessera.sim.last_report()["findings"] == []
    ptx = module.desc_matmul_c.compile(arch="sm_90a", specialization={"a": (bm, bk), "b": (bk, bn), "c": (bm, bn)},
                                       BM=bm, BN=bn, BK=bk, num_warps=warps, **variant).ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in ptx
    assert "st.global" not in ptx


@pytest.mark.sim
@pytest.mark.parametrize("ping_pong", [False, True])
def test_a_warp_specialized_descriptor_matmul_matches_numpy_on_the_emulator(module, ping_pong):
    # A producer warpgroup issues the TMA copies, the 4 consumer warps wait for them (sm_90a); ragged M, N and K.
    # With ping_pong (implies persistent and warp_specialize) two groups of 4 consumer warps each run every other
    # tile of their program (12 tiles on one emulated multiprocessor).
    M, N, Kd = (180, 200, 96) if ping_pong else (100, 72, 96)
    options = {"ping_pong": True} if ping_pong else {"warp_specialize": True}
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (M, Kd)).astype(np.float16)
    b = rng.uniform(-1, 1, (Kd, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    grid = (tessera.cdiv(M, 64), tessera.cdiv(N, 64))
    module.desc_matmul[grid](tessera.TensorDescriptor(a, (64, 32)), tessera.TensorDescriptor(b, (32, 64)), c, M, N,
                             Kd, BM=64, BN=64, BK=32, **options, backend="sim", arch="sm_90a")
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    assert tessera.sim.last_report()["findings"] == []
    spec = {"a": (64, 32), "b": (32, 64)}
    compiled = module.desc_matmul.compile(arch="sm_90a", specialization=spec, BM=64, BN=64, BK=32, **options)
    assert (compiled.num_warps, compiled.consumer_groups, compiled.producer_warps) == (4, 2 if ping_pong else 1, 4)
    assert compiled.persistent == ping_pong
    assert f".maxntid {384 if ping_pong else 256}, 1, 1" in compiled.ptx
    assert ("consumer_group" in compiled.ir_stages[-1][1]) == ping_pong
    assert "setmaxnreg.dec.sync.aligned.u32 24;" in compiled.ptx
    if ping_pong:
        return
    assert module.desc_matmul.compile(arch="sm_90a", specialization=spec, BM=64, BN=64, BK=32).producer_warps == 0
    with pytest.raises(TypeError, match="warp_specialize must be True or False"):
        module.desc_matmul.compile(arch="sm_90a", specialization=spec, BM=64, BN=64, BK=32, warp_specialize=1)
    with pytest.raises(TypeError, match="ping_pong must be True or False"):
        module.desc_matmul.compile(arch="sm_90a", specialization=spec, BM=64, BN=64, BK=32, ping_pong=1)
    with pytest.raises(tessera.Error, match="warp_specialize needs num_stages >= 2"):
        module.desc_matmul.compile(arch="sm_90a", specialization=spec, BM=64, BN=64, BK=32, warp_specialize=True,
                                   num_stages=1)


@requires_fake_cuda
def test_a_launch_that_never_finishes_is_reported_after_the_time_limit(tmp_path):
    """TESSERA_GPU_TIMEOUT: the wait after a launch on host arrays gives up, naming the kernel, where a deadlocked
    kernel would otherwise hang the process (the recording driver's TESSERA_FAKE_CUDA_HANG plays one)."""
    script = """
import numpy as np, tessera
x = np.ones(1000, np.float32)
out = np.zeros(1000, np.float32)
try:
    tessera.kernels.vector_add[(1,)](x, x, out, 1000, BLOCK=1024, backend="cuda")
except Exception as e:
    print(type(e).__name__, e)
"""
    env = dict(os.environ, TESSERA_LIBCUDA=FAKE_LIBCUDA, TESSERA_CACHE_DIR=str(tmp_path / "cache"),
               TESSERA_FAKE_CUDA_HANG="vector_add", TESSERA_GPU_TIMEOUT="0.2")
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "kernel 'vector_add' has not finished after 0.2 s (TESSERA_GPU_TIMEOUT)" in run.stdout, run.stdout
    # With no limit, the driver's own wait answers (the recording driver's fails; a GPU's would never return).
    env.pop("TESSERA_GPU_TIMEOUT")
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert "cuStreamSynchronize failed for kernel 'vector_add': CUDA_ERROR_LAUNCH_TIMEOUT" in run.stdout, run.stdout
