# Kernels steered by what global atomics return (a compare-and-swap loop, a slot taken with
# atomic_inc) are traced on a one-compute-unit part of the device, where PoCL runs workgroups one
# after another: the trace is the same with one PoCL thread or two, every run, and a CAS loop
# runs once per work-item. instrument's manifest lists such atomics.
source "$(dirname "$0")/lib.sh"
cat > "$work/k.cl" <<'CL'
inline void add_float(volatile __global float* p, float v) {
  union { unsigned int u; float f; } old, want, seen;
  seen.f = *p;
  do {
    old.f = seen.f;
    want.f = old.f + v;
    seen.u = atomic_cmpxchg((volatile __global unsigned int*)p, old.u, want.u);
  } while (seen.u != old.u);
}
__kernel void scatter_add(__global const int* idx, __global const float* val, __global float* grid) {
  int i = get_global_id(0);
  add_float(&grid[idx[i] % 4], val[i]);
}
__kernel void compact(__global const float* in, __global float* out, __global int* n) {
  int i = get_global_id(0);
  if (in[i] > 0.5f) out[atomic_inc(n)] = in[i];
}
// Two-level: the workgroup's base from one atomic_add, shared through __local memory.
__kernel void compact_shared(__global const float* in, __global float* out, __global int* n) {
  __local int base, count;
  int l = get_local_id(0);
  if (l == 0) count = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  float v = in[get_global_id(0)];
  int mine = v > 0.5f ? atomic_inc(&count) : -1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) base = atomic_add(n, count);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (mine >= 0) out[base + mine] = v;
}
CL
# traced_alike NAME ROUNDS LAUNCH...: traces the launch on one PoCL thread, then ROUNDS times on
# two; every trace must be the same file. The last run's output stays in $work/out.
traced_alike() {
  local name=$1 rounds=$2
  shift 2
  POCL_MAX_PTHREAD_COUNT=1 "$CLTRACE" run "$work/k.cl" "$@" -o "$work/$name-1.cltrace" > /dev/null 2>&1 ||
    fail "$name on one thread"
  for round in $(seq "$rounds"); do
    POCL_MAX_PTHREAD_COUNT=2 "$CLTRACE" run "$work/k.cl" "$@" -o "$work/$name-2.cltrace" > "$work/out" 2>&1 ||
      fail "$name on two threads (round $round): $(cat "$work/out")"
    cmp "$work/$name-1.cltrace" "$work/$name-2.cltrace" || fail "$name's trace differs between runs (round $round)"
  done
}
traced_alike compact 3 --kernel compact --global 262144 --local 256 -a buffer:float:262144:random:3 \
  -a buffer:float:262144 -a buffer:int:1
grep -F "warning: kernel 'compact': what the atomic [1] (" "$work/out" > /dev/null || fail "no warning: $(cat "$work/out")"
grep -F ") returns gives the address of [2] (" "$work/out" > /dev/null || fail "no address: $(cat "$work/out")"
grep -F "warning: kernel 'compact' is traced on a part of the device with one compute unit (clCreateSubDevices)" \
  "$work/out" > /dev/null || fail "no note: $(cat "$work/out")"
echo "ok: compact traced alike every run"
# Traced on the program's device its traces differed in 5 of 5 runs (the steering through
# __local memory was not seen).
traced_alike compact_shared 3 --kernel compact_shared --global 262144 --local 256 -a buffer:float:262144:random:3 \
  -a buffer:float:262144 -a buffer:int:1
grep -F "warning: kernel 'compact_shared': what the atomic [" "$work/out" > /dev/null || fail "no warning: $(cat "$work/out")"
echo "ok: compact_shared traced alike every run"

# 65536 work-items, each: idx[i], val[i], the first read of the cell, one atomic_cmpxchg.
traced_alike scatter_add 5 --kernel scatter_add --global 65536 --local 256 -a buffer:int:65536:random:1 \
  -a buffer:float:65536:random:2 -a buffer:float:4
grep -F "65536 work-items, 262144 records" "$work/out" > /dev/null || fail "CAS loop repeated: $(cat "$work/out")"
grep -F "what the atomic [3] (" "$work/out" > /dev/null || fail "no warning: $(cat "$work/out")"
grep -F ") returns decides a branch (" "$work/out" > /dev/null || fail "no branch: $(cat "$work/out")"
echo "ok: scatter_add's CAS loop runs once per work-item, every run"

for k in scatter_add:'[3] []' compact:'[] [1]'; do
  "$CLTRACE" instrument "$work/k.cl" -k "${k%%:*}" -o "$work/m_${k%%:*}" > /dev/null 2>&1 || fail "instrument ${k%%:*}"
  got=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1]))
print(m['atomics_steering_branches'], m['atomics_steering_addresses'])" "$work/m_${k%%:*}/manifest.json")
  [ "$got" = "${k#*:}" ] || fail "${k%%:*}'s manifest lists $got"
