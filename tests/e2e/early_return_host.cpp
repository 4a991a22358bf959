// An ordinary OpenCL host program whose kernel returns early on some work-items before a
// barrier (undefined in OpenCL; PoCL finishes this kernel, but can spin forever on its traced
// version). Runs it once, 64 work-items in one workgroup, and prints "done". Used to test that
// `cltrace wrap` gives up a hung trace run with a message instead of hanging the program.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>

static const char* kSource = R"CL(
__kernel void k(__global float* a) {
  int l = get_local_id(0);
  if (l >= 40) return;
  a[l] = 1;
  barrier(CLK_GLOBAL_MEM_FENCE);
  a[l + 64] = a[63 - l];
}
)CL";

#define CHECK(call)                                                         \
  do {                                                                      \
    cl_int e_ = (call);                                                     \
    if (e_ != CL_SUCCESS) {                                                 \
      std::fprintf(stderr, "%s failed: %d\n", #call, static_cast<int>(e_)); \
      return 1;                                                             \
    }                                                                       \
  } while (0)

int main() {
  cl_platform_id platform;
  cl_device_id device;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &platform, nullptr));
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr));
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  CHECK(err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  CHECK(err);
  cl_program program = clCreateProgramWithSource(context, 1, &kSource, nullptr, &err);
  CHECK(err);
  CHECK(clBuildProgram(program, 1, &device, "", nullptr, nullptr));
  cl_kernel kernel = clCreateKernel(program, "k", &err);
  CHECK(err);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 128 * sizeof(float), nullptr, &err);
  CHECK(err);
  CHECK(clSetKernelArg(kernel, 0, sizeof buffer, &buffer));
  const size_t global = 64, local = 64;
  CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  CHECK(clFinish(queue));
  std::printf("done\n");
  return 0;
}
