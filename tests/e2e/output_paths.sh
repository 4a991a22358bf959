# Where traces and scheduled files go: a failed write removes only a file it made, never a
# device, a pipe or a link; a path that cannot hold a trace is refused before the launch; an empty output path is
# refused; a kernel may include a header next to it; `wrap` takes options after the program's
# name as the program's only after --.
source "$(dirname "$0")/lib.sh"
vadd="$KERNELS/vadd.cl"
# A full device (like /dev/full): the write fails and the node stays.
if mknod -m 666 "$work/full" c 1 7 2>/dev/null; then  # (root only)
  expect_error "No space left on device" "$CLTRACE" run "$vadd" -o "$work/full"
  [ -c "$work/full" ] || fail "the device node was removed"
  expect_error "$work/full" "$CLTRACE" predict "$vadd" --runs 1 --keep-trace "$work/full"
  [ -c "$work/full" ] || fail "the device node was removed by predict --keep-trace"
  # A scheduled file in every format says why too.
  "$CLTRACE" run "$vadd" -o "$work/vadd.cltrace" > /dev/null || fail "run vadd"
  for format in binary text csv; do
    expect_error "cannot write scheduled file '$work/full': No space left on device" \
      "$CLTRACE" schedule "$work/vadd.cltrace" --format "$format" -o "$work/full"
  done
  [ -c "$work/full" ] || fail "the device node was removed by schedule"
fi
# A pipe, directly or through a link: refused before anything is written; both stay.
mkfifo "$work/fifo"
ln -s "$work/fifo" "$work/to-fifo"
for path in "$work/fifo" "$work/to-fifo"; do
  expect_error "$path: cannot be written: the trace's header is completed at the end, which needs a file to seek in" \
    timeout 60 "$CLTRACE" run "$vadd" -o "$path"
done
[ -p "$work/fifo" ] && [ -L "$work/to-fifo" ] || fail "the pipe or the link was removed"
# /dev/null takes a trace (nothing is kept) and stays.
"$CLTRACE" run "$vadd" -o /dev/null >/dev/null
[ -c /dev/null ] || fail "/dev/null"
# A link to a file: the file it names gets the trace; the link stays a link.
touch "$work/real.cltrace"
ln -s "$work/real.cltrace" "$work/link.cltrace"
"$CLTRACE" run "$vadd" -o "$work/link.cltrace" >/dev/null
[ -L "$work/link.cltrace" ] || fail "the link was replaced"
"$CLTRACE" stats "$work/real.cltrace" | grep -E "^records: 786432$" >/dev/null || fail "the linked file has no trace"
# A link to nothing is refused, as schedule refuses it (the trace replaced the link).
ln -s "$work/nowhere/real.cltrace" "$work/dangling.cltrace"
expect_error "cltrace: error: $work/dangling.cltrace: cannot create: it is a link to nothing" \
  "$CLTRACE" run "$vadd" -o "$work/dangling.cltrace"
[ -L "$work/dangling.cltrace" ] || fail "the link to nothing was replaced"
echo "ok: devices, pipes and links"
# schedule likewise: a failed schedule (a cut trace) removes the output it made, in every format,
# the file a link names too (the link stays); a device stays.
"$CLTRACE" run "$vadd" -o "$work/v.cltrace" > /dev/null
head -c 20000 "$work/v.cltrace" > "$work/cut.cltrace"
ln -s "$work/real.sched" "$work/link.sched"
for format in binary text csv; do
  for out in "$work/out.sched" "$work/link.sched"; do
    touch "$work/real.sched"  # (a link to nothing is refused, as by the trace writer)
    expect_error "cltrace: error: $work/cut.cltrace: truncated body: the body ends inside" \
      "$CLTRACE" schedule "$work/cut.cltrace" --format $format -o "$out"
    [ ! -e "$out" ] || fail "schedule --format $format left $out: $(ls -l "$out")"
  done
  [ -L "$work/link.sched" ] || fail "the link was removed"
