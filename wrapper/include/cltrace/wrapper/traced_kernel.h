// The launch protocol: run one kernel launch instrumented on any OpenCL device and produce its
// trace, leaving every buffer as the uninstrumented kernel would.
//
//   build count/trace programs -> snapshot buffers the kernel may write -> count run ->
//   check diagnostics -> exclusive prefix sum -> restore buffers -> trace run -> check
//   overflow -> read records -> rebase addresses -> write the trace file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cltrace/passes/instrumenter.h"
#include "cltrace/trace_file.h"
#include "cltrace/wrapper/opencl.h"

namespace cltrace::wrapper {

// What the host bound to one original kernel argument.
struct ArgBinding {
  enum class Kind { Unset, Buffer, Scalar, Local, Image, Sampler } kind = Kind::Unset;
  cl_mem buffer = nullptr;     // Buffer, or Image: the image
  std::vector<uint8_t> bytes;  // Scalar value
  size_t localSize = 0;        // Local: bytes of __local memory
  cl_sampler sampler = nullptr;  // Sampler

  static ArgBinding ofBuffer(cl_mem b);
  static ArgBinding ofScalar(const void* data, size_t size);
  static ArgBinding ofLocal(size_t size);
  // Images and samplers are passed to the kernel as they are: the passes trace buffer accesses,
  // and neither is restored between the count and trace runs (read_write images are refused).
  static ArgBinding ofImage(cl_mem image);
  static ArgBinding ofSampler(cl_sampler s);
};

// How a launch's image arguments use `image` (one or more may be bound to it): whether one reads
// it (is not write_only), whether one writes it, and their list for messages ("0 (src) and
// 3 (dst)").
struct ImageUse {
  bool read = false, written = false;
  std::string arguments;
};
ImageUse imageUse(cl_mem image, const std::vector<ArgBinding>& args, const std::vector<passes::KernelArg>& params);

struct LaunchOptions {
  uint64_t alignment = 256;  // alignment of buffers in the virtual layout (power of two)
  bool compress = true;      // zstd-compress the trace body (about 46x smaller for mm, and faster to write)
  // Called after the buffers are restored, just before the trace run. Tests use it to make
  // the trace run see different data than the count run did.
  std::function<void(cl_command_queue)> beforeTraceRun;
  // Put the buffers back as they were before the launch once the trace is written (the caller
  // then runs the kernel itself, e.g. with a work-group size of its own). The trace run then
  // does not print.
  bool restoreAfterTrace = false;
  // Whether the kernel's printf calls print in the trace run (the count run never prints).
  // False where the caller runs the kernel itself afterwards in any case (a stand-in device).
  bool traceRunPrints = true;
  // Where to put the trace run's event (the caller releases it); null: no event. With several
  // slices, the last slice's.
  cl_event* traceRunEvent = nullptr;
  // Most bytes of packed records (packed_record.h) held at once. A launch that makes more is traced in slices of
  // work-group layers along its slowest dimension (at least one layer each), each slice's
  // records written to the file before the next slice runs; the trace is the same.
  uint64_t traceBufferBytes = uint64_t{1} << 28;
  // Seconds each of the count and trace runs may take before the launch is given up as hung
  // (0: countRunLimitSeconds and traceRunLimitSeconds work them out). A hung kernel cannot be
  // stopped: cltrace then says so on stderr and ends the process with status 1.
  double runLimitSeconds = 0;
};

// The count run's time limit, if it has one: `options.runLimitSeconds` when set, else five
// minutes for a kernel with a barrier that not every work-item may reach (PoCL can hang on one,
// and nothing ran before to measure the kernel by), else none.
std::optional<double> countRunLimitSeconds(const LaunchOptions& options, const passes::KernelReport& report);
// The trace run's time limit: `options.runLimitSeconds` when set, else 50 times the count run's
// kernel time and at least two minutes (the trace kernel takes two to five times the count
// kernel's time on PoCL, and either includes the device's compile on a first launch).
double traceRunLimitSeconds(const LaunchOptions& options, double countKernelSeconds);

// One trace run slice: `layers` consecutive work-group layers from `firstLayer`, `units`
// packed record units.
struct TraceSlice {
  uint64_t firstLayer = 0, layers = 0, units = 0;
  bool operator==(const TraceSlice& o) const {
    return firstLayer == o.firstLayer && layers == o.layers && units == o.units;
  }
};
// Groups `layers` layers of `layerItems` work-items each (count slots as the count run wrote
// them, kCountSlotsPerWorkItem per work-item) into slices of at most `budgetUnits` units; a
// layer larger than the budget is a slice of its own.
std::vector<TraceSlice> sliceLayers(const uint64_t* countSlots, uint64_t layers, uint64_t layerItems,
                                    uint64_t budgetUnits);

struct LaunchResult {
  TraceHeader header;
  std::vector<std::string> warnings;  // e.g. addresses outside every buffer, per instruction
  uint64_t outsideAccesses = 0;       // accesses that fell outside every known buffer
  double countSeconds = 0, traceSeconds = 0;  // wall time of the two runs with their transfers
  double countKernelSeconds = 0, traceKernelSeconds = 0;  // the kernels alone (enqueue to finish)
  double launchSeconds = 0;  // the whole traced launch: snapshots, both runs, rebasing, file
  uint64_t deviceRecordBytes = 0;  // what the trace run wrote (packed records, packed_record.h)
  uint64_t traceSlices = 0;        // trace kernel enqueues (LaunchOptions::traceBufferBytes)
};

// Thrown when a launch cannot be traced faithfully (overflow, bad arguments); what() says why.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The options of a program's build (as words) that the device's own compiler acts on, not
// only clang's front end: floating-point modes such as -cl-denorms-are-zero and
// -cl-fast-relaxed-math, and -cl-opt-disable. The instrumented programs are built with them,
// so that the trace run computes what the program's kernel computes.
std::string deviceBuildOptions(const std::vector<std::string>& options);

// An instrumented kernel built for one device; reusable across launches.
class TracedKernel {
 public:
  // `buildOptions`: deviceBuildOptions of the program's options.
  TracedKernel(cl_context context, cl_device_id device, passes::InstrumentedKernel kernel,
               const std::string& buildOptions = "");
  ~TracedKernel();
  TracedKernel(const TracedKernel&) = delete;
  TracedKernel& operator=(const TracedKernel&) = delete;

