#!/usr/bin/env bash
# Cache simulator throughput on real kernels: traces bundled kernels with the built cltrace and
# runs build/tests/cachesim/bench_simulate on the traces (prints figures; see docs/cachesim.md).
#   scripts/bench-simulate.sh [bench_simulate options]     (run after the build, e.g. scripts/test.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cltrace="$here/build/tools/cltrace/cltrace"
bench="$here/build/tests/cachesim/bench_simulate"
for f in "$cltrace" "$bench"; do
  [ -x "$f" ] || { echo "bench-simulate: $f is missing; build first (scripts/setup.sh)" >&2; exit 1; }
done
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$here/build/pocl-cache}"
out="$here/build/bench-simulate"
mkdir -p "$out"
traces=()
for k in mm stencil mt mv spmv_csr; do  # the launch manifests' sizes (kernels/*.json)
  "$cltrace" run "$here/kernels/$k.cl" -o "$out/$k.cltrace" >/dev/null
  traces+=("$out/$k.cltrace")
done
# A larger matrix multiply: 128x128, 2 M loads.
"$cltrace" run "$here/kernels/mm.cl" --kernel mm --global 128,128 --local 16,16 \
  -a buffer:float:16384:random:1 -a buffer:float:16384:random:2 -a buffer:float:16384 -a scalar:int:128 \
  -o "$out/mm128.cltrace" >/dev/null
traces+=("$out/mm128.cltrace")
"$bench" "$@" "${traces[@]}"
