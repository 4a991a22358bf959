# A kernel that prints, under `cltrace wrap`: its lines appear once, as without wrap, whether
# the launch is traced or its trace cannot be written, found before any run (the path is a
# directory) or after the trace run (a pipe, which the trace writer cannot seek in: the trace
# run printed, then the program's own launch printed again).
source "$(dirname "$0")/lib.sh"
cat > "$work/pf.cl" <<'CL'
__kernel void k(__global float* a) {
  size_t i = get_global_id(0);
  if (i < 4) printf("wi %d\n", (int)i);
  a[i] += 1;
}
CL
plain=$("$ONE_BUFFER_HOST" "$work/pf.cl" "" 2 16) || fail "alone: $plain"
[ "$(echo "$plain" | grep -c '^wi ')" -eq 8 ] || fail "alone: $plain"
# (A limit in the environment that is no number of seconds is said and left out.)
wrapped=$(CLTRACE_TRACE_TIMEOUT=soon "$CLTRACE" wrap --out "$work/t" -- "$ONE_BUFFER_HOST" "$work/pf.cl" "" 2 16 \
  2>"$work/err") || fail "wrapped: $(cat "$work/err")"
[ "$plain" = "$wrapped" ] || fail "traced: output differs: $wrapped (alone: $plain)"
grep -F "cltrace: warning: CLTRACE_TRACE_TIMEOUT='soon' is not a number of seconds from 1 to 10^9" "$work/err" >/dev/null ||
  fail "no warning for CLTRACE_TRACE_TIMEOUT: $(cat "$work/err")"
[ "$(cut -f1,2 "$work/t/launches.tsv" | tr '\t\n' ': ')" = "0:k 1:k " ] || fail "launches: $(cat "$work/t/launches.tsv")"
[ "$(echo "$wrapped" | tail -1)" = "context destroyed" ] || fail "the traced launch kept the program's context alive"
echo "ok: a printing kernel's lines appear once when traced, and the context goes when the program lets go of it"
mkdir -p "$work/u/k-0.cltrace"
wrapped=$("$CLTRACE" wrap --out "$work/u" -- "$ONE_BUFFER_HOST" "$work/pf.cl" "" 2 16 2>"$work/err") ||
  fail "wrapped: $(cat "$work/err")"
[ "$plain" = "$wrapped" ] || fail "trace not written: output differs: $wrapped (alone: $plain)"
grep -F "could not trace k launch 0: $work/u/k-0.cltrace: cannot create: it is a directory" "$work/err" >/dev/null ||
  fail "no reason: $(cat "$work/err")"
echo "ok: and once when its trace cannot be written"
mkdir -p "$work/p" && mkfifo "$work/p/k-0.cltrace"
wrapped=$(timeout 120 "$CLTRACE" wrap --out "$work/p" -- "$ONE_BUFFER_HOST" "$work/pf.cl" "" 2 16 2>"$work/err") ||
  fail "wrapped: $(cat "$work/err")"
[ "$plain" = "$wrapped" ] || fail "trace failed after the trace run: output differs: $wrapped (alone: $plain)"
grep -F "could not trace k launch 0: $work/p/k-0.cltrace: cannot be written" "$work/err" >/dev/null ||
  fail "no reason: $(cat "$work/err")"
echo "ok: and once when it cannot be written after the trace run"
