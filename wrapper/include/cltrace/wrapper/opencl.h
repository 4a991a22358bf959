// Small helpers over the OpenCL C API: error checking with readable names, device queries.
#pragma once

// A program that set its own target version first keeps it (cltrace's headers use OpenCL 1.2).
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <stdexcept>
#include <array>
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

// Whether `device` belongs to PoCL (its SPIR path needs passes::poclReady).
bool isPocl(cl_device_id device);

// A program's build `options` for cltrace's compile (clang for spir64), preceded by what makes
// it see the macros `device`'s own compiler defines: __OPENCL_VERSION__ from its OpenCL version,
// and exactly its extensions and OpenCL C features (clang would otherwise define every
// extension SPIR knows, cl_khr_fp16 included, and kernels that test them would take another
// path). A null device adds nothing.
std::vector<std::string> withDeviceMacros(cl_device_id device, const std::vector<std::string>& options);
// `options` with the working directory first on the include path, as PoCL's compiler has it (a
// header next to where the application runs is found even without -I, and before the -I ones).
std::vector<std::string> withWorkingDirectory(std::vector<std::string> options);

// A sub-device of `device` with one compute unit (clCreateSubDevices, partitioned equally), on
// which PoCL's CPU device runs the workgroups of a launch one after another; null when `device`
// has one compute unit already or cannot be split so. Made once per device and kept for the life
// of the process (PoCL's worker threads may still use it after the last queue on it is gone): the
// caller must not release it.
cl_device_id oneComputeUnitOf(cl_device_id device);
// The warning that kernel `kernel`, steered by what its atomics return, is traced `where` (such
// a part of the device), ending with `after`.
std::string tracedOnOneUnitWarning(const std::string& kernel, const std::string& where, const std::string& after);

// An in-order command queue on `device`: clCreateCommandQueueWithProperties where the platform
// is OpenCL 2.0 or later, clCreateCommandQueue on OpenCL 1.x platforms (whose ICD dispatch
// table may lack the 2.0 entry point: calling it there can hang in the ICD loader).
cl_command_queue createCommandQueue(cl_context context, cl_device_id device);

// What an image is: its kind, format and sizes, and the region clEnqueueReadImage and
// clEnqueueWriteImage take for all of it (arrays count their images in the next dimension).
struct ImageShape {
  cl_mem_object_type type = 0;
  cl_image_format format{};
  size_t width = 0, height = 0, depth = 0, arraySize = 0;
  size_t elementSize = 0;
  std::array<size_t, 3> region{};
  size_t bytes() const { return elementSize * region[0] * region[1] * region[2]; }  // tightly packed
};
ImageShape imageShapeOf(cl_mem image);
// Why `device` reads images of `format` wrongly, for a warning, or "" (PoCL 3.1 reads every
// pixel of a CL_R CL_HALF_FLOAT image as 234).
std::string imageFormatFlaw(cl_device_id device, const cl_image_format& format);

// A sampler in `context` (clCreateSampler, which every OpenCL version has). Throws OpenCLError
// naming `what`.
cl_sampler createSampler(cl_context context, bool normalizedCoords, cl_addressing_mode addressing,
                         cl_filter_mode filter, const std::string& what);

// How a device can take cltrace's instrumented programs (LLVM bitcode on the host).
enum class ProgramFormat {
  Spir,   // SPIR 1.2 bitcode through clCreateProgramWithBinary (cl_khr_spir, e.g. PoCL)
  SpirV,  // SPIR-V through clCreateProgramWithIL (the device reports an IL version)
  None,   // neither: cltrace cannot trace on this device
};
ProgramFormat programFormatOf(cl_device_id device);
// What the device says about program formats, for messages: its IL version ("" when none).
std::string ilVersionOf(cl_device_id device);
// The highest SPIR-V 1.x minor version an IL version string lists ("SPIR-V_1.0 SPIR-V_1.2" -> 2),
// capped at 4, the highest llvm-spirv-15 writes; -1 when it lists no SPIR-V.
int highestSpirvMinor(const std::string& ilVersion);
std::string describeProgramFormat(ProgramFormat format);

// Every device of every platform, numbered as `clinfo -l` numbers them.
struct DeviceEntry {
  cl_uint platform = 0;  // index of the platform
  cl_uint index = 0;     // index of the device within its platform
  cl_device_id id = nullptr;
  std::string name;  // "platform / device"
};
std::vector<DeviceEntry> listDevices();

// The first device that takes instrumented programs (PoCL on a CPU here); when no device
// does, the first device at all, so that the launch names what it lacks. Throws when there
// is no device.
cl_device_id defaultDevice();

// The device `spec` names: "P:D" (platform and device index, as listDevices numbers them) or
// a case-insensitive part of "platform / device". An empty spec takes $CLTRACE_DEVICE, and
// without it defaultDevice(). Throws std::invalid_argument, listing the devices, when nothing
// or more than one device matches.
cl_device_id selectDevice(const std::string& spec);

}  // namespace cltrace::wrapper
