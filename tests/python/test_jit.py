"""The CUDA JIT from Python without a GPU: compile artifacts (PTX, LLVM IR, the IR after every pass), the
specialization facts, backend selection for GPU arrays, and the argument checks of CUDA launches, exercised with
stand-in GPU arrays (objects with __cuda_array_interface__ or DLPack) that are rejected, or reach the launch,
before any memory is touched."""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import tessera

K = tessera.kernels
MATMUL = dict(BM=16, BN=16, BK=16, GROUP_M=2)
TUTORIAL_CONSTANTS = {
    "vector_add": dict(BLOCK=1024),
    "softmax": dict(BLOCK=128),
    "layernorm_fwd": dict(BLOCK=128),
    "layernorm_bwd_dx": dict(BLOCK=128),
    "layernorm_bwd_dwdb": dict(BLOCK_M=2, BLOCK_N=32),
    "layernorm_bwd_atomic": dict(BLOCK=128),
    "matmul": MATMUL,
    "matmul_f8e4m3": MATMUL,
    "matmul_epilogue": dict(MATMUL, ACTIVATION=1),
    "matmul_epilogue_f16": dict(MATMUL, ACTIVATION=1),
    "attention_fwd": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=1),
    "attention_fwd_bf16": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=0),
    "attention_fwd_desc": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=1),
    "attention_fwd_desc_bf16": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=0),
    "attention_fwd_desc_overlap": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=1),
    "attention_fwd_desc_overlap_bf16": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=0),
    "matmul_desc_f16_out": MATMUL,
    "matmul_desc_bf16_out": MATMUL,
    "matmul_desc_f16_tma_c": MATMUL,
    "matmul_desc_bf16_tma_c": MATMUL,
    "attention_fwd_lse": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=1),
    "attention_fwd_lse_bf16": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=0),
    "attention_bwd_preprocess": dict(BM=32, HEAD_DIM=64),
    "attention_bwd_preprocess_bf16": dict(BM=32, HEAD_DIM=64),
    "attention_bwd_dkdv": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=1),
    "attention_bwd_dkdv_bf16": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=0),
    "attention_bwd_dq": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=1),
    "attention_bwd_dq_bf16": dict(BM=32, BN=16, HEAD_DIM=64, CAUSAL=0),
    "dropout": dict(BLOCK=128),
    "seeded_dropout": dict(BLOCK=128),
}
# The blocks of the kernels' tensor descriptors, which a compile specializes on.
TUTORIAL_DESCRIPTORS = {name: {"a": (16, 16), "b": (16, 16)} for name in ("matmul_desc_f16_out", "matmul_desc_bf16_out")}
TUTORIAL_DESCRIPTORS.update({name: {"a": (16, 16), "b": (16, 16), "c": (16, 16)}
                             for name in ("matmul_desc_f16_tma_c", "matmul_desc_bf16_tma_c")})
TUTORIAL_DESCRIPTORS.update({name: {"q": (1, 32, 64), "k": (1, 16, 64), "v": (1, 16, 64), "out": (1, 32, 64)}
                             for name in ("attention_fwd_desc", "attention_fwd_desc_bf16", "attention_fwd_desc_overlap",
                                          "attention_fwd_desc_overlap_bf16")})
CUDA_PRESENT = tessera._C.cuda_available()


def test_every_tutorial_kernel_has_constants_here():
    assert sorted(TUTORIAL_CONSTANTS) == sorted(n for n in dir(K) if not n.startswith("_"))


@pytest.mark.parametrize("name", sorted(TUTORIAL_CONSTANTS))
def test_tutorial_kernel_compiles_to_ptx(name):
    c = getattr(K, name).compile(target="nvptx", arch="sm_90a", num_warps=4, specialization=TUTORIAL_DESCRIPTORS.get(name),
                                 **TUTORIAL_CONSTANTS[name])
    assert re.search(rf"\.entry {name}\(", c.ptx), c.ptx[:2000]
    assert ".target sm_90a" in c.ptx
    assert c.format == "ptx" and c.binary == c.ptx.encode()
    assert c.num_warps == 4 and c.warp_size == 32 and c.arch == "sm_90a" and c.name == name
    assert f"@{name}" in c.llvm_ir and f"@{name}" in c.optimized_llvm_ir


