# cltrace predict end to end on the bundled kernels, with counts derived by hand.
source "$(dirname "$0")/lib.sh"
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }

# Transpose with 32x1 workgroups: each warp reads one whole 128-byte line of the input, and no
# line is read twice, so reads = W*H/32 line requests over all SMs, every one a cold miss.
for size in 64,64 128,64 96,32; do
  w=${size%,*}; h=${size#*,}
  "$CLTRACE" predict "$KERNELS/mt.cl" --global "$w,$h" --local 32,1 --arg "buffer:float:$((w*h)):iota" \
    --arg "buffer:float:$((w*h))" --arg "scalar:int:$w" --arg "scalar:int:$h" --sm all --runs 3 --json > "$work/mt.json"
  [ "$(field "$work/mt.json" "d['reads']")" = "$((w*h/32))" ] || fail "mt $size reads $(field "$work/mt.json" "d['reads']")"
  [ "$(field "$work/mt.json" "d['read_misses']")" = "$((w*h/32))" ] || fail "mt $size misses"
  [ "$(field "$work/mt.json" "d['miss_rate']")" = "1.0" ] || fail "mt $size miss rate"
  [ "$(field "$work/mt.json" "d['runs']['median']")" = "1.0" ] || fail "mt $size median"
  echo "ok: transpose ${w}x${h}: $((w*h/32)) reads, 100% misses"
done
# Transpose 32x32 with the thesis's 16x2 workgroups: 32 workgroups of one warp, all resident
# at once; SM 0 holds workgroups 0, 15 and 30, each warp reading 2 rows x 64 bytes = 2 lines.
"$CLTRACE" predict "$KERNELS/mt.cl" --global 32,32 --local 16,2 --arg buffer:float:1024:iota \
  --arg buffer:float:1024 --arg scalar:int:32 --arg scalar:int:32 --sm 0 --runs 1 --json > "$work/mt16.json"
[ "$(field "$work/mt16.json" "(d['reads'], d['read_misses'], d['writes'])")" = "(6, 6, 48)" ] ||
  fail "mt 16x2: $(field "$work/mt16.json" "(d['reads'], d['read_misses'], d['writes'])")"
echo "ok: transpose 16x2 on SM 0: 6 reads, 6 misses, 48 write requests"

# Multiply 32x32 with 16x16 workgroups (2x2 workgroups, one per SM). SM 0 runs workgroup 0:
# 8 warps x 32 iterations x (2 lines of A for the warp's two rows + 1 line of B) = 768 reads;
# its footprint is 16 lines of A and 32 of B: 48 cold misses, no capacity or conflict miss.
"$CLTRACE" predict "$KERNELS/mm.cl" --global 32,32 --local 16,16 --arg buffer:float:1024:random:1 \
  --arg buffer:float:1024:random:2 --arg buffer:float:1024 --arg scalar:int:32 --sm 0 --runs 2 --json > "$work/mm.json"
[ "$(field "$work/mm.json" "(d['reads'], d['read_misses'], d['misses']['cold'], d['misses']['capacity'], d['misses']['conflict'])")" = "(768, 48, 48, 0, 0)" ] ||
  fail "mm: $(field "$work/mm.json" "(d['reads'], d['read_misses'], d['misses'])")"
[ "$(field "$work/mm.json" "d['requests_before_coalescing']")" = "$((256*65))" ] || fail "mm lane accesses"
echo "ok: multiply 2x2 workgroups: 768 reads, 48 misses"

# Every documented key of the report is there.
python3 - "$work/mm.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["kernel", "device", "launch", "instructions", "seconds", "reads", "read_misses", "writes",
        "write_misses", "write_backs", "requests_before_coalescing", "requests", "miss_rate", "misses",
        "per_instruction", "reuse_histogram", "config", "runs"]
