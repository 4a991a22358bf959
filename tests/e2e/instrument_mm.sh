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
echo "instrument: all checks passed"
