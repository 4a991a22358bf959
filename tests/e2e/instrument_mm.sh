# `cltrace instrument` writes loadable bitcode, readable IR and SPIR-V that validates, the same
# bitcode every time.
source "$(dirname "$0")/lib.sh"
"$CLTRACE" instrument "$KERNELS/mm.cl" --kernel mm --emit-ll --spirv -o "$work/out" > "$work/summary"
grep -q "kernel mm: 1 loops (max depth 1), 3 sites" "$work/summary" || fail "summary: $(cat "$work/summary")"
for f in count.bc trace.bc count.ll trace.ll count.spv trace.spv manifest.json; do
  [ -s "$work/out/$f" ] || fail "missing $f"
done
grep -q "i64 addrspace(1)\* %cltrace_counts" "$work/out/count.ll" || fail "count.ll lacks the counts parameter"
spirv-val "$work/out/trace.spv" || fail "trace.spv does not validate"
spirv-val "$work/out/count.spv" || fail "count.spv (with its bounds checks) does not validate"
python3 -c "import json,sys; m=json.load(open(sys.argv[1])); assert m['kernel']=='mm' and len(m['accesses'])==3 and m['accesses'][2]['kind']=='store' and m['count_run_writes_buffers'] is False, m" "$work/out/manifest.json"
# The same source gives the same bitcode (device program caches key on it), wherever clang's
# temporary file was.
"$CLTRACE" instrument "$KERNELS/mm.cl" --kernel mm -o "$work/again" > /dev/null
cmp -s "$work/out/trace.bc" "$work/again/trace.bc" || fail "trace.bc differs between two runs"
cmp -s "$work/out/count.bc" "$work/again/count.bc" || fail "count.bc differs between two runs"
# A kernel calling a kernel with a struct by value: inlining leaves a copy of the struct on the
# stack, which must stay in the entry block (spirv-val refuses OpVariables anywhere else; the
# count run's checks and the trace run's argument records split the entry block).
cat > "$work/byval.cl" <<'CL'
typedef struct { int scale; int shift; } Params;
__kernel void inner(__global const int* a, __global int* b, Params p) { b[get_global_id(0) + p.shift] = a[get_global_id(0)] * p.scale; }
__kernel void outer(__global const int* a, __global int* b, Params p) { inner(a, b, p); b[0] = -1; }
CL
"$CLTRACE" instrument "$work/byval.cl" --kernel outer --spirv -o "$work/byval" > /dev/null
spirv-val "$work/byval/trace.spv" || fail "byval trace.spv does not validate"
spirv-val "$work/byval/count.spv" || fail "byval count.spv does not validate"
# waits_for_group: whether the kernel can reach a barrier or another wait for the whole
# workgroup (its count kernel then has no outside word, and its count run gets the stuck watch).
cat > "$work/waits.cl" <<'CL'
__kernel void bar(__global float* a) { size_t i = get_global_id(0); a[i] += 1.0f; barrier(CLK_GLOBAL_MEM_FENCE); a[i] *= 2.0f; }
__kernel void any(__global int* a) { size_t i = get_global_id(0); for (int k = 0; k < a[0]; ++k) a[i] += work_group_any(a[i] > k); }
__kernel void plain(__global int* a) { size_t i = get_global_id(0); for (int k = 0; k < a[0]; ++k) a[i] += k; }
CL
for k in bar:True any:True plain:False; do
  "$CLTRACE" instrument "$work/waits.cl" --kernel "${k%%:*}" --build-options=-cl-std=CL2.0 -o "$work/waits_${k%%:*}" > /dev/null ||
    fail "instrument ${k%%:*}"
  python3 -c "import json,sys; m=json.load(open(sys.argv[1])); assert str(m['waits_for_group'])==sys.argv[2], m" \
    "$work/waits_${k%%:*}/manifest.json" "${k#*:}" || fail "waits_for_group of ${k%%:*}"
done
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['waits_for_group'] is False" "$work/out/manifest.json" ||
  fail "mm waits for its group"
echo "instrument: all checks passed"
