# The unmodified sample host program under `cltrace wrap`: same output as unwrapped, one trace
# per launch, the NULL local size choice recorded, the launch filter honoured.
source "$(dirname "$0")/lib.sh"
plain=$("$SAMPLE_HOST")
wrapped=$("$CLTRACE" wrap --out "$work/all" -- "$SAMPLE_HOST" 2>"$work/err")
[ "$plain" = "$wrapped" ] || fail "output differs: '$plain' vs '$wrapped'"
echo "$plain" | grep "sum 7332864.0, correct" >/dev/null || fail "unexpected output $plain"
echo "$plain" | grep "vadd takes 3 arguments" >/dev/null || fail "argument count changed"
# After traced launches the kernels still show only their own arguments (-49: CL_INVALID_ARG_INDEX).
echo "$plain" | grep -F "after the launches: vadd takes 3, scale 2 (the last one 'f'; asking for one more: -49)" >/dev/null ||
  fail "kernel info after the launches: $plain"
[ "$(wc -l < "$work/all/launches.tsv")" -eq 4 ] || fail "expected 4 launches: $(cat "$work/all/launches.tsv")"
for f in vadd-0 scale-1 scale-2 vadd-3; do [ -s "$work/all/$f.cltrace" ] || fail "missing $f"; done
grep -q "4 launches traced" "$work/err" || fail "no summary: $(cat "$work/err")"
# Launch 1 had a NULL local size: cltrace chose 256 (largest divisor of 1024 up to 256).
"$CLTRACE" dump "$work/all/scale-1.cltrace" --limit 0 | grep "global (1024), local (256)" >/dev/null ||
  fail "local size choice not recorded: $("$CLTRACE" dump "$work/all/scale-1.cltrace" --limit 0)"
# vadd launch 0: 1024 work-items x (2 loads + 1 store).
"$CLTRACE" stats "$work/all/vadd-0.cltrace" | grep -E "^records: 3072$" >/dev/null || fail "vadd-0 record count"
# Only the scale kernel's second launch.
wrapped=$("$CLTRACE" wrap --out "$work/one" --kernel scale --launch 2 -- "$SAMPLE_HOST" 2>/dev/null)
[ "$plain" = "$wrapped" ] || fail "filtered output differs"
[ "$(ls "$work/one"/*.cltrace)" = "$work/one/scale-2.cltrace" ] || fail "filter: $(ls "$work/one")"
# Traced in slices (2 KiB of records: one vadd group, 64 work-items x 3 records x 8 bytes, per
# slice): same output, same traces.
wrapped=$(CLTRACE_TRACE_BUFFER_BYTES=2048 "$CLTRACE" wrap --out "$work/sliced" -- "$SAMPLE_HOST" 2>"$work/err")
[ "$plain" = "$wrapped" ] || fail "sliced: output differs"
grep -q "traced vadd launch 0 -> $work/sliced/vadd-0.cltrace (in 16 slices)" "$work/err" || fail "sliced: $(cat "$work/err")"
for f in vadd-0 scale-1 scale-2 vadd-3; do
  cmp "$work/all/$f.cltrace" "$work/sliced/$f.cltrace" || fail "sliced: $f differs"
done
expect_error "--trace-buffer-mib: Value 0 not in range" "$CLTRACE" wrap --trace-buffer-mib 0 -- "$SAMPLE_HOST"
# Launches that cannot be traced (no temporary directory) or never happen are summed up at the
# end; the program's output and exit status stay its own.
wrapped=$(TMPDIR=/nonexistent "$CLTRACE" wrap --out "$work/none" -- "$SAMPLE_HOST" 2>"$work/err") ||
  fail "untraced launches changed the exit status"
[ "$plain" = "$wrapped" ] || fail "untraced launches changed the output"
grep -q "^cltrace: 0 launches traced into $work/none$" "$work/err" || fail "untraced: $(cat "$work/err")"
grep -q "^cltrace: warning: 4 selected launches ran untraced (the reasons are above)$" "$work/err" ||
  fail "untraced: $(cat "$work/err")"
"$CLTRACE" wrap --out "$work/few" --launch 999 --launch 1 --launch 1000 -- "$SAMPLE_HOST" > /dev/null 2>"$work/err"
grep -q "^cltrace: warning: --launch 999,1000: the program made no such launch$" "$work/err" ||
  fail "--launch 999: $(cat "$work/err")"
# A launch number of another kernel than --kernel's is named as such (launch 0 is vadd's).
"$CLTRACE" wrap --out "$work/other" --kernel scale --launch 0,2,77 -- "$SAMPLE_HOST" > /dev/null 2>"$work/err"
grep -q "^cltrace: warning: --launch 0: that launch was of kernel 'vadd', not of the kernel named by --kernel (scale)$" \
  "$work/err" || fail "--launch 0 of vadd: $(cat "$work/err")"
