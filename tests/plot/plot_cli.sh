#!/usr/bin/env bash
# `cltrace plot` end to end: trace the thesis's 32 x 32 transpose (16 x 2 workgroups) with
# `cltrace run`, plot it with every colouring as PNG and SVG, check the image sizes, and check the
# errors. Exits 77 (skipped) when no python3 with matplotlib and numpy is available.
# Environment: CLTRACE (the tool), KERNELS (kernels/), POCL_CACHE_DIR.
# A scratch directory, fail and expect_error come from the end-to-end helpers.
source "$(dirname "$0")/../e2e/lib.sh"
png_size() {  # prints "WIDTHxHEIGHT" from the IHDR chunk
  local b
  read -r -a b < <(od -An -tu1 -j16 -N8 "$1")
  echo "$(( (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3] ))x$(( (b[4] << 24) | (b[5] << 16) | (b[6] << 8) | b[7] ))"
}

have_python=no
for py in ${CLTRACE_PYTHON:-python3 /usr/bin/python3}; do
  if "$py" -c "import matplotlib, numpy" >/dev/null 2>&1; then have_python=yes; break; fi
done

trace=$work/mt.cltrace
"$CLTRACE" run "$KERNELS/mt.cl" --global 32,32 --local 16,2 -a buffer:float:1024:iota \
  -a buffer:float:1024 -a scalar:int:32 -a scalar:int:32 -o "$trace" >/dev/null

# Errors that need no Python.
expect_error "must end in .png or .svg" "$CLTRACE" plot "$trace" -o "$work/x.jpg"
expect_error "unknown colouring 'rainbow'" "$CLTRACE" plot "$trace" --color rainbow -o "$work/x.png"
expect_error "--seed: '-1' is negative" "$CLTRACE" plot "$trace" --seed -1 -o "$work/x.png"
expect_error "--seed: '18446744073709551616' does not fit in 64 bits" "$CLTRACE" plot "$trace" --seed 18446744073709551616 -o "$work/x.png"
expect_error "--raster: must not be empty" "$CLTRACE" plot "$trace" --raster "" -o "$work/x.png"
expect_error "name the same file" "$CLTRACE" plot "$trace" --raster "$work/same.svg" -o "$work/./same.svg"
expect_error "round-robbin" "$CLTRACE" plot "$trace" --policies warp,round-robbin -o "$work/x.png"
expect_error "apt-get install python3-matplotlib" env CLTRACE_PYTHON=/bin/false \
  "$CLTRACE" plot "$trace" -o "$work/x.png"
expect_error "CLTRACE_PLOT_SCRIPT" env CLTRACE_PLOT_SCRIPT="$work/none.py" \
  "$CLTRACE" plot "$trace" -o "$work/x.png"
expect_error "--width 32768 --height 4096 is 134217728 pixels; at most 67108864 (8192 x 8192)" \
  "$CLTRACE" plot "$trace" --width 32768 --height 4096 -o "$work/x.png"
[ ! -e "$work/x.png" ] || fail "an image was written despite the errors"
# A renderer that exits 0 but writes nothing (here one that does nothing) is not a success.
echo stale > "$work/y.svg"
expect_error "wrote no image to $work/y.svg" env CLTRACE_PYTHON=/bin/true "$CLTRACE" plot "$trace" -o "$work/y.svg"

