# A launch manifest's file: initialisers are read next to the manifest, from any directory.
source "$(dirname "$0")/lib.sh"
mkdir -p "$work/k"
printf '__kernel void pick(__global const int* idx, __global int* out) { out[idx[get_global_id(0)]] = 1; }\n' > "$work/k/pick.cl"
printf '{"kernel": "pick", "global": [2], "local": [2], "args": ["buffer:int:2:file:idx.bin", "buffer:int:8"]}\n' > "$work/k/pick.json"
printf '\005\000\000\000\003\000\000\000' > "$work/k/idx.bin"  # indices 5 and 3
(cd / && "$CLTRACE" run "$work/k/pick.cl" -o "$work/pick.cltrace" > /dev/null) || fail "run from / failed"
# idx at 0 (8 bytes), out at 256: work-item 0 stores out[5] (0x114), work-item 1 out[3] (0x10c).
"$CLTRACE" dump "$work/pick.cltrace" | grep -q "wi 0 .* store instr 1 addr 0x114 size 4" || fail "$("$CLTRACE" dump "$work/pick.cltrace")"
"$CLTRACE" dump "$work/pick.cltrace" | grep -q "wi 1 .* store instr 1 addr 0x10c size 4" || fail "work-item 1"
echo "manifest files: all checks passed"
