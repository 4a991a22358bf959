#include "cltrace/wrapper/opencl.h"

#include <CL/cl_ext.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "cltrace/wrapper/standalone.h"

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

namespace {

bool isIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

std::vector<std::string> withDeviceMacros(cl_device_id device, const std::vector<std::string>& programOptions) {
  if (!device) return programOptions;
  std::vector<std::string> options;
  // "OpenCL <major>.<minor> <vendor-specific>"
  const std::string version = deviceString(device, CL_DEVICE_VERSION);
  unsigned major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "OpenCL %u.%u", &major, &minor) == 2 && major < 10 && minor < 10)
    options.push_back("-D__OPENCL_VERSION__=" + std::to_string(major * 100 + minor * 10));
  std::string extensions = "-cl-ext=-all";
  std::istringstream words(deviceString(device, CL_DEVICE_EXTENSIONS));
  for (std::string name; words >> name;) {
    extensions += ",+" + name;
    // clang defines the macros of the extensions it knows; the others (cl_khr_spir,
    // cl_khr_command_buffer, ...) the device's compiler defines too.
    if (isIdentifier(name)) options.push_back("-D" + name + "=1");
    // OpenCL C 3.0 wants each extension's feature set alike (clang refuses the compile else).
    if (name == "cl_khr_fp64") extensions += ",+__opencl_c_fp64";
    if (name == "cl_khr_3d_image_writes") extensions += ",+__opencl_c_3d_image_writes";
  }
  // The device's OpenCL C 3.0 features (an OpenCL 3.0 query; older devices refuse it).
  size_t bytes = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &bytes) == CL_SUCCESS && bytes > 0) {
    std::vector<cl_name_version> features(bytes / sizeof(cl_name_version));
    if (clGetDeviceInfo(device, CL_DEVICE_OPENCL_C_FEATURES, bytes, features.data(), nullptr) == CL_SUCCESS)
      for (const cl_name_version& f : features) extensions += std::string(",+") + f.name;
  }
  options.insert(options.end(), {"-Xclang", extensions});  // a front-end option
  options.insert(options.end(), programOptions.begin(), programOptions.end());
  return options;
}

std::vector<std::string> withWorkingDirectory(std::vector<std::string> options) {
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (!ec) options.insert(options.begin(), "-I" + cwd.string());
  return options;
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

namespace {

cl_platform_id platformOf(cl_device_id device) {
  cl_platform_id platform = nullptr;
  check(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr),
        "clGetDeviceInfo(CL_DEVICE_PLATFORM)");
  return platform;
}

}  // namespace

std::string describeDevice(cl_device_id device) {
  return platformString(platformOf(device), CL_PLATFORM_NAME) + " / " + deviceString(device, CL_DEVICE_NAME);
}

bool isPocl(cl_device_id device) {
  return platformString(platformOf(device), CL_PLATFORM_NAME) == "Portable Computing Language";
}

namespace {

cl_device_id splitOffOneComputeUnit(cl_device_id device) {
  cl_uint units = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr) != CL_SUCCESS || units < 2)
    return nullptr;
  const cl_device_partition_property equally[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_uint count = 0;
  if (clCreateSubDevices(device, equally, 0, nullptr, &count) != CL_SUCCESS || count == 0) return nullptr;
  std::vector<cl_device_id> parts(count);
  if (clCreateSubDevices(device, equally, count, parts.data(), nullptr) != CL_SUCCESS) return nullptr;
  for (cl_uint i = 1; i < count; ++i) clReleaseDevice(parts[i]);  // never used
  return parts[0];
}

}  // namespace

cl_device_id oneComputeUnitOf(cl_device_id device) {
  // Made once per device and never released: PoCL 3.1's worker threads may release a finished
  // command's event after its queue and context are gone, and a sub-device released by then
  // crashes them (a blocking read, then the queue, context and sub-device released, crashed
  // the process 12 times in 150; 0 in 150 with the sub-device kept).
  // (Never destroyed either: a host program with the layer loaded may launch during its exit.)
  static std::mutex& mutex = *new std::mutex;
  static std::map<cl_device_id, cl_device_id>& parts = *new std::map<cl_device_id, cl_device_id>;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, added] = parts.try_emplace(device, nullptr);
  if (added) it->second = splitOffOneComputeUnit(device);
  return it->second;
}

