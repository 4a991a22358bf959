// A barrier that some work-items of a workgroup may skip (behind a branch on their id, before
// the branch's ways meet again) gets a warning naming the barrier and the condition; barriers
// that every work-item reaches, also after or around branches on the id, get none.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s

// An early return before the barrier.
__kernel void early_return(__global float* a) {
  int l = get_local_id(0);
  if (l >= 40) return;
  a[l] = 1;
  barrier(CLK_GLOBAL_MEM_FENCE);
  a[l + 64] = a[63 - l];
}
// CHECK-LABEL: kernel early_return:
// CHECK: warning: kernel 'early_return': the barrier [1] may not be reached by every work-item of a workgroup, as it follows a branch on the work-item's id ({{.*}}icmp sge i32 {{.*}}, 40) before its ways meet again

// A tree reduction: the branch on the id joins before each barrier.
__kernel void reduction(__global float* a, __local float* s) {
  size_t l = get_local_id(0);
  s[l] = a[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t step = get_local_size(0) / 2; step > 0; step /= 2) {
    if (l < step) s[l] += s[l + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) a[get_group_id(0)] = s[0];
}
// CHECK-LABEL: kernel reduction:
// CHECK-NOT: warning
// CHECK-LABEL: kernel id_bounded_loop:

// A loop whose trip count depends on the id, with a barrier inside.
__kernel void id_bounded_loop(__global float* a) {
  for (size_t i = get_global_id(0); i < 100; i += 7) {
    a[i] = 0;
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}
// CHECK: warning: kernel 'id_bounded_loop': the barrier [1] may not be reached

// Branches on the group id or on an argument are the same for a whole workgroup.
__kernel void uniform_branches(__global float* a, int n) {
  if (get_group_id(0) == 0) barrier(CLK_GLOBAL_MEM_FENCE);
  for (int i = 0; i < n; ++i) {
    if (get_local_id(0) == 0) a[i] = 1;
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}
// CHECK-LABEL: kernel uniform_branches:
// CHECK-NOT: warning
// CHECK-LABEL: kernel divergent_continue:

// A continue on the id skips the barrier later in the loop body.
__kernel void divergent_continue(__global float* a, int n) {
  for (int i = 0; i < n; ++i) {
    if (get_local_id(0) < i) continue;
    a[i] = 1;
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}
// CHECK: warning: kernel 'divergent_continue': the barrier [1] may not be reached

// A flag set on the id and tested later: the phi where the ways meet carries the id's
// divergence (so does a trip count chosen by a ternary on the id).
__kernel void flag_return(__global float* a, int w) {
  int valid = 1;
  if (get_global_id(0) >= w) valid = 0;
  if (!valid) return;
  a[get_global_id(0)] = 0;
  barrier(CLK_GLOBAL_MEM_FENCE);
}
// CHECK-LABEL: kernel flag_return:
// CHECK: warning: kernel 'flag_return': the barrier [1] may not be reached
// CHECK-LABEL: kernel shared_out:

__kernel void shared_out(__global float* a, int n, int per) {
  int count = get_local_id(0) < n % 4 ? per + 1 : per;
  for (int i = 0; i < count; ++i) {
    a[i] = 0;
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}
// CHECK: warning: kernel 'shared_out': the barrier [1] may not be reached

// What every work-item of a group computes alike is no divergence: the group's first global id,
// and a way that is undefined to take (unreachable) is no way taken.
__kernel void group_base(__global float* a, __local float* s, int n) {
  size_t base = get_global_id(0) - get_local_id(0);
  if (base + get_local_size(0) <= n) {
    s[get_local_id(0)] = a[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    a[get_global_id(0)] = s[0];
  }
  if (get_local_id(0) >= 256) __builtin_unreachable();
  barrier(CLK_LOCAL_MEM_FENCE);
}
// CHECK-LABEL: kernel group_base:
// CHECK-NOT: warning
