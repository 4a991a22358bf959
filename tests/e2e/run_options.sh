# `cltrace run` options that change the trace: --alignment, local-memory arguments, and the
# buffer initialisers that steer a data-dependent kernel (zeros, random with a seed).
source "$(dirname "$0")/lib.sh"
has() {  # has FILE LINE: the dump of FILE holds LINE (a fixed string)
  "$CLTRACE" dump "$1" > "$1.txt" || fail "cannot dump $1"
  grep -qF -- "$2" "$1.txt" || fail "no '$2' in the dump of $1"
}

# The virtual layout: two 1024-byte buffers. `out` starts at the next multiple of the alignment
# after `in`: 0x400 by default (256), 0x1000 at 4096. Work-item 1 (x 1, y 0) stores out[1 * 16].
mt=(--global 16,16 --local 16,16 --arg buffer:float:256:iota --arg buffer:float:256 --arg scalar:int:16
    --arg scalar:int:16)
"$CLTRACE" run "$KERNELS/mt.cl" "${mt[@]}" -o "$work/default.cltrace" > /dev/null
has "$work/default.cltrace" "alignment: 256"
has "$work/default.cltrace" "arg 1 out: base 0x400 size 1024"
has "$work/default.cltrace" "wi 1 group (0,0) local (1,0) store instr 1 addr 0x440 size 4"
"$CLTRACE" run "$KERNELS/mt.cl" "${mt[@]}" --alignment 4096 -o "$work/aligned.cltrace" > /dev/null
has "$work/aligned.cltrace" "alignment: 4096"
has "$work/aligned.cltrace" "arg 1 out: base 0x1000 size 1024"
has "$work/aligned.cltrace" "wi 1 group (0,0) local (1,0) store instr 1 addr 0x1040 size 4"
expect_error "--alignment: must be a power of two" "$CLTRACE" run "$KERNELS/mt.cl" "${mt[@]}" --alignment 48 -o "$work/t"
# Bases up to 2^63 fit; at 2^63 alignment the third buffer would wrap around to 0, over the first.
vadd=(--global 1024 --local 64 --arg buffer:float:1024 --arg buffer:float:1024 --arg buffer:float:1024 --arg scalar:int:1024)
"$CLTRACE" run "$KERNELS/vadd.cl" "${vadd[@]}" --alignment 0x4000000000000000 -o "$work/high.cltrace" > /dev/null
has "$work/high.cltrace" "arg 2 c: base 0x8000000000000000 size 4096"
expect_error "cltrace: error: buffer argument 2 (float* c, 4096 bytes) does not fit in the 64-bit virtual address space at alignment 9223372036854775808: its base would wrap around past 2^64" \
  "$CLTRACE" run "$KERNELS/vadd.cl" "${vadd[@]}" --alignment 9223372036854775808 -o "$work/t"
[ ! -e "$work/t" ] || fail "a trace was written for a layout past 2^64"
expect_error "--alignment: '-256' is negative" "$CLTRACE" run "$KERNELS/vadd.cl" "${vadd[@]}" --alignment -256 -o "$work/t"

# A __local argument by size: each group of 4 reverses its slice through local memory. Local
# accesses are not recorded; the barrier is (instruction 1, local fence flag 0x01).
cat > "$work/rev.cl" <<'EOF'
__kernel void rev(__global const int* in, __global int* out, __local int* tmp) {
  size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
  tmp[l] = in[g * n + l];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[g * n + l] = tmp[n - 1 - l];
}
EOF
"$CLTRACE" run "$work/rev.cl" --kernel rev --global 8 --local 4 --arg buffer:int:8:iota --arg buffer:int:8 \
  --arg local:16 -o "$work/rev.cltrace" > /dev/null
has "$work/rev.cltrace" "records: 24"
has "$work/rev.cltrace" "wi 5 group (1) local (1) load instr 0 addr 0x14 size 4"
has "$work/rev.cltrace" "wi 5 group (1) local (1) barrier instr 1 addr 0x0 size 0 flags 0x01"
has "$work/rev.cltrace" "wi 5 group (1) local (1) store instr 2 addr 0x114 size 4"
# local:TYPE:COUNT is local:BYTES with the size written as a buffer's: the same launch, the same file.
"$CLTRACE" run "$work/rev.cl" --kernel rev --global 8 --local 4 --arg buffer:int:8:iota --arg buffer:int:8 \
  --arg local:int:4 -o "$work/rev-typed.cltrace" > /dev/null
cmp -s "$work/rev.cltrace" "$work/rev-typed.cltrace" || fail "local:int:4 traced differently from local:16"
expect_error "argument 2 (int* tmp): a __local pointer needs local:BYTES or local:TYPE:COUNT" \
  "$CLTRACE" run "$work/rev.cl" --kernel rev --global 8 --local 4 --arg buffer:int:8 --arg buffer:int:8 \
  --arg buffer:int:4 -o "$work/t"

