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