missing = [k for k in keys if k not in d]
missing += ["misses." + k for k in ["cold", "capacity", "conflict", "latency", "mshr"] if k not in d["misses"]]
missing += ["runs." + k for k in ["count", "median", "rsd"] if k not in d["runs"]]
missing += ["launch." + k for k in ["global", "local", "workgroups"] if k not in d["launch"]]
missing += ["seconds." + k for k in ["instrument", "build", "trace", "schedule+simulate"] if k not in d["seconds"]]
assert not missing, missing
assert d["runs"]["count"] == 2 and d["launch"]["global"] == [32, 32] and d["kernel"] == "mm"
assert [i["kind"] for i in d["instructions"]] == ["load", "load", "store"]
PY
echo "ok: JSON keys"
# The text report.
"$CLTRACE" predict "$KERNELS/mt.cl" --runs 2 > "$work/report.txt"
for words in "kernel mt: global 256x256, local 16x16, 256 workgroups" "predicted L1 read miss rate" \
             "top instructions by read misses" "time: instrument"; do
  grep -qF "$words" "$work/report.txt" || fail "report lacks '$words': $(cat "$work/report.txt")"
done
expect_error "configuration key 'scheduling'" "$CLTRACE" predict "$KERNELS/mt.cl" --policy nonsense
expect_error "associativity" "$CLTRACE" predict "$KERNELS/mt.cl" --set associativity=0
# sm=random draws among the SMs that get work. With a bounds guard only workgroups 0 and 1 of 8
# have accesses, so only SMs 0 and 1 get any: each reads its 64 floats in 2 lines, 2 cold misses
# (100%); the idle SMs' 0% must not enter the median.
printf '__kernel void guarded(__global const float* a, __global float* b, int n) {\n  int g = get_global_id(0);\n  if (g >= n) return;\n  b[g] = a[g] * 2.0f;\n}\n' > "$work/guarded.cl"
"$CLTRACE" predict "$work/guarded.cl" --kernel guarded --global 512 --local 64 --arg buffer:float:512 \
  --arg buffer:float:512 --arg scalar:int:128 --json > "$work/guarded-report.json"
[ "$(field "$work/guarded-report.json" "(d['runs']['median'], sorted(set(d['runs']['sms'])), d['reads'])")" = "(1.0, ['0', '1'], 2)" ] ||
  fail "guarded: $(field "$work/guarded-report.json" "(d['runs']['median'], d['runs']['sms'], d['reads'])")"
echo "ok: sm=random among the 2 busy SMs of 8 workgroups"
# The other way round: only workgroups 6 and 7 have accesses, and the workgroups before them take
# SMs 0-5's turns of the deal, so SMs 6 and 7 are the busy ones (not 0 and 1, whose L1s see nothing).
sed 's/if (g >= n) return;/if (g < n) return;/' "$work/guarded.cl" > "$work/tail.cl"
"$CLTRACE" predict "$work/tail.cl" --kernel guarded --global 512 --local 64 --arg buffer:float:512 \
  --arg buffer:float:512 --arg scalar:int:384 --json > "$work/tail-report.json"
[ "$(field "$work/tail-report.json" "(d['runs']['median'], sorted(set(d['runs']['sms'])), d['reads'])")" = "(1.0, ['6', '7'], 2)" ] ||
  fail "tail: $(field "$work/tail-report.json" "(d['runs']['median'], d['runs']['sms'], d['reads'])")"
echo "ok: sm=random among the busy SMs 6 and 7 when workgroups 0-5 make no access"
# A padded launch: workgroups 0-4 (i < 160) read a and b (1 line each, 2 cold misses, 100%),
# workgroups 5-15 only zero the padding. A store-only SM has no read miss rate: sm=random draws
# among SMs 0-4, and its 0 of 0 must not enter the median as 0%.
printf '__kernel void vadd_pad(__global const float* a, __global const float* b, __global float* c, int n) {\n  int i = get_global_id(0);\n  if (i < n) c[i] = a[i] + b[i];\n  else c[i] = 0.0f;\n}\n' > "$work/vadd_pad.cl"
"$CLTRACE" predict "$work/vadd_pad.cl" --kernel vadd_pad --global 512 --local 32 --arg buffer:float:512:iota \
  --arg buffer:float:512:iota --arg buffer:float:512 --arg scalar:int:160 --json > "$work/pad.json"
