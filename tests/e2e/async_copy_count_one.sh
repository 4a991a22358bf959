# async_work_group_copy of a constant single element in a work-group of 4: work-item 0 loads it
# (round 0), all four wait at the barrier and store. The copy loop used to run a different
# number of rounds per work-item, which made PoCL crash in the trace run on this kernel.
source "$(dirname "$0")/lib.sh"
cat > "$work/one.cl" <<'CL'
__kernel void one(__global const int* src, __global int* dst, __local int* l) {
  int lid = get_local_id(0);
  event_t e = async_work_group_copy(l, src + 16, 1, 0);
  wait_group_events(1, &e);
  dst[lid] = l[0];
}
CL
"$CLTRACE" run "$work/one.cl" --kernel one --global 4 --local 4 --arg buffer:int:32:iota --arg buffer:int:8 \
  --arg local:16 -o "$work/one.cltrace" > "$work/run.out" 2>&1 || fail "run: $(cat "$work/run.out")"
records=$("$CLTRACE" dump "$work/one.cltrace" | grep '^wi' | sed 's/ group .* local ([0-9]*)//')
expected="wi 0 load instr 0 addr 0x40 size 4 flags 0x00 iter [0]
wi 0 barrier instr 1 addr 0x0 size 0 flags 0x03 iter []
wi 0 store instr 2 addr 0x100 size 4 flags 0x00 iter []
wi 1 barrier instr 1 addr 0x0 size 0 flags 0x03 iter []
wi 1 store instr 2 addr 0x104 size 4 flags 0x00 iter []
wi 2 barrier instr 1 addr 0x0 size 0 flags 0x03 iter []
wi 2 store instr 2 addr 0x108 size 4 flags 0x00 iter []
wi 3 barrier instr 1 addr 0x0 size 0 flags 0x03 iter []
wi 3 store instr 2 addr 0x10c size 4 flags 0x00 iter []"
[ "$records" = "$expected" ] || fail "records: $records"
echo "ok: a one-element async copy is traced"
