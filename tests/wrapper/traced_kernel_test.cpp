// The launch protocol on PoCL with a minimal host harness: exact record counts and contents,
// buffers restored, overflow detection.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cltrace/wrapper/traced_kernel.h"
#include "test_support.h"

using namespace cltrace;
using namespace cltrace::test;

namespace {

const char* kMatrixMultiply = R"CL(
__kernel void mm(__global const float* A, __global const float* B, __global float* C, int N) {
  int row = get_global_id(1);
  int col = get_global_id(0);
  float sum = 0.0f;
  for (int k = 0; k < N; ++k)
    sum += A[row * N + k] * B[k * N + col];
  C[row * N + col] = sum;
}
)CL";

std::vector<float> iota(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// Linear global id (x fastest) of the work-item at position `p` of a 2-D trace file.
std::pair<uint64_t, uint64_t> globalOf(const NDRange& r, uint64_t p) {
  uint64_t groupSize = r.local[0] * r.local[1];
  uint64_t group = p / groupSize, local = p % groupSize;
  uint64_t groupsX = r.global[0] / r.local[0];
  uint64_t x = (group % groupsX) * r.local[0] + local % r.local[0];
  uint64_t y = (group / groupsX) * r.local[1] + local / r.local[0];
  return {x, y};
}

TEST(TracedKernel, MatrixMultiply4x4ExactRecords) {
  OpenCLEnv env;
  const int n = 4;
  auto a = iota(16, 1), b = iota(16, 100);
  cl_mem A = env.buffer(a), B = env.buffer(b), C = env.buffer(std::vector<float>(16, 0));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(kMatrixMultiply, "mm", {}));
  NDRange r = range2d(4, 4, 2, 2);
  std::string path = tempPath("mm4");
  wrapper::LaunchResult res = k.launch(
      env.queue,
      {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(B),
       wrapper::ArgBinding::ofBuffer(C), wrapper::ArgBinding::ofScalar(&n, sizeof n)},
      r, path);
  EXPECT_TRUE(res.warnings.empty());

  WholeTrace t = readWholeTrace(path);
  EXPECT_EQ(t.header.kernelName, "mm");
  EXPECT_EQ(t.header.workItemCount, 16u);
  EXPECT_EQ(t.header.recordCount, 16u * 9u);  // 2N loads + 1 store each
  ASSERT_EQ(t.header.buffers.size(), 3u);
  // Virtual layout: buffers in argument order at multiples of 256 bytes.
  EXPECT_EQ(t.header.buffers[0].virtualBase, 0u);
  EXPECT_EQ(t.header.buffers[1].virtualBase, 256u);
  EXPECT_EQ(t.header.buffers[2].virtualBase, 512u);
  EXPECT_EQ(t.header.buffers[2].name, "C");
  EXPECT_EQ(t.header.buffers[2].size, 64u);

  ASSERT_EQ(t.workItems.size(), 16u);
  for (uint64_t p = 0; p < 16; ++p) {
    auto [col, row] = globalOf(r, p);
    const auto& recs = t.workItems[p];
    ASSERT_EQ(recs.size(), 9u) << "work-item " << p;
    for (uint32_t kk = 0; kk < 4; ++kk) {
      const Record& ra = recs[2 * kk];
      const Record& rb = recs[2 * kk + 1];
      EXPECT_EQ(ra.kind, uint8_t(AccessKind::Load));
      EXPECT_EQ(ra.instruction, 0u);
      EXPECT_EQ(ra.address, 0 + 4 * (row * 4 + kk));
      EXPECT_EQ(ra.size, 4u);
      EXPECT_EQ(ra.depth, 1u);
      EXPECT_EQ(ra.iterations[0], kk);
      EXPECT_EQ(rb.instruction, 1u);
      EXPECT_EQ(rb.address, 256 + 4 * (kk * 4 + col));
      EXPECT_EQ(rb.iterations[0], kk);
    }
    const Record& st = recs[8];
    EXPECT_EQ(st.kind, uint8_t(AccessKind::Store));
    EXPECT_EQ(st.instruction, 2u);
    EXPECT_EQ(st.address, 512 + 4 * (row * 4 + col));
    EXPECT_EQ(st.depth, 0u);
    EXPECT_EQ(st.iterations[0], 0u);
  }

  // The result is the product, as without tracing.
  auto c = env.read<float>(C, 16);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      float want = 0;
      for (int kk = 0; kk < 4; ++kk) want += a[i * 4 + kk] * b[kk * 4 + j];
      EXPECT_FLOAT_EQ(c[i * 4 + j], want);
    }
  std::filesystem::remove(path);
}

// Each access's text begins with its place in the source: line and column in the program, and
// in a program linked from several units, the unit (its number in the link) before them.
TEST(InstructionTexts, NameTheirSourceLines) {
  const char* src = "\n__kernel void f(__global const int* a, __global int* b) {\n  b[0] = a[1];\n}\n";
  const passes::InstrumentedKernel one = passes::instrumentSource(src, "f", {});
  ASSERT_EQ(one.report.accesses.size(), 2u);
  EXPECT_EQ(one.report.accesses[0].text.rfind("line 3:10: %", 0), 0u) << one.report.accesses[0].text;
  EXPECT_EQ(one.report.accesses[1].text.rfind("line 3:8: store i32 ", 0), 0u) << one.report.accesses[1].text;

  const std::string unit1 = passes::compileProgramSource(
      "int get(__global const int* p);\n__kernel void f(__global const int* a, __global int* b) {\n"
      "  b[0] = get(a) + a[1];\n}\n",
      {});
  const std::string unit2 = passes::compileProgramSource("\n\nint get(__global const int* p) { return p[2]; }\n", {});
  const passes::InstrumentedKernel linked = passes::instrumentBitcode(passes::linkBitcode({unit1, unit2}), "f");
  ASSERT_EQ(linked.report.accesses.size(), 3u);
  EXPECT_EQ(linked.report.accesses[0].text.rfind("unit2 line 3:41: %", 0), 0u) << linked.report.accesses[0].text;
  EXPECT_EQ(linked.report.accesses[1].text.rfind("unit1 line 3:19: %", 0), 0u) << linked.report.accesses[1].text;
  EXPECT_EQ(linked.report.accesses[2].text.rfind("unit1 line 3:8: store i32 ", 0), 0u) << linked.report.accesses[2].text;
  // A program linked from one unit is that unit's program: no unit number.
  const passes::InstrumentedKernel single =
      passes::instrumentBitcode(passes::linkBitcode({passes::compileProgramSource(src, {})}), "f");
  ASSERT_EQ(single.report.accesses.size(), 2u);
  EXPECT_EQ(single.report.accesses[0].text.rfind("line 3:10: %", 0), 0u) << single.report.accesses[0].text;
}

TEST(TracedKernel, InPlaceUpdateRunsOnce) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void bump(__global int* a) { size_t i = get_global_id(0); a[i] = a[i] * 2 + 1; })CL";
  cl_mem A = env.buffer(std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
  passes::InstrumentedKernel ik = passes::instrumentSource(src, "bump", {});
  // The value stored steers nothing: the count run leaves the store out and the buffers are
  // not restored before the trace run, which must still find them untouched.
  EXPECT_FALSE(ik.report.countRunWritesBuffers);
  wrapper::TracedKernel k(env.context, env.device, std::move(ik));
  const NDRange r = NDRange::fromSizes({8}, {4});
  std::string path = tempPath("bump");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(A)}, r, path);
  EXPECT_EQ(env.read<int>(A, 8), (std::vector<int>{3, 5, 7, 9, 11, 13, 15, 17}));
  WholeTrace t = readWholeTrace(path);
  EXPECT_EQ(t.header.recordCount, 16u);
  std::filesystem::remove(path);
}

TEST(TracedKernel, DifferentPathInTraceRunIsReportedNotWritten) {
  OpenCLEnv env;
  // With flag 0 a work-item makes 3 records, with flag 1 it makes 4 (pathb: and a barrier).
  // Where the kernel has a barrier the message names the other cause it cannot tell apart: PoCL
  // running the instrumented kernels' barriers differently.
  const char* src = R"CL(
  __kernel void path(__global const int* flag, __global const int* in, __global int* out) {
    size_t i = get_global_id(0);
    if (flag[0] != 0) out[i] = in[i] + in[i + 1]; else out[i] = in[i];
  }
  __kernel void pathb(__global const int* flag, __global const int* in, __global int* out) {
    size_t i = get_global_id(0);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (flag[0] != 0) out[i] = in[i] + in[i + 1]; else out[i] = in[i];
  })CL";
  for (const std::string& name : {std::string("path"), std::string("pathb")}) {
    cl_mem flag = env.buffer(std::vector<int>{0});
    cl_mem in = env.buffer(std::vector<int>(9, 1));
    cl_mem out = env.buffer(std::vector<int>(8, 0));
    wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, name, {}));
    const NDRange r = NDRange::fromSizes({8}, {8});
    wrapper::LaunchOptions o;
    o.beforeTraceRun = [&](cl_command_queue q) {
      int one = 1;
      clEnqueueWriteBuffer(q, flag, CL_TRUE, 0, sizeof one, &one, 0, nullptr, nullptr);
    };
    std::string path = tempPath(name);
    try {
      k.launch(env.queue,
               {wrapper::ArgBinding::ofBuffer(flag), wrapper::ArgBinding::ofBuffer(in),
                wrapper::ArgBinding::ofBuffer(out)},
               r, path, o);
      ADD_FAILURE() << name << ": expected a TraceError";
    } catch (const wrapper::TraceError& e) {
      const std::string cause =
          name == "path" ? "fewer): the kernel's control flow depends on data it changes or on timing, so its trace"
                         : "fewer): either the kernel's control flow depends on data it changes or on timing, or the "
                           "device ran the instrumented kernels' barriers differently (PoCL does for some barriers "
                           "inside branches); either way its trace would be wrong";
      EXPECT_NE(std::string(e.what()).find("in 8 work-items (8 produced more"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(cause), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(path));
  }
}

