# Image and sampler arguments (image_host): under `cltrace wrap` the program prints what it
# prints alone; each launch's buffer accesses are traced, its image reads and writes are not
# (said once per kernel); on rusticl (no SPIR) the images and samplers are copied to the
# stand-in device and the traces are those of PoCL.
source "$(dirname "$0")/lib.sh"
# Pixel i holds i; blur writes out[i] = pixel(x,y) * weights[pixel(min(x+1,63),y) % 4] with
# weights {1, 0.5, 0.25, 2}; paint doubles it into dst: dst[63] = 2 * 63 * 2, dst[64] = 2 * 64 * 0.5.
# bump adds 1 to dst in place twice (+ 2 * 256 in the sum), counting values mod 8 (python over
# the 256 pixels: for each dst value v, hist[v % 8] and hist[(v + 1) % 8] count once).
expected="dst[0] 0, dst[63] 252, dst[64] 64, sum 62680.0
bumped twice: dst[0] 2, dst[63] 254, dst[64] 66, sum 63192.0
hist 112 112 16 16 52 52 76 76"
plain=$(IMAGE_PLATFORM=Portable "$IMAGE_HOST")
[ "$plain" = "$expected" ] || fail "image host alone: $plain"
wrapped=$(IMAGE_PLATFORM=Portable "$CLTRACE" wrap --out "$work/pocl" -- "$IMAGE_HOST" 2>"$work/err") ||
  fail "wrapped: $(cat "$work/err")"
[ "$wrapped" = "$expected" ] || fail "output differs under wrap: $wrapped"
grep -F "warning: kernel 'blur' reads images (2 read_image calls): image reads go through a GPU's texture cache, not its L1, and are not traced" \
  "$work/err" >/dev/null || fail "no image read warning: $(cat "$work/err")"
grep -F "warning: kernel 'paint' writes images (2 write_image calls): image writes are not traced" \
  "$work/err" >/dev/null || fail "no image write warning: $(cat "$work/err")"
[ "$(cut -f1,2 "$work/pocl/launches.tsv" | tr '\t\n' ': ')" = "0:blur 1:paint 2:bump 3:bump " ] ||
  fail "launches: $(cat "$work/pocl/launches.tsv")"

# blur: the buffers alone (weights at 0, out at 0x100); work-item (x, y) loads weight
# (x+1) % 4, or 3 at x = 63 (the host's sampler clamps to the edge), and stores out[64y + x].
"$CLTRACE" dump "$work/pocl/blur-0.cltrace" > "$work/blur.txt"
grep -A2 "^buffers: 2$" "$work/blur.txt" | tr '\n' '|' > "$work/buffers"
[ "$(cat "$work/buffers")" = "buffers: 2|  arg 2 weights: base 0x0 size 16|  arg 3 out: base 0x100 size 1024|" ] ||
  fail "blur buffers: $(cat "$work/buffers")"
grep -E "^records: 512$" "$work/blur.txt" >/dev/null || fail "blur records: $(grep records "$work/blur.txt")"
for want in "wi 0 group (0,0) local (0,0) load instr 0 addr 0x4 " "wi 1 group (0,0) local (1,0) load instr 0 addr 0x8 " \
            "wi 62 group (1,0) local (30,0) load instr 0 addr 0xc " "wi 63 group (1,0) local (31,0) load instr 0 addr 0xc " \
            "wi 63 group (1,0) local (31,0) store instr 1 addr 0x1fc " "wi 64 group (0,1) local (0,0) load instr 0 addr 0x4 " \
            "wi 255 group (1,3) local (31,0) store instr 1 addr 0x4fc "; do
  grep -F "$want" "$work/blur.txt" >/dev/null || fail "blur: no '$want'"
done
# One warp per workgroup, each on its own SM: one read request (the 16 weight bytes) and one
# write request (128 bytes of out) each, all cold.
"$CLTRACE" simulate --sm all --json "$work/pocl/blur-0.cltrace" > "$work/blur.json"
python3 - "$work/blur.json" <<'PY' || fail "blur simulation: $(cat "$work/blur.json")"
import json, sys
d = json.load(open(sys.argv[1]))
got = (d["reads"], d["read_misses"], d["misses"]["cold"], d["writes"], d["write_misses"], d["requests_before_coalescing"])
sys.exit(0 if got == (8, 8, 8, 8, 8, 512) else f"got {got}")
PY
# paint: one load of in per work-item (in at 0).
"$CLTRACE" dump "$work/pocl/paint-1.cltrace" > "$work/paint.txt"
grep -E "^records: 256$" "$work/paint.txt" >/dev/null || fail "paint records"
grep -F "wi 65 group (0,1) local (1,0) load instr 0 addr 0x104 " "$work/paint.txt" >/dev/null || fail "paint: wi 65"
# bump reads and writes one image: its count run's writes are put back before the trace run,
# so each launch's trace has the pixels it started from: work-item 0 reads dst[0] = 0 (hist[0],
# 0x0) in launch 2 and 1 (hist[1], 0x4) in launch 3; work-item 63 reads 252 (252 % 8 = 4: 0x10),
# then 253 (0x14).
bump_atomics() {
  "$CLTRACE" dump "$1" | awk '$1 == "wi" && ($2 == 0 || $2 == 63) { printf "%s:%s ", $2, $11 }'
}
[ "$(bump_atomics "$work/pocl/bump-2.cltrace")" = "0:0x0 63:0x10 " ] || fail "bump-2: $(bump_atomics "$work/pocl/bump-2.cltrace")"
[ "$(bump_atomics "$work/pocl/bump-3.cltrace")" = "0:0x4 63:0x14 " ] || fail "bump-3: $(bump_atomics "$work/pocl/bump-3.cltrace")"
echo "ok: image kernels traced under wrap on PoCL"

# rusticl takes no SPIR: the launches are traced on the stand-in (PoCL), with the images' pixels
# and the sampler's addressing copied there (the weights each work-item picks show both).
export RUSTICL_ENABLE=llvmpipe
plain=$(IMAGE_PLATFORM=rusticl "$IMAGE_HOST")
[ "$plain" = "$expected" ] || fail "image host on rusticl: $plain"
wrapped=$(IMAGE_PLATFORM=rusticl "$CLTRACE" wrap --out "$work/rusticl" -- "$IMAGE_HOST" 2>"$work/err") ||
  fail "wrapped on rusticl: $(cat "$work/err")"
[ "$wrapped" = "$expected" ] || fail "output differs under wrap on rusticl: $wrapped"
# (paint's scratch image, which the host may not read, is only written: made empty there.)
[ "$(grep -c "on the stand-in device 'Portable Computing Language" "$work/err")" -eq 4 ] ||
  fail "expected 4 launches traced on the stand-in: $(cat "$work/err")"
for f in blur-0 paint-1 bump-2 bump-3; do
  "$CLTRACE" dump "$work/rusticl/$f.cltrace" | grep -v '^device: ' > "$work/a"
  "$CLTRACE" dump "$work/pocl/$f.cltrace" | grep -v '^device: ' > "$work/b"
  cmp -s "$work/a" "$work/b" || fail "$f differs between rusticl (stand-in) and PoCL"
done
echo "ok: image kernels traced on the stand-in device"

