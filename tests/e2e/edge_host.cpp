// An ordinary OpenCL host program (no cltrace code) that uses the less common parts of the API
// a wrapped program may use, each launch checking its own result:
//   0 hist   atomics into a buffer the host may only read (CL_MEM_HOST_READ_ONLY); the type
//            of the launch's event is printed
//   1 accum  an in-place update of a CL_MEM_HOST_NO_ACCESS buffer
//   2 scale  one buffer bound to a __constant and to a __global parameter
//   3 shape  a NULL local size, with the work-group size written into the results
//   4 one    clEnqueueTask; its event's command type is printed
//   5 fill   a kernel from clCreateKernelsInProgram, in a second context
//   6 fill   waits on a user event the program completes after enqueueing it
//   7 twice  from a program linked (clLinkProgram) from two compiled (clCompileProgram) sources
//   -        a launch with twice the device's work-group size, which the device refuses
//   9 overlap a sub-buffer and its parent as two arguments
//  10 embed  from a program compiled with embedded headers (clCompileProgram's input headers)
//  11-16 bump six launches whose event callbacks set another kernel's arguments (a driver may
//            run callbacks on the thread that executes the queue: the layer must not hold them
//            up while it waits for that queue); on PoCL the last callback enqueues
//  17 mark   (not on other platforms: rusticl 22.3 hangs on an enqueue from a callback), then
//  17/18 bump the kernel whose arguments the callbacks set
//  19 mark   a kernel of the first context on the second context's queue, which the driver refuses
//  20 mark   after the program closed standard error and opened a file of its own as fd 2
// $EDGE_PLATFORM, when set, names part of the platform to use (default: the first platform).
// Prints one line per launch; exits 1 when any result is wrong.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "host_check.h"

static const char* kSource = R"CL(
__kernel void hist(__global const uchar* data, __global int* bins) {
  atomic_inc(&bins[data[get_global_id(0)] % 16]);
}
__kernel void accum(__global const int* x, __global int* acc) { size_t i = get_global_id(0); acc[i] += x[i]; }
__kernel void scale(__constant float* c, __global float* x) { size_t i = get_global_id(0); x[i] = x[i] * c[0] + 1.0f; }
__kernel void shape(__global int* out) { out[get_global_id(0)] = (int)get_local_size(0); }
__kernel void one(__global int* out) { out[0] += 41; }
__kernel void bump(__global int* x, int d) { size_t i = get_global_id(0); for (int j = 0; j < 8; ++j) x[i] += d; }
__kernel void mark(__global int* x) { x[get_global_id(0)] = 9; }
__kernel void overlap(__global const int* whole, __global int* part) {
  size_t i = get_global_id(0);
  part[i] = whole[i] * 2 + whole[128 + i];
}
)CL";
static const char* kFillSource = R"CL(
__kernel void fill(__global int* out, int v) { out[get_global_id(0)] = v + (int)get_global_id(0); }
)CL";

static cl_device_id device;

// What the bump launches' event callbacks use (launches 11-17).
struct CallbackShared {
  cl_command_queue queue = nullptr;
  cl_kernel next = nullptr;  // its arguments are set in every callback
  cl_mem nextBuffer = nullptr;
  cl_kernel fromCallback = nullptr;  // enqueued by the last callback, when set
  std::atomic<int> calls{0};
};
static CallbackShared shared;

static void CL_CALLBACK onBumped(cl_event, cl_int, void* data) {
  const int d = 5;
  {
    // OpenCL lets only one thread at a time set a kernel's arguments, and callbacks run on
    // several: the main thread's clSetEventCallback runs one of an event already complete while
    // the queue's thread runs another (rusticl panicked then, "already borrowed", kernel.rs:303).
    static std::mutex settingArgs;
    std::lock_guard<std::mutex> lock(settingArgs);
    clSetKernelArg(shared.next, 0, sizeof shared.nextBuffer, &shared.nextBuffer);
    clSetKernelArg(shared.next, 1, sizeof d, &d);
  }
  if (shared.fromCallback && reinterpret_cast<intptr_t>(data) == 5) {
    const size_t global = 64, local = 64;
    clEnqueueNDRangeKernel(shared.queue, shared.fromCallback, 1, nullptr, &global, &local, 0, nullptr, nullptr);
    clFlush(shared.queue);
  }
  ++shared.calls;
}

