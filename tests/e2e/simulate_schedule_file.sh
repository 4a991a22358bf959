# `cltrace simulate` on a binary scheduled file: the file's order, its SM count, timing off. It
# must report exactly what simulating the trace with timing off and the same SMs reports, and
# refuse keys that contradict the file.
source "$(dirname "$0")/lib.sh"
"$CLTRACE" run "$KERNELS/mm.cl" --global 64,64 --local 16,16 --arg buffer:float:4096:random:1 \
  --arg buffer:float:4096:random:2 --arg buffer:float:4096 --arg scalar:int:64 -o "$work/mm.cltrace" > /dev/null
"$CLTRACE" schedule "$work/mm.cltrace" --sms 14 -o "$work/mm.sched" > /dev/null
results() {  # everything but the configuration and the instructions' source lines (a scheduled file has none)
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
d.pop('config')
for i in d['per_instruction']: i.pop('source', None)
print(json.dumps(d, sort_keys=True))" "$1"
}
for sm in all random 3; do
  "$CLTRACE" simulate "$work/mm.sched" --sm "$sm" --runs 3 --json > "$work/sched.json"
  "$CLTRACE" simulate "$work/mm.cltrace" --sm "$sm" --runs 3 --set timing=off --set sm_count=14 --json > "$work/trace.json"
  [ "$(results "$work/sched.json")" = "$(results "$work/trace.json")" ] || fail "--sm $sm: scheduled file and trace differ"
  grep -q '"sm_count": 14' "$work/sched.json" || fail "the report's sm_count is not the file's"
done
# 64x64 with 16x16 workgroups: 16 workgroups, so SM 14 of 15 would be idle; the file has 14.
expect_error "configuration key 'sm': SM 14 does not exist (sm_count = 14)" "$CLTRACE" simulate "$work/mm.sched" --sm 14
# A file made for more SMs than the preset's 15: --sm is checked against the file's count.
"$CLTRACE" schedule "$work/mm.cltrace" --sms 20 -o "$work/mm20.sched" > /dev/null
"$CLTRACE" simulate "$work/mm20.sched" --sm 15 --json > "$work/sm15.json" || fail "SM 15 of a 20-SM schedule was refused"
grep -q '"sm": "15"' "$work/sm15.json" || fail "SM 15 of a 20-SM schedule: $(head -c 300 "$work/sm15.json")"
expect_error "configuration key 'sm': SM 20 does not exist (sm_count = 20)" "$CLTRACE" simulate "$work/mm20.sched" --sm 20
expect_error "configuration key 'timing': a scheduled file fixes the issue order" \
  "$CLTRACE" simulate "$work/mm.sched" --set timing=on
expect_error "configuration key 'sm_count': 15 disagrees with the scheduled file, which was made with 14" \
  "$CLTRACE" simulate "$work/mm.sched" --set sm_count=15
# A preset or file given with --config is chosen too: its keys must agree (timing aside).
"$CLTRACE" simulate "$work/mm.sched" --sm all --json > "$work/default.json"
"$CLTRACE" simulate "$work/mm.sched" --config gtx470-16k --sm all --json > "$work/gtx470.json"
[ "$(results "$work/gtx470.json")" = "$(results "$work/default.json")" ] || fail "--config gtx470-16k (14 SMs) changed the results"
expect_error "configuration key 'sm_count': 15 disagrees with the scheduled file, which was made with 14" \
  "$CLTRACE" simulate "$work/mm.sched" --config gtx480-16k
# A --config file is checked on the keys it lists: cache keys alone go with the file's GPU keys;
# timing listed on is an error (it was left out, as a preset's is).
echo '{"size": "48K", "associativity": 6}' > "$work/cache.json"
"$CLTRACE" simulate "$work/mm.sched" --config "$work/cache.json" --json > "$work/cache-report.json" ||
  fail "a cache-only --config file was checked against the schedule's GPU keys"
grep -q '"sm_count": 14' "$work/cache-report.json" || fail "cache-only file: sm_count not the schedule's"
echo '{"timing": true}' > "$work/timing.json"
expect_error "configuration key 'timing': a scheduled file fixes the issue order" \
  "$CLTRACE" simulate "$work/mm.sched" --config "$work/timing.json"
echo '{"sm_count": 15}' > "$work/sm15-config.json"
expect_error "configuration key 'sm_count': 15 disagrees with the scheduled file, which was made with 14" \
  "$CLTRACE" simulate "$work/mm.sched" --config "$work/sm15-config.json"
# The hint names the schedule option that makes such a file; registers have none: residency.
expect_error "configuration key 'sm_count': 15 disagrees with the scheduled file, which was made with 14 (schedule with --sms 15, or simulate the trace file)" \
  "$CLTRACE" simulate "$work/mm.sched" --set sm_count=15
expect_error "configuration key 'registers_per_thread': 25 disagrees with the scheduled file, which was made with 0 (schedule with --max-workgroups-per-sm 4, the workgroups per SM these registers allow, or simulate the trace file)" \
  "$CLTRACE" simulate "$work/mm.sched" --set registers_per_thread=25
# The commands that read traces say what a scheduled file is (they said "wrong magic").
for cmd in stats dump schedule; do
  expect_error "cltrace: error: '$work/mm.sched' is a scheduled file (the binary output of cltrace schedule), not a trace: cltrace simulate takes it; cltrace $cmd takes the trace it was scheduled from" \
    "$CLTRACE" $cmd "$work/mm.sched" $([ $cmd = schedule ] && echo "-o $work/again.sched")
done
[ ! -e "$work/again.sched" ] || fail "schedule of a scheduled file left an output"
head -c 3000 "$work/mm.sched" > "$work/cut.sched"
expect_error "truncated" "$CLTRACE" simulate "$work/cut.sched"
# A file drawn by the random policy: the report gives the file's seed apart from the runs' own.
"$CLTRACE" schedule "$work/mm.cltrace" --policy random --seed 2 -o "$work/random.sched" > /dev/null
"$CLTRACE" simulate "$work/random.sched" --seed 5 --json > "$work/random.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['schedule_seed'] == 2 and d['config']['seed'] == 5))" \
  "$work/random.json" || fail "random policy: schedule_seed/seed: $(head -c 400 "$work/random.json")"
"$CLTRACE" simulate "$work/random.sched" --seed 5 | grep -Fx "order: the scheduled file's, drawn with seed 2 (random policy; the seed of the runs draws the simulation's own choices)" \
  > /dev/null || fail "random policy: the text report does not give the file's seed"
python3 -c "import json,sys; sys.exit(json.load(open(sys.argv[1]))['schedule_seed'] is not None)" "$work/default.json" ||
  fail "warp policy: a schedule_seed was given"
echo "simulate scheduled file: all checks passed"
