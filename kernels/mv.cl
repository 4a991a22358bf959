// Dense matrix-vector product y = A x for a rows x cols row-major matrix; one work-item per row
// (work-items at or past `rows` return at once). A work-item walks its row: per column one load
// of A and one load of x, then one store of y[row], i.e. 2 * cols + 1 accesses. Neighbouring
// work-items read A a whole row apart (uncoalesced), and all of them read the same x[j].
__kernel void mv(__global const float* A, __global const float* x, __global float* y, int rows,
                 int cols) {
  int row = get_global_id(0);
  if (row >= rows)
    return;
  float sum = 0.0f;
  for (int j = 0; j < cols; ++j)
    sum += A[row * cols + j] * x[j];
  y[row] = sum;
}
