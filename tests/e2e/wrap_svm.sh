# An argument set to a shared-virtual-memory pointer after a buffer (svm_host): under `cltrace
# wrap` the program prints what it prints alone; the buffer launch is traced, the SVM one runs
# untraced with the reason (it was traced on the buffer, which it then wrote twice).
source "$(dirname "$0")/lib.sh"
plain=$("$SVM_HOST")
[ "$plain" = "svm 103 103
buffer 3 3" ] || fail "svm host alone: $plain"
wrapped=$("$CLTRACE" wrap --out "$work/t" -- "$SVM_HOST" 2>"$work/err") || fail "wrapped: $(cat "$work/err")"
[ "$plain" = "$wrapped" ] || fail "output differs: $wrapped (alone: $plain)"
grep -F "could not trace add launch 1: argument 0 (x) is a shared virtual memory pointer (clSetKernelArgSVMPointer)" \
  "$work/err" >/dev/null || fail "no reason for launch 1: $(cat "$work/err")"
[ "$(cut -f1,2 "$work/t/launches.tsv" | tr '\t\n' ': ')" = "0:add " ] || fail "launches: $(cat "$work/t/launches.tsv")"
"$CLTRACE" stats "$work/t/add-0.cltrace" | grep -E "^records: 512$" >/dev/null || fail "add-0: $("$CLTRACE" stats "$work/t/add-0.cltrace")"
echo "ok: an SVM pointer argument runs untraced, the program's results unchanged"
