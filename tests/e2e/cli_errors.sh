# Bad input to the tool: a clear message naming the problem and a non-zero exit.
source "$(dirname "$0")/lib.sh"
mm="$KERNELS/mm.cl"
expect_error "the kernel takes 4 arguments (float* A, float* B, float* C, int N), 3 given; in order: --arg buffer:float:COUNT --arg buffer:float:COUNT --arg buffer:float:COUNT --arg scalar:int:VALUE" \
  "$CLTRACE" run "$mm" --arg buffer:float:16 --arg buffer:float:16 --arg buffer:float:16 -o "$work/t"
expect_error "argument 3 (int N): a value needs scalar:TYPE:VALUE" \
  "$CLTRACE" run "$mm" --arg buffer:float:16 --arg buffer:float:16 --arg buffer:float:16 --arg buffer:int:1 -o "$work/t"
expect_error "no kernel named 'nope'; kernels in this program: mm" "$CLTRACE" run "$mm" --kernel nope -o "$work/t"
expect_error "no kernel named 'nope'; kernels in this program: mm" "$CLTRACE" instrument "$mm" --kernel nope -o "$work/i"
expect_error "local size 5 does not divide global size 64 in dimension 0" \
  "$CLTRACE" run "$mm" --global 64,64 --local 5,16 -o "$work/t"
expect_error "global size is zero in dimension 0" "$CLTRACE" run "$mm" --global 0,64 --local 1,16 -o "$work/t"
# An empty size in a list is an error, not a dimension fewer (64,,64 is no 2-D size).
expect_error "--global: '64,,64' has an empty size" "$CLTRACE" run "$mm" --global 64,,64 --local 16,,16 -o "$work/t"
expect_error "--local: ',16' has an empty size" "$CLTRACE" run "$mm" --global 64 --local ,16 -o "$work/t"
expect_error "--offset: '0,' has an empty size" "$CLTRACE" run "$mm" --offset 0, -o "$work/t"
# Work-groups past PoCL's limits (4096 work-items, 4096 per dimension): which limit, by name.
expect_error "the local size 8192 in dimension 0 is more than the device's 4096 (CL_DEVICE_MAX_WORK_ITEM_SIZES)" \
  "$CLTRACE" run "$KERNELS/vadd.cl" --global 8192 --local 8192 -o "$work/t"
expect_error "work-groups of 8192 work-items are more than the device runs this kernel with: at most 4096 (CL_KERNEL_WORK_GROUP_SIZE, the device's maximum)" \
  "$CLTRACE" run "$mm" --global 128,128 --local 64,128 -o "$work/t"
# A buffer smaller than the kernel reads: N = 64 but only 16 elements. Work-item 0 reads A[0]
# and B[0], then A[1] and B[64], past B's end: it leaves the loop there, before A[16].
expect_error "16 work-items access memory outside their buffers; the first, work-item 0 (linear global id), at instruction 1 (" \
  "$CLTRACE" run "$mm" --global 4,4 --local 4,4 --arg buffer:float:16 --arg buffer:float:16 \
  --arg buffer:float:4096 --arg scalar:int:64 -o "$work/t"
# A kernel that would write far outside its buffer: reported, no crash.
printf '__kernel void smash(__global int* a) { a[get_global_id(0) * 1000000] = 1; }\n' > "$work/smash.cl"
expect_error "63 work-items access memory outside their buffers; the first, work-item 1 (linear global id), at instruction 0" \
  "$CLTRACE" run "$work/smash.cl" --kernel smash --global 64 --local 64 --arg buffer:int:16 -o "$work/t"
# Writes to program-scope variables (OpenCL 2.0): refused by name, by a store or an atomic.
printf 'global int seen[8];\n__kernel void k(__global int* out) { size_t i = get_global_id(0); seen[i] = 1; out[i] = seen[7 - i]; }\n' > "$work/gv.cl"
expect_error "kernel 'k' writes the program-scope variable 'seen': cltrace traces kernels whose writes go to buffers" \
  "$CLTRACE" run "$work/gv.cl" --kernel k --build-options=-cl-std=CL2.0 --global 8 --local 8 --arg buffer:int:8 -o "$work/t"
printf 'global int hits;\n__kernel void k(__global int* out) { atomic_inc(&hits); out[get_global_id(0)] = 1; }\n' > "$work/gv2.cl"
expect_error "kernel 'k' writes the program-scope variable 'hits'" \
  "$CLTRACE" run "$work/gv2.cl" --kernel k --build-options=-cl-std=CL2.0 --global 8 --local 8 --arg buffer:int:8 -o "$work/t"
# Reads of one are traced without them, and said so (not silently left out of the counts).
printf 'global int table[64] = {1, 2, 3};\n__kernel void k(__global int* a) { int i = get_global_id(0); a[i] = table[i] + table[63 - i]; }\n' > "$work/gv3.cl"
out=$("$CLTRACE" run "$work/gv3.cl" --kernel k --build-options=-cl-std=CL2.0 --global 64 --local 32 --arg buffer:int:64 -o "$work/gv3.cltrace" 2>&1) ||
  fail "reads of a program-scope variable: $out"
echo "$out" | grep -F "cltrace: warning: kernel 'k' reads the program-scope variable 'table' (2 load instructions): program-scope data is not recorded" >/dev/null ||
  fail "no warning for reads of a program-scope variable: $out"
echo "ok: reads of a program-scope variable are traced without them, with a warning"
# A read through a pointer that may be the variable or a buffer cannot be told apart: refused by
# name (it was "work-items access memory outside their buffers"); a write so is a write to it.
printf 'global float lut[16];\n__kernel void sel(__global float* a, int c) { global float* q = c ? lut : a; a[get_global_id(0)] = q[1]; }\n__kernel void wsel(__global float* a, int c) { global float* q = c ? lut : a; q[get_global_id(0)] = 1.0f; }\n' > "$work/gv4.cl"
expect_error "kernel 'sel' reads through a pointer that may point into the program-scope variable 'lut' or into a buffer" \
  "$CLTRACE" run "$work/gv4.cl" --kernel sel --build-options=-cl-std=CL2.0 --global 16 --local 16 --arg buffer:float:16 --arg scalar:int:1 -o "$work/t"
