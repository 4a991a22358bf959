# A store on the way out of a loop by `break` issues in the iteration its lanes leave at, as on a
# SIMT GPU: lanes l with l % 4 == j break at iteration j, so each iteration's step of the loop
# body (32, 24, 16, 8 lanes) is followed by a step of the 8 lanes that break there; the store
# after the loop is one step of all 32.
source "$(dirname "$0")/lib.sh"
cat > "$work/brk.cl" <<'CL'
__kernel void k(__global int* a) {
  int i = get_global_id(0);
  for (int j = 0; j < 4; j++) {
    a[i] = j;
    if (j == get_local_id(0) % 4) { a[i] = 99; break; }
  }
  a[i + 64] = 1;
}
CL
steps=$(traced_steps "$work/brk.cl" k --arg buffer:int:128)
[ "$steps" = "0:0:32 1:1:8 2:0:24 3:1:8 4:0:16 5:1:8 6:0:8 7:1:8 8:2:32" ] || fail "steps: $steps"
echo "ok: a break's store issues in the iteration its lanes leave at"
# The same in a do-while whose break is in the body's first block (the loop's header; the count
# is tested at the bottom): at iteration j the 8 lanes with l % 4 == j store 99 (instruction 0)
# before the others' store (1); no lane is left for the last iteration's store.
cat > "$work/dw.cl" <<'CL'
__kernel void k(__global int* a) {
  int i = get_global_id(0);
  int j = 0;
  do {
    if (j == get_local_id(0) % 4) { a[i] = 99; break; }
    a[i + 32] = j;
    j++;
  } while (j < 4);
  a[i + 64] = 1;
}
CL
steps=$(traced_steps "$work/dw.cl" k --arg buffer:int:128)
[ "$steps" = "0:0:8 1:1:24 2:0:8 3:1:16 4:0:8 5:1:8 6:0:8 7:2:32" ] || fail "do-while steps: $steps"
echo "ok: a break at the top of a do-while issues in the iteration its lanes leave at"
# A loop on the way out: lanes leaving at iteration j run the inner loop twice (instruction 1)
# and the store of 7 (2) in iteration j, 8 lanes each, before iteration j + 1's body.
cat > "$work/inner.cl" <<'CL'
__kernel void k(__global int* a) {
  int i = get_global_id(0);
  for (int j = 0; j < 4; j++) {
    a[i] = j;
    if (j == get_local_id(0) % 4) {
      for (int k = 0; k < 2; k++) a[i + 32 * (k + 1)] = k;
      a[i + 96] = 7;
      break;
    }
  }
  a[i + 128] = 1;
}
CL
steps=$(traced_steps "$work/inner.cl" k --arg buffer:int:256)
[ "$steps" = "0:0:32 1:1:8 2:1:8 3:2:8 4:0:24 5:1:8 6:1:8 7:2:8 8:0:16 9:1:8 10:1:8 11:2:8 12:0:8 13:1:8 14:1:8 15:2:8 16:3:32" ] ||
  fail "inner loop steps: $steps"
