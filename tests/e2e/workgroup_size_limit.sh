# A workgroup of more work-items than a Fermi GPU runs in one (1024, CL_DEVICE_MAX_WORK_GROUP_SIZE
# of compute capability 2.x) traces on PoCL, which takes 4096, but the GPU would refuse the
# launch: simulate, predict (before tracing) and plot say so by the key's name; max_threads_per_workgroup=0 with
# max_local_size_x=0 lifts it (48 warps each writing one 128-byte line: 48 write requests). So
# does a local size over the GPU's along one dimension (64 along z).
source "$(dirname "$0")/lib.sh"
printf '__kernel void k(__global float* a) { a[get_global_id(0)] = 1.0f; }\n' > "$work/big.cl"
"$CLTRACE" run "$work/big.cl" --kernel k --global 1536 --local 1536 --arg buffer:float:1536 -o "$work/big.cltrace" \
  > /dev/null 2> "$work/run.err" || fail "run"
# Said when traced, not first by the simulator (a program under wrap that asks PoCL for its
# largest workgroup gets 4096).
grep -Fx "cltrace: warning: the launch's workgroups have 1536 work-items, more than the 1024 a Fermi GPU runs in one: the GPU would refuse the launch, and so does the simulator unless max_threads_per_workgroup=0 (and max_local_size_x=0)" \
  "$work/run.err" > /dev/null || fail "no warning when traced: $(cat "$work/run.err")"
words="configuration key 'max_threads_per_workgroup': a workgroup of the launch has 1536 work-items, more than the 1024 the GPU runs in one, so it would refuse the launch (0 lifts the limit)"
expect_error "$words" "$CLTRACE" simulate "$work/big.cltrace"
# Several runs load the trace once, first (the scheduler's check there named max_threads_per_sm).
expect_error "$words" "$CLTRACE" simulate "$work/big.cltrace" --runs 2
expect_error "$words" "$CLTRACE" plot "$work/big.cltrace" -o "$work/big.svg"
expect_error "$words" "$CLTRACE" predict "$work/big.cl" --kernel k --global 1536 --local 1536 --arg buffer:float:1536
# predict says it before tracing: the error alone, no warning from a trace made for nothing.
"$CLTRACE" predict "$work/big.cl" --kernel k --global 1536 --local 1536 --arg buffer:float:1536 2> "$work/predict.err" &&
  fail "predict of 1536 work-items a workgroup succeeded"
[ "$(cat "$work/predict.err")" = "cltrace: error: $words" ] || fail "predict said: $(cat "$work/predict.err")"
# Without that limit, the x dimension's (1024, CL_DEVICE_MAX_WORK_ITEM_SIZES) refuses it under its key.
expect_error "configuration key 'max_local_size_x': the launch's local size is 1536 along dimension 0, more than the 1024 the GPU allows there, so it would refuse the launch (0 lifts the limit)" \
  "$CLTRACE" simulate "$work/big.cltrace" --set max_threads_per_workgroup=0
got=$("$CLTRACE" simulate "$work/big.cltrace" --runs 1 --json --set max_threads_per_workgroup=0 --set max_local_size_x=0 |
  python3 -c "import json, sys; j = json.load(sys.stdin); print(j['writes'], j['config']['max_threads_per_workgroup'], j['config']['max_local_size_x'])")
[ "$got" = "48 0 0" ] || fail "max_threads_per_workgroup=0 max_local_size_x=0: writes, keys = $got"
echo "ok: max_threads_per_workgroup=0 and max_local_size_x=0 lift the limits: 48 writes"
# 128 work-items along z are under 1024 in all, but over the 64 the GPU allows along z.
printf '__kernel void k(__global float* a) { a[get_global_id(2)] = 1.0f; }\n' > "$work/deep.cl"
words="configuration key 'max_local_size_z': the launch's local size is 128 along dimension 2, more than the 64 the GPU allows there, so it would refuse the launch (0 lifts the limit)"
expect_error "$words" "$CLTRACE" predict "$work/deep.cl" --kernel k --global 1,1,128 --local 1,1,128 --arg buffer:float:128
expect_error "${words/than the 64/than the 100}" "$CLTRACE" predict "$work/deep.cl" --kernel k --global 1,1,128 \
  --local 1,1,128 --arg buffer:float:128 --set max_local_size_z=100
"$CLTRACE" predict "$work/deep.cl" --kernel k --global 1,1,128 --local 1,1,64 --arg buffer:float:128 --runs 1 > /dev/null ||
  fail "local size 1,1,64 refused"
"$CLTRACE" predict "$work/deep.cl" --kernel k --global 1,1,128 --local 1,1,128 --arg buffer:float:128 --runs 1 \
  --set max_local_size_z=0 > /dev/null || fail "local size 1,1,128 refused with max_local_size_z=0"
echo "ok: 64 along z is simulated, and 128 with max_local_size_z=0"
# 1024 is accepted.
"$CLTRACE" predict "$work/big.cl" --kernel k --global 1024 --local 1024 --arg buffer:float:1024 --runs 1 > /dev/null ||
  fail "1024 work-items refused"
echo "ok: 1024 work-items a workgroup are simulated"
