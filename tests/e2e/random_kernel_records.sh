# Random kernels of fixed seeds (random_kernels.py): sixteen of two templates (1-D: loops whose
# bounds depend on the work-item, a break, a branch, a nested loop, vload4, a byte load, a store;
# 2-D: a loop and a branch on both local ids), each work-item's records against an interpreter
# of the template's source; and sixteen whose lanes share their control flow (one to three
# workgroups, every SM summed), their L1 figures (requests before and after coalescing, cold
# misses, 16-byte lanes per quarter-warp) against a count of distinct lines. A failure names a
# kernel that can be traced again.
source "$(dirname "$0")/lib.sh"
python3 "$(dirname "$0")/random_kernels.py" "$CLTRACE" "$work" 0 15 || fail "random kernels (above)"
