# Random kernels of fixed seeds (random_kernels.py), sixteen of each template: each work-item's
# records against an interpreter of the template's source (1-D: loops whose bounds depend on the
# work-item, a break, a branch, a nested loop, vload4, a byte load, a store; 2-D: a loop and a
# branch on both local ids); L1 figures against a count of distinct lines (coalescing, 16-byte
# lanes per quarter-warp, one to three workgroups, every SM summed) and against an LRU model of
# the L1 written in the script (hits, cold, capacity and conflict misses under the Fermi hash and
# the linear index, MSHR stalls with timing on and a fixed latency; per read where one warp reads
# single lines, in the 16 KiB and 48 KiB presets, up to the capacity-or-conflict boundary). A
# failure names a kernel that can be traced again.
source "$(dirname "$0")/lib.sh"
python3 "$(dirname "$0")/random_kernels.py" "$CLTRACE" "$work" 0 15 || fail "random kernels (above)"
