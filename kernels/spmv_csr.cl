// Sparse matrix-vector product y = A x with A in CSR form (row pointers, column indices,
// values); one work-item per row, looping over that row's nonzeros: a data-dependent loop.
//
// Row r's nonzeros are [start(r), start(r + 1)) with
//     start(k) = row_ptr[k] * spread + (row_ptr[k] * row_ptr[k]) % spread      (unsigned)
// With spread = 1 this is plain CSR (start(k) = row_ptr[k]). With spread > 1 and row_ptr = 0, 1,
// 2, ... (the `iota` initialiser), it expands into a valid CSR structure whose rows have varying
// lengths between 1 and 2 * spread - 1, so a launch manifest needs no data file.
// Any data is safe: row bounds are clamped to nnz, column indices taken modulo cols, and
// spread = 0 counts as 1.
//
// Per row: 2 loads of row_ptr, then per nonzero 3 loads (col_idx[j], vals[j], x[col]), then
// 1 store of y[r]: 3 + 3 * length(r) accesses. Work-items at or past `rows` (and all of them
// when cols = 0) return at once.
uint row_start(__global const uint* row_ptr, uint k, uint spread, uint nnz) {
  uint p = row_ptr[k];
  uint s = max(spread, 1u);
  return min(p * s + (p * p) % s, nnz);
}

__kernel void spmv_csr(__global const uint* row_ptr, __global const uint* col_idx,
                       __global const float* vals, __global const float* x, __global float* y,
                       uint rows, uint cols, uint nnz, uint spread) {
  uint r = get_global_id(0);
  if (r >= rows || cols == 0)
    return;
  uint start = row_start(row_ptr, r, spread, nnz);
  uint end = row_start(row_ptr, r + 1, spread, nnz);
  float sum = 0.0f;
  for (uint j = start; j < end; ++j) {
    uint c = col_idx[j] % cols;
    sum += vals[j] * x[c];
  }
  y[r] = sum;
}
