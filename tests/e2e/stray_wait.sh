# A count run that a work-item outside its buffer keeps from ending: the count run skips such
# accesses (a load reads 0), so a loop waiting for a value read there, or for work-items that
# left, waits forever. Once a work-item went outside and no work-item has returned for 10 s,
# cltrace gives up with a message that says so (no --trace-timeout needed; with one, that limit
# governs, since a kernel may be only slow). Kernels with a barrier are not watched.
source "$(dirname "$0")/lib.sh"
cat > "$work/stray.cl" <<'CL'
// Every work-item waits, through __local memory and barriers, for a value past a's end (not
// watched: it has barriers).
__kernel void find(__global const int* a, __global int* out, __local int* s) {
  int i = get_global_id(0);
  int j = 0;
  int found = 0;
  while (!found) {
    s[get_local_id(0)] = a[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    found = s[0] == 12345;
    barrier(CLK_LOCAL_MEM_FENCE);
    j++;
  }
  out[i] = j;
}
// Workgroup 1 waits for a flag workgroup 0 sets to a value it read past a's end.
__kernel void spin(__global const int* a, __global volatile int* flag, int n) {
  if (get_group_id(0) == 0) {
    if (get_local_id(0) == 0) flag[0] = a[n];
  } else {
    while (flag[0] == 0) { }
  }
}
// The same wait as a goto cycle with two ways in (no loop to LLVM's loop analysis).
__kernel void spingoto(__global const int* a, __global volatile int* flag, int n) {
  if (get_group_id(0) == 0) {
    if (get_local_id(0) == 0) flag[0] = a[n];
    return;
  }
  int v = get_local_id(0);
  if (v & 1) goto B;
A:
  v++;
B:
  if (flag[0] == 0) goto A;
}
CL
words="a work-item accessed memory outside its buffers, and in the count run (which skips such accesses: a load reads 0) no work-item has returned for 10 s since"
# A kernel with barriers is not watched (PoCL crashed or miscounted valid kernels with the watch's
# store): its wait goes on to the trace timeout, and the hung-run message.
expect_error "kernel 'find': the count run has not finished after 3 s of kernel time and cannot be stopped, so cltrace gives up: the device may be stuck in it. A kernel" \
  "$CLTRACE" run "$work/stray.cl" --kernel find --global 32 --local 32 --arg buffer:int:16 \
  --arg buffer:int:32 --arg local:128 --trace-timeout 3 -o "$work/find.cltrace"
[ ! -e "$work/find.cltrace" ] || fail "a trace was left"
expect_error "$words" "$CLTRACE" run "$work/stray.cl" --kernel spin --global 64 --local 32 --arg buffer:int:16 \
  --arg buffer:int:1 --arg scalar:int:16 -o "$work/spin.cltrace"
expect_error "$words" "$CLTRACE" run "$work/stray.cl" --kernel spingoto --global 64 --local 32 --arg buffer:int:16 \
  --arg buffer:int:1 --arg scalar:int:16 -o "$work/spingoto.cltrace"
# With --trace-timeout the run goes on to that limit (a kernel may be only slow): the hung-run
# message, which names the stray access as the likelier cause.
expect_error "kernel 'spin': the count run has not finished after 3 s of kernel time and cannot be stopped, so cltrace gives up: a work-item accessed memory outside its buffers, which the count run skips (a load reads 0): a loop may wait for a value read there, or for work-items that left (is a buffer smaller than the kernel reads or writes?). A kernel that is only slow needs a longer limit" \
  "$CLTRACE" run "$work/stray.cl" --kernel spin --global 64 --local 32 --arg buffer:int:16 \
  --arg buffer:int:1 --arg scalar:int:16 --trace-timeout 3 -o "$work/spin.cltrace"
# A work-item outside whose run ends is refused as before, by instruction.
expect_error "1 work-item accesses memory outside their buffers; the first, work-item 0 (linear global id), at instruction 0" \
  "$CLTRACE" run "$work/stray.cl" --kernel spin --global 32 --local 32 --arg buffer:int:16 --arg buffer:int:1 \
  --arg scalar:int:16 -o "$work/one.cltrace"
