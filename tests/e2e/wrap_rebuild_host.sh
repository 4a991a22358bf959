# A host program that rebuilds, relinks and varies its programs (tests/e2e/rebuild_host.cpp)
# under `cltrace wrap`: its results do not change (a failed rebuild keeps the options of the
# build that holds, a changed header is read again, linked units keep their own macros and
# static functions, -cl-denorms-are-zero reaches the traced build, the kernel sees the device
# compiler's extension macros and __OPENCL_VERSION__, a header in the working directory is
# found without -I), a child process's launches
# are numbered after its parent's instead of overwriting them, and released variants do not
# pile up in memory.
source "$(dirname "$0")/lib.sh"
mkdir -p "$work/inc" "$work/inc2"
plain=$("$REBUILD_HOST" "$work/inc")
[ "$(echo "$plain" | grep -c ' correct$')" -eq 10 ] || fail "rebuild host alone: $plain"
wrapped=$("$CLTRACE" wrap --out "$work/t" -- "$REBUILD_HOST" "$work/inc2" 2>"$work/err") ||
  fail "wrapped exit status: $(cat "$work/err")"
[ "$plain" = "$wrapped" ] || fail "output differs:
$plain
---
$wrapped"
echo "ok: same results"
# Launches in order, the child's (5, 6) between its parent's; record counts by hand: k 16 x
# (load + store), inc 16 stores twice, lk 16 stores, d 4 x (load + store), add 32 x (load +
# store) twice, k again after a user event released unfinished (it used to go untraced), v 16384 x
# 17 stores three times (the loop's x[i] is the value stored before it or round its back edge:
# no load).
[ "$(cut -f1,2 "$work/t/launches.tsv" | sort -n | tr '\t\n' ': ')" = \
  "0:k 1:inc 2:inc 3:lk 4:d 5:add 6:add 7:k 8:macros 10:v 11:v 12:v " ] || fail "launches: $(cat "$work/t/launches.tsv")"
for pair in k-0:32 inc-1:16 inc-2:16 lk-3:16 d-4:8 add-5:64 add-6:64 k-7:32 macros-8:4 v-10:278528 v-11:278528 v-12:278528; do
  f=${pair%:*}; n=${pair#*:}
  "$CLTRACE" stats "$work/t/$f.cltrace" | grep -E "^records: $n$" >/dev/null ||
    fail "$f: $("$CLTRACE" stats "$work/t/$f.cltrace" | head -3)"
done
grep -q "12 launches traced" "$work/err" || fail "summary: $(cat "$work/err")"
# The empty launch (9) is neither traced nor counted as one that could not be.
! grep -q "untraced" "$work/err" || fail "an untraced launch: $(cat "$work/err")"
echo "ok: launches numbered across processes, record counts"
# A header in the application's working directory, found without -I and before -I inc (as
# PoCL does): it used to go untraced. Work-item 1 loads x[4] (byte 0x10), not x[8].
mkdir -p "$work/cwd"
"$CLTRACE" wrap --out "$work/c" -- "$REBUILD_HOST" "$work/cwd" cwd > "$work/cwd.out" 2> "$work/cwd.err" ||
  fail "cwd header: $(cat "$work/cwd.out" "$work/cwd.err")"
grep -q "x\[1\] = 4 correct" "$work/cwd.out" || fail "cwd header result: $(cat "$work/cwd.out")"
"$CLTRACE" dump "$work/c/s-0.cltrace" | grep -qF "wi 1 group (0) local (1) load instr 0 addr 0x10 size 4" ||
  fail "cwd header trace: $("$CLTRACE" dump "$work/c/s-0.cltrace" 2>&1 | tail -8) $(cat "$work/cwd.err")"
echo "ok: a header in the working directory"
# Each variant's instrumented programs and device memory are let go once a few released ones
# are kept: 8 more variants must not add what tracing each holds (they did, about 10 MiB each here).
peak() { "$CLTRACE" wrap --out "$work/v$1" -- "$REBUILD_HOST" "$work/inc" variants "$1" 2>/dev/null |
  sed -n 's/^peak resident KiB //p'; }
six=$(peak 6)
fourteen=$(peak 14)
echo "peak resident memory: $six KiB after 6 variants, $fourteen KiB after 14"
[ "$((fourteen - six))" -lt 40960 ] || fail "memory grew by $(( (fourteen - six) / 1024 )) MiB over 8 variants"
echo "wrap rebuild host: all checks passed"
