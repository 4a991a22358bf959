# A trace run that never finishes (PoCL spins on the traced version of a kernel that returns
# early on some work-items before a barrier, undefined in OpenCL) is given up after the limit
# with a message naming the barrier and exit status 1: run, predict and wrap, no trace left; and
# so is a count run.
source "$(dirname "$0")/lib.sh"
cat > "$work/early.cl" <<'CL'
__kernel void k(__global float* a) {
  int l = get_local_id(0);
  if (l >= 40) return;
  a[l] = 1;
  barrier(CLK_GLOBAL_MEM_FENCE);
  a[l + 64] = a[63 - l];
}
CL
words="kernel 'k': the trace run has not finished after 2 s of kernel time"
barrier="its barrier [1] may not be reached by every work-item of a workgroup"
launch=(--kernel k --global 64 --local 64 --arg buffer:float:128 --trace-timeout 2)
mkdir -p "$work/tmp"
for command in "run -o $work/early.out" predict; do
  rc=0
  out=$(TMPDIR="$work/tmp" timeout 60 "$CLTRACE" $command "$work/early.cl" "${launch[@]}" 2>&1) || rc=$?
  [ "$rc" -eq 1 ] || fail "$command: exit status $rc, not 1: $out"
  echo "$out" | grep -F "cltrace: error: $words" >/dev/null || fail "$command: no message: $out"
  echo "$out" | grep -F "$barrier" >/dev/null || fail "$command: the barrier not named: $out"
  [ -z "$(ls "$work" | grep early.out || true)" ] || fail "$command left $(ls "$work")"
  [ -z "$(ls -A "$work/tmp")" ] || fail "$command left its temporary folder: $(ls -AR "$work/tmp")"
  echo "ok: ${command%% *} gives up the hung trace run, exit status 1"
done
# A count run that hangs (PoCL spins on this kernel with or without cltrace) is given up as well.
cat > "$work/divb.cl" <<'CL'
__kernel void divb(__global float* a) {
  int i = get_global_id(0);
  if (get_local_id(0) < 8) { a[i] = 1; barrier(CLK_GLOBAL_MEM_FENCE); }
  a[i] += 1;
}
CL
rc=0
out=$(timeout 60 "$CLTRACE" run "$work/divb.cl" --kernel divb --global 32 --local 16 --arg buffer:float:32 \
  --trace-timeout 2 -o "$work/divb.out" 2>&1) || rc=$?
[ "$rc" -eq 1 ] || fail "count run: exit status $rc, not 1: $out"
echo "$out" | grep -F "cltrace: error: kernel 'divb': the count run has not finished after 2 s of kernel time" >/dev/null ||
  fail "count run: no message: $out"
[ ! -e "$work/divb.out" ] || fail "count run left a trace"
echo "ok: a hung count run is given up, exit status 1"
# The unmodified program finishes by itself; under wrap its traced launch hangs and is given up.
[ "$("$ONE_BUFFER_HOST" "$work/early.cl" | head -1)" = "done" ] || fail "the host alone does not finish"
rc=0
out=$(timeout 60 "$CLTRACE" wrap --out "$work/t" --trace-timeout 2 -- "$ONE_BUFFER_HOST" "$work/early.cl" 2>&1) || rc=$?
[ "$rc" -eq 1 ] || fail "wrap: exit status $rc, not 1: $out"
echo "$out" | grep -F "cltrace: error: $words" >/dev/null || fail "wrap: no message: $out"
[ -z "$(ls "$work/t" | grep cltrace || true)" ] || fail "wrap left $(ls "$work/t")"
echo "ok: wrap gives up the hung trace run, exit status 1"
