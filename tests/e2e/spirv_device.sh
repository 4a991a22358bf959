# The SPIR-V path (clCreateProgramWithIL) on a device that takes only SPIR-V. No implementation
# here takes SPIR-V natively (PoCL 3.1, rusticl 22.3 and Oclgrind report no IL), so the test
# puts il_device_layer over PoCL: the device then reports IL "SPIR-V_1.0" and no cl_khr_spir,
# validates every module with spirv-val, and reads it back with llvm-spirv, as PoCL 4+ does.
# Traces must be byte-identical to those made through SPIR, and the program's output unchanged.
source "$(dirname "$0")/lib.sh"
[ -e "$IL_DEVICE_LAYER" ] || fail "IL_DEVICE_LAYER not built: $IL_DEVICE_LAYER"
spirv() { OPENCL_LAYERS="$IL_DEVICE_LAYER" IL_LAYER_LOG="$work/il.log" "$@"; }

spirv "$CLTRACE" devices | grep -A1 '^\* 0:0  Portable Computing Language' |
  grep -q 'takes SPIR-V (clCreateProgramWithIL); IL version SPIR-V_1.0' || fail "devices: $(spirv "$CLTRACE" devices 2>&1)"

# Every bundled kernel: two modules (count and trace), no newer than the device's SPIR-V 1.0.
for cl in "$KERNELS"/*.cl; do
  k=$(basename "$cl" .cl)
  rm -f "$work/il.log"
  spirv "$CLTRACE" run "$cl" -o "$work/$k-spirv.cltrace" > /dev/null
  [ "$(grep -c '^clCreateProgramWithIL: [0-9]* bytes, SPIR-V 1.0$' "$work/il.log")" = 2 ] ||
    fail "$k: expected two SPIR-V 1.0 modules, log: $(cat "$work/il.log" 2>&1)"
  "$CLTRACE" run "$cl" -o "$work/$k-spir.cltrace" > /dev/null
  cmp "$work/$k-spirv.cltrace" "$work/$k-spir.cltrace" || fail "$k: the SPIR-V trace differs from the SPIR one"
  echo "ok: $k traced alike through SPIR-V and SPIR"
done

# The sample host under `cltrace wrap`: same output, one trace per launch, equal to SPIR's.
rm -f "$work/il.log"
plain=$("$SAMPLE_HOST")
wrapped=$(spirv "$CLTRACE" wrap --out "$work/w-spirv" -- "$SAMPLE_HOST" 2>"$work/err") || fail "wrap: $(cat "$work/err")"
[ "$plain" = "$wrapped" ] || fail "output differs: '$plain' vs '$wrapped'"
[ "$(grep -c '^clCreateProgramWithIL' "$work/il.log")" = 4 ] || fail "wrap: expected 4 modules (2 kernels), log: $(cat "$work/il.log")"
"$CLTRACE" wrap --out "$work/w-spir" -- "$SAMPLE_HOST" > /dev/null 2>&1
for f in vadd-0 scale-1 scale-2 vadd-3; do
  cmp "$work/w-spirv/$f.cltrace" "$work/w-spir/$f.cltrace" || fail "wrap $f differs between SPIR-V and SPIR"
done
echo "ok: the sample host under wrap, through SPIR-V"

# Addresses computed from a * b + c: clang's llvm.fmuladd, which PoCL fuses when it compiles
# the source; cltrace hands SPIR-V an explicit fma, so the addresses (and the trace) agree.
cat > "$work/fma.cl" <<'CL'
__kernel void k(__global const float* a, __global const float* b, __global float* o) {
  int i = get_global_id(0);
  float x = a[i], y = b[i];
  int j = ((int)(x * y * 1e7f + x * 3e6f)) & 4095;
  o[i] = a[j];
}
CL
fma_args=(-k k --global 4096 --local 64 --arg buffer:float:4096:random:1 --arg buffer:float:4096:random:2 --arg buffer:float:4096)
spirv "$CLTRACE" run "$work/fma.cl" "${fma_args[@]}" -o "$work/fma-spirv.cltrace" > /dev/null
"$CLTRACE" run "$work/fma.cl" "${fma_args[@]}" -o "$work/fma-spir.cltrace" > /dev/null
cmp "$work/fma-spirv.cltrace" "$work/fma-spir.cltrace" || fail "addresses from a * b + c differ between SPIR-V and SPIR"
echo "ok: addresses from a * b + c alike"

# Fences, atomics of both widths, structs by value and a kernel calling a kernel on this device:
# the wrapper and kernel suites run behind the layer too (ctest spirv_device_*).
echo "SPIR-V device: all checks passed"
