// An ordinary OpenCL 1.2 host program (no cltrace code) whose programs are built in ways that
// a tracer must follow exactly, or the program's results change under `cltrace wrap`:
//   0 k      built with -DFACTOR=2; a rebuild with -DFACTOR=3 fails (a kernel is attached),
//            which leaves the program as it was
//   1 inc    built with -I DIR while DIR/params.h says SCALE 2; released
//   2 inc    the same source and options built again after params.h changed to SCALE 3
//   3 lk     linked from two units compiled with -DVAL=1 and -DVAL=2, each defining a macro
//            the other tests and a static function of the same name
//   4 d      built with -cl-denorms-are-zero: denormal inputs read as zero
//   5 add    run by a child process (this program again, with "child"), twice
//   7 k      launched after a user event was created and released without being completed
//   8 macros which of the device's macros the kernel sees (an extension clang knows for SPIR
//            but PoCL lacks, cl_khr_fp16; __OPENCL_VERSION__, which only the driver defines)
//   9 k      an empty launch (global size 0): whatever the driver says, nothing to trace
//   10.. v   variants: a program per -DV=i, each released after its launch (an autotuner);
//            with "variants N" only these, and the peak resident memory is printed
// With "cwd" only one launch, run from DIR: a header found in the working directory without -I
// (the driver searches it, before the -I directories): s reads x[4 * i] (DIR/stride.h), not
// x[8 * i] (DIR/inc/stride.h).
// Usage: rebuild_host DIR [child | variants N | cwd]. Prints one line per check; exits 1 when a
// result is wrong.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "host_check.h"

namespace {

cl_device_id dev;
cl_context ctx;
cl_command_queue q;
bool allOk = true;

void report(const std::string& what, bool ok) {
  std::printf("%s %s\n", what.c_str(), ok ? "correct" : "WRONG");
  allOk = allOk && ok;
}

cl_program fromSource(const char* src) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  CHECK(err);
  return p;
}

cl_program build(const char* src, const std::string& options) {
  cl_program p = fromSource(src);
  CHECK(clBuildProgram(p, 1, &dev, options.c_str(), nullptr, nullptr));
  return p;
}

cl_kernel kernel(cl_program p, const char* name) {
  cl_int err;
  cl_kernel k = clCreateKernel(p, name, &err);
  CHECK(err);
  return k;
}

cl_mem buffer(size_t bytes, const void* host) {
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                            const_cast<void*>(host), &err);
  CHECK(err);
  return m;
}

// Launches `k` over n work-items in one work-group with `m` as argument 0 and reads m back.
template <typename T>
std::vector<T> launch(cl_kernel k, cl_mem m, size_t n) {
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, &n, 0, nullptr, nullptr));
  std::vector<T> out(n);
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * sizeof(T), out.data(), 0, nullptr, nullptr));
  return out;
}

void writeParams(const std::string& dir, int scale) {
  std::ofstream(dir + "/params.h") << "#define SCALE " << scale << "\n";
}

int includeLaunch(const std::string& dir) {
  const char* src = "#include \"params.h\"\n__kernel void inc(__global int* x) { x[get_global_id(0)] = SCALE; }\n";
  cl_program p = build(src, "-I " + dir);
  cl_kernel k = kernel(p, "inc");
  cl_mem m = buffer(16 * sizeof(int), nullptr);
  const int first = launch<int>(k, m, 16)[0];
  CHECK(clReleaseMemObject(m));
  CHECK(clReleaseKernel(k));
  CHECK(clReleaseProgram(p));
  return first;
}

void workingDirectoryHeader(const std::string& dir) {
  CHECK(chdir(dir.c_str()) == 0 ? CL_SUCCESS : CL_INVALID_VALUE);
  std::ofstream("stride.h") << "#define STRIDE 4\n";
  CHECK(system("mkdir -p inc") == 0 ? CL_SUCCESS : CL_INVALID_VALUE);
  std::ofstream("inc/stride.h") << "#define STRIDE 8\n";
  const char* src =
      "#include \"stride.h\"\n__kernel void s(__global int* x) { x[get_global_id(0)] = x[get_global_id(0) * STRIDE]; }\n";
  std::vector<int> values(32);
  for (int i = 0; i < 32; ++i) values[i] = i;
  const int second = launch<int>(kernel(build(src, "-I inc"), "s"), buffer(32 * sizeof(int), values.data()), 4)[1];
  report("working directory header x[1] = " + std::to_string(second), second == 4);
}

void add(size_t n) {
  cl_program p = build("__kernel void add(__global int* x) { x[get_global_id(0)] += 1; }", "");
  cl_kernel k = kernel(p, "add");
  std::vector<int> zeros(n, 0);
  cl_mem m = buffer(n * sizeof(int), zeros.data());
  const int once = launch<int>(k, m, n)[0];
  const int twice = launch<int>(k, m, n)[0];
  report("child adds " + std::to_string(once) + " then " + std::to_string(twice), once == 1 && twice == 2);
}

