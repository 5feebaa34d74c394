#!/usr/bin/env bash
# Shows what happens to one tutorial kernel on its way to the GPU: the traced tile IR, the IR after the layout
# and shared-memory passes, and the PTX. The walk-throughs' snippets come from this script.
#
#   tutorials/show_ir.sh TUTORIAL KERNEL [ARG...]     e.g.  tutorials/show_ir.sh 01_vector_add vector_add n
#
# Like the JIT's specialization does, it marks every pointer argument, and each integer ARG named on the command
# line, `divisibility = 16` (16-byte aligned pointers, integers that are multiples of 16) before running the
# passes; an ARG written NAME=1 is marked `equal_to_1 = true` instead (a unit stride, e.g. stride_ak=1).
# Environment: TESSERA_BUILD_DIR (default ./build), NUM_WARPS (default 4), STAGE (traced|laid-out|ptx|all),
# OCCURRENCE (default 1: which of the tutorial's traces of KERNEL, e.g. 4 for 04_matmul's gelu epilogue).
# TARGET=nvptx|amdgpu runs the JIT's whole default pipeline for that target instead of the five layout passes:
# its layout policy (tensor-core layouts), async copies and pipelining; with ARCH (default: the target's) and
# NUM_STAGES (default 3); WARP_SPECIALIZE=1 hands its TMA loop to a producer warpgroup (sm_90a); PING_PONG=1 also
# makes it persistent with two consumer groups on alternate tiles.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '4,15p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSERA_BUILD_DIR:-$root/build}
tutorial=$1 kernel=$2
shift 2
warps=${NUM_WARPS:-4}
stage=${STAGE:-all}
passes=coalesce,assign-layouts,remove-layout-conversions,allocate-shared-memory,insert-barriers
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The tutorial prints every module it traces; keep the OCCURRENCE-th function named KERNEL.
TESSERA_TUTORIAL_PRINT_IR=1 "$build/tutorials/tutorial_$tutorial" >"$tmp/all.txt" || true
awk -v name="func @$kernel(" -v want="${OCCURRENCE:-1}" \
  'index($0, name) == 1 {n++; if (n == want) p = 1} p {print} p && /^}$/ {exit}' "$tmp/all.txt" >"$tmp/traced.tir"
if [ ! -s "$tmp/traced.tir" ]; then
  echo "show_ir.sh: tutorial_$tutorial traced no function named '$kernel'" >&2
  exit 1
fi
# Specialize: pointer arguments, then the named integer arguments (first line only: the signature).
sed -i '1s/: ptr<\([a-z0-9]*\)>/: ptr<\1> {divisibility = 16}/g' "$tmp/traced.tir"
for arg in "$@"; do
  if [ "${arg%=1}" != "$arg" ]; then fact="equal_to_1 = true" arg=${arg%=1}; else fact="divisibility = 16"; fi
  sed -i "1s/%$arg: \(i32\|i64\)\([,)]\)/%$arg: \1 {$fact}\2/" "$tmp/traced.tir"
done

if [ "$stage" = traced ] || [ "$stage" = all ]; then
  [ "$stage" = all ] && echo "// ---- traced (specialized)"
  cat "$tmp/traced.tir"
fi
options=(-p "$passes" --num-warps="$warps")
if [ -n "${TARGET:-}" ]; then
  passes="the default pipeline for $TARGET${ARCH:+ $ARCH}, ${NUM_STAGES:-3} stages"
  options=(-p default --target="$TARGET" ${ARCH:+--arch="$ARCH"} --num-stages="${NUM_STAGES:-3}" --num-warps="$warps")
  if [ "${WARP_SPECIALIZE:-0}" = 1 ]; then
    passes="$passes, warp-specialized"
    options+=(--warp-specialize)
  fi
  if [ "${PING_PONG:-0}" = 1 ]; then
    passes="$passes, persistent, ping-pong consumers"
    options+=(--ping-pong)
  fi
fi
"$build/tools/tessera-opt" "$tmp/traced.tir" "${options[@]}" >"$tmp/laid-out.tir"
if [ "$stage" = laid-out ] || [ "$stage" = all ]; then
  [ "$stage" = all ] && echo "// ---- after $passes (num_warps = $warps)"
  cat "$tmp/laid-out.tir"
fi
if [ "$stage" = ptx ] || [ "$stage" = all ]; then
  [ "$stage" = all ] && echo "// ---- PTX (tessera-translate --emit=ptx)"
  "$build/tools/tessera-translate" "$tmp/laid-out.tir" --emit=ptx --num-warps="$warps" ${ARCH:+--arch="$ARCH"}
fi
