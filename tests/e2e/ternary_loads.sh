# A conditional whose ways only pick a value loaded before it is a select, as clang -O2 makes it
# (NVPTX: ld, ld, ld, selp): out[i] = f[i] > 0 ? a[i] : b[i] (through private variables) over
# 256 work-items reads a, b and f 256 times each, not a[i] where f[i] > 0 and b[i] elsewhere.
# Each of the 8 warps reads one line of each: 24 reads, all cold misses (17 reads if b[i] were
# read only by work-item 0, the one with f[i] = 0).
source "$(dirname "$0")/lib.sh"
cat > "$work/sel.cl" <<'CL'
__kernel void sel(__global const float* a, __global const float* b, __global const int* f, __global float* out) {
  int i = get_global_id(0);
  float v = a[i];
  float w = b[i];
  out[i] = f[i] > 0 ? v : w;
}
CL
"$CLTRACE" run "$work/sel.cl" --kernel sel --global 256 --local 64 --arg buffer:float:256:random \
  --arg buffer:float:256:random --arg buffer:int:256:iota --arg buffer:float:256 -o "$work/sel.cltrace" > /dev/null ||
  fail "run"
got=$("$CLTRACE" stats "$work/sel.cltrace" | awk '$1 == "arg" { printf "%s=%s ", $3, $4 }')
[ "$got" = "a=256 b=256 f=256 out=256 " ] || fail "accesses by buffer: $got"
got=$("$CLTRACE" simulate "$work/sel.cltrace" --sm all --set timing=off --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
print(j['reads'], j['read_misses'], j['writes'])")
[ "$got" = "24 24 8" ] || fail "reads read_misses writes = $got, expected 24 24 8"
echo "ok: both values of a conditional read by every work-item: 768 loads, 24 reads"