static cl_context makeContext() {
  cl_int err;
  cl_context c = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  CHECK(err);
  return c;
}

static cl_program build(cl_context ctx, const char* src) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, 1, &device, "", nullptr, nullptr));
  return p;
}

static cl_mem buffer(cl_context ctx, cl_mem_flags flags, size_t bytes, const void* host) {
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, flags | CL_MEM_COPY_HOST_PTR, bytes, const_cast<void*>(host), &err);
  CHECK(err);
  return m;
}

template <typename T>
static std::vector<T> readBack(cl_command_queue q, cl_mem m, size_t n) {
  std::vector<T> v(n);
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * sizeof(T), v.data(), 0, nullptr, nullptr));
  return v;
}

int main() {
  cl_platform_id platforms[8];
  cl_uint platformCount = 0;
  CHECK(clGetPlatformIDs(8, platforms, &platformCount));
  const char* wanted = std::getenv("EDGE_PLATFORM");
  cl_platform_id platform = nullptr;
  for (cl_uint p = 0; p < platformCount && p < 8 && !platform; ++p) {
    char name[256] = {};
    CHECK(clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name - 1, name, nullptr));
    if (!wanted || std::strstr(name, wanted)) platform = platforms[p];
  }
  if (!platform) {
    std::fprintf(stderr, "no platform named like '%s'\n", wanted);
    return 3;
  }
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr));
  cl_int err;
  cl_context ctx = makeContext();
  cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
  CHECK(err);
  cl_program prog = build(ctx, kSource);
  bool allOk = true;
  auto report = [&](const char* what, bool ok, long value) {
    std::printf("%s %ld %s\n", what, value, ok ? "correct" : "WRONG");
    allOk = allOk && ok;
  };

  // 0: histogram into a host-read-only buffer.
  const size_t n = 1024;
  std::vector<unsigned char> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<unsigned char>(i * 7);
  std::vector<int> zeros(16, 0);
  cl_mem D = buffer(ctx, CL_MEM_READ_ONLY, n, data.data());
  cl_mem bins = buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_HOST_READ_ONLY, 64, zeros.data());
  cl_kernel hist = clCreateKernel(prog, "hist", &err);
  CHECK(err);
  CHECK(clSetKernelArg(hist, 0, sizeof D, &D));
  CHECK(clSetKernelArg(hist, 1, sizeof bins, &bins));
  size_t global = n, local = 64;
  cl_event histEvent;
  CHECK(clEnqueueNDRangeKernel(q, hist, 1, nullptr, &global, &local, 0, nullptr, &histEvent));
  CHECK(clWaitForEvents(1, &histEvent));
  cl_command_type histType = 0;
  CHECK(clGetEventInfo(histEvent, CL_EVENT_COMMAND_TYPE, sizeof histType, &histType, nullptr));
  std::printf("hist event is %s\n", histType == CL_COMMAND_NDRANGE_KERNEL ? "a kernel" : "something else");
  CHECK(clReleaseEvent(histEvent));
  std::vector<int> b = readBack<int>(q, bins, 16);
  long total = 0;
  for (int v : b) total += v;
  report("hist total", total == long(n) && b[0] == 64, total);

  // 1: in-place update of a buffer the host cannot access.
  std::vector<int> fives(n, 5), ones(n, 1);
  cl_mem X = buffer(ctx, CL_MEM_READ_ONLY, n * 4, fives.data());
  cl_mem acc = buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, n * 4, ones.data());
  cl_mem accCopy = buffer(ctx, CL_MEM_READ_WRITE, n * 4, ones.data());  // receives acc
  cl_kernel accum = clCreateKernel(prog, "accum", &err);
  CHECK(err);
  CHECK(clSetKernelArg(accum, 0, sizeof X, &X));
  CHECK(clSetKernelArg(accum, 1, sizeof acc, &acc));
  CHECK(clEnqueueNDRangeKernel(q, accum, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  CHECK(clEnqueueCopyBuffer(q, acc, accCopy, 0, 0, n * 4, 0, nullptr, nullptr));
  std::vector<int> a = readBack<int>(q, accCopy, n);
  report("acc[7]", a[7] == 6 && a[n - 1] == 6, a[7]);

  // 2: one buffer as __constant c (read at c[0]) and __global x, launched from offset 64.
  std::vector<float> xs(128);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = float(i % 8) + 3.0f;  // x[0] = 3
  cl_mem XS = buffer(ctx, CL_MEM_READ_WRITE, xs.size() * 4, xs.data());
  cl_kernel scale = clCreateKernel(prog, "scale", &err);
  CHECK(err);
  CHECK(clSetKernelArg(scale, 0, sizeof XS, &XS));
  CHECK(clSetKernelArg(scale, 1, sizeof XS, &XS));
  size_t offset = 64, half = 64, sixteen = 16;
  CHECK(clEnqueueNDRangeKernel(q, scale, 1, &offset, &half, &sixteen, 0, nullptr, nullptr));
  std::vector<float> s = readBack<float>(q, XS, xs.size());
  report("scaled x[65]", s[65] == xs[65] * 3.0f + 1.0f && s[0] == 3.0f, long(s[65]));

  // 3: NULL local size; the kernel writes get_local_size(0), which must be the driver's choice.
  size_t shapeN = 6000;
  std::vector<int> none(shapeN, 0);
  cl_mem shapeOut = buffer(ctx, CL_MEM_READ_WRITE, shapeN * 4, none.data());
  cl_kernel shape = clCreateKernel(prog, "shape", &err);
  CHECK(err);
  CHECK(clSetKernelArg(shape, 0, sizeof shapeOut, &shapeOut));
  CHECK(clEnqueueNDRangeKernel(q, shape, 1, nullptr, &shapeN, nullptr, 0, nullptr, nullptr));
  std::vector<int> sh = readBack<int>(q, shapeOut, shapeN);
  bool uniform = true;
  for (int v : sh) uniform = uniform && v == sh[0];
  report("driver local size", uniform && sh[0] > 0 && shapeN % size_t(sh[0]) == 0, sh[0]);

  // 4: a task, and the type of the event it returns.
  int base = 1;
  cl_mem oneOut = buffer(ctx, CL_MEM_READ_WRITE, 4, &base);
  cl_kernel oneK = clCreateKernel(prog, "one", &err);
  CHECK(err);
  CHECK(clSetKernelArg(oneK, 0, sizeof oneOut, &oneOut));
  cl_event taskEvent;
  CHECK(clEnqueueTask(q, oneK, 0, nullptr, &taskEvent));
  CHECK(clWaitForEvents(1, &taskEvent));
  cl_command_type type = 0;
  CHECK(clGetEventInfo(taskEvent, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr));
  std::vector<int> o = readBack<int>(q, oneOut, 1);
  report("task result", o[0] == 42, o[0]);
  std::printf("task event is %s\n", type == CL_COMMAND_TASK || type == CL_COMMAND_NDRANGE_KERNEL ? "a kernel" : "something else");
  CHECK(clReleaseEvent(taskEvent));

  // 5: a second context, its kernel from clCreateKernelsInProgram.
  cl_context ctx2 = makeContext();
  cl_command_queue q2 = clCreateCommandQueue(ctx2, device, 0, &err);
  CHECK(err);
  cl_program fillProg = build(ctx2, kFillSource);
  cl_kernel fill;
  cl_uint made = 0;
  CHECK(clCreateKernelsInProgram(fillProg, 1, &fill, &made));
  cl_mem fillOut = buffer(ctx2, CL_MEM_READ_WRITE, n * 4, fives.data());
  int v = 100;
  CHECK(clSetKernelArg(fill, 0, sizeof fillOut, &fillOut));
  CHECK(clSetKernelArg(fill, 1, sizeof v, &v));
  CHECK(clEnqueueNDRangeKernel(q2, fill, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  std::vector<int> f = readBack<int>(q2, fillOut, n);
  report("second context fill[9]", made == 1 && f[9] == 109, f[9]);

  // 6: a launch that waits on a user event completed after the enqueue.
  cl_event gate = clCreateUserEvent(ctx2, &err);
  CHECK(err);
  v = 200;
  CHECK(clSetKernelArg(fill, 1, sizeof v, &v));
  CHECK(clEnqueueNDRangeKernel(q2, fill, 1, nullptr, &global, &local, 1, &gate, nullptr));
  CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
  f = readBack<int>(q2, fillOut, n);
  report("after user event fill[9]", f[9] == 209, f[9]);
  CHECK(clReleaseEvent(gate));

  // 7: compile two sources, link them, launch a kernel that calls the other unit's function.
  const char* helperSource = "float times_two(float v) { return 2.0f * v; }\n";
  const char* mainSource =
      "float times_two(float v);\n"
      "__kernel void twice(__global float* x) { size_t i = get_global_id(0); x[i] = times_two(x[i]); }\n";
  cl_program units[2];
  units[0] = clCreateProgramWithSource(ctx, 1, &mainSource, nullptr, &err);
  CHECK(err);
  units[1] = clCreateProgramWithSource(ctx, 1, &helperSource, nullptr, &err);
  CHECK(err);
  for (cl_program u : units) CHECK(clCompileProgram(u, 1, &device, "", 0, nullptr, nullptr, nullptr, nullptr));
  cl_program linked = clLinkProgram(ctx, 1, &device, "", 2, units, nullptr, nullptr, &err);
  CHECK(err);
  cl_kernel twice = clCreateKernel(linked, "twice", &err);
  CHECK(err);
  std::vector<float> halves(n, 1.5f);
  cl_mem X2 = buffer(ctx, CL_MEM_READ_WRITE, n * 4, halves.data());
  CHECK(clSetKernelArg(twice, 0, sizeof X2, &X2));
  CHECK(clEnqueueNDRangeKernel(q, twice, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  std::vector<float> x2 = readBack<float>(q, X2, n);
  report("linked twice x[3]", x2[3] == 3.0f && x2[n - 1] == 3.0f, long(x2[3]));

  // A launch the device refuses: the program sees the error (and no trace may claim it ran).
  size_t maxGroup = 0;
  CHECK(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxGroup, &maxGroup, nullptr));
  size_t bigLocal = 2 * maxGroup, bigGlobal = 2 * bigLocal;
  cl_mem big = buffer(ctx, CL_MEM_READ_WRITE, bigGlobal * 4, std::vector<float>(bigGlobal, 1.0f).data());
  CHECK(clSetKernelArg(twice, 0, sizeof big, &big));
  cl_int refused = clEnqueueNDRangeKernel(q, twice, 1, nullptr, &bigGlobal, &bigLocal, 0, nullptr, nullptr);
  std::printf("oversized work-group refused: %s\n", refused != CL_SUCCESS ? "yes" : "no");
  allOk = allOk && refused != CL_SUCCESS;

  // 9: a sub-buffer (from byte 512 of its parent, int 128) and its parent in one launch; the
  // kernel reads the sub-buffer's range through the parent too.
  std::vector<int> w(1024);
  for (int i = 0; i < 1024; ++i) w[i] = i;
  cl_mem whole = buffer(ctx, CL_MEM_READ_WRITE, 1024 * 4, w.data());
  cl_buffer_region region{512, 1024};
  cl_mem part = clCreateSubBuffer(whole, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  CHECK(err);
  cl_kernel overlap = clCreateKernel(prog, "overlap", &err);
  CHECK(err);
  CHECK(clSetKernelArg(overlap, 0, sizeof whole, &whole));
  CHECK(clSetKernelArg(overlap, 1, sizeof part, &part));
  size_t overlapGlobal = 128, overlapLocal = 64;
  CHECK(clEnqueueNDRangeKernel(q, overlap, 1, nullptr, &overlapGlobal, &overlapLocal, 0, nullptr, nullptr));
  std::vector<int> after = readBack<int>(q, whole, 1024);
  bool overlapOk = true;
  for (int i = 0; i < 1024; ++i) overlapOk = overlapOk && after[i] == (i >= 128 && i < 256 ? 2 * (i - 128) + i : i);
  report("sub-buffer and parent whole[200]", overlapOk, long(after[200]));
  clReleaseMemObject(part);
  clReleaseMemObject(whole);

  // 10: a program compiled with two embedded headers (one in a directory, including the other),
  // released once compiled, then linked alone.
  const char* opsHeader = "#include \"common.h\"\nfloat shifted(float v) { return v + OFFSET; }\n";
  const char* commonHeader = "#define OFFSET 7.0f\n";
  const char* embedSource =
      "#include \"ops/shift.h\"\n"
      "__kernel void embed(__global float* x) { size_t i = get_global_id(0); x[i] = shifted(x[i]); }\n";
  cl_program headerProgs[2];
  headerProgs[0] = clCreateProgramWithSource(ctx, 1, &opsHeader, nullptr, &err);
  CHECK(err);
  headerProgs[1] = clCreateProgramWithSource(ctx, 1, &commonHeader, nullptr, &err);
  CHECK(err);
  const char* headerNames[2] = {"ops/shift.h", "common.h"};
  cl_program embedUnit = clCreateProgramWithSource(ctx, 1, &embedSource, nullptr, &err);
  CHECK(err);
  CHECK(clCompileProgram(embedUnit, 1, &device, "", 2, headerProgs, headerNames, nullptr, nullptr));
  for (cl_program h : headerProgs) clReleaseProgram(h);
  cl_program embedProg = clLinkProgram(ctx, 1, &device, "", 1, &embedUnit, nullptr, nullptr, &err);
  CHECK(err);
  cl_kernel embed = clCreateKernel(embedProg, "embed", &err);
  CHECK(err);
  std::vector<float> units3(n, 1.0f);
  cl_mem X3 = buffer(ctx, CL_MEM_READ_WRITE, n * 4, units3.data());
  CHECK(clSetKernelArg(embed, 0, sizeof X3, &X3));
  CHECK(clEnqueueNDRangeKernel(q, embed, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  std::vector<float> x3 = readBack<float>(q, X3, n);
  report("embedded headers x[5]", x3[5] == 8.0f && x3[n - 1] == 8.0f, long(x3[5]));
  clReleaseMemObject(X3);
  clReleaseKernel(embed);
  clReleaseProgram(embedProg);
  clReleaseProgram(embedUnit);

  // 11-18: event callbacks that set arguments (and, on PoCL, enqueue a kernel).
  char platformName[256] = {};
  CHECK(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof platformName - 1, platformName, nullptr));
  std::vector<int> zeroInts(n, 0);
  cl_mem bumped = buffer(ctx, CL_MEM_READ_WRITE, n * 4, zeroInts.data());
  cl_mem bumpedNext = buffer(ctx, CL_MEM_READ_WRITE, n * 4, zeroInts.data());
  cl_mem marked = buffer(ctx, CL_MEM_READ_WRITE, 64 * 4, zeroInts.data());
  cl_kernel bump = clCreateKernel(prog, "bump", &err);
  CHECK(err);
  shared.queue = q;
  shared.next = clCreateKernel(prog, "bump", &err);
  CHECK(err);
  shared.nextBuffer = bumpedNext;
  cl_kernel mark = clCreateKernel(prog, "mark", &err);
  CHECK(err);
  CHECK(clSetKernelArg(mark, 0, sizeof marked, &marked));
  if (std::strstr(platformName, "Portable")) shared.fromCallback = mark;
  const int one = 1;
  CHECK(clSetKernelArg(bump, 0, sizeof bumped, &bumped));
  CHECK(clSetKernelArg(bump, 1, sizeof one, &one));
  // All six launches are enqueued before their callbacks are set: rusticl (Mesa 22.3) runs
  // callbacks on its queue thread, and one that sets arguments while this thread enqueues a
  // launch of the same program panicked there now and then ("already borrowed", kernel.rs:303),
  // with or without cltrace.
  cl_event bumps[6];
  for (cl_event& e : bumps) CHECK(clEnqueueNDRangeKernel(q, bump, 1, nullptr, &global, &local, 0, nullptr, &e));
  for (intptr_t r = 0; r < 6; ++r) {
    CHECK(clSetEventCallback(bumps[r], CL_COMPLETE, onBumped, reinterpret_cast<void*>(r)));
    CHECK(clReleaseEvent(bumps[r]));
  }
  CHECK(clFinish(q));
  // Callbacks may still be running once the queue is finished.
  for (int waited = 0; shared.calls.load() < 6 && waited < 30000; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(clFinish(q));
  CHECK(clEnqueueNDRangeKernel(q, shared.next, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  const std::vector<int> b1 = readBack<int>(q, bumped, n), b2 = readBack<int>(q, bumpedNext, n);
  report("callbacks set arguments x[5], y[5]:", shared.calls.load() == 6 && b1[5] == 48 && b2[5] == 40 &&
                                                   b1[n - 1] == 48 && b2[n - 1] == 40,
         long(b1[5]) * 1000 + b2[5]);
  if (shared.fromCallback) {
    const std::vector<int> m = readBack<int>(q, marked, 64);
    report("kernel enqueued in a callback m[63]", m[0] == 9 && m[63] == 9, long(m[63]));
  }

  // 19: a kernel of the first context enqueued on the second context's queue, with a buffer of
  // the second context: the driver refuses it (CL_INVALID_CONTEXT) and nothing runs.
  {
    cl_kernel stray = clCreateKernel(prog, "mark", &err);
    CHECK(err);
    clSetKernelArg(stray, 0, sizeof fillOut, &fillOut);  // a driver may refuse this already
    const size_t sixtyFour = 64;
    const cl_int refused = clEnqueueNDRangeKernel(q2, stray, 1, nullptr, &sixtyFour, &sixtyFour, 0, nullptr, nullptr);
    CHECK(clFinish(q2));
    f = readBack<int>(q2, fillOut, n);
    report("kernel of another context refused, fill[9]", refused != CL_SUCCESS && f[9] == 209, long(refused));
    clReleaseKernel(stray);
  }

  // 20: standard error closed and a file of the program's own opened in its place (fd 2), then
  // a launch: nothing but what the program writes goes into that file.
  {
    char path[] = "/tmp/edge_host_fd2_XXXXXX";
    const int made = mkstemp(path);
    if (made < 0) return 3;
    close(made);
    fflush(stderr);
    close(STDERR_FILENO);
    const int own = open(path, O_RDWR | O_TRUNC);
    const size_t sixtyFour = 64;
    CHECK(clEnqueueNDRangeKernel(q, mark, 1, nullptr, &sixtyFour, &sixtyFour, 0, nullptr, nullptr));
    CHECK(clFinish(q));
    const char data[] = "the program's own data\n";
    const bool wrote = own == STDERR_FILENO && write(own, data, sizeof data - 1) == ssize_t(sizeof data - 1);
    char back[256] = {};
    const ssize_t got = pread(own, back, sizeof back - 1, 0);
    close(own);
    unlink(path);
    report("own file at fd 2 holds its data alone, bytes", wrote && got == ssize_t(sizeof data - 1) &&
                                                               std::strcmp(back, data) == 0,
           long(got));
  }

  clReleaseKernel(mark);
  clReleaseKernel(shared.next);
  clReleaseKernel(bump);
  clReleaseMemObject(marked);
  clReleaseMemObject(bumpedNext);
  clReleaseMemObject(bumped);

  clReleaseMemObject(fillOut);
  clReleaseKernel(fill);
  clReleaseProgram(fillProg);
  clReleaseCommandQueue(q2);
  clReleaseContext(ctx2);
  return allOk ? 0 : 1;
}