expect_error "kernel 'wsel' writes the program-scope variable 'lut'" \
  "$CLTRACE" run "$work/gv4.cl" --kernel wsel --build-options=-cl-std=CL2.0 --global 16 --local 16 --arg buffer:float:16 --arg scalar:int:1 -o "$work/t"
printf '__kernel void broken(__global int* a) { a[0] = undefined_thing; }\n' > "$work/broken.cl"
# The diagnostics name the user's file, not the temporary copy clang compiled.
expect_error "$work/broken.cl:1:48: error: use of undeclared identifier 'undefined_thing'" \
  "$CLTRACE" instrument "$work/broken.cl" --kernel broken -o "$work/i"
expect_error "$work/broken.cl:1:48: error: use of undeclared identifier 'undefined_thing'" \
  "$CLTRACE" run "$work/broken.cl" --kernel broken --global 1 --local 1 --arg buffer:int:1 -o "$work/t"
# A kernel's reqd_work_group_size against another local size: the attribute, not an OpenCL code.
printf '__kernel __attribute__((reqd_work_group_size(4,2,1))) void r(__global int* a) { a[get_global_id(0)] = 1; }\n' > "$work/reqd.cl"
expect_error "the kernel requires work-groups of (4,2) (its reqd_work_group_size attribute); the launch's local size is (8,1)" \
  "$CLTRACE" run "$work/reqd.cl" --kernel r --global 64,2 --local 8,1 --arg buffer:int:128 -o "$work/t"
# A struct's name as a scalar type: what run can pass instead.
expect_error "unknown OpenCL type 'Params'; a scalar is one of char" \
  "$CLTRACE" run "$work/reqd.cl" --kernel r --global 8 --local 8 --arg scalar:Params:1 -o "$work/t"
expect_error "cannot open kernel source" "$CLTRACE" run "$work/missing.cl" --kernel k --global 1 --local 1 -o "$work/t"
# Unreadable and truncated trace files.
expect_error "$work/none.cltrace" "$CLTRACE" dump "$work/none.cltrace"
expect_error "$work: is a directory, not a trace file" "$CLTRACE" dump "$work"
"$CLTRACE" run "$KERNELS/mt.cl" -o "$work/mt.cltrace" >/dev/null
head -c 5000 "$work/mt.cltrace" > "$work/cut.cltrace"
expect_error "truncated" "$CLTRACE" stats "$work/cut.cltrace"
head -c 20 "$work/mt.cltrace" > "$work/cut2.cltrace"
expect_error "truncated" "$CLTRACE" dump "$work/cut2.cltrace"
# The same with a plain (uncompressed) body, which readers map rather than stream.
"$CLTRACE" run "$KERNELS/mt.cl" --no-compress -o "$work/mt-plain.cltrace" >/dev/null
head -c 5000 "$work/mt-plain.cltrace" > "$work/cut3.cltrace"
for cmd in stats simulate; do expect_error "truncated" "$CLTRACE" "$cmd" "$work/cut3.cltrace"; done
# A flipped bit in a plain body (byte 1 of the first record's address, 0x0 -> 0x100) reads as
# a valid address: the body checksum reports it at the end of the body, in every reader.
units=$("$CLTRACE" dump --limit 0 "$work/mt-plain.cltrace" | sed -n 's/^units: //p')
items=$("$CLTRACE" dump --limit 0 "$work/mt-plain.cltrace" | sed -n 's/^work-items: //p')
body=$(( $(stat -c %s "$work/mt-plain.cltrace") - 8 * items - 16 * units - 8 ))  # where the header ends
cp "$work/mt-plain.cltrace" "$work/flip.cltrace"
printf '\001' | dd of="$work/flip.cltrace" bs=1 seek=$((body + 8 + 1)) conv=notrunc status=none
first=$("$CLTRACE" dump --limit 1 "$work/flip.cltrace")
[[ $first == *"load instr 0 addr 0x100 size 4"* ]] || fail "the flip missed the address: $first"
for cmd in stats simulate schedule; do
  out=(); [ "$cmd" = schedule ] && out=(-o "$work/flip.sched")
  expect_error "$work/flip.cltrace: body checksum mismatch (corrupt body)" "$CLTRACE" "$cmd" "$work/flip.cltrace" "${out[@]}"
done
# (dump's 131072 records go to /dev/null: expect_error's grep -q would stop reading at the
# message, before the records stdout flushes after it, and fail the pipe.)
expect_error "$work/flip.cltrace: body checksum mismatch (corrupt body)" \
  bash -c "exec '$CLTRACE' dump '$work/flip.cltrace' > /dev/null"
# Sizes: negative, and so large that per-work-item bookkeeping would overflow 64 bits.
expect_error "--local: '-1' is negative" "$CLTRACE" run "$mm" --global 64,64 --local -1,16 -o "$work/t"
expect_error "the NDRange (1152921504606846976 x 1 x 1) has too many work-items to trace" \
  "$CLTRACE" run "$work/smash.cl" --kernel smash --global 1152921504606846976 --local 4 --arg buffer:int:16 -o "$work/t"
expect_error "kernel source '$work' is a directory" "$CLTRACE" run "$work" --kernel k --global 1 --local 1 -o "$work/t"
# Scalar values are parsed exactly for their type; vectors take one value per lane.
printf '__kernel void v(__global long* a, float4 f, long big) { a[(long)f.w + big - 9007199254740992L] = 1; }\n' > "$work/v.cl"
"$CLTRACE" run "$work/v.cl" --kernel v --global 1 --local 1 --arg buffer:long:8 --arg scalar:float4:0,0,0,5 \
  --arg scalar:long:9007199254740993 -o "$work/v.cltrace" > /dev/null
"$CLTRACE" dump "$work/v.cltrace" | grep "store instr 0 addr 0x30 size 8" >/dev/null ||
  fail "vector and 64-bit scalars: $("$CLTRACE" dump "$work/v.cltrace")"  # a[5 + 1] at 6 * 8 bytes
expect_error "value '9007199254740993.5' is not an integer (the argument is long)" \
  "$CLTRACE" run "$work/v.cl" --kernel v --global 1 --local 1 --arg buffer:long:8 --arg scalar:float4:1 \
  --arg scalar:long:9007199254740993.5 -o "$work/t"
