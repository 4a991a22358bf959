# A launch whose records exceed --trace-buffer-mib is traced in slices of work-group layers:
# the file is the same byte for byte as one made in one piece, for a 2-D launch (mm, layers of
# 16x16 groups along y) and a 3-D one (the stencil, layers along z).
source "$(dirname "$0")/lib.sh"
"$CLTRACE" run "$KERNELS/mm.cl" --global 128,128 --local 16,16 --arg buffer:float:16384:random:1 \
  --arg buffer:float:16384:random:2 --arg buffer:float:16384 --arg scalar:int:128 -o "$work/mm-whole.cltrace" > /dev/null
# 128x128 work-items x (2 x 128 loads + 1 store) x 16 bytes = 67 MB: 1 MiB slices hold one layer each.
"$CLTRACE" run "$KERNELS/mm.cl" --global 128,128 --local 16,16 --arg buffer:float:16384:random:1 \
  --arg buffer:float:16384:random:2 --arg buffer:float:16384 --arg scalar:int:128 --trace-buffer-mib 1 \
  -o "$work/mm-sliced.cltrace" > "$work/out"
grep -q "in 8 slices" "$work/out" || fail "mm: expected 8 slices (one layer of 16 rows each): $(cat "$work/out")"
cmp "$work/mm-whole.cltrace" "$work/mm-sliced.cltrace" || fail "mm: the sliced trace differs"
echo "ok: mm 128x128 in slices"
"$CLTRACE" run "$KERNELS/stencil.cl" -o "$work/st-whole.cltrace" > /dev/null
"$CLTRACE" run "$KERNELS/stencil.cl" --trace-buffer-mib 4 --compress -o "$work/st-sliced.cltrace" > /dev/null
"$CLTRACE" run "$KERNELS/stencil.cl" --compress -o "$work/st-whole-z.cltrace" > /dev/null
cmp "$work/st-whole-z.cltrace" "$work/st-sliced.cltrace" || fail "stencil: the sliced trace differs"
"$CLTRACE" stats "$work/st-whole.cltrace" > "$work/a"
"$CLTRACE" stats "$work/st-sliced.cltrace" > "$work/b"
cmp "$work/a" "$work/b" || fail "stencil: stats differ between the compressed sliced trace and the plain one"
echo "ok: stencil in slices"
expect_error "--trace-buffer-mib: Value 0 not in range" "$CLTRACE" run "$KERNELS/mm.cl" --trace-buffer-mib 0 -o "$work/x.cltrace"
echo "sliced trace: all checks passed"