[ "$(field "$work/pad.json" "(d['miss_rate'], d['runs']['median'], d['runs']['with_reads'], sorted(set(d['runs']['sms'])), d['reads'])")" = \
  "(1.0, 1.0, 20, ['0', '1', '2', '3', '4'], 2)" ] || fail "vadd_pad: $(field "$work/pad.json" "d['runs']")"
# An SM that only stores, asked for by index: its miss rate is none (JSON null), not 0.
"$CLTRACE" predict "$work/vadd_pad.cl" --kernel vadd_pad --global 512 --local 32 --arg buffer:float:512:iota \
  --arg buffer:float:512:iota --arg buffer:float:512 --arg scalar:int:160 --sm 9 --runs 2 --json > "$work/pad9.json"
[ "$(field "$work/pad9.json" "(d['miss_rate'], d['runs']['median'], d['runs']['values'], d['reads'], d['writes'])")" = \
  "(None, None, [None, None], 0, 1)" ] || fail "vadd_pad sm 9: $(field "$work/pad9.json" "d['runs']")"
echo "ok: store-only SMs have no miss rate and stay out of the median"
# Loads only in a later round of the deal: workgroups 0-119 fill the 15 SMs x 8 slots and only
# store; workgroup 120 (1 line read, a cold miss) goes to whichever SM frees a slot first. No SM
# loads in the first deal, so a run drawn on another SM is run again on the one that loaded.
printf '__kernel void late(__global const float* a, __global float* b, int n) {\n  int i = get_global_id(0);\n  if (get_group_id(0) < n) b[i] = 1.0f;\n  else b[i] = a[i];\n}\n' > "$work/late.cl"
"$CLTRACE" predict "$work/late.cl" --kernel late --global 3872 --local 32 --arg buffer:float:3872:iota \
  --arg buffer:float:3872 --arg scalar:int:120 --json > "$work/late-report.json"
[ "$(field "$work/late-report.json" "(d['runs']['median'], d['runs']['with_reads'], len(set(d['runs']['sms'])), d['reads'], d['read_misses'])")" = \
  "(1.0, 20, 1, 1, 1)" ] || fail "late loads: $(field "$work/late-report.json" "d['runs']")"
echo "ok: loads dealt late are found by every run"
# A memcpy whose length differs between lanes (2 or 4 bytes) is one SIMT instruction: one read
# and one write of one line each, not a step (and a request) per length.
printf '__kernel void k(__global char* a, __global char* b) {\n  int l = get_local_id(0);\n  __builtin_memcpy(b + l * 4, a + l * 4, (l & 1) ? 4 : 2);\n}\n' > "$work/varcopy.cl"
"$CLTRACE" run "$work/varcopy.cl" --kernel k --global 32 --local 32 --arg buffer:char:128 --arg buffer:char:128 \
  -o "$work/varcopy.cltrace" > /dev/null
"$CLTRACE" simulate "$work/varcopy.cltrace" --set timing=off --sm 0 --json > "$work/varcopy.json"
[ "$(field "$work/varcopy.json" "(d['requests_before_coalescing'], d['reads'], d['read_misses'], d['writes'])")" = "(64, 1, 1, 1)" ] ||
  fail "varcopy: $(field "$work/varcopy.json" "(d['requests_before_coalescing'], d['reads'], d['read_misses'], d['writes'])")"
echo "ok: a memcpy of lane-dependent length is one step"
# Precedence: --set wins over a flag's default, a flag given on the command line over --set.
"$CLTRACE" predict "$work/guarded.cl" --kernel guarded --global 512 --local 64 --arg buffer:float:512 \
  --arg buffer:float:512 --arg scalar:int:128 --set runs=3 --set sm=1 --json > "$work/set.json"
