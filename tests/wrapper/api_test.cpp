// The C++ host API: a plain and a traced launch of the same kernel give the same results;
// the traced one writes the trace with the counts derived by hand.
// A host program may set its own OpenCL target version before cltrace's headers; they keep it.
#define CL_TARGET_OPENCL_VERSION 120
#include "cltrace/wrapper/api.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "test_support.h"

static_assert(CL_TARGET_OPENCL_VERSION == 120, "cltrace's headers changed the program's OpenCL target version");

using namespace cltrace;

TEST(Api, TracedLaunchIsOneOption) {
  const char* src = R"CL(
  __kernel void saxpy(__global const float* x, __global float* y, float a, __local float* tmp) {
    size_t i = get_global_id(0);
    tmp[get_local_id(0)] = x[i];
    y[i] = a * tmp[get_local_id(0)] + y[i];
  })CL";
  api::Context ctx;
  api::Program prog(ctx, src);
  prog.build();
  api::Kernel k(prog, "saxpy");
  std::vector<float> x(64), y(64, 1.0f);
  for (int i = 0; i < 64; ++i) x[i] = float(i);
  api::Buffer bx(ctx, CL_MEM_READ_ONLY, 256, x.data()), by(ctx, CL_MEM_READ_WRITE, 256, y.data());
  api::Buffer by2(ctx, CL_MEM_READ_WRITE, 256, y.data());
  k.setArg(0, bx);
  k.setArg(1, by);
  k.setArg(2, 2.0f);
  k.setArg(3, api::LocalSpace{16 * sizeof(float)});
  api::CommandQueue q(ctx);
  EXPECT_FALSE(q.enqueueNDRangeKernel(k, {64}, {16}).has_value());
  k.setArg(1, by2);
  std::string path = test::tempPath("api");
  auto result = q.enqueueNDRangeKernel(k, {64}, {16}, api::Trace{path});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->header.recordCount, 64u * 3u);  // load x, load y, store y
  std::vector<float> plain(64), traced(64);
  q.read(by, plain.data(), 256);
  q.read(by2, traced.data(), 256);
  EXPECT_EQ(plain, traced);
  EXPECT_EQ(traced[10], 21.0f);
  test::WholeTrace t = test::readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 64u);
  // x at 0, y (by2) at 256: item 5 loads x[5], loads y[5], stores y[5].
  EXPECT_EQ(t.workItems[5][0].address, 20u);
  EXPECT_EQ(t.workItems[5][1].address, 256u + 20u);
  EXPECT_EQ(t.workItems[5][2].kind, uint8_t(AccessKind::Store));
  std::filesystem::remove(path);
}

// An empty local size is the driver's choice (NULL): a plain launch passes it on; a traced one
// is traced with cltrace's choice (96 divides 96 and is at most 256), and the buffers then hold
// what the kernel computes with the driver's choice. For a kernel that requires a size (which
// OpenCL does not infer from NULL) it is that size, traced or not.
TEST(Api, AnEmptyLocalSizeIsTheDriversChoice) {
  const char* src = R"CL(
  __kernel void sizes(__global float* y) { y[get_global_id(0)] = (float)get_local_size(0); }
  __attribute__((reqd_work_group_size(32, 1, 1)))
  __kernel void fixed(__global float* y) { y[get_global_id(0)] = (float)get_local_size(0); })CL";
  api::Context ctx;
  api::Program prog(ctx, src);
  prog.build();
  api::CommandQueue q(ctx);
  std::vector<float> zeros(96, 0.0f), plain(96), traced(96);
  api::Buffer bPlain(ctx, CL_MEM_READ_WRITE, sizeof(float) * 96, zeros.data());
  api::Buffer bTraced(ctx, CL_MEM_READ_WRITE, sizeof(float) * 96, zeros.data());
  api::Kernel k(prog, "sizes");
  k.setArg(0, bPlain);
  EXPECT_FALSE(q.enqueueNDRangeKernel(k, {96}, {}).has_value());
  k.setArg(0, bTraced);
  std::string path = test::tempPath("api-null-local");
  auto result = q.enqueueNDRangeKernel(k, {96}, {}, api::Trace{path});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->header.range.local[0], 96u);
  EXPECT_EQ(result->header.recordCount, 96u);
  q.read(bPlain, plain.data(), sizeof(float) * 96);
  q.read(bTraced, traced.data(), sizeof(float) * 96);
  EXPECT_EQ(traced, plain);  // the driver's choice, whatever it is
  EXPECT_GE(plain[0], 1.0f);

  api::Kernel f(prog, "fixed");
  f.setArg(0, bPlain);
  EXPECT_FALSE(q.enqueueNDRangeKernel(f, {96}, {}).has_value());
  q.read(bPlain, plain.data(), sizeof(float) * 96);
  EXPECT_EQ(plain, std::vector<float>(96, 32.0f));
  f.setArg(0, bTraced);
  result = q.enqueueNDRangeKernel(f, {96}, {}, api::Trace{path});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->header.range.local[0], 32u);
  q.read(bTraced, traced.data(), sizeof(float) * 96);
  EXPECT_EQ(traced, std::vector<float>(96, 32.0f));
  EXPECT_THROW(q.enqueueNDRangeKernel(f, {96, 1}, {32}), wrapper::TraceError);
  std::filesystem::remove(path);
}

