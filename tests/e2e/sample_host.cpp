// A small, ordinary OpenCL host program (no cltrace code): builds two kernels from source,
// runs four launches (one with a NULL local size, one updating a buffer in place), checks the
// results and prints them. Used to test `cltrace wrap` on an unmodified program.
// OpenCL 1.2 API only, so that it runs on 1.2 platforms such as Oclgrind too.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static const char* kSource = R"CL(
__kernel void vadd(__global const float* a, __global const float* b, __global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void scale(__global float* x, float f) {
  size_t i = get_global_id(0);
  x[i] = x[i] * f;
}
)CL";

#define CHECK(call)                                                   \
  do {                                                                \
    cl_int e_ = (call);                                               \
    if (e_ != CL_SUCCESS) {                                           \
      std::fprintf(stderr, "%s failed: %d\n", #call, static_cast<int>(e_)); \
      return 1;                                                       \
    }                                                                 \
  } while (0)

int main() {
  // The first device of the first platform that has one (a platform may have none, e.g. a GPU
  // driver on a machine without its GPU); $SAMPLE_PLATFORM, when set, names part of the
  // platform's name, as many programs let their users choose.
  cl_platform_id platforms[8];
  cl_uint platformCount = 0;
  cl_device_id device = nullptr;
  cl_int err;
  const char* wanted = std::getenv("SAMPLE_PLATFORM");
  CHECK(clGetPlatformIDs(8, platforms, &platformCount));
  for (cl_uint p = 0; p < platformCount && p < 8 && !device; ++p) {
    char name[256] = {};
    CHECK(clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name - 1, name, nullptr));
    if (wanted && !std::strstr(name, wanted)) continue;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) device = nullptr;
  }
  if (!device) {
    std::fprintf(stderr, "no OpenCL device\n");
    return 1;
  }
  cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &kSource, nullptr, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &device, "-cl-kernel-arg-info", nullptr, nullptr));
  cl_kernel vadd = clCreateKernel(prog, "vadd", &err);
  CHECK(err);
  cl_kernel scale = clCreateKernel(prog, "scale", &err);
  CHECK(err);
  cl_uint numArgs = 0;
  CHECK(clGetKernelInfo(vadd, CL_KERNEL_NUM_ARGS, sizeof numArgs, &numArgs, nullptr));

  const size_t n = 1024;
  std::vector<float> a(n), b(n), c(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i);
  }
  cl_mem A = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, a.data(), &err);
  CHECK(err);
  cl_mem B = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, b.data(), &err);
  CHECK(err);
  cl_mem C = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, nullptr, &err);
  CHECK(err);

  size_t global = n, local = 64;
  CHECK(clSetKernelArg(vadd, 0, sizeof A, &A));
  CHECK(clSetKernelArg(vadd, 1, sizeof B, &B));
  CHECK(clSetKernelArg(vadd, 2, sizeof C, &C));
  CHECK(clEnqueueNDRangeKernel(q, vadd, 1, nullptr, &global, &local, 0, nullptr, nullptr));  // c = 3i
  float f = 2.0f;
  CHECK(clSetKernelArg(scale, 0, sizeof C, &C));
  CHECK(clSetKernelArg(scale, 1, sizeof f, &f));
  cl_event done;
  CHECK(clEnqueueNDRangeKernel(q, scale, 1, nullptr, &global, nullptr, 0, nullptr, &done));  // c = 6i
  CHECK(clWaitForEvents(1, &done));
  CHECK(clEnqueueNDRangeKernel(q, scale, 1, nullptr, &global, &local, 0, nullptr, nullptr));  // c = 12i
  CHECK(clSetKernelArg(vadd, 0, sizeof C, &C));
  CHECK(clSetKernelArg(vadd, 2, sizeof C, &C));
  CHECK(clEnqueueNDRangeKernel(q, vadd, 1, nullptr, &global, &local, 0, nullptr, nullptr));  // c = 14i
  CHECK(clEnqueueReadBuffer(q, C, CL_TRUE, 0, n * 4, c.data(), 0, nullptr, nullptr));

  // The kernels as the program sees them after the launches (a tracer must not show its own
  // arguments): their argument counts, scale's last argument, and one past it.
  cl_uint vaddArgs = 0, scaleArgs = 0;
  CHECK(clGetKernelInfo(vadd, CL_KERNEL_NUM_ARGS, sizeof vaddArgs, &vaddArgs, nullptr));
  CHECK(clGetKernelInfo(scale, CL_KERNEL_NUM_ARGS, sizeof scaleArgs, &scaleArgs, nullptr));
  char argName[64] = {};
  CHECK(clGetKernelArgInfo(scale, 1, CL_KERNEL_ARG_NAME, sizeof argName - 1, argName, nullptr));
  cl_int pastLast = clGetKernelArgInfo(scale, 2, CL_KERNEL_ARG_NAME, sizeof argName - 1, argName, nullptr);

  double sum = 0;
  bool ok = true;
  for (size_t i = 0; i < n; ++i) {
    sum += c[i];
    ok = ok && c[i] == static_cast<float>(14 * i);
  }
  std::printf("vadd takes %u arguments\n", numArgs);
  std::printf("after the launches: vadd takes %u, scale %u (the last one '%s'; asking for one more: %d)\n", vaddArgs,
              scaleArgs, argName, static_cast<int>(pastLast));
  std::printf("sum %.1f, %s\n", sum, ok ? "correct" : "WRONG");
  clReleaseEvent(done);
  clReleaseMemObject(A);
  clReleaseMemObject(B);
  clReleaseMemObject(C);
  clReleaseKernel(vadd);
  clReleaseKernel(scale);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return ok ? 0 : 1;
}
