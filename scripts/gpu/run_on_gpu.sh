#!/usr/bin/env bash
# Step 2 of the GPU flow, on the GPU machine: unpacks .gpu-bundle/bundle.tar.xz (made by build_bundle.sh) and
# runs every GPU test binary and tessera-gpu-check (tools/, over the cases of tests/gpucheck/), which compares
# every tutorial kernel and op case against the reference interpreter on random inputs and prints a table; then
# compiles the Python extension _C against the machine's python3 and pybind11 and runs the pytest suite
# (tests/python/test_gpu.py compares tessera launches on torch tensors with torch), the benchmarks, and the Python
# tutorials under compute-sanitizer and ncu. Exit status 0 when everything passed.
#
#   scripts/gpu/run_on_gpu.sh [bundle.tar.xz]     (default: .gpu-bundle/bundle.tar.xz of this checkout)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${1:-$root/.gpu-bundle/bundle.tar.xz}
[ -f "$bundle" ] || { echo "run_on_gpu: no bundle at $bundle (run scripts/gpu/build_bundle.sh first)" >&2; exit 2; }
work=$(mktemp -d /tmp/tessera-gpu.XXXXXX)
xz -dc "$bundle" | tar -C "$work" -xf -
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TESSERA_CACHE_DIR=off
echo "== tessera GPU run: revision $(cat "$work/REVISION"), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'nvidia-smi unavailable')"

