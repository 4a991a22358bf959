#!/usr/bin/env bash
# Sets everything up and runs the main job on a bundled kernel: instrument, trace, schedule
# and simulate the matrix multiply of kernels/mm.cl.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/scripts/setup.sh"
export POCL_CACHE_DIR="$here/build/pocl-cache"
cltrace="$here/build/tools/cltrace/cltrace"
out="$here/build/main-job"
mkdir -p "$out"
"$cltrace" instrument "$here/kernels/mm.cl" --kernel mm -o "$out/instrumented"
"$cltrace" run "$here/kernels/mm.cl" -o "$out/mm.cltrace"
"$cltrace" predict "$here/kernels/mm.cl"