# An interrupted plot takes away what it left: the temporary raster, the renderer and its
# half-written image. The fake renderer writes part of an image, notes its pid, and waits.
cat > "$work/slow-python" <<'SH'
#!/bin/sh
[ "$1" = -c ] && exit 0
echo partial > "$4"
echo $$ > "$RENDERER_PID"
exec sleep 60
SH
chmod +x "$work/slow-python"
for signal in INT TERM; do
  mkdir -p "$work/tmp-$signal"
  rm -f "$work/renderer.pid"
  # (A script's background job starts with SIGINT ignored: env gives it back its default.)
  TMPDIR="$work/tmp-$signal" RENDERER_PID="$work/renderer.pid" CLTRACE_PYTHON="$work/slow-python" \
    env --default-signal=INT "$CLTRACE" plot "$trace" -o "$work/interrupted.png" > /dev/null 2>&1 &
  plot_pid=$!
  for _ in $(seq 100); do [ -s "$work/renderer.pid" ] && break; sleep 0.1; done
  [ -s "$work/renderer.pid" ] || fail "SIG$signal: the renderer did not start"
  renderer=$(cat "$work/renderer.pid")
  kill -"$signal" "$plot_pid"
  status=0
  wait "$plot_pid" || status=$?
  expected=$((128 + $(kill -l "$signal")))
  [ "$status" = "$expected" ] || fail "SIG$signal: plot exited $status, not $expected"
  ! kill -0 "$renderer" 2>/dev/null || { kill "$renderer"; fail "SIG$signal: the renderer is still running"; }
  [ -z "$(ls -A "$work/tmp-$signal")" ] || fail "SIG$signal: left $(ls -A "$work/tmp-$signal")"
  [ ! -e "$work/interrupted.png" ] || fail "SIG$signal: left the half-written image"
  echo "ok: SIG$signal during rendering leaves no raster, renderer or image"
done

[ "$have_python" = yes ] || { echo "SKIP: no python3 with matplotlib and numpy"; exit 77; }
expect_error "cltrace" "$CLTRACE" plot "$work/missing.cltrace" -o "$work/x.png"
expect_error "sm_count" "$CLTRACE" plot "$trace" --set sm_count=0 -o "$work/x.png"

for color in thread warp workgroup hit; do
  out=$("$CLTRACE" plot "$trace" --color "$color" --width 900 --height 350 -o "$work/$color.png")
  echo "$out" | grep "2048 accesses, 2048 elements in 2 buffers" >/dev/null || fail "$color: summary: $out"
  [ -s "$work/$color.png" ] || fail "$color: no PNG"
  [ "$(png_size "$work/$color.png")" = 900x350 ] || fail "$color: PNG is $(png_size "$work/$color.png")"
  "$CLTRACE" plot "$trace" --color "$color" --width 640 --height 480 --policies warp,random \
    -o "$work/$color.svg" >/dev/null
  grep -q '<svg[^>]*width="640px" height="480px"' "$work/$color.svg" || fail "$color: SVG size"
  # The same plot again is the same file, byte for byte (SVG ids are salted, not random).
  "$CLTRACE" plot "$trace" --color "$color" --width 640 --height 480 --policies warp,random \
    -o "$work/$color-again.svg" >/dev/null
  cmp -s "$work/$color.svg" "$work/$color-again.svg" || fail "$color: two SVGs of one plot differ"
  echo "ok: $color PNG 900x350, SVG 640x480 (the same twice)"
done

# The smallest height the option takes renders, titles and all (room for them is kept apart).
for color in thread hit; do
  "$CLTRACE" plot "$trace" --color "$color" --width 400 --height 16 -o "$work/tiny-$color.png" > /dev/null ||
    fail "$color: a 400x16 plot failed"
  [ "$(png_size "$work/tiny-$color.png")" = 400x16 ] || fail "$color: PNG is $(png_size "$work/tiny-$color.png")"
done
echo "ok: a 400x16 plot"
# A file named ".png" is a PNG, for the script as for cltrace.
mkdir -p "$work/dot"
"$CLTRACE" plot "$trace" --width 400 --height 300 -o "$work/dot/.png" > /dev/null || fail "a plot named .png failed"
[ "$(png_size "$work/dot/.png")" = 400x300 ] || fail ".png is $(png_size "$work/dot/.png")"
echo "ok: a plot named .png"

# Hit colouring on one SM without timing (the thesis model): the miss counts are deterministic.
"$CLTRACE" plot "$trace" --color hit --set sm_count=1 --set timing=off --policies warp \
  --raster "$work/mt.raster" -o "$work/hit1.png" > "$work/hit1.txt"
grep -q "warp: 64 steps, .* of 2048 accesses miss" "$work/hit1.txt" || fail "hit summary: $(cat "$work/hit1.txt")"
head -c 16 "$work/mt.raster" | grep "CLTRACE-RASTER 1" >/dev/null || fail "--raster did not keep the raster"
echo "ok: hit summary and --raster"
