# Barriers in branches the whole workgroup takes alike, each branch with its own barrier loop
# (the shape of Rodinia srad's reduce_kernel: `if (group != last) {...} else {...}`). Valid
# OpenCL that PoCL runs; the count run's checks made PoCL crash, hang or miscount it ("took a
# different path"). Counts by hand, 4 workgroups of 256, the last one apart.
source "$(dirname "$0")/lib.sh"
cat > "$work/ub.cl" <<'CL'
// Groups 0-2: 8 barriers, work-item 255 stores; group 3: df barriers.
__kernel void loops(__global float* s, int gridDim, int df) {
  int bx = get_group_id(0), tx = get_local_id(0), i;
  if (bx != gridDim - 1) {
    for (i = 0; i < 8; i++) barrier(CLK_LOCAL_MEM_FENCE);
    if (tx == 255) s[bx] = 1.0f;
  } else {
    for (i = 0; i < df; i++) barrier(CLK_LOCAL_MEM_FENCE);
  }
}
// srad's reduction: groups 0-2 reduce 256 values in 8 rounds; group 3 in log2(df) rounds, df
// the largest power of two <= nf, and work-item df - 1 adds s[768 + df .. 768 + nf) itself.
__kernel void reduce(__global float* s, int gridDim, int nf) {
  int bx = get_group_id(0), tx = get_local_id(0), i, df = 0;
  __local float p[256];
  p[tx] = s[bx * 256 + tx];
  if (bx != gridDim - 1) {
    for (i = 2; i <= 256; i = 2 * i) {
      if ((tx + 1) % i == 0) p[tx] = p[tx] + p[tx - i / 2];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tx == 255) s[bx * 256] = p[tx];
  } else {
    for (i = 2; i <= 256; i = 2 * i)
      if (nf >= i) df = i;
    for (i = 2; i <= df; i = 2 * i) {
      if ((tx + 1) % i == 0 && tx < df) p[tx] = p[tx] + p[tx - i / 2];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tx == df - 1) {
      for (i = bx * 256 + df; i < bx * 256 + nf; i++) p[tx] = p[tx] + s[i];
      s[bx * 256] = p[tx];
    }
  }
}
CL
kinds() {  # "loads stores barriers" of a trace
  "$CLTRACE" stats "$1" | awk '$1 == "load" { l = $2 } $1 == "store" { s = $2 } $1 == "barrier" { b = $2 } END { print l, s, b }'
}
"$CLTRACE" run "$work/ub.cl" --kernel loops --global 1024 --local 256 --arg buffer:float:4 --arg scalar:int:4 \
  --arg scalar:int:6 -o "$work/loops.cltrace" > /dev/null || fail "loops was not traced"
# 3 x 256 x 8 + 256 x 6 = 7680 barriers; 3 stores.
[ "$(kinds "$work/loops.cltrace")" = "0 3 7680" ] || fail "loops: $(kinds "$work/loops.cltrace")"
echo "ok: loops: 0 loads, 3 stores, 7680 barriers"
"$CLTRACE" run "$work/ub.cl" --kernel reduce --global 1024 --local 256 --arg buffer:float:1024:iota \
  --arg scalar:int:4 --arg scalar:int:100 -o "$work/reduce.cltrace" > /dev/null || fail "reduce was not traced"
# Loads: 1024 + (868 - 832) = 1060; stores 3 + 1; barriers 3 x 256 x 8 + 256 x 6 (df 64) = 7680.
[ "$(kinds "$work/reduce.cltrace")" = "1060 4 7680" ] || fail "reduce: $(kinds "$work/reduce.cltrace")"
echo "ok: reduce: 1060 loads, 4 stores, 7680 barriers"
# Not yet traced: a barrier in a branch after a loop whose trip count is data, and a store under
# the barrier that only work-item 0 makes (review hunt55). PoCL hangs in the instrumented count
# kernel (the plain one runs); with no limit given, cltrace gives up once no work-item has
# returned for 120 s, instead of waiting forever.
cat > "$work/stuck.cl" <<'CL'
__kernel void p5(__global const int* n, __global float* out, int dim) {
  int t = get_local_id(0);
  float s = 0;
  for (int j = 0; j < n[t]; j++) s += 1.0f;
  if (dim > 0) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) out[get_global_id(0)] = s;
  }
}
CL
out=$("$CLTRACE" run "$work/stuck.cl" --kernel p5 --global 256 --local 128 --arg buffer:int:128:iota \
  --arg buffer:float:256 --arg scalar:int:8 -o "$work/stuck.cltrace" 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 0 ]; then  # a driver that runs it: n[t] = t, so t + 1 loads of n[t] (the loop's tests)
  [ "$(kinds "$work/stuck.cltrace")" = "16512 2 256" ] || fail "p5: $(kinds "$work/stuck.cltrace")"
  echo "ok: p5 traced: 16512 loads, 2 stores, 256 barriers"
else
  echo "$out" | grep -F "kernel 'p5': in the count run no work-item has returned for 120 s" > /dev/null ||
    fail "p5: rc $rc: $out"
  echo "ok: p5 given up after 120 s without progress"
fi