done
if [ -c "$work/full" ]; then
  expect_error "truncated body" "$CLTRACE" schedule "$work/cut.cltrace" -o "$work/full"
  [ -c "$work/full" ] || fail "the device node was removed by schedule"
fi
touch "$work/real.sched"
"$CLTRACE" schedule "$work/v.cltrace" -o "$work/link.sched" > /dev/null
[ -L "$work/link.sched" ] && "$CLTRACE" simulate "$work/real.sched" > /dev/null || fail "schedule through a link"
echo "ok: schedule's output"
for cmd in "run $vadd -o" "predict $vadd --keep-trace" "instrument $vadd -o"; do
  # shellcheck disable=SC2086
  expect_error "must not be empty" "$CLTRACE" $cmd ""
done
# A header next to the kernel, included by a kernel run from another directory.
mkdir -p "$work/src"
printf '#define IDX(i) ((i) * 2)\n' > "$work/src/index.h"
printf '#include "index.h"\n__kernel void k(__global int* a) { a[IDX(get_global_id(0))] = 1; }\n' > "$work/src/k.cl"
(cd / && "$CLTRACE" run "$work/src/k.cl" --kernel k --global 8 --local 8 --arg buffer:int:16 -o "$work/k.cltrace" >/dev/null) ||
  fail "the header next to the kernel was not found"
"$CLTRACE" dump "$work/k.cltrace" --limit 2 | tr '\n' '|' | grep "store instr 0 addr 0x0 size 4 .*store instr 0 addr 0x8 size 4" >/dev/null ||
  fail "k: $("$CLTRACE" dump "$work/k.cltrace" --limit 2)"
echo "ok: empty paths refused, a header next to the kernel"
# wrap: options after the program's name without -- are refused (they would be taken as
# cltrace's); after -- they are the program's.
expect_error "option --launch follows the program's name; give the program and its arguments after --" \
  "$CLTRACE" wrap --out "$work/w" /bin/echo -n 3
out=$("$CLTRACE" wrap --out "$work/w" -- /bin/echo -n 3 2>/dev/null)
[ "$out" = "3" ] || fail "echo -n 3 printed '$out'"
expect_error "--launch: '-1' is negative" "$CLTRACE" wrap --launch -1 -- /bin/true
expect_error "--kernel: must not be empty" "$CLTRACE" wrap --kernel "" -- /bin/true
mkdir -p "$work/ro" && chmod 500 "$work/ro"
if [ "$(id -u)" != 0 ]; then
  expect_error "cannot write into $work/ro" "$CLTRACE" wrap --out "$work/ro" -- /bin/true
fi
expect_error "cannot write into /proc" "$CLTRACE" wrap --out /proc -- /bin/true
# The file is written beside its path under a name of its own process, within the 255 bytes a
# name may have: a 255-byte name works, and two runs given one path both finish, the file whole.
long="$work/long/$(printf 'n%.0s' $(seq 247)).cltrace"
mkdir -p "$work/long"
"$CLTRACE" run "$KERNELS/vadd.cl" -o "$long" > /dev/null 2>"$work/err" || fail "a 255-byte name: $(cat "$work/err")"
"$CLTRACE" stats "$long" > /dev/null || fail "the 255-byte trace does not read"
"$CLTRACE" run "$KERNELS/mm.cl" -o "$work/same.cltrace" > /dev/null 2>"$work/err1" & first=$!
"$CLTRACE" run "$KERNELS/vadd.cl" -o "$work/same.cltrace" > /dev/null 2>"$work/err2" || fail "second run: $(cat "$work/err2")"
wait "$first" || fail "first run: $(cat "$work/err1")"
"$CLTRACE" stats "$work/same.cltrace" > /dev/null || fail "two runs to one path left no whole trace"
[ -z "$(ls "$work" "$work/long" | grep partial)" ] || fail "partial files left: $(ls "$work" "$work/long")"
echo "output paths: all checks passed"
