// Scaled copy with a bias on float4 vectors: out[i] = s * in[i] + bias[shift + 4i ..][0..3].
// `in` and `out` are float4 pointers (plain 16-byte vector load and store); `bias` is a float
// pointer read with vload4 from element `shift` on. A float pointer is only 4-byte aligned, so
// a GPU compiler reads the vload4 as four 4-byte loads (a 16-byte load needs 16-byte
// alignment, which a shift that is not a multiple of 4 would not give).
// Each work-item makes 6 accesses: load in[i] (16 bytes), the vload4's four loads of bias
// (4 bytes each), store out[i] (16 bytes).
__kernel void vec4(__global const float4* in, __global const float* bias, __global float4* out,
                   float s, int shift) {
  int i = get_global_id(0);
  out[i] = s * in[i] + vload4(i, bias + shift);
}
