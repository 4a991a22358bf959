# Register-limited residency: 16x16 workgroups of a kernel using 25 registers per thread fit 4
# to a Fermi SM (8 warps x 832 registers of 32768), so registers_per_thread=25 must simulate
# exactly what max_workgroups_per_sm=4 does, and differ from the default 6 per SM.
source "$(dirname "$0")/lib.sh"
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }
"$CLTRACE" run "$KERNELS/mm.cl" --global 160,160 --local 16,16 --arg buffer:float:25600:random:1 \
  --arg buffer:float:25600:random:2 --arg buffer:float:25600 --arg scalar:int:160 -o "$work/mm.cltrace" > /dev/null
sim() { "$CLTRACE" simulate "$work/mm.cltrace" --runs 5 --sm random "$@" --json; }
sim --set registers_per_thread=25 > "$work/regs.json"
sim --set max_workgroups_per_sm=4 > "$work/cap.json"
sim > "$work/default.json"
for f in "d['reads']" "d['read_misses']" "d['runs']['values']" "d['runs']['median']"; do
  [ "$(field "$work/regs.json" "$f")" = "$(field "$work/cap.json" "$f")" ] || fail "$f differs: registers vs cap"
done
[ "$(field "$work/regs.json" "d['config']['registers_per_thread']")" = "25" ] || fail "config lacks registers_per_thread"
[ "$(field "$work/regs.json" "d['runs']['values']")" != "$(field "$work/default.json" "d['runs']['values']")" ] ||
  fail "registers_per_thread=25 changed nothing"
expect_error "a workgroup of 256 threads needs 6656 registers, the SM has 6000" \
  "$CLTRACE" simulate "$work/mm.cltrace" --set registers_per_thread=25 --set registers_per_sm=6000
echo "simulate registers: all checks passed"
