// Structs copied whole through a private variable: the fields the kernel uses are loaded, the
// padding of one stored to global memory is not stored (its bytes hold no value), as a GPU
// compiler copies them.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s

typedef struct { char a; int b; } padded;  // bytes 1-3 padding
// CHECK: kernel store_padded: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] store 1B depth 0: store i8
// CHECK-NEXT: [2] store 4B depth 0: store i32
__kernel void store_padded(__global padded* pd, __global const int* x) {
  int i = get_global_id(0);
  padded s;
  s.a = (char)i;
  s.b = x[i];
  pd[i] = s;
}

typedef struct { float a; int rest[3]; } wide;
// CHECK: kernel load_one_field: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store float
__kernel void load_one_field(__global float* out, __global const wide* ps) {
  int i = get_global_id(0);
  wide s = ps[i];
  out[i] = s.a;
}

// A 16-aligned struct copied between global buffers: two 8-byte loads and stores, each piece
// stored once loaded, as NVPTX lowers the copy (ld.global.u64, st.global.u64 twice); the
// load-store vectorizer does not join the two loads across the store between them.
typedef struct { float x, y, z, w; } __attribute__((aligned(16))) aligned16;
// CHECK: kernel copy_aligned16: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load i64
// CHECK-NEXT: [1] store 8B depth 0: store i64
// CHECK-NEXT: [2] load 8B depth 0: {{.*}} = load i64
// CHECK-NEXT: [3] store 8B depth 0: store i64
__kernel void copy_aligned16(__global const aligned16* in, __global aligned16* out) {
  int i = get_global_id(0);
  out[i] = in[i];
}
