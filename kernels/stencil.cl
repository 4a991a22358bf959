// 3-D 7-point Jacobi stencil (the Parboil-derived kernel of the thesis, listing 7.3): one
// work-item per interior point; the x extent is rounded up to the work-group size, so items
// past the interior return without touching memory.
#define AT(x, y, z) ((x) + nx * ((y) + ny * (z)))

__kernel void stencil(float c0, float c1, __global const float* A0, __global float* Anext,
                      int nx, int ny, int nz) {
  int x = get_global_id(0) + 1;
  int y = get_global_id(1) + 1;
  int z = get_global_id(2) + 1;
  if (x < nx - 1) {
    float neighbours = A0[AT(x, y, z + 1)] + A0[AT(x, y, z - 1)] + A0[AT(x, y + 1, z)] +
                       A0[AT(x, y - 1, z)] + A0[AT(x + 1, y, z)] + A0[AT(x - 1, y, z)];
    Anext[AT(x, y, z)] = c1 * neighbours - A0[AT(x, y, z)] * c0;
  }
}
