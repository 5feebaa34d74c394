"""tessera.aot.export: the exported C compiles on its own (cc -std=c11 -Wall -Werror), reports bad arguments and a
missing device through its error codes, and, where a CUDA GPU is present, computes what the JIT computes."""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

import tessera

K = tessera.kernels
CC = shutil.which("cc")
NO_DEVICE, INVALID_ARGUMENT = 3, 1


def build_library(tmp_path, paths):
    """Compiles the exported sources into a shared library and loads it."""
    if CC is None:
        pytest.skip("no C compiler")
    lib = tmp_path / "libexports.so"
    sources = [p for p in paths if p.endswith(".c")]
    subprocess.run([CC, "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-o", str(lib), *sources, "-ldl",
                    "-lpthread"], check=True)
    return ctypes.CDLL(str(lib))


def export_vector_add(tmp_path, **options):
    return tessera.aot.export(K.vector_add, tmp_path, constants={"BLOCK": 1024},
                              targets=["nvptx:sm_80", "nvptx:sm_90a"], divisible_by_16=["x", "y", "out"], **options)


def declare_vector_add(lib):
    lib.vector_add_launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 3 + [ctypes.c_void_p] * 3 + [ctypes.c_int32]
    lib.vector_add_launch.restype = ctypes.c_int
    lib.vector_add_last_error.restype = ctypes.c_char_p


def test_export_writes_a_typed_header_and_the_source(tmp_path):
    paths = export_vector_add(tmp_path, cubin=False)
    assert sorted(p.rsplit("/", 1)[1] for p in paths) == ["vector_add.c", "vector_add.h"]
    header = (tmp_path / "vector_add.h").read_text()
    assert ("int vector_add_launch(void* stream, unsigned grid_x, unsigned grid_y, unsigned grid_z, float* x, "
            "float* y, float* out, int32_t n);") in header
    assert "Kernel 'vector_add' at BLOCK=1024, num_warps=4" in header
    source = (tmp_path / "vector_add.c").read_text()
    assert '{AOT_CUDA, "sm_90a", "ptx"' in source and '{AOT_CUDA, "sm_80", "ptx"' in source
    assert "cubin" not in source.split("static const aot_image aot_images[]")[1]


