# Bad input to the tool: a clear message naming the problem and a non-zero exit.
source "$(dirname "$0")/lib.sh"
mm="$KERNELS/mm.cl"
expect_error "the kernel takes 4 arguments (float* A, float* B, float* C, int N), 3 given" \
  "$CLTRACE" run "$mm" --arg buffer:float:16 --arg buffer:float:16 --arg buffer:float:16 -o "$work/t"
expect_error "argument 3 (int N): a value needs scalar:TYPE:VALUE" \
  "$CLTRACE" run "$mm" --arg buffer:float:16 --arg buffer:float:16 --arg buffer:float:16 --arg buffer:int:1 -o "$work/t"
expect_error "no kernel named 'nope'; kernels in this program: mm" "$CLTRACE" run "$mm" --kernel nope -o "$work/t"
expect_error "no kernel named 'nope'; kernels in this program: mm" "$CLTRACE" instrument "$mm" --kernel nope -o "$work/i"
expect_error "local size 5 does not divide global size 64 in dimension 0" \
  "$CLTRACE" run "$mm" --global 64,64 --local 5,16 -o "$work/t"
expect_error "global size is zero in dimension 0" "$CLTRACE" run "$mm" --global 0,64 --local 1,16 -o "$work/t"
# A buffer smaller than the kernel reads: N = 64 but only 16 elements.
expect_error "16 work-items access memory outside their buffers; the first, work-item 0 (linear global id), at instruction 0" \
  "$CLTRACE" run "$mm" --global 4,4 --local 4,4 --arg buffer:float:16 --arg buffer:float:16 \
  --arg buffer:float:4096 --arg scalar:int:64 -o "$work/t"
# A kernel that would write far outside its buffer: reported, no crash.
printf '__kernel void smash(__global int* a) { a[get_global_id(0) * 1000000] = 1; }\n' > "$work/smash.cl"
expect_error "63 work-items access memory outside their buffers; the first, work-item 1 (linear global id), at instruction 0" \
  "$CLTRACE" run "$work/smash.cl" --kernel smash --global 64 --local 64 --arg buffer:int:16 -o "$work/t"
printf '__kernel void broken(__global int* a) { a[0] = undefined_thing; }\n' > "$work/broken.cl"
expect_error "use of undeclared identifier 'undefined_thing'" "$CLTRACE" instrument "$work/broken.cl" --kernel broken -o "$work/i"
expect_error "cannot open kernel source" "$CLTRACE" run "$work/missing.cl" --kernel k --global 1 --local 1 -o "$work/t"
# Unreadable and truncated trace files.
expect_error "$work/none.cltrace" "$CLTRACE" dump "$work/none.cltrace"
"$CLTRACE" run "$KERNELS/mt.cl" -o "$work/mt.cltrace" >/dev/null
head -c 5000 "$work/mt.cltrace" > "$work/cut.cltrace"
expect_error "truncated" "$CLTRACE" stats "$work/cut.cltrace"
head -c 20 "$work/mt.cltrace" > "$work/cut2.cltrace"
expect_error "truncated" "$CLTRACE" dump "$work/cut2.cltrace"
echo "cli errors: all checks passed"