expect_error "argument 1 (float4 f): given as int4, the kernel expects float4" \
  "$CLTRACE" run "$work/v.cl" --kernel v --global 1 --local 1 --arg buffer:long:8 --arg scalar:int4:1 \
  --arg scalar:long:1 -o "$work/t"
# Outputs that would overwrite the input trace, directly or through a link.
ln -s "$work/mt.cltrace" "$work/link.cltrace"
expect_error "is the input trace" "$CLTRACE" schedule "$work/mt.cltrace" -o "$work/link.cltrace"
expect_error "is the input trace" "$CLTRACE" plot "$work/mt.cltrace" -o "$work/p.png" --raster "$work/mt.cltrace"
cmp -s "$work/mt.cltrace" "$work/link.cltrace" && [ -s "$work/mt.cltrace" ] || fail "the input was damaged"
# A compressed trace with a byte after its frame: every reader says so, the simulator too.
"$CLTRACE" run "$KERNELS/mt.cl" --compress -o "$work/z.cltrace" >/dev/null
cp "$work/z.cltrace" "$work/zx.cltrace" && printf 'x' >> "$work/zx.cltrace"
for cmd in stats simulate schedule; do
  out=(); [ "$cmd" = schedule ] && out=(-o "$work/zx.sched")
  expect_error "trailing data after the compressed body" "$CLTRACE" "$cmd" "$work/zx.cltrace" "${out[@]}"
done
# A trace that fails while being written (here: over the file size limit) leaves the path as
# it was, with no partial file beside it.
echo OLD > "$work/old.cltrace"
expect_error "write error" bash -c "ulimit -f 1000; exec '$CLTRACE' run '$KERNELS/mm.cl' --no-compress -o '$work/old.cltrace'"
[ "$(cat "$work/old.cltrace")" = OLD ] || fail "the old trace was overwritten"
[ -z "$(ls "$work" | grep partial)" ] || fail "a partial trace was left: $(ls "$work")"
# A report that cannot reach standard output is a failure, not a silent success.
for cmd in stats simulate "dump --limit 3" dump; do
  expect_error "cannot write standard output: No space left on device" \
    bash -c "exec '$CLTRACE' $cmd '$work/mt.cltrace' > /dev/full"
done
# A pipe cannot be read twice: simulate and plot say so (they said "wrong magic" after a first look).
for cmd in simulate "plot -o $work/pipe.png"; do
  expect_error "/dev/stdin: not a regular file (a pipe or a device); ${cmd%% *} reads its input more than once" \
    bash -c "cat '$work/mt.cltrace' | '$CLTRACE' $cmd /dev/stdin"
done
# An SM that receives no workgroups: every count is 0, and the report says why.
"$CLTRACE" simulate "$work/v.cltrace" --sm 3 > "$work/idle.txt" 2> "$work/idle.err"
idle="SM 3 receives no workgroup that makes an access (the launch keeps only SM 0 busy), so every count is 0"
grep -qF "warning: $idle" "$work/idle.txt" && grep -qF "cltrace: warning: $idle" "$work/idle.err" ||
  fail "idle SM: $(cat "$work/idle.txt" "$work/idle.err")"
echo "ok: idle SM reported"
expect_error "invalid value '1000000000' for configuration key 'runs': too large (at most 100000)" \
  "$CLTRACE" simulate "$work/mt.cltrace" --runs 1000000000
# A value an option does not take is a command-line mistake: exit status 2, the option named,
# before any work. (An SM index past the SM count depends on the configuration: status 1.)
usage_mistake() {
  local words=$1 rc=0 out; shift
  out=$("$@" 2>&1) || rc=$?
  [ "$rc" -eq 2 ] || fail "expected exit status 2 from: $* (got $rc: $out)"
  echo "$out" | grep -F -- "$words" >/dev/null || fail "expected '$words' from: $* (got: $out)"
  echo "ok: exit status 2: $words"
}
usage_mistake "--runs: configuration key 'runs': must be at least 1" "$CLTRACE" simulate "$work/mt.cltrace" --runs 0
usage_mistake "--sm: invalid value 'foo' for configuration key 'sm'" "$CLTRACE" simulate "$work/mt.cltrace" --sm foo
# Values out of an option's own range are command-line mistakes too.
usage_mistake "--alignment: must be a power of two" "$CLTRACE" run "$KERNELS/mt.cl" --alignment 3 -o "$work/t"
usage_mistake "--global: takes at most 3 sizes" "$CLTRACE" run "$KERNELS/mt.cl" --global 1,2,3,4 -o "$work/t"
usage_mistake "--warp-size: must be between 1 and 1024" "$CLTRACE" schedule "$work/mt.cltrace" --warp-size 0 -o "$work/s"
usage_mistake "--sms: must be between 1 and 4096" "$CLTRACE" schedule "$work/mt.cltrace" --sms 4097 -o "$work/s"
usage_mistake "--max-workgroups-per-sm: must be at least 1" "$CLTRACE" schedule "$work/mt.cltrace" --max-workgroups-per-sm 0 -o "$work/s"
usage_mistake "--width: must be between 16 and 32768" "$CLTRACE" plot "$work/mt.cltrace" --width 15 -o "$work/p.png"
usage_mistake "--element-size: must be at least 1" "$CLTRACE" plot "$work/mt.cltrace" --element-size 0 -o "$work/p.png"
usage_mistake "--seed: invalid value 'x' for configuration key 'seed'" "$CLTRACE" simulate "$work/mt.cltrace" --seed x
usage_mistake "--policy: scheduler: policy must be one of" "$CLTRACE" schedule "$work/mt.cltrace" --policy foo -o "$work/s"
usage_mistake "--format: scheduler: format must be one of" "$CLTRACE" schedule "$work/mt.cltrace" --format xml -o "$work/s"
usage_mistake "--color: plot: unknown colouring 'foo'" "$CLTRACE" plot "$work/mt.cltrace" --color foo -o "$work/p.png"
usage_mistake "--policies: scheduler: policy must be one of" "$CLTRACE" plot "$work/mt.cltrace" --policies warp,foo -o "$work/p.png"
usage_mistake "--policy: invalid value 'foo' for configuration key 'scheduling'" "$CLTRACE" predict "$KERNELS/vadd.cl" --policy foo
# A misspelt command is named, with the commands there are; CLI11's own errors begin as the tool's.
usage_mistake "cltrace: error: unknown command 'simulat' (commands: devices, dump, instrument, plot, predict, run, schedule, simulate, stats, wrap)" \
  "$CLTRACE" simulat "$work/mt.cltrace"