// A plain C99 `inline` helper (which clang at -O0 would leave as a declaration) is traced
// through; a buffer over the program's own memory (CL_MEM_USE_HOST_PTR) is used as it is.
TEST(Api, InlineHelperAndUseHostPointer) {
  const char* src = R"CL(
  inline float twice(__global const float* p, int i) { return p[i] * 2.0f; }
  __kernel void k(__global const float* in, __global float* out) {
    int i = get_global_id(0);
    out[i] = twice(in, i);
  })CL";
  api::Context ctx;
  api::Program prog(ctx, src);
  prog.build();
  api::Kernel k(prog, "k");
  std::vector<float> in(32), out(32, 0.0f);
  for (int i = 0; i < 32; ++i) in[i] = float(i);
  api::Buffer bin(ctx, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, 128, in.data());
  api::Buffer bout(ctx, CL_MEM_READ_WRITE, 128);
  k.setArg(0, bin);
  k.setArg(1, bout);
  api::CommandQueue q(ctx);
  std::string path = test::tempPath("inline");
  auto result = q.enqueueNDRangeKernel(k, {32}, {16}, api::Trace{path});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->header.recordCount, 64u);  // the helper's load and the store
  q.read(bout, out.data(), 128);
  EXPECT_EQ(out[7], 14.0f);
  test::WholeTrace t = test::readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 32u);
  EXPECT_EQ(t.workItems[7][0].kind, uint8_t(AccessKind::Load));
  EXPECT_EQ(t.workItems[7][0].address, 28u);
  EXPECT_EQ(t.workItems[7][1].address, 256u + 28u);  // out at the next 256-byte boundary
  std::filesystem::remove(path);
}

// A program's kernel is instrumented once and reused by every Kernel object of that name and
// by every launch; building the program again (other options) instruments it afresh.
TEST(Api, InstrumentedOncePerProgramAndKernel) {
  const char* src = R"CL(
  __kernel void add(__global int* x) { x[get_global_id(0)] += ADD; })CL";
  api::Context ctx;
  api::Program prog(ctx, src);
  prog.build("-DADD=1");
  std::vector<int> host(16, 0);
  api::Buffer b(ctx, CL_MEM_READ_WRITE, 64, host.data());
  api::CommandQueue q(ctx);
  const std::string path = test::tempPath("once");
  {
    api::Kernel first(prog, "add"), second(prog, "add");
    first.setArg(0, b);
    second.setArg(0, b);
    ASSERT_TRUE(q.enqueueNDRangeKernel(first, {16}, {8}, api::Trace{path}).has_value());
    const wrapper::TracedKernel* made = &prog.traced("add");
    ASSERT_TRUE(q.enqueueNDRangeKernel(second, {16}, {8}, api::Trace{path}).has_value());
    EXPECT_EQ(&prog.traced("add"), made);
  }
  prog.build("-DADD=10");  // OpenCL rebuilds a program only once its kernels are released
  api::Kernel third(prog, "add");
  third.setArg(0, b);
  ASSERT_TRUE(q.enqueueNDRangeKernel(third, {16}, {8}, api::Trace{path}).has_value());
  q.read(b, host.data(), 64);
  EXPECT_EQ(host[3], 12);  // 1 + 1 + 10: each traced launch ran once, the last with the new option
  test::WholeTrace t = test::readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 16u);
  EXPECT_EQ(t.workItems[3].size(), 2u);  // load and store of x[3]
  EXPECT_EQ(t.workItems[3][1].address, 12u);
  std::filesystem::remove(path);
}

