#!/usr/bin/env bash
# The GoogleTest (the emulator's sim_* tests included), lit and fuzz-regression suites under AddressSanitizer +
# UndefinedBehaviorSanitizer, built with clang-19 in ./build-asan (or $TESSERA_ASAN_BUILD_DIR). Kept cheap for CI:
# -O1 with line tables only, and only what those tests need (`ninja tessera-tests`: the test executables and the
# tools lit runs; no Python extension, benchmarks, tutorials' programs or tessera-aot).
# Left out (the plain suite runs them): python (the instrumented extension would need the ASan runtime preloaded
# into python3), layering (pure Python), package, aot and benchmarks (they install, pip-build or compile C
# programs around the tools rather than exercise the compiler's memory; tessera-aot is not built), and two
# throughput runs that cost many times their plain minutes here, more than CI's 60 minutes leave:
# fuzz_differential_budget (60 random programs through every backend; its replayed past failures,
# fuzz_differential_regressions, do run) and gpu_check_sim_* (the whole GPU check table on the emulator, per
# arch: 26 of its cases in 5 minutes under ASan on the loaded 2-core machine).
# TESSERA_ASAN_FUZZ=OFF leaves out libFuzzer's coverage instrumentation and the fuzzer binaries. CI (.ci/run)
# instead points TESSERA_ASAN_BUILD_DIR at scripts/run_fuzzers.sh's ./build-fuzz, configured with the same flags,
# so that one instrumented library serves both (the coverage instrumentation costs the tests little: 390 s of
# ctest on 2 cores).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSERA_ASAN_BUILD_DIR:-$root/build-asan}
jobs=${TESSERA_JOBS:-$(nproc)}
fuzz=${TESSERA_ASAN_FUZZ:-ON}
bash "$root/scripts/setup.sh" >&2
CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja -DPython_EXECUTABLE=/usr/bin/python3 \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" -DTESSERA_SANITIZE=address,undefined -DTESSERA_FUZZ="$fuzz" >&2
# TESSERA_DEADLINE (seconds since the epoch; CI sets it so that it ends within its 60 minutes): the build and each
# batch of tests start only before it. Tests it leaves out are named and counted, never reported as passed; a test
# that ran and failed still fails the script.
deadline=${TESSERA_DEADLINE:-}
seconds_left() { echo $(( deadline - $(date +%s) )); }
build_rc=0
if [ -z "$deadline" ]; then
  ninja -C "$build" -j "$jobs" tessera-tests
elif [ "$(seconds_left)" -le 60 ]; then
  build_rc=124
else
  timeout "$(seconds_left)" ninja -C "$build" -j "$jobs" tessera-tests || build_rc=$?
fi
if [ "$build_rc" = 124 ]; then
  echo "run_sanitizers: NOT run: the deadline came before the instrumented tests were built"
  exit 0
fi
[ "$build_rc" = 0 ] || exit "$build_rc"
# Any report fails its test: UBSan aborts (-fno-sanitize-recover), ASan and LeakSanitizer exit non-zero.
export UBSAN_OPTIONS=print_stacktrace=1
filter=(--label-regex '^(unit|lit|fuzz|sim)$' --label-exclude '^python$'
        --exclude-regex '^(fuzz_differential_budget|gpu_check_sim_.*)$')
if [ -z "$deadline" ]; then
  exec ctest --test-dir "$build" -j "$jobs" --output-on-failure "${filter[@]}"
fi
# With a deadline: batches of 100 tests, the emulator's (the slowest) first so that they overlap the rest.
mapfile -t numbers < <(
  { ctest --test-dir "$build" -N -L sim "${filter[@]}"; ctest --test-dir "$build" -N "${filter[@]}"; } |
    sed -n 's/^ *Test *#\([0-9]*\):.*/\1/p' | awk '!seen[$0]++')
status=0
ran=0
for (( first = 0; first < ${#numbers[@]}; first += 100 )); do
  if [ "$(seconds_left)" -le 0 ]; then
    echo "run_sanitizers: deadline reached: $ran of ${#numbers[@]} tests ran; NOT run:"
    # sed reads to the end (head would close the pipe early: grep's SIGPIPE fails the script under pipefail).
    ctest --test-dir "$build" -N -I "0,0,0,$(IFS=,; echo "${numbers[*]:first}")" "${filter[@]}" | grep "Test *#" |
      sed -n '1,40p'
    break
  fi
  batch=("${numbers[@]:first:100}")
  ctest --test-dir "$build" -j "$jobs" --output-on-failure -I "0,0,0,$(IFS=,; echo "${batch[*]}")" "${filter[@]}" ||
    status=1
  ran=$(( ran + ${#batch[@]} ))
done
exit $status
