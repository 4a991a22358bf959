# `cltrace simulate --set KEY=VALUE`: values out of the model's range are errors that name the
# key the user set, before any memory is taken for them.
source "$(dirname "$0")/lib.sh"
"$CLTRACE" run "$KERNELS/vadd.cl" -o "$work/v.cltrace" > /dev/null
sim() { "$CLTRACE" simulate "$work/v.cltrace" "$@"; }
# The scheduler's bounds, under the key set (they used to be blamed on 'scheduling').
expect_error "cltrace: error: invalid value '5000' for configuration key 'sm_count': too large (at most 4096)" \
  sim --set sm_count=5000
expect_error "cltrace: error: invalid value '2048' for configuration key 'warp_size': too large (at most 1024)" \
  sim --set warp_size=2048
sim --set sm_count=4096 --set warp_size=1024 > /dev/null || fail "the largest sm_count and warp_size were refused"
# The tags of every L1 are held: a cache of 1-byte lines (64 Mi of them) used to take gigabytes.
expect_error "cltrace: error: configuration key 'line_size': 67108864 bytes of 1-byte lines are 67108864 lines, over the model's limit of 2097152 per L1" \
  sim --set set_index=linear --set size=64M --set line_size=1
expect_error "cltrace: error: configuration keys 'sm_count' and 'size': 4096 SMs of 524288 lines are 2147483648 lines, over the model's limit of 33554432 over all SMs" \
  sim --set set_index=linear --set size=64M --set sm_count=4096
# line_size takes the size suffixes, as size does.
sim --set set_index=linear --set associativity=1 --set line_size=1K --json > "$work/k.json"
grep -F '"line_size": 1024,' "$work/k.json" > /dev/null || fail "line_size=1K: $(grep line_size "$work/k.json")"
# Names in any case: scheduling as the other keys (it was case-sensitive), and schedule's --policy.
sim --set scheduling=WARP:Two-Level --set set_index=XOR --json > "$work/case.json"
grep -F '"scheduling": "warp:two-level",' "$work/case.json" > /dev/null || fail "scheduling=WARP:Two-Level: $(grep scheduling "$work/case.json")"
"$CLTRACE" schedule "$work/v.cltrace" --policy WARP -o "$work/v.sched" > /dev/null || fail "schedule --policy WARP was refused"
expect_error "cltrace: error: invalid value 'WARPS' for configuration key 'scheduling': scheduler: policy must be one of sequential, round-robin, random, warp (got 'warps')" \
  sim --set scheduling=WARPS
# A --set value that --runs, --seed or --sm replaces is checked all the same (it was dropped
# unread: --set runs=0 passed while --set runs=100001 did not), in simulate and predict.
expect_error "cltrace: error: configuration key 'runs': must be at least 1" sim --runs 1 --set runs=0
expect_error "cltrace: error: configuration key 'sm': SM 99 does not exist (sm_count = 15)" sim --sm 1 --set sm=99
expect_error "cltrace: error: invalid value 'x' for configuration key 'seed'" sim --seed 3 --set seed=x
expect_error "cltrace: error: configuration key 'sm': SM 99 does not exist (sm_count = 15)" \
  "$CLTRACE" predict "$KERNELS/vadd.cl" --sm 1 --set sm=99
expect_error "cltrace: error: configuration key 'runs': must be at least 1" \
  "$CLTRACE" predict "$KERNELS/vadd.cl" --runs 2 --set runs=0
# A flag still wins over a valid --set of its key.
sim --runs 2 --set runs=5 --json > "$work/runs.json"
grep -F '"runs": 2,' "$work/runs.json" > /dev/null || fail "--runs 2 --set runs=5: $(grep '"runs"' "$work/runs.json")"
echo "simulate config: all checks passed"
# A directory given as the configuration file is named as such (simulate read it for its keys
# first and printed the C++ library's "basic_filebuf::underflow error").
mkdir "$work/adir"
expect_error "cltrace: error: config file '$work/adir' is a directory" sim --config "$work/adir"