// A trace path that cannot be one is refused before the kernel runs: the buffer is unchanged.
TEST(Api, AnEmptyTracePathIsRefusedBeforeAnyRun) {
  api::Context ctx;
  api::Program prog(ctx, "__kernel void add(__global int* x) { x[get_global_id(0)] += 1; }");
  prog.build();
  api::Kernel k(prog, "add");
  std::vector<int> host(16, 5);
  api::Buffer b(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 64, host.data());
  k.setArg(0, b);
  api::CommandQueue q(ctx);
  try {
    q.enqueueNDRangeKernel(k, {16}, {8}, api::Trace{""});
    ADD_FAILURE() << "an empty trace path was accepted";
  } catch (const wrapper::TraceError& e) {
    EXPECT_STREQ(e.what(), "the trace path is empty");
  }
  q.read(b, host.data(), 64);
  EXPECT_EQ(host, std::vector<int>(16, 5));
}

// A cl_mem made with the OpenCL API is bound as a buffer, as the kernel expects it.
api::Program& built(api::Program& p) {
  p.build();
  return p;
}
// A context with kernel `add` (x[i] += 1) built.
struct AddOne {
  api::Context ctx;
  api::Program prog{ctx, "__kernel void add(__global int* x) { x[get_global_id(0)] += 1; }"};
  api::Kernel k{built(prog), "add"};
};

