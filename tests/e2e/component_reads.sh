# Reading components of a global vector is recorded as clang -O2 for NVPTX reads them: in[i].y
# for 32 work-items is 32 loads of 4 bytes at 16 * i + 4, where clang's load of the whole vector
# was 16 bytes. That changes requests once the 16-byte loads would go per quarter-warp:
# in[i / 4].y (8 vectors, one 128-byte line) is 1 request, where 16-byte lanes made 4 (one per
# quarter); in[i / 2].z + in[i / 2].w is 8 bytes at +8 a lane, per half-warp: 2 requests.
# A swizzle stored as a vector (out[i] = in[i / 2].zw) and components apart (.xz) stay the
# whole vector, as NVPTX loads it (ld.global.v4.f32): 4 requests.
source "$(dirname "$0")/lib.sh"
cat > "$work/cr.cl" <<'CL'
__kernel void y(__global const float4* in, __global float* out) { size_t i = get_global_id(0); out[i] = in[i].y; }
__kernel void quarter(__global const float4* in, __global float* out) { size_t i = get_global_id(0); out[i] = in[i / 4].y; }
__kernel void sum(__global const float4* in, __global float* out) {
  size_t i = get_global_id(0);
  float4 v = in[i / 2];
  out[i] = v.z + v.w;
}
__kernel void pairs(__global const float4* in, __global float2* out) { size_t i = get_global_id(0); out[i] = in[i / 2].zw; }
__kernel void apart(__global const float4* in, __global float2* out) { size_t i = get_global_id(0); out[i] = in[i / 4].xz; }
CL
for k in y quarter sum pairs apart; do
  "$CLTRACE" run "$work/cr.cl" --kernel $k --global 32 --local 32 --arg buffer:float4:32 --arg buffer:float4:32 \
    -o "$work/$k.cltrace" > /dev/null || fail "run $k"
done
"$CLTRACE" dump --limit 4 "$work/y.cltrace" > "$work/y.dump" || fail "dump"
grep -F "wi 1 group (0) local (1) load instr 0 addr 0x14 size 4 " "$work/y.dump" > /dev/null || fail "y: $(cat "$work/y.dump")"
"$CLTRACE" dump --limit 4 "$work/sum.cltrace" > "$work/sum.dump" || fail "dump"
grep -F "wi 1 group (0) local (1) load instr 0 addr 0x8 size 8 " "$work/sum.dump" > /dev/null ||
  fail "sum: $(cat "$work/sum.dump")"
"$CLTRACE" dump --limit 4 "$work/pairs.cltrace" > "$work/pairs.dump" || fail "dump"
grep -F "wi 1 group (0) local (1) load instr 0 addr 0x0 size 16 " "$work/pairs.dump" > /dev/null ||
  fail "pairs: $(cat "$work/pairs.dump")"
reads() {
  "$CLTRACE" simulate "$1" --runs 1 --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
print(j['reads'], j['read_misses'])"
}
for expected in "y 4 4" "quarter 1 1" "sum 2 2" "pairs 4 2" "apart 4 1"; do
  set -- $expected
  got=$(reads "$work/$1.cltrace")
  [ "$got" = "$2 $3" ] || fail "$1: reads read_misses = $got, expected $2 $3"
  echo "ok: $1: $2 read requests, $3 misses"
done
