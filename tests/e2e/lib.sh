# Helpers for the end-to-end scripts: a scratch directory and assertions that say what failed.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_error "words" command...: the command must exit non-zero and print the words.
expect_error() {
  local words=$1; shift
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  [ "$rc" -ne 0 ] || fail "expected failure of: $* (output: $out)"
  # Checks in these scripts read all of their input (no grep -q after a pipe): with pipefail, a
  # grep that leaves at the first match can fail the writer (SIGPIPE), which made a check fail
  # now and then even though the words were there.
  echo "$out" | grep -F -- "$words" >/dev/null || fail "expected '$words' from: $* (got: $out)"
  echo "ok: $words"
}
# schedule_steps CSV: a schedule (cltrace schedule --format csv) as "step:instruction:lanes" per
# step, in order.
schedule_steps() {
  python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
out, last = [], None
for r in rows:
    key = (r['step'], r['instruction'])
    if key != last: out.append([r['step'], r['instruction'], 0]); last = key
    out[-1][2] += 1
print(' '.join(f'{s}:{i}:{n}' for s, i, n in out))" "$1"
}
# traced_steps CL KERNEL ARGS...: traces KERNEL of the file CL over one workgroup of 32
# work-items (cltrace run ARGS; the trace is $work/NAME-KERNEL.cltrace, NAME the file's) and
# prints its warp schedule as schedule_steps does.
traced_steps() {
  local cl=$1 kernel=$2
  shift 2
  local base
  base="$work/$(basename "$cl" .cl)-$kernel"
  "$CLTRACE" run "$cl" --kernel "$kernel" --global 32 --local 32 "$@" -o "$base.cltrace" > /dev/null ||
    fail "run $kernel of $cl"
  "$CLTRACE" schedule "$base.cltrace" --format csv -o "$base.csv" > /dev/null || fail "schedule $kernel of $cl"
  schedule_steps "$base.csv"
}
