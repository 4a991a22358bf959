# The same launch traced with one and with two PoCL threads gives byte-identical trace files.
source "$(dirname "$0")/lib.sh"
for kernel in mm stencil; do
  POCL_MAX_PTHREAD_COUNT=1 "$CLTRACE" run "$KERNELS/$kernel.cl" -o "$work/$kernel-1.cltrace" >/dev/null
  POCL_MAX_PTHREAD_COUNT=2 "$CLTRACE" run "$KERNELS/$kernel.cl" -o "$work/$kernel-2.cltrace" >/dev/null
  cmp "$work/$kernel-1.cltrace" "$work/$kernel-2.cltrace" || fail "$kernel traces differ"
  "$CLTRACE" run "$KERNELS/$kernel.cl" --compress -o "$work/$kernel-z.cltrace" >/dev/null
  "$CLTRACE" dump "$work/$kernel-1.cltrace" --limit 1000 | tail -n +2 > "$work/a.txt"
  "$CLTRACE" dump "$work/$kernel-z.cltrace" --limit 1000 | tail -n +2 > "$work/b.txt"
  cmp "$work/a.txt" "$work/b.txt" || fail "$kernel compressed trace reads differently"
  echo "ok: $kernel deterministic"
done

# Simulation runs spread over several threads give the same report as on one thread, in text
# and in JSON.
for kernel in mm stencil; do
  for format in "" --json; do
    "$CLTRACE" simulate "$work/$kernel-1.cltrace" --runs 7 --sm random $format --threads 1 > "$work/s1" 2>&1
    "$CLTRACE" simulate "$work/$kernel-1.cltrace" --runs 7 --sm random $format --threads 3 > "$work/s3" 2>&1
    cmp "$work/s1" "$work/s3" || fail "$kernel simulate $format differs between 1 and 3 threads"
  done
  grep -q "runs: 7, median miss rate" "$work/s1" || grep -q '"count": 7' "$work/s1" || fail "no runs in $(head "$work/s1")"
  echo "ok: $kernel simulation independent of its thread count"
done
