// Scaled copy with a bias on float4 vectors: out[i] = s * in[i] + bias[shift + 4i ..][0..3].
// `in` and `out` are float4 pointers (plain 16-byte vector load and store); `bias` is a float
// pointer read with vload4 from element `shift` on, so with a shift that is not a multiple of 4
// the 16-byte loads are not 16-byte aligned and some straddle a 128-byte line.
// Each work-item makes 3 accesses of 16 bytes: load in[i], vload4 of bias, store out[i].
__kernel void vec4(__global const float4* in, __global const float* bias, __global float4* out,
                   float s, int shift) {
  int i = get_global_id(0);
  out[i] = s * in[i] + vload4(i, bias + shift);
}
