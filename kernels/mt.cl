// Matrix transpose: out[x * H + y] = in[y * W + x] for a W x H row-major input.
__kernel void mt(__global const float* in, __global float* out, int W, int H) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  out[x * H + y] = in[y * W + x];
}
