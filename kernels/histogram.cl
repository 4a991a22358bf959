// Histogram of n unsigned values into nbins bins with global atomics; one work-item per value.
// Each work-item makes 2 accesses: load data[i], then atomic_inc on bins[data[i] % nbins]
// (recorded as an Atomic of 4 bytes). Work-items of a warp that land in the same bin contend.
__kernel void histogram(__global const uint* data, __global uint* bins, uint nbins) {
  uint i = get_global_id(0);
  atomic_inc(&bins[data[i] % nbins]);
}
