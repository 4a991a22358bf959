# A store on the way out of a loop by `break` issues in the iteration its lanes leave at, as on a
# SIMT GPU: lanes l with l % 4 == j break at iteration j, so each iteration's step of the loop
# body (32, 24, 16, 8 lanes) is followed by a step of the 8 lanes that break there; the store
# after the loop is one step of all 32.
source "$(dirname "$0")/lib.sh"
cat > "$work/brk.cl" <<'CL'
__kernel void k(__global int* a) {
  int i = get_global_id(0);
  for (int j = 0; j < 4; j++) {
    a[i] = j;
    if (j == get_local_id(0) % 4) { a[i] = 99; break; }
  }
  a[i + 64] = 1;
}
CL
"$CLTRACE" run "$work/brk.cl" --kernel k --global 32 --local 32 --arg buffer:int:128 -o "$work/brk.cltrace" > /dev/null ||
  fail "run"
"$CLTRACE" schedule "$work/brk.cltrace" --format csv -o "$work/brk.csv" > /dev/null || fail "schedule"
# step:instruction:lanes, in order
steps=$(python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
out, last = [], None
for r in rows:
    key = (r['step'], r['instruction'])
    if key != last: out.append([r['step'], r['instruction'], 0]); last = key
    out[-1][2] += 1
print(' '.join(f'{s}:{i}:{n}' for s, i, n in out))" "$work/brk.csv")
[ "$steps" = "0:0:32 1:1:8 2:0:24 3:1:8 4:0:16 5:1:8 6:0:8 7:1:8 8:2:32" ] || fail "steps: $steps"
echo "ok: a break's store issues in the iteration its lanes leave at"
