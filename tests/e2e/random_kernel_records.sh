# Sixteen random kernels of two templates (1-D: work-item-dependent loops with a break, a branch,
# a nested loop, vload4, a byte load, a store; 2-D: a loop and a branch on both local ids), each
# work-item's records against an interpreter of the template's source (random_kernels.py). The
# seeds are fixed, so a failure names a kernel that can be traced again.
source "$(dirname "$0")/lib.sh"
python3 "$(dirname "$0")/random_kernels.py" "$CLTRACE" "$work" 0 15 || fail "random kernels (above)"