usage_mistake "cltrace: error: unknown command '$KERNELS/vadd.cl'" "$CLTRACE" "$KERNELS/vadd.cl"
usage_mistake "cltrace: error: trace is required" "$CLTRACE" simulate
usage_mistake "cltrace: error: A subcommand is required" "$CLTRACE"
rc=0
"$CLTRACE" simulate "$work/mt.cltrace" --sm 20 > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "--sm 20 of 15 SMs: exit status $rc, not 1"
"$CLTRACE" simulate "$work/mt.cltrace" --sm 20 --set sm_count=32 > /dev/null 2>&1 || fail "--sm 20 of 32 SMs refused"
echo "ok: an SM index is checked against the SM count given"
# A trace given where the kernel source goes: said once, not as compiler errors quoting binary.
expect_error "kernel source '$work/mt.cltrace' is not OpenCL C source: it holds binary data" \
  "$CLTRACE" run "$work/mt.cltrace" --kernel k --global 4 --local 4 -o "$work/t"
# An empty value is not "not given".
for opt in --runs --seed --sm --config; do expect_error "$opt: must not be empty" "$CLTRACE" simulate "$work/mt.cltrace" "$opt" ""; done
expect_error "--config: must not be empty" "$CLTRACE" predict "$KERNELS/vadd.cl" --config ""
expect_error "--config: must not be empty" "$CLTRACE" plot "$work/mt.cltrace" --config "" -o "$work/p.png"
# The largest cache with the smallest lines: 2 M ways per SM, 15 SMs modelled (timing on), about
# 720 MB of tags (with 128-byte lines it fits in 400 MB).
expect_error "out of memory (the input or configuration asks for more than this machine can allocate)" \
  sh -c 'ulimit -v 400000; exec "$0" simulate "$1" --set set_index=linear --set size=64M --set line_size=32' "$CLTRACE" "$work/mt.cltrace"
# Numbers past 64 bits are refused, not clamped to 2^64 - 1; a leading zero is decimal.
expect_error "--global: '18446744073709551616' does not fit in 64 bits" \
  "$CLTRACE" run "$work/smash.cl" --kernel smash --global 18446744073709551616 --local 1 --arg buffer:int:16 -o "$work/t"
expect_error "--offset: '18446744073709551616' does not fit in 64 bits" \
  "$CLTRACE" run "$work/smash.cl" --kernel smash --global 4 --local 4 --offset 18446744073709551616 --arg buffer:int:16 -o "$work/t"
expect_error "--global: '12a' is not a non-negative integer" \
  "$CLTRACE" run "$work/smash.cl" --kernel smash --global 12a --local 4 --arg buffer:int:16 -o "$work/t"
expect_error "cltrace: error: local size 4 does not divide global size 10 in dimension 0" \
  "$CLTRACE" run "$work/smash.cl" --kernel smash --global 010 --local 4 --arg buffer:int:16 -o "$work/t"
expect_error "cltrace: error: argument 'buffer:int:18446744073709551616': count '18446744073709551616' does not fit in 64 bits" \
  "$CLTRACE" run "$work/smash.cl" --kernel smash --global 4 --local 4 --arg buffer:int:18446744073709551616 -o "$work/t"
# Buffers: more bytes than 2^64, more than the host can allocate (under an address-space limit,
# whatever the overcommit policy), junk after an initialiser, a directory for a file.
vadd=(--global 1024 --local 64 --arg buffer:float:1024 --arg buffer:float:1024 --arg scalar:int:1024)
expect_error "cltrace: error: argument 'buffer:float16:288230376151711744': 288230376151711744 elements of float16 (64 bytes each) are more than 2^64 bytes" \
  "$CLTRACE" run "$KERNELS/vadd.cl" --arg buffer:float16:288230376151711744 "${vadd[@]}" -o "$work/t"
# (under 4 GiB: a larger buffer the kernel accesses is refused before any allocation)
expect_error "cltrace: error: argument 0 (float* a) 'buffer:float:1000000000': cannot allocate 4000000000 bytes of host memory" \
  bash -c 'ulimit -v 3500000; exec "$@"' - "$CLTRACE" run "$KERNELS/vadd.cl" --arg buffer:float:1000000000 "${vadd[@]}" -o "$work/t"
expect_error "cltrace: error: argument 'buffer:float:1024:zeros:x': zeros takes no value, but ':x' follows it" \
  "$CLTRACE" run "$KERNELS/vadd.cl" --arg buffer:float:1024:zeros:x "${vadd[@]}" -o "$work/t"
expect_error "cltrace: error: argument 'buffer:float:1024:iota:5': iota takes no value, but ':5' follows it" \
  "$CLTRACE" run "$KERNELS/vadd.cl" --arg buffer:float:1024:iota:5 "${vadd[@]}" -o "$work/t"
expect_error "cltrace: error: argument 'buffer:float:1024:file:$work': '$work' is a directory, not a file" \
  "$CLTRACE" run "$KERNELS/vadd.cl" --arg "buffer:float:1024:file:$work" "${vadd[@]}" -o "$work/t"
# Outputs that would overwrite the launch's inputs: the kernel source (directly or through a
# link), its launch manifest, a file: initialiser's file.
mkdir "$work/own" && cp "$KERNELS/vadd.cl" "$KERNELS/vadd.json" "$work/own/" && ln -s vadd.cl "$work/own/link.cl"
expect_error "cltrace: error: -o $work/own/vadd.cl is the kernel source $work/own/vadd.cl; writing it would destroy it" \
  "$CLTRACE" run "$work/own/vadd.cl" -o "$work/own/vadd.cl"
expect_error "cltrace: error: -o $work/own/link.cl is the kernel source $work/own/vadd.cl; writing it would destroy it" \
  "$CLTRACE" run "$work/own/vadd.cl" -o "$work/own/link.cl"