long peakResidentKiB() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// Each variant's launch makes 16384 x 33 records, so that what tracing it holds is large.
void variants(int count) {
  const char* src =
      "__kernel void v(__global int* x) { x[get_global_id(0)] = 0; for (int j = 0; j < 16; j++) x[get_global_id(0)] += V; }";
  const size_t n = 16384, local = 64;
  for (int i = 0; i < count; ++i) {
    // V = 0 would make `x += V` a store of the value loaded, which cltrace (as a GPU compiler)
    // drops, and its load with it.
    cl_program p = build(src, "-DV=" + std::to_string(i + 1));
    cl_kernel k = kernel(p, "v");
    cl_mem m = buffer(n * sizeof(int), nullptr);
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, &local, 0, nullptr, nullptr));
    int got = -1;
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof got, &got, 0, nullptr, nullptr));
    if (got != 16 * (i + 1)) report("variant " + std::to_string(i) + " " + std::to_string(got), false);
    CHECK(clReleaseMemObject(m));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rebuild_host DIR [child | variants N | cwd]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::string mode = argc > 2 ? argv[2] : "";
  cl_platform_id platform;
  CHECK(clGetPlatformIDs(1, &platform, nullptr));
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  cl_int err;
  ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  CHECK(err);
  q = clCreateCommandQueue(ctx, dev, 0, &err);
  CHECK(err);
  if (mode == "child") {
    add(32);  // two launches
    return allOk ? 0 : 1;
  }
  if (mode == "cwd") {
    workingDirectoryHeader(dir);
    return allOk ? 0 : 1;
  }
  if (mode == "variants") {
    variants(argc > 3 ? std::atoi(argv[3]) : 1);
    std::printf("peak resident KiB %ld\n", peakResidentKiB());
    return allOk ? 0 : 1;
  }

  // 0: the failed rebuild.
  cl_program p = build("__kernel void k(__global float* x) { x[get_global_id(0)] *= FACTOR; }", "-DFACTOR=2");
  cl_kernel k = kernel(p, "k");
  const cl_int rebuilt = clBuildProgram(p, 1, &dev, "-DFACTOR=3", nullptr, nullptr);
  std::vector<float> ones(16, 1.0f);
  cl_mem m = buffer(16 * sizeof(float), ones.data());
  const float scaled = launch<float>(k, m, 16)[5];
  report("rebuild refused, kernel scales by " + std::to_string(static_cast<int>(scaled)),
         rebuilt != CL_SUCCESS && scaled == 2.0f);

  // 1, 2: a header that changes between two builds of one source.
  writeParams(dir, 2);
  const int before = includeLaunch(dir);
  writeParams(dir, 3);
  const int after = includeLaunch(dir);
  report("header SCALE " + std::to_string(before) + " then " + std::to_string(after), before == 2 && after == 3);

  // 3: two units, each with its own options, macros and static helper.
  const char* unitA =
      "#define BIAS 1\nstatic int h(void) { return 100; }\nint other(void);\n"
      "__kernel void lk(__global int* x) { x[get_global_id(0)] = VAL * 10 + h() + other() + BIAS; }\n";
  const char* unitB =
      "#ifndef BIAS\n#define BIAS 1000\n#endif\nstatic int h(void) { return 20000; }\n"
      "int other(void) { return VAL + h() + BIAS; }\n";
  cl_program a = fromSource(unitA), b = fromSource(unitB);
  CHECK(clCompileProgram(a, 1, &dev, "-DVAL=1", 0, nullptr, nullptr, nullptr, nullptr));
  CHECK(clCompileProgram(b, 1, &dev, "-DVAL=2", 0, nullptr, nullptr, nullptr, nullptr));
  cl_program units[] = {a, b};
  cl_program linked = clLinkProgram(ctx, 1, &dev, "", 2, units, nullptr, nullptr, &err);
  CHECK(err);
  // 1 * 10 + 100 + (2 + 20000 + 1000) + 1
  const int sum = launch<int>(kernel(linked, "lk"), buffer(16 * sizeof(int), nullptr), 16)[0];
  report("linked units " + std::to_string(sum), sum == 21113);

  // 4: denormals flushed by the build option.
  cl_program dp = build("__kernel void d(__global float* x) { x[get_global_id(0)] = x[get_global_id(0)] * 2.0f; }",
                        "-cl-denorms-are-zero");
  std::vector<float> tiny(4, 1e-40f);
  const float doubled = launch<float>(kernel(dp, "d"), buffer(4 * sizeof(float), tiny.data()), 4)[0];
  report("denormal doubled to " + std::to_string(doubled), doubled == 0.0f);

  // 5: a child process with launches of its own.
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    execl("/proc/self/exe", argv[0], dir.c_str(), "child", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  report("child exit " + std::to_string(WEXITSTATUS(status)), WIFEXITED(status) && WEXITSTATUS(status) == 0);

  // 7: a user event let go of without completing it (nothing waits for it).
  cl_event user = clCreateUserEvent(ctx, &err);
  CHECK(err);
  CHECK(clReleaseEvent(user));
  const float again = launch<float>(k, m, 16)[5];  // 1 * 2 * 2
  report("after a released user event x[5] " + std::to_string(static_cast<int>(again)), again == 4.0f);

  // 8: the device compiler's macros.
  cl_program mp = build(
      "__kernel void macros(__global int* x) { int v = 0;\n"
      "#ifdef cl_khr_fp16\n v |= 1;\n#endif\n#ifdef cl_khr_fp64\n v |= 2;\n#endif\n"
      "#ifdef cl_khr_spir\n v |= 4;\n#endif\n"
      "#ifdef __OPENCL_VERSION__\n v |= __OPENCL_VERSION__ << 4;\n#endif\n x[get_global_id(0)] = v; }",
      "");
  report("device macros " + std::to_string(launch<int>(kernel(mp, "macros"), buffer(4 * sizeof(int), nullptr), 4)[0]),
         true);

  // 9: an empty launch.
  const size_t none = 0;
  const cl_int emptyLaunch = clEnqueueNDRangeKernel(q, k, 1, nullptr, &none, nullptr, 0, nullptr, nullptr);
  report("empty launch " + std::to_string(emptyLaunch), true);

  // 10..: variants.
  variants(3);
  report("variants", true);
  std::fflush(stdout);
  return allOk ? 0 : 1;
}