# The masked accesses are predicated (@%p ld.global / st.global of 32-bit words), 16 bytes at a time where aligned.
def test_vector_add_with_aligned_pointers_uses_vector_loads():
    c = K.vector_add.compile(num_warps=4, specialization={"n": 16}, BLOCK=1024)
    assert "ld.global.v4.b32" in c.ptx
    assert "st.global.v4.b32" in c.ptx


def test_unaligned_pointer_falls_back_to_scalar_loads():
    c = K.vector_add.compile(num_warps=4, specialization={"x": None, "y": None, "out": None, "n": 16}, BLOCK=1024)
    assert "ld.global.v4" not in c.ptx
    assert "ld.global.b32" in c.ptx


def test_specialization_facts_are_argument_attributes():
    c = K.vector_add.compile(specialization={"x": None, "n": 16}, BLOCK=256)
    first_ir = c.ir_stages[0][1]
    # No alignment fact on x; both stand for arrays of fewer than 2^31 elements (pointer_range = 32).
    assert re.search(r"%x: ptr<f32> \{pointer_range = 32\}[,)]", first_ir), first_ir
    assert re.search(r"%y: ptr<f32> \{divisibility = 16, pointer_range = 32\}", first_ir), first_ir
    assert re.search(r"%n: i32 \{divisibility = 16\}", first_ir), first_ir
    one = K.vector_add.compile(specialization={"n": 1}, BLOCK=256)
    assert "equal_to_1 = true" in one.ir_stages[0][1]
    eight = K.vector_add.compile(specialization={"n": 8}, BLOCK=256)
    assert re.search(r"%n: i32 \{divisibility = 8\}", eight.ir_stages[0][1]), eight.ir_stages[0][1]


PTXAS = next((p for p in (os.environ.get("TESSERA_PTXAS"), "/usr/local/cuda/bin/ptxas", shutil.which("ptxas"))
              if p and os.access(p, os.X_OK)), None)


