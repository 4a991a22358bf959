# A host program using less common OpenCL calls (tests/e2e/edge_host.cpp) under `cltrace wrap`:
# the same output and exit status as unwrapped, and the launches traced that can be.
source "$(dirname "$0")/lib.sh"
plain=$("$EDGE_HOST")
[ "$(echo "$plain" | grep -c ' correct$')" -eq 14 ] || fail "edge host alone: $plain"
echo "$plain" | grep "oversized work-group refused: yes" >/dev/null || fail "oversized launch: $plain"
wrapped=$("$CLTRACE" wrap --out "$work/t" -- "$EDGE_HOST" 2>"$work/err") || fail "wrapped exit status: $(cat "$work/err")"
[ "$plain" = "$wrapped" ] || fail "output differs:
$plain
---
$wrapped"
echo "ok: same output, including the event types and the driver's own work-group size"
# Launches 0-5 traced, with record counts by hand: hist 1024 x (uchar load + atomic), accum
# 1024 x 3, scale 64 x (constant load + load + store), shape 6000 stores (local size 250 chosen
# by cltrace: the largest divisor of 6000 up to 256), the task 1 x (load + store), fill 1024,
# and the linked program's kernel 1024 x (load + store) after the untraced launch 6; the
# sub-buffer launch 128 x 3; the kernel whose program embeds headers 1024 x (load + store); bump
# 1024 x (a load, read once as the loop writes only x[i], and 8 stores), six times and once more
# after the callbacks set its copy's arguments (launch 17, enqueued in a callback, runs untraced);
# launch 19, a kernel on another context's queue, is the driver's to refuse (listed as such); mark
# 64 stores after the program put a file of its own at fd 2 (its contents are checked by the host).
[ "$(cut -f1,2 "$work/t/launches.tsv" | tr '\t\n' ': ')" = \
  "0:hist 1:accum 2:scale 3:shape 4:one 5:fill 7:twice 9:overlap 10:embed 11:bump 12:bump 13:bump 14:bump 15:bump 16:bump 18:bump 20:mark " ] ||
  fail "launches: $(cat "$work/t/launches.tsv")"
for pair in hist-0:2048 accum-1:3072 scale-2:192 shape-3:6000 one-4:2 fill-5:1024 twice-7:2048 overlap-9:384 embed-10:2048 \
            bump-11:9216 bump-16:9216 bump-18:9216 mark-20:64; do
  f=${pair%:*}; n=${pair#*:}
  "$CLTRACE" stats "$work/t/$f.cltrace" | grep -E "^records: $n$" >/dev/null || fail "$f: $("$CLTRACE" stats "$work/t/$f.cltrace" | head -3)"
done
"$CLTRACE" dump "$work/t/shape-3.cltrace" --limit 0 | grep "global (6000), local (250)" >/dev/null || fail "shape local size"
# Both parameters share one buffer, so one region at 0: work-item 0 (global id 64) reads x[64]
# at 0x100 and c[0] at 0.
"$CLTRACE" dump "$work/t/scale-2.cltrace" --limit 3 | tr '\n' '|' |
  grep -q "load instr 0 addr 0x100 size 4 .*constant_load instr 1 addr 0x0 size 4 .*store instr 2 addr 0x100 size 4" ||
  fail "scale: $("$CLTRACE" dump "$work/t/scale-2.cltrace" --limit 3)"
# A sub-buffer (int 128 on, 1024 bytes) inside its parent (4096 bytes): one region, the parent's,
# with the sub-buffer at its offset, 0x200. Work-item 0 reads whole[0] at 0 and whole[128], the
# sub-buffer's first int, at 0x200, where it stores part[0].
"$CLTRACE" dump "$work/t/overlap-9.cltrace" | grep -F "arg 1 part: base 0x200 size 1024" >/dev/null ||
  fail "overlap layout: $("$CLTRACE" dump "$work/t/overlap-9.cltrace" --limit 0)"
"$CLTRACE" dump "$work/t/overlap-9.cltrace" --limit 3 | tr '\n' '|' |
  grep -q "load instr 0 addr 0x0 size 4 .*load instr 1 addr 0x200 size 4 .*store instr 2 addr 0x200 size 4" ||
  fail "overlap: $("$CLTRACE" dump "$work/t/overlap-9.cltrace" --limit 3)"
grep -q "cannot trace fill launch 6: the program has user events it has not completed yet" "$work/err" ||
  fail "user event: $(cat "$work/err")"
grep -q "^17	mark	cannot trace mark launch 17: it is enqueued from an event callback, where OpenCL forbids the waits" \
  "$work/t/untraced.tsv" || fail "callback launch: $(cat "$work/t/untraced.tsv")"
grep -q "^19	mark	was refused by the driver (CL_INVALID_CONTEXT)" "$work/t/not-run.tsv" ||
  fail "launch across contexts: $(cat "$work/t/not-run.tsv")"
grep -q "traced mark launch 20 ->" "$work/err" || fail "launch 20 not announced on cltrace's stderr: $(cat "$work/err")"
echo "ok: traces and record counts"
# A trace that cannot be written (its path is a directory) fails after the trace run: the
# buffers are put back and the launch runs as the program asked, once.
mkdir -p "$work/bad/hist-0.cltrace"
wrapped=$("$CLTRACE" wrap --out "$work/bad" --launch 0 -- "$EDGE_HOST" 2>"$work/err") || fail "exit status: $(cat "$work/err")"
[ "$plain" = "$wrapped" ] || fail "output differs after a failed trace write: $wrapped"
grep -q "could not trace hist launch 0: .*; it runs untraced" "$work/err" || fail "no message: $(cat "$work/err")"
echo "wrap edge host: all checks passed"
