"""Python's HIP launch path (backend="hip") on the recording HIP runtime of tests/fake_hip, which runs nothing but
logs each call and checks launches against the code object's metadata: host arrays are copied to device memory and
back, the kernel gets their device addresses and its scalars byte for byte, and a launch that never finishes is
reported after TESSERA_GPU_TIMEOUT seconds, as on CUDA."""

import json
import os
import struct
import subprocess
import sys

import pytest

FAKE_LIBAMDHIP = os.environ.get("TESSERA_FAKE_LIBAMDHIP", "")
pytestmark = pytest.mark.skipif(not os.path.exists(FAKE_LIBAMDHIP),
                                reason="TESSERA_FAKE_LIBAMDHIP names no recording HIP runtime (ctest sets it)")

VECTOR_ADD = """
import json, numpy as np, tessera
x = np.arange(1000, dtype=np.float32)
out = np.full(1000, 7, np.float32)
try:
    tessera.kernels.vector_add[(1,)](x, x, out, 1000, BLOCK=1024, backend="hip")
    print(json.dumps({"out_unchanged": bool((out == 7).all())}))
except Exception as e:
    print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
"""


def run_on_fake_hip(tmp_path, **env):
    """Runs VECTOR_ADD on the recording runtime (a gfx90a); returns what it printed and the runtime's log."""
    log = tmp_path / "hip.log"
    env = {**os.environ, "TESSERA_LIBCUDA": "/nonexistent/libcuda.so.1", "TESSERA_LIBAMDHIP": FAKE_LIBAMDHIP,
           "TESSERA_HIP_ARCH": "gfx90a", "TESSERA_FAKE_HIP_LOG": str(log), "TESSERA_CACHE_DIR": str(tmp_path / "cache"),
           **env}
    run = subprocess.run([sys.executable, "-c", VECTOR_ADD], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return json.loads(run.stdout), calls


def test_a_hip_launch_on_host_arrays_copies_them_and_passes_their_device_addresses(tmp_path):
    printed, calls = run_on_fake_hip(tmp_path)
    assert printed == {"out_unchanged": True}  # copied back from a device buffer the (recording) kernel never wrote
    allocs = [c for c in calls if c["call"] == "hipMalloc"]
    assert [c["bytes"] for c in allocs] == [4000, 4000, 4000]  # x, y (the same array, staged twice) and out
    [load] = [c for c in calls if c["call"] == "hipModuleLoadData"]
    assert load["result"] == 0  # the code object was for the device's arch
    [launch] = [c for c in calls if c["call"] == "hipModuleLaunchKernel"]
    assert (launch["kernel"], launch["grid"], launch["block"], launch["shared"]) == ("vector_add", [1, 1, 1],
                                                                                      [256, 1, 1], 0)
    pointers = [struct.unpack("<Q", bytes.fromhex(p))[0] for p in launch["params"][:3]]
    assert pointers == [c["address"] for c in allocs]
    assert struct.unpack("<i", bytes.fromhex(launch["params"][3])) == (1000,)
    assert len(launch["params"]) == 4  # the code object's hidden arguments are the runtime's


def test_hip_failures_name_the_runtime_error_and_the_kernel(tmp_path):
    printed, calls = run_on_fake_hip(tmp_path, TESSERA_FAKE_HIP_FAIL="hipModuleLaunchKernel")
    assert ("hipModuleLaunchKernel failed for kernel 'vector_add': hipErrorLaunchOutOfResources (too many resources "
            "requested for launch)") in printed["error"]
    printed, _ = run_on_fake_hip(tmp_path, TESSERA_HIP_ARCH="gfx942")  # a code object the gfx90a refuses
    assert "hipModuleLoadData failed for kernel 'vector_add': hipErrorNoBinaryForGpu" in printed["error"]


def test_a_hip_launch_that_never_finishes_is_reported_after_the_time_limit(tmp_path):
    printed, _ = run_on_fake_hip(tmp_path, TESSERA_FAKE_HIP_HANG="vector_add", TESSERA_GPU_TIMEOUT="0.2")
    assert "kernel 'vector_add' has not finished after 0.2 s (TESSERA_GPU_TIMEOUT)" in printed["error"], printed
    # With no limit, the runtime's own wait answers (the recording runtime's fails; a GPU's would never return).
    printed, _ = run_on_fake_hip(tmp_path, TESSERA_FAKE_HIP_HANG="vector_add")
    assert "hipStreamSynchronize failed for kernel 'vector_add': hipErrorLaunchTimeOut" in printed["error"], printed


AUTOTUNED_VECTOR_ADD = """
import json, numpy as np, tessera
x = np.arange(1000, dtype=np.float32)
out = np.full(1000, 7, np.float32)
add = tessera.autotune(configs=[tessera.Config({"BLOCK": b}) for b in (128, 1024, 256)], key=["n"],
                       cache_dir=CACHE, progress=False)(tessera.kernels.vector_add)
add[lambda meta: (tessera.cdiv(1000, meta["BLOCK"]),)](x, x, out, 1000, backend="hip")
report = add.last_report
print(json.dumps({"best": add.best_config.kwargs, "ms": [o["ms"] for o in report["outcomes"]],
                  "source": report["source"]}))
"""


def test_autotuning_on_hip_times_each_config_with_hip_events_and_launches_the_fastest(tmp_path):
    """The recording runtime's device takes 10 ms per program: 8, 1 and 4 programs for BLOCK 128, 1024, 256."""
    log = tmp_path / "hip.log"
    env = {**os.environ, "TESSERA_LIBCUDA": "/nonexistent/libcuda.so.1", "TESSERA_LIBAMDHIP": FAKE_LIBAMDHIP,
           "TESSERA_HIP_ARCH": "gfx90a", "TESSERA_FAKE_HIP_LOG": str(log), "TESSERA_CACHE_DIR": str(tmp_path / "cache")}
    script = AUTOTUNED_VECTOR_ADD.replace("CACHE", repr(str(tmp_path / "tuning")))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"best": {"BLOCK": 1024}, "ms": [80.0, 10.0, 40.0], "source": "benchmarked"}
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    # Each config's arrays are copied in once (3 buffers), then the final launch stages its own: 12 in all.
    assert len([c for c in calls if c["call"] == "hipMalloc" and c["bytes"] == 4000]) == 12
    assert any(c["call"] == "hipMemset" and c["bytes"] == 256 << 20 for c in calls)  # the L2 flush
    assert [c for c in calls if c["call"] == "hipModuleLaunchKernel"][-1]["grid"] == [1, 1, 1]  # the winner
    # A second process finds the winner in the tuning cache: no timing.
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["source"] == "cached"
