// Every half_* math builtin of OpenCL C 1.2, scalar and vector: PoCL's kernel library has them
// only under its own names, so its SPIR path needs cltrace's rename (passes::poclReady).
__kernel void half_math(__global const float* in, __global float* out) {
  size_t i = get_global_id(0);
  float x = in[i];
  float p = fabs(x) + 0.5f;  // positive arguments for log, sqrt, powr
  float s = half_cos(x) + half_sin(x) + half_tan(x * 0.25f) + half_exp(x * 0.1f) + half_exp2(x * 0.1f) +
            half_exp10(x * 0.05f) + half_log(p) + half_log2(p) + half_log10(p) + half_powr(p, 1.5f) +
            half_recip(p) + half_rsqrt(p) + half_sqrt(p) + half_divide(x, p);
  float4 v = (float4)(x, p, x * 0.5f, p * 2.0f);
  float4 w = half_sqrt(fabs(v) + 1.0f) + half_divide(v, (float4)(p)) + half_exp(v * 0.01f);
  out[i] = s + w.x + w.y + w.z + w.w;
}