TEST(TracedKernel, LoopBoundReadBackFromAStoreIsCountedAsTheTraceRunGoes) {
  OpenCLEnv env;
  // The loop bound is loaded from the value the work-item has just stored, so the count run must
  // keep the stores (passes/count_slicing.h): work-item i makes 1 store and i loads of n[i]
  // (the first test takes the value stored; the store to out[i] may be to n[i], so each later
  // test reads it again, as the GPU's rotated loop does: value_forwarding.h), i stores of out[i]
  // and, when i > 0, one load of it (the loop writes only out[i]: later iterations take the
  // value stored, invariant_loads.h); 1 + 4 + 6 + 8 = 19 records for 4 work-items.
  const char* src = R"CL(
  __kernel void readback(__global int* n, __global int* out) {
    size_t i = get_global_id(0);
    n[i] = (int)i;
    for (int j = 0; j < n[i]; ++j) out[i] += j;
  })CL";
  cl_mem n = env.buffer(std::vector<int>(4, 0));
  cl_mem out = env.buffer(std::vector<int>(4, 0));
  passes::InstrumentedKernel ik = passes::instrumentSource(src, "readback", {});
  EXPECT_TRUE(ik.report.countRunWritesBuffers);  // so the buffers are restored before the trace run
  wrapper::TracedKernel k(env.context, env.device, std::move(ik));
  const NDRange r = NDRange::fromSizes({4}, {4});
  std::string path = tempPath("readback");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(n), wrapper::ArgBinding::ofBuffer(out)}, r, path);
  EXPECT_EQ(env.read<int>(n, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(env.read<int>(out, 4), (std::vector<int>{0, 0, 1, 3}));
  EXPECT_EQ(readWholeTrace(path).header.recordCount, 19u);
  std::filesystem::remove(path);
}

// A running sum along each work-item's row (Rodinia particlefilter's CDF): row[x - 1] is what the
// previous iteration stored, read in the first iteration only and kept after (invariant_loads.h,
// carried stores; clang -O2 nvptx64 reads it once before the loop, where it reads c[g * n + x -
// 1] every iteration). Work-item g, iteration k (x = k + 1): row[x] loaded (the `+=`) and
// stored, and in iteration 0 row[x - 1] loaded too: 3 + 2 + 2 = 7 records. The sums are what the
// kernel computes without cltrace.
TEST(TracedKernel, ValueStoredForTheNextIterationIsReadOnceAndKept) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void runningSum(__global float* c, int n) {
    __global float* row = c + get_global_id(0) * n;
    for (int x = 1; x < n; x++) row[x] += row[x - 1];
  })CL";
  cl_mem c = env.buffer(std::vector<float>{1, 2, 3, 4, 10, 20, 30, 40});
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "runningSum", {}));
  const NDRange r = NDRange::fromSizes({2}, {2});
  std::string path = tempPath("running_sum");
  const int n = 4;
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(c), wrapper::ArgBinding::ofScalar(&n, sizeof n)}, r, path);
  EXPECT_EQ(env.read<float>(c, 8), (std::vector<float>{1, 3, 6, 10, 10, 30, 60, 100}));
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 2u);
  for (uint64_t g = 0; g < 2; ++g) {
    const auto& recs = t.workItems[g];
    ASSERT_EQ(recs.size(), 7u) << "work-item " << g;
    const uint64_t row = 16 * g;  // c at address 0, 4 floats a row
    // In source order: the right-hand side row[x - 1] first, then row[x] and its store.
    const std::vector<std::pair<AccessKind, uint64_t>> want = {
        {AccessKind::Load, row + 0},  {AccessKind::Load, row + 4},  {AccessKind::Store, row + 4},
        {AccessKind::Load, row + 8},  {AccessKind::Store, row + 8}, {AccessKind::Load, row + 12},
        {AccessKind::Store, row + 12}};
    const std::vector<uint32_t> iteration = {0, 0, 0, 1, 1, 2, 2};
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(recs[i].kind, uint8_t(want[i].first)) << g << "/" << i;
      EXPECT_EQ(recs[i].address, want[i].second) << g << "/" << i;
      EXPECT_EQ(recs[i].iterations[0], iteration[i]) << g << "/" << i;
    }
  }
  std::filesystem::remove(path);
}

TEST(TracedKernel, WorkItemsInLoopsNestedTooDeepAreCountedAndWarnedAbout) {
  OpenCLEnv env;
  // Work-items 0 and 1 run 8 nested loops once each (a load and a store past the 7 counters a
  // record keeps); 2 and 3 run none. The first two flag it in their diagnostic slots (record.h).
  const char* src = R"CL(
  __kernel void deep(__global int* a) {
    size_t g = get_global_id(0);
    int n = g < 2 ? 1 : 0;
    for (int i0 = 0; i0 < n; ++i0)
     for (int i1 = 0; i1 < n; ++i1)
      for (int i2 = 0; i2 < n; ++i2)
       for (int i3 = 0; i3 < n; ++i3)
        for (int i4 = 0; i4 < n; ++i4)
         for (int i5 = 0; i5 < n; ++i5)
          for (int i6 = 0; i6 < n; ++i6)
           for (int i7 = 0; i7 < n; ++i7)
            a[g + i0 + i7] += 1;
  })CL";
  cl_mem a = env.buffer(std::vector<int>(4, 0));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "deep", {}));
  const NDRange r = NDRange::fromSizes({4}, {4});
  std::string path = tempPath("deep");
  wrapper::LaunchResult result = k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(a)}, r, path);
  EXPECT_EQ(env.read<int>(a, 4), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(result.header.recordCount, 4u);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0], "2 work-items made accesses in loops nested deeper than 7; their records keep only "
                                "the outermost counters");
  std::filesystem::remove(path);
}

TEST(TracedKernel, AccessesOutsideTheirBufferAreReportedNotPerformed) {
  OpenCLEnv env;
  // `out` holds 8 ints: work-items 2..7 store past its end (index 8, 12, ..., 28).
  const char* src = R"CL(
  __kernel void spill(__global const int* in, __global int* out) {
    size_t i = get_global_id(0);
    out[i * 4] = in[i];
  })CL";
  cl_mem in = env.buffer(std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
  cl_mem out = env.buffer(std::vector<int>(8, -1));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "spill", {}));
  const NDRange r = NDRange::fromSizes({8}, {8});
  std::string path = tempPath("spill");
  try {
    k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(in), wrapper::ArgBinding::ofBuffer(out)}, r, path);
    FAIL() << "expected a TraceError";
  } catch (const wrapper::TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("6 work-items access memory outside their buffers; the first, "
                                         "work-item 2 (linear global id), at instruction 1 (line 4:16: store i32 "),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(", through a pointer into argument 1 (out). Is that buffer smaller than "
                                         "the kernel reads or writes, or does the pointer reach past it"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  // Nothing was written: the count run leaves out this kernel's store (its value steers nothing)
  // and only checked it; the trace run never started.
  EXPECT_EQ(env.read<int>(out, 8), std::vector<int>(8, -1));
  EXPECT_EQ(env.read<int>(in, 8), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(TracedKernel, RejectsBadLaunches) {
  OpenCLEnv env;
  const char* src = "__kernel void one(__global int* a) { a[get_global_id(0)] = 1; }";
  cl_mem A = env.buffer(std::vector<int>(8, 0));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "one", {}));
  NDRange r = NDRange::fromSizes({8}, {3});
  auto expectError = [&](const NDRange& range, std::vector<wrapper::ArgBinding> args, const char* words) {
    try {
      k.launch(env.queue, args, range, tempPath("bad"));
      ADD_FAILURE() << "expected an error containing '" << words << "'";
    } catch (const wrapper::TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expectError(r, {wrapper::ArgBinding::ofBuffer(A)}, "local size 3 does not divide global size 8");
  r.local[0] = 4;
  r.global[0] = 0;
  expectError(r, {wrapper::ArgBinding::ofBuffer(A)}, "global size is zero in dimension 0");
  r.global[0] = 8;
  expectError(r, {}, "takes 1 arguments, 0 given");
  expectError(r, {wrapper::ArgBinding::ofLocal(16)}, "argument 0 (int* a) needs a buffer");
}

}  // namespace

namespace {

// Loop shapes on the device: a while loop with continue and break, then a sibling loop left by
// an early return. Iteration counters count loop-header executions, so the body of iteration k
// records k whatever path the previous iterations took.
TEST(TracedKernel, IterationCountersOfEveryLoopShape) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void shapes(__global const int* in, __global int* out) {
    int g = get_global_id(0);
    int i = 0;
    while (i < 6) {
      int v = in[i];
      i++;
      if (v == 1) continue;
      if (v == 2) break;
      out[g] += v;
    }
    for (int j = 0; j < 3; ++j) {
      if (j == g) return;
      out[g] += in[j];
    }
  })CL";
  cl_mem in = env.buffer(std::vector<int>{0, 1, 3, 2, 5, 5});
  cl_mem out = env.buffer(std::vector<int>(4, 0));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "shapes", {}));
  const NDRange r = NDRange::fromSizes({4}, {4});
  std::string path = tempPath("shapes");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(in), wrapper::ArgBinding::ofBuffer(out)}, r, path);
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 4u);
  for (uint64_t g = 0; g < 4; ++g) {
    const auto& recs = t.workItems[g];
    // while: in[0] (v 0: out += 0), in[1] (continue), in[2] (v 3: out += 3), in[3] (break).
    // The sibling loop (below) adds three records to its first iteration and two to later ones.
    ASSERT_EQ(recs.size(), g == 0 ? 8u : 9u + 2u * g) << "work-item " << g;
    struct Want {
      AccessKind kind;
      uint64_t address;
      uint32_t iteration;
    };
    const uint64_t outAt = 256 + 4 * g;  // `in` (24 bytes) at 0, `out` at 256
    std::vector<Want> want = {{AccessKind::Load, 0, 0},      {AccessKind::Load, outAt, 0},
                              {AccessKind::Store, outAt, 0}, {AccessKind::Load, 4, 1},
                              {AccessKind::Load, 8, 2},      {AccessKind::Load, outAt, 2},
                              {AccessKind::Store, outAt, 2}, {AccessKind::Load, 12, 3}};
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(recs[i].kind, uint8_t(want[i].kind)) << g << "/" << i;
      EXPECT_EQ(recs[i].address, want[i].address) << g << "/" << i;
      EXPECT_EQ(recs[i].depth, 1u) << g << "/" << i;
      EXPECT_EQ(recs[i].iterations[0], want[i].iteration) << g << "/" << i;
    }
    // The sibling loop: iterations 0 .. g-1 (work-item g returns at j == g), all with that
    // loop's own counter: in[j] and out[g] loaded and out[g] stored in the first; later ones
    // take out[g] from the store before (the loop writes nothing else: invariant_loads.h).
    size_t at = 8;
    for (uint32_t j = 0; j < g; ++j) {
      std::vector<uint64_t> addresses;
      for (size_t n = 0; n < (j == 0 ? 3u : 2u); ++n, ++at) {
        EXPECT_EQ(recs[at].depth, 1u);
        EXPECT_EQ(recs[at].iterations[0], j) << "work-item " << g << " iteration " << j;
        addresses.push_back(recs[at].address);
      }
      EXPECT_EQ(recs[at - 1].kind, uint8_t(AccessKind::Store));
      std::sort(addresses.begin(), addresses.end());
      EXPECT_EQ(addresses, j == 0 ? (std::vector<uint64_t>{4 * j, outAt, outAt}) : (std::vector<uint64_t>{4 * j, outAt}));
    }
  }
  // out[g] = 0 + 3 + in[0] + ... + in[g-1] (capped at j < 3).
  EXPECT_EQ(env.read<int>(out, 4), (std::vector<int>{3, 3, 4, 7}));
  std::filesystem::remove(path);
}

}  // namespace

