#!/usr/bin/env bash
# Step 2 of the GPU flow, on the GPU machine: unpacks .gpu-bundle/bundle.tar.xz (made by build_bundle.sh) and runs,
# most wanted first, within one time budget (a session's device time is 15 minutes, machine starts included, so
# one call should leave room to start a second one for what the first left out):
#   check      tessera-gpu-check (tools/): every tutorial kernel and op case of tests/gpucheck/ against the
#              reference interpreter, one table row each; alongside it, the Python extension _C, compiled against
#              the machine's python3 and pybind11 (one job per source), which every later step but `tests` needs;
#   bench      benchmarks/bench_tutorials.py (--quick unless TESSERA_BENCH_ARGS says otherwise): Tessera against
#              torch (cuBLAS) and Triton, matmul and attention first, with --time-budget so that it reports what it
#              measured; alone on the machine, so that nothing else runs while it times;
#   sanitizers the Python tutorials under compute-sanitizer, memcheck and racecheck;
#   pytest     the pytest files that launch on the GPU (test_gpu.py compares tessera launches with torch's);
#   tests      every GPU test binary;
#              (these three check correctness and time nothing, so all their runs go at once, unless
#              TESSERA_GPU_ONE_AT_A_TIME=1)
#   ncu        Nsight Compute's speed-of-light and occupancy sections for the matmul and softmax kernels, alone.
# TESSERA_GPU_STEPS picks some of them (a comma-separated list, default all, in this order). Each step gets at most
# its own seconds and what is left of TESSERA_GPU_SECONDS (default 420); a step that would start with under 20 s
# left is not run, and the summary names it.
# What comes back (TESSERA_GPU_OUT, default $OUT, the device tool's returned folder; else a temporary folder) is
# four files, since the device tool returns at most eight: summary.txt (a line per step, written as each ends),
# bench.csv (rewritten after every size), bench.md (the benchmark table for tutorials/README.md) and logs.tar.gz
# (every step's log, and the benchmark's per-tutorial CSV, Markdown and plots). The output ends with the benchmark
# table and the summary. Exit status 0 when everything that ran passed; 2 for a bad TESSERA_GPU_STEPS or no bundle.
#
#   scripts/gpu/run_on_gpu.sh [bundle.tar.xz]     (default: .gpu-bundle/bundle.tar.xz of this checkout)
#   TESSERA_GPU_STEPS=sanitizers,pytest,tests,ncu scripts/gpu/run_on_gpu.sh     (a second call: what the first left)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${1:-$root/.gpu-bundle/bundle.tar.xz}
[ -f "$bundle" ] || { echo "run_on_gpu: no bundle at $bundle (run scripts/gpu/build_bundle.sh first)" >&2; exit 2; }
all_steps="check,bench,sanitizers,pytest,tests,ncu"
steps=${TESSERA_GPU_STEPS:-$all_steps}
for s in ${steps//,/ }; do
  [[ ",$all_steps," == *",$s,"* ]] || {
    echo "run_on_gpu: unknown step '$s' in TESSERA_GPU_STEPS (the steps: $all_steps)" >&2; exit 2; }
done
wants() { [[ ",$steps," == *",$1,"* ]]; }
deadline=$((SECONDS + ${TESSERA_GPU_SECONDS:-420}))
out=${TESSERA_GPU_OUT:-${OUT:-}}
[ -n "$out" ] || out=$(mktemp -d /tmp/tessera-gpu-out.XXXXXX)
logs=$out/logs  # packed into logs.tar.gz at the end; a call cut off from outside returns some of them as they are
mkdir -p "$logs"
work=$(mktemp -d /tmp/tessera-gpu.XXXXXX)
xz -dc "$bundle" | tar -C "$work" -xf -
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TESSERA_CACHE_DIR=off
# A launch that has not finished after this many seconds is reported with its kernel's name where Tessera waits
# for it (CudaDriver::synchronize), rather than hanging its step until the step's time limit.
export TESSERA_GPU_TIMEOUT=${TESSERA_GPU_TIMEOUT:-60}
py=$work/python
header="tessera GPU run: revision $(cat "$work/REVISION"), \
$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'nvidia-smi unavailable')"
echo "== $header (steps: $steps)" | tee "$out/summary.txt"
echo "   logs: $out"

status=0
summary=()
note() {
  summary+=("$(printf '%-30s %s' "$1" "$2")")
  echo "${summary[-1]}" >>"$out/summary.txt"
}

# begin LABEL SECONDS COMMAND...: starts COMMAND in the background, in the bundle's python/ folder, for at most
# SECONDS (and what is left of the budget), its output in $logs/LABEL.log (other characters than letters, digits,
# '.', '_' and '-' as '_': the device tool returns no file with an odd name). finish LABEL [CODE=TEXT] waits for
# it, shows the last lines of its log and notes the outcome, setting step_rc (-1: not run); exit status CODE is
# noted as TEXT and is no failure. step is the two in a row, with no CODE=TEXT.
declare -A step_pid step_log step_limit
begin() {
  local label=$1 cap=$2; shift 2
  local left=$((deadline - SECONDS))
  step_pid[$label]=""
  if [ $left -lt 20 ]; then
    note "$label" "NOT run: the time budget is spent"
    return
  fi
  step_limit[$label]=$((left < cap ? left : cap))
  step_log[$label]="$logs/${label//[^A-Za-z0-9._-]/_}.log"
  (cd "$here" && exec timeout --kill-after=15 "${step_limit[$label]}" "$@") >"${step_log[$label]}" 2>&1 &
  step_pid[$label]=$!
}
finish() {
  local label=$1 accepted=${2:-}
  step_rc=-1
  [ -n "${step_pid[$label]}" ] || return
  wait "${step_pid[$label]}"; step_rc=$?
  echo
  echo "== $label (at most ${step_limit[$label]} s; exit $step_rc)"
  tail -n 12 "${step_log[$label]}"
  if [ -n "$accepted" ] && [ "$step_rc" = "${accepted%%=*}" ]; then
    note "$label" "${accepted#*=}"
    return
  fi
  case $step_rc in
    0) note "$label" "passed" ;;
    124|137) note "$label" "stopped by its time limit (${step_limit[$label]} s)"; status=1 ;;
    *) note "$label" "FAILED (exit $step_rc; logs.tar.gz: $(basename "${step_log[$label]}"))"; status=1 ;;
  esac
}
step() { begin "$@"; finish "$1"; }

