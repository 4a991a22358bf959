// Vector add c = a + b over n floats; one work-item per element. Work-items at or past n (when
// the global size is rounded up) return without touching memory. Each active work-item makes
// 3 accesses: load a[i], load b[i], store c[i].
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n)
    c[i] = a[i] + b[i];
}
