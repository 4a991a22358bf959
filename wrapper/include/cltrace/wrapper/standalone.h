// Running a kernel with no host code: arguments described as text, launch manifests for
// bundled kernels. Used by `cltrace run` / `cltrace predict` and by the tests.
//
// Argument specifications (one per kernel argument, in order):
//   buffer:TYPE:COUNT[:INIT]   a __global/__constant buffer of COUNT elements of TYPE
//        INIT = zeros (default) | iota | random[:SEED] | fill:VALUE | file:PATH
//        (nothing may follow: zeros:x is refused; PATH may itself hold ':')
//   scalar:TYPE:VALUE          a by-value argument
//   local:BYTES                a __local buffer
//   image:ORDER/TYPE:WIDTH[xHEIGHT[xDEPTH]][:INIT]
//                              an image1d_t, image2d_t or image3d_t (by the sizes given) of the
//        format CL_ORDER/CL_TYPE, lower case: ORDER = r | rg | rgba | bgra, TYPE = float |
//        half_float | unorm_int8 | unorm_int16 | snorm_int8 | snorm_int16 | signed_int8 |
//        signed_int16 | signed_int32 | unsigned_int8 | unsigned_int16 | unsigned_int32;
//        INIT as for buffers, over the channel values (rgba/unorm_int8 as uchar: iota 0, 1, ...)
//   sampler:ADDRESSING:FILTER[:normalized]
//        ADDRESSING = none | clamp_to_edge | clamp | repeat | mirrored_repeat (these two need
//        normalized), FILTER = nearest | linear
// TYPE is an OpenCL scalar or vector type: char uchar short ushort int uint long ulong float
// double, optionally followed by 2, 3, 4, 8 or 16 (float4).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cltrace/wrapper/traced_kernel.h"

namespace cltrace::wrapper {

struct ArgSpec {
  enum class Kind { Buffer, Scalar, Local, Image, Sampler } kind = Kind::Buffer;
  std::string type;     // element type for Buffer and Scalar; Image: its channel values' type
  uint64_t count = 0;   // elements (Buffer); Image: channel values (width x height x depth x channels)
  std::string init = "zeros";
  uint64_t seed = 1;    // random
  std::string value;    // fill / scalar value / file path
  uint64_t bytes = 0;   // Local
  std::string text;     // as written
  // Where it was written, for errors found when it is used: empty on the command line, or
  // `launch manifest PATH: "args"[I]`.
  std::string origin;
  // Image
  cl_image_format format{};
  uint32_t imageDims = 0;                // 1 to 3
  uint64_t imageSize[3] = {1, 1, 1};     // width, height, depth
  // Sampler
  cl_addressing_mode addressing = CL_ADDRESS_NONE;
  cl_filter_mode filter = CL_FILTER_NEAREST;
  bool normalizedCoords = false;

  // A buffer or image filled from a file (file:PATH).
  bool readsFile() const { return (kind == Kind::Buffer || kind == Kind::Image) && init == "file"; }
};

// Throws std::invalid_argument naming what is wrong.
ArgSpec parseArgSpec(const std::string& text);
// A non-negative integer: decimal (a leading zero does not make it octal) or 0x-hexadecimal.
// Throws std::invalid_argument "'TEXT' is negative", "... is not a non-negative integer" or
// "... does not fit in 64 bits".
uint64_t parseUnsigned(const std::string& text);
// `text` in lower case (ASCII), for names read in any case.
std::string lowerCase(std::string text);
// Bytes of one element of an OpenCL type name ("float4" -> 16); throws for unknown types.
uint64_t typeSize(const std::string& type);

struct RunSpec {
  std::string sourcePath;
  std::string kernel;
  std::vector<std::string> buildOptions;
  NDRange range;
  // No local size was given: range.local is the kernel's reqd_work_group_size (runStandalone
  // refuses a kernel without one: cltrace does not guess work-group sizes).
  bool localFromKernel = false;
  std::vector<ArgSpec> args;
  std::string argsManifest;  // the launch manifest `args` came from (named in their errors), or ""
};

// The launch manifest next to a kernel source: kernels/X.cl -> kernels/X.json.
std::filesystem::path manifestPath(const std::string& sourcePath);

// Fills `spec` from the launch manifest next to a bundled kernel where one exists; fields already
// set in `spec` win. Returns false when there is no manifest. A manifest is a JSON object with
// the keys (no others, none twice):
//   "kernel": "NAME"                       needed unless the caller has a kernel name
//   "global": [X, Y, Z], "local": [...]    1 to 3 sizes each, the same number; needed unless the
//   "offset": [...]                        caller has an NDRange; offset optional (0s)
//   "args": ["SPEC", ...]                  argument specifications as above; file: paths are
//                                          relative to the manifest
//   "build_options": ["-DN=4", ...]
// Sizes are JSON integers in [0, 2^64). Throws std::invalid_argument naming the manifest and the
// key (and element) that is wrong; every key is checked, also those the caller's values override.
bool applyManifest(RunSpec& spec, bool haveKernel, bool haveRange, bool haveArgs,
                   bool haveOptions);

struct RunOutput {
  LaunchResult launch;                       // when traced
  std::vector<std::vector<uint8_t>> buffers; // final contents of each buffer argument, in order
  double kernelSeconds = 0;                  // uninstrumented run (when not traced), the second enqueue
  double firstKernelSeconds = 0;             // its first enqueue: the device's compile for the sizes
  double instrumentSeconds = 0;              // compile with clang-15 and instrument
  double buildSeconds = 0;                   // build the instrumented programs on the device
  double traceSeconds = 0;                   // count and trace runs with transfers, file written
  std::string device;
  passes::KernelReport report;               // what was instrumented
};

// Runs the kernel once on `device` (default device when null). With a trace path the launch
// is traced; without, it runs the original kernel (for comparisons and timing). `warmUp`
// first runs the same launch once (traced or not) from the same initial buffers, so timings
// exclude the device's one-off compilation for the work-group size. `instrumented`, when set,
// receives the passes' report (with its warnings) before anything runs: a launch the warnings
// are about may not come back (a device hanging on a barrier not every work-item reaches).
RunOutput runStandalone(const RunSpec& spec, const std::string& tracePath,
                        const LaunchOptions& options = {}, cl_device_id device = nullptr,
                        bool warmUp = false,
                        const std::function<void(const passes::KernelReport&)>& instrumented = {});

// The text of a kernel source file; std::invalid_argument naming the path when unreadable or
// not text (a NUL byte: a trace or a binary given by mistake).
std::string readKernelSource(const std::string& path);

// Where argument specs were written: a wrong count lists the forms the kernel takes in that
// spelling (`--arg buffer:float:COUNT ...`, or a manifest's ["buffer:float:COUNT", ...]).
enum class ArgSpelling { CommandLine, Manifest };

// Checks the specs against the kernel's parameters; throws std::invalid_argument naming the
// argument that does not fit.
void checkArgs(const std::vector<ArgSpec>& specs, const std::vector<passes::KernelArg>& params,
               ArgSpelling spelling = ArgSpelling::CommandLine);

}  // namespace cltrace::wrapper
