#!/usr/bin/env bash
# Installs Tessera's C++ package (the `cpp` component) from a build into a scratch prefix, checks that every
# installed header compiles alone without LLVM's headers, then builds this consumer project against the prefix
# with find_package(Tessera CONFIG) and runs it. Also checks that the version file refuses the next minor version.
#
#   tests/cmake_consumer/run.sh <tessera build dir> <scratch dir> <tessera version>   (ctest runs it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 work=$2 version=$3
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"

cmake --install "$build" --component cpp --prefix "$prefix" >"$work/install.log"
for tool in tessera-opt tessera-translate tessera-gpu-check tessera-aot; do
  said=$("$prefix/bin/$tool" --version)
  [ "$said" = "$tool (Tessera) $version" ] || { echo "cmake_consumer: $tool --version said '$said'" >&2; exit 1; }
done

# Only the prefix is on the include path: an installed header that needs LLVM, a backend or any header that was
# not installed fails here.
include=$prefix/include/tessera
(cd "$include" && find . -name '*.h' | sed 's|^\./||' | sort) >"$work/headers.txt"
[ -s "$work/headers.txt" ] || { echo "cmake_consumer: no headers were installed" >&2; exit 1; }
check_header() { echo "#include \"$2\"" | ${CXX:-c++} -std=c++20 -fsyntax-only -x c++ -I "$1" - ||
  { echo "cmake_consumer: installed header $2 does not compile alone" >&2; return 1; }; }
export -f check_header
xargs -P 2 -I{} bash -c 'check_header "$0" "$1"' "$include" {} <"$work/headers.txt"

cmake -S "$here" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DTESSERA_REQUESTED_VERSION="$version" \
  >"$work/configure.log"
cmake --build "$work/consumer" >"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
ldd "$work/consumer/consumer" >"$work/ldd.txt"
grep -q "libtessera.so => $prefix/lib/" "$work/ldd.txt" ||
  { echo "cmake_consumer: the consumer does not use the installed libtessera.so" >&2; exit 1; }
"$work/consumer/consumer"

IFS=. read -r major minor _ <<<"$version"
next_minor=$major.$((minor + 1))
if cmake -S "$here" -B "$work/too-new" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DTESSERA_REQUESTED_VERSION="$next_minor" >"$work/too-new.log" 2>&1; then
  echo "cmake_consumer: find_package(Tessera $next_minor) accepted version $version" >&2
  exit 1
fi
grep -q "version: $version" "$work/too-new.log"
echo "cmake_consumer: installed Tessera $version, built and ran the consumer; $next_minor was refused"
