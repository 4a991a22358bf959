# Records that need more host memory than the process may have: the error says how many units
# the count run counted for how many work-items (a count past what the kernel can make is the
# driver's miscount: PoCL runs some kernels with barriers after loops wrongly), exit status 1,
# no trace left. One work-item reads 300 000 000 times in a loop (two 8-byte units a read) under
# a 4 GB address-space limit.
source "$(dirname "$0")/lib.sh"
cat > "$work/big.cl" <<'CL'
__kernel void k(__global const float* a, __global float* o, int n) {
  float s = 0.0f;
  for (int j = 0; j < n; ++j) s += a[j & 15];
  o[get_global_id(0)] = s;
}
CL
rc=0
out=$( (ulimit -v 4000000; "$CLTRACE" run "$work/big.cl" --kernel k --global 1 --local 1 --arg buffer:float:16 \
  --arg buffer:float:1 --arg scalar:int:300000000 -o "$work/big.cltrace") 2>&1) || rc=$?
[ "$rc" -eq 1 ] || fail "exit status $rc, not 1: $out"
echo "$out" | grep -Fx "cltrace: error: cannot allocate 4800380928 bytes of host memory for the trace run's records: the count run counted 600000001 record units for 1 work-item (one layer of work-groups along dimension 0, the least the trace run takes at once); if the kernel cannot make that many accesses, the OpenCL driver miscounted them" >/dev/null ||
  fail "no message: $out"
[ ! -e "$work/big.cltrace" ] || fail "a trace was left"
echo "ok: records past the memory limit are refused, naming the count run's units and work-items"
