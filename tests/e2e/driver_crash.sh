# A driver that crashes in a run (PoCL segfaults on this kernel, whose barrier only some
# work-items reach, with or without cltrace) is named with the run and the barrier, exit status
# 1: run leaves no trace, predict no temporary folder.
source "$(dirname "$0")/lib.sh"
ulimit -c 0
cat > "$work/crash.cl" <<'CL'
__kernel void k(__global int* a) {
  __local int t[16];
  int l = get_local_id(0);
  if (l < 4) { t[l] = l; barrier(CLK_LOCAL_MEM_FENCE); a[get_global_id(0)] = t[(l + 1) & 3]; }
}
CL
words="cltrace: error: the OpenCL driver crashed (SIGSEGV, a segmentation fault) in the count run of kernel 'k': its barrier [0] may not be reached by every work-item of a workgroup (warned above), and PoCL can crash on such a barrier; let every work-item reach each barrier"
launch=(--kernel k --global 64 --local 16 --arg buffer:int:80)
mkdir -p "$work/tmp"
for command in "run -o $work/crash.out" predict; do
  rc=0
  out=$(TMPDIR="$work/tmp" timeout 120 "$CLTRACE" $command "$work/crash.cl" "${launch[@]}" 2>&1) || rc=$?
  [ "$rc" -eq 1 ] || fail "$command: exit status $rc, not 1: $out"
  echo "$out" | grep -Fx "$words" >/dev/null || fail "$command: no message: $out"
  [ -z "$(ls "$work" | grep crash.out || true)" ] || fail "$command left $(ls "$work")"
  [ -z "$(ls -A "$work/tmp")" ] || fail "$command left its temporary folder: $(ls -AR "$work/tmp")"
  echo "ok: ${command%% *} names the run the driver crashed in, exit status 1"
done
