// One load and one store per work-item, no loop.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s --check-prefix=ACC
// RUN: %opt -passes=cltrace-prepare,cltrace-trace %t.bc -S -o - | FileCheck %s --check-prefix=TRACE
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s --check-prefix=COUNT
// No atomic operation anywhere in either instrumented kernel: every work-item counts and
// records into slots of its own.
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s --check-prefix=NOATOMIC
// RUN: %opt -passes=cltrace-prepare,cltrace-trace %t.bc -S -o - | FileCheck %s --check-prefix=NOATOMIC
// NOATOMIC-NOT: {{atomicrmw|cmpxchg|atomic_}}

__kernel void copy(__global const int* in, __global int* out) {
  size_t i = get_global_id(0);
  out[i] = in[i] + 1;
}

// ACC: kernel copy: 0 loops (max depth 0), 2 sites
// ACC-NEXT: [0] load 4B depth 0: {{.*}} = load i32, i32 addrspace(1)*
// ACC-NEXT: [1] store 4B depth 0: store i32

// cltrace's own buffers are noalias: nothing else reaches them.
// TRACE: define {{.*}}spir_kernel void @copy(i32 addrspace(1)* {{.*}}, i32 addrspace(1)* {{.*}}, i8 addrspace(1)* noalias %cltrace_records, i64 addrspace(1)* noalias %cltrace_control, i64 addrspace(1)* noalias %cltrace_args)
// TRACE: %cltrace.linear_id = add i64
// The counted length lies below the host's launch tag (bits 48..63 of the control slot).
// TRACE: %cltrace.limitword = load i64
// TRACE-NEXT: %cltrace.limit = and i64 %cltrace.limitword, 281474976710655
// The packed record of access 0 is one 8-byte unit (id 0, byte offset of the address from `in`,
// the argument the pointer derives from), stored at the work-item's next unit, or in the sink
// at unit 0 when its counted units are used up.
// TRACE: [[P0:%.*]] = getelementptr inbounds i32, i32 addrspace(1)* %0, i64 [[GID:%.*]]
// TRACE-NEXT: [[IN:%.*]] = ptrtoint i32 addrspace(1)* %0 to i64
// TRACE-NEXT: [[A0:%.*]] = ptrtoint i32 addrspace(1)* [[P0]] to i64
// TRACE-NEXT: [[OFF0:%.*]] = sub i64 [[A0]], [[IN]]
// TRACE-NEXT: [[W0:%.*]] = trunc i64 [[OFF0]] to i32
// TRACE-NEXT: [[N0:%.*]] = load i64, i64* %cltrace.n
// TRACE-NEXT: [[NEXT0:%.*]] = add i64 [[N0]], 1
// TRACE-NEXT: store i64 [[NEXT0]], i64* %cltrace.n
// TRACE-NEXT: [[AT0:%.*]] = add i64 %cltrace.first, [[N0]]
// TRACE-NEXT: [[FITS0:%.*]] = icmp ule i64 [[NEXT0]], %cltrace.limit
// TRACE-NEXT: [[UNIT0:%.*]] = select i1 [[FITS0]], i64 [[AT0]], i64 0
// TRACE-NEXT: mul i64 [[UNIT0]], 8
// TRACE-NEXT: [[REC0:%.*]] = getelementptr inbounds i8, i8 addrspace(1)* %cltrace_records
// TRACE-NEXT: [[WORDS0:%.*]] = bitcast i8 addrspace(1)* [[REC0]] to i32 addrspace(1)*
// TRACE-NEXT: [[V0:%.*]] = insertelement <2 x i32> <i32 0, i32 undef>, i32 [[W0]], i32 1
// TRACE-NEXT: [[AT0W:%.*]] = getelementptr inbounds i32, i32 addrspace(1)* [[WORDS0]], i64 0
// TRACE-NEXT: [[AT0:%.*]] = bitcast i32 addrspace(1)* [[AT0W]] to <2 x i32> addrspace(1)*
// TRACE-NEXT: store <2 x i32> [[V0]], <2 x i32> addrspace(1)* [[AT0]], align 8
// TRACE-NEXT: load i32, i32 addrspace(1)* [[P0]]
// Access 1, the store: id 1 and its offset from `out`, one unit.
// TRACE: [[P1:%.*]] = getelementptr inbounds i32, i32 addrspace(1)* %1, i64 [[GID]]
// TRACE-NEXT: [[OUT:%.*]] = ptrtoint i32 addrspace(1)* %1 to i64
// TRACE-NEXT: [[A1:%.*]] = ptrtoint i32 addrspace(1)* [[P1]] to i64
// TRACE-NEXT: sub i64 [[A1]], [[OUT]]
// TRACE: insertelement <2 x i32> <i32 1, i32 undef>, i32 %{{.*}}, i32 1
// TRACE: store <2 x i32> %{{.*}}, <2 x i32> addrspace(1)* %{{.*}}, align 8
// TRACE-NEXT: store i32 %{{.*}}, i32 addrspace(1)* [[P1]]
// At the return the work-item's record total goes back to the control buffer.
// TRACE: [[N:%.*]] = load i64, i64* %cltrace.n
// TRACE-NEXT: store i64 [[N]], i64 addrspace(1)*
// TRACE-NEXT: ret void

