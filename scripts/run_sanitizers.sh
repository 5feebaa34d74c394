#!/usr/bin/env bash
# The GoogleTest and lit suites under AddressSanitizer + UndefinedBehaviorSanitizer, built with clang-19 in
# ./build-asan (or $TESSERA_ASAN_BUILD_DIR), together with the libFuzzer targets (scripts/run_fuzzers.sh runs
# them). Kept cheap for CI: -O1 with line tables only, and only what ctest needs (`ninja tessera-tests`).
# The Python suite is left out: the instrumented extension would need the ASan runtime preloaded into python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSERA_ASAN_BUILD_DIR:-$root/build-asan}
jobs=${TESSERA_JOBS:-$(nproc)}
bash "$root/scripts/setup.sh" >&2
CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja -DPython_EXECUTABLE=/usr/bin/python3 \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" -DTESSERA_SANITIZE=address,undefined -DTESSERA_FUZZ=ON >&2
ninja -C "$build" -j "$jobs" tessera-tests
# Any report fails its test: UBSan aborts (-fno-sanitize-recover), ASan and LeakSanitizer exit non-zero.
export UBSAN_OPTIONS=print_stacktrace=1
ctest --test-dir "$build" -j "$jobs" --output-on-failure --label-exclude python
