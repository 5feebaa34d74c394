#!/usr/bin/env bash
# Step 2 of the GPU flow, on the GPU machine: unpacks .gpu-bundle/bundle.tar.xz (made by build_bundle.sh) and
# runs every GPU test binary and tessera-gpu-check, which compares every tutorial kernel and op case against the
# reference interpreter on random inputs and prints a table. Exit status 0 when everything passed.
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
echo "== summary"
printf '%s\n' "${summary[@]}"
rm -rf "$work"
exit $status