namespace {

struct Want {
  AccessKind kind;
  uint32_t instruction;
  uint64_t address;
  uint32_t size;
  uint8_t flags;
};

void expectRecords(const std::vector<Record>& got, const std::vector<Want>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].kind, uint8_t(want[i].kind)) << what << " record " << i;
    EXPECT_EQ(got[i].instruction, want[i].instruction) << what << " record " << i;
    EXPECT_EQ(got[i].address, want[i].address) << what << " record " << i;
    EXPECT_EQ(got[i].size, want[i].size) << what << " record " << i;
    EXPECT_EQ(got[i].flags, want[i].flags) << what << " record " << i;
  }
}

}  // namespace

// A store through a private pointer made from a global address (`*(float*)(ulong)&w[i]`, which
// PoCL runs as the global store it is) is performed once: the count run, which keeps it, gets
// its buffers restored (it wrote w twice: 4x + 3 instead of 2x + 1). Only the load is
// recorded: the store is one to private memory as far as the passes can tell.
TEST(TracedKernel, StoreThroughAnIntegerCastIsPerformedOnce) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void twice(__global float* w) {
    int i = get_global_id(0);
    float* q = (float*)(ulong)(w + i);
    *q = w[i] * 2.0f + 1.0f;
  })CL";
  cl_mem w = env.buffer(std::vector<float>{1, 2, 3, 4});
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "twice", {}));
  EXPECT_TRUE(k.instrumented().report.countRunWritesBuffers);
  std::string path = tempPath("twice");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(w)}, NDRange::fromSizes({4}, {4}), path);
  EXPECT_EQ(env.read<float>(w, 4), (std::vector<float>{3, 5, 7, 9}));
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 4u);
  for (uint64_t g = 0; g < 4; ++g)
    expectRecords(t.workItems[g], {{AccessKind::Load, 0, 4 * g, 4, 0}}, "work-item " + std::to_string(g));
  std::filesystem::remove(path);
}

// PoCL's SPIR library has neither mem_fence/read_mem_fence/write_mem_fence nor the atom_*
// names: the instrumented programs use fence instructions and atomic_* instead, after the
// fences and atomics have been recorded.
TEST(TracedKernel, FencesAndAtomExtensionBuiltinsRunAndAreRecorded) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void fa(__global int* a, __global int* c) {
    int i = get_global_id(0);
    a[i] = i + 1;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    atom_add(&c[0], a[i]);
    read_mem_fence(CLK_LOCAL_MEM_FENCE);
    atom_inc(&c[1]);
    write_mem_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  })CL";
  cl_mem A = env.buffer(std::vector<int>(4, 0)), Cnt = env.buffer(std::vector<int>{10, 20});
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "fa", {}));
  const NDRange r = NDRange::fromSizes({4}, {2});
  std::string path = tempPath("fa");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(Cnt)}, r, path);
  // The traced launch leaves what the kernel computes: c[0] += 1+2+3+4, c[1] += 4.
  EXPECT_EQ(env.read<int>(A, 4), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(env.read<int>(Cnt, 2), (std::vector<int>{20, 24}));
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 4u);
  const uint64_t c = 256;  // a: 16 bytes at 0, c at the next 256-byte boundary
  for (uint64_t w = 0; w < 4; ++w)
    expectRecords(t.workItems[w],
                  {{AccessKind::Store, 0, 4 * w, 4, 0},
                   {AccessKind::Fence, 1, 0, 0, kFenceGlobal},
                   {AccessKind::Load, 2, 4 * w, 4, 0},
                   {AccessKind::Atomic, 3, c, 4, 0},
                   {AccessKind::Fence, 4, 0, 0, kFenceLocal | kFenceRead},
                   {AccessKind::Atomic, 5, c + 4, 4, 0},
                   {AccessKind::Fence, 6, 0, 0, kFenceGlobal | kFenceLocal | kFenceWrite}},
                  "work-item " + std::to_string(w));
  std::filesystem::remove(path);
}

// A kernel called from another kernel is an ordinary call; a struct passed by value is set
// from its bytes. Only the traced kernel is built.
TEST(TracedKernel, KernelCallingAKernelWithAStructByValue) {
  OpenCLEnv env;
  const char* src = R"CL(
  typedef struct { int scale; int shift; } Params;
  __kernel void inner(__global const int* a, __global int* b, Params p) {
    int i = get_global_id(0);
    b[i + p.shift] = a[i] * p.scale;
  }
  __kernel void outer(__global const int* a, __global int* b, Params p) {
    inner(a, b, p);
    b[0] = -1;
  })CL";
  passes::InstrumentedKernel ik = passes::instrumentSource(src, "outer", {});
  ASSERT_EQ(ik.args.size(), 3u);
  EXPECT_FALSE(ik.args[2].isPointer);
  EXPECT_EQ(ik.args[2].byValueBytes, 8u);
  cl_mem A = env.buffer(std::vector<int>{1, 2, 3}), B = env.buffer(std::vector<int>(5, 0));
  struct {
    int scale, shift;
  } params{10, 2};
  wrapper::TracedKernel k(env.context, env.device, std::move(ik));
  const NDRange r = NDRange::fromSizes({3}, {1});
  std::string path = tempPath("outer");
  k.launch(env.queue,
           {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(B),
            wrapper::ArgBinding::ofScalar(&params, sizeof params)},
           r, path);
  EXPECT_EQ(env.read<int>(B, 5), (std::vector<int>{-1, 0, 10, 20, 30}));
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 3u);
  const uint64_t b = 256;
  for (uint64_t w = 0; w < 3; ++w)
    expectRecords(t.workItems[w],
                  {{AccessKind::Load, 0, 4 * w, 4, 0},
                   {AccessKind::Store, 1, b + 4 * (w + 2), 4, 0},
                   {AccessKind::Store, 2, b, 4, 0}},
                  "work-item " + std::to_string(w));
  std::filesystem::remove(path);
}

// A struct assigned whole (a 16-byte memcpy, 4-byte aligned) is four 4-byte loads and four
// 4-byte stores, as a GPU compiler copies it, and the values arrive.
TEST(TracedKernel, StructCopyIsOneAccessPerAlignedWord) {
  OpenCLEnv env;
  const char* src = R"CL(
  typedef struct { float x, y, z; int id; } P;
  __kernel void cp(__global const P* ps, __global P* pd) {
    int i = get_global_id(0);
    pd[i] = ps[i];
  })CL";
  std::vector<int32_t> in(8);
  for (size_t i = 0; i < in.size(); ++i) in[i] = int32_t(100 + i);
  cl_mem A = env.buffer(in), B = env.buffer(std::vector<int32_t>(8, 0));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "cp", {}));
  const NDRange r = NDRange::fromSizes({2}, {2});
  std::string path = tempPath("cp");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(B)}, r, path);
  EXPECT_EQ(env.read<int32_t>(B, 8), in);
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 2u);
  const uint64_t bBase = 256;  // ps (32 bytes) at 0, pd at 256
  for (uint64_t w = 0; w < 2; ++w) {
    std::vector<Want> want;  // each word stored once loaded, as NVPTX lowers the copy
    for (uint32_t f = 0; f < 4; ++f) {
      want.push_back({AccessKind::Load, 2 * f, 16 * w + 4 * f, 4, 0});
      want.push_back({AccessKind::Store, 2 * f + 1, bBase + 16 * w + 4 * f, 4, 0});
    }
    expectRecords(t.workItems[w], want, "work-item " + std::to_string(w));
  }
  std::filesystem::remove(path);
}

