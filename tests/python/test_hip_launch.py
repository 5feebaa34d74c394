"""Python's HIP launch path (backend="hip") on the recording HIP runtime of tests/fake_hip, which runs nothing but
logs each call and checks launches against the code object's metadata: host arrays are copied to device memory and
back, ROCm arrays (DLPack device 10) are passed in place, the kernel gets their device addresses and its scalars
byte for byte, autotuning times configs with HIP events, and a launch that never finishes is reported after
TESSERA_GPU_TIMEOUT seconds, as on CUDA."""

import json
import os
import struct
import subprocess
import sys

import pytest

FAKE_LIBAMDHIP = os.environ.get("TESSERA_FAKE_LIBAMDHIP", "")
pytestmark = pytest.mark.skipif(not os.path.exists(FAKE_LIBAMDHIP),
                                reason="TESSERA_FAKE_LIBAMDHIP names no recording HIP runtime (ctest sets it)")

# What every script starts with. An array in AMD GPU memory, as the recording runtime sees it: its device memory
# is host memory, so a numpy array that DLPack announces as ROCm device `device` (10: kDLROCM) stands for a torch
# ROCm tensor. attempt() gives an exception's type and message instead of raising it.
PRELUDE = """
import json, numpy as np, tessera

class RocmArray:
    def __init__(self, array, device=0):
        self.array, self.device = array, device
    def __dlpack_device__(self):
        return (10, self.device)
    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

x = np.arange(1000, dtype=np.float32)
out = np.full(1000, 7, np.float32)

def attempt(launch):
    try:
        launch()
        return "ok"
    except Exception as e:
        return f"{type(e).__name__}: {e}"
"""

VECTOR_ADD_ON_HOST_ARRAYS = """
result = attempt(lambda: tessera.kernels.vector_add[(1,)](x, x, out, 1000, BLOCK=1024, backend="hip"))
print(json.dumps({"result": result, "out_unchanged": bool((out == 7).all())}))
"""

# Autotuned over BLOCK 128, 1024 and 256 (8, 1 and 4 programs at n = 1000) on ARGS; prints the choice and times.
AUTOTUNED_VECTOR_ADD = """
add = tessera.autotune(configs=[tessera.Config({"BLOCK": b}) for b in (128, 1024, 256)], key=["n"],
                       cache_dir=CACHE, progress=False)(tessera.kernels.vector_add)
add[lambda meta: (tessera.cdiv(1000, meta["BLOCK"]),)](ARGS)
report = add.last_report
print(json.dumps({"best": add.best_config.kwargs, "ms": [o["ms"] for o in report["outcomes"]],
                  "source": report["source"]}))
"""


