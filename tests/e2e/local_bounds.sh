# A __local pointer argument given fewer bytes than the kernel uses is refused by the count run,
# naming the argument, its size and the first work-item, before anything is traced (the kernel
# used to run, overwrite other memory and give a trace of garbage).
source "$(dirname "$0")/lib.sh"
cat > "$work/k.cl" <<'CL'
__kernel void fill(__global int* a, __local int* s) {
  size_t l = get_local_id(0);
  s[l] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  a[get_global_id(0)] = s[l];
}
__kernel void count(__global uint* out, __local uint* h) {
  size_t l = get_local_id(0);
  atomic_inc(&h[l % 16]);
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = 1;
}
CL
# Local size 32, 16 ints given: local ids 16..31 of both workgroups store outside (32 work-items,
# the first global id 16).
expect_error "cltrace: error: 32 work-items access __local memory outside what argument 1 (s) was given (64 bytes); the first, work-item 16 (linear global id). Is the __local size given for it smaller than the kernel uses? Nothing was traced and the buffers are as before the launch" \
  "$CLTRACE" run "$work/k.cl" --kernel fill --global 64 --local 32 -a buffer:int:64 -a local:64 -o "$work/f.cltrace"
[ ! -e "$work/f.cltrace" ] || fail "a trace was written"
"$CLTRACE" run "$work/k.cl" --kernel fill --global 64 --local 32 -a buffer:int:64 -a local:128 -o "$work/f.cltrace" \
  > /dev/null || fail "128 bytes are enough for 32 ints"
# 8 uints given: atomic_inc on h[l % 16] is outside for l % 16 >= 8, 16 work-items a workgroup.
expect_error "cltrace: error: 32 work-items access __local memory outside what argument 1 (h) was given (32 bytes); the first, work-item 8 (linear global id)" \
  "$CLTRACE" run "$work/k.cl" --kernel count --global 64 --local 32 -a buffer:uint:64 -a local:32 -o "$work/c.cltrace"
"$CLTRACE" run "$work/k.cl" --kernel count --global 64 --local 32 -a buffer:uint:64 -a local:64 -o "$work/c.cltrace" \
  > /dev/null || fail "64 bytes are enough for 16 uints"
