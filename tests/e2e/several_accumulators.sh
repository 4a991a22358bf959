# Several accumulators updated in one loop (Rodinia lavaMD's four fields of fv[i], each
# `+=` on every iteration) are each loaded once per entry into the loop, as a GPU compiler
# keeps them in registers: the loop's other stores are to the other fields, which alias
# analysis tells apart. Before, each was loaded on every iteration (every load after the first a
# hit), and lavaMD's predicted miss rate came out near 0.4% where the GPU's shape gives 17%.
# Counts by hand, per work-item.
source "$(dirname "$0")/lib.sh"
cat > "$work/acc.cl" <<'CL'
typedef struct { float v, x, y, z; } four;
__kernel void forces(__global four* fv, __global const float* r, int n) {
  int i = get_global_id(0);
  for (int j = 0; j < n; j++) {
    float a = r[j];
    fv[i].v += a;
    fv[i].x += 2.0f * a;
    fv[i].y -= a;
    fv[i].z *= a;
  }
}
CL
counts() {
  "$CLTRACE" stats "$1" | awk '$1 == "load" { l = $2 } $1 == "store" { s = $2 } END { print l, s }'
}
# 32 work-items, n = 10: the four fields once (4 loads), r[j] once per iteration (10), and four
# stores per iteration (40): 14 loads and 40 stores per work-item.
"$CLTRACE" run "$work/acc.cl" --kernel forces --global 32 --local 32 --arg buffer:float:128:fill:1 \
  --arg buffer:float:10:fill:2 --arg scalar:int:10 -o "$work/acc.cltrace" > /dev/null || fail "forces run"
[ "$(counts "$work/acc.cltrace")" = "448 1280" ] ||
  fail "forces: loads stores $(counts "$work/acc.cltrace"), expected 448 1280"
echo "ok: four accumulators of one loop are each loaded once"
