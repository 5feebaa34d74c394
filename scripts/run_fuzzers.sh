#!/usr/bin/env bash
# Runs each libFuzzer target of tests/fuzz for TESSERA_FUZZ_SECONDS (default 30) under ASan + UBSan, from the
# seeds tests/fuzz/make_seeds.py extracts from the lit tests and the checked-in corpus with every past finding
# (tests/fuzz/corpus/<fuzzer>/).
# Needs the build scripts/run_sanitizers.sh makes. A crash, leak, sanitizer report or slow input stops its fuzzer
# and fails the script; the reproducer is written to <build>/fuzz/<fuzzer>-crash-... (once fixed, add it to
# tests/fuzz/corpus/<fuzzer>/ as finding-<what>). The corpus each fuzzer grows is kept in <build>/fuzz/corpus/
# for the next run.
#
#   scripts/run_fuzzers.sh [FUZZER...]     (default: all three)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSERA_ASAN_BUILD_DIR:-$root/build-asan}
seconds=${TESSERA_FUZZ_SECONDS:-30}
fuzzers=("$@")
[ ${#fuzzers[@]} -gt 0 ] || fuzzers=(ir_pipeline_fuzzer layout_fuzzer dsl_trace_fuzzer)
work=$build/fuzz
mkdir -p "$work"
/usr/bin/python3 "$root/tests/fuzz/make_seeds.py" "$work/seeds"
export UBSAN_OPTIONS=print_stacktrace=1
status=0
for name in "${fuzzers[@]}"; do
  corpus=$work/corpus/$name
  mkdir -p "$corpus" "$work/seeds/$name"
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
    tail -n 60 "$work/$name.log"
  fi
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)|cov: " \
    "$work/$name.log" | tail -n 5
done
exit $status