status=0
summary=()
for bin in "$work"/bin/*_test; do
  name=$(basename "$bin")
  echo
  echo "== $name"
  out=$("$bin" --gtest_color=no 2>&1); rc=$?
  echo "$out" | grep -E '^\[  FAILED  \] [A-Za-z_0-9/.]+ \(' | head -40
  echo "$out" | grep -A1 -E ': Skipped$' | grep -vE ': Skipped$|^--$' | sort | uniq -c | head -5
  passed=$(echo "$out" | grep -cE '^\[       OK \]')
  failed=$(echo "$out" | grep -cE '^\[  FAILED  \] [A-Za-z_0-9/.]+ \(')
  skipped=$(echo "$out" | grep -cE '^\[  SKIPPED \] [A-Za-z_0-9/.]+ \(')
  [ $rc -eq 0 ] || status=1
  summary+=("$(printf '%-28s %5s passed %5s failed %5s skipped  (exit %d)' "$name" "$passed" "$failed" "$skipped" "$rc")")
done

echo
echo "== tessera-gpu-check (GPU vs reference interpreter)"
"$work/bin/tessera-gpu-check"; rc=$?
[ $rc -eq 0 ] || status=1
summary+=("$(printf '%-28s exit %d' tessera-gpu-check "$rc")")

echo
echo "== python: build _C, run the pytest suite (GPU tests compare with torch)"
py=$work/python
if [ ! -d "$py" ]; then
  summary+=("$(printf '%-28s not in this bundle' python)")
elif ! pybind_includes=$(python3 -m pybind11 --includes 2>&1); then
  echo "$pybind_includes"
  status=1
  summary+=("$(printf '%-28s python3 has no pybind11' python)")
else
  ext=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  # shellcheck disable=SC2086  # the includes are several flags
  if ${CXX:-c++} -O2 -std=c++20 -shared -fPIC -fvisibility=hidden $pybind_includes -I"$py" -I"$py/frontend" \
      -I"$py/python/include" "$py"/python/src/*.cpp -L"$py/tessera" -ltessera -Wl,-rpath,'$ORIGIN' \
      -o "$py/tessera/_C$ext"; then
    (cd "$py" && PYTHONPATH="$py" PYTHONDONTWRITEBYTECODE=1 TESSERA_CACHE_DIR="$work/cache" \
      python3 -m pytest -q -rs -p no:cacheprovider tests/python); rc=$?
    [ $rc -eq 0 ] || status=1
    summary+=("$(printf '%-28s pytest exit %d' python "$rc")")
  else
    status=1
    summary+=("$(printf '%-28s _C failed to compile' python)")
  fi
fi

# Benchmarks (benchmarks/bench_tutorials.py, see benchmarks/README.md): they need torch and a tessera package with
# its _C built, in the bundle's python/ or in TESSERA_BENCH_PYTHONPATH. TESSERA_BENCH_ARGS: their arguments
# (default --quick; set it empty for the full sweep).
bench_path=${TESSERA_BENCH_PYTHONPATH:-$work/python}
bench_script=$root/benchmarks/bench_tutorials.py
[ -f "$bench_script" ] || bench_script=$work/python/src/benchmarks/bench_tutorials.py
if compgen -G "$bench_path/tessera/_C*.so" >/dev/null && [ -f "$bench_script" ]; then
  echo
  echo "== benchmarks/bench_tutorials.py ${TESSERA_BENCH_ARGS---quick}"
  # shellcheck disable=SC2086  # the arguments are meant to split
  PYTHONPATH="$bench_path" python3 "$bench_script" ${TESSERA_BENCH_ARGS---quick}; rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 2 ] || status=1  # 2: no torch or no GPU, said above; not a failure of Tessera's
  summary+=("$(printf '%-28s exit %d' bench_tutorials "$rc")")
else
  summary+=("$(printf '%-28s skipped: no built tessera package in %s' bench_tutorials "$bench_path")")
fi

# The Python tutorials under compute-sanitizer (memcheck, racecheck) and Nsight Compute's speed-of-light sections
# for the matmul and softmax kernels, most wanted first, within TESSERA_GPU_TOOLS_BUDGET seconds in all (default
# 300: device time is scarce) and TESSERA_GPU_TOOL_SECONDS each (default 120); what the budget leaves out is named
# in the summary. Skipped where a tool is missing; TESSERA_GPU_TOOLS=0 skips the stage. A tool's finding fails
# the run; a run stopped by its time limit is reported, not failed.
tool_seconds=${TESSERA_GPU_TOOL_SECONDS:-120}
tools_deadline=$((SECONDS + ${TESSERA_GPU_TOOLS_BUDGET:-300}))
run_tool() {  # run_tool LABEL COMMAND...: runs it on the bundle's package, records the outcome
  local label=$1; shift
  local left=$((tools_deadline - SECONDS))
  if [ $left -lt 30 ]; then
    summary+=("$(printf '%-28s NOT run: the tools budget is spent' "$label")")
    return
  fi
  echo
  echo "== $label"
  (cd "$work/python" && PYTHONPATH="$work/python" PYTHONDONTWRITEBYTECODE=1 TESSERA_CACHE_DIR="$work/cache" \
    timeout $((left < tool_seconds ? left : tool_seconds)) "$@"); local rc=$?
  if [ $rc -eq 124 ]; then
    summary+=("$(printf '%-28s stopped by its time limit' "$label")")
  else
    [ $rc -eq 0 ] || status=1
    summary+=("$(printf '%-28s exit %d' "$label" "$rc")")
  fi
}
if [ "${TESSERA_GPU_TOOLS:-1}" != 0 ] && compgen -G "$work/python/tessera/_C*.so" >/dev/null; then
  sanitizer=$(command -v compute-sanitizer || true)
  ncu=$(command -v ncu || true)
  [ -n "$sanitizer" ] || summary+=("$(printf '%-28s not installed' compute-sanitizer)")
  [ -n "$ncu" ] || summary+=("$(printf '%-28s not installed' ncu)")
  for t in 04_matmul 02_softmax 05_attention 03_layernorm 01_vector_add; do
    for tool in memcheck racecheck; do
      [ -z "$sanitizer" ] || run_tool "$tool $t" "$sanitizer" --tool "$tool" --error-exitcode 3 --print-limit 20 \
        python3 "tutorials/$t.py" --backend cuda
    done
    if [ -n "$ncu" ] && { [ $t = 04_matmul ] || [ $t = 02_softmax ]; }; then
      run_tool "ncu $t" "$ncu" --section SpeedOfLight --section Occupancy --launch-count 6 \
        --kernel-name "regex:softmax|matmul" python3 "tutorials/$t.py" --backend cuda
    fi
  done
fi

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
rm -rf "$work"
exit $status
