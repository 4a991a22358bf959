# A workgroup of more work-items than a Fermi GPU runs in one (1024, CL_DEVICE_MAX_WORK_GROUP_SIZE
# of compute capability 2.x) traces on PoCL, which takes 4096, but the GPU would refuse the
# launch: simulate, predict and plot say so by the key's name; max_threads_per_workgroup=0 lifts
# it (48 warps each writing one 128-byte line: 48 write requests).
source "$(dirname "$0")/lib.sh"
printf '__kernel void k(__global float* a) { a[get_global_id(0)] = 1.0f; }\n' > "$work/big.cl"
"$CLTRACE" run "$work/big.cl" --kernel k --global 1536 --local 1536 --arg buffer:float:1536 -o "$work/big.cltrace" \
  > /dev/null || fail "run"
words="configuration key 'max_threads_per_workgroup': a workgroup of the launch has 1536 work-items, more than the 1024 the GPU runs in one, so it would refuse the launch (0 lifts the limit)"
expect_error "$words" "$CLTRACE" simulate "$work/big.cltrace"
expect_error "$words" "$CLTRACE" plot "$work/big.cltrace" -o "$work/big.svg"
expect_error "$words" "$CLTRACE" predict "$work/big.cl" --kernel k --global 1536 --local 1536 --arg buffer:float:1536
got=$("$CLTRACE" simulate "$work/big.cltrace" --runs 1 --json --set max_threads_per_workgroup=0 |
  python3 -c "import json, sys; j = json.load(sys.stdin); print(j['writes'], j['config']['max_threads_per_workgroup'])")
[ "$got" = "48 0" ] || fail "max_threads_per_workgroup=0: writes, key = $got"
echo "ok: max_threads_per_workgroup=0 lifts the limit: 48 writes"
# 1024 is accepted.
"$CLTRACE" predict "$work/big.cl" --kernel k --global 1024 --local 1024 --arg buffer:float:1024 --runs 1 > /dev/null ||
  fail "1024 work-items refused"
echo "ok: 1024 work-items a workgroup are simulated"
