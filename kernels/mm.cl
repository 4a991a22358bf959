// Naive matrix multiply C = A * B for N x N row-major matrices; one work-item per element of C
// (x = column, y = row). Each work-item makes 2N loads and 1 store.
__kernel void mm(__global const float* A, __global const float* B, __global float* C, int N) {
  int row = get_global_id(1);
  int col = get_global_id(0);
  float sum = 0.0f;
  for (int k = 0; k < N; ++k)
    sum += A[row * N + k] * B[k * N + col];
  C[row * N + col] = sum;
}
