# Writing components of a global vector is recorded as clang -O2 for NVPTX writes them: v[i].y = 1
# for 32 work-items is 32 stores of 4 bytes at 16 * i + 4 (4 lines of 128 bytes) and no load,
# where clang's load-insert-store of the whole vector made 4 read requests too; more components,
# side by side (.zw) or apart (.xz), stay that load and store (ld/st.global.v4.f32).
source "$(dirname "$0")/lib.sh"
cat > "$work/cw.cl" <<'CL'
__kernel void one(__global float4* v) { v[get_global_id(0)].y = 1.0f; }
__kernel void apart(__global float4* v) { v[get_global_id(0)].xz = (float2)(1.0f, 2.0f); }
__kernel void two(__global float4* v) { v[get_global_id(0)].zw = (float2)(1.0f, 2.0f); }
CL
for k in one apart two; do
  "$CLTRACE" run "$work/cw.cl" --kernel $k --global 32 --local 32 --arg buffer:float4:32 -o "$work/$k.cltrace" > /dev/null ||
    fail "run $k"
done
"$CLTRACE" dump --limit 2 "$work/one.cltrace" > "$work/one.dump" || fail "dump"
grep -F "wi 1 group (0) local (1) store instr 0 addr 0x14 size 4 " "$work/one.dump" > /dev/null || fail "one: $(cat "$work/one.dump")"
grep -F "records: 32" "$work/one.dump" > /dev/null || fail "one records: $(cat "$work/one.dump")"
counts() {
  "$CLTRACE" simulate "$1" --runs 1 --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
print(j['reads'], j['writes'], j['requests_before_coalescing'])"
}
got=$(counts "$work/one.cltrace")
[ "$got" = "0 4 32" ] || fail "one: reads writes before-coalescing = $got"
echo "ok: a component write is 32 four-byte stores in 4 lines, no load"
for k in apart two; do
  got=$(counts "$work/$k.cltrace")
  [ "$got" = "4 4 64" ] || fail "$k: reads writes before-coalescing = $got"
done
echo "ok: two components (apart or side by side) stay the whole vector's load and store"
# The count run checks what the kernel touches, the component alone (a store of 4 bytes, as a GPU
# compiler makes it): v[0].y of an 8-byte buffer (bytes 4-7) lies inside it; of a 4-byte buffer
# it does not.
"$CLTRACE" run "$work/cw.cl" --kernel one --global 1 --local 1 --arg buffer:float:2 -o "$work/in.cltrace" > /dev/null ||
  fail "v[0].y of an 8-byte buffer"
expect_error "1 work-item accesses memory outside their buffers" \
  "$CLTRACE" run "$work/cw.cl" --kernel one --global 1 --local 1 --arg buffer:float:1 -o "$work/oob.cltrace"