# branchy stores hot[i] when in[i] > 0.5, so its record count follows the data. All zeros: even
# lanes load in[i] and store out[i] (2 records), odd lanes also load two table entries (4), none
# stores hot: 128 * 2 + 128 * 4.
branchy() {  # branchy INITIALISER OUT
  "$CLTRACE" run "$KERNELS/branchy.cl" --global 256 --local 64 --arg "buffer:float:256:$1" \
    --arg buffer:float:256:random:2 --arg buffer:float:256 --arg buffer:int:256 --arg scalar:int:256 \
    --arg scalar:float:0.5 -o "$2" > /dev/null
}
branchy zeros "$work/zeros.cltrace"
has "$work/zeros.cltrace" "records: 768"
# A seed gives the same data, so the same trace; another seed other data, another record count.
branchy random:7 "$work/seed7a.cltrace"
branchy random:7 "$work/seed7b.cltrace"
cmp -s "$work/seed7a.cltrace" "$work/seed7b.cltrace" || fail "two runs with seed 7 differ"
branchy random:8 "$work/seed8.cltrace"
records() { "$CLTRACE" dump "$1" > "$1.txt" && sed -n 's/^records: //p' "$1.txt"; }
[ "$(records "$work/seed7a.cltrace")" != "$(records "$work/seed8.cltrace")" ] || fail "seeds 7 and 8 gave the same record count"
[ "$(records "$work/seed7a.cltrace")" -gt 768 ] || fail "seed 7: no hot stores"
# Options may come before the kernel file: a list option takes one value per flag (or X,Y,Z), so
# it does not swallow the file name.
"$CLTRACE" run --global 64,64 --local 16,16 -a buffer:float:4096:random:1 -a buffer:float:4096:random:2 \
  -a buffer:float:4096 -a scalar:int:64 -D UNUSED=1 "$KERNELS/mm.cl" -o "$work/before.cltrace" > /dev/null ||
  fail "options before the kernel file"
has "$work/before.cltrace" "records: 528384"
# A buffer the trace cannot address (4 GiB) is refused before it is made: under a 4 GB address
# space limit, so that a regression fails at once instead of filling 8 GB first.
printf '__kernel void k(__global int* a) { a[get_global_id(0)] = 1; }\n' > "$work/big.cl"
expect_error "cltrace: error: argument 0 (int* a) is bound to a buffer of 4294967296 bytes; cltrace traces accesses to buffers of at most 4 GiB - 1" \
  bash -c "ulimit -v 4000000; exec '$CLTRACE' run '$work/big.cl' --kernel k --global 64 --local 64 --arg buffer:int:1073741824 -o '$work/big.cltrace'"

# A buffer's TYPE must give the kernel's numbers (its contents are made as that type: random
# ints given to a float* would be read as tiny denormal floats); a vector of the element, or the
# other signedness, is fine, and struct and typedef'd elements are not checked.
expect_error "cltrace: error: argument 1 (float* b): a buffer of int, the kernel's elements are float (give buffer:float:COUNT...)" \
  "$CLTRACE" run "$KERNELS/vadd.cl" --global 64 --local 64 --arg buffer:float:64 --arg buffer:int:64:random \
  --arg buffer:float:64 --arg scalar:int:64 -o "$work/t"
[ ! -e "$work/t" ] || fail "a trace was written for a mistyped buffer"
expect_error "cltrace: error: argument 0 (float* a): a buffer of double, the kernel's elements are float (give buffer:float:COUNT...)" \
  "$CLTRACE" run "$KERNELS/vadd.cl" --global 64 --local 64 --arg buffer:double:32 --arg buffer:float:64 \
  --arg buffer:float:64 --arg scalar:int:64 -o "$work/t"
"$CLTRACE" run "$KERNELS/vadd.cl" --global 64 --local 64 --arg buffer:float4:16 --arg buffer:float:64 \
  --arg buffer:float:64 --arg scalar:int:64 -o "$work/v.cltrace" > /dev/null || fail "float4 for float*"
"$CLTRACE" run "$work/rev.cl" --kernel rev --global 8 --local 4 --arg buffer:uint:8:iota --arg buffer:int:8 \
  --arg local:16 -o "$work/u.cltrace" > /dev/null || fail "uint for const int*"

