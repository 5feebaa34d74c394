#!/usr/bin/env bash
# The main job: builds and runs the four tutorials end to end, the C++ programs and then the Python scripts,
# and prints pass/fail per tutorial and language. Exits non-zero if any of them fails.
# (They run on the reference interpreter and in eager mode; GPU execution arrives with the CUDA JIT.)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
configured=$(bash "$root/scripts/configure.sh") || exit 1
build=${configured##*$'\n'}  # configure.sh prints the build directory last (setup.sh may print before it)
jobs=${TESSERA_JOBS:-$(nproc)}
tutorials=(01_vector_add 02_softmax 03_layernorm 04_matmul)
targets=(_C)  # the Python extension the scripts import
for t in "${tutorials[@]}"; do targets+=("tutorial_$t"); done
ninja -C "$build" -j "$jobs" "${targets[@]}" || exit 1

status=0
summary=()
record() {  # record <exit status> <label>
  if [ "$1" -eq 0 ]; then summary+=("PASS  $2"); else summary+=("FAIL  $2"); status=1; fi
}
for t in "${tutorials[@]}"; do
  echo "== tutorial $t (C++)"
  "$build/tutorials/tutorial_$t"
  record $? "$t  C++"
done
# A CUDA GPU, if present, also runs the Python tutorials (the C++ programs add it themselves).
gpu=$(PYTHONPATH="$build/python" /usr/bin/python3 -c 'import tessera; print(int(tessera._C.cuda_available()))' 2>/dev/null || echo 0)
for t in "${tutorials[@]}"; do
  echo "== tutorial $t (Python)"
  PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 "$root/tutorials/$t.py"
  record $? "$t  Python"
  if [ "$gpu" = 1 ]; then  # the same script on the GPU (numpy arrays copied to the device by the CUDA JIT)
    PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 "$root/tutorials/$t.py" --backend cuda
    record $? "$t  Python (GPU)"
  fi
done
echo
echo "== tutorials"
printf '%s\n' "${summary[@]}"
exit $status
