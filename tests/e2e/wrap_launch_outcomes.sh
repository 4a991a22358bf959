# Under `cltrace wrap`: a launch runs with the arguments it was enqueued with even when a
# callback sets others while the layer waits to trace it; launches that run nothing are said
# and listed in not-run.tsv (and are no "--launch N: no such launch"), one waiting for a null
# event runs untraced; a SIGTERM or SIGINT sent to cltrace goes on to the program; unfinished
# traces are removed; a long kernel name is cut to fit.
source "$(dirname "$0")/lib.sh"
H="$LAUNCH_OUTCOMES_HOST"
alone=$("$H" callback) || fail "callback host alone"
[ "$alone" = "x[0] = 1, then 1000 (callbacks: 1)" ] || fail "callback host alone printed: $alone"
wrapped=$("$CLTRACE" wrap --out "$work/cb" -- "$H" callback 2> "$work/cb.err") || fail "wrap callback: $(cat "$work/cb.err")"
[ "$wrapped" = "$alone" ] || fail "under wrap the callback's argument reached the launch: $wrapped"
[ -s "$work/cb/add-0.cltrace" ] && [ -s "$work/cb/add-1.cltrace" ] || fail "traces: $(ls "$work/cb")"
echo "ok: a launch keeps the arguments it was enqueued with"
alone=$("$H" callback-svm) || fail "callback-svm host alone"
[ "$alone" = "x[0] = 1, then 1; svm[0] = 999 (callbacks: 1)" ] || fail "callback-svm host alone printed: $alone"
wrapped=$("$CLTRACE" wrap --out "$work/svm" -- "$H" callback-svm 2> "$work/svm.err") || fail "wrap callback-svm: $(cat "$work/svm.err")"
[ "$wrapped" = "$alone" ] || fail "under wrap the callback's SVM argument was lost: $wrapped"
echo "ok: an SVM argument a callback set is put back after the launch"

alone=$("$H" not-run) || fail "not-run host alone"
mkdir -p "$work/nr"
echo stale > "$work/nr/add-9.cltrace.999999999-1.partial"
wrapped=$("$CLTRACE" wrap --out "$work/nr" --launch 0,1,2,3,4,5,7 -- "$H" not-run 2> "$work/nr.err") ||
  fail "wrap not-run: $(cat "$work/nr.err")"
[ "$wrapped" = "$alone" ] || fail "not-run host under wrap printed: $wrapped (alone: $alone)"
expected="cltrace: the program's add launch 0 was refused by the driver (CL_INVALID_KERNEL_ARGS): nothing ran, nothing to trace
cltrace: the program's add launch 1 was refused by the driver (CL_INVALID_WORK_DIMENSION): nothing ran, nothing to trace
cltrace: the program's add launch 2 has an empty global size: nothing ran, nothing to trace
cltrace: the program's add launch 3 waits for an event that failed: nothing ran, nothing to trace
cltrace: traced add launch 4 -> $work/nr/add-4.cltrace
cltrace: cannot trace add launch 5: its event wait list holds a null event (invalid in OpenCL); it runs untraced
cltrace: warning: removed $work/nr/add-9.cltrace.999999999-1.partial, an unfinished trace: the process writing it ended first
cltrace: 1 launch traced into $work/nr
cltrace: warning: 1 selected launch ran untraced (the reasons are above)
cltrace: warning: --launch 7: the program made no such launch"
[ "$(cat "$work/nr.err")" = "$expected" ] || fail "not-run messages: $(cat "$work/nr.err")"
printf '0\tadd\twas refused by the driver (CL_INVALID_KERNEL_ARGS)\n1\tadd\twas refused by the driver (CL_INVALID_WORK_DIMENSION)\n2\tadd\thas an empty global size\n3\tadd\twaits for an event that failed\n' > "$work/expected.tsv"
cmp -s "$work/nr/not-run.tsv" "$work/expected.tsv" || fail "not-run.tsv: $(cat "$work/nr/not-run.tsv")"
printf '5\tadd\tcannot trace add launch 5: its event wait list holds a null event (invalid in OpenCL)\n' > "$work/expected.tsv"
cmp -s "$work/nr/untraced.tsv" "$work/expected.tsv" || fail "untraced.tsv: $(cat "$work/nr/untraced.tsv")"
case "$alone" in *"null event 0; x[0] = "*) ;; *) fail "PoCL refused the launch waiting for a null event: $alone" ;; esac
echo "ok: launches that run nothing are said and listed; one waiting for a null event runs untraced"

# signal_goes_on NAME NUMBER: sends SIGNAME to a wrap whose program waits; the program must end
# in it and wrap exit with 128 + NUMBER. Job control on: a script's background job would start
# with SIGINT ignored.
signal_goes_on() {
  local name=$1 number=$2 wrap child="" rc=0
  set -m
  "$CLTRACE" wrap --out "$work/$name" -- "$H" wait 2> "$work/$name.err" &
  wrap=$!
  set +m
  for _ in $(seq 100); do
    child=$(cat "/proc/$wrap/task/$wrap/children" 2>/dev/null || true)
    [ -n "$child" ] && break
    sleep 0.1
  done
  [ -n "$child" ] || fail "the program did not start"
  kill -"$name" "$wrap"
  wait "$wrap" || rc=$?
  [ "$rc" -eq $((128 + number)) ] || fail "wrap after SIG$name: exit status $rc, not $((128 + number)): $(cat "$work/$name.err")"
  ! kill -0 "$child" 2>/dev/null || { kill -KILL "$child"; fail "the program kept running after wrap's SIG$name"; }
  grep -q "^cltrace: the program ended in signal $number" "$work/$name.err" || fail "after SIG$name: $(cat "$work/$name.err")"
  echo "ok: a SIG$name to cltrace wrap goes on to the program"
}
signal_goes_on TERM 15
signal_goes_on INT 2

# A kernel name too long for a file name: the trace's name is cut to 255 bytes.
out=$("$CLTRACE" wrap --out "$work/long" -- "$H" long-name 2> "$work/long.err") || fail "wrap long-name: $(cat "$work/long.err")"
[ "$out" = "x[0] = 1" ] || fail "long-name printed: $out"
name="a$(printf 'z%.0s' $(seq 244))-0.cltrace"
[ ${#name} -eq 255 ] || fail "test: name of ${#name} bytes"
[ -s "$work/long/$name" ] || fail "no trace $name: $(ls "$work/long") $(cat "$work/long.err")"
echo "ok: a long kernel name is cut to fit the trace's file name"
