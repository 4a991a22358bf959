# A value the kernel mentions twice is loaded once, as a GPU compiler loads it: out[i] = a[i] *
# a[i] over 256 work-items records 256 loads (clang's -O0 code loads a[i] twice), and the L1
# sees 8 reads of 8 lines, 8 misses (100%), not 16 reads with 8 hits.
source "$(dirname "$0")/lib.sh"
cat > "$work/dup.cl" <<'CL'
__kernel void sq(__global const float* a, __global float* out) {
  int i = get_global_id(0);
  out[i] = a[i] * a[i];
}
CL
"$CLTRACE" run "$work/dup.cl" --kernel sq --global 256 --local 64 --arg buffer:float:256:iota --arg buffer:float:256 \
  -o "$work/dup.cltrace" > /dev/null || fail "run"
got=$("$CLTRACE" stats "$work/dup.cltrace" | awk '$1 == "load" { l = $2 } $1 == "store" { s = $2 } END { print l, s }')
[ "$got" = "256 256" ] || fail "loads stores = $got, expected 256 256"
echo "ok: 256 loads, 256 stores"
got=$("$CLTRACE" simulate "$work/dup.cltrace" --sm all --set timing=off --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
print(j['reads'], j['read_misses'], j['miss_rate'])")
[ "$got" = "8 8 1.0" ] || fail "reads read_misses miss_rate = $got, expected 8 8 1.0"
echo "ok: 8 reads, 8 misses"

# A loop-invariant load is read once per entry into its loop, as a GPU compiler hoists it: w[0]
# in `for (k < 16) s += w[0] * in[k]` over 64 work-items (2 workgroups of one warp) records 64 +
# 64 x 16 = 1088 loads, not 2048. Each warp reads w's line once and in's line (16 floats) 16
# times: 2 x 17 = 34 reads, 4 cold misses (each workgroup on an SM of its own), not 64 reads.
cat > "$work/inv.cl" <<'CL'
__kernel void scale(__global const float* w, __global const float* in, __global float* out, int n) {
  float s = 0;
  for (int k = 0; k < n; ++k) s += w[0] * in[k];
  out[get_global_id(0)] = s;
}
CL
"$CLTRACE" run "$work/inv.cl" --kernel scale --global 64 --local 32 --arg buffer:float:1:fill:2 \
  --arg buffer:float:16:iota --arg buffer:float:64 --arg scalar:int:16 -o "$work/inv.cltrace" > /dev/null || fail "run inv"
got=$("$CLTRACE" stats "$work/inv.cltrace" | awk '$1 == "load" { l = $2 } $1 == "store" { s = $2 } END { print l, s }')
[ "$got" = "1088 64" ] || fail "loads stores = $got, expected 1088 64"
[ "$("$CLTRACE" dump "$work/inv.cltrace" | grep -c '^wi .* load instr 0 ')" = 64 ] || fail "w[0] read more than once"
got=$("$CLTRACE" simulate "$work/inv.cltrace" --sm all --set timing=off --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
print(j['reads'], j['read_misses'])")
[ "$got" = "34 4" ] || fail "reads read_misses = $got, expected 34 4"
echo "ok: a loop-invariant load read once per loop: 1088 loads, 34 reads, 4 misses"
