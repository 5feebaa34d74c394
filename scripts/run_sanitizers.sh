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
ninja -C "$build" -j "$jobs" tessera-tests
# Any report fails its test: UBSan aborts (-fno-sanitize-recover), ASan and LeakSanitizer exit non-zero.
export UBSAN_OPTIONS=print_stacktrace=1
ctest --test-dir "$build" -j "$jobs" --output-on-failure --label-regex '^(unit|lit|fuzz|sim)$' --label-exclude '^python$' \
  --exclude-regex '^(fuzz_differential_budget|gpu_check_sim_.*)$'