  const passes::InstrumentedKernel& instrumented() const { return kernel_; }

  // Whether the trace run writes exactly what the uninstrumented kernel writes. True for SPIR:
  // the device compiles the same LLVM IR its source compile makes, plus the recording. False
  // for SPIR-V: the driver's IL path may contract floating-point operations differently from
  // its source path (llvm-spirv's reverse translation, as PoCL 4+ uses, drops llvm.fmuladd's
  // licence to fuse), so callers then set LaunchOptions::restoreAfterTrace and run the
  // program's own kernel afterwards. False too under -cl-fast-relaxed-math and
  // -cl-unsafe-math-optimizations, which the device's compiler applies differently to the
  // program's source (vectorised across work-items) than to the instrumented kernel.
  bool writesExactly() const { return format_ == ProgramFormat::Spir && !approximateMath_; }

  // Runs the launch traced and writes the trace file to `tracePath`. When it throws, every
  // buffer is as it was before the call.
  LaunchResult launch(cl_command_queue queue, const std::vector<ArgBinding>& args,
                      const NDRange& range, const std::string& tracePath,
                      const LaunchOptions& options = {});

 private:
  void release();
  // Host memory the device reads and writes in place (CL_MEM_USE_HOST_PTR: no copies on CPU
  // devices), kept for the next launch: fresh memory costs a page fault per 4 KiB page.
  struct SharedBuffer;
  std::unique_ptr<SharedBuffer> counts_, bounds_, control_, records_;
  SharedBuffer& shared(std::unique_ptr<SharedBuffer>& slot, uint64_t bytes);
  void setOriginalArgs(cl_kernel k, const std::vector<ArgBinding>& args);
  // The steps of launch(): argument kinds checked and each buffer's size; the count run and its
  // diagnostics; the trace run, in slices, with its records rebased and written to the file.
  struct CountRun;
  std::map<cl_mem, uint64_t> bufferSizesOf(const std::vector<ArgBinding>& args) const;
  std::unique_ptr<CountRun> runCount(cl_command_queue queue, const std::vector<ArgBinding>& args,
                                     const NDRange& range, const std::map<cl_mem, uint64_t>& bufferSizes,
                                     const LaunchOptions& options, LaunchResult& result);
  TraceHeader headerFor(const NDRange& range, const LaunchOptions& options) const;
  // __local memory a workgroup uses: the kernel's __local variables and arguments (at most 2^32 - 1).
  uint32_t localMemoryBytes(const std::vector<ArgBinding>& args) const;
  // Throws TraceError when the kernel's reqd_work_group_size is not the launch's local size.
  void requireCompiledLocalSize(const NDRange& range) const;
  // Throws TraceError when the local size passes the device's limits for the kernel.
  void requireDeviceWorkGroupLimits(const NDRange& range) const;
  // Throws TraceError when the launch needs more local memory than the device has.
  void requireLocalMemory(const std::vector<ArgBinding>& args) const;
  // `layoutBases`: each argument's base in the trace's layout (0 for non-buffers).
  void runTraceAndWrite(cl_command_queue queue, const std::vector<ArgBinding>& args, const NDRange& range,
                        const std::map<cl_mem, uint64_t>& bufferSizes, const std::vector<uint64_t>& layoutBases,
                        const CountRun& count, const std::string& tracePath, const LaunchOptions& options,
                        LaunchResult& result, bool& traceFileStarted);
  // The readable instruction with id `id` ("" for an id the kernel does not have).
  std::string instructionText(uint64_t id) const;