// Traces `k` (x[i] += 1 over 16 ints of 5, workgroups of 8) into a temporary file named after
// `name`, and checks it: a load and a store per work-item, and `mem` holding 6s. Returns the path.
std::string traceAddingOne(api::CommandQueue& q, api::Kernel& k, cl_mem mem, const std::string& name) {
  const std::string path = test::tempPath(name);
  auto result = q.enqueueNDRangeKernel(k, {16}, {8}, api::Trace{path});
  EXPECT_TRUE(result.has_value());
  if (result) {
    EXPECT_EQ(result->header.recordCount, 32u);
  }
  std::vector<int> host(16, 0);
  EXPECT_EQ(clEnqueueReadBuffer(q.get(), mem, CL_TRUE, 0, 64, host.data(), 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(host, std::vector<int>(16, 6));
  return path;
}

TEST(Api, ARawClMemIsABuffer) {
  AddOne a;
  api::Context& ctx = a.ctx;
  api::Kernel& k = a.k;
  std::vector<int> host(16, 5);
  cl_int err = CL_SUCCESS;
  cl_mem raw = clCreateBuffer(ctx.get(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 64, host.data(), &err);
  ASSERT_EQ(err, CL_SUCCESS);
  k.setArg(0, raw);
  api::CommandQueue q(ctx);
  const std::string path = traceAddingOne(q, k, raw, "raw");
  test::WholeTrace t = test::readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 16u);
  EXPECT_EQ(t.workItems[3][1].address, 12u);
  clReleaseMemObject(raw);
  std::filesystem::remove(path);
}

// A Buffer may go before a launch that uses it: the kernel keeps its memory (the traced launch
// asked the driver about the freed cl_mem and crashed). Setting another buffer lets it go.
TEST(Api, AKernelKeepsTheMemoryOfItsBuffers) {
  AddOne a;
  api::Context& ctx = a.ctx;
  api::Kernel& k = a.k;
  std::vector<int> host(16, 5);
  auto b = std::make_unique<api::Buffer>(ctx, CL_MEM_READ_WRITE, 64, host.data());
  const cl_mem mem = b->get();
  k.setArg(0, *b);
  const auto references = [](cl_mem m) {
    cl_uint n = 0;
    EXPECT_EQ(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof n, &n, nullptr), CL_SUCCESS);
    return n;
  };
  EXPECT_EQ(references(mem), 2u);  // the Buffer's and the kernel's
  b.reset();
  EXPECT_EQ(references(mem), 1u);
  api::CommandQueue q(ctx);
  const std::string path = traceAddingOne(q, k, mem, "kept");
  api::Buffer other(ctx, CL_MEM_READ_WRITE, 64, host.data());
  clRetainMemObject(mem);  // to watch it: the kernel lets go of it when another buffer is set
  k.setArg(0, other);
  EXPECT_EQ(references(mem), 1u);
  EXPECT_EQ(references(other.get()), 2u);
  clReleaseMemObject(mem);
  std::filesystem::remove(path);
}

// A kernel whose addresses come from what an atomic returns: on a device of several compute
// units its launch is warned about (the trace can differ between runs); on one compute unit of it
// (wrapper::oneComputeUnitOf) the workgroups run one after another, work-item i takes slot i, and
// the trace is the same every time: work-item i stores at a[1 + i], byte 4 + 4i.
TEST(Api, AnAtomicSteeredKernelRunsAloneOnOneComputeUnit) {
  static const char* const src = "__kernel void take(__global int* a) { a[1 + atomic_inc(a)] = get_global_id(0); }";
  const auto traceTaking = [](api::Context& ctx, const std::string& name, std::vector<std::string>& warnings) {
    api::Program prog(ctx, src);
    api::Kernel k(built(prog), "take");
    std::vector<int> host(65, 0);
    api::Buffer b(ctx, CL_MEM_READ_WRITE, host.size() * sizeof(int), host.data());
    k.setArg(0, b);
    api::CommandQueue q(ctx);
    const std::string path = test::tempPath(name);
    auto result = q.enqueueNDRangeKernel(k, {64}, {16}, api::Trace{path});
    EXPECT_TRUE(result.has_value());
    if (result) warnings = result->warnings;
    q.read(b, host.data(), host.size() * sizeof(int));
    EXPECT_EQ(host[0], 64);
    return path;
  };
  api::Context whole;
  cl_uint units = 0;
  ASSERT_EQ(clGetDeviceInfo(whole.device(), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr), CL_SUCCESS);
  std::vector<std::string> warnings;
  std::filesystem::remove(traceTaking(whole, "steered_whole", warnings));
  const auto warned = [&warnings] {
    return std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
      return w.find("kernel 'take' is steered by what its atomics return and runs on a device of ") == 0 &&
             w.find("wrapper::oneComputeUnitOf(device) gives one") != std::string::npos;
    });
  };
  EXPECT_EQ(warned(), units > 1);
  if (units < 2) GTEST_SKIP() << "the device has one compute unit: nothing to split";
  const cl_device_id part = wrapper::oneComputeUnitOf(whole.device());
  ASSERT_NE(part, nullptr);
  // One part per device, kept (releasing it crashed PoCL's worker threads now and then).
  EXPECT_EQ(wrapper::oneComputeUnitOf(whole.device()), part);
  {
    api::Context one(part);
    for (int round = 0; round < 2; ++round) {
      const std::string path = traceTaking(one, "steered_one", warnings);
      EXPECT_FALSE(warned());
      test::WholeTrace t = test::readWholeTrace(path);
      ASSERT_EQ(t.workItems.size(), 64u);
      for (size_t i = 0; i < 64; ++i) {
        ASSERT_EQ(t.workItems[i].size(), 2u);
        EXPECT_EQ(t.workItems[i][0].address, 0u);  // the atomic
        EXPECT_EQ(t.workItems[i][1].address, 4 + 4 * i) << "work-item " << i;
      }
      std::filesystem::remove(path);
    }
  }
}