// A float4 of which .xyz is read (a position whose .w is unused) is read as a GPU compiler
// reads it: 8 bytes and 4 (NVPTX's ld.v2.f32 and ld.f32), not 16; the sum arrives.
TEST(TracedKernel, PartlyUsedVectorReadsTheComponentsUsed) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void xyz(__global const float4* p, __global float* o) {
    int i = get_global_id(0);
    float4 v = p[i];
    o[i] = v.x + v.y + v.z;
  })CL";
  const std::vector<float> in = {1, 2, 3, 100, 4, 5, 6, 200};
  cl_mem A = env.buffer(in), B = env.buffer(std::vector<float>(2, 0.0f));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "xyz", {}));
  const NDRange r = NDRange::fromSizes({2}, {2});
  std::string path = tempPath("xyz");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(B)}, r, path);
  EXPECT_EQ(env.read<float>(B, 2), (std::vector<float>{6, 15}));
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 2u);
  const uint64_t bBase = 256;  // p (32 bytes) at 0, o at 256
  for (uint64_t w = 0; w < 2; ++w)
    expectRecords(t.workItems[w],
                  {{AccessKind::Load, 0, 16 * w, 8, 0},
                   {AccessKind::Load, 1, 16 * w + 8, 4, 0},
                   {AccessKind::Store, 2, bBase + 4 * w, 4, 0}},
                  "work-item " + std::to_string(w));
  std::filesystem::remove(path);
}

// A value read before a branch and used only on one way is read on that way, by the work-items
// that take it (as NVPTX sinks the load); one read on both ways is read once, before the branch.
TEST(TracedKernel, LoadsFollowTheirUsesAcrossBranches) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void br(__global const float* a, __global const int* f, __global float* o) {
    int i = get_global_id(0);
    float v = a[i];
    if (f[i]) o[i] = v * 2.0f;
    float x;
    if (f[i]) x = a[i + 4] + 1.0f; else x = a[i + 4] * 3.0f;
    o[i + 4] = x;
  })CL";
  cl_mem A = env.buffer(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  cl_mem F = env.buffer(std::vector<int32_t>{1, 0, 0, 1});
  cl_mem O = env.buffer(std::vector<float>(8, 0.0f));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "br", {}));
  const NDRange r = NDRange::fromSizes({4}, {4});
  std::string path = tempPath("br");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(F), wrapper::ArgBinding::ofBuffer(O)},
           r, path);
  EXPECT_EQ(env.read<float>(O, 8), (std::vector<float>{2, 0, 0, 8, 6, 18, 21, 9}));
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 4u);
  const uint64_t fBase = 256, oBase = 512;  // a (32 bytes) at 0, f at 256, o at 512
  for (uint64_t w = 0; w < 4; ++w) {
    const bool set = w == 0 || w == 3;
    // f[i], then a[i] and o[i] where f[i] is set; a[i + 4] once, o[i + 4] (f[i] is not read
    // again: the float store between cannot change an int).
    std::vector<Want> want = {{AccessKind::Load, 0, fBase + 4 * w, 4, 0}};
    if (set) {
      want.push_back({AccessKind::Load, 1, 4 * w, 4, 0});
      want.push_back({AccessKind::Store, 2, oBase + 4 * w, 4, 0});
    }
    want.push_back({AccessKind::Load, 3, 16 + 4 * w, 4, 0});
    want.push_back({AccessKind::Store, 4, oBase + 16 + 4 * w, 4, 0});
    expectRecords(t.workItems[w], want, "work-item " + std::to_string(w));
  }
  std::filesystem::remove(path);
}

// Two ways loading through different addresses, one load where they meet (as NVPTX reads
// through a selected address): every work-item's read is the same instruction, at a[i] or b[i].
TEST(TracedKernel, WaysEndingAlikeAreOneAccess) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void sel(__global const float* a, __global const float* b, __global const int* f, __global float* o) {
    int i = get_global_id(0);
    float v;
    if (f[i]) v = a[i]; else v = b[i];
    o[i] = v;
  })CL";
  cl_mem A = env.buffer(std::vector<float>{1, 2, 3, 4});
  cl_mem B = env.buffer(std::vector<float>{5, 6, 7, 8});
  cl_mem F = env.buffer(std::vector<int32_t>{1, 0, 0, 1});
  cl_mem O = env.buffer(std::vector<float>(4, 0.0f));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "sel", {}));
  const NDRange r = NDRange::fromSizes({4}, {4});
  std::string path = tempPath("sel");
  k.launch(env.queue,
           {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(B), wrapper::ArgBinding::ofBuffer(F),
            wrapper::ArgBinding::ofBuffer(O)},
           r, path);
  EXPECT_EQ(env.read<float>(O, 4), (std::vector<float>{1, 6, 7, 4}));
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 4u);
  const uint64_t bBase = 256, fBase = 512, oBase = 768;  // a (16 bytes) at 0, then b, f, o
  for (uint64_t w = 0; w < 4; ++w) {
    const bool set = w == 0 || w == 3;
    expectRecords(t.workItems[w],
                  {{AccessKind::Load, 0, fBase + 4 * w, 4, 0},
                   {AccessKind::Load, 1, (set ? 0 : bBase) + 4 * w, 4, 0},
                   {AccessKind::Store, 2, oBase + 4 * w, 4, 0}},
                  "work-item " + std::to_string(w));
  }
  std::filesystem::remove(path);
}

// A value read before a loop and used only in its iterations is read by the work-items whose
// loop runs an iteration, before it (as NVPTX reads it below the rotated loop's first test).
TEST(TracedKernel, LoadsForALoopAreMadeWhenItRuns) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void zt(__global const float* a, __global const int* n, __global float* o) {
    int i = get_global_id(0);
    float v = a[i];
    float s = 0.0f;
    int m = n[i];
    for (int j = 0; j < m; ++j) s += v * (float)(j + 1);
    o[i] = s;
  })CL";
  cl_mem A = env.buffer(std::vector<float>{1, 2, 3, 4});
  cl_mem N = env.buffer(std::vector<int32_t>{0, 2, 0, 1});
  cl_mem O = env.buffer(std::vector<float>(4, -1.0f));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "zt", {}));
  const NDRange r = NDRange::fromSizes({4}, {4});
  std::string path = tempPath("zt");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(N), wrapper::ArgBinding::ofBuffer(O)},
           r, path);
  EXPECT_EQ(env.read<float>(O, 4), (std::vector<float>{0, 6, 0, 4}));  // 2 * (1 + 2), 4 * 1
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 4u);
  const uint64_t nBase = 256, oBase = 512;  // a (16 bytes) at 0, n at 256, o at 512
  for (uint64_t w = 0; w < 4; ++w) {
    // n[i]; a[i] where n[i] > 0 (work-items 1 and 3); o[i].
    std::vector<Want> want = {{AccessKind::Load, 0, nBase + 4 * w, 4, 0}};
    if (w % 2 == 1) want.push_back({AccessKind::Load, 1, 4 * w, 4, 0});
    want.push_back({AccessKind::Store, 2, oBase + 4 * w, 4, 0});
    expectRecords(t.workItems[w], want, "work-item " + std::to_string(w));
  }
  std::filesystem::remove(path);
}

// The half-precision builtins read and write halves at p + offset * N (4 for aligned 3-vectors).
TEST(TracedKernel, HalfPrecisionBuiltinsAreRecorded) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void hf(__global const half* a, __global half* b) {
    int i = get_global_id(0);
    float f = vload_half(i, a);
    vstore_half_rte(f * 2.0f, i, b);
    float4 g = vload_half4(1, a);
    vstorea_half3(g.xyz, 1, b);
    vstore_half8((float8)(f), 1, b);
  })CL";
  // Halves 1.0, 2.0, 3.0, ... (0x3c00, 0x4000, 0x4200, ...).
  const std::vector<uint16_t> halves = {0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800};
  cl_mem A = env.buffer(halves), B = env.buffer(std::vector<uint16_t>(16, 0));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "hf", {}));
  const NDRange r = NDRange::fromSizes({2}, {2});
  std::string path = tempPath("hf");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(B)}, r, path);
  std::vector<uint16_t> b = env.read<uint16_t>(B, 16);
  EXPECT_EQ(b[0], 0x4000);  // 2 * 1.0
  EXPECT_EQ(b[1], 0x4400);  // 2 * 2.0
  EXPECT_EQ(b[4], 0x4500);  // vstorea_half3 at 4: a[4..6] = 5, 6, 7
  EXPECT_EQ(b[6], 0x4700);
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 2u);
  const uint64_t bBase = 256;
  // vload_half4 and vstore_half8 (halves only 2-byte aligned) are a load or store per half, and
  // of the vload_half4 only the halves used (.xyz); vstorea_half3 (aligned) is one store.
  for (uint64_t w = 0; w < 2; ++w) {
    std::vector<Want> want = {{AccessKind::Load, 0, 2 * w, 2, 0},
                              {AccessKind::Store, 1, bBase + 2 * w, 2, 0},
                              {AccessKind::Load, 2, 8, 2, 0},
                              {AccessKind::Load, 3, 10, 2, 0},
                              {AccessKind::Load, 4, 12, 2, 0},
                              {AccessKind::Store, 5, bBase + 8, 6, 0}};
    for (uint32_t h = 0; h < 8; ++h) want.push_back({AccessKind::Store, 6 + h, bBase + 16 + 2 * h, 2, 0});
    expectRecords(t.workItems[w], want, "work-item " + std::to_string(w));
  }
  std::filesystem::remove(path);
}

