# PolyBench/GPU's accumulator kernels, as the suite writes them, record the loads and stores a
# GPU compiler makes of them (clang -O2 for nvptx gives the same per work-item): the
# accumulator is not loaded again where its value is known (stored just before, round the
# loop's back edge, or stored by the loop itself), and a store an if overwrites stays apart
# under an enclosing if.
# Counts by hand, per work-item.
source "$(dirname "$0")/lib.sh"
cat > "$work/pb.cl" <<'CL'
typedef float DATA_TYPE;
__kernel void gemm(__global DATA_TYPE *a, __global DATA_TYPE *b, __global DATA_TYPE *c, DATA_TYPE alpha,
                   DATA_TYPE beta, int ni, int nj, int nk) {
  int j = get_global_id(0);
  int i = get_global_id(1);
  if ((i < ni) && (j < nj)) {
    c[i * nj + j] *= beta;
    for (int k = 0; k < nk; k++) c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
  }
}
__kernel void atax_kernel2(__global DATA_TYPE *A, __global DATA_TYPE *y, __global DATA_TYPE *tmp, int nx, int ny) {
  int j = get_global_id(0);
  if (j < ny)
    for (int i = 0; i < nx; i++) y[j] += A[i * ny + j] * tmp[i];
}
__kernel void std_kernel(__global DATA_TYPE *mean, __global DATA_TYPE *std, __global DATA_TYPE *data,
                         DATA_TYPE float_n, DATA_TYPE eps, int m, int n) {
  int j = get_global_id(0);
  if (j < m) {
    std[j] = 0.0;
    for (int i = 0; i < n; i++) std[j] += (data[i * m + j] - mean[j]) * (data[i * m + j] - mean[j]);
    std[j] /= float_n;
    std[j] = sqrt(std[j]);
    if (std[j] <= eps) std[j] = 1.0;
  }
}
CL
# loads stores of one work-item's records in `trace`
counts() {
  "$CLTRACE" stats "$1" | awk '$1 == "load" { l = $2 } $1 == "store" { s = $2 } END { print l, s }'
}
# gemm, 8x8: c loaded once (c *= beta) and stored once, then per k a[i][k], b[k][j] and a store
# of c: 1 + 2 * 8 = 17 loads, 1 + 8 = 9 stores per work-item, 64 work-items.
"$CLTRACE" run "$work/pb.cl" --kernel gemm --global 8,8 --local 8,8 --arg buffer:float:64:fill:1 \
  --arg buffer:float:64:fill:2 --arg buffer:float:64:fill:3 --arg scalar:float:1 --arg scalar:float:2 \
  --arg scalar:int:8 --arg scalar:int:8 --arg scalar:int:8 -o "$work/gemm.cltrace" > /dev/null || fail "gemm run"
[ "$(counts "$work/gemm.cltrace")" = "1088 576" ] || fail "gemm: loads stores $(counts "$work/gemm.cltrace"), expected 1088 576"
# atax_kernel2, 8x8: y[j] read once (the loop stores only y[j]), per i A[i][j] and tmp[i] and a
# store of y[j]: 1 + 2 * 8 = 17 loads, 8 stores per work-item, 8 work-items.
"$CLTRACE" run "$work/pb.cl" --kernel atax_kernel2 --global 8 --local 8 --arg buffer:float:64:fill:1 \
  --arg buffer:float:8 --arg buffer:float:8:fill:2 --arg scalar:int:8 --arg scalar:int:8 \
  -o "$work/atax.cltrace" > /dev/null || fail "atax run"
[ "$(counts "$work/atax.cltrace")" = "136 64" ] || fail "atax: loads stores $(counts "$work/atax.cltrace"), expected 136 64"
# std_kernel, m = 16 work-items, n = 12, data all 2 and mean all 2 (std 0): std stored 0, per i
# data[i][j] and mean[j] (loaded again: the store to std may be to mean) and a store, then one
# store for /= and sqrt (the first overwritten), and the if's store of 1 where std <= eps (inside
# `if (j < m)` it stays apart, as in the GPU's code): 2 * 12 = 24 loads, 1 + 12 + 1 = 14 stores
# per work-item, 15 when the if's store is taken (eps 0.5), 14 when not (eps -1).
for case in "0.5 240" "-1 224"; do
  set -- $case
  "$CLTRACE" run "$work/pb.cl" --kernel std_kernel --global 16 --local 16 --arg buffer:float:16:fill:2 \
    --arg buffer:float:16 --arg buffer:float:192:fill:2 --arg scalar:float:12 --arg scalar:float:$1 \
    --arg scalar:int:16 --arg scalar:int:12 -o "$work/std.cltrace" > /dev/null || fail "std run (eps $1)"
  [ "$(counts "$work/std.cltrace")" = "384 $2" ] ||
    fail "std (eps $1): loads stores $(counts "$work/std.cltrace"), expected 384 $2"
done
echo "ok: gemm 17/9, atax_kernel2 17/8 and std_kernel 24/14 or 24/15 loads/stores per work-item"
