#!/usr/bin/env bash
# Step 2 of the GPU flow, on the GPU machine: unpacks .gpu-bundle/bundle.tar.xz (made by build_bundle.sh) and runs,
# most wanted first, within one time budget (a lent GPU's call is at most 600 s, and may be the only one):
#   1. the Python extension _C, compiled against the machine's python3 and pybind11 (one job per source);
#   2. tessera-gpu-check (tools/): every tutorial kernel and op case of tests/gpucheck/ against the reference
#      interpreter, one table row each;
#   3. benchmarks/bench_tutorials.py (--quick unless TESSERA_BENCH_ARGS says otherwise): Tessera against torch
#      (cuBLAS) and Triton, matmul and attention first, with --time-budget so that it reports what it measured;
#   4. the Python tutorials under compute-sanitizer (memcheck, racecheck) and Nsight Compute's speed-of-light and
#      occupancy sections for the matmul and softmax kernels;
#   5. the pytest files that launch on the GPU (test_gpu.py compares tessera launches on torch tensors with torch);
#   6. every GPU test binary.
# Each step gets at most its own seconds and what is left of TESSERA_GPU_SECONDS (default 540); a step that would
# start with under 20 s left is not run, and the summary names it. Full logs, the benchmark's CSV and plots, and the
# summary go to TESSERA_GPU_OUT (default: $OUT, the device tool's returned folder; else a temporary folder); the
# output ends with the benchmark table and the summary. Exit status 0 when everything that ran passed.
#
#   scripts/gpu/run_on_gpu.sh [bundle.tar.xz]     (default: .gpu-bundle/bundle.tar.xz of this checkout)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${1:-$root/.gpu-bundle/bundle.tar.xz}
[ -f "$bundle" ] || { echo "run_on_gpu: no bundle at $bundle (run scripts/gpu/build_bundle.sh first)" >&2; exit 2; }
deadline=$((SECONDS + ${TESSERA_GPU_SECONDS:-540}))
out=${TESSERA_GPU_OUT:-${OUT:-}}
[ -n "$out" ] || out=$(mktemp -d /tmp/tessera-gpu-out.XXXXXX)
mkdir -p "$out"
work=$(mktemp -d /tmp/tessera-gpu.XXXXXX)
xz -dc "$bundle" | tar -C "$work" -xf -
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TESSERA_CACHE_DIR=off
py=$work/python
header="tessera GPU run: revision $(cat "$work/REVISION"), \
$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'nvidia-smi unavailable')"
echo "== $header" | tee "$out/summary.txt"
echo "   logs: $out"

status=0
summary=()
note() { summary+=("$(printf '%-30s %s' "$1" "$2")"); }

# step LABEL SECONDS COMMAND...: runs COMMAND in the bundle's python/ folder for at most SECONDS (and what is left
# of the budget), its output in $out/LABEL.log (other characters than letters, digits, '.', '_' and '-' as '_': the
# device tool returns no file with an odd name), the last lines of it here; notes the outcome. Sets
# step_rc (-1: not run).
step() {
  local label=$1 cap=$2; shift 2
  local left=$((deadline - SECONDS)) log="$out/${label//[^A-Za-z0-9._-]/_}.log"
  step_rc=-1
  if [ $left -lt 20 ]; then
    note "$label" "NOT run: the time budget is spent"
    return
  fi
  local limit=$((left < cap ? left : cap))
  echo
  echo "== $label (at most $limit s)"
  (cd "$here" && timeout --kill-after=15 "$limit" "$@") >"$log" 2>&1; step_rc=$?
  tail -n 12 "$log"
  case $step_rc in
    0) note "$label" "passed" ;;
    124|137) note "$label" "stopped by its time limit ($limit s)"; status=1 ;;
    *) note "$label" "FAILED (exit $step_rc; $log)"; status=1 ;;
  esac
}

here=$work
[ -d "$py" ] && here=$py
in_python=(env PYTHONPATH="$py" PYTHONDONTWRITEBYTECODE=1 TESSERA_CACHE_DIR="$work/cache")

