#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang-19 under ASan + UBSan in their own build folder,
# ./build-fuzz (or $TESSERA_FUZZ_BUILD_DIR; ccache makes rebuilds cheap), and runs each for TESSERA_FUZZ_SECONDS
# (default 30: CI's short run; 600 or more by hand) from the seeds tests/fuzz/make_seeds.py extracts from the lit
# tests and the checked-in corpus with every past finding (tests/fuzz/corpus/<fuzzer>/).
# Skips with a message and exit status 0 where clang-19 or its libFuzzer runtime (libclang-rt-19-dev) is missing.
# A crash, leak, sanitizer report or an input running over 60 s fails the script: it prints the fuzzer's log, the
# reproducer (a file under <build>/fuzz/, dumped) and the command replaying it. Once fixed, add the reproducer to
# tests/fuzz/corpus/<fuzzer>/ as finding-<what>. The corpus each fuzzer grows stays in <build>/fuzz/corpus/.
#
#   scripts/run_fuzzers.sh [FUZZER...]     (default: all three)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSERA_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${TESSERA_FUZZ_SECONDS:-30}
fuzzers=("$@")
[ ${#fuzzers[@]} -gt 0 ] || fuzzers=(ir_pipeline_fuzzer layout_fuzzer dsl_trace_fuzzer)

if ! command -v clang++-19 > /dev/null; then
  echo "run_fuzzers: skipped: no clang++-19 (Debian's clang-19 package)"
  exit 0
fi
runtime=$(clang++-19 -print-file-name=libclang_rt.fuzzer-x86_64.a)
if [ ! -f "$runtime" ]; then
  echo "run_fuzzers: skipped: no libFuzzer runtime for clang-19 (Debian's libclang-rt-19-dev package)"
  exit 0
fi

jobs=${TESSERA_JOBS:-$(nproc)}
mkdir -p "$build"
# -O1 with line tables: sanitizer reports name lines, and the instrumented code stays fast enough to fuzz.
CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja -DPython_EXECUTABLE=/usr/bin/python3 \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" -DTESSERA_SANITIZE=address,undefined -DTESSERA_FUZZ=ON \
  > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
ninja -C "$build" -j "$jobs" "${fuzzers[@]}"

work=$build/fuzz
mkdir -p "$work"
/usr/bin/python3 "$root/tests/fuzz/make_seeds.py" "$work/seeds"
export UBSAN_OPTIONS=print_stacktrace=1
status=0
for name in "${fuzzers[@]}"; do
  corpus=$work/corpus/$name
  mkdir -p "$corpus" "$work/seeds/$name"
  rm -f "$work/$name"-{crash,leak,timeout,oom,slow-unit}-*
  dict=()
  [ -f "$work/seeds/$name.dict" ] && dict=(-dict="$work/seeds/$name.dict")
  seeds=()
  for dir in "$work/seeds/$name" "$root/tests/fuzz/corpus/$name"; do
    [ -d "$dir" ] && seeds+=("$dir")
  done
  [ "$name" = ir_pipeline_fuzzer ] && seeds+=("$root/tests/lit")
  echo "== $name: ${seconds}s"
  # -timeout: an input taking over 60 s is a hang (a 64x64 transpose takes ~13 s through the pipeline under
  # ASan -O1 on a busy machine); -max_len keeps inputs to what a kernel plausibly is.
  if ! "$build/tests/fuzz/$name" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -max_len=4096 \
      -print_final_stats=1 -artifact_prefix="$work/$name-" "${dict[@]}" "$corpus" "${seeds[@]}" \
      2> "$work/$name.log"; then
    status=1
    echo "FAIL $name: the end of $work/$name.log:"
    tail -n 60 "$work/$name.log"
    for reproducer in "$work/$name"-{crash,leak,timeout,oom,slow-unit}-*; do
      [ -f "$reproducer" ] || continue
      echo "-- reproducer $reproducer ($(stat -c %s "$reproducer") bytes):"
      od -A d -c "$reproducer" | head -n 40
      echo "-- replay: $build/tests/fuzz/$name $reproducer"
    done
  fi
  grep -E "^INFO: Seed:|^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)" \
    "$work/$name.log" || true
done
exit $status