grep -q "^cltrace: warning: --launch 77: the program made no such launch$" "$work/err" || fail "--launch 77: $(cat "$work/err")"
grep -q "^cltrace: 1 launch traced into $work/other$" "$work/err" || fail "--launch 0,2,77: $(cat "$work/err")"
[ "$(ls "$work/other")" = "launches.tsv
scale-2.cltrace" ] || fail "other: $(ls "$work/other")"
echo "ok: --launch 0 of vadd under --kernel scale is named as vadd's"
# Each --kernel name no launch was of is named, also beside one that matched.
"$CLTRACE" wrap --out "$work/names" --kernel scale,nosuch,vadd,nope -- "$SAMPLE_HOST" > /dev/null 2>"$work/err"
grep -q "^cltrace: warning: no launch of the kernels named by --kernel (nosuch,nope) was traced$" "$work/err" ||
  fail "unmatched --kernel names: $(cat "$work/err")"
# Wrapping again into a folder drops the traces the earlier run listed (they would mix with this
# run's); a file cltrace did not list stays.
touch "$work/all/mine.cltrace"
"$CLTRACE" wrap --out "$work/all" --launch 1 -- "$SAMPLE_HOST" > /dev/null 2>"$work/err"
grep -q "^cltrace: removed 4 traces of an earlier run that $work/all/launches.tsv listed$" "$work/err" ||
  fail "earlier traces: $(cat "$work/err")"
[ "$(ls "$work/all" | tr '\n' ' ')" = "launches.tsv mine.cltrace scale-1.cltrace " ] || fail "reused folder: $(ls "$work/all")"
# A bad --predict configuration stops before the program runs.
printf '#!/bin/sh\necho ran > "%s"\n' "$work/ran" > "$work/app.sh"
chmod +x "$work/app.sh"
expect_error "configuration key 'size': 3 bytes" "$CLTRACE" wrap --out "$work/bad" --predict --set size=3 -- "$work/app.sh"
[ ! -e "$work/ran" ] || fail "the program ran despite the bad configuration"
# The program's own options after `--` are its own, also after cltrace options with lists.
printf '#!/bin/sh\necho "$@"\n' > "$work/args.sh"
chmod +x "$work/args.sh"
out=$("$CLTRACE" wrap --out "$work/args" --kernel a,b --kernel c -n 1,2 -n 3 --set timing=off -- "$work/args.sh" -x --y -- z 2>/dev/null) ||
  fail "options after --: exit status"
[ "$out" = "-x --y -- z" ] || fail "the program's arguments: $out"
echo "wrap: all checks passed"
# --predict: a report per traced launch on stderr, the program's stdout unchanged. vadd streams
# through a and b once: every read is a cold miss.
wrapped=$("$CLTRACE" wrap --out "$work/p" --launch 0 --predict --runs 3 -- "$SAMPLE_HOST" 2>"$work/perr")
[ "$plain" = "$wrapped" ] || fail "--predict changed the output"
grep -q "== $work/p/vadd-0.cltrace" "$work/perr" || fail "no report: $(cat "$work/perr")"
grep -q "predicted L1 read miss rate: 100.00% (median of 3 runs" "$work/perr" || fail "report: $(cat "$work/perr")"
# The instructions' texts come from the trace file's header, each after its place in the
# program's source (a[i] of `c[i] = a[i] + b[i];`: line 4 of the string, column 10).
grep -qE "^  \[0\] 2 misses of 2 reads \(100.00%\)  line 4:10: %[0-9]+ = load float" "$work/perr" || fail "no instruction text: $(cat "$work/perr")"
# As in predict, --runs on the command line wins over --set runs=, and --set over --runs' default
# (20); a --set value that --runs replaces is still checked.
"$CLTRACE" wrap --out "$work/r" --launch 0 --predict --runs 3 --set runs=5 -- "$SAMPLE_HOST" > /dev/null 2>"$work/rerr"
grep -q "(median of 3 runs" "$work/rerr" || fail "--runs 3 --set runs=5: $(grep predicted "$work/rerr")"
"$CLTRACE" wrap --out "$work/r" --launch 0 --predict --set runs=2 -- "$SAMPLE_HOST" > /dev/null 2>"$work/rerr"
grep -q "(median of 2 runs" "$work/rerr" || fail "--set runs=2: $(grep predicted "$work/rerr")"
expect_error "configuration key 'runs'" "$CLTRACE" wrap --out "$work/r" --predict --runs 1 --set runs=0 -- "$work/app.sh"
# A launch the simulator cannot take (scale's 256-wide workgroups, cltrace's choice for its NULL
# local size, over max_threads_per_workgroup=128) is said; vadd's is still reported, and the
# program's exit status (0) stays (it became 1, and the other reports were lost).
wrapped=$("$CLTRACE" wrap --out "$work/q" --launch 0,1 --predict --runs 1 --set max_threads_per_workgroup=128 \
  -- "$SAMPLE_HOST" 2>"$work/qerr") || fail "a launch that cannot be simulated: exit status: $(cat "$work/qerr")"
[ "$plain" = "$wrapped" ] || fail "--predict with a launch it cannot simulate changed the output"
grep -F "== $work/q/vadd-0.cltrace" "$work/qerr" > /dev/null || fail "no vadd report: $(cat "$work/qerr")"
grep -Fx "cltrace: error: cannot predict this launch: configuration key 'max_threads_per_workgroup': a workgroup of the launch has 256 work-items, more than the 128 the GPU runs in one, so it would refuse the launch (0 lifts the limit)" \
  "$work/qerr" > /dev/null || fail "no reason for scale: $(cat "$work/qerr")"
grep -Fx "cltrace: warning: 1 of 2 traced launches could not be simulated (said above)" "$work/qerr" > /dev/null ||
  fail "no count: $(cat "$work/qerr")"
[ "$(grep -c "^predicted L1 read miss rate" "$work/qerr")" -eq 1 ] || fail "reports: $(cat "$work/qerr")"
echo "wrap --predict: all checks passed"