here=$work
[ -d "$py" ] && here=$py
in_python=(env PYTHONPATH="$py" PYTHONDONTWRITEBYTECODE=1 TESSERA_CACHE_DIR="$work/cache")

# _C: one compile job per source, then the link.
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

# 1. The kernels against the reference interpreter, while _C compiles (on the CPU) beside them.
have_c=0
needs_c=0
for s in bench sanitizers pytest ncu; do wants $s && needs_c=1; done
if [ $needs_c -eq 1 ] && [ -d "$py" ]; then
  export -f build_c
  export py
  begin "python _C" 240 bash -c build_c
fi
wants check && begin "tessera-gpu-check" 180 "$work/bin/tessera-gpu-check"
if [ $needs_c -eq 1 ]; then
  if [ -d "$py" ]; then
    finish "python _C"
    [ $step_rc -eq 0 ] && have_c=1
  else
    note "python _C" "not in this bundle"
  fi
fi
wants check && finish "tessera-gpu-check"

# 2. The benchmarks: they need torch and the package with its _C (the bundle's, or TESSERA_BENCH_PYTHONPATH).
bench_path=${TESSERA_BENCH_PYTHONPATH:-$py}
bench_script=$root/benchmarks/bench_tutorials.py
[ -f "$bench_script" ] || bench_script=$py/benchmarks/bench_tutorials.py
if ! wants bench; then
  :
