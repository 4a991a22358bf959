#!/usr/bin/env bash
# Sets everything up (packages, configure, build) and runs every test.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/scripts/setup.sh"
export POCL_CACHE_DIR="$here/build/pocl-cache"
cd "$here/build"
ctest --output-on-failure -j"$(nproc)" "$@"
