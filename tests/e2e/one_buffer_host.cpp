// An ordinary OpenCL host program: builds kernel `k` from the source file it is given (with
// the build options given, if any), launches it the number of times given (default once) on a
// buffer of 128 floats (0.37 (i + 1) - 5), 64 work-items in workgroups of the local size given
// (default 64), and prints "done" and then the buffer's values, exactly (%a); then it lets go of
// everything and says whether the context's destructor callback ran. With `link` last, the
// program is compiled with the options (clCompileProgram) and linked with none (clLinkProgram)
// instead of built. Usage: one_buffer_host SOURCE [OPTIONS [LAUNCHES [LOCAL_SIZE [build|link]]]].
// Used to test `cltrace wrap` on kernels the tests write: one whose trace run hangs, one that
// cannot be instrumented, one built with -cl-fast-relaxed-math.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "host_check.h"

std::atomic<bool> contextDestroyed{false};
void CL_CALLBACK noteContextDestroyed(cl_context, void*) { contextDestroyed = true; }

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: one_buffer_host SOURCE [OPTIONS [LAUNCHES [LOCAL_SIZE [build|link]]]]\n");
    return 2;
  }
  std::ifstream file(argv[1]);
  if (!file) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  const std::string source((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const char* text = source.c_str();
  const char* options = argc > 2 ? argv[2] : "";
  const int launches = argc > 3 ? std::atoi(argv[3]) : 1;
  const size_t local = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 64;
  const bool link = argc > 5 && std::string(argv[5]) == "link";
  cl_device_id device = firstDevice();
  cl_int err;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  CHECK(err);
  CHECK(clSetContextDestructorCallback(context, noteContextDestroyed, nullptr));
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
  CHECK(err);
  cl_program program = clCreateProgramWithSource(context, 1, &text, nullptr, &err);
  CHECK(err);
  if (link) {
    CHECK(clCompileProgram(program, 1, &device, options, 0, nullptr, nullptr, nullptr, nullptr));
    cl_program linked = clLinkProgram(context, 1, &device, "", 1, &program, nullptr, nullptr, &err);
    CHECK(err);
    CHECK(clReleaseProgram(program));
    program = linked;
  } else {
    CHECK(clBuildProgram(program, 1, &device, options, nullptr, nullptr));
  }
  cl_kernel kernel = clCreateKernel(program, "k", &err);
  CHECK(err);
  std::vector<float> values(128);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.37f * float(i + 1) - 5.0f;
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, values.size() * sizeof(float),
                                 values.data(), &err);
  CHECK(err);
  CHECK(clSetKernelArg(kernel, 0, sizeof buffer, &buffer));
  const size_t global = 64;
  for (int i = 0; i < launches; ++i)
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  CHECK(clFinish(queue));
  std::printf("done\n");
  CHECK(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, values.size() * sizeof(float), values.data(), 0, nullptr,
                            nullptr));
  for (float v : values) std::printf("%a ", static_cast<double>(v));
  std::printf("\n");
  CHECK(clReleaseMemObject(buffer));
  CHECK(clReleaseKernel(kernel));
  CHECK(clReleaseProgram(program));
  CHECK(clReleaseCommandQueue(queue));
  CHECK(clReleaseContext(context));
  for (int i = 0; i < 500 && !contextDestroyed; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::printf(contextDestroyed ? "context destroyed\n" : "context kept\n");
  return 0;
}
