#!/usr/bin/env bash
# Installs everything cltrace needs on Debian 12 (as root, non-interactive, idempotent),
# then configures and builds. Usage: scripts/setup.sh [--no-build]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

packages=(
  build-essential cmake ninja-build git pkg-config python3
  clang-15 llvm-15-dev llvm-15-tools llvm-spirv-15 spirv-tools
  pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers clinfo
  libfmt-dev libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev libzstd-dev libxxhash-dev zlib1g-dev
  python3-matplotlib python3-numpy
  # A second OpenCL platform, rusticl on llvmpipe, which takes neither SPIR nor SPIR-V: the
  # tests of device choice and of tracing on a stand-in device run the sample host on it.
  mesa-opencl-icd
  # Oclgrind, an OpenCL 1.2 interpreter that takes SPIR: traces on it must equal PoCL's.
  oclgrind
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "${1:-}" = "--no-build" ] && exit 0
cmake -S "$here" -B "$here/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$here/build" -j"$(nproc)"
