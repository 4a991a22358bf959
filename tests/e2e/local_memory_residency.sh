# Workgroups per SM are limited by the __local memory each uses: 48 KB of shared memory beside a
# 16 KB L1 (gtx480-16k) holds one workgroup of 32 KB. Each workgroup of 256 work-items reads its
# own 4 KB (32 lines) of `in` four times: 128 read requests a workgroup, the 32 first touches
# miss, and alone on its SM it keeps its 32 lines (one per set), so 32 misses of 128 reads: 25%.
# (With 8 workgroups an SM, as before the limit, their 32 KB thrash the 16 KB L1.)
source "$(dirname "$0")/lib.sh"
cat > "$work/lmem.cl" <<'CL'
__kernel void own(__global const float* in, __global float* out) {
  __local float scratch[8192];
  int lid = get_local_id(0);
  int base = get_group_id(0) * 1024;
  float s = 0.0f;
  for (int r = 0; r < 4; r++)
    for (int j = lid; j < 1024; j += 256) s += in[base + j];
  for (int j = lid; j < 8192; j += 256) scratch[j] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = scratch[(lid * 33) & 8191];
}
__kernel void arg(__global const float* in, __global float* out, __local float* scratch) {
  int lid = get_local_id(0);
  int base = get_group_id(0) * 1024;
  float s = 0.0f;
  for (int r = 0; r < 4; r++)
    for (int j = lid; j < 1024; j += 256) s += in[base + j];
  for (int j = lid; j < 8192; j += 256) scratch[j] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = scratch[(lid * 33) & 8191];
}
CL
launch=(--global 30720 --local 256 --arg buffer:float:122880:random --arg buffer:float:30720)
"$CLTRACE" run "$work/lmem.cl" --kernel own "${launch[@]}" -o "$work/own.cltrace" > /dev/null || fail "run own"
"$CLTRACE" run "$work/lmem.cl" --kernel arg "${launch[@]}" --arg local:32768 -o "$work/arg.cltrace" > /dev/null ||
  fail "run arg"
for k in own arg; do
  out=$("$CLTRACE" dump "$work/$k.cltrace" --limit 0)
  echo "$out" | grep -Fx "local memory: 32768 bytes per workgroup" > /dev/null || fail "$k: dump: $out"
  out=$("$CLTRACE" simulate "$work/$k.cltrace" --runs 3 --sm all --json)
  python3 - "$out" <<'PY' || fail "$k: simulate: $out"
import json, sys
r = json.loads(sys.argv[1])
# 120 workgroups of 128 reads and 32 misses each, over every SM.
assert (r["reads"], r["read_misses"], r["misses"]["capacity"]) == (15360, 3840, 0), (r["reads"], r["read_misses"])
assert r["config"]["local_memory_per_sm"] == 49152
PY
done
echo "ok: a workgroup of 32 KB of __local memory is alone on its SM: 25% (declared or as an argument)"
# Without the limit the eight workgroups an SM thrash its L1: capacity misses.
out=$("$CLTRACE" simulate "$work/own.cltrace" --runs 1 --sm all --json --set local_memory_per_sm=0)
python3 -c "import json,sys; r=json.loads(sys.argv[1]); assert r['misses']['capacity'] > 0 and r['read_misses'] > 3840" "$out" ||
  fail "without the limit: $out"
echo "ok: local_memory_per_sm=0 lifts the limit"
# 16 KB of shared memory beside a 48 KB L1: the GPU would refuse the launch.
expect_error "configuration key 'local_memory_per_sm': a workgroup of the kernel uses 32768 bytes of __local memory, more than the 16384 an SM has" \
  "$CLTRACE" simulate "$work/own.cltrace" --config gtx480-48k
