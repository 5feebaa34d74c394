#!/usr/bin/env bash
# Step 1 of the GPU flow, on the development machine (no GPU needed): configures a self-contained build
# (LLVM linked statically, unused sections dropped, libstdc++ linked in), builds the GPU test binaries and
# packs them with the shared libraries they need into .gpu-bundle/bundle.tar.xz (git-ignored, under 64 MiB).
# The bundle also carries the Python package's core, libtessera.so (LLVM linked in statically and kept private),
# with the headers and sources that run_on_gpu.sh compiles the _C extension from against the GPU machine's own
# Python and pybind11, and the pytest suite.
#
#   scripts/gpu/build_bundle.sh            # then, on the GPU machine: scripts/gpu/run_on_gpu.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${TESSERA_GPU_BUILD_DIR:-$root/build-gpu-bundle}
bundle_dir=$root/.gpu-bundle
jobs=${TESSERA_JOBS:-2}
targets=(tessera-gpu-check jit_gpu_test jit_driver_test)
# Other GPU test binaries (tests/unit/*_gpu_test.cpp) travel too.
for src in "$root"/tests/unit/*_gpu_test.cpp; do
  name=$(basename "$src" .cpp)
  [[ " ${targets[*]} " == *" $name "* ]] || targets+=("$name")
done

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=/usr/bin/python3 \
  -DTESSERA_STATIC_LLVM=ON \
  -DCMAKE_CXX_FLAGS="-ffunction-sections -fdata-sections" -DCMAKE_C_FLAGS="-ffunction-sections -fdata-sections" \
  -DCMAKE_EXE_LINKER_FLAGS="-Wl,--gc-sections -static-libstdc++ -static-libgcc" \
  -DCMAKE_SHARED_LINKER_FLAGS="-Wl,--gc-sections" >/dev/null
# libtessera.so keeps the GPU machine's libstdc++ (shared): _C, compiled there, and torch use that one too.
ninja -C "$build" -j "$jobs" "${targets[@]}" tessera tessera_python_files

rm -rf "$bundle_dir/stage"
mkdir -p "$bundle_dir/stage/bin" "$bundle_dir/stage/lib"
for t in "${targets[@]}"; do
  bin=$(find "$build" -type f -name "$t" -perm -u+x | head -1)
  [ -n "$bin" ] || { echo "build_bundle: $t was not built" >&2; exit 1; }
  strip -o "$bundle_dir/stage/bin/$t" "$bin"
done

# The Python package: libtessera.so and the package's Python files (python/tessera/), next to a copy of the
# source tree's parts that run_on_gpu.sh and tessera.load compile against (the sources of _C and every header
# they include) and that the pytest suite reads (tests/python, the tutorials' and benchmarks' scripts), in the
# repository's layout. run_on_gpu.sh compiles _C there.
py_stage=$bundle_dir/stage/python
mkdir -p "$py_stage/tessera"
core=$(find "$build/python" -name libtessera.so -type f | head -1)
[ -n "$core" ] || { echo "build_bundle: libtessera.so was not built" >&2; exit 1; }
strip --strip-unneeded -o "$py_stage/tessera/libtessera.so" "$core"
if ldd "$py_stage/tessera/libtessera.so" | grep -qi llvm; then
  echo "build_bundle: libtessera.so still depends on a shared LLVM:" >&2
  ldd "$py_stage/tessera/libtessera.so" | grep -i llvm >&2
  exit 1
fi
cp "$root"/python/tessera/*.py "$py_stage/tessera/"
cp -r "$build/python/tessera/include" "$py_stage/tessera/"  # the headers tessera.load compiles against
(cd "$root" && find ir frontend transforms backends jit python/include \( -name '*.h' -o -name '*.def' \) \
  -print0 | xargs -0 cp --parents -t "$py_stage")
(cd "$root" && cp --parents -t "$py_stage" python/src/*.cpp python/src/*.h tests/python/*.py tutorials/*.py \
  benchmarks/*.py benchmarks/*.h CMakeLists.txt)  # CMakeLists.txt: test_version.py reads the project's version

# Shared libraries beyond glibc (zlib, zstd, tinfo...) travel too; glibc, libstdc++ and libcuda come from the GPU
# machine (torch needs its own libstdc++, at least as new as Debian 12's).
for bin in "$bundle_dir"/stage/bin/* "$py_stage/tessera/libtessera.so"; do
  ldd "$bin" | awk '/=> \// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libcuda.so*|libgcc_s.so*|libstdc++.so*) ;;
      *) cp -nL "$lib" "$bundle_dir/stage/lib/" ;;
    esac
  done
done
cp "$root/scripts/gpu/run_on_gpu.sh" "$bundle_dir/stage/"
git -C "$root" describe --always --dirty > "$bundle_dir/stage/REVISION" 2>/dev/null || echo unknown > "$bundle_dir/stage/REVISION"
tar -C "$bundle_dir/stage" -cf - . | xz -T2 -9 > "$bundle_dir/bundle.tar.xz"
rm -rf "$bundle_dir/stage"
size=$(stat -c %s "$bundle_dir/bundle.tar.xz")
echo "build_bundle: $bundle_dir/bundle.tar.xz ($((size / 1024 / 1024)) MiB, revision $(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown))"
if [ "$size" -ge $((64 * 1024 * 1024)) ]; then
  echo "build_bundle: the bundle is over 64 MiB and will not travel" >&2
  exit 1
fi
