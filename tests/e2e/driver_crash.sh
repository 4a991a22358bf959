# A driver that crashes in a run (PoCL segfaults on this kernel, whose barrier only some
# work-items reach, with or without cltrace) is named with the run and the barrier, exit status
# 1, and no trace left. Under `wrap` the program ends in the signal, as it does alone, and
# cltrace names the run.
source "$(dirname "$0")/lib.sh"
ulimit -c 0
cat > "$work/crash.cl" <<'CL'
__kernel void k(__global int* a) {
  __local int t[16];
  int l = get_local_id(0);
  if (l < 4) { t[l] = l; barrier(CLK_LOCAL_MEM_FENCE); a[get_global_id(0)] = t[(l + 1) & 3]; }
}
CL
words="cltrace: error: the OpenCL driver crashed (SIGSEGV, a segmentation fault) in the count run of kernel 'k': its barrier [0] may not be reached by every work-item of a workgroup (warned above), and PoCL can crash on such a barrier; let every work-item reach each barrier"
launch=(--kernel k --global 64 --local 16 --arg buffer:int:80)
mkdir -p "$work/tmp"
# Run several times: PoCL's worker threads crash together, and LLVM (loaded by the driver)
# replaces cltrace's handlers with its own, which reset the signal as it arrives; before cltrace
# put its handlers back at each run, 1 run in 10 ended in the signal with nothing said.
for attempt in 1 2 3 4 5; do
for command in "run -o $work/crash.out" predict; do
  rc=0
  out=$(TMPDIR="$work/tmp" timeout 120 "$CLTRACE" $command "$work/crash.cl" "${launch[@]}" 2>&1) || rc=$?
  [ "$rc" -eq 1 ] || fail "$command: exit status $rc, not 1: $out"
  echo "$out" | grep -Fx "$words" >/dev/null || fail "$command: no message: $out"
  [ -z "$(ls "$work" | grep crash.out || true)" ] || fail "$command left $(ls "$work")"
  [ -z "$(ls -A "$work/tmp")" ] || fail "$command left its temporary folder: $(ls -AR "$work/tmp")"
done
done
echo "ok: run and predict name the run the driver crashed in, exit status 1 (5 times each)"

sed 's/int\* a/float* a/; s/__local int/__local float/' "$work/crash.cl" > "$work/crashf.cl"
rc=0
out=$(timeout 120 "$CLTRACE" wrap --out "$work/w" -- "$ONE_BUFFER_HOST" "$work/crashf.cl" "" 1 16 2>&1) || rc=$?
[ "$rc" -eq 139 ] || fail "wrap: exit status $rc, not 139 (SIGSEGV): $out"
echo "$out" | grep -Fx "cltrace: error: the program ended in signal 11 (Segmentation fault) in the count run of kernel 'k': its barrier [0] may not be reached by every work-item of a workgroup (warned above), and PoCL can crash on such a barrier; let every work-item reach each barrier: the OpenCL driver crashed there" >/dev/null ||
  fail "wrap: no message: $out"
[ -z "$(ls -A "$work/w" | grep -v -e launches.tsv -e .launch-counter || true)" ] || fail "wrap left $(ls -A "$work/w")"
echo "ok: wrap names the run the driver crashed in"
# The same when a launcher starts the program and passes its signal on (timeout does): the run
# is the one the crashed process left, not the launcher's.
rc=0
out=$(timeout 120 "$CLTRACE" wrap --out "$work/w2" -- timeout 100 "$ONE_BUFFER_HOST" "$work/crashf.cl" "" 1 16 2>&1) || rc=$?
[ "$rc" -eq 139 ] || fail "wrap with a launcher: exit status $rc, not 139 (SIGSEGV): $out"
echo "$out" | grep -F "in the count run of kernel 'k'" | grep -F ": the OpenCL driver crashed there" >/dev/null ||
  fail "wrap with a launcher: no message: $out"
[ -z "$(ls -A "$work/w2" | grep -v -e launches.tsv -e .launch-counter || true)" ] || fail "wrap left $(ls -A "$work/w2")"
echo "ok: wrap names the run a launched program's driver crashed in"

# A program that crashes outside the driver: wrap says it ended in the signal (its own exit
# status, 128 + 11, is no signal a shell would report).
rc=0
out=$("$CLTRACE" wrap --out "$work/w3" -- sh -c 'kill -SEGV $$' 2>&1) || rc=$?
[ "$rc" -eq 139 ] || fail "wrap of a crashing program: exit status $rc, not 139: $out"
echo "$out" | grep -Fx "cltrace: the program ended in signal 11 (Segmentation fault)" >/dev/null ||
  fail "wrap of a crashing program: no message: $out"
echo "ok: wrap says a program ended in a signal"
