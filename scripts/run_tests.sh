#!/usr/bin/env bash
# Builds everything and runs every test (GoogleTest, lit/FileCheck) through ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(bash "$root/scripts/configure.sh")
jobs=${TESSERA_JOBS:-$(nproc)}
ninja -C "$build" -j "$jobs"
ctest --test-dir "$build" -j "$jobs" --output-on-failure
