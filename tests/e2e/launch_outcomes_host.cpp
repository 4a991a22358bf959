// An ordinary OpenCL host program for what `cltrace wrap` does around launches that do not run
// plainly. Usage: launch_outcomes_host callback|callback-svm|not-run|wait|long-name
//  callback: kernel `add` (x[i] += d) gets d = 1 and is launched with a NULL local size while a
//            64 MiB copy runs whose completion callback sets d = 999: the launch must add 1
//            (OpenCL copies the arguments at enqueue), and a later launch adds 999. Prints x[0].
//  not-run:  launches 0..3 of `add` run nothing: an argument unset (refused), work_dim 0
//            (refused), an empty global size, a wait list with a failed event; launch 4 adds 5.
//            Prints the enqueue results and x[0].
//  wait:     sleeps until killed (for signals sent to `cltrace wrap`).
//  long-name: kernel `add` under a name of 250 letters (a, then 249 z), launched once; prints x[0].
//  callback-svm: as callback, but the callback also binds an SVM allocation as argument 0: the
//            second launch adds 999 to it, not to x. Prints x[0] and the allocation's [0].
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "host_check.h"

namespace {

cl_kernel gAdd;
int* gSvm = nullptr;  // callback-svm: the callback binds it as argument 0
std::atomic<int> callbacks{0};
void CL_CALLBACK onCopied(cl_event, cl_int, void*) {
  const int d = 999;
  if (gSvm) clSetKernelArgSVMPointer(gAdd, 0, gSvm);
  clSetKernelArg(gAdd, 1, sizeof d, &d);
  ++callbacks;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: launch_outcomes_host callback|callback-svm|not-run|wait|long-name\n");
    return 2;
  }
  const std::string mode = argv[1];
  if (mode == "wait") {
    std::this_thread::sleep_for(std::chrono::seconds(120));
    return 0;
  }
  cl_device_id device = firstDevice();
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, nullptr, &err);
  CHECK(err);
  const std::string name = mode == "long-name" ? "a" + std::string(249, 'z') : "add";
  const std::string source = "__kernel void " + name + "(__global int* x, int d) { x[get_global_id(0)] += d; }";
  const char* src = source.c_str();
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, 1, &device, "", nullptr, nullptr));
  gAdd = clCreateKernel(p, name.c_str(), &err);
  CHECK(err);
  std::vector<int> zeros(64, 0);
  cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 256, zeros.data(), &err);
  CHECK(err);
  size_t global = 64, local = 16;
  int d = 1;
  if (mode == "callback" || mode == "callback-svm") {
    if (mode == "callback-svm") {
      gSvm = static_cast<int*>(clSVMAlloc(ctx, CL_MEM_READ_WRITE, 256, 0));
      if (!gSvm) {
        std::fprintf(stderr, "no SVM\n");
        return 4;
      }
      CHECK(clEnqueueSVMMemFill(q, gSvm, zeros.data(), sizeof(int), 256, 0, nullptr, nullptr));
      CHECK(clFinish(q));
    }
    const size_t big = size_t(64) << 20;
    cl_mem from = clCreateBuffer(ctx, CL_MEM_READ_WRITE, big, nullptr, &err);
    CHECK(err);
    cl_mem to = clCreateBuffer(ctx, CL_MEM_READ_WRITE, big, nullptr, &err);
    CHECK(err);
    CHECK(clSetKernelArg(gAdd, 0, sizeof x, &x));
    cl_event copied;
    CHECK(clEnqueueCopyBuffer(q, from, to, 0, 0, big, 0, nullptr, &copied));
    CHECK(clSetEventCallback(copied, CL_COMPLETE, onCopied, nullptr));
    CHECK(clFlush(q));
    CHECK(clSetKernelArg(gAdd, 1, sizeof d, &d));
    CHECK(clEnqueueNDRangeKernel(q, gAdd, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
    CHECK(clFinish(q));
    for (int i = 0; i < 5000 && callbacks == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    int first = 0;
    CHECK(clEnqueueReadBuffer(q, x, CL_TRUE, 0, sizeof first, &first, 0, nullptr, nullptr));
    CHECK(clEnqueueNDRangeKernel(q, gAdd, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    int second = 0;
    CHECK(clEnqueueReadBuffer(q, x, CL_TRUE, 0, sizeof second, &second, 0, nullptr, nullptr));
    if (gSvm) {
      CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, gSvm, 256, 0, nullptr, nullptr));
      std::printf("x[0] = %d, then %d; svm[0] = %d (callbacks: %d)\n", first, second, gSvm[0], callbacks.load());
      CHECK(clEnqueueSVMUnmap(q, gSvm, 0, nullptr, nullptr));
      CHECK(clFinish(q));
      return 0;
    }
    std::printf("x[0] = %d, then %d (callbacks: %d)\n", first, second, callbacks.load());
    return 0;
  }
  if (mode == "long-name") {
    CHECK(clSetKernelArg(gAdd, 0, sizeof x, &x));
    CHECK(clSetKernelArg(gAdd, 1, sizeof d, &d));
    CHECK(clEnqueueNDRangeKernel(q, gAdd, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    int first = 0;
    CHECK(clEnqueueReadBuffer(q, x, CL_TRUE, 0, sizeof first, &first, 0, nullptr, nullptr));
    std::printf("x[0] = %d\n", first);
    return 0;
  }
  CHECK(clSetKernelArg(gAdd, 1, sizeof d, &d));
  const cl_int unset = clEnqueueNDRangeKernel(q, gAdd, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  CHECK(clSetKernelArg(gAdd, 0, sizeof x, &x));
  const cl_int noDims = clEnqueueNDRangeKernel(q, gAdd, 0, nullptr, &global, &local, 0, nullptr, nullptr);
  const size_t none = 0;
  const cl_int empty = clEnqueueNDRangeKernel(q, gAdd, 1, nullptr, &none, nullptr, 0, nullptr, nullptr);
  // A marker behind a user event set to an error: the launch waiting for it never runs (not
  // waited for: PoCL never completes a command behind a failed event).
  cl_event user = clCreateUserEvent(ctx, &err);
  CHECK(err);
  cl_command_queue other = clCreateCommandQueueWithProperties(ctx, device, nullptr, &err);
  CHECK(err);
  cl_event marker;
  CHECK(clEnqueueMarkerWithWaitList(other, 1, &user, &marker));
  CHECK(clSetUserEventStatus(user, -5));
  cl_command_queue third = clCreateCommandQueueWithProperties(ctx, device, nullptr, &err);
  CHECK(err);
  const cl_int failedWait = clEnqueueNDRangeKernel(third, gAdd, 1, nullptr, &global, &local, 1, &marker, nullptr);
  d = 5;
  CHECK(clSetKernelArg(gAdd, 1, sizeof d, &d));
  CHECK(clEnqueueNDRangeKernel(q, gAdd, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  // A null event in the wait list: invalid in OpenCL, yet PoCL runs the launch.
  const cl_event nullEvent = nullptr;
  const cl_int nullWait = clEnqueueNDRangeKernel(q, gAdd, 1, nullptr, &global, &local, 1, &nullEvent, nullptr);
  int first = 0;
  CHECK(clEnqueueReadBuffer(q, x, CL_TRUE, 0, sizeof first, &first, 0, nullptr, nullptr));
  std::printf("unset %d, work_dim 0 %d, empty %d, failed wait %d, null event %d; x[0] = %d\n", unset, noDims, empty,
              failedWait, nullWait, first);
  std::fflush(stdout);
  std::_Exit(0);  // the command behind the failed event never completes: no orderly release
}