[ "$(field "$work/set.json" "(d['runs']['count'], d['sm'])")" = "(3, '1')" ] ||
  fail "--set over defaults: $(field "$work/set.json" "(d['runs']['count'], d['sm'])")"
"$CLTRACE" predict "$work/guarded.cl" --kernel guarded --global 512 --local 64 --arg buffer:float:512 \
  --arg buffer:float:512 --arg scalar:int:128 --set runs=3 --runs 2 --set sm=1 --sm 0 --json > "$work/flag.json"
[ "$(field "$work/flag.json" "(d['runs']['count'], d['sm'])")" = "(2, '0')" ] ||
  fail "flags over --set: $(field "$work/flag.json" "(d['runs']['count'], d['sm'])")"
echo "ok: flags, --set and defaults in that order"
# A kernel that reads nothing has no miss rate (0 of 0), rather than 0.00%.
printf '__kernel void w(__global int* a) { a[get_global_id(0)] = 1; }\n' > "$work/w.cl"
out=$("$CLTRACE" predict "$work/w.cl" --kernel w --global 64 --local 32 --arg buffer:int:64 --runs 3 --sm 0)
echo "$out" | grep -x "predicted L1 read miss rate: none, the L1 sees no global reads in any of the 3 runs (SM 0)" >/dev/null ||
  fail "no reads: $out"
# The trace goes to a private folder (mode 0700, a fresh name: nothing planted in a shared
# /tmp is written through) that is removed after a run and after SIGINT or SIGTERM.
mkdir -p "$work/tmp"
TMPDIR="$work/tmp" "$CLTRACE" predict "$work/w.cl" --kernel w --global 64 --local 32 --arg buffer:int:64 --runs 1 \
  > /dev/null || fail "predict with TMPDIR"
[ -z "$(ls -A "$work/tmp")" ] || fail "predict left $(ls -AR "$work/tmp")"
for signal in INT TERM; do
  TMPDIR="$work/tmp" "$CLTRACE" predict "$KERNELS/mm.cl" --global 256,256 --local 16,16 \
    --arg buffer:float:65536:random:1 --arg buffer:float:65536:random:2 --arg buffer:float:65536 --arg scalar:int:256 \
    > /dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do [ -n "$(ls -A "$work/tmp")" ] && break; sleep 0.05; done
  [ "$(stat -c %a "$work/tmp"/cltrace-predict-*)" = 700 ] || fail "the temporary folder is not private"
  sleep 0.5
  kill -"$signal" "$pid"
  rc=0; wait "$pid" || rc=$?
  [ "$rc" -ne 0 ] || fail "SIG$signal: predict exited 0"
  [ -z "$(ls -A "$work/tmp")" ] || fail "SIG$signal left $(ls -AR "$work/tmp")"
done
echo "ok: predict's temporary folder is private and removed, also on SIGINT and SIGTERM"
echo "predict: all checks passed"

# Runs on SMs whose rates differ (workgroup 0 reads one line once: 100%; workgroup 1 reads it
# twice, the second a hit: 50%): the median of two is neither run's rate, and the headline says
# which run the counts above are (the first of the two, on SM 1, with 2 reads and 1 miss).
cat > "$work/split.cl" <<'CL'
__kernel void split(__global const float* a, __global float* o) {
  size_t g = get_global_id(0);
  float s = a[g];
  if (get_group_id(0) == 1) s += a[g ^ 1];
  o[g] = s;
}
CL
out=$("$CLTRACE" predict "$work/split.cl" --global 64 --local 32 --arg buffer:float:64 --arg buffer:float:64 --runs 2 --seed 2)
echo "$out" | grep -Fx "predicted L1 read miss rate: 75.00% (median of 2 runs; relative standard deviation 33.33%, range 50.00%..100.00%; the counts above are a run on SM 1 at 50.00%, the closest to the median)" >/dev/null ||
  fail "split runs: $out"
echo "$out" | grep -E "^reads +2$" >/dev/null || fail "split runs' counts: $out"
echo "ok: runs split between SMs say whose counts are shown"