expect_error "cltrace: error: -o $work/own/../own/vadd.json is the launch manifest $work/own/vadd.json; writing it would destroy it" \
  "$CLTRACE" run "$work/own/vadd.cl" -o "$work/own/../own/vadd.json"
expect_error "cltrace: error: --keep-trace $work/own/vadd.cl is the kernel source $work/own/vadd.cl; writing it would destroy it" \
  "$CLTRACE" predict "$work/own/vadd.cl" --runs 1 --keep-trace "$work/own/vadd.cl"
head -c 4096 /dev/zero > "$work/own/a.bin"
expect_error "cltrace: error: -o $work/own/a.bin is the initial contents file of argument 0 $work/own/a.bin; writing it would destroy it" \
  "$CLTRACE" run "$work/own/vadd.cl" --arg "buffer:float:1024:file:$work/own/a.bin" "${vadd[@]}" -o "$work/own/a.bin"
cmp -s "$KERNELS/vadd.cl" "$work/own/vadd.cl" && cmp -s "$KERNELS/vadd.json" "$work/own/vadd.json" &&
  cmp -s /dev/zero "$work/own/a.bin" -n 4096 && [ "$(stat -c %s "$work/own/a.bin")" = 4096 ] || fail "an input was overwritten"
for opt in -D -I --kernel --device; do
  expect_error "$opt: must not be empty" "$CLTRACE" run "$KERNELS/vadd.cl" "$opt" "" -o "$work/t"
done
# A source that is not there is said so, by run and predict alike (not as a missing manifest).
for cmd in run predict; do
  expect_error "cannot open kernel source $work/nope.cl: no such file" "$CLTRACE" $cmd "$work/nope.cl"
done
# A loop that waits for a value past its buffer's end: the count run skips those loads (each
# yields 0), so without leaving the loop at the first one it ran forever. Every work-item of 8
# reads a[16] first (j runs 0..16 over 16 ints, none equal to i + 100): all 8 are outside, at the
# loop's load (instruction 0).
printf '__kernel void find(__global const int* a, __global int* out) {\n  int i = get_global_id(0), j = 0;\n  while (1) { if (a[j] == i + 100) break; j++; }\n  out[i] = j;\n}\n' > "$work/find.cl"
expect_error "8 work-items access memory outside their buffers; the first, work-item 0 (linear global id), at instruction 0" \
  timeout 120 "$CLTRACE" run "$work/find.cl" --kernel find --global 8 --local 8 --arg buffer:int:16 --arg buffer:int:8 -o "$work/t"
# A loop from which a barrier can be reached (in it, or after it) is not left early: PoCL takes a
# barrier's branches as the same for every work-item, and work-item 5 leaving alone made the
# launch be traced. Only work-item 5 reads past the end (a[100 + j]), in a loop with barriers and
# in a loop before one.
printf '__kernel void k(__global const int* a, __global int* out, __local int* s) {\n  int l = get_local_id(0), acc = 0;\n  for (int j = 0; j < 4; j++) {\n    s[l] = a[l == 5 ? 100 + j : j];\n    barrier(CLK_LOCAL_MEM_FENCE);\n    acc += s[(l + 1) %% 8];\n    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n  out[get_global_id(0)] = acc;\n}\n__kernel void after(__global const int* a, __global int* out, __local int* s) {\n  int l = get_local_id(0), acc = 0;\n  for (int j = 0; j < 4; j++) acc += a[l == 5 ? 100 + j : j];\n  s[l] = acc;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  out[get_global_id(0)] = s[(l + 1) %% 8];\n}\n' > "$work/partb.cl"
for k in k after; do
  expect_error "1 work-item accesses memory outside their buffers; the first, work-item 5 (linear global id), at instruction 0" \
    timeout 120 "$CLTRACE" run "$work/partb.cl" --kernel $k --global 8 --local 8 --arg buffer:int:16 --arg buffer:int:8 --arg local:32 -o "$work/t"
done
# One work-item out of bounds reads as one.
printf '__kernel void one(__global int* a) { a[get_global_id(0) == 5 ? 100 : 0] = 1; }\n' > "$work/one.cl"
expect_error "1 work-item accesses memory outside their buffers; the first, work-item 5" \
  "$CLTRACE" run "$work/one.cl" --kernel one --global 8 --local 8 --arg buffer:int:8 -o "$work/t"
# An argument name longer than a trace keeps (4096 bytes) is cut, not refused.
name=$(printf 'a%.0s' $(seq 5000))
printf '__kernel void longname(__global int* %s) { %s[get_global_id(0)] = 1; }\n' "$name" "$name" > "$work/long.cl"
"$CLTRACE" run "$work/long.cl" --kernel longname --global 8 --local 8 --arg buffer:int:8 -o "$work/long.cltrace" >/dev/null ||
  fail "a long argument name was refused"
[ "$("$CLTRACE" dump "$work/long.cltrace" --limit 0 | sed -n 's/^  arg 0 \(a*\): .*/\1/p' | tr -d '\n' | wc -c)" = 4096 ] ||
  fail "the long name was not cut at 4096 bytes"
# OpenCL C 3.0: the device's extensions and their 3.0 features go to clang together (a
# mismatch made every -cl-std=CL3.0 compile fail).
"$CLTRACE" run "$KERNELS/vadd.cl" --build-options=-cl-std=CL3.0 -o "$work/v3.cltrace" >/dev/null ||
  fail "a -cl-std=CL3.0 build does not trace"
# A header that claims 2^32 work-items (with its checksum recomputed) before a body of 16: the
# body's end is the error, also when several runs share the loaded trace (which reserved room
# for the claimed workgroups first and reported running out of memory).
"$CLTRACE" run "$mm" --global 4,4 --local 2,2 --arg buffer:float:16:random:1 --arg buffer:float:16:random:2 \
  --arg buffer:float:16 --arg scalar:int:4 -o "$work/tiny.cltrace" > /dev/null
