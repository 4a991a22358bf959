# A second, unrelated OpenCL implementation: Oclgrind (an OpenCL 1.2 interpreter built on LLVM
# 14; scripts/setup.sh installs it; its ICD is not registered system-wide, so this test points
# OCL_ICD_VENDORS at it). It takes SPIR (cl_khr_spir), so cltrace traces on it directly, and the
# traces must equal PoCL's in every byte but the header's device name.
source "$(dirname "$0")/lib.sh"
icd=/usr/lib/oclgrind/liboclgrind-rt-icd.so
[ -e "$icd" ] || fail "Oclgrind is not installed (scripts/setup.sh installs oclgrind)"
echo "$icd" > "$work/oclgrind.icd"
# One Oclgrind worker thread: with several, its atomics (histogram) race inside Oclgrind
# (ThreadSanitizer: one worker reads a table another fills), which could fail this test at random.
oclgrind() { OCL_ICD_VENDORS="$work/oclgrind.icd" OCLGRIND_NUM_THREADS=1 "$@"; }
# The dump without its device line.
body() { "$CLTRACE" dump "$1" | grep -v '^device: '; }

oclgrind "$CLTRACE" devices | grep -A1 '^\* 0:0  Oclgrind / Oclgrind Simulator' | grep 'takes SPIR 1.2 (cl_khr_spir)' >/dev/null ||
  fail "devices: $(oclgrind "$CLTRACE" devices 2>&1)"

# Bundled kernels: plain loads and stores (mt), loops (mm), atomics (histogram), local memory and
# barriers (mm_tiled).
for k in mt mm histogram mm_tiled; do
  oclgrind "$CLTRACE" run "$KERNELS/$k.cl" -o "$work/$k-oclgrind.cltrace" > "$work/out"
  grep -q "traced $k on Oclgrind / Oclgrind Simulator" "$work/out" || fail "$k: $(cat "$work/out")"
  "$CLTRACE" run "$KERNELS/$k.cl" -o "$work/$k-pocl.cltrace" > /dev/null
  cmp -s "$work/$k-oclgrind.cltrace" "$work/$k-pocl.cltrace" && fail "$k: the device names should differ"
  body "$work/$k-oclgrind.cltrace" > "$work/a"
  body "$work/$k-pocl.cltrace" > "$work/b"
  cmp "$work/a" "$work/b" || fail "$k: traces differ between Oclgrind and PoCL"
  echo "ok: $k traced alike on Oclgrind and PoCL ($(wc -l < "$work/a") dump lines)"
done

# The sample host (OpenCL 1.2 calls only) under `cltrace wrap` on Oclgrind: same output, traced
# in place, the same traces as under PoCL, and a clean exit (releasing the layer's OpenCL
# objects at exit used to corrupt Oclgrind's heap).
plain=$(oclgrind "$SAMPLE_HOST")
wrapped=$(oclgrind "$CLTRACE" wrap --out "$work/w-oclgrind" -- "$SAMPLE_HOST" 2>"$work/err") ||
  fail "wrap on Oclgrind failed: $(cat "$work/err")"
[ "$plain" = "$wrapped" ] || fail "output differs: '$plain' vs '$wrapped'"
grep -q "stand-in" "$work/err" && fail "Oclgrind takes SPIR: no stand-in expected: $(cat "$work/err")"
"$CLTRACE" wrap --out "$work/w-pocl" -- "$SAMPLE_HOST" > /dev/null 2>&1
for f in vadd-0 scale-1 scale-2 vadd-3; do
  body "$work/w-oclgrind/$f.cltrace" > "$work/a"
  body "$work/w-pocl/$f.cltrace" > "$work/b"
  cmp "$work/a" "$work/b" || fail "wrap $f differs between Oclgrind and PoCL"
done
# Oclgrind cannot run LLVM atomic instructions (which cltrace uses for the 64-bit atom_* forms
# PoCL lacks): it drops the work-items and reports success. The launch tag catches it.
printf '#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n__kernel void k(__global long* l) { atom_max(&l[0], (long)get_global_id(0)); }\n' > "$work/max64.cl"
expect_error "the device did not run 4 of the 4 work-items of the count run (the first, work-item 0" \
  oclgrind "$CLTRACE" run "$work/max64.cl" --kernel k --global 4 --local 4 --arg buffer:long:1 -o "$work/max64.cltrace"
echo "second implementation: all checks passed"
