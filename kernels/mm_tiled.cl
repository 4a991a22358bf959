// Tiled matrix multiply C = A * B for N x N row-major matrices (N a multiple of TILE), with
// TILE x TILE work-groups (x = column, y = row). Each tile step, every work-item copies one
// element of A and one of B into __local tiles, waits at a barrier, multiplies the tiles out
// of local memory (no global accesses) and waits again before the tiles are overwritten.
// Per work-item: N / TILE steps of (2 loads, 2 barriers), then 1 store:
// 4 * N / TILE + 1 records.
#ifndef TILE
#define TILE 16
#endif

__kernel void mm_tiled(__global const float* A, __global const float* B, __global float* C,
                       int N) {
  __local float As[TILE][TILE];
  __local float Bs[TILE][TILE];
  int lx = get_local_id(0);
  int ly = get_local_id(1);
  int col = get_global_id(0);
  int row = get_global_id(1);
  float sum = 0.0f;
  for (int t = 0; t < N / TILE; ++t) {
    As[ly][lx] = A[row * N + t * TILE + lx];
    Bs[ly][lx] = B[(t * TILE + ly) * N + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k)
      sum += As[ly][k] * Bs[k][lx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[row * N + col] = sum;
}
