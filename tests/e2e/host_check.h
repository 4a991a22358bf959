// CHECK(call) for the e2e test hosts, which are ordinary OpenCL programs (no cltrace code): an
// OpenCL call that fails ends the program with status 3, naming the call and its line.
#pragma once
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                                  \
  do {                                                                                               \
    cl_int e_ = (call);                                                                              \
    if (e_ != CL_SUCCESS) {                                                                          \
      std::fprintf(stderr, "line %d: %s failed: %d\n", __LINE__, #call, static_cast<int>(e_));       \
      std::exit(3);                                                                                  \
    }                                                                                                \
  } while (0)

// The first device of the first platform, for the small hosts that need no choice.
inline cl_device_id firstDevice() {
  cl_platform_id platform;
  cl_device_id device;
  CHECK(clGetPlatformIDs(1, &platform, nullptr));
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr));
  return device;
}
