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
# A barrier in a branch after a loop whose trip count is data, and a store under the barrier
# that only work-item 0 makes (review hunt55): PoCL hung in the instrumented count kernel (the
# plain one runs) while the store's bounds check was an if/else; the checks of kernels with
# barriers now add no branch (guard_without_branch.cl). The loop's test reads n[t], which the
# loop does not change: once per work-item, as a GPU compiler hoists it (invariant_loads.cl): 256
# loads, 2 stores, 256 barriers.
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
  --arg buffer:float:256 --arg scalar:int:8 --trace-timeout 60 -o "$work/stuck.cltrace" 2>&1) || fail "p5: $out"
[ "$(kinds "$work/stuck.cltrace")" = "256 2 256" ] || fail "p5: $(kinds "$work/stuck.cltrace")"
echo "ok: p5 traced: 256 loads, 2 stores, 256 barriers"

# SHOC's spmv_csr_vector: a row per 32 work-items, its reduction's barriers inside `if (myRow <
# dim)`, which every workgroup takes whole here (128 rows of 8 values, 4 rows per workgroup). The
# trace run took another path than the count run ("3968 work-items produced fewer record units").
# Loads: both row delimiters in each of 4096 work-items, and cols[j], val[j], vec[col] in the 8
# work-items of each row with a value: 8192 + 3 x 1024 = 11264; stores: out[row] by the first of
# each row, 128; barriers: 1 + 5 rounds (bar 16, 8, 4, 2, 1) in every work-item, 6 x 4096 = 24576.
cat > "$work/spmv.cl" <<'CL'
__kernel void spmv_csr_vector_kernel(__global const float* restrict val, __global const float* restrict vec,
                                     __global const int* restrict cols, __global const int* restrict rowDelimiters,
                                     const int dim, const int vecWidth, const int partialWidth,
                                     __global float* restrict out, __local volatile float* partialSums) {
  int t = get_local_id(0);
  int id = t & (vecWidth - 1);
  int vecsPerBlock = get_local_size(0) / vecWidth;
  int myRow = (get_group_id(0) * vecsPerBlock) + (t / vecWidth);
  partialSums[t] = 0;
  if (myRow < dim) {
    int vecStart = rowDelimiters[myRow];
    int vecEnd = rowDelimiters[myRow + 1];
    float mySum = 0;
    for (int j = vecStart + id; j < vecEnd; j += vecWidth) {
      int col = cols[j];
      mySum += val[j] * vec[col];
    }
    partialSums[t] = mySum;
    barrier(CLK_LOCAL_MEM_FENCE);
    int bar = partialWidth / 2;
    while (bar > 0) {
      if (id < bar) partialSums[t] += partialSums[t + bar];
      barrier(CLK_LOCAL_MEM_FENCE);
      bar = bar / 2;
    }
    if (id == 0) out[myRow] = partialSums[t];
  }
}
CL
python3 -c "
import struct, sys
open(sys.argv[1], 'wb').write(struct.pack('<129i', *[8 * i for i in range(129)]))
open(sys.argv[2], 'wb').write(struct.pack('<1024i', *[(37 * i) % 512 for i in range(1024)]))" "$work/rows.bin" "$work/cols.bin"
out=$("$CLTRACE" run "$work/spmv.cl" --kernel spmv_csr_vector_kernel --global 4096 --local 128 \
  -a buffer:float:1024:random:1 -a buffer:float:512:random:2 -a "buffer:int:1024:file:$work/cols.bin" \
  -a "buffer:int:129:file:$work/rows.bin" -a scalar:int:128 -a scalar:int:32 -a scalar:int:32 -a buffer:float:128 \
  -a local:512 --trace-timeout 60 -o "$work/spmv.cltrace" 2>&1) || fail "spmv_csr_vector: $out"
[ "$(kinds "$work/spmv.cltrace")" = "11264 128 24576" ] || fail "spmv_csr_vector: $(kinds "$work/spmv.cltrace")"
echo "ok: spmv_csr_vector traced: 11264 loads, 128 stores, 24576 barriers"
# A load before a branch on loaded data, after a barrier in a uniform branch, and used on one way
# only: it stays before the branch (a load moved into the way was counted differently by PoCL's
# count and trace runs: "took a different path"). 8 work-items, n = 5: per work-item F[47],
# U[22], cf[9].x (a constant load), F[8] and out[2i + 1] stored, and the barrier.
cat > "$work/sink.cl" <<'CL'
__kernel void k(__global float* f, __global uchar* u, __constant float4* cf, __global float* out, int n) {
  int i = get_global_id(0);
  __global float* F = f + i * 64;
  __global uchar* U = u + i * 64;
  uint t = 0;
  if (n > 4) {
    barrier(CLK_GLOBAL_MEM_FENCE);
    uchar l = U[22];
    if (F[47] > 0.8f) t = 1; else t = l;
  }
  F[8] = cf[9].x;
  out[i * 2 + 1] = t;
}
CL
out=$("$CLTRACE" run "$work/sink.cl" --kernel k --global 8 --local 4 -a buffer:float:512:random -a buffer:uchar:512:random \
  -a buffer:float4:16:random -a buffer:float:256:zeros -a scalar:int:5 -o "$work/sink.cltrace" 2>&1) || fail "sink: $out"
[ "$(kinds "$work/sink.cltrace")" = "16 16 8" ] || fail "sink: $(kinds "$work/sink.cltrace")"
echo "ok: a load after a barrier in a branch stays where it is: traced"