# 1. _C: one compile job per source, then the link.
build_c() {
  local includes ext objs=()
  includes=$(python3 -m pybind11 --includes) || { echo "python3 has no pybind11"; return 1; }
  ext=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  local pids=()
  for src in "$py"/python/src/*.cpp; do
    objs+=("${src%.cpp}.o")
    # shellcheck disable=SC2086  # the includes are several flags
    ${CXX:-c++} -O2 -std=c++20 -fPIC -fvisibility=hidden $includes -I"$py" -I"$py/frontend" -I"$py/python/include" \
      -c "$src" -o "${src%.cpp}.o" &
    pids+=($!)
  done
  local failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  [ "$failed" -eq 0 ] || return 1
  ${CXX:-c++} -shared "${objs[@]}" -L"$py/tessera" -ltessera -Wl,-rpath,'$ORIGIN' -o "$py/tessera/_C$ext"
}
have_c=0
if [ -d "$py" ]; then
  export -f build_c
  export py
  step "python _C" 240 bash -c build_c
  [ $step_rc -eq 0 ] && have_c=1
else
  note "python _C" "not in this bundle"
fi

# 2. The kernels against the reference interpreter.
step "tessera-gpu-check" 180 "$work/bin/tessera-gpu-check"

# 3. The benchmarks: they need torch and the package with its _C (the bundle's, or TESSERA_BENCH_PYTHONPATH).
bench_path=${TESSERA_BENCH_PYTHONPATH:-$py}
bench_script=$root/benchmarks/bench_tutorials.py
[ -f "$bench_script" ] || bench_script=$py/src/benchmarks/bench_tutorials.py
bench_log=""
if compgen -G "$bench_path/tessera/_C*.so" >/dev/null && [ -f "$bench_script" ]; then
  bench_seconds=${TESSERA_BENCH_SECONDS:-300}
  left=$((deadline - SECONDS - 20))
  [ $left -lt "$bench_seconds" ] && bench_seconds=$left
  # No size starts in the last minute of its time; SIGTERM at the end still prints what was measured.
  budget=$((bench_seconds > 90 ? bench_seconds - 60 : 30))
  status_before=$status
  # shellcheck disable=SC2086  # the arguments are meant to split
  step "bench_tutorials" "$bench_seconds" env PYTHONPATH="$bench_path" python3 "$bench_script" \
    ${TESSERA_BENCH_ARGS---quick} --time-budget "$budget" --csv "$out/bench.csv" --results "$out/bench"
  # 2: no torch or no GPU, said in the log; not a failure of Tessera's.
  if [ $step_rc -eq 2 ]; then
    status=$status_before
    summary[-1]="$(printf '%-30s %s' bench_tutorials "no torch or no GPU (see its log)")"
  fi
  bench_log=$out/bench_tutorials.log
else
  note "bench_tutorials" "skipped: no built tessera package in $bench_path"
fi

# 4. compute-sanitizer and ncu on the Python tutorials, most wanted first. A finding fails the run.
if [ "${TESSERA_GPU_TOOLS:-1}" != 0 ] && [ $have_c -eq 1 ]; then
  sanitizer=$(command -v compute-sanitizer || true)
  ncu=$(command -v ncu || true)
  [ -n "$sanitizer" ] || note compute-sanitizer "not installed"
  [ -n "$ncu" ] || note ncu "not installed"
  tool_seconds=${TESSERA_GPU_TOOL_SECONDS:-90}
  for t in 04_matmul 05_attention 02_softmax 03_layernorm 01_vector_add 06_dropout; do
    for tool in memcheck racecheck; do
      [ -z "$sanitizer" ] || step "$tool $t" "$tool_seconds" "${in_python[@]}" "$sanitizer" --tool "$tool" \
        --error-exitcode 3 --print-limit 20 python3 "tutorials/$t.py" --backend cuda
    done
    if [ -n "$ncu" ] && { [ $t = 04_matmul ] || [ $t = 02_softmax ]; }; then
      step "ncu $t" "$tool_seconds" "${in_python[@]}" "$ncu" --section SpeedOfLight --section Occupancy --launch-count 6 \
        --kernel-name "regex:softmax|matmul" python3 "tutorials/$t.py" --backend cuda
    fi
  done
fi

# 5. The pytest files that launch on the GPU (the rest run in CI, on the CPU).
if [ $have_c -eq 1 ]; then
  step "pytest (GPU files)" 180 "${in_python[@]}" python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_gpu.py \
    tests/python/test_aot.py tests/python/test_jit.py tests/python/test_testing.py
fi

# 6. The GPU test binaries.
for bin in "$work"/bin/*_test; do
  step "$(basename "$bin")" 150 "$bin" --gtest_color=no --gtest_brief=1
done

echo
if [ -n "$bench_log" ] && grep -q '^Tessera tutorial benchmarks' "$bench_log" 2>/dev/null; then
  echo "== the benchmark table (all of it: $bench_log, $out/bench.csv)"
  sed -n '/^Tessera tutorial benchmarks/,$p' "$bench_log" | grep -v '^bench_tutorials: ' | head -n 90
fi
echo
echo "== summary ($((SECONDS)) s)"
printf '%s\n' "${summary[@]}" | tee -a "$out/summary.txt"
rm -rf "$work"
exit $status
