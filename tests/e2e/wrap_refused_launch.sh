# A launch the driver refuses did not run: under `cltrace wrap` the program gets the driver's
# error as alone, and the launch is not listed as one that ran untraced (it was, with the reason
# cltrace could not trace it, though nothing ran).
source "$(dirname "$0")/lib.sh"
cat > "$work/fixed.cl" <<'CL'
__kernel __attribute__((reqd_work_group_size(16, 1, 1))) void k(__global float* a) { a[get_global_id(0)] += 1.0f; }
CL
# one_buffer_host launches 64 work-items in work-groups of 32: CL_INVALID_WORK_GROUP_SIZE (-54).
"$ONE_BUFFER_HOST" "$work/fixed.cl" "" 1 32 > "$work/plain.out" 2> "$work/plain.err" && fail "the launch ran alone"
status=$?
wrapped_status=0
"$CLTRACE" wrap --out "$work/t" -- "$ONE_BUFFER_HOST" "$work/fixed.cl" "" 1 32 > "$work/wrapped.out" 2> "$work/err" ||
  wrapped_status=$?
[ "$wrapped_status" = "$status" ] || fail "exit status $wrapped_status under wrap, $status alone: $(cat "$work/err")"
grep -F "clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr) failed: -54" \
  "$work/err" > /dev/null || fail "the program did not see the driver's error: $(cat "$work/err")"
grep -F "cltrace: the program's k launch 0 was refused by the driver (CL_INVALID_WORK_GROUP_SIZE): nothing ran, nothing to trace" \
  "$work/err" > /dev/null || fail "no message: $(cat "$work/err")"
! grep -q "untraced" "$work/err" || fail "said to run untraced: $(cat "$work/err")"
[ ! -s "$work/t/untraced.tsv" ] || fail "untraced.tsv: $(cat "$work/t/untraced.tsv")"
echo "ok: a launch the driver refuses gets its error and is not listed as untraced"