python3 - "$work/tiny.cltrace" "$work/claims.cltrace" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
def header_end(b):  # docs/trace-format.md: strings, buffers, instructions, loops, then the checksum
    o = 136
    for _ in range(2): o += 4 + struct.unpack_from("<I", b, o)[0]
    buffers = struct.unpack_from("<I", b, o)[0]; o += 4
    for _ in range(buffers): o += 4; o += 4 + struct.unpack_from("<I", b, o)[0]; o += 16
    o += 8; n = struct.unpack_from("<I", b, o)[0]; o += 4 + 12 * n
    for _ in range(n): o += 4 + struct.unpack_from("<I", b, o)[0]
    if struct.unpack_from("<I", b, 12)[0] & 4: o += 4 + 4 * struct.unpack_from("<I", b, o)[0] + 4 * n
    return o + 8
struct.pack_into("<Q", b, 24, 1 << 32)               # work-items
struct.pack_into("<I", b, 56, 1)                     # dims
struct.pack_into("<3Q", b, 64, 1 << 32, 1, 1)        # global
struct.pack_into("<3Q", b, 88, 1, 1, 1)              # local
end = header_end(b); h = 0xcbf29ce484222325
for x in b[:end - 8]: h = ((h ^ x) * 0x100000001b3) & (2**64 - 1)
b[end - 8:end] = struct.pack("<Q", h)
open(sys.argv[2], 'wb').write(b)
PY
for runs in 1 2; do
  expect_error "cltrace: error: $work/claims.cltrace: truncated body: the body ends inside the unit count of work-item 16 (of 4294967296)" \
    "$CLTRACE" simulate --runs "$runs" "$work/claims.cltrace"
done
# Integer options read decimal digits, a leading zero included (CLI11 alone read --runs 010 as
# octal 8): predict's, wrap's and the others' counts are what the user wrote.
runs=$("$CLTRACE" predict "$KERNELS/vadd.cl" --runs 010 --json 2>/dev/null | grep -o '"count": [0-9]*' | head -1)
[ "$runs" = '"count": 10' ] || fail "--runs 010 gave $runs"
echo "ok: --runs 010 is 10 runs"
# An OpenCL C 2.0 function without -cl-std: the compile error says why (PoCL's compiler takes
# 3.0 by default, cltrace 1.2 as OpenCL specifies); with -cl-std=CL2.0 it traces.
printf '__kernel void k(__global int* a) { a[get_global_linear_id()] = 1; }\n' > "$work/linear.cl"
expect_error "(cltrace compiles OpenCL C 1.2 when the build options name no -cl-std, as OpenCL specifies; a kernel that uses OpenCL C 2.0 or 3.0 needs -cl-std=CL2.0 or -cl-std=CL3.0 among its build options)" \
  "$CLTRACE" run "$work/linear.cl" --kernel k --global 16 --local 16 --arg buffer:int:16 -o "$work/linear.cltrace"
"$CLTRACE" run "$work/linear.cl" --kernel k --global 16 --local 16 --arg buffer:int:16 --build-options -cl-std=CL2.0 \
  -o "$work/linear.cltrace" > /dev/null || fail "-cl-std=CL2.0 did not trace"
# The hint is for names OpenCL C 2.0 declares (an atomic_int too), not for a typo or an #error.
printf '__kernel void k(__global atomic_int* a) { }\n' > "$work/atomic20.cl"
expect_error "needs -cl-std=CL2.0 or -cl-std=CL3.0 among its build options" \
  "$CLTRACE" run "$work/atomic20.cl" --kernel k --global 16 --local 16 --arg buffer:int:16 -o "$work/atomic20.cltrace"
printf 'global int g;\n__kernel void k(__global int* a) { a[0] = g + ctz(a[1]); }\n' > "$work/global20.cl"
expect_error "needs -cl-std=CL2.0 or -cl-std=CL3.0 among its build options" \
  "$CLTRACE" run "$work/global20.cl" --kernel k --global 16 --local 16 --arg buffer:int:16 -o "$work/global20.cltrace"
# A pipe parameter (1.2 reads `pipe` as a name of implicit type int) and the generic address space.
printf '__kernel void k(pipe int p, __global int* a) { a[0] = 1; }\n' > "$work/pipe20.cl"
printf '__kernel void k(__global int* a) { generic int* g = a; g[0] = 1; }\n' > "$work/generic20.cl"
for f in pipe20 generic20; do
  expect_error "needs -cl-std=CL2.0 or -cl-std=CL3.0 among its build options" \
    "$CLTRACE" run "$work/$f.cl" --kernel k --global 16 --local 16 --arg buffer:int:16 -o "$work/$f.cltrace"
done
printf '__kernel void k(__global int* a) { a[get_global_idd(0)] = 1; }\n' > "$work/typo.cl"
printf '#error stop here\n__kernel void k(__global int* a) { }\n' > "$work/stop.cl"
# OpenCL C 1.2 has atomic_add: a misspelt one is a typo, not a 2.0 name.
printf '__kernel void k(__global int* a) { atomic_ad(a, 1); }\n' > "$work/atomic12.cl"
# An implicit int at a name that only begins with "pipe" is no pipe (the error is the typo).
printf '__kernel void k(__global int* a) { const pipe2 = 3; a[0] = pipe2 + b; }\n' > "$work/pipes12.cl"
for f in typo stop atomic12 pipes12; do
  out=$("$CLTRACE" run "$work/$f.cl" --kernel k --global 16 --local 16 --arg buffer:int:16 -o "$work/$f.cltrace" 2>&1) &&
    fail "$f.cl traced"
  echo "$out" | grep -F "the kernel does not compile" > /dev/null || fail "$f.cl: $out"
  if echo "$out" | grep -F -- "-cl-std" > /dev/null; then fail "$f.cl: a -cl-std hint: $out"; fi
  echo "ok: $f.cl: a compile error without the -cl-std hint"
done
# A message that quotes the compiled copy's path names the user's file (it named a temporary
# copy, gone once cltrace exits).
printf '\377\376__kernel void k(__global int* a) { a[0] = 1; }\n' > "$work/utf16.cl"
expect_error "byte order mark detected in '$work/utf16.cl'" \
  "$CLTRACE" run "$work/utf16.cl" --kernel k --global 1 --local 1 --arg buffer:int:1 -o "$work/utf16.cltrace"
