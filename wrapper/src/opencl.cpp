#include "cltrace/wrapper/opencl.h"

namespace cltrace::wrapper {

OpenCLError::OpenCLError(const std::string& what, cl_int code)
    : std::runtime_error(what + " failed: " + errorName(code) + " (" + std::to_string(code) + ")"),
      code_(code) {}

const char* errorName(cl_int code) {
  switch (code) {
#define CASE(x) \
  case x:       \
    return #x;
    CASE(CL_SUCCESS) CASE(CL_DEVICE_NOT_FOUND) CASE(CL_DEVICE_NOT_AVAILABLE)
    CASE(CL_COMPILER_NOT_AVAILABLE) CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    CASE(CL_OUT_OF_RESOURCES) CASE(CL_OUT_OF_HOST_MEMORY) CASE(CL_BUILD_PROGRAM_FAILURE)
    CASE(CL_INVALID_VALUE) CASE(CL_INVALID_DEVICE) CASE(CL_INVALID_CONTEXT)
    CASE(CL_INVALID_COMMAND_QUEUE) CASE(CL_INVALID_MEM_OBJECT) CASE(CL_INVALID_BINARY)
    CASE(CL_INVALID_BUILD_OPTIONS) CASE(CL_INVALID_PROGRAM) CASE(CL_INVALID_PROGRAM_EXECUTABLE)
    CASE(CL_INVALID_KERNEL_NAME) CASE(CL_INVALID_KERNEL) CASE(CL_INVALID_ARG_INDEX)
    CASE(CL_INVALID_ARG_VALUE) CASE(CL_INVALID_ARG_SIZE) CASE(CL_INVALID_KERNEL_ARGS)
    CASE(CL_INVALID_WORK_DIMENSION) CASE(CL_INVALID_WORK_GROUP_SIZE)
    CASE(CL_INVALID_WORK_ITEM_SIZE) CASE(CL_INVALID_GLOBAL_OFFSET)
    CASE(CL_INVALID_BUFFER_SIZE) CASE(CL_INVALID_GLOBAL_WORK_SIZE)
    CASE(CL_INVALID_OPERATION) CASE(CL_INVALID_PLATFORM) CASE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
#undef CASE
    default:
      return "CL_UNKNOWN_ERROR";
  }
}

void check(cl_int code, const char* what) {
  if (code != CL_SUCCESS) throw OpenCLError(what, code);
}

std::string deviceString(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  check(clGetDeviceInfo(device, what, 0, nullptr, &size), "clGetDeviceInfo");
  std::string s(size, '\0');
  check(clGetDeviceInfo(device, what, size, s.data(), nullptr), "clGetDeviceInfo");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string platformString(cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  check(clGetPlatformInfo(platform, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string s(size, '\0');
  check(clGetPlatformInfo(platform, what, size, s.data(), nullptr), "clGetPlatformInfo");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string describeDevice(cl_device_id device) {
  cl_platform_id platform = nullptr;
  check(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr),
        "clGetDeviceInfo(CL_DEVICE_PLATFORM)");
  return platformString(platform, CL_PLATFORM_NAME) + " / " + deviceString(device, CL_DEVICE_NAME);
}

cl_device_id defaultDevice() {
  cl_uint count = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &count);
  if (err != CL_SUCCESS || count == 0)
    throw std::runtime_error(
        "no OpenCL platform found (install pocl-opencl-icd, or run scripts/setup.sh)");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  for (cl_platform_id p : platforms) {
    cl_device_id device = nullptr;
    cl_uint n = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, &n) == CL_SUCCESS && n > 0) return device;
  }
  throw std::runtime_error("no OpenCL device found on any platform");
}

}  // namespace cltrace::wrapper