std::string tracedOnOneUnitWarning(const std::string& kernel, const std::string& where, const std::string& after) {
  return "kernel '" + kernel + "' is traced" + where +
         " (clCreateSubDevices), where its workgroups run one after another, so that what its atomics return, and "
         "with it the trace, is the same every run" +
         after;
}

ImageShape imageShapeOf(cl_mem image) {
  ImageShape shape;
  auto info = [&](cl_image_info what) {
    size_t v = 0;
    check(clGetImageInfo(image, what, sizeof v, &v, nullptr), "clGetImageInfo");
    return v;
  };
  check(clGetMemObjectInfo(image, CL_MEM_TYPE, sizeof shape.type, &shape.type, nullptr), "clGetMemObjectInfo");
  check(clGetImageInfo(image, CL_IMAGE_FORMAT, sizeof shape.format, &shape.format, nullptr), "clGetImageInfo");
  shape.width = info(CL_IMAGE_WIDTH);
  shape.height = info(CL_IMAGE_HEIGHT);
  shape.depth = info(CL_IMAGE_DEPTH);
  shape.arraySize = info(CL_IMAGE_ARRAY_SIZE);
  shape.elementSize = info(CL_IMAGE_ELEMENT_SIZE);
  shape.region = {shape.width,
                  shape.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? shape.arraySize : std::max<size_t>(shape.height, 1),
                  shape.type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? shape.arraySize : std::max<size_t>(shape.depth, 1)};
  return shape;
}

std::string imageFormatFlaw(cl_device_id device, const cl_image_format& format) {
  if (format.image_channel_order != CL_R || format.image_channel_data_type != CL_HALF_FLOAT || !isPocl(device))
    return "";
  return "PoCL reads every pixel of an r/half_float (CL_R, CL_HALF_FLOAT) image as 234 (seen with PoCL 3.1; "
         "rgba/half_float reads right): the kernel's results, and any address they pick, are then PoCL's, not "
         "the image's";
}

cl_sampler createSampler(cl_context context, bool normalizedCoords, cl_addressing_mode addressing,
                         cl_filter_mode filter, const std::string& what) {
  cl_int err = CL_SUCCESS;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // clCreateSamplerWithProperties is 2.0's
  cl_sampler sampler = clCreateSampler(context, normalizedCoords ? CL_TRUE : CL_FALSE, addressing, filter, &err);
#pragma GCC diagnostic pop
  check(err, what.c_str());
  return sampler;
}

cl_command_queue createCommandQueue(cl_context context, cl_device_id device) {
  cl_platform_id platform = platformOf(device);
  cl_int err = CL_SUCCESS;
  cl_command_queue queue = nullptr;
  if (platformString(platform, CL_PLATFORM_VERSION).rfind("OpenCL 1.", 0) == 0) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    queue = clCreateCommandQueue(context, device, 0, &err);
#pragma GCC diagnostic pop
    check(err, "clCreateCommandQueue");
  } else {
    queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
    check(err, "clCreateCommandQueueWithProperties");
  }
  return queue;
}

ProgramFormat programFormatOf(cl_device_id device) {
  if (deviceString(device, CL_DEVICE_EXTENSIONS).find("cl_khr_spir") != std::string::npos)
    return ProgramFormat::Spir;
  if (highestSpirvMinor(ilVersionOf(device)) >= 0) return ProgramFormat::SpirV;
  return ProgramFormat::None;
}

std::string ilVersionOf(cl_device_id device) {
  // Devices before OpenCL 2.1 do not know the query: no IL then.
  size_t size = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_IL_VERSION, 0, nullptr, &size) != CL_SUCCESS || size <= 1) return "";
  return deviceString(device, CL_DEVICE_IL_VERSION);
}

