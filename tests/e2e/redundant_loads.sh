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
