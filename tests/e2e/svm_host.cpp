// An ordinary OpenCL 2.0 host program: launches `add` (x[i] += v) on a buffer, then sets the
// same argument to a shared-virtual-memory allocation (clSetKernelArgSVMPointer) and launches
// again, and prints both results. Used to test that `cltrace wrap` does not trace the second
// launch on the buffer the argument held before. PoCL 3.1 takes these calls though it reports
// no SVM capability; where clSVMAlloc fails, the program says so and stops after the first.
#define CL_TARGET_OPENCL_VERSION 200
#include <CL/cl.h>

#include <cstdio>
#include <vector>

#include "host_check.h"

static const char* kSource = "__kernel void add(__global int* x, int v) { x[get_global_id(0)] += v; }";

int main() {
  cl_device_id device = firstDevice();
  cl_int err;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  CHECK(err);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
  CHECK(err);
  cl_program program = clCreateProgramWithSource(context, 1, &kSource, nullptr, &err);
  CHECK(err);
  CHECK(clBuildProgram(program, 1, &device, "-cl-std=CL2.0", nullptr, nullptr));
  cl_kernel kernel = clCreateKernel(program, "add", &err);
  CHECK(err);
  std::vector<int> host(256, 0);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 1024, host.data(), &err);
  CHECK(err);
  const int v = 3;
  CHECK(clSetKernelArg(kernel, 0, sizeof buffer, &buffer));
  CHECK(clSetKernelArg(kernel, 1, sizeof v, &v));
  const size_t global = 256, local = 64;
  CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  int* svm = static_cast<int*>(clSVMAlloc(context, CL_MEM_READ_WRITE, 1024, 0));
  if (!svm) {
    std::printf("no SVM allocation\n");
    return 0;
  }
  CHECK(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_WRITE, svm, 1024, 0, nullptr, nullptr));
  for (int i = 0; i < 256; ++i) svm[i] = 100;
  CHECK(clEnqueueSVMUnmap(queue, svm, 0, nullptr, nullptr));
  CHECK(clSetKernelArgSVMPointer(kernel, 0, svm));
  CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  CHECK(clFinish(queue));
  CHECK(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ, svm, 1024, 0, nullptr, nullptr));
  std::printf("svm %d %d\n", svm[0], svm[255]);
  CHECK(clEnqueueSVMUnmap(queue, svm, 0, nullptr, nullptr));
  CHECK(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, 1024, host.data(), 0, nullptr, nullptr));
  std::printf("buffer %d %d\n", host[0], host[255]);
  clSVMFree(context, svm);
  return 0;
}