def test_launch_without_a_driver_reports_no_device(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSERA_LIBCUDA", str(tmp_path / "missing-libcuda.so.1"))
    lib = build_library(tmp_path, export_vector_add(tmp_path, cubin=False))
    declare_vector_add(lib)
    fake = 0x10000  # never dereferenced: no driver can be loaded
    assert lib.vector_add_launch(None, 1, 1, 1, fake, None, fake, 100) == INVALID_ARGUMENT
    assert b"argument 'y' is a null pointer" in lib.vector_add_last_error()
    assert lib.vector_add_launch(None, 1, 1, 1, fake, fake, fake, 100) == NO_DEVICE
    assert b"missing-libcuda.so.1" in lib.vector_add_last_error()


@pytest.mark.parametrize("options, message", [
    ({"divisible_by_16": ["z"]}, "names 'z', which is not a runtime parameter of kernel 'vector_add'"),
    ({"equal_to_1": ["x"]}, "pointer parameter 'x' cannot be equal to 1"),
    ({"divisible_by_8": ["x"]}, "pointer parameter 'x' takes divisible-by-16 \\(16-byte aligned\\), not divisible-by-8"),
    ({"divisible_by_8": ["n"], "equal_to_1": ["n"]}, "parameter 'n' is given more than one of"),
    ({"divisible_by_8": ["w"]}, "divisible-by-8 names 'w', which is not a runtime parameter"),
    ({"targets": ["nvptx:sm90"]}, "target 'nvptx:sm90' is not <target>:<arch>"),
    ({"name": "vector-add"}, "export name 'vector-add' is not a C identifier"),
    ({"constants": {}}, "BLOCK"),
])
def test_bad_export_options_raise(tmp_path, options, message):
    args = {"constants": {"BLOCK": 1024}, "targets": ["nvptx:sm_90a"], "cubin": False, **options}
    with pytest.raises(tessera.Error, match=message):
        tessera.aot.export(K.vector_add, tmp_path, **args)


def test_divisible_by_8_is_assumed_and_checked_at_launch(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSERA_LIBCUDA", str(tmp_path / "missing-libcuda.so.1"))
    paths = export_vector_add(tmp_path, cubin=False, divisible_by_8=["n"])
    assert "multiple of 8: n;" in (tmp_path / "vector_add.h").read_text()
    lib = build_library(tmp_path, paths)
    declare_vector_add(lib)
    fake = 0x10000
    assert lib.vector_add_launch(None, 1, 1, 1, fake, fake, fake, 100) == INVALID_ARGUMENT
    assert b"argument 'n' is 100, not a multiple of 8" in lib.vector_add_last_error()
    assert lib.vector_add_launch(None, 1, 1, 1, fake, fake, fake, 104) == NO_DEVICE  # the check passes


def test_divisible_by_8_specializes_the_binaries(tmp_path):
    # A ragged matmul (sizes and strides multiples of 8, not 16): the fact changes the compiled code (the JIT's own
    # specialization gives such launches 16-byte copies of f16 rows), and the header says what it assumes.
    ints = ["M", "N", "K", "stride_am", "stride_bk", "stride_cm"]
    def export(directory, **options):
        tessera.aot.export(K.matmul, tmp_path / directory, constants={"BM": 64, "BN": 64, "BK": 32, "GROUP_M": 8},
                           targets=["nvptx:sm_80"], cubin=False, divisible_by_16=["a", "b", "c"],
                           equal_to_1=["stride_ak", "stride_bn", "stride_cn"], **options)
        return (tmp_path / directory / "matmul.c").read_text(), (tmp_path / directory / "matmul.h").read_text()
    plain_source, _ = export("plain")
    source, header = export("eight", divisible_by_8=ints)
    assert "multiple of 8: K, M, N, stride_am, stride_bk, stride_cm;" in header
    assert "is %lld, not a multiple of 8" in source and "is %lld, not a multiple of 8" not in plain_source
    ptx = lambda text: text.split("0x00}; /* NUL")[0]  # the embedded PTX, as hex bytes
    assert ptx(source) != ptx(plain_source)


def cuda_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or not tessera._C.cuda_available():
        pytest.skip("no CUDA GPU")
    return torch


def test_exported_kernels_match_the_jit_on_a_gpu(tmp_path):
    torch = cuda_torch()
    paths = export_vector_add(tmp_path)
    paths += tessera.aot.export(K.softmax, tmp_path, constants={"BLOCK": 1024}, num_warps=8, divisible_by_16=["out", "in"],
                                targets=["nvptx:sm_80", "nvptx:sm_90a"])
    lib = build_library(tmp_path, paths)
    declare_vector_add(lib)
    lib.softmax_launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 3 + [ctypes.c_void_p] * 2 + [ctypes.c_int32] * 3
    lib.softmax_last_error.restype = ctypes.c_char_p
    stream = torch.cuda.current_stream().cuda_stream
    gen = torch.Generator(device="cuda").manual_seed(7)

    n = 98_000
    x, y = torch.randn(n, device="cuda", generator=gen), torch.randn(n, device="cuda", generator=gen)
    jit_out, aot_out = torch.empty_like(x), torch.empty_like(x)
    K.vector_add[(tessera.cdiv(n, 1024),)](x, y, jit_out, n, BLOCK=1024)
    status = lib.vector_add_launch(stream, tessera.cdiv(n, 1024), 1, 1, x.data_ptr(), y.data_ptr(),
                                   aot_out.data_ptr(), n)
    assert status == 0, lib.vector_add_last_error()

    rows, cols = 300, 781
    s = torch.randn(rows, cols, device="cuda", generator=gen) * 4
    jit_soft, aot_soft = torch.empty_like(s), torch.empty_like(s)
    K.softmax[(rows,)](jit_soft, s, s.stride(0), jit_soft.stride(0), cols, BLOCK=1024, num_warps=8)
    status = lib.softmax_launch(stream, rows, 1, 1, aot_soft.data_ptr(), s.data_ptr(), s.stride(0),
                                aot_soft.stride(0), cols)
    assert status == 0, lib.softmax_last_error()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(aot_out.cpu().numpy(), jit_out.cpu().numpy())
    np.testing.assert_array_equal(aot_soft.cpu().numpy(), jit_soft.cpu().numpy())
