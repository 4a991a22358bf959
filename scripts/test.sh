#!/usr/bin/env bash
# Sets everything up (packages, configure, build) and runs every test: ctest, then the C++
# libraries' unit tests again under AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/sanitize.sh, its own build in build-sanitize/).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/scripts/setup.sh"
export POCL_CACHE_DIR="$here/build/pocl-cache"
cd "$here/build"
ctest --output-on-failure -j"$(nproc)" "$@"
bash "$here/scripts/sanitize.sh"