def run_on_fake_hip(tmp_path, body, **env):
    """Runs PRELUDE + body on the recording runtime (a gfx90a); returns what it printed (JSON) and the runtime's
    log, one dict per call."""
    log = tmp_path / "hip.log"
    env = {**os.environ, "TESSERA_LIBCUDA": "/nonexistent/libcuda.so.1", "TESSERA_LIBAMDHIP": FAKE_LIBAMDHIP,
           "TESSERA_HIP_ARCH": "gfx90a", "TESSERA_FAKE_HIP_LOG": str(log), "TESSERA_CACHE_DIR": str(tmp_path / "cache"),
           **env}
    run = subprocess.run([sys.executable, "-c", PRELUDE + body], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return json.loads(run.stdout), calls


def calls_to(calls, name):
    return [c for c in calls if c["call"] == name]


def pointer_params(launch, count):
    return [struct.unpack("<Q", bytes.fromhex(p))[0] for p in launch["params"][:count]]


def test_a_hip_launch_on_host_arrays_copies_them_and_passes_their_device_addresses(tmp_path):
    printed, calls = run_on_fake_hip(tmp_path, VECTOR_ADD_ON_HOST_ARRAYS)
    # Copied back from a device buffer the (recording) kernel never wrote.
    assert printed == {"result": "ok", "out_unchanged": True}
    allocs = calls_to(calls, "hipMalloc")
    assert [c["bytes"] for c in allocs] == [4000, 4000, 4000]  # x, y (the same array, staged twice) and out
    [load] = calls_to(calls, "hipModuleLoadData")
    assert load["result"] == 0  # the code object was for the device's arch
    [launch] = calls_to(calls, "hipModuleLaunchKernel")
    assert (launch["kernel"], launch["grid"], launch["block"], launch["shared"]) == ("vector_add", [1, 1, 1],
                                                                                      [256, 1, 1], 0)
    assert pointer_params(launch, 3) == [c["address"] for c in allocs]
    assert struct.unpack("<i", bytes.fromhex(launch["params"][3])) == (1000,)
    assert len(launch["params"]) == 4  # the code object's hidden arguments are the runtime's


def test_hip_failures_name_the_runtime_error_and_the_kernel(tmp_path):
    printed, calls = run_on_fake_hip(tmp_path, VECTOR_ADD_ON_HOST_ARRAYS, TESSERA_FAKE_HIP_FAIL="hipModuleLaunchKernel")
    assert ("hipModuleLaunchKernel failed for kernel 'vector_add': hipErrorLaunchOutOfResources (too many resources "
            "requested for launch)") in printed["result"]
    printed, _ = run_on_fake_hip(tmp_path, VECTOR_ADD_ON_HOST_ARRAYS, TESSERA_HIP_ARCH="gfx942")  # refused by a gfx90a
    assert "hipModuleLoadData failed for kernel 'vector_add': hipErrorNoBinaryForGpu" in printed["result"]


def test_a_hip_launch_that_never_finishes_is_reported_after_the_time_limit(tmp_path):
    printed, _ = run_on_fake_hip(tmp_path, VECTOR_ADD_ON_HOST_ARRAYS, TESSERA_FAKE_HIP_HANG="vector_add",
                                 TESSERA_GPU_TIMEOUT="0.2")
    assert "kernel 'vector_add' has not finished after 0.2 s (TESSERA_GPU_TIMEOUT)" in printed["result"], printed
    # With no limit, the runtime's own wait answers (the recording runtime's fails; a GPU's would never return).
    printed, _ = run_on_fake_hip(tmp_path, VECTOR_ADD_ON_HOST_ARRAYS, TESSERA_FAKE_HIP_HANG="vector_add")
    assert "hipStreamSynchronize failed for kernel 'vector_add': hipErrorLaunchTimeOut" in printed["result"], printed


def test_rocm_arrays_launch_on_hip_in_place_by_default(tmp_path):
    printed, calls = run_on_fake_hip(tmp_path, """
tessera.kernels.vector_add[(1,)](RocmArray(x), RocmArray(x), RocmArray(out), 1000, BLOCK=1024)
print(json.dumps({"addresses": [x.ctypes.data, out.ctypes.data]}))
""")
    assert calls_to(calls, "hipMalloc") == []  # nothing staged
    [launch] = calls_to(calls, "hipModuleLaunchKernel")
    x_address, out_address = printed["addresses"]
    assert pointer_params(launch, 3) == [x_address, x_address, out_address]
    assert (launch["grid"], launch["block"], launch["stream"]) == ([1, 1, 1], [256, 1, 1], 0)


def test_rocm_arrays_are_refused_where_they_cannot_go(tmp_path):
    printed, calls = run_on_fake_hip(tmp_path, """
add = tessera.kernels.vector_add
rx, rout = RocmArray(x), RocmArray(out)
print(json.dumps({
    "other device": attempt(lambda: add[(1,)](RocmArray(x, 1), RocmArray(x, 1), RocmArray(out, 1), 1000, BLOCK=1024)),
    "mixed": attempt(lambda: add[(1,)](rx, x, rout, 1000, BLOCK=1024, backend="hip")),
    "cuda": attempt(lambda: add[(1,)](rx, rx, rout, 1000, BLOCK=1024, backend="cuda")),
    "interpreter": attempt(lambda: add[(1,)](rx, rx, rout, 1000, BLOCK=1024, backend="interpreter")),
}))
""")
    assert printed["other device"] == ("ValueError: argument 'x' is on rocm:1 but Tessera launches on rocm:0 (HIP "
                                       "launches use the current device, 0)")
    assert printed["mixed"].startswith("TypeError: argument 'y' is a numpy (host) array but argument 'x' is a GPU "
                                       "array"), printed
    assert printed["cuda"].startswith("TypeError: argument 'x' must be a GPU array (__cuda_array_interface__ or "
                                      "DLPack on a CUDA device)"), printed
    assert "argument 'x' is a GPU array (DLPack device rocm:0); GPU launches need the HIP JIT (backend='hip')" in \
        printed["interpreter"], printed
    assert calls_to(calls, "hipModuleLaunchKernel") == []


def test_autotuning_on_hip_host_arrays_times_each_config_on_one_copy_and_launches_the_fastest(tmp_path):
    """The recording runtime's device takes 10 ms per program: 8, 1 and 4 programs for BLOCK 128, 1024, 256."""
    body = AUTOTUNED_VECTOR_ADD.replace("CACHE", repr(str(tmp_path / "tuning"))).replace(
        "ARGS", 'x, x, out, 1000, backend="hip"')
    printed, calls = run_on_fake_hip(tmp_path, body)
    assert printed == {"best": {"BLOCK": 1024}, "ms": [80.0, 10.0, 40.0], "source": "benchmarked"}
    # Each config's arrays are copied in once (3 buffers), then the final launch stages its own: 12 in all.
    assert len([c for c in calls_to(calls, "hipMalloc") if c["bytes"] == 4000]) == 12
    assert any(c["bytes"] == 256 << 20 for c in calls_to(calls, "hipMemset"))  # the L2 flush
    assert calls_to(calls, "hipModuleLaunchKernel")[-1]["grid"] == [1, 1, 1]  # the winner
    # A second process finds the winner in the tuning cache: no timing.
    printed, _ = run_on_fake_hip(tmp_path, body)
    assert printed["source"] == "cached"


def test_autotuning_on_rocm_arrays_times_the_launches_alone(tmp_path):
    body = AUTOTUNED_VECTOR_ADD.replace("CACHE", repr(str(tmp_path / "tuning"))).replace(
        "ARGS", "RocmArray(x), RocmArray(x), RocmArray(out), 1000")
    printed, calls = run_on_fake_hip(tmp_path, body)
    assert printed == {"best": {"BLOCK": 1024}, "ms": [80.0, 10.0, 40.0], "source": "benchmarked"}
    assert [c["bytes"] for c in calls_to(calls, "hipMalloc")] == [256 << 20]  # the flush buffer alone