// A half read is turned into a float in the kernel's own code (prepareModule): every kind of
// half keeps its exact value, and a store keeps the builtin's rounding mode. Halves read once
// per address (vload_half(i) twice is one load).
TEST(TracedKernel, HalfBuiltinsKeepValuesAndRoundingModes) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void hv(__global const half* a, __global uint* bits, __global half* b, float x) {
    int i = get_global_id(0);
    bits[i] = as_uint(vload_half(i, a)) ^ (as_uint(vload_half(i, a)) & 0);
    if (i == 0) {
      float2 y = vload_half2(6, a);  // halves 12 and 13
      bits[16] = as_uint(y.y);
      vstore_half_rte(x, 0, b);
      vstore_half_rtz(x, 1, b);
      vstore_half_rtp(x, 2, b);
      vstore_half_rtn(x, 3, b);
      vstore_half2_rtn((float2)(-x, -x), 2, b);
      vstore_half4_rtp((float4)(-x, -x, x, 65520.0f), 2, b);
    }
  })CL";
  // 0, -0, the least and the greatest subnormal, the least normal, 1, the greatest half, +inf,
  // -inf, a quiet NaN, -2, 0x3555, a signalling NaN (read quiet) and 1.5 (read by the vload_half2).
  const std::vector<uint16_t> halves = {0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x7bff, 0x7c00,
                                        0xfc00, 0x7e00, 0xc000, 0x3555, 0x7c01, 0x3e00, 0, 0};
  cl_mem A = env.buffer(halves), Bits = env.buffer(std::vector<uint32_t>(17, 0)),
         B = env.buffer(std::vector<uint16_t>(12, 0));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "hv", {}));
  const NDRange r = NDRange::fromSizes({13}, {13});
  std::string path = tempPath("hv");
  // x = 1 + 3 * 2^-12: three quarters of the way from 1 to the next half, 1 + 2^-10.
  const float x = 1.0f + 3.0f / 4096.0f;
  k.launch(env.queue,
           {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(Bits), wrapper::ArgBinding::ofBuffer(B),
            wrapper::ArgBinding::ofScalar(&x, sizeof x)},
           r, path);
  EXPECT_EQ(env.read<uint32_t>(Bits, 17),
            (std::vector<uint32_t>{0x00000000, 0x80000000, 0x33800000, 0x387fc000, 0x38800000, 0x3f800000, 0x477fe000,
                                   0x7f800000, 0xff800000, 0x7fc00000, 0xc0000000, 0x3eaaa000, 0x7fc02000, 0, 0, 0,
                                   0x3fc00000}));
  // rte 1 + 2^-10, rtz 1, rtp 1 + 2^-10, rtn 1; then -x down (rtn) and up (rtp), x up, and
  // 65520 up to infinity (rtp; it is beyond the greatest half).
  EXPECT_EQ(env.read<uint16_t>(B, 12),
            (std::vector<uint16_t>{0x3c01, 0x3c00, 0x3c01, 0x3c00, 0xbc01, 0xbc01, 0, 0, 0xbc00, 0xbc00, 0x3c01, 0x7c00}));
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 13u);
  expectRecords(t.workItems[3], {{AccessKind::Load, 0, 6, 2, 0}, {AccessKind::Store, 1, 256 + 12, 4, 0}}, "work-item 3");
  std::filesystem::remove(path);
}

// vloadN/vstoreN through element pointers: a load or store per element (the elements whose
// values are used, for loads), at p + offset * N + element, each checked on its own.
TEST(TracedKernel, VectorBuiltinsThroughElementPointersArePerElement) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void ve(__global const float* a, __global float* b) {
    int i = get_global_id(0);
    float4 v = vload4(i, a);
    float3 t = vload3(i, a);
    vstore2((float2)(v.y + t.z, v.w), i, b);
  })CL";
  std::vector<float> a(16);
  for (int i = 0; i < 16; ++i) a[i] = float(i);
  cl_mem A = env.buffer(a), B = env.buffer(std::vector<float>(8, 0));
  passes::InstrumentedKernel ik = passes::instrumentSource(src, "ve", {});
  ASSERT_EQ(ik.report.accesses.size(), 5u);
  EXPECT_NE(ik.report.accesses[0].text.find("line 4:16: %"), std::string::npos) << ik.report.accesses[0].text;
  EXPECT_NE(ik.report.accesses[0].text.find(" = load float, float addrspace(1)* "), std::string::npos);
  EXPECT_NE(ik.report.accesses[4].text.find("store float "), std::string::npos);
  wrapper::TracedKernel k(env.context, env.device, ik);
  NDRange r = NDRange::fromSizes({4}, {4});
  std::string path = tempPath("ve");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(B)}, r, path);
  // b[2i] = a[4i + 1] + a[3i + 2], b[2i + 1] = a[4i + 3].
  EXPECT_EQ(env.read<float>(B, 8), (std::vector<float>{3, 3, 10, 7, 17, 11, 24, 15}));
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 4u);
  for (uint64_t i = 0; i < 4; ++i)
    expectRecords(t.workItems[i],
                  {{AccessKind::Load, 0, 16 * i + 4, 4, 0},   // v.y
                   {AccessKind::Load, 1, 16 * i + 12, 4, 0},  // v.w
                   {AccessKind::Load, 2, 12 * i + 8, 4, 0},   // t.z (t is a float3 variable)
                   {AccessKind::Store, 3, 256 + 8 * i, 4, 0},
                   {AccessKind::Store, 4, 256 + 8 * i + 4, 4, 0}},
                  "work-item " + std::to_string(i));
  std::filesystem::remove(path);

  // Work-item 4's vload4 reads a[17] (.y), past the 16 floats: the count run's check of that
  // element's load finds it; the trace run never starts.
  r = NDRange::fromSizes({5}, {5});
  cl_mem C = env.buffer(std::vector<float>(10, 0));
  try {
    k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(C)}, r, path);
    FAIL() << "expected a TraceError";
  } catch (const wrapper::TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("1 work-item accesses memory outside their buffers; the first, work-item 4 "
                                         "(linear global id), at instruction 0 ("),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

// Every atomic builtin becomes an LLVM atomic instruction, so the 64-bit atom_* forms PoCL's
// library lacks run too.
TEST(TracedKernel, SixtyFourBitAtomicsRun) {
  OpenCLEnv env;
  const char* src = R"CL(
  #pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
  #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
  __kernel void k(__global long* l, __global ulong* u) {
    long id = get_global_id(0);
    atom_inc(&l[0]);
    atom_cmpxchg(&l[1], 0L, 7L);
    atom_max(&l[2], id - 2);
    atom_min(&u[0], (ulong)(id + 5));
    atom_sub(&l[3], id);
  })CL";
  cl_mem L = env.buffer(std::vector<int64_t>{0, 0, -9, 100}), U = env.buffer(std::vector<uint64_t>{1000});
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "k", {}));
  const NDRange r = NDRange::fromSizes({4}, {4});
  std::string path = tempPath("atom64");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(L), wrapper::ArgBinding::ofBuffer(U)}, r, path);
  // 4 increments; one exchange of 0 for 7; max(-9, -2..1) = 1; min(1000, 5..8) = 5; 100 - 6.
  EXPECT_EQ(env.read<int64_t>(L, 4), (std::vector<int64_t>{4, 7, 1, 94}));
  EXPECT_EQ(env.read<uint64_t>(U, 1), (std::vector<uint64_t>{5}));
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 4u);
  expectRecords(t.workItems[3],
                {{AccessKind::Atomic, 0, 0, 8, 0},
                 {AccessKind::Atomic, 1, 8, 8, 0},
                 {AccessKind::Atomic, 2, 16, 8, 0},
                 {AccessKind::Atomic, 3, 256, 8, 0},
                 {AccessKind::Atomic, 4, 24, 8, 0}},
                "work-item 3");
  std::filesystem::remove(path);
}

TEST(TracedKernel, PipeAndReadWriteImageArgumentsAreRefused) {
  auto refused = [](const char* src, const char* kernel, const std::vector<std::string>& options,
                    const std::string& words) {
    try {
      passes::instrumentSource(src, kernel, options);
      ADD_FAILURE() << kernel << ": no error";
    } catch (const passes::InstrumentError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused(R"CL(__kernel void p(__read_only pipe int in, __global int* o) { read_pipe(in, o); })CL", "p",
          {"-cl-std=CL2.0"}, "argument 0 (int in) of kernel 'p' is a pipe: cltrace traces buffer accesses");
  refused(R"CL(__kernel void rw(__read_write image2d_t im) {
    write_imagef(im, (int2)(0, 0), read_imagef(im, (int2)(0, 0)) + 1.0f); })CL",
          "rw", {"-cl-std=CL2.0"},
          "argument 0 (image2d_t im) of kernel 'rw' is a read_write image: cltrace runs a launch twice");
  refused(R"CL(__kernel void d(__global double* a) { vstore16(sin(vload16(0, a)), 0, a); })CL", "d", {},
          "kernel 'd' calls sin with a double16 argument or result, which PoCL's SPIR path");
}

// Images and samplers are handles passed as they are: their reads and writes (the OpenCL
// library's, a GPU's texture path) are not traced, the buffers' accesses are, at the addresses
// the image's pixels pick.
TEST(TracedKernel, ImageAndSamplerArgumentsArePassedAndNotTraced) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void pick(__read_only image2d_t im, sampler_t s, __global const int* table, __global int* o,
                     __write_only image2d_t doubled) {
    int x = get_global_id(0);
    int p = read_imagei(im, s, (int2)(x, 0)).x;  // the sampler clamps x = 4 to the edge
    o[x] = table[p];
    write_imagei(doubled, (int2)(x, 0), (int4)(2 * p, 0, 0, 0));
  })CL";
  passes::InstrumentedKernel ik = passes::instrumentSource(src, "pick", {});
  ASSERT_EQ(ik.args.size(), 5u);
  EXPECT_EQ(ik.args[0].handle, passes::KernelArg::Handle::Image);
  EXPECT_FALSE(ik.args[0].isPointer);
  EXPECT_EQ(ik.args[1].handle, passes::KernelArg::Handle::Sampler);
  EXPECT_EQ(ik.args[2].handle, passes::KernelArg::Handle::None);
  EXPECT_TRUE(ik.args[2].isPointer);
  EXPECT_EQ(ik.args[4].handle, passes::KernelArg::Handle::Image);
  EXPECT_EQ(ik.report.warnings,
            (std::vector<std::string>{
                "kernel 'pick' reads images (1 read_image call): image reads go through a GPU's texture cache, not "
                "its L1, and are not traced; the L1 prediction leaves them out",
                "kernel 'pick' writes images (1 write_image call): image writes are not traced"}));

  const cl_image_format format{CL_R, CL_SIGNED_INT32};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 4;
  desc.image_height = 1;
  std::vector<int32_t> pixels{3, 0, 2, 1};
  cl_int err = CL_SUCCESS;
  cl_mem im = clCreateImage(env.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &format, &desc, pixels.data(), &err);
  wrapper::check(err, "clCreateImage");
  env.buffers.push_back(im);
  desc.image_width = 5;
  cl_mem doubled = clCreateImage(env.context, CL_MEM_WRITE_ONLY, &format, &desc, nullptr, &err);
  wrapper::check(err, "clCreateImage");
  env.buffers.push_back(doubled);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  cl_sampler sampler = clCreateSampler(env.context, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &err);