echo "ok: a loop on a break's way runs in the iteration its lanes leave at"
# A loop whose `&&` condition ends it from neither header nor latch, with a `return` in its body
# that no lane takes: the store after the loop is one step of all 32 lanes (it was split by the
# iteration each lane left at). Trip counts 1, 2, 3, 3 by l % 4.
cat > "$work/andcond.cl" <<'CL'
__kernel void k(__global int* a, int never) {
  int l = get_local_id(0);
  for (int i = 0; i < 3 && i <= l % 4; ++i) {
    a[l + 32 * i] = i;
    if (i == never) { a[l] = 7; return; }
  }
  a[l + 128] = 1;
}
CL
steps=$(traced_steps "$work/andcond.cl" k --arg buffer:int:256 --arg scalar:int:-1)
# (The return's store and the one after the loop end the two ways into the kernel's end: one
# store there, instruction 1, as in NVPTX's code.)
[ "$steps" = "0:0:32 1:0:24 2:0:16 3:1:32" ] || fail "andcond steps: $steps"
echo "ok: a loop ended by a short-circuit condition is followed by one step of all lanes"
# A while (1) ended by `if (...) break;` at its top, with a return that no lane takes: the store
# after the loop is one step of all 32 lanes. Trip counts 1, 2, 3, 4 by l % 4.
cat > "$work/wr.cl" <<'CL'
__kernel void k(__global int* a, int never) {
  int i = get_local_id(0);
  int j = 0;
  while (1) {
    if (j >= i % 4 + 1) break;
    a[i + 32 * j] = 1;
    if (j == never) { a[i + 160] = 9; return; }
    j++;
  }
  a[i + 256] = 3;
}
CL
steps=$(traced_steps "$work/wr.cl" k --arg buffer:int:512 --arg scalar:int:-1)
[ "$steps" = "0:0:32 1:0:24 2:0:16 3:0:8 4:1:32" ] || fail "while (1) steps: $steps"  # one store, as above
echo "ok: the code after a while (1) left by a break is one step of all lanes"
# A retry loop whose last block is a `continue`: lanes l leave at j = l % 4 through the store of
# j (instruction 1), 8 lanes in each iteration after its first store (0).
cat > "$work/retry.cl" <<'CL'
__kernel void k(__global int* a, int n) {
  int i = get_local_id(0);
  int j = 0;
  while (j < n) {
    a[i + 32 * j] = 1;
    if (j < i % 4) { j++; continue; }
    a[i + 512] = j;
    break;
  }
  a[i + 768] = 3;
}
CL
steps=$(traced_steps "$work/retry.cl" k --arg buffer:int:1024 --arg scalar:int:8)
[ "$steps" = "0:0:32 1:1:8 2:0:24 3:1:8 4:0:16 5:1:8 6:0:8 7:1:8 8:2:32" ] || fail "retry steps: $steps"
echo "ok: the code after a loop's last continue block is the break's way"
# A for (;;) whose only exit is `if (...) { a[i] = 99; break; }`: every lane leaves through that
# block, so the lanes meet there, as a SIMT GPU reconverges at the exiting branch's immediate
# post-dominator: lanes l leave at j = l % 4, the body's store (instruction 0) runs for 24, 16
# and 8 lanes, then the store of 99 (1, laid out before the body's but numbered after it) and
# the store after the loop (2) are one step of all 32 each. (The store of 99 issued as lanes got
# there, 8 at a time, before.) With the exit first in the body, after the body's first store,
# and in a loop inside another: the same, in each outer iteration.
cat > "$work/meet.cl" <<'CL'
__kernel void k(__global int* a) {
  int i = get_global_id(0);
  int j = 0;
  for (;;) {
    if (j == get_local_id(0) % 4) { a[i] = 99; break; }
    a[i + 32] = j;
    j++;
  }
  a[i + 64] = 1;
}
__kernel void late(__global int* a) {
  int i = get_global_id(0);
  int j = 0;
  for (;;) {
    a[i + 32] = j;
    if (j == get_local_id(0) % 4) { a[i] = 99; break; }
    j++;
  }
  a[i + 64] = 1;
}
__kernel void nested(__global int* a) {
  int i = get_global_id(0);
  for (int o = 0; o < 2; o++) {
    int j = 0;
    for (;;) {
      if (j == get_local_id(0) % 4) { a[i] = 99 + o; break; }
      a[i + 32] = j;
      j++;
    }
    a[i + 64] = o;
  }
}
CL
steps=$(traced_steps "$work/meet.cl" k --arg buffer:int:128)
[ "$steps" = "0:0:24 1:0:16 2:0:8 3:1:32 4:2:32" ] || fail "meeting block steps: $steps"
steps=$(traced_steps "$work/meet.cl" late --arg buffer:int:128)
[ "$steps" = "0:0:32 1:0:24 2:0:16 3:0:8 4:1:32 5:2:32" ] || fail "meeting block after the first store: $steps"
steps=$(traced_steps "$work/meet.cl" nested --arg buffer:int:128)
[ "$steps" = "0:0:24 1:0:16 2:0:8 3:1:32 4:2:32 5:0:24 6:0:16 7:0:8 8:1:32 9:2:32" ] ||
  fail "meeting block in an outer loop: $steps"
echo "ok: the block where every way out of a loop meets issues once, for all lanes, after the loop"
# The same with a loop in the meeting block (it moves after the loop whole: its two iterations
# are steps of all 32 lanes, instruction 1), and as a do { ... } while (1), whose latch clang
# leaves as a branch on `true` with a way out no lane takes (the branch is folded first).
cat > "$work/meet2.cl" <<'CL'
__kernel void inner(__global int* a) {
  int i = get_global_id(0);
  int j = 0;
  for (;;) {
    if (j == get_local_id(0) % 4) {
      for (int k = 0; k < 2; k++) a[i + 32 * (k + 2)] = k;
      a[i + 128] = 5;
      break;
    }
    a[i + 32] = j;
    j++;
  }
  a[i + 160] = 1;
}
__kernel void dw(__global int* a) {
  int i = get_global_id(0);
  int j = 0;
  do {
    if (j == get_local_id(0) % 4) { a[i] = 99; break; }
    a[i + 32] = j;
    j++;
  } while (1);
  a[i + 64] = 1;
}
CL
steps=$(traced_steps "$work/meet2.cl" inner --arg buffer:int:256)
[ "$steps" = "0:0:24 1:0:16 2:0:8 3:1:32 4:1:32 5:2:32 6:3:32" ] || fail "loop in the meeting block: $steps"
steps=$(traced_steps "$work/meet2.cl" dw --arg buffer:int:128)
[ "$steps" = "0:0:24 1:0:16 2:0:8 3:1:32 4:2:32" ] || fail "do-while (1) meeting block: $steps"
echo "ok: a loop in the meeting block, and a do-while (1)'s meeting block, issue after the loop"
