# Loops that no lane runs one after the other are told apart by the loop table the trace pass
# writes into the trace header: a warp runs the loop of an if's first branch to its end before
# the loop of the other branch (lanes 0-15: loop 0 three times; lanes 16-31: loop 1 three
# times), and a loop's lanes all leave it before the next loop starts (even lanes: loop 0 once,
# then loop 1 twice; odd lanes: loop 0 three times). Without the table the scheduler had only
# the counters, which interleaved the loops (0, 1, 0, 1, ...).
source "$(dirname "$0")/lib.sh"
cat > "$work/loops.cl" <<'CL'
__kernel void branches(__global int* a, __global int* b) {
  int l = get_local_id(0);
  if (l < 16) {
    for (int i = 0; i < 3; ++i) a[l + 32 * i] = i;
  } else {
    for (int i = 0; i < 3; ++i) b[l + 32 * i] = -i;
  }
}
__kernel void siblings(__global int* a, __global int* b) {
  int l = get_local_id(0);
  int first = l % 2 == 0 ? 1 : 3, second = l % 2 == 0 ? 2 : 0;
  for (int i = 0; i < first; ++i) a[l + 32 * i] = i;
  for (int i = 0; i < second; ++i) b[l + 32 * i] = i;
}
CL
got=$(traced_steps "$work/loops.cl" branches --arg buffer:int:128 --arg buffer:int:128)
[ "$got" = "0:0:16 1:0:16 2:0:16 3:1:16 4:1:16 5:1:16" ] || fail "branches: $got"
echo "ok: the loop of an if's first branch runs to its end before the other branch's"
got=$(traced_steps "$work/loops.cl" siblings --arg buffer:int:128 --arg buffer:int:128)
[ "$got" = "0:0:32 1:0:16 2:0:16 3:1:16 4:1:16" ] || fail "siblings: $got"
echo "ok: every lane leaves a loop before the next loop starts"
# The loop table as dump prints it.
for k in branches siblings; do
  "$CLTRACE" dump --limit 0 "$work/loops-$k.cltrace" > "$work/$k.dump" || fail "dump $k"
  for line in "  [0] store 4B depth 1 loop 0: " "  [1] store 4B depth 1 loop 1: "; do
    grep -F "$line" "$work/$k.dump" > /dev/null || fail "$k dump: $(cat "$work/$k.dump")"
  done
  for line in "loops: 2" "  loop 0: outermost" "  loop 1: outermost"; do
    grep -Fx "$line" "$work/$k.dump" > /dev/null || fail "$k dump: $(cat "$work/$k.dump")"
  done
done
echo "ok: dump prints the loop table"
