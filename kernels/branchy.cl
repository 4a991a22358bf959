// A divergent kernel: neighbouring lanes of a warp take different paths with different global
// accesses. Per work-item i (all n of them):
//   every lane       v = in[i]                                                    1 load
//   even lanes       out[i] = v                                                   1 store
//   odd lanes        out[i] = v + table[(7 i) % n] + table[(13 i) % n]             2 loads, 1 store
//   data-dependent   if (v > threshold) hot[i] = 1                                1 store
// so an even lane makes 2 or 3 accesses and an odd lane 4 or 5; the odd lanes' gathers hit
// scattered lines of `table`.
__kernel void branchy(__global const float* in, __global const float* table, __global float* out,
                      __global int* hot, int n, float threshold) {
  int i = get_global_id(0);
  float v = in[i];
  if (i % 2 == 0) {
    out[i] = v;
  } else {
    float g1 = table[(i * 7) % n];
    float g2 = table[(i * 13) % n];
    out[i] = v + g1 + g2;
  }
  if (v > threshold)
    hot[i] = 1;
}
