#!/usr/bin/env bash
# `pip install .` as README says, offline with Debian's setuptools: installs the package from the source tree into
# a fresh venv, checks it from another folder (check_installed.py), then builds a wheel the same way, installs it
# into a second venv and checks that one too. The CMake build is setup.py's (build-pip/, ccache-served).
#
#   tests/pip/run.sh <source root> <scratch dir> <tessera version>   (ctest runs it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$1 work=$2 version=$3
rm -rf "$work"
mkdir -p "$work/run"
unset PYTHONPATH  # the installed package, never a build tree
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1

/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install --no-build-isolation "$root" >"$work/pip-install.log" 2>&1 ||
  { tail -40 "$work/pip-install.log" >&2; exit 1; }
(cd "$work/run" && "$work/venv/bin/python" "$here/check_installed.py" "$version" "$work/run")

"$work/venv/bin/pip" wheel --no-build-isolation --no-deps -w "$work/dist" "$root" >"$work/pip-wheel.log" 2>&1 ||
  { tail -40 "$work/pip-wheel.log" >&2; exit 1; }
wheel=$(ls "$work"/dist/tessera-"$version"-*.whl)
/usr/bin/python3 -m venv --system-site-packages "$work/wheel-venv"
"$work/wheel-venv/bin/pip" install "$wheel" >"$work/wheel-install.log" 2>&1 ||
  { tail -40 "$work/wheel-install.log" >&2; exit 1; }
mkdir -p "$work/wheel-run"
(cd "$work/wheel-run" && "$work/wheel-venv/bin/python" "$here/check_installed.py" "$version" "$work/wheel-run")
echo "pip: installed tessera $version from the source tree and from $(basename "$wheel")"
