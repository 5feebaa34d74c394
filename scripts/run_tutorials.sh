#!/usr/bin/env bash
# The main job: builds and runs the six tutorials end to end, the C++ programs and then the Python scripts,
# and prints pass/fail per tutorial and language. Exits non-zero if any of them fails.
# They run on the reference interpreter and in eager mode, and on a CUDA GPU when one is present; without one the
# C++ programs and the Python scripts also run on the emulator (backend "sim", docs/Sim.md) for each arch in
# TESSERA_SIM_ARCHS (default: sm_90a gfx942), and a table gives each kernel's coalescing (global load/store
# efficiency) and shared-memory bank conflicts.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
configured=$(bash "$root/scripts/configure.sh") || exit 1
build=${configured##*$'\n'}  # configure.sh prints the build directory last (setup.sh may print before it)
jobs=${TESSERA_JOBS:-$(nproc)}
tutorials=(01_vector_add 02_softmax 03_layernorm 04_matmul 05_attention 06_dropout)
targets=(_C)  # the Python extension the scripts import
for t in "${tutorials[@]}"; do targets+=("tutorial_$t"); done
ninja -C "$build" -j "$jobs" "${targets[@]}" || exit 1

status=0
summary=()
record() {  # record <exit status> <label>
  if [ "$1" -eq 0 ]; then summary+=("PASS  $2"); else summary+=("FAIL  $2"); status=1; fi
}
# A CUDA GPU, if present, also runs the tutorials (the C++ programs add it themselves); else the emulator.
gpu=$(PYTHONPATH="$build/python" /usr/bin/python3 -c 'import tessera; print(int(tessera._C.cuda_available()))' 2>/dev/null || echo 0)
read -r -a sim_archs <<< "${TESSERA_SIM_ARCHS:-sm_90a gfx942}"
figures=$(mktemp) log=$(mktemp)
trap 'rm -f "$figures" "$log"' EXIT
python_tutorial() {  # python_tutorial <script> [arguments...]
  PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 "$root/tutorials/$1.py" "${@:2}"
}
emulated() {  # emulated <label> <command...>: runs it, recording its result and its figure lines for the table
  echo "== tutorial $1"
  "${@:2}" > "$log" 2>&1
  record $? "$1"
  cat "$log"
  awk '/^  memory figures/ {on = 1; next} on && /^    / {print; next} {on = 0}' "$log" >> "$figures"
}
for t in "${tutorials[@]}"; do
  echo "== tutorial $t (C++)"
  "$build/tutorials/tutorial_$t"
  record $? "$t  C++"
  if [ "$gpu" = 1 ]; then continue; fi
  for arch in "${sim_archs[@]}"; do  # the GPU code on the emulator
    emulated "$t  C++ (sim $arch)" "$build/tutorials/tutorial_$t" --backend=sim --arch="$arch"
  done
done
for t in "${tutorials[@]}"; do
  echo "== tutorial $t (Python)"
  python_tutorial "$t"
  record $? "$t  Python"
  if [ "$gpu" = 1 ]; then  # the same script on the GPU (numpy arrays copied to the device by the CUDA JIT)
    python_tutorial "$t" --backend cuda
    record $? "$t  Python (GPU)"
    continue
  fi
  for arch in "${sim_archs[@]}"; do
    TESSERA_SIM_ARCH=$arch emulated "$t  Python (sim $arch)" python_tutorial "$t" --backend sim
  done
done
if [ -s "$figures" ]; then
  echo
  echo "== memory figures per kernel, emulated (ld.eff/st.eff: requested / transferred global bytes)"
  # The scripts' tables, one header kept.
  awk 'NR == 1 || !/^ *kernel /' "$figures" | sed 's/^    //'
fi
echo
echo "== tutorials"
printf '%s\n' "${summary[@]}"
exit $status