# --local or --offset alone keep the manifest's global size (262144) and its arguments: local 128
# gives 2048 workgroups; offset 4 moves every global id up by 4, so the last 4 work-items fail
# vadd's i < n and make no record: 3 * (262144 - 4) records.
"$CLTRACE" run "$KERNELS/vadd.cl" --local 128 -o "$work/l.cltrace" > /dev/null || fail "--local alone"
has "$work/l.cltrace" "ndrange: dims 1, global (262144), local (128), offset (0), 2048 workgroups"
"$CLTRACE" run "$KERNELS/vadd.cl" --offset 4 -o "$work/o.cltrace" > /dev/null || fail "--offset alone"
has "$work/o.cltrace" "ndrange: dims 1, global (262144), local (256), offset (4), 1024 workgroups"
has "$work/o.cltrace" "records: 786420"
expect_error "cltrace: error: --local needs as many sizes as the launch manifest's global size (1)" \
  "$CLTRACE" run "$KERNELS/vadd.cl" --local 16,16 -o "$work/t"
expect_error "cltrace: error: --local needs --global (or a launch manifest next to $work/rev.cl that gives it)" \
  "$CLTRACE" run "$work/rev.cl" --kernel rev --local 4 --arg buffer:int:8 --arg buffer:int:8 --arg local:16 -o "$work/t"

# A file: longer than its buffer: the first bytes are used, with a warning (12 bytes, 2 ints).
printf '\001\000\000\000\002\000\000\000\003\000\000\000' > "$work/three.bin"
"$CLTRACE" run "$work/rev.cl" --kernel rev --global 2 --local 2 --arg "buffer:int:2:file:$work/three.bin" \
  --arg buffer:int:2 --arg local:8 -o "$work/f.cltrace" > /dev/null 2> "$work/err" || fail "longer file: $(cat "$work/err")"
grep -F "cltrace: warning: argument 0 'buffer:int:2:file:$work/three.bin': file '$work/three.bin' holds 12 bytes; the buffer takes its first 8 (2 int)" \
  "$work/err" > /dev/null || fail "no warning for a longer file: $(cat "$work/err")"
echo "ok: buffer types, --local/--offset with a manifest, longer files"

# Without --local, the kernel's reqd_work_group_size is the local size; a kernel without one is
# refused (cltrace does not guess).
cat > "$work/reqd.cl" <<'CL'
__kernel __attribute__((reqd_work_group_size(8, 2, 1))) void k(__global float* a) {
  a[get_global_id(1) * get_global_size(0) + get_global_id(0)] = 1.0f;
}
__kernel void plain(__global float* a) { a[get_global_id(0)] = 1.0f; }
CL
"$CLTRACE" run "$work/reqd.cl" --kernel k --global 16,4 -a buffer:float:64 -o "$work/r.cltrace" > /dev/null ||
  fail "reqd_work_group_size without --local"
has "$work/r.cltrace" "ndrange: dims 2, global (16,4), local (8,2), offset (0,0), 4 workgroups"
expect_error "cltrace: error: no local size was given, and kernel 'plain' has no reqd_work_group_size attribute to take one from (cltrace does not guess work-group sizes: give --local)" \
  "$CLTRACE" run "$work/reqd.cl" --kernel plain --global 16 -a buffer:float:64 -o "$work/t"
expect_error "cltrace: error: local size 8 does not divide global size 12 in dimension 0" \
  "$CLTRACE" run "$work/reqd.cl" --kernel k --global 12,4 -a buffer:float:64 -o "$work/t"
echo "run options: all checks passed"

# No --kernel and no manifest: a program's only kernel is the one run; several are listed.
cat > "$work/only.cl" <<'CL'
int twice(int x) { return 2 * x; }
__kernel void only(__global int* a) { a[get_global_id(0)] = twice(3); }
CL
"$CLTRACE" run "$work/only.cl" --global 8 --local 8 --arg buffer:int:8 -o "$work/only.cltrace" > "$work/only.out" 2>&1 ||
  fail "the only kernel: $(cat "$work/only.out")"
"$CLTRACE" stats "$work/only.cltrace" | grep -E "^records: 8$" > /dev/null || fail "the only kernel's records: $("$CLTRACE" stats "$work/only.cltrace")"
printf '__kernel void a(__global int* x) { x[0] = 1; }\n__kernel void b(__global int* x) { x[1] = 1; }\n' > "$work/two.cl"
expect_error "no --kernel given and no launch manifest next to $work/two.cl: its kernels are a, b" \
  "$CLTRACE" run "$work/two.cl" --global 8 --local 8 --arg buffer:int:8 -o "$work/t"
echo "int f(int x) { return x; }" > "$work/none.cl"
expect_error "no --kernel given and no launch manifest next to $work/none.cl: the program has no kernel" \
  "$CLTRACE" predict "$work/none.cl" --global 8 --local 8
echo "ok: without --kernel, the only kernel runs and several are listed"
