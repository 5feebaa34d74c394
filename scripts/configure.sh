#!/usr/bin/env bash
# Installs the Debian packages (if missing) and configures the build in ./build (or $TESSERA_BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSERA_BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh" >&2  # stdout carries only the build directory
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE=/usr/bin/python3 >&2
echo "$build"