// COUNT: define {{.*}}spir_kernel void @copy(i32 addrspace(1)* {{.*}}, i32 addrspace(1)* {{.*}}, i64 addrspace(1)* noalias %cltrace_counts, i64 addrspace(1)* noalias %cltrace_bounds)
// COUNT-NOT: atomicrmw
// The launch tag after the two arguments' sizes starts the diagnostic word, in bits 16..31.
// COUNT: getelementptr inbounds i64, i64 addrspace(1)* %cltrace_bounds, i64 2
// COUNT-NEXT: %cltrace.tag = load i64
// COUNT-NEXT: [[T:%.*]] = and i64 %cltrace.tag, 65535
// COUNT-NEXT: [[TS:%.*]] = shl i64 [[T]], 16
// COUNT-NEXT: store i64 [[TS]], i64* %cltrace.diag
// Each buffer argument's range: its pointer and the bytes the host put in the bounds buffer.
// COUNT: [[B0:%.*]] = ptrtoint i32 addrspace(1)* %0 to i64
// COUNT-NEXT: getelementptr inbounds i64, i64 addrspace(1)* %cltrace_bounds, i64 0
// COUNT-NEXT: [[S0:%.*]] = load i64
// COUNT-NEXT: [[B1:%.*]] = ptrtoint i32 addrspace(1)* %1 to i64
// COUNT-NEXT: getelementptr inbounds i64, i64 addrspace(1)* %cltrace_bounds, i64 1
// COUNT-NEXT: [[S1:%.*]] = load i64
// The load counts one unit and is checked against its buffer (`in`, the argument its pointer
// derives from): its 4 bytes must lie inside. Nothing loaded steers a branch or an address, so
// the count run does without the store (count_slicing.cl) and the load that only fed it: the
// access's block is empty, the outside branch notes its id.
// COUNT: add i64 %{{.*}}, 1
// COUNT: [[A:%.*]] = ptrtoint i32 addrspace(1)* [[P:%.*]] to i64
// COUNT: [[OFF:%.*]] = sub i64 [[A]], [[B0]]
// COUNT-NEXT: [[INSIDE:%.*]] = icmp ult i64 [[OFF]]
// COUNT-NEXT: br i1 [[INSIDE]], label %[[IN:.*]], label %[[OUT:.*]]
// COUNT: [[IN]]:
// COUNT-NEXT: br label
// COUNT: [[OUT]]:
// COUNT: icmp ult i32 0,
// The store, checked against `out`.
// COUNT: sub i64 %{{.*}}, [[B1]]
// COUNT: icmp ult i32 1,
// COUNT-NOT: i32 addrspace(1)*
// COUNT: store i64 %{{.*}}, i64 addrspace(1)*
// COUNT: ret void