#pragma GCC diagnostic pop
  wrapper::check(err, "clCreateSampler");
  cl_mem table = env.buffer(std::vector<int32_t>{10, 11, 12, 13}), out = env.buffer(std::vector<int32_t>(5, 0));

  wrapper::TracedKernel k(env.context, env.device, ik);
  const NDRange r = NDRange::fromSizes({5}, {5});
  const std::string path = tempPath("images");
  using wrapper::ArgBinding;
  k.launch(env.queue,
           {ArgBinding::ofImage(im), ArgBinding::ofSampler(sampler), ArgBinding::ofBuffer(table),
            ArgBinding::ofBuffer(out), ArgBinding::ofImage(doubled)},
           r, path);
  // x = 4 reads pixel 3 (clamped): 1.
  EXPECT_EQ(env.read<int32_t>(out, 5), (std::vector<int32_t>{13, 10, 12, 11, 11}));
  std::vector<int32_t> written(5);
  const size_t origin[3] = {0, 0, 0}, region[3] = {5, 1, 1};
  wrapper::check(clEnqueueReadImage(env.queue, doubled, CL_TRUE, origin, region, 0, 0, written.data(), 0, nullptr,
                                    nullptr),
                 "clEnqueueReadImage");
  EXPECT_EQ(written, (std::vector<int32_t>{6, 0, 4, 2, 2}));
  WholeTrace t = readWholeTrace(path);
  // The buffers alone, in argument order: table at 0, o at 256.
  ASSERT_EQ(t.header.buffers.size(), 2u);
  EXPECT_EQ(t.header.buffers[0].argIndex, 2u);
  EXPECT_EQ(t.header.buffers[1].argIndex, 3u);
  EXPECT_EQ(t.header.buffers[1].virtualBase, 256u);
  ASSERT_EQ(t.workItems.size(), 5u);
  const uint64_t picked[5] = {3, 0, 2, 1, 1};
  for (uint64_t x = 0; x < 5; ++x)
    expectRecords(t.workItems[x],
                  {{AccessKind::Load, 0, 4 * picked[x], 4, 0}, {AccessKind::Store, 1, 256 + 4 * x, 4, 0}},
                  "work-item " + std::to_string(x));
  std::filesystem::remove(path);

  // What each handle must be bound to.
  auto refusal = [&](std::vector<ArgBinding> args) {
    try {
      k.launch(env.queue, args, r, path);
      return std::string("no error");
    } catch (const wrapper::TraceError& e) {
      return std::string(e.what());
    }
  };
  const ArgBinding s = ArgBinding::ofSampler(sampler), tb = ArgBinding::ofBuffer(table), o = ArgBinding::ofBuffer(out),
                   d = ArgBinding::ofImage(doubled);
  EXPECT_EQ(refusal({ArgBinding::ofBuffer(im), s, tb, o, d}), "argument 0 (image2d_t im) needs an image");
  EXPECT_EQ(refusal({ArgBinding::ofImage(table), s, tb, o, d}), "argument 0 (image2d_t im) is set to a buffer, not an image");
  EXPECT_EQ(refusal({ArgBinding::ofImage(nullptr), s, tb, o, d}), "argument 0 (image2d_t im) is a NULL image");
  EXPECT_EQ(refusal({ArgBinding::ofImage(im), ArgBinding::ofSampler(nullptr), tb, o, d}),
            "argument 1 (sampler_t s) is a NULL sampler");
  EXPECT_EQ(refusal({ArgBinding::ofImage(im), ArgBinding::ofScalar("12345678", 8), tb, o, d}),
            "argument 1 (sampler_t s) needs a sampler");
  // One image read and written by the launch is put back between the runs, through the host.
  desc.image_width = 5;
  cl_mem hidden = clCreateImage(env.context, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, &format, &desc, nullptr, &err);
  wrapper::check(err, "clCreateImage");
  env.buffers.push_back(hidden);
  EXPECT_EQ(refusal({ArgBinding::ofImage(hidden), s, tb, o, ArgBinding::ofImage(hidden)}),
            "arguments 0 (im) and 4 (doubled) are one image, read and written by the launch, which the host may "
            "not read and write back (CL_MEM_HOST_*): cltrace cannot put it back between its count and trace runs");
  EXPECT_FALSE(std::filesystem::exists(path));
  clReleaseSampler(sampler);
}

// Asynchronous copies run as loops in which each work-item copies the elements its local id
// selects; wait_group_events is a barrier.
TEST(TracedKernel, AsyncWorkGroupCopiesAreLoopsOfRecordedAccesses) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void rev(__global const float* a, __global float* b, __local float* t) {
    size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
    event_t e = async_work_group_copy(t, a + g * n, n, 0);
    wait_group_events(1, &e);
    t[l] = t[l] * 10.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_strided_copy(b + g, t, n / 2, 2, 0);  // every other element of t
    wait_group_events(1, &e);
  })CL";
  cl_mem A = env.buffer(iota(8, 1)), B = env.buffer(std::vector<float>(8, 0));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "rev", {}));
  const NDRange r = NDRange::fromSizes({8}, {4});
  std::string path = tempPath("rev");
  const size_t localBytes = 16;
  k.launch(env.queue,
           {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(B), wrapper::ArgBinding::ofLocal(localBytes)},
           r, path);
  // Group g writes t[0..1] * 10 (elements 4g and 4g+1 of a) to b[g] and b[g + 2].
  EXPECT_EQ(env.read<float>(B, 8), (std::vector<float>{10, 50, 20, 60, 0, 0, 0, 0}));
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 8u);
  const uint64_t b = 256;
  const uint8_t all = kFenceLocal | kFenceGlobal;
  for (uint64_t w = 0; w < 8; ++w) {
    const uint64_t g = w / 4, l = w % 4;
    std::vector<Want> want = {{AccessKind::Load, 0, 4 * w, 4, 0},
                              {AccessKind::Barrier, 1, 0, 0, all},
                              {AccessKind::Barrier, 2, 0, 0, kFenceLocal}};
    if (l < 2) want.push_back({AccessKind::Store, 3, b + 4 * (g + 2 * l), 4, 0});  // n / 2 = 2 elements
    want.push_back({AccessKind::Barrier, 4, 0, 0, all});
    expectRecords(t.workItems[w], want, "work-item " + std::to_string(w));
  }
  std::filesystem::remove(path);
}

TEST(SliceLayers, GroupsLayersUpToTheBudget) {
  // Three layers of two work-items; count slots are (units, diagnostics) per work-item.
  const std::vector<uint64_t> slots{1, 0, 2, 0, 5, 0, 0, 0, 1, 0, 1, 0};
  using S = wrapper::TraceSlice;
  EXPECT_EQ(wrapper::sliceLayers(slots.data(), 3, 2, 10), (std::vector<S>{{0, 3, 10}}));
  EXPECT_EQ(wrapper::sliceLayers(slots.data(), 3, 2, 8), (std::vector<S>{{0, 2, 8}, {2, 1, 2}}));
  // A layer over the budget (5 units against 3) is a slice of its own.
  EXPECT_EQ(wrapper::sliceLayers(slots.data(), 3, 2, 3), (std::vector<S>{{0, 1, 3}, {1, 1, 5}, {2, 1, 2}}));
}

