// An ordinary OpenCL 2.1+ host program (no cltrace code) whose objects come and go:
//   0 scale  a kernel launched, then
//   1 scale  its clone (clCloneKernel) with another factor
//   2 k      a program built from a binary (clCreateProgramWithBinary) after a source program
//            was released (before its kernel, with extra retains): the driver may give it the
//            released program's address
//   3 hello  a kernel that prints (printf) once per work-item
// Prints one line per check; exits 1 when any result is wrong.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "host_check.h"

static cl_program build(cl_context ctx, cl_device_id dev, const char* src) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, 1, &dev, "", nullptr, nullptr));
  return p;
}

int main() {
  cl_platform_id platform;
  cl_device_id dev;
  CHECK(clGetPlatformIDs(1, &platform, nullptr));
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &err);
  CHECK(err);
  bool ok = true;
  size_t global = 64, local = 16;

  // 0, 1: a kernel and its clone, each with its own factor.
  cl_program sp = build(ctx, dev, "__kernel void scale(__global float* d, float s) { d[get_global_id(0)] *= s; }");
  cl_kernel scale = clCreateKernel(sp, "scale", &err);
  CHECK(err);
  std::vector<float> ones(64, 1.0f);
  cl_mem d = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 64 * 4, ones.data(), &err);
  CHECK(err);
  float two = 2, three = 3;
  CHECK(clSetKernelArg(scale, 0, sizeof d, &d));
  CHECK(clSetKernelArg(scale, 1, sizeof two, &two));
  cl_kernel clone = clCloneKernel(scale, &err);
  CHECK(err);
  CHECK(clSetKernelArg(clone, 1, sizeof three, &three));
  CHECK(clEnqueueNDRangeKernel(q, scale, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  CHECK(clEnqueueNDRangeKernel(q, clone, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  std::vector<float> out(64);
  CHECK(clEnqueueReadBuffer(q, d, CL_TRUE, 0, 64 * 4, out.data(), 0, nullptr, nullptr));
  std::printf("kernel and clone d[0] %g %s\n", out[0], out[0] == 6.0f ? "correct" : "WRONG");
  ok = ok && out[0] == 6.0f;
  CHECK(clReleaseKernel(clone));
  CHECK(clReleaseKernel(scale));
  CHECK(clReleaseProgram(sp));

  // 2: the binary of a program that triples, kept; a program that doubles built and released;
  // then the tripling program made again from its binary.
  cl_program triple = build(ctx, dev, "__kernel void k(__global int* d) { d[get_global_id(0)] *= 3; }");
  size_t size = 0;
  CHECK(clGetProgramInfo(triple, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
  std::vector<unsigned char> binary(size);
  unsigned char* binaries[1] = {binary.data()};
  CHECK(clGetProgramInfo(triple, CL_PROGRAM_BINARIES, sizeof binaries, binaries, nullptr));
  CHECK(clReleaseProgram(triple));
  cl_program doubling = build(ctx, dev, "__kernel void k(__global int* d) { d[get_global_id(0)] *= 2; }");
  cl_kernel dk = clCreateKernel(doubling, "k", &err);
  CHECK(err);
  // The program lets go of the doubling program while its kernel lives (the driver's count
  // still holds the kernel's reference then), with an extra reference on each let go again.
  CHECK(clRetainKernel(dk));
  CHECK(clRetainProgram(doubling));
  CHECK(clReleaseProgram(doubling));
  CHECK(clReleaseProgram(doubling));
  CHECK(clReleaseKernel(dk));
  CHECK(clReleaseKernel(dk));
  const unsigned char* bytes = binary.data();
  cl_int status;
  cl_program fromBinary = clCreateProgramWithBinary(ctx, 1, &dev, &size, &bytes, &status, &err);
  CHECK(err);
  CHECK(clBuildProgram(fromBinary, 1, &dev, "", nullptr, nullptr));
  cl_kernel k = clCreateKernel(fromBinary, "k", &err);
  CHECK(err);
  std::vector<int> ints(64);
  for (int i = 0; i < 64; ++i) ints[i] = i;
  cl_mem di = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 64 * 4, ints.data(), &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof di, &di));
  CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  CHECK(clEnqueueReadBuffer(q, di, CL_TRUE, 0, 64 * 4, ints.data(), 0, nullptr, nullptr));
  std::printf("program from a binary d[5] %d %s\n", ints[5], ints[5] == 15 ? "correct" : "WRONG");
  ok = ok && ints[5] == 15;

  // 3: device printf, two work-items.
  cl_program hp = build(ctx, dev, "__kernel void hello(__global int* d) { printf(\"hello from work-item %d\\n\", (int)get_global_id(0)); d[get_global_id(0)] = 1; }");
  cl_kernel hello = clCreateKernel(hp, "hello", &err);
  CHECK(err);
  CHECK(clSetKernelArg(hello, 0, sizeof di, &di));
  size_t two_items = 2;
  CHECK(clEnqueueNDRangeKernel(q, hello, 1, nullptr, &two_items, &two_items, 0, nullptr, nullptr));
  CHECK(clFinish(q));
  std::fflush(stdout);
  return ok ? 0 : 1;
}