# resources() is ptxas -v's word on a PTX kernel: the same registers and spills ptxas prints when run by hand.
@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
def test_resources_of_ptx_are_what_ptxas_says(tmp_path):
    c = K.matmul.compile(arch="sm_90a", num_warps=4, BM=64, BN=64, BK=32, GROUP_M=8)
    r = c.resources()
    assert set(r) == {"registers", "spill_store_bytes", "spill_load_bytes", "stack_bytes", "static_shared_bytes",
                      "source"}
    assert "ptxas -v" in r["source"]
    (tmp_path / "k.ptx").write_text(c.ptx)
    log = subprocess.run([PTXAS, "-v", "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                         capture_output=True, text=True, check=True).stderr
    assert f"Used {r['registers']} registers" in log, log
    assert f"{r['spill_store_bytes']} bytes spill stores, {r['spill_load_bytes']} bytes spill loads" in log, log
    assert r["registers"] > 32  # a 64x64 f32 accumulator over 128 threads is 32 registers alone
    with pytest.raises(Exception, match="is not an executable file"):
        c.resources(ptxas=str(tmp_path / "k.ptx"))


# An AMDGPU code object records its own: its metadata's VGPRs, SGPRs, spills, LDS and scratch, without any tool.
def test_resources_of_a_code_object_are_its_metadata():
    c = K.matmul.compile(target="amdgpu", arch="gfx942", num_warps=4, BM=64, BN=64, BK=32, GROUP_M=8)
    r = c.resources()
    assert r["source"] == "code object metadata"
    assert {"vgprs", "sgprs", "vgpr_spills", "lds_bytes", "scratch_bytes"} <= set(r)
    assert r["vgprs"] > 16 and r["vgpr_spills"] == 0 and r["scratch_bytes"] == 0
    assert r["lds_bytes"] == c.shared_bytes  # HIP's LDS is static: the code object declares what the kernel needs


def test_ir_stages_follow_the_pipeline():
    c = K.softmax.compile(BLOCK=128)
    stages = [name for name, _ in c.ir_stages]
    for expected in ("canonicalize", "coalesce", "assign-layouts", "allocate-shared-memory", "insert-barriers"):
        assert expected in stages, stages
    assert stages.index("coalesce") < stages.index("allocate-shared-memory")
    assert stages[0] == "input"
    assert all("@softmax" in text for _, text in c.ir_stages)
    # After allocation, the function records the shared memory the launch must provide.
    assert c.shared_bytes > 0  # the row reductions exchange partial results through shared memory
    assert f"smem_bytes = {c.shared_bytes}" in dict(c.ir_stages)["allocate-shared-memory"]


def test_num_warps_and_arch_reach_the_ptx():
    c = K.vector_add.compile(arch="sm_80", num_warps=8, BLOCK=1024)
    assert ".target sm_80" in c.ptx
    assert ".maxntid 256, 1, 1" in c.ptx
    assert c.num_warps == 8
    assert re.fullmatch(r"<tessera compiled kernel vector_add for nvptx sm_80, 8 warps, \d+ B shared>", repr(c))


def test_num_stages_pipelines_the_matmul_copies():
    # The dot operands go through cp.async into num_stages shared stages; the loop waits num_stages - 2 groups deep.
    # 16-byte copies need rows that start 16-byte aligned: strides divisible by 16 (unit strides along K and N).
    constants = dict(BM=64, BN=64, BK=32, GROUP_M=2,
                     specialization=dict(K=16, stride_am=16, stride_ak=1, stride_bk=16, stride_bn=1, stride_cm=16,
                                         stride_cn=1))
    ptx = {s: K.matmul.compile(arch="sm_80", num_stages=s, **constants).ptx for s in (1, 2, 3, 4)}
    for s, text in ptx.items():
        assert "cp.async.cg.shared.global" in text, s
        assert f"cp.async.wait_group {max(s - 2, 0)};" in text, s
    assert "cp.async.wait_group 2;" not in ptx[3]
    stages = K.matmul.compile(arch="sm_80", num_stages=3, **constants)
    assert "smem<3x64x32xf16" in dict(stages.ir_stages)["pipeline-loops"]
    assert stages.shared_bytes > K.matmul.compile(arch="sm_80", num_stages=1, **constants).shared_bytes


def test_each_dot_reports_its_instruction_and_why_a_faster_one_was_passed_over():
    # CompiledKernel.dots: one entry per dot, at its line of the kernel library's matmul.h.
    def dots(kernel=K.matmul, **options):
        return kernel.compile(**dict(dict(BM=64, BN=64, BK=32, GROUP_M=8), **options)).dots
    (hopper,) = dots(arch="sm_90a")
    assert re.fullmatch(r".*kernels/matmul\.h:\d+:\d+", hopper["location"]), hopper
    assert (hopper["instruction"], hopper["note"]) == ("wgmma m64n64k16 f16", "")
    assert [(d["instruction"], d["note"]) for d in dots(arch="sm_80")] == [("mma.sync m16n8k16 f16", "")]
    assert [(d["instruction"], d["note"]) for d in dots(arch="sm_90a", num_warps=2)] == [
        ("mma.sync m16n8k16 f16", "not wgmma: wgmma needs whole warpgroups: num_warps a multiple of 4, got 2")]
    assert [d["instruction"] for d in dots(target="amdgpu", arch="gfx942")] == ["v_mfma_f32_16x16x16f16"]
    (fp8,) = dots(kernel=K.matmul_f8e4m3, arch="sm_80", BK=64)
    assert fp8["instruction"] == "fma"
    assert fp8["note"].startswith("the mma.sync lowering takes f16 (16 x 8 x 16 blocks)"), fp8
    assert fp8["note"].endswith("this dot is f8e4m3 x f8e4m3 -> f32, M x N x K = 64 x 64 x 64"), fp8
    assert [d["instruction"] for d in dots(kernel=K.matmul_f8e4m3, arch="sm_90a", BK=64)] == ["wgmma m64n64k32 f8e4m3"]
    assert K.vector_add.compile(arch="sm_80", BLOCK=1024).dots == []


def test_num_stages_is_checked():
    for bad in (0, 9, 2.0, "3"):
        with pytest.raises(ValueError, match="num_stages"):
            K.matmul.compile(num_stages=bad, **MATMUL)


def test_compile_errors():
    with pytest.raises(TypeError, match="needs Const parameter 'BLOCK'"):
        K.vector_add.compile()
    with pytest.raises(TypeError, match="no runtime parameter 'z'"):
        K.vector_add.compile(specialization={"z": 16}, BLOCK=64)
    with pytest.raises(ValueError, match="16, 8, 1 or None"):
        K.vector_add.compile(specialization={"n": 4}, BLOCK=64)
    with pytest.raises(ValueError, match="pointer 'x' can only be specialized as 16"):
        K.vector_add.compile(specialization={"x": 1}, BLOCK=64)
    with pytest.raises(ValueError, match="pointer 'x' can only be specialized as 16"):
        K.vector_add.compile(specialization={"x": 8}, BLOCK=64)
    with pytest.raises(ValueError, match="num_warps"):
        K.vector_add.compile(num_warps=3, BLOCK=64)
    with pytest.raises(tessera.Error, match="unknown target 'x86'"):
        K.vector_add.compile(target="x86", BLOCK=64)


class FakeCudaArray:
    """A stand-in for a GPU array: only its __cuda_array_interface__ (v3), no memory behind the pointer."""

    def __init__(self, shape, typestr="<f4", strides=None, readonly=False, ptr=0x7F0000000000, stream=None,
                 device=None):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "strides": strides,
                                         "data": (ptr, readonly), "version": 3}
        if stream is not None:
            self.__cuda_array_interface__["stream"] = stream
        if device is not None:
            self.__dlpack_device__ = lambda: (2, device)


def add_args(n=64, **overrides):
    args = dict(x=FakeCudaArray((n,)), y=FakeCudaArray((n,)), out=FakeCudaArray((n,)), n=n)
    args.update(overrides)
    return args


def launch(**args):
    K.vector_add[1](**args, BLOCK=64)


@pytest.mark.skipif(CUDA_PRESENT, reason="checks the message given where CUDA is missing")
def test_gpu_arrays_choose_cuda_and_report_the_missing_driver():
    reason = tessera._C.cuda_unavailable_reason()
    assert reason
    with pytest.raises(tessera.Error, match=r"cannot launch kernel 'vector_add': CUDA is not available: ") as e:
        launch(**add_args())
    assert reason in str(e.value)
    assert "libcuda" in str(e.value) or "GPU" in str(e.value)


@pytest.mark.skipif(CUDA_PRESENT, reason="checks the message given where CUDA is missing")
def test_numpy_with_backend_cuda_reports_the_missing_driver():
    x = np.ones(64, np.float32)
    with pytest.raises(tessera.Error, match="CUDA is not available"):
        K.vector_add[1](x, x, np.zeros_like(x), 64, BLOCK=64, backend="cuda")
    np.testing.assert_array_equal(x, 1.0)


def test_gpu_array_dtype_is_checked():
    with pytest.raises(TypeError, match=r"argument 'y' must be a float32 array .*got typestr '<f2'"):
        launch(**add_args(y=FakeCudaArray((64,), typestr="<f2")))
    with pytest.raises(TypeError, match=r"argument 'x' must be a float32 array .*'<i4'"):
        launch(**add_args(x=FakeCudaArray((64,), typestr="<i4")))


def test_gpu_array_contiguity_is_checked():
    strided = FakeCudaArray((64,), strides=(8,))
    with pytest.raises(ValueError, match="argument 'out' must be C-contiguous"):
        launch(**add_args(out=strided))
    transposed = FakeCudaArray((4, 16), strides=(4, 16))
    with pytest.raises(ValueError, match="argument 'x' must be C-contiguous"):
        launch(**add_args(x=transposed))


@pytest.mark.skipif(CUDA_PRESENT, reason="a C-contiguous stand-in would be launched on a real GPU")
def test_contiguous_strides_and_unit_dims_are_accepted():
    explicit = FakeCudaArray((4, 1, 16), strides=(64, 7, 4))  # the extent-1 dimension's stride is irrelevant
    with pytest.raises(tessera.Error, match="CUDA is not available"):
        launch(**add_args(x=explicit))


def test_read_only_and_masked_gpu_arrays_are_refused():
    with pytest.raises(ValueError, match="argument 'out' is read-only"):
        launch(**add_args(out=FakeCudaArray((64,), readonly=True)))
    masked = FakeCudaArray((64,))
    masked.__cuda_array_interface__["mask"] = FakeCudaArray((64,), typestr="|b1")
    with pytest.raises(ValueError, match="argument 'y' is a masked array"):
        launch(**add_args(y=masked))


def test_gpu_arrays_on_different_devices_are_refused():
    with pytest.raises(ValueError, match=r"argument 'y' is on cuda:1 but argument 'x' is on cuda:0"):
        launch(**add_args(x=FakeCudaArray((64,), device=0), y=FakeCudaArray((64,), device=1)))


def test_mixing_numpy_and_gpu_arrays_is_a_type_error():
    host = np.zeros(64, np.float32)
    with pytest.raises(TypeError, match=r"argument 'y' is a numpy \(host\) array but argument 'x' is a GPU array"):
        launch(**add_args(y=host))
    with pytest.raises(TypeError, match=r"argument 'x' is a numpy \(host\) array but argument 'y' is a GPU array"):
        launch(**add_args(x=host))
    with pytest.raises(TypeError, match="not both"):
        K.vector_add[1](host, FakeCudaArray((64,)), host, 64, BLOCK=64, backend="cuda")


def test_other_objects_and_scalars_are_checked_for_cuda_launches():
    with pytest.raises(TypeError, match=r"argument 'y' must be a GPU array .* got list"):
        launch(**add_args(y=[1.0] * 64))
    with pytest.raises(ValueError, match=r"argument 'n' = 4294967296 does not fit in i32"):
        launch(**dict(add_args(), n=2 ** 32))
    with pytest.raises(TypeError, match=r"argument 'n' must be an int"):
        launch(**dict(add_args(), n=64.0))


def test_interpreter_backend_still_refuses_gpu_arrays():
    with pytest.raises(TypeError, match="argument 'x' is a GPU array"):
        K.vector_add[1](**add_args(), BLOCK=64, backend="interpreter")


class FakeDLPackCapsuleOwner:
    """An object that only speaks DLPack and says it lives on a CUDA device."""

    def __init__(self, device):
        self.device = device
        self.exported = 0

    def __dlpack_device__(self):
        return (2, self.device)

    def __dlpack__(self, stream=None):
        self.exported += 1
        raise BufferError("this stand-in has no memory to export")


def test_dlpack_on_cuda_selects_the_cuda_backend():
    owner = FakeDLPackCapsuleOwner(0)
    with pytest.raises(BufferError, match="no memory to export"):
        launch(**add_args(x=owner))
    assert owner.exported == 1  # the launch went the CUDA way and asked for the capsule


def test_gpu_arrays_whose_array_interface_raises_go_by_dlpack():
    # torch's bf16 CUDA tensors: __cuda_array_interface__ raises KeyError (no typestr), DLPack says cuda:0.
    class Bf16Like(FakeDLPackCapsuleOwner):
        @property
        def __cuda_array_interface__(self):
            raise KeyError("torch.bfloat16")
    owner = Bf16Like(0)
    with pytest.raises(BufferError, match="no memory to export"):
        launch(**add_args(x=owner))
    assert owner.exported == 1


def test_dlpack_on_the_cpu_stays_on_the_interpreter():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    K.vector_add[1](x, x, out, 64, BLOCK=64)  # numpy arrays speak DLPack too (on the CPU): interpreter
    np.testing.assert_array_equal(out, 2 * x)


def test_numpy_dlpack_capsules_are_parsed_for_dtype_checks():
    # A numpy array seen through a wrapper that claims a CUDA device: the capsule's dtype is read and checked.
    class ClaimsCuda:
        def __init__(self, arr):
            self.arr = arr

        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, stream=None):
            return self.arr.__dlpack__()

    if not hasattr(np.ndarray, "__dlpack__"):
        pytest.skip("this numpy has no DLPack export")
    with pytest.raises(TypeError, match=r"argument 'y' must be a float32 array .*got int32"):
        launch(**add_args(y=ClaimsCuda(np.zeros(64, np.int32))))
    with pytest.raises(ValueError, match="argument 'y' must be C-contiguous"):
        launch(**add_args(y=ClaimsCuda(np.zeros(128, np.float32)[::2])))
