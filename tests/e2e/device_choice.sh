# Device choice and devices that take neither SPIR nor SPIR-V. Mesa's rusticl on llvmpipe
# (scripts/setup.sh installs mesa-opencl-icd; RUSTICL_ENABLE=llvmpipe turns it on) is such a
# device: it compiles OpenCL C but reports no cl_khr_spir and no IL version.
source "$(dirname "$0")/lib.sh"
[ -e /etc/OpenCL/vendors/rusticl.icd ] || fail "rusticl is not installed (scripts/setup.sh installs mesa-opencl-icd)"
export RUSTICL_ENABLE=llvmpipe

# `cltrace devices` numbers every device, says what each takes, and stars the default.
"$CLTRACE" devices > "$work/devices"
grep -qE '^\* [0-9]+:0  Portable Computing Language / ' "$work/devices" || fail "PoCL is not the default: $(cat "$work/devices")"
grep -A1 'rusticl / llvmpipe' "$work/devices" | grep "takes neither SPIR nor SPIR-V: cannot trace" >/dev/null ||
  fail "rusticl not described: $(cat "$work/devices")"
rusticl=$(grep -oE '[0-9]+:[0-9]+  rusticl' "$work/devices" | cut -d' ' -f1)

# Tracing on it fails naming the device and what it lacks, by index, by name and by environment.
lacks="device 'rusticl / llvmpipe"
expect_error "$lacks" "$CLTRACE" run "$KERNELS/mm.cl" --device "$rusticl" -o "$work/t.cltrace"
expect_error "accepts neither SPIR (no cl_khr_spir among its extensions) nor SPIR-V (IL version '')" \
  "$CLTRACE" run "$KERNELS/mm.cl" --device LLVMPIPE -o "$work/t.cltrace"
expect_error "$lacks" env CLTRACE_DEVICE=rusticl "$CLTRACE" predict "$KERNELS/mm.cl"
[ ! -e "$work/t.cltrace" ] || fail "a trace file was left behind"
# A spec that names no device, or several, lists the devices.
expect_error "--device '7:3': there is no device 7:3; the devices are:" \
  "$CLTRACE" run "$KERNELS/mm.cl" --device 7:3 -o "$work/t.cltrace"
expect_error "--device 'no such device' names no device; the devices are:" \
  "$CLTRACE" run "$KERNELS/mm.cl" --device "no such device" -o "$work/t.cltrace"
expect_error "CLTRACE_DEVICE 'l' names more than one device" env CLTRACE_DEVICE=l "$CLTRACE" run "$KERNELS/mm.cl"
# PoCL by name traces as the default does.
"$CLTRACE" run "$KERNELS/mm.cl" --device "portable" -o "$work/named.cltrace" > /dev/null
"$CLTRACE" run "$KERNELS/mm.cl" -o "$work/default.cltrace" > /dev/null
cmp "$work/named.cltrace" "$work/default.cltrace" || fail "--device portable traced differently"
echo "devices: all checks passed"

# The sample host on rusticl under `cltrace wrap`: each launch is traced on the stand-in device
# (PoCL), the program's own launches run on rusticl, its output is unchanged, and the traces are
# byte for byte those of the same program run on PoCL.
plain=$(SAMPLE_PLATFORM=rusticl "$SAMPLE_HOST")
echo "$plain" | grep "sum 7332864.0, correct" >/dev/null || fail "sample host on rusticl: $plain"
wrapped=$(SAMPLE_PLATFORM=rusticl "$CLTRACE" wrap --out "$work/rusticl" -- "$SAMPLE_HOST" 2>"$work/err")
[ "$plain" = "$wrapped" ] || fail "output differs: '$plain' vs '$wrapped'"
[ "$(grep -c "on the stand-in device 'Portable Computing Language" "$work/err")" -eq 4 ] ||
  fail "expected 4 launches traced on the stand-in: $(cat "$work/err")"
SAMPLE_PLATFORM=Portable "$CLTRACE" wrap --out "$work/pocl" -- "$SAMPLE_HOST" > /dev/null 2>&1
for f in vadd-0 scale-1 scale-2 vadd-3; do
  cmp "$work/rusticl/$f.cltrace" "$work/pocl/$f.cltrace" || fail "$f differs between stand-in and direct tracing"
done
# The edge host (less common calls) on rusticl: buffers the host may not read are copied on
# rusticl for the stand-in; a launch rusticl refuses (work-group over its 1024, within PoCL's
# limit) leaves no trace behind; event callbacks that set arguments, which rusticl runs on the
# thread that executes the queue, do not wait for the layer while it reads buffers from that
# queue for the stand-in (this hung); everything else is traced as on PoCL.
plain=$(EDGE_PLATFORM=rusticl "$EDGE_HOST")
wrapped=$(EDGE_PLATFORM=rusticl "$CLTRACE" wrap --out "$work/edge-rusticl" -- "$EDGE_HOST" 2>"$work/err") ||
  fail "edge host on rusticl: $(cat "$work/err")"
[ "$plain" = "$wrapped" ] || fail "edge host output differs on rusticl: '$plain' vs '$wrapped'"
grep -q "the program's twice launch 8 failed (CL_INVALID_WORK_" "$work/err" || fail "refused launch: $(cat "$work/err")"
[ ! -e "$work/edge-rusticl/twice-8.cltrace" ] || fail "a trace of the refused launch was left"
EDGE_PLATFORM=Portable "$CLTRACE" wrap --out "$work/edge-pocl" -- "$EDGE_HOST" > /dev/null 2>&1
[ "$(cut -f2 "$work/edge-rusticl/launches.tsv" | tr '\n' ' ')" = "hist accum scale shape one fill twice overlap embed bump bump bump bump bump bump bump mark " ] ||
  fail "edge launches on rusticl: $(cat "$work/edge-rusticl/launches.tsv")"
# overlap-9: a sub-buffer and its parent alias on the stand-in as on rusticl.
# rusticl runs no launch from a callback: its last bump is launch 17, PoCL's 18.
for pair in hist-0 accum-1 scale-2 one-4 fill-5 twice-7 overlap-9 embed-10 bump-11 bump-17:bump-18; do
  f=${pair%%:*}
  g=${pair#*:}
  "$CLTRACE" dump "$work/edge-rusticl/$f.cltrace" | grep -v '^device: ' > "$work/a"
  "$CLTRACE" dump "$work/edge-pocl/$g.cltrace" | grep -v '^device: ' > "$work/b"
  cmp -s "$work/a" "$work/b" || fail "edge $f differs between rusticl (stand-in) and PoCL ($g)"
done
echo "wrap on a device without SPIR: all checks passed"
