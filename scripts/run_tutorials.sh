#!/usr/bin/env bash
# The main job: builds and runs the four tutorials end to end and prints pass/fail per tutorial.
# (They run on the reference interpreter and in eager mode; GPU execution arrives with the NVPTX backend.)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(bash "$root/scripts/configure.sh") || exit 1
jobs=${TESSERA_JOBS:-$(nproc)}
ninja -C "$build" -j "$jobs" tutorial_01_vector_add tutorial_02_softmax tutorial_03_layernorm tutorial_04_matmul || exit 1
status=0
summary=()
for t in 01_vector_add 02_softmax 03_layernorm 04_matmul; do
  echo "== tutorial $t"
  if "$build/tutorials/tutorial_$t"; then summary+=("PASS  $t"); else summary+=("FAIL  $t"); status=1; fi
done
echo
echo "== tutorials"
printf '%s\n' "${summary[@]}"
exit $status
