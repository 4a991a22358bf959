# `cltrace run` with image and sampler arguments: the image's pixels (an initialiser, or a file
# next to the manifest) and the sampler's addressing pick the table entry each work-item loads,
# so the trace's addresses show both; wrong specifications are refused naming the argument.
source "$(dirname "$0")/lib.sh"
cat > "$work/pick.cl" <<'CL'
__kernel void pick(__read_only image2d_t im, sampler_t s, __global const float* table, __global float* o) {
  int x = get_global_id(0), y = get_global_id(1);
  uint4 p = read_imageui(im, s, (int2)(x + 1, y));
  o[y * get_global_size(0) + x] = table[p.x % 8];
}
CL
# loads SPEC... : the load addresses of work-items 0, 30, 31, 32 and 63 of pick over 32x2 with
# the image argument SPEC and the sampler SAMPLER.
loads() {
  "$CLTRACE" run "$work/pick.cl" --kernel pick --global 32,2 --local 32,1 -a "$1" -a "$2" -a buffer:float:8:iota \
    -a buffer:float:64 -o "$work/pick.cltrace" > /dev/null 2> "$work/err" || fail "run $1 $2: $(cat "$work/err")"
  "$CLTRACE" dump "$work/pick.cltrace" | awk '$1 == "wi" && $7 == "load" { a[$2] = $11 }
    END { print a[0], a[30], a[31], a[32], a[63] }'
}
# Pixel (x, y) = 32y + x; work-item (x, y) reads pixel (x + 1, y): entry (32y + x + 1) % 8, at
# x = 31 the edge pixel (clamp_to_edge: entry 31 % 8 = 7, at 0x1c) or the border (clamp: 0).
[ "$(loads image:r/unsigned_int8:32x2:iota sampler:clamp_to_edge:nearest)" = "0x4 0x1c 0x1c 0x4 0x1c" ] ||
  fail "clamp_to_edge: $(loads image:r/unsigned_int8:32x2:iota sampler:clamp_to_edge:nearest)"
[ "$(loads image:r/unsigned_int8:32x2:iota sampler:clamp:nearest)" = "0x4 0x1c 0x0 0x4 0x0" ] ||
  fail "clamp: $(loads image:r/unsigned_int8:32x2:iota sampler:clamp:nearest)"
grep -F "warning: kernel 'pick' reads images (1 read_image call)" "$work/err" >/dev/null || fail "no image warning"
echo "ok: image pixels and sampler addressing reach the trace"

# A manifest whose image comes from a file next to it: pixel i holds 3i, so work-item (x, y)
# loads entry 3(32y + x + 1) % 8 (x < 31): 3 for work-item 0 (0xc), and at x = 30 3*31 % 8 = 5.
mkdir "$work/m"
cp "$work/pick.cl" "$work/m/pick.cl"
python3 -c "import sys; sys.stdout.buffer.write(bytes(3 * i % 256 for i in range(64)))" > "$work/m/pixels.bin"
cat > "$work/m/pick.json" <<'JSON'
{"kernel": "pick", "global": [32, 2], "local": [32, 1],
 "args": ["image:r/unsigned_int8:32x2:file:pixels.bin", "sampler:clamp_to_edge:nearest", "buffer:float:8:iota",
          "buffer:float:64"]}
JSON
(cd "$work" && "$CLTRACE" run m/pick.cl -o "$work/m.cltrace" > /dev/null 2>&1) || fail "manifest run"
got=$("$CLTRACE" dump "$work/m.cltrace" | awk '$1 == "wi" && $7 == "load" { a[$2] = $11 } END { print a[0], a[30] }')
[ "$got" = "0xc 0x14" ] || fail "manifest image from file: $got"
echo "ok: an image read from a file named by the manifest"

expect_error "argument 0 (image2d_t im): an image2d_t needs image:ORDER/TYPE:WIDTHxHEIGHT" \
  "$CLTRACE" run "$work/pick.cl" --kernel pick --global 32 --local 32 -a image:r/float:32 -a sampler:clamp:nearest \
  -a buffer:float:8 -a buffer:float:64
expect_error "argument 1 (sampler_t s): a sampler needs sampler:ADDRESSING:FILTER[:normalized]" \
  "$CLTRACE" run "$work/pick.cl" --kernel pick --global 32 --local 32 -a image:r/float:32x1 -a scalar:int:0 \
  -a buffer:float:8 -a buffer:float:64
expect_error "argument 'sampler:repeat:nearest': repeat addressing needs normalized coordinates" \
  "$CLTRACE" run "$work/pick.cl" --kernel pick --global 32 --local 32 -a image:r/float:32x1 -a sampler:repeat:nearest \
  -a buffer:float:8 -a buffer:float:64
expect_error "argument 'image:r/float:32x1:file:$work/none.bin': cannot open" \
  "$CLTRACE" run "$work/pick.cl" --kernel pick --global 32 --local 32 -a "image:r/float:32x1:file:$work/none.bin" \
  -a sampler:clamp:nearest -a buffer:float:8 -a buffer:float:64
# What the device cannot make is refused before clCreateImage (which says only CL_INVALID_OPERATION).
expect_error "argument 0 (image2d_t im) 'image:rg/float:32x1': the device makes no 2D image of format rg/float (it has " \
  "$CLTRACE" run "$work/pick.cl" --kernel pick --global 32 --local 32 -a image:rg/float:32x1 -a sampler:clamp:nearest \
  -a buffer:float:8 -a buffer:float:64
expect_error "argument 0 (image2d_t im) 'image:r/float:32x100000000': image height 100000000 is more than the device's " \
  "$CLTRACE" run "$work/pick.cl" --kernel pick --global 32 --local 32 -a image:r/float:32x100000000 \
  -a sampler:clamp:nearest -a buffer:float:8 -a buffer:float:64
expect_error "argument 'image:r/float:32x1:fill': expected image:ORDER/TYPE:SIZES:fill:VALUE" \
  "$CLTRACE" run "$work/pick.cl" --kernel pick --global 32 --local 32 -a image:r/float:32x1:fill \
  -a sampler:clamp:nearest -a buffer:float:8 -a buffer:float:64
# PoCL 3.1 reads every pixel of an r/half_float image as 234: said, since the trace follows it.
"$CLTRACE" run "$work/pick.cl" --kernel pick --global 32 --local 32 -a image:r/half_float:32x1:fill:3 \
  -a sampler:clamp:nearest -a buffer:float:8 -a buffer:float:64 -o "$work/hf.cltrace" > /dev/null 2> "$work/err" ||
  fail "r/half_float run: $(cat "$work/err")"
grep -F "warning: argument 0 'image:r/half_float:32x1:fill:3': PoCL reads every pixel of an r/half_float (CL_R, CL_HALF_FLOAT) image as 234" \
  "$work/err" > /dev/null || fail "no r/half_float warning: $(cat "$work/err")"
echo "ok: PoCL's r/half_float reads are warned about"