elif compgen -G "$bench_path/tessera/_C*.so" >/dev/null && [ -f "$bench_script" ]; then
  bench_seconds=${TESSERA_BENCH_SECONDS:-240}
  left=$((deadline - SECONDS - 20))
  [ $left -lt "$bench_seconds" ] && bench_seconds=$left
  # No size starts in the last minute of its time; SIGTERM at the end still prints what was measured.
  budget=$((bench_seconds > 90 ? bench_seconds - 60 : 30))
  # shellcheck disable=SC2086  # the arguments are meant to split
  begin "bench_tutorials" "$bench_seconds" env PYTHONPATH="$bench_path" python3 "$bench_script" \
    ${TESSERA_BENCH_ARGS---quick} --time-budget "$budget" --csv "$out/bench.csv" --results "$logs/bench"
  # Exit 2: no torch or no GPU, said in the log; not a failure of Tessera's.
  finish "bench_tutorials" "2=no torch or no GPU (see its log)"
  # The table, from its title on, without the progress lines.
  grep -q '^Tessera tutorial benchmarks' "$logs/bench_tutorials.log" 2>/dev/null &&
    sed -n '/^Tessera tutorial benchmarks/,$p' "$logs/bench_tutorials.log" | grep -v '^bench_tutorials: ' \
      >"$out/bench.md"
else
  note "bench_tutorials" "skipped: no built tessera package in $bench_path"
fi

# 3. The correctness checks, all at once: they time nothing, and the sanitizers' runs are mostly the tool's own
#    work. The Python tutorials under compute-sanitizer (memcheck, racecheck; a finding fails the run), the pytest
#    files that launch on the GPU (the rest run in CI, on the CPU), and the GPU test binaries.
#    TESSERA_GPU_ONE_AT_A_TIME=1 runs them one after another instead, should concurrent runs disturb each other.
started=()
check() {
  begin "$@"
  if [ "${TESSERA_GPU_ONE_AT_A_TIME:-0}" = 1 ]; then finish "$1"; else started+=("$1"); fi
}
if wants sanitizers && [ $have_c -eq 1 ]; then
  if command -v compute-sanitizer >/dev/null; then
    for t in 04_matmul 05_attention 02_softmax 03_layernorm 01_vector_add 06_dropout; do
      for tool in memcheck racecheck; do
        check "$tool $t" "${TESSERA_GPU_SANITIZER_SECONDS:-180}" "${in_python[@]}" compute-sanitizer --tool "$tool" \
          --error-exitcode 3 --print-limit 20 python3 "tutorials/$t.py" --backend cuda
      done
    done
  else
    note compute-sanitizer "not installed"
  fi
fi
if wants pytest && [ $have_c -eq 1 ]; then
  check "pytest (GPU files)" 180 "${in_python[@]}" python3 -m pytest -q -rs -p no:cacheprovider \
    tests/python/test_gpu.py tests/python/test_aot.py tests/python/test_jit.py tests/python/test_testing.py
fi
if wants tests; then
  for bin in "$work"/bin/*_test; do
    [ -e "$bin" ] || continue  # none in this bundle
    check "$(basename "$bin")" 150 "$bin" --gtest_color=no --gtest_brief=1
  done
fi
for label in "${started[@]}"; do finish "$label"; done

# 4. Nsight Compute's speed-of-light and occupancy sections for the matmul and softmax kernels, alone on the GPU.
if wants ncu && [ $have_c -eq 1 ]; then
  if command -v ncu >/dev/null; then
    for t in 04_matmul 02_softmax; do
      # --clock-control none: the card's clocks as found (ncu would lock them to base; the machine is shared).
      step "ncu $t" "${TESSERA_GPU_NCU_SECONDS:-90}" "${in_python[@]}" ncu --clock-control none --section SpeedOfLight \
        --section Occupancy --launch-count 6 --kernel-name "regex:softmax|matmul" python3 "tutorials/$t.py" \
        --backend cuda
    done
  else
    note ncu "not installed"
  fi
fi

# What comes back: four files (the device tool returns at most eight).
tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$logs"
echo
if [ -f "$out/bench.md" ]; then
  echo "== the benchmark table (all of it: bench.md, bench.csv; the log and plots in logs.tar.gz)"
  head -n 90 "$out/bench.md"
fi
echo
echo "== summary ($((SECONDS)) s)"
printf '%s\n' "${summary[@]}"
rm -rf "$work"
exit $status
