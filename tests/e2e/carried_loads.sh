# A load of what another load read the previous iteration (a[j] after a[j + 1]) is read once per
# entry into the loop, as clang -O2 for NVPTX carries it (one ld.global before the loop, one in
# it), and the kernel still computes with the right values: with a[k] = k and m = 4,
# sum of a[j] * a[j + 1] is 0 + 2 + 6 + 12 = 20 and sum of a[j + 1] - a[j] is 4 (the store's
# address shows it: o[20], o[4]); each reads a[0] .. a[4], 5 loads, not 8. A chain (a[j] +
# a[j + 1] + a[j + 2], both first ones carried, as in NVPTX) reads a[0] .. a[5], 6 loads, not 12,
# and sums 3 + 6 + 9 + 12 = 30.
source "$(dirname "$0")/lib.sh"
cat > "$work/cl.cl" <<'CL'
__kernel void product(__global const int* a, __global int* o, int m) {
  int s = 0;
  for (int j = 0; j < m; j++) s += a[j] * a[j + 1];
  o[s] = 1;
}
__kernel void difference(__global const int* a, __global int* o, int m) {
  int s = 0;
  for (int j = 0; j < m; j++) s += a[j + 1] - a[j];
  o[s] = 1;
}
__kernel void chain(__global const int* a, __global int* o, int m) {
  int s = 0;
  for (int j = 0; j < m; j++) s += a[j] + a[j + 1] + a[j + 2];
  o[s] = 1;
}
CL
for expected in "product 0 1 2 3 4 80" "difference 1 0 2 3 4 16" "chain 0 1 2 3 4 5 120"; do
  set -- $expected
  k=$1
  shift
  "$CLTRACE" run "$work/cl.cl" --kernel $k --global 1 --local 1 --arg buffer:int:8:iota --arg buffer:int:32 \
    --arg scalar:int:4 -o "$work/$k.cltrace" > /dev/null || fail "run $k"
  got=$("$CLTRACE" dump "$work/$k.cltrace" | python3 -c "
import sys
for line in sys.stdin:
    f = line.split()
    if f and f[0] == 'wi':  # a at 0, o at 256
        address = int(f[10], 16)
        print(address // 4 if f[6] == 'load' else address - 256, end=' ')")
  want="$* "
  [ "$got" = "$want" ] || fail "$k: records (element loaded, store offset) = '$got', expected '$want'"
  echo "ok: $k: records $want"
done