// A launch traced in slices (one work-group layer each) gives the same trace file, byte for
// byte, as in one piece, and the same outputs: the kernel's questions about the launch's
// geometry (group ids, group counts, global size and offset) get the whole launch's answers,
// in 1, 2 and 3 dimensions with global offsets.
TEST(TracedKernel, SlicedTraceRunEqualsOneRun) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void geo(__global uint* out, __global const uint* in) {
    size_t group = (get_group_id(2) * get_num_groups(1) + get_group_id(1)) * get_num_groups(0) + get_group_id(0);
    size_t lid = (get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + get_local_id(0);
    size_t i = group * get_local_size(0) * get_local_size(1) * get_local_size(2) + lid;
    size_t n = get_global_size(0) * get_global_size(1) * get_global_size(2);
    uint v = 0;
    for (size_t k = 0; k <= get_group_id(get_work_dim() - 1); ++k) v += in[(i + k) % n];
    out[i] = v + (uint)(get_global_offset(0) + 10 * get_global_offset(1) + 100 * get_global_offset(2));
  })CL";
  struct Case {
    std::array<uint64_t, 3> global, local, offset;
    uint32_t dims;
  };
  for (const Case& c : {Case{{12, 1, 1}, {4, 1, 1}, {5, 0, 0}, 1}, Case{{8, 6, 1}, {4, 2, 1}, {1, 2, 0}, 2},
                        Case{{4, 4, 6}, {2, 2, 2}, {1, 2, 3}, 3}}) {
    SCOPED_TRACE("dimensions " + std::to_string(c.dims));
    NDRange r;
    r.dims = c.dims;
    r.global = c.global;
    r.local = c.local;
    r.offset = c.offset;
    const uint64_t n = r.workItems();
    std::vector<uint32_t> in(n);
    for (uint64_t i = 0; i < n; ++i) in[i] = static_cast<uint32_t>(i * 7 + 1);
    // By hand: the work-item at group-major position i sums in[i .. i + g] (mod n), g its
    // group id in the slowest dimension, and adds the offset term.
    const uint64_t perGroup = c.local[0] * c.local[1] * c.local[2];
    const uint64_t groupsX = c.global[0] / c.local[0], groupsY = c.global[1] / c.local[1];
    const uint64_t groupsPerLayer = c.dims == 1 ? 1 : c.dims == 2 ? groupsX : groupsX * groupsY;
    std::vector<uint32_t> expected(n);
    std::vector<uint64_t> slowestGroup(n);
    for (uint64_t i = 0; i < n; ++i) {
      slowestGroup[i] = i / perGroup / groupsPerLayer;
      uint32_t v = 0;
      for (uint64_t k = 0; k <= slowestGroup[i]; ++k) v += in[(i + k) % n];
      expected[i] = v + static_cast<uint32_t>(c.offset[0] + 10 * c.offset[1] + 100 * c.offset[2]);
    }
    std::string paths[2];
    for (int sliced = 0; sliced < 2; ++sliced) {
      cl_mem out = env.buffer(std::vector<uint32_t>(n, 0)), inBuf = env.buffer(in);
      wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "geo", {}));
      wrapper::LaunchOptions options;
      if (sliced) options.traceBufferBytes = 1;  // one layer per slice
      paths[sliced] = tempPath("geo-" + std::to_string(c.dims) + "-" + std::to_string(sliced));
      k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(out), wrapper::ArgBinding::ofBuffer(inBuf)}, r,
               paths[sliced], options);
      EXPECT_EQ(env.read<uint32_t>(out, n), expected);
    }
    std::ifstream a(paths[0], std::ios::binary), b(paths[1], std::ios::binary);
    std::string whole((std::istreambuf_iterator<char>(a)), {}), sliced((std::istreambuf_iterator<char>(b)), {});
    EXPECT_FALSE(whole.empty());
    EXPECT_TRUE(whole == sliced) << "the sliced trace differs";
    WholeTrace t = readWholeTrace(paths[1]);
    ASSERT_EQ(t.workItems.size(), n);
    // File order is group-major, as `expected`: work-item i makes g + 1 loads and a store.
    for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(t.workItems[i].size(), slowestGroup[i] + 2) << "work-item " << i;
    for (const auto& p : paths) std::filesystem::remove(p);
  }
}

// The kernel itself, built from source and run once on `env`'s device.
static void runPlain(OpenCLEnv& env, const char* src, const char* name, const char* options,
                     const std::vector<cl_mem>& buffers, const NDRange& r) {
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(env.context, 1, &src, nullptr, &err);
  wrapper::check(err, "clCreateProgramWithSource");
  wrapper::check(clBuildProgram(p, 1, &env.device, options, nullptr, nullptr), "clBuildProgram");
  cl_kernel k = clCreateKernel(p, name, &err);
  wrapper::check(err, "clCreateKernel");
  for (cl_uint i = 0; i < buffers.size(); ++i) wrapper::check(clSetKernelArg(k, i, sizeof(cl_mem), &buffers[i]), "arg");
  std::array<size_t, 3> g{r.global[0], r.global[1], r.global[2]}, l{r.local[0], r.local[1], r.local[2]},
      o{r.offset[0], r.offset[1], r.offset[2]};
  wrapper::check(clEnqueueNDRangeKernel(env.queue, k, r.dims, o.data(), g.data(), l.data(), 0, nullptr, nullptr),
                 "clEnqueueNDRangeKernel");
  wrapper::check(clFinish(env.queue), "clFinish");
  clReleaseKernel(k);
  clReleaseProgram(p);
}

// In sliced trace runs the device's own answers stay where there is no launch geometry to
// emulate (dimensions past 2, where PoCL says 0 and OpenCL 1), and OpenCL C 2.0's
// get_global_linear_id counts over the whole launch: the outputs equal the plain kernel's and
// the sliced trace the unsliced one.
TEST(TracedKernel, SlicedRunsKeepDimensionsPastTwoAndTheGlobalLinearId) {
  OpenCLEnv env;
  const char* src = R"CL(
  __kernel void k(__global ulong* o, __global const uint* dims) {
    size_t l = get_global_linear_id();
    uint d = dims[0];  // 3, not known when compiling
    o[2 * l] = get_num_groups(3) + 10 * get_group_id(3) + 100 * get_global_size(d) + 1000 * get_num_groups(d) +
               10000 * get_group_id(d) + 100000 * get_global_offset(d) + 1000000 * get_group_id(dims[1]);
    o[2 * l + 1] = l;
  })CL";
  NDRange r = NDRange::fromSizes({8, 12}, {4, 4}, {1, 2});
  const uint64_t n = r.workItems();
  cl_mem plainOut = env.buffer(std::vector<uint64_t>(2 * n, 7)), dims = env.buffer(std::vector<uint32_t>{3, 1});
  runPlain(env, src, "k", "-cl-std=CL2.0", {plainOut, dims}, r);
  const std::vector<uint64_t> plain = env.read<uint64_t>(plainOut, 2 * n);
  // By hand: l counts the launch's work-items, x fastest; group ids in dimension 1 are 0..2.
  for (uint64_t y = 0; y < 12; ++y)
    for (uint64_t x = 0; x < 8; ++x) {
      EXPECT_EQ(plain[2 * (y * 8 + x) + 1], y * 8 + x);
      EXPECT_EQ(plain[2 * (y * 8 + x)] % 1000000 == 0 ? plain[2 * (y * 8 + x)] / 1000000 : ~0ull, y / 4);
    }
  std::string paths[2];
  for (int sliced = 0; sliced < 2; ++sliced) {
    cl_mem out = env.buffer(std::vector<uint64_t>(2 * n, 7));
    wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "k", {"-cl-std=CL2.0"}));
    wrapper::LaunchOptions options;
    if (sliced) options.traceBufferBytes = 1;
    paths[sliced] = tempPath("past-two-" + std::to_string(sliced));
    wrapper::LaunchResult result =
        k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(out), wrapper::ArgBinding::ofBuffer(dims)}, r,
                 paths[sliced], options);
    EXPECT_EQ(result.traceSlices, sliced ? 3u : 1u);
    // On a SPIR-V device constant dimensions past 2 get OpenCL's answers (passes::spirvReady),
    // and the buffers are the program's kernel's to write (TracedKernel::writesExactly).
    if (k.writesExactly()) {
      EXPECT_EQ(env.read<uint64_t>(out, 2 * n), plain);
    }
  }
  std::ifstream a(paths[0], std::ios::binary), b(paths[1], std::ios::binary);
  std::string whole((std::istreambuf_iterator<char>(a)), {}), sliced((std::istreambuf_iterator<char>(b)), {});
  EXPECT_TRUE(!whole.empty() && whole == sliced) << "the sliced trace differs";
  for (const auto& p : paths) std::filesystem::remove(p);
}

namespace {

TEST(PoclReady, RenamesTheHalfMathBuiltinsPoclKeepsUnderItsOwnNames) {
  const std::string source = R"CL(
__kernel void k(__global float* a) {
  float4 v = vload4(0, a);
  a[0] = half_sqrt(a[0]) + half_divide(a[1], a[2]) + sqrt(a[3]) + native_sqrt(a[4]);
  vstore4(half_exp10(v) + half_powr(v, v), 1, a);
}
)CL";
  const std::string before = passes::bitcodeToText(passes::compileOpenCL(source, {}));
  const std::string after = passes::bitcodeToText(passes::poclReady(passes::compileOpenCL(source, {})));
  for (const char* renamed : {"_Z9half_sqrtf", "_Z11half_divideff", "_Z10half_exp10Dv4_f", "_Z9half_powrDv4_fS_"}) {
    EXPECT_NE(before.find(renamed), std::string::npos) << renamed;
    EXPECT_EQ(after.find(renamed), std::string::npos) << renamed;
  }
  for (const char* name : {"_Z13_cl_half_sqrtf", "_Z15_cl_half_divideff", "_Z14_cl_half_exp10Dv4_f",
                           "_Z13_cl_half_powrDv4_fS_", "_Z4sqrtf", "_Z11native_sqrtf"})
    EXPECT_NE(after.find(std::string("@") + name + "("), std::string::npos) << name;
  // A module without them comes back unchanged.
  const std::string plain = passes::compileOpenCL("__kernel void k(__global float* a) { a[0] = sqrt(a[1]); }", {});
  EXPECT_EQ(passes::poclReady(plain), plain);
}

}  // namespace