  cl_context context_;
  cl_device_id device_;
  ProgramFormat format_;
  bool approximateMath_;  // built with options that license approximate results (writesExactly)
  uint16_t launchTag_ = 0;  // 1..65535, the last launch's (see kDiagLaunchTagShift)
  passes::InstrumentedKernel kernel_;
  cl_program countProgram_ = nullptr, traceProgram_ = nullptr;
  cl_kernel countKernel_ = nullptr, traceKernel_ = nullptr;
};

// Builds SPIR bitcode for `device`: SPIR through clCreateProgramWithBinary ("-x spir") when the
// device has cl_khr_spir, SPIR-V through clCreateProgramWithIL when it reports IL support.
cl_program buildInstrumentedProgram(cl_context context, cl_device_id device,
                                    const std::string& bitcode, const std::string& buildOptions = "");

// Binds `args` to the first args.size() parameters of `k` (described by `params`, for messages).
// Throws TraceError for an unset argument, OpenCLError naming the argument when the driver
// refuses one.
void setKernelArgs(cl_kernel k, const std::vector<ArgBinding>& args,
                   const std::vector<passes::KernelArg>& params);

// `stem` + `suffix` as one file name, `stem` cut so that it fits in 255 bytes (Linux's NAME_MAX).
std::string fileNameFitting(const std::string& stem, const std::string& suffix);

// A trace is written as NAME.PID-TID.partial beside its path until it is complete: the process
// id in such a file name, or 0 for another name.
uint64_t partialTraceWriter(const std::string& fileName);

// Validates an NDRange: dimensions 1..3, no zero sizes, local dividing global.
void validateRange(const NDRange& range);

// Throws TraceError when argument `index` (`param`) is bound to a buffer of `bytes` bytes, more
// than the 32-bit offsets of packed records reach (4 GiB - 1), and the kernel accesses memory
// through it. TracedKernel checks each launch's buffers; `cltrace run` checks its --arg buffers
// before making them.
void requireAddressableBuffer(const passes::KernelReport& report, size_t index, const passes::KernelArg& param,
                              uint64_t bytes);

}  // namespace cltrace::wrapper
