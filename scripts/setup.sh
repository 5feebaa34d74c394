#!/usr/bin/env bash
# Installs every Debian package Tessera needs to build and test. Idempotent; run as root on Debian 12.
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache git
  llvm-19-dev lld-19 llvm-19-tools libzstd-dev zlib1g-dev libedit-dev libxml2-dev libffi-dev libncurses-dev
  python3-venv python3-pip python3-setuptools python3-wheel python3-matplotlib  # pip install ., plots (tests/pip)
  python3-torch  # torch tensors as kernel arguments (tests/python)
  libgtest-dev pybind11-dev python3-dev python3-numpy python3-pytest
  clang-19 libclang-rt-19-dev  # the sanitizer and libFuzzer build (scripts/run_sanitizers.sh)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: installed ${missing[*]}"