int highestSpirvMinor(const std::string& ilVersion) {
  constexpr int kTranslatorHighest = 4;
  int highest = -1;
  const std::string prefix = "SPIR-V_1.";
  for (size_t at = ilVersion.find(prefix); at != std::string::npos; at = ilVersion.find(prefix, at + 1)) {
    size_t digits = at + prefix.size(), end = digits;
    while (end < ilVersion.size() && std::isdigit(static_cast<unsigned char>(ilVersion[end]))) ++end;
    if (end == digits || end - digits > 3) continue;
    highest = std::max(highest, std::min(kTranslatorHighest, std::stoi(ilVersion.substr(digits, end - digits))));
  }
  return highest;
}

std::string describeProgramFormat(ProgramFormat format) {
  switch (format) {
    case ProgramFormat::Spir: return "SPIR 1.2 (cl_khr_spir)";
    case ProgramFormat::SpirV: return "SPIR-V (clCreateProgramWithIL)";
    case ProgramFormat::None: break;
  }
  return "neither SPIR nor SPIR-V: cannot trace";
}

std::vector<DeviceEntry> listDevices() {
  std::vector<DeviceEntry> devices;
  cl_uint count = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &count);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || count == 0) return devices;
  check(err, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  for (cl_uint p = 0; p < count; ++p) {
    cl_uint n = 0;
    // A platform without devices (say, a GPU driver on a machine without that GPU) answers
    // CL_DEVICE_NOT_FOUND: it simply contributes none.
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
    std::vector<cl_device_id> ids(n);
    check(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr), "clGetDeviceIDs");
    for (cl_uint d = 0; d < n; ++d) devices.push_back(DeviceEntry{p, d, ids[d], describeDevice(ids[d])});
  }
  return devices;
}

cl_device_id defaultDevice() {
  std::vector<DeviceEntry> devices = listDevices();
  if (devices.empty())
    throw std::runtime_error(
        "no OpenCL device found on any platform (install pocl-opencl-icd, or run scripts/setup.sh)");
  for (const DeviceEntry& d : devices)
    if (programFormatOf(d.id) != ProgramFormat::None) return d.id;
  return devices.front().id;
}

namespace {

std::string deviceList(const std::vector<DeviceEntry>& devices) {
  std::string list;
  for (const DeviceEntry& d : devices)
    list += "\n  " + std::to_string(d.platform) + ":" + std::to_string(d.index) + "  " + d.name;
  return list.empty() ? " (none)" : list;
}

}  // namespace

cl_device_id selectDevice(const std::string& spec) {
  std::string wanted = spec;
  std::string origin = "--device";
  if (wanted.empty()) {
    const char* env = std::getenv("CLTRACE_DEVICE");
    if (!env || !*env) return defaultDevice();
    wanted = env;
    origin = "CLTRACE_DEVICE";
  }
  std::vector<DeviceEntry> devices = listDevices();
  unsigned platform = 0, index = 0;
  char tail = 0;
  if (std::sscanf(wanted.c_str(), "%u:%u%c", &platform, &index, &tail) == 2) {
    for (const DeviceEntry& d : devices)
      if (d.platform == platform && d.index == index) return d.id;
    throw std::invalid_argument(origin + " '" + wanted + "': there is no device " + wanted +
                                "; the devices are:" + deviceList(devices));
  }
  std::vector<const DeviceEntry*> matches;
  for (const DeviceEntry& d : devices)
    if (lowerCase(d.name).find(lowerCase(wanted)) != std::string::npos) matches.push_back(&d);
  if (matches.size() == 1) return matches.front()->id;
  throw std::invalid_argument(origin + " '" + wanted + "' " +
                              (matches.empty() ? "names no device" : "names more than one device") +
                              "; the devices are:" + deviceList(devices));
}

}  // namespace cltrace::wrapper
