# Twelve random kernels of one template (loops whose bounds depend on the work-item, a break,
# a branch, a nested loop, vload4, a byte load, a store), each work-item's records against an
# interpreter of the template's source (random_kernels.py). The seeds are fixed, so a failure
# names a kernel that can be traced again.
source "$(dirname "$0")/lib.sh"
python3 "$(dirname "$0")/random_kernels.py" "$CLTRACE" "$work" 0 11 || fail "random kernels (above)"
