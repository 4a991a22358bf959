# `cltrace simulate --set KEY=VALUE`: values out of the model's range are errors that name the
# key the user set.
source "$(dirname "$0")/lib.sh"
"$CLTRACE" run "$KERNELS/vadd.cl" -o "$work/v.cltrace" > /dev/null
sim() { "$CLTRACE" simulate "$work/v.cltrace" "$@"; }
# The scheduler's bounds, under the key set (they used to be blamed on 'scheduling').
expect_error "cltrace: error: invalid value '5000' for configuration key 'sm_count': too large (at most 4096)" \
  sim --set sm_count=5000
expect_error "cltrace: error: invalid value '2048' for configuration key 'warp_size': too large (at most 1024)" \
  sim --set warp_size=2048
sim --set sm_count=4096 --set warp_size=1024 > /dev/null || fail "the largest sm_count and warp_size were refused"
echo "simulate config: all checks passed"