# schedule's --inter-warp orders warps; a naive policy has none (simulate refuses sequential:ORDER too).
"$CLTRACE" run "$KERNELS/vadd.cl" -o "$work/vadd.cltrace" > /dev/null 2>&1 || fail "vadd run"
expect_error "--inter-warp orders the warps of the warp policy; --policy sequential has no warps" \
  "$CLTRACE" schedule "$work/vadd.cltrace" --policy sequential --inter-warp greedy-then-oldest -o "$work/vadd.sched"
[ ! -e "$work/vadd.sched" ] || fail "a refused schedule left its output"
# wrap of a program that cannot be run says so before anything is made (it made the out folder,
# ran nothing and said "0 launches traced"); a program's own status still passes through.
expect_error "cltrace: error: cannot run 'no-such-program-here': no such program in PATH" \
  "$CLTRACE" wrap --out "$work/w1" -- no-such-program-here
expect_error "cltrace: error: cannot run '$work/missing': no such executable file" \
  "$CLTRACE" wrap --out "$work/w2" -- "$work/missing"
[ ! -e "$work/w1" ] && [ ! -e "$work/w2" ] || fail "wrap of a missing program made its out folder"
rc=0
"$CLTRACE" wrap --out "$work/w3" -- sh -c 'exit 42' 2> /dev/null || rc=$?
[ "$rc" -eq 42 ] || fail "wrap of sh -c 'exit 42': status $rc"
# A command-line mistake exits with 2 (usage), any other error with 1, --help with 0.
rc=0; "$CLTRACE" simulate --threads -1 "$work/none" > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "a bad option value: status $rc, not 2"
rc=0; "$CLTRACE" stats --no-such-option x > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "an unknown option: status $rc, not 2"
rc=0; "$CLTRACE" stats "$work/none" > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a missing file: status $rc, not 1"
"$CLTRACE" simulate --help > /dev/null || fail "--help failed"
# A schedule's text output given to simulate: which files it reads.
"$CLTRACE" run "$KERNELS/vadd.cl" --global 64 --local 64 -a buffer:float:64 -a buffer:float:64 -a buffer:float:64 \
  -a scalar:int:64 -o "$work/v.cltrace" > /dev/null || fail "vadd"
"$CLTRACE" schedule "$work/v.cltrace" --format text -o "$work/v.txt" > /dev/null || fail "schedule --format text"
expect_error "; simulate reads trace files and binary scheduled files (cltrace schedule's default --format binary), not text or csv schedules" \
  "$CLTRACE" simulate "$work/v.txt"
# An empty launch manifest (a shell's `> k.json` next to k.cl) says what likely made it.
mkdir -p "$work/m" && cp "$KERNELS/vadd.cl" "$work/m/k.cl" && : > "$work/m/k.json"
expect_error "launch manifest $work/m/k.json: the file is empty (a launch manifest sits next to its kernel under the same name; if \`> k.json\` made it, send the output to another name)" \
  "$CLTRACE" run "$work/m/k.cl" --kernel vadd --global 64 --local 64 -a buffer:float:64 -a buffer:float:64 \
  -a buffer:float:64 -a scalar:int:64 -o "$work/t"
# A --kernel name with a control character is shown escaped (\xNN) in wrap's warning.
out=$("$CLTRACE" wrap --out "$work/w8" -k $'a\x1b[31m' -- true 2>&1) || fail "wrap -k with an escape: $out"
echo "$out" | grep -F 'cltrace: warning: no launch of the kernel named by --kernel (a\x1b[31m) was traced' > /dev/null ||
  fail "wrap -k with an escape: $out"
echo "ok: wrap -k shows a control character escaped"
# A program that never loads the layer (no OpenCL, or OPENCL_LAYERS cleared) is told apart from
# one whose launches were all left out.
layerless="cltrace: warning: no process of the program loaded cltrace's OpenCL layer: it made no OpenCL call through the ICD loader (libOpenCL), or it ran OpenCL with OPENCL_LAYERS cleared from its environment"
echo "$out" | grep -Fx "$layerless" > /dev/null || fail "wrap -- true: $out"
out=$("$CLTRACE" wrap --out "$work/w9" -- env -u OPENCL_LAYERS "$SAMPLE_HOST" 2>&1) || fail "wrap without layers: $out"
echo "$out" | grep -Fx "$layerless" > /dev/null || fail "wrap with OPENCL_LAYERS cleared: $out"
out=$("$CLTRACE" wrap --out "$work/w9" -k none -- "$SAMPLE_HOST" 2>&1) || fail "wrap -k none: $out"
echo "$out" | grep -F "loaded cltrace's OpenCL layer" > /dev/null && fail "wrap -k none: $out"
[ ! -e "$work/w9/.layer-loaded" ] || fail "wrap left its .layer-loaded"
echo "ok: wrap says when no process loaded its layer"
# A launches.tsv that an earlier wrap left damaged in the out folder (a line without its trace
# path) is named with its line, not a filesystem error about an empty path; nothing is run.
mkdir -p "$work/w5"
printf '0\tvadd\t%s/w5/vadd-0.cltrace\n0\tvadd\t\n' "$work" > "$work/w5/launches.tsv"
expect_error "cltrace: error: $work/w5/launches.tsv line 2: no trace path (the list an earlier wrap into $work/w5 left is damaged; remove it or give another --out)" \
  "$CLTRACE" wrap --out "$work/w5" -- sh -c "touch '$work/w5-ran'"
[ ! -e "$work/w5-ran" ] || fail "wrap ran the program despite a damaged launches.tsv"
printf '\t\n' > "$work/w5/launches.tsv"
expect_error "cltrace: error: $work/w5/launches.tsv line 1: not <launch><TAB><kernel><TAB><trace path> (the list an earlier wrap into $work/w5 left is damaged" \
  "$CLTRACE" wrap --out "$work/w5" -- true
printf '0\tvadd\t%s/w5/vadd-0.cltrace\nno tabs here\n' "$work" > "$work/w5/launches.tsv"
expect_error "cltrace: error: $work/w5/launches.tsv line 2: not <launch><TAB><kernel><TAB><trace path>" \
  "$CLTRACE" wrap --out "$work/w5" -- true
