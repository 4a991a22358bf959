# A loop counter stops at 2^32 - 2 instead of wrapping to 0 (which reads as the loop entered
# again), and the scheduler warns of it: one work-item runs 2^32 + 1 iterations and touches a[i / 2^30] at each multiple of 2^30.
source "$(dirname "$0")/lib.sh"
cat > "$work/long.cl" <<'CL'
__kernel void k(__global int* a) {
  for (ulong i = 0; i < 0x100000001UL; i++)
    if ((i & 0x3FFFFFFF) == 0) a[(i >> 30) & 15] += 1;
}
CL
"$CLTRACE" run "$work/long.cl" --kernel k --global 1 --local 1 --arg buffer:int:16 -o "$work/long.cltrace" > /dev/null ||
  fail "run"
iters=$("$CLTRACE" dump "$work/long.cltrace" | sed -n 's/^wi 0 .* load instr 0 .*iter \[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')
[ "$iters" = "0 1073741824 2147483648 3221225472 4294967294 " ] || fail "iteration counters: $iters"
# The scheduler says so: it cannot tell the later iterations apart.
"$CLTRACE" schedule "$work/long.cltrace" -o "$work/long.sched" > /dev/null 2> "$work/schedule.err" || fail "schedule"
grep -qx "cltrace: warning: workgroup 0, work-item 0: a loop counter stopped at 4294967294 (instruction 0, loop level 0): later iterations of that loop look alike, so the order of its lanes past that point is approximate" \
  "$work/schedule.err" || fail "schedule's warning: $(cat "$work/schedule.err")"
echo "ok: a loop counter stops at 2^32 - 2, and the scheduler says so"
# simulate says it too, on stderr and among its report's warnings (text and JSON), so that a
# program reading the JSON sees it.
"$CLTRACE" simulate "$work/long.cltrace" --json > "$work/sim.json" 2> "$work/sim.err" || fail "simulate --json"
python3 - "$work/sim.json" <<'PY' || fail "JSON warnings: $(cat "$work/sim.json")"
import json, sys
warnings = json.load(open(sys.argv[1]))["warnings"]
assert any("a loop counter stopped at 4294967294" in w for w in warnings), warnings
PY
grep -q "cltrace: warning: workgroup 0, work-item 0: a loop counter stopped" "$work/sim.err" || fail "simulate stderr: $(cat "$work/sim.err")"
"$CLTRACE" simulate "$work/long.cltrace" 2> /dev/null | grep -q "^warning: workgroup 0, work-item 0: a loop counter stopped" ||
  fail "simulate's text report has no warning"
echo "ok: simulate's report carries the scheduler's warning"
