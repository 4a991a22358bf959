#!/usr/bin/env bash
# Sets everything up (packages, configure, build) and runs every test: ctest, then the C++
# libraries' unit tests again under AddressSanitizer, UndefinedBehaviorSanitizer and
# ThreadSanitizer (scripts/sanitize.sh, its own builds in build-sanitize/ and build-tsan/).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/scripts/setup.sh"
export POCL_CACHE_DIR="$here/build/pocl-cache"
cd "$here/build"
ctest --output-on-failure -j"$(nproc)" "$@"
bash "$here/scripts/sanitize.sh"