# A whole list still has the traces it names removed.
: > "$work/w5/vadd-0.cltrace"
printf '0\tvadd\t%s/w5/vadd-0.cltrace\n' "$work" > "$work/w5/launches.tsv"
out=$("$CLTRACE" wrap --out "$work/w5" -- true 2>&1) || fail "wrap into a folder with a whole list: $out"
echo "$out" | grep -F "cltrace: removed 1 trace of an earlier run that $work/w5/launches.tsv listed" > /dev/null ||
  fail "wrap's earlier trace: $out"
[ ! -e "$work/w5/vadd-0.cltrace" ] || fail "wrap left the earlier run's trace"
# wrap's --kernel and --launch lists: an empty item is an error (CLI11 dropped it, and took the
# `--` after a list of commas only as the list); `--` still ends wrap's options.
usage_mistake "--kernel: ',' has an empty name (NAME[,NAME...])" "$CLTRACE" wrap --out "$work/wk" -k , -- true
usage_mistake "--kernel: 'a,,b' has an empty name (NAME[,NAME...])" "$CLTRACE" wrap --out "$work/wk" -k a,,b -- true
usage_mistake "--launch: ',' has an empty launch number (N[,N...])" "$CLTRACE" wrap --out "$work/wk" -n , -- true
usage_mistake "--kernel: ',' has an empty name (NAME[,NAME...])" "$CLTRACE" wrap --out "$work/wk" -k , -n 0 -- true
usage_mistake "--launch: 'x' is not a non-negative integer" "$CLTRACE" wrap --out "$work/wk" -n 1,x -- true
usage_mistake "--kernel: must not be empty" "$CLTRACE" wrap --out "$work/wk" -k '' -- true
usage_mistake "--kernel: 'a\x1b,,b' has an empty name" "$CLTRACE" wrap --out "$work/wk" -k $'a\x1b,,b' -- true
out=$("$CLTRACE" wrap --out "$work/w6" -k a,b -n 3,4 -- true 2>&1) || fail "wrap -k a,b -n 3,4: $out"
echo "$out" | grep -F "cltrace: warning: no launch of the kernels named by --kernel (a,b) was traced" > /dev/null ||
  fail "wrap -k a,b: $out"
echo "$out" | grep -F "cltrace: warning: --launch 3,4: the program made no such launch" > /dev/null || fail "wrap -n 3,4: $out"
echo "ok: wrap -k a,b -n 3,4 lists"
# wrap's --config, --set and --runs are checked with or without --predict, before the program
# runs and before the out folder is made (without --predict they were ignored unread).
printf '{"size": \n' > "$work/malformed.json"
for predict in "" --predict; do
  for bad in "--set size=0|configuration key 'size': must be at least one line" \
             "--runs 0|configuration key 'runs': must be at least 1" \
             "--set sm=99|configuration key 'sm': SM 99 does not exist (sm_count = 15)" \
             "--config $work/malformed.json|config file '$work/malformed.json': not valid JSON"; do
    # shellcheck disable=SC2086
    expect_error "cltrace: error: ${bad#*|}" "$CLTRACE" wrap $predict ${bad%%|*} --out "$work/w7" -- true
    rc=0
    # shellcheck disable=SC2086
    "$CLTRACE" wrap $predict ${bad%%|*} --out "$work/w7" -- true > /dev/null 2>&1 || rc=$?
    [ "$rc" -eq 1 ] || fail "wrap $predict ${bad%%|*}: status $rc, not 1"
    [ ! -e "$work/w7" ] || fail "wrap $predict ${bad%%|*} made its out folder"
  done
done
# 32-bit options past their range name the option and the range (CLI11 said "Could not convert").
for cmd in "schedule x -o y --warp-size" "schedule x -o y --sms" "schedule x -o y --max-threads-per-sm" \
           "schedule x -o y --max-workgroups-per-sm" "plot x -o y.png --width" "plot x -o y.png --height" \
           "plot x -o y.png --element-size" "simulate x --threads" "predict x --threads" "wrap --runs" \
           "wrap --threads"; do
  option=${cmd##* }
  # shellcheck disable=SC2086
  usage_mistake "$option: '4294967296' does not fit in 32 bits (at most 4294967295)" "$CLTRACE" $cmd 4294967296 -- true
done
usage_mistake "--warp-size: '0x100000000' does not fit in 32 bits (at most 4294967295)" \
  "$CLTRACE" schedule x -o y --warp-size 0x100000000
usage_mistake "--limit: '18446744073709551616' does not fit in 64 bits" "$CLTRACE" dump x --limit 18446744073709551616
# --help names each option's value once (CLI11 appended every check's description to it, as in
# `--runs TEXT:TEXT:VALUE` or `--trace-buffer-mib UINT:UINT:UINT in [1 - 1099511627776]=256`).
for cmd in devices dump instrument plot predict run schedule simulate stats wrap; do
  help=$("$CLTRACE" "$cmd" --help)
  doubled=$(echo "$help" | grep -E '^ +-[^ ]* [A-Z]+:[A-Z]' || true)
  [ -z "$doubled" ] || fail "$cmd --help names a value twice: $doubled"
  # Nor a negated flag's value (`--compress,--no-compress{false}`).
  ! echo "$help" | grep -F '{' >/dev/null || fail "$cmd --help shows a flag's value in braces: $help"
done
usage_mistake "--no-compress: cannot be given with --compress" \
  "$CLTRACE" run "$KERNELS/mt.cl" --no-compress --compress -o "$work/both.cltrace"
help=$("$CLTRACE" simulate --help)
for words in "--runs N " "--seed N " "--sm SM " "--config PRESET|FILE=gtx480-16k" "--set KEY=VALUE "; do
  echo "$help" | grep -F -- "$words" >/dev/null || fail "simulate --help lacks '$words': $help"
done
help=$("$CLTRACE" run --help)
for words in "--global X[,Y[,Z]] " "--trace-buffer-mib MIB=256 " "--trace-timeout SECONDS " \
             "-o,--out FILE=trace.cltrace" "--compress  " "--no-compress  "; do
  echo "$help" | grep -F -- "$words" >/dev/null || fail "run --help lacks '$words': $help"
done
echo "cli errors: all checks passed"