namespace {

TEST(EmbeddedHeaders, AreIncludedByTheirNamesAndBadNamesAreRefused) {
  const std::string source = "#include \"ops/shift.h\"\n__kernel void k(__global float* x) { x[0] = shifted(x[1]); }\n";
  const std::vector<passes::EmbeddedHeader> headers = {
      {"ops/shift.h", "#include \"common.h\"\nfloat shifted(float v) { return v + OFFSET; }\n"},
      {"common.h", "#define OFFSET 7.0f\n"}};
  passes::InstrumentedKernel k = passes::instrumentSource(source, "k", {}, headers);
  EXPECT_EQ(k.kernel, "k");
  EXPECT_NE(passes::bitcodeToText(k.traceBitcode).find("7.0"), std::string::npos);
  // The hash covers the headers: another header text gives another hash.
  std::vector<passes::EmbeddedHeader> other = headers;
  other[1].text = "#define OFFSET 8.0f\n";
  EXPECT_NE(passes::instrumentSource(source, "k", {}, other).sourceHash, k.sourceHash);
  // Without its headers the source does not compile.
  EXPECT_THROW(passes::instrumentSource(source, "k", {}), passes::InstrumentError);
  for (const char* bad : {"../common.h", "/tmp/common.h", "ops/../../common.h", ""}) {
    std::vector<passes::EmbeddedHeader> h = headers;
    h[1].name = bad;
    try {
      passes::compileOpenCL(source, {}, h);
      ADD_FAILURE() << "accepted header name '" << bad << "'";
    } catch (const passes::InstrumentError& e) {
      EXPECT_NE(std::string(e.what()).find("embedded header name '" + std::string(bad) + "' is not a relative path"),
                std::string::npos)
          << e.what();
    }
  }
}

// Clang's diagnostics name the user's source, not the temporary copy cltrace compiled (gone
// once it exits), with and without the prelude that a source using async copies gets.
TEST(CompileErrors, NameTheUsersSource) {
  auto diagnostics = [](const std::string& source, const std::string& name) -> std::string {
    try {
      passes::instrumentSource(source, "k", {}, {{"h.h", "int bad(void) { return undefined_thing; }\n"}}, name);
    } catch (const passes::InstrumentError& e) {
      return e.what();
    }
    return "compiled";
  };
  const std::string plain = "#include \"h.h\"\n__kernel void k(__global int* a) {\n  a[0] = foo;\n}\n";
  std::string text = diagnostics(plain, "dir/ce.cl");
  EXPECT_NE(text.find("\nIn file included from dir/ce.cl:1:\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ndir/ce.cl:3:10: error: use of undeclared identifier 'foo'"), std::string::npos) << text;
  EXPECT_EQ(text.find("cltrace-"), std::string::npos) << text;  // no temporary directory
  // After the async-copy prelude the lines keep their numbers; without a name: kernel.cl.
  const std::string async =
      "__kernel void k(__global int* a, __local int* l) {\n  event_t e = async_work_group_copy(l, a, 4, 0);\n"
      "  a[0] = foo;\n}\n";
  text = diagnostics(async, "");
  EXPECT_NE(text.find("\nkernel.cl:3:10: error: use of undeclared identifier 'foo'"), std::string::npos) << text;
  text = diagnostics(async, "async.cl");
  EXPECT_NE(text.find("\nasync.cl:3:10: error: use of undeclared identifier 'foo'"), std::string::npos) << text;
  // The prelude's own lines are cltrace's (an ambiguous call's candidates), not the user's.
  text = diagnostics(
      "__kernel void k(__global int* a, __local float* l) {\n  event_t e = async_work_group_copy(l, a, 16, 0);\n"
      "  wait_group_events(1, &e);\n}\n",
      "amb.cl");
  EXPECT_NE(text.find("\namb.cl:2:15: error: call to 'async_work_group_copy' is ambiguous"), std::string::npos) << text;
  EXPECT_NE(text.find("\n<cltrace async-copy prelude>:"), std::string::npos) << text;
  EXPECT_EQ(text.find("\namb.cl:2" "6:"), std::string::npos) << text;  // the prelude's line 26 is not amb.cl's
  // A quoted source line that starts like a location keeps its text.
  text = diagnostics("__kernel void k(__global int* a) {\n  a[0] = sizeof(\"\\\nkernel.cl: x\") + foo;\n}\n", "q.cl");
  EXPECT_NE(text.find("\nkernel.cl: x\") + foo;\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nq.cl:3:18: error: use of undeclared identifier 'foo'"), std::string::npos) << text;
}

// The same source gives the same bitcode wherever clang compiled it (a temporary copy): the
// wrap layer's instrumented kernels and the device's program cache key on it.
TEST(CompileOpenCL, GivesTheSameBitcodeForTheSameSource) {
  const std::string source = "__kernel void k(__global int* a) { a[get_global_id(0)] = 1; }\n";
  const std::string first = passes::compileOpenCL(source, {});
  EXPECT_EQ(passes::compileOpenCL(source, {}), first);
  EXPECT_EQ(passes::bitcodeToText(first).find("cltrace-"), std::string::npos);
}

}  // namespace

namespace {

// Bit i of `v` (of `bits` bits) moved to bit bits-1-i.
uint64_t reversedBits(uint64_t v, unsigned bits) {
  uint64_t r = 0;
  for (unsigned i = 0; i < bits; ++i)
    if (v >> i & 1) r |= uint64_t(1) << (bits - 1 - i);
  return r;
}

// OpenCL C 2.0 resolves builtins with a pointer parameter to generic-space overloads, which
// PoCL's library lacks: the named space's overload is called instead, and computes the same.
TEST(TracedKernel, GenericPointerBuiltinsOfOpenCL20RunAndComputeTheirValues) {
  const char* src = R"CL(
__kernel void k(__global const float* a, __global float* o) {
  int i = get_global_id(0);
  float fl[4] = {a[i], 1, 2, 3};
  float4 v = vload4(0, fl);
  float ip;
  float f = fract(a[i] + 0.75f, &ip);
  float c;
  float s = sincos(0.0f, &c);
  float4 c4, i4;  // vector overloads name the pointee by a substitution: _Z6sincosDv4_fPU3AS4S_
  float4 s4 = sincos((float4)(0.0f), &c4);
  float4 f4 = fract((float4)(a[i] + 0.5f), &i4);
  o[i] = v.x * 100 + v.w * 10 + ip + f + s + c + 1000 * (c4.z + s4.x) + f4.w + i4.w * 10000;
}
)CL";
  const std::string generic = passes::bitcodeToText(passes::compileOpenCL(src, {"-cl-std=CL2.0"}));
  ASSERT_NE(generic.find("@_Z6vload4mPU3AS4Kf("), std::string::npos);  // what clang asks for
  const std::string ready = passes::bitcodeToText(passes::poclReady(passes::compileOpenCL(src, {"-cl-std=CL2.0"})));
  for (const char* name : {"@_Z6vload4mPKf(", "@_Z5fractfPf(", "@_Z6sincosfPf(", "@_Z6sincosDv4_fPS_(",
                           "@_Z5fractDv4_fPS_("})
    EXPECT_NE(ready.find(name), std::string::npos) << name;
  EXPECT_EQ(ready.find("PU3AS4"), std::string::npos);

  OpenCLEnv env;
  const size_t n = 16;
  std::vector<float> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = float(i);
  cl_mem A = env.buffer(in), O = env.buffer(std::vector<float>(n));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "k", {"-cl-std=CL2.0"}));
  std::string path = tempPath("generic");
  k.launch(env.queue, {wrapper::ArgBinding::ofBuffer(A), wrapper::ArgBinding::ofBuffer(O)},
           NDRange::fromSizes({n}, {16}), path);
  std::vector<float> o = env.read<float>(O, n);
  // v.x = i, v.w = 3, fract(i + 0.75) = 0.75 with ip = i, sincos(0) = 0 with cos 1; the same
  // for float4: 1000 * (1 + 0), fract(i + 0.5) = 0.5 with i4.w = i.
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(o[i], 10101.0f * float(i) + 1032.25f) << i;
  std::filesystem::remove(path);
}

TEST(TracedKernel, BitReversalBuiltinsTraceAndComputeTheirValues) {
  // clang's __builtin_bitreverse* become llvm.bitreverse, which SPIR-V cannot carry without an
  // extension: on a SPIR-V device passes::spirvReady expands them into shifts and masks.
  const char* src = R"CL(
__kernel void rev(__global const uint* in, __global uint* o32, __global ushort* o16, __global uchar* o8,
                  __global ulong* o64) {
  size_t i = get_global_id(0);
  uint x = in[i];
  o32[i] = __builtin_bitreverse32(x);
  o16[i] = __builtin_bitreverse16((ushort)x);
  o8[i] = __builtin_bitreverse8((uchar)(x >> 8));
  o64[i] = __builtin_bitreverse64(((ulong)x << 32) | (ulong)~x);
}
)CL";
  OpenCLEnv env;
  const size_t n = 64;
  std::vector<uint32_t> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint32_t>(i * 0x9E3779B9u + 12345u);
  cl_mem In = env.buffer(in), O32 = env.buffer(std::vector<uint32_t>(n)), O16 = env.buffer(std::vector<uint16_t>(n)),
         O8 = env.buffer(std::vector<uint8_t>(n)), O64 = env.buffer(std::vector<uint64_t>(n));
  wrapper::TracedKernel k(env.context, env.device, passes::instrumentSource(src, "rev", {}));
  std::string path = tempPath("rev");
  k.launch(env.queue,
           {wrapper::ArgBinding::ofBuffer(In), wrapper::ArgBinding::ofBuffer(O32), wrapper::ArgBinding::ofBuffer(O16),
            wrapper::ArgBinding::ofBuffer(O8), wrapper::ArgBinding::ofBuffer(O64)},
           NDRange::fromSizes({n}, {16}), path);
  std::vector<uint32_t> o32 = env.read<uint32_t>(O32, n);
  std::vector<uint16_t> o16 = env.read<uint16_t>(O16, n);
  std::vector<uint8_t> o8 = env.read<uint8_t>(O8, n);
  std::vector<uint64_t> o64 = env.read<uint64_t>(O64, n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = in[i];
    EXPECT_EQ(o32[i], reversedBits(x, 32)) << i;
    EXPECT_EQ(o16[i], reversedBits(x & 0xFFFF, 16)) << i;
    EXPECT_EQ(o8[i], reversedBits((x >> 8) & 0xFF, 8)) << i;
    EXPECT_EQ(o64[i], reversedBits((x << 32) | (~x & 0xFFFFFFFFu), 64)) << i;
  }
  // One load and four stores per work-item; buffers of 256, 256, 128, 64 and 512 bytes at
  // multiples of 256.
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), n);
  for (uint64_t i = 0; i < n; ++i) {
    const auto& r = t.workItems[i];
    ASSERT_EQ(r.size(), 5u);
    EXPECT_EQ(r[0].address, 4 * i);
    EXPECT_EQ(r[1].address, 256 + 4 * i);
    EXPECT_EQ(r[2].address, 512 + 2 * i);
    EXPECT_EQ(r[3].address, 768 + i);
    EXPECT_EQ(r[4].address, 1024 + 8 * i);
    EXPECT_EQ(r[4].kind, uint8_t(AccessKind::Store));
  }
  std::filesystem::remove(path);
}

}  // namespace