done
"$CLTRACE" instrument "$KERNELS/histogram.cl" -k "$(python3 -c "import json; print(json.load(open('$KERNELS/histogram.json'))['kernel'])")" \
  -o "$work/m_h" > /dev/null 2>&1 || fail "instrument histogram"
python3 -c "import json,sys; m=json.load(open(sys.argv[1]))
assert m['atomics_steering_branches'] == [] and m['atomics_steering_addresses'] == [], m" "$work/m_h/manifest.json" ||
  fail "histogram's atomics steer nothing"
echo "ok: manifests list the steering atomics"

# Under wrap too such a kernel is traced on one compute unit of the program's device (on copies of
# its buffers), and the program's launch then runs on the device itself: the program's output is
# unchanged, and the CAS loop runs once per work-item with PoCL's two threads.
cat > "$work/w.cl" <<'CL'
__kernel void k(__global float* a) {
  volatile __global unsigned int* p = (volatile __global unsigned int*)&a[0];
  union { unsigned int u; float f; } old, want, seen;
  seen.u = *p;
  do {
    old.u = seen.u;
    want.f = old.f + 1.0f;
    seen.u = atomic_cmpxchg(p, old.u, want.u);
  } while (seen.u != old.u);
  a[get_global_id(0) + 64] += 1;
}
CL
plain=$("$ONE_BUFFER_HOST" "$work/w.cl" "" 1 16) || fail "alone: $plain"
wrapped=$(POCL_MAX_PTHREAD_COUNT=2 "$CLTRACE" wrap --out "$work/wa" -- "$ONE_BUFFER_HOST" "$work/w.cl" "" 1 16 \
  2> "$work/err") || fail "wrapped: $(cat "$work/err")"
[ "$plain" = "$wrapped" ] || fail "output differs: $wrapped (alone: $plain)"
grep -F "warning: kernel 'k' is traced on one compute unit of '" "$work/err" > /dev/null || fail "no warning: $(cat "$work/err")"
grep -E "^cltrace: traced k launch 0 -> .*/wa/k-0.cltrace on one compute unit of '.*'$" "$work/err" > /dev/null ||
  fail "traced where: $(cat "$work/err")"
# 64 work-items in 4 workgroups, one at a time: the first read of a[0], one atomic_cmpxchg (no
# repeat), a[i + 64] read and written.
"$CLTRACE" stats "$work/wa/k-0.cltrace" > "$work/stats" || fail "stats"
[ "$(grep -E '^  (load|store|atomic) ' "$work/stats" | tr -s ' ')" = "$(printf ' load 128\n store 64\n atomic 64')" ] ||
  fail "kinds: $(cat "$work/stats")"
echo "ok: under wrap, traced on one compute unit; the CAS loop runs once per work-item"

# 64 work-items in 4 workgroups each take 512 slots of a counter and count the slot at a[1 + slot %
# 64]: which elements a work-item touches depends on how the workgroups interleave (traced on the
# program's device with two PoCL threads, about one run in five differed). The trace is the same
# every run, and the same as when PoCL runs one workgroup at a time (a device of one compute unit is
# not split, and no note is needed).
cat > "$work/s.cl" <<'CL'
__kernel void k(__global float* a) {
  volatile __global int* n = (volatile __global int*)&a[0];
  for (int j = 0; j < 512; ++j) {
    int slot = atomic_inc(n);
    atomic_inc((volatile __global int*)&a[1 + (slot & 63)]);
  }
}
CL
plain=$("$ONE_BUFFER_HOST" "$work/s.cl" "" 1 16) || fail "alone: $plain"
POCL_MAX_PTHREAD_COUNT=1 "$CLTRACE" wrap --out "$work/ws1" -- "$ONE_BUFFER_HOST" "$work/s.cl" "" 1 16 > /dev/null \
  2> "$work/err" || fail "wrapped on one thread: $(cat "$work/err")"
if grep -E "note: kernel 'k'|compute unit" "$work/err" > /dev/null; then fail "split one unit: $(cat "$work/err")"; fi
for round in 1 2 3 4 5; do
  rm -rf "$work/ws2"
  wrapped=$(POCL_MAX_PTHREAD_COUNT=2 "$CLTRACE" wrap --out "$work/ws2" -- "$ONE_BUFFER_HOST" "$work/s.cl" "" 1 16 \
    2> "$work/err") || fail "wrapped (round $round): $(cat "$work/err")"
  [ "$plain" = "$wrapped" ] || fail "output differs (round $round): $wrapped (alone: $plain)"
  cmp "$work/ws1/k-0.cltrace" "$work/ws2/k-0.cltrace" || fail "the trace differs (round $round)"
done
echo "ok: under wrap, a slot-taking kernel's trace is the same every run"
