// Small helpers over the OpenCL C API: error checking with readable names, device queries.
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace cltrace::wrapper {

// An OpenCL call failed; what() names the call and the error code.
class OpenCLError : public std::runtime_error {
 public:
  OpenCLError(const std::string& what, cl_int code);
  cl_int code() const { return code_; }

 private:
  cl_int code_;
};

const char* errorName(cl_int code);
void check(cl_int code, const char* what);

std::string deviceString(cl_device_id device, cl_device_info what);
std::string platformString(cl_platform_id platform, cl_platform_info what);
// "platform / device" for reports.
std::string describeDevice(cl_device_id device);

// The first device of any platform (PoCL on a CPU here); throws when there is none.
cl_device_id defaultDevice();

}  // namespace cltrace::wrapper