// A build OpenCL refuses (the program has kernels) leaves the program as it was: its options,
// and what a traced launch runs (it ran -DADD=10 while the device still had -DADD=1).
TEST(Api, ARefusedBuildChangesNothing) {
  api::Context ctx;
  api::Program prog(ctx, "__kernel void add(__global int* x) { x[get_global_id(0)] += ADD; }");
  prog.build("-DADD=1");
  api::Kernel k(prog, "add");
  std::vector<int> host(16, 0);
  api::Buffer b(ctx, CL_MEM_READ_WRITE, 64, host.data());
  k.setArg(0, b);
  try {
    prog.build("-DADD=10");
    ADD_FAILURE() << "a build with kernels attached was accepted";
  } catch (const wrapper::OpenCLError& e) {
    EXPECT_NE(std::string(e.what()).find("CL_INVALID_OPERATION"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("clBuildProgram (kernels made from this program still exist, and OpenCL "
                                         "builds a program again only when it has none: destroy its Kernels first)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(prog.options(), "-DADD=1");
  api::CommandQueue q(ctx);
  const std::string path = test::tempPath("refused");
  ASSERT_TRUE(q.enqueueNDRangeKernel(k, {16}, {8}, api::Trace{path}).has_value());
  q.read(b, host.data(), 64);
  EXPECT_EQ(host[3], 1);
  std::filesystem::remove(path);
}

// The context and the program may go before the kernel: a traced launch still runs (it read
// freed memory before the kernel kept its program).
TEST(Api, AKernelKeepsItsProgramAndContext) {
  const std::string path = test::tempPath("order");
  std::vector<int> host(16, 0);
  auto ctx = std::make_unique<api::Context>();
  api::CommandQueue q(*ctx);
  api::Buffer b(*ctx, CL_MEM_READ_WRITE, 64, host.data());
  auto prog = std::make_unique<api::Program>(*ctx, "__kernel void add(__global int* x) { x[get_global_id(0)] += 2; }");
  prog->build();
  api::Kernel k(*prog, "add");
  k.setArg(0, b);
  ASSERT_TRUE(q.enqueueNDRangeKernel(k, {16}, {8}, api::Trace{path}).has_value());
  prog.reset();
  ctx.reset();
  ASSERT_TRUE(q.enqueueNDRangeKernel(k, {16}, {8}, api::Trace{path}).has_value());
  q.read(b, host.data(), 64);
  EXPECT_EQ(host, std::vector<int>(16, 4));
  std::filesystem::remove(path);
}

// Clear errors: a NULL buffer in a traced launch, an argument the driver refuses (naming the
// kernel and index), a trace whose folder does not exist (before any run: the buffer is as it
// was), a failed build (its log and code).
TEST(Api, ErrorsSayWhatAndWhere) {
  api::Context ctx;
  api::Program prog(ctx, "__kernel void add(__global int* x, int d) { x[get_global_id(0)] += d; }");
  prog.build();
  api::Kernel k(prog, "add");
  api::CommandQueue q(ctx);
  k.setArg(0, cl_mem(nullptr));
  k.setArg(1, 3);
  try {
    q.enqueueNDRangeKernel(k, {16}, {8}, api::Trace{test::tempPath("null")});
    ADD_FAILURE() << "a NULL buffer was traced";
  } catch (const wrapper::TraceError& e) {
    EXPECT_STREQ(e.what(), "argument 0 (int* x) is a NULL buffer");
  }
  try {
    k.setArg(1, 3.0);  // 8 bytes for an int
    ADD_FAILURE() << "a double was taken for an int";
  } catch (const wrapper::OpenCLError& e) {
    EXPECT_NE(std::string(e.what()).find("clSetKernelArg (argument 1 of kernel add) failed: CL_INVALID_ARG_SIZE"),
              std::string::npos)
        << e.what();
  }
  std::vector<int> host(16, 5);
  api::Buffer b(ctx, CL_MEM_READ_WRITE, 64, host.data());
  k.setArg(0, b);
  try {
    q.enqueueNDRangeKernel(k, {16}, {8}, api::Trace{"/nonexistent-cltrace-folder/add.cltrace"});
    ADD_FAILURE() << "a trace in a missing folder was accepted";
  } catch (const wrapper::TraceError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent-cltrace-folder/add.cltrace: cannot create: No such file or directory (its "
                           "folder /nonexistent-cltrace-folder)");
  }
  q.read(b, host.data(), 64);
  EXPECT_EQ(host, std::vector<int>(16, 5));
  api::Program broken(ctx, "__kernel void k(__global int* x) { x[0] = undeclared; }");
  try {
    broken.build();
    ADD_FAILURE() << "a broken program built";
  } catch (const wrapper::OpenCLError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("undeclared"), std::string::npos) << what;
    EXPECT_NE(what.find("failed: CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << what;
  }
}

// A header in the working directory is found without -I by the traced build, as by PoCL's.
TEST(Api, HeadersInTheWorkingDirectoryAreFound) {
  const std::filesystem::path before = std::filesystem::current_path();
  const std::filesystem::path dir = test::tempPath("cwd-header");
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "step.h") << "#define STEP 7\n";
  std::filesystem::current_path(dir);
  std::vector<int> host(16, 0);
  {
    api::Context ctx;
    api::Program prog(ctx, "#include \"step.h\"\n__kernel void add(__global int* x) { x[get_global_id(0)] += STEP; }");
    prog.build();
    api::Kernel k(prog, "add");
    api::Buffer b(ctx, CL_MEM_READ_WRITE, 64, host.data());
    k.setArg(0, b);
    api::CommandQueue q(ctx);
    const std::string path = (dir / "add.cltrace").string();
    EXPECT_NO_THROW(q.enqueueNDRangeKernel(k, {16}, {8}, api::Trace{path}));
    q.read(b, host.data(), 64);
  }
  std::filesystem::current_path(before);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(host, std::vector<int>(16, 7));
}// A traced launch runs the code that was built: a header changed, and the working directory
// that a relative -I names left, after build() change nothing (both were read at the first
// traced launch: FACTOR 3 was traced and computed for a program built with 2).
TEST(Api, TracedLaunchesRunWhatWasBuilt) {
  const std::filesystem::path before = std::filesystem::current_path();
  const std::filesystem::path dir = test::tempPath("built-header");
  std::filesystem::create_directories(dir / "inc");
  std::ofstream(dir / "inc" / "factor.h") << "#define FACTOR 2\n";
  std::filesystem::current_path(dir);
  std::vector<int> host(16, 1);
  {
    api::Context ctx;
    api::Program prog(ctx, "#include \"factor.h\"\n__kernel void mul(__global int* x) { x[get_global_id(0)] *= FACTOR; }");
    prog.build("-Iinc");
    std::ofstream(dir / "inc" / "factor.h") << "#define FACTOR 3\n";
    std::filesystem::current_path(before);
    api::Kernel k(prog, "mul");
    api::Buffer b(ctx, CL_MEM_READ_WRITE, 64, host.data());
    k.setArg(0, b);
    api::CommandQueue q(ctx);
    EXPECT_NO_THROW(q.enqueueNDRangeKernel(k, {16}, {8}, api::Trace{(dir / "mul.cltrace").string()}));
    q.read(b, host.data(), 64);
  }
  std::filesystem::current_path(before);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(host, std::vector<int>(16, 2));
}

// Threads may share a program: each traces its own kernel object on its own queue, in turns
// (a shared instrumented kernel crashed or mixed up launches without them).
TEST(Api, ThreadsShareAProgramsTracedKernels) {
  api::Context ctx;
  api::Program prog(ctx, "__kernel void add(__global int* x, int d) { x[get_global_id(0)] += d; }");
  prog.build();
  std::vector<std::vector<int>> results(2);
  std::vector<uint64_t> records(2, 0);
  auto work = [&](int t) {
    api::Kernel k(prog, "add");
    std::vector<int> host(64, 0);
    api::Buffer b(ctx, CL_MEM_READ_WRITE, 256, host.data());
    k.setArg(0, b);
    api::CommandQueue q(ctx);
    for (int i = 0; i < 6; ++i) {
      k.setArg(1, t + 1);
      const std::string path = test::tempPath("threads-" + std::to_string(t) + "-" + std::to_string(i));
      auto r = q.enqueueNDRangeKernel(k, {64}, {16}, api::Trace{path});
      records[t] += r->header.recordCount;
      std::filesystem::remove(path);
    }
    q.read(b, host.data(), 256);
    results[t] = host;
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  EXPECT_EQ(results[0], std::vector<int>(64, 6));
  EXPECT_EQ(results[1], std::vector<int>(64, 12));
  EXPECT_EQ(records[0], 6u * 64u * 2u);  // a load and a store per work-item per launch
  EXPECT_EQ(records[1], 6u * 64u * 2u);
}

// Objects of another context: a buffer (which PoCL lets a plain launch take) and a queue are
// named, before anything runs.
TEST(Api, AnotherContextsBufferOrQueueIsNamed) {
  api::Context ctx, other;
  api::Program prog(ctx, "__kernel void add(__global int* x, int d) { x[get_global_id(0)] += d; }");
  prog.build();
  api::Kernel k(prog, "add");
  std::vector<int> host(16, 0);
  api::Buffer theirs(other, CL_MEM_READ_WRITE, 64, host.data());
  api::Buffer ours(ctx, CL_MEM_READ_WRITE, 64, host.data());
  api::CommandQueue q(ctx), otherQueue(other);
  k.setArg(0, theirs);
  k.setArg(1, 1);
  const std::string path = test::tempPath("context");
  try {
    q.enqueueNDRangeKernel(k, {16}, {8}, api::Trace{path});
    ADD_FAILURE() << "another context's buffer was traced";
  } catch (const wrapper::TraceError& e) {
    EXPECT_STREQ(e.what(), "argument 0 (int* x) is a buffer of another context than the kernel's");
  }
  k.setArg(0, ours);
  try {
    otherQueue.enqueueNDRangeKernel(k, {16}, {8}, api::Trace{path});
    ADD_FAILURE() << "a launch on another context's queue was traced";
  } catch (const wrapper::TraceError& e) {
    EXPECT_STREQ(e.what(), "kernel 'add': the queue belongs to another context than the kernel's");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}



// An image set with setArg(cl_mem) and a sampler with setArg(cl_sampler): the traced launch
// passes both on (the kernel keeps them alive, like buffers) and traces the buffer accesses
// alone, at the addresses the pixels pick.
TEST(Api, ImagesAndSamplersArePassedOn) {
  const char* src = R"CL(
  __kernel void pick(__read_only image2d_t im, sampler_t s, __global const int* table, __global int* o) {
    int x = get_global_id(0);
    o[x] = table[read_imagei(im, s, (int2)(x, 0)).x];
  })CL";
  api::Context ctx;
  api::Program prog(ctx, src);
  prog.build();
  api::Kernel k(prog, "pick");
  const cl_image_format format{CL_R, CL_SIGNED_INT32};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 4;
  desc.image_height = 1;
  std::vector<int32_t> pixels{2, 3, 0, 1}, table{7, 8, 9, 10};
  cl_int err = CL_SUCCESS;
  cl_mem im = clCreateImage(ctx.get(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &format, &desc, pixels.data(), &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_sampler sampler = clCreateSampler(ctx.get(), CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  api::Buffer bt(ctx, CL_MEM_READ_ONLY, sizeof(int32_t) * 4, table.data()), bo(ctx, CL_MEM_READ_WRITE, sizeof(int32_t) * 4);
  k.setArg(0, im);
  k.setArg(1, sampler);
  k.setArg(2, bt);
  k.setArg(3, bo);
  // The kernel holds its own references.
  clReleaseMemObject(im);
  clReleaseSampler(sampler);
  api::CommandQueue q(ctx);
  std::string path = test::tempPath("api-images");
  auto result = q.enqueueNDRangeKernel(k, {4}, {4}, api::Trace{path});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->header.recordCount, 8u);  // load table, store o
  std::vector<int32_t> out(4);
  q.read(bo, out.data(), sizeof(int32_t) * 4);
  EXPECT_EQ(out, (std::vector<int32_t>{9, 10, 7, 8}));
  test::WholeTrace t = test::readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 4u);
  const uint64_t picked[4] = {2, 3, 0, 1};
  for (uint64_t x = 0; x < 4; ++x) {
    ASSERT_EQ(t.workItems[x].size(), 2u);
    EXPECT_EQ(t.workItems[x][0].address, 4 * picked[x]) << x;  // table at 0
    EXPECT_EQ(t.workItems[x][1].address, 256 + 4 * x) << x;    // o at 256
  }
  std::filesystem::remove(path);
}
