# A launch manifest's file: initialisers are read next to the manifest, from any directory.
source "$(dirname "$0")/lib.sh"
mkdir -p "$work/k"
printf '__kernel void pick(__global const int* idx, __global int* out) { out[idx[get_global_id(0)]] = 1; }\n' > "$work/k/pick.cl"
printf '{"kernel": "pick", "global": [2], "local": [2], "args": ["buffer:int:2:file:idx.bin", "buffer:int:8"]}\n' > "$work/k/pick.json"
printf '\005\000\000\000\003\000\000\000' > "$work/k/idx.bin"  # indices 5 and 3
(cd / && "$CLTRACE" run "$work/k/pick.cl" -o "$work/pick.cltrace" > /dev/null) || fail "run from / failed"
# idx at 0 (8 bytes), out at 256: work-item 0 stores out[5] (0x114), work-item 1 out[3] (0x10c).
"$CLTRACE" dump "$work/pick.cltrace" | grep "wi 0 .* store instr 1 addr 0x114 size 4" >/dev/null || fail "$("$CLTRACE" dump "$work/pick.cltrace")"
"$CLTRACE" dump "$work/pick.cltrace" | grep "wi 1 .* store instr 1 addr 0x10c size 4" >/dev/null || fail "work-item 1"
# A manifest's offset is the global offset: work-item 0 is global id 1, and stores out[idx[1]] = out[5].
printf '{"kernel": "pick", "global": [2], "local": [2], "offset": [1], "args": ["buffer:int:3:file:idx.bin", "buffer:int:8"]}\n' > "$work/k/pick.json"
printf '\000\000\000\000\005\000\000\000\003\000\000\000' > "$work/k/idx.bin"  # indices 0, 5 and 3
"$CLTRACE" run "$work/k/pick.cl" -o "$work/off.cltrace" > /dev/null || fail "run with an offset failed"
"$CLTRACE" dump "$work/off.cltrace" | grep -F "offset (1)" >/dev/null || fail "no offset in $("$CLTRACE" dump "$work/off.cltrace")"
"$CLTRACE" dump "$work/off.cltrace" | grep "wi 0 .* store instr 1 addr 0x114 size 4" >/dev/null || fail "offset: $("$CLTRACE" dump "$work/off.cltrace")"
# Manifests are read strictly: each error names the file and the key.
manifest_error() {  # manifest_error JSON MESSAGE
  printf '%s\n' "$1" > "$work/k/pick.json"
  expect_error "cltrace: error: launch manifest $work/k/pick.json: $2" "$CLTRACE" run "$work/k/pick.cl" -o "$work/t"
}
args='"args": ["buffer:int:2", "buffer:int:8"]'
manifest_error "{\"kernel\": \"pick\", \"global\": [2.7], \"local\": [2], $args}" '"global"[0]: 2.7 is not a non-negative integer'
manifest_error "{\"kernel\": \"pick\", \"global\": [2], \"local\": [-2], $args}" '"local"[0]: -2 is not a non-negative integer'
manifest_error "{\"kernel\": \"pick\", \"global\": [1e30], \"local\": [2], $args}" '"global"[0]: 1e+30 does not fit in 64 bits'
manifest_error "{\"kernel\": \"pick\", \"globl\": [2], \"global\": [2], \"local\": [2], $args}" \
  'unknown key "globl" (the keys are kernel, global, local, offset, args, build_options)'
manifest_error '{"kernel": "pick", "global": [2], "local": [2], "args": [1, 2]}' '"args"[0]: must be a string, not number'
# So are the errors found once the kernel is known, and a range that cannot be launched.
manifest_error "{\"kernel\": \"pick\", \"global\": [2048], \"local\": [300], $args}" \
  'local size 300 does not divide global size 2048 in dimension 0'
manifest_error '{"kernel": "pick", "global": [2], "local": [2], "args": ["buffer:int:2"]}' \
  '"args": the kernel takes 2 arguments (int* idx, int* out), 1 given; in order: ["buffer:int:COUNT", "buffer:int:COUNT"]'
manifest_error '{"kernel": "pick", "global": [2], "local": [2], "args": ["buffer:int:2", "scalar:int:3"]}' \
  '"args": argument 1 (int* out): a pointer needs buffer:TYPE:COUNT'
# A file: initialiser's file that is missing or short, found when the buffer is filled.
manifest_error '{"kernel": "pick", "global": [2], "local": [2], "args": ["buffer:int:2", "buffer:int:8:file:none.bin"]}' \
  "\"args\"[1]: argument 'buffer:int:8:file:none.bin': cannot open '$work/k/none.bin': No such file or directory"
manifest_error '{"kernel": "pick", "global": [2], "local": [2], "args": ["buffer:int:9:file:idx.bin", "buffer:int:8"]}' \
  "\"args\"[0]: argument 'buffer:int:9:file:idx.bin': file '$work/k/idx.bin' holds fewer than 36 bytes"
# Arguments given on the command line are not the manifest's: their errors do not name it.
printf '{"kernel": "pick", "global": [2], "local": [2], %s}\n' "$args" > "$work/k/pick.json"
expect_error "cltrace: error: the kernel takes 2 arguments (int* idx, int* out), 1 given" \
  "$CLTRACE" run "$work/k/pick.cl" --arg buffer:int:2 -o "$work/t"
# A directory where the manifest goes is named as such, as a directory given as a configuration
# file or a source is (it said "basic_filebuf::underflow error reading the file").
mkdir -p "$work/d" "$work/d/pick.json"
cp "$work/k/pick.cl" "$work/d/pick.cl"
expect_error "cltrace: error: launch manifest $work/d/pick.json is a directory" \
  "$CLTRACE" run "$work/d/pick.cl" -o "$work/t"
# Control characters in a kernel name, from a manifest or --kernel, are shown escaped (\xNN), as
# in configuration errors, not sent to the terminal.
printf '{"kernel": "pick\\u001b[31m", "global": [2], "local": [2], %s}\n' "$args" > "$work/k/pick.json"
expect_error "cltrace: error: $work/k/pick.cl: no kernel named 'pick\\x1b[31m'; kernels in this program: pick" \
  "$CLTRACE" run "$work/k/pick.cl" -o "$work/t"
expect_error "no kernel named 'pick\\x1b[31m\\x07'; kernels in this program: pick" \
  "$CLTRACE" run "$work/k/pick.cl" -k $'pick\x1b[31m\a' -o "$work/t"
expect_error "no kernel named 'pick\\x1b[31m'; kernels in this program: pick" \
  "$CLTRACE" instrument "$work/k/pick.cl" -k $'pick\x1b[31m' -o "$work/i"
out=$("$CLTRACE" run "$work/k/pick.cl" -o "$work/t" 2>&1) || true
case $out in *$'\x1b'*) fail "an escape character reached the output: $out" ;; esac
echo "manifest files: all checks passed"
