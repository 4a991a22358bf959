# Each traced instruction is named by its place in the kernel's source: cltrace compiles with
# line tables (and strips them from the kernels it runs), so the trace's instruction texts begin
# with "line L:C" (a header's with its path first), and dump, stats and simulate show them.
# Lines and columns by hand: a load is placed at its subscript's first character, a store at
# its `=`, an async copy's accesses and wait_group_events' barrier at the builtin's call.
source "$(dirname "$0")/lib.sh"
mkdir -p "$work/inc"
cat > "$work/inc/util.h" <<'CL'
// A helper in a header.
float twice(__global const float* p, size_t i) {
  return 2.0f * p[i];
}
CL
cat > "$work/sl.cl" <<'CL'
#include "util.h"
__kernel void sl(__global const float* in, __global float* out, __local float* tile) {
  size_t g = get_global_id(0);
  event_t e = async_work_group_copy(tile, in, 32, 0);
  wait_group_events(1, &e);
  out[g] = twice(in, g) + tile[get_local_id(0)];
}
CL
"$CLTRACE" run "$work/sl.cl" --kernel sl -I "$work/inc" --global 32 --local 32 --arg buffer:float:32 \
  --arg buffer:float:32 --arg local:128 -o "$work/sl.cltrace" > /dev/null || fail "run"
"$CLTRACE" dump --limit 0 "$work/sl.cltrace" > "$work/dump" || fail "dump"
for want in "[0] load 4B depth 1 loop 0: line 4:15: %" "[1] barrier 0B depth 0: line 5:3: call " \
            "[2] load 4B depth 0: $work/inc/util.h line 3:17: %" "[3] store 4B depth 0: line 6:10: store float"; do
  grep -F -- "$want" "$work/dump" > /dev/null || fail "dump lacks '$want': $(cat "$work/dump")"
done
grep -F "!dbg" "$work/dump" > /dev/null && fail "metadata attachments in the texts: $(cat "$work/dump")"
echo "ok: instruction texts begin with their source lines"

"$CLTRACE" stats "$work/sl.cltrace" > "$work/stats" || fail "stats"
grep -F "  instr 2 load                      32  $work/inc/util.h line 3:17" "$work/stats" > /dev/null ||
  fail "stats: $(cat "$work/stats")"
"$CLTRACE" simulate "$work/sl.cltrace" --set timing=off > "$work/sim" || fail "simulate"
# in[0..31] is one line: the copy misses once; twice() hits it; the store writes one line.
grep -F "       0          1          1          0  100.00%          0          0  line 4:15" "$work/sim" > /dev/null &&
  grep -F "       2          1          0          0    0.00%          0          0  $work/inc/util.h line 3:17" "$work/sim" > /dev/null &&
  grep -F "       3          0          0          0        -          1          0  line 6:10" "$work/sim" > /dev/null ||
  fail "simulate: $(cat "$work/sim")"
got=$("$CLTRACE" simulate "$work/sl.cltrace" --set timing=off --json | python3 -c "
import json, sys
print(' '.join(i['source'] for i in json.load(sys.stdin)['per_instruction']))")
[ "$got" = "line 4:15 line 5:3 $work/inc/util.h line 3:17 line 6:10" ] || fail "simulate --json sources: $got"
echo "ok: stats and simulate name the source lines"

# The kernels the device runs carry no debug information.
(cd "$work" && "$CLTRACE" instrument sl.cl -k sl -I inc --emit-ll -o ll > /dev/null) || fail "instrument"
for f in count.ll trace.ll; do
  grep -E '!dbg|DICompileUnit|llvm\.dbg' "$work/ll/$f" > /dev/null && fail "$f has debug information"
done
echo "ok: the instrumented kernels are stripped of the line tables"

# OpenCL C 2.0: clang calls the generic vload4; the loads of its elements cltrace makes of it
# keep the call's line.
cat > "$work/v20.cl" <<'CL'
__kernel void v20(__global const float* p, __global float* out) {
  int i = get_global_id(0);
  float4 v = vload4(i, p);
  out[i] = v.w;
}
CL
"$CLTRACE" instrument "$work/v20.cl" --kernel v20 --build-options=-cl-std=CL2.0 -o "$work/v20" > "$work/v20.txt" ||
  fail "instrument v20"
grep -F "[0] load 4B depth 0: line 3:14: %" "$work/v20.txt" > /dev/null ||
  fail "CL2.0 vload4 without its line: $(cat "$work/v20.txt")"
echo "ok: a CL2.0 vload keeps its source line"
