#include "cltrace/wrapper/traced_kernel.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include <unistd.h>

#include "cltrace/packed_record.h"
#include "cltrace/unit_record.h"
#include "cltrace/wrapper/device_activity.h"
#include "cltrace/wrapper/diagnostics.h"
#include "cltrace/wrapper/watchdog.h"

namespace cltrace::wrapper {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Releases an OpenCL buffer at scope exit.
struct ScopedMem {
  cl_mem mem = nullptr;
  ScopedMem() = default;
  explicit ScopedMem(cl_mem m) : mem(m) {}
  ScopedMem(ScopedMem&& o) noexcept : mem(std::exchange(o.mem, nullptr)) {}
  ScopedMem& operator=(ScopedMem&& o) noexcept {
    std::swap(mem, o.mem);
    return *this;
  }
  ~ScopedMem() {
    if (mem) clReleaseMemObject(mem);
  }
};

cl_mem createBuffer(cl_context context, size_t bytes, const char* what) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, std::max<size_t>(bytes, 8), nullptr, &err);
  check(err, what);
  return m;
}

std::string buildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// SPIR-V no newer than 1.`minor`, the highest the device takes.
std::string toSpirv(const std::string& bitcode, int minor) {
  namespace fs = std::filesystem;
  std::string dir = (fs::temp_directory_path() / "cltrace-spirv-XXXXXX").string();
  if (!mkdtemp(dir.data())) throw TraceError("cannot create a temporary directory");
  fs::path bc = fs::path(dir) / "k.bc", spv = fs::path(dir) / "k.spv";
  std::ofstream(bc, std::ios::binary).write(bitcode.data(), static_cast<std::streamsize>(bitcode.size()));
  std::string cmd = "llvm-spirv-15 --spirv-max-version=1." + std::to_string(minor) + " '" + bc.string() + "' -o '" +
                    spv.string() + "'";
  int status = std::system(cmd.c_str());
  std::ifstream in(spv, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (status != 0) throw TraceError("llvm-spirv-15 could not translate the instrumented kernel");
  return s.str();
}

// Linear global id of each work-item in trace file order (workgroups x-fastest, then the
// work-items of a group x-fastest).
std::vector<uint64_t> fileOrder(const NDRange& r) {
  std::vector<uint64_t> order;
  order.reserve(r.workItems());
  auto groups = r.groups();
  for (uint64_t gz = 0; gz < groups[2]; ++gz)
    for (uint64_t gy = 0; gy < groups[1]; ++gy)
      for (uint64_t gx = 0; gx < groups[0]; ++gx)
        for (uint64_t lz = 0; lz < r.local[2]; ++lz)
          for (uint64_t ly = 0; ly < r.local[1]; ++ly)
            for (uint64_t lx = 0; lx < r.local[0]; ++lx) {
              uint64_t x = gx * r.local[0] + lx, y = gy * r.local[1] + ly,
                       z = gz * r.local[2] + lz;
              order.push_back((z * r.global[1] + y) * r.global[0] + x);
            }
  return order;
}

// Options that let the device's compiler trade exact results for speed, which it does
// differently for the program's source than for the instrumented SPIR (PoCL's vectorised
// -cl-fast-relaxed-math division and square root differ from its scalar ones by an ulp).
bool hasApproximateMath(const std::string& buildOptions) {
  for (const std::string& o : passes::splitOptions(buildOptions))
    if (o == "-cl-fast-relaxed-math" || o == "-cl-unsafe-math-optimizations") return true;
  return false;
}

}  // namespace

std::optional<double> countRunLimitSeconds(const LaunchOptions& options, const passes::KernelReport& report) {
  if (options.runLimitSeconds > 0) return options.runLimitSeconds;
  if (!report.divergentBarriers.empty()) return 300.0;
  return std::nullopt;
}

double traceRunLimitSeconds(const LaunchOptions& options, double countKernelSeconds) {
  if (options.runLimitSeconds > 0) return options.runLimitSeconds;
  return std::max(120.0, 50 * countKernelSeconds);
}

std::vector<TraceSlice> sliceLayers(const uint64_t* countSlots, uint64_t layers, uint64_t layerItems,
                                    uint64_t budgetUnits) {
  std::vector<TraceSlice> slices;
  for (uint64_t layer = 0; layer < layers; ++layer) {
    uint64_t units = 0;
    for (uint64_t i = layer * layerItems; i < (layer + 1) * layerItems; ++i) units += countSlots[kCountSlotsPerWorkItem * i];
    if (slices.empty() || slices.back().units + units > budgetUnits) slices.push_back({layer, 0, 0});
    ++slices.back().layers;
    slices.back().units += units;
  }
  return slices;
}

namespace {

// `v` rounded up to a multiple of `a` into `out`; false (and `out` unset) where that passes 2^64.
bool alignUp(uint64_t v, uint64_t a, uint64_t* out) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(v, a - 1, &sum)) return false;
  *out = sum / a * a;
  return true;
}

// Uninitialised, 2 MiB-aligned host memory. No MADV_HUGEPAGE: where huge pages must first be
// compacted (THP defrag "madvise", the Debian default), faulting in 538 MB took 0.16-1.0 s
// against a steady 0.13-0.19 s with 4 KiB pages on the development machine, and memory kept
// between launches is faulted in only once either way.
class HostArray {
 public:
  explicit HostArray(uint64_t bytes) {
    // A size within 2 MiB of 2^64 has no aligned size: refused like any other too large.
    if (alignUp(std::max<uint64_t>(bytes, 1), kAlignment, &bytes_)) data_ = std::aligned_alloc(kAlignment, bytes_);
    if (!data_) throw TraceError("cannot allocate " + std::to_string(bytes_ ? bytes_ : bytes) + " bytes of host memory");
  }
  ~HostArray() { std::free(data_); }
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
  void* data() { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  static constexpr uint64_t kAlignment = 2u << 20;
  size_t bytes_ = 0;
  void* data_ = nullptr;
};

// A buffer mapped for the host until the end of the scope (the unmap is enqueued then).
class Mapping {
 public:
  Mapping(cl_command_queue queue, cl_mem mem, cl_map_flags flags, size_t bytes, const char* what)
      : queue_(queue), mem_(mem) {
    cl_int err = CL_SUCCESS;
    data_ = clEnqueueMapBuffer(queue, mem, CL_TRUE, flags, 0, std::max<size_t>(bytes, 1), 0, nullptr, nullptr, &err);
    check(err, what);
  }
  ~Mapping() { unmap(); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  void unmap() {
    if (!data_) return;
    clEnqueueUnmapMemObject(queue_, mem_, data_, 0, nullptr, nullptr);
    clFinish(queue_);
    data_ = nullptr;
  }

 private:
  cl_command_queue queue_;
  cl_mem mem_;
  void* data_ = nullptr;
};

}  // namespace

struct TracedKernel::SharedBuffer {
  HostArray array;
  cl_mem mem = nullptr;
  SharedBuffer(cl_context context, uint64_t bytes) : array(bytes) {
    cl_int err = CL_SUCCESS;
    mem = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, array.bytes(), array.data(), &err);
    check(err, "creating a cltrace buffer");
  }
  ~SharedBuffer() {
    if (mem) clReleaseMemObject(mem);
  }
};

TracedKernel::SharedBuffer& TracedKernel::shared(std::unique_ptr<SharedBuffer>& slot, uint64_t bytes) {
  if (!slot || slot->array.bytes() < bytes) {
    slot.reset();  // free the old memory before taking the new
    slot = std::make_unique<SharedBuffer>(context_, bytes);
  }
  return *slot;
}

ArgBinding ArgBinding::ofBuffer(cl_mem b) {
  ArgBinding a;
  a.kind = Kind::Buffer;
  a.buffer = b;
  return a;
}

ArgBinding ArgBinding::ofScalar(const void* data, size_t size) {
  ArgBinding a;
  a.kind = Kind::Scalar;
  a.bytes.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size);
  return a;
}

ArgBinding ArgBinding::ofLocal(size_t size) {
  ArgBinding a;
  a.kind = Kind::Local;
  a.localSize = size;
  return a;
}

ArgBinding ArgBinding::ofImage(cl_mem image) {
  ArgBinding a;
  a.kind = Kind::Image;
  a.buffer = image;
  return a;
}

ArgBinding ArgBinding::ofSampler(cl_sampler s) {
  ArgBinding a;
  a.kind = Kind::Sampler;
  a.sampler = s;
  return a;
}

ImageUse imageUse(cl_mem image, const std::vector<ArgBinding>& args, const std::vector<passes::KernelArg>& params) {
  ImageUse use;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == ArgBinding::Kind::Image && args[i].buffer == image) {
      (params[i].writeOnly ? use.written : use.read) = true;
      use.arguments += (use.arguments.empty() ? "" : " and ") + std::to_string(i) + " (" + params[i].name + ")";
    }
  return use;
}

void requireAddressableBuffer(const passes::KernelReport& report, size_t index, const passes::KernelArg& param,
                              uint64_t bytes) {
  // Packed records hold 32-bit offsets into the buffers the trace pass knows accesses derive from.
  if (bytes <= UINT32_MAX) return;
  for (const passes::AccessInfo& a : report.accesses)
    if (a.bufferArgument == static_cast<int32_t>(index))
      throw TraceError("argument " + std::to_string(index) + " (" + param.type + " " + param.name +
                       ") is bound to a buffer of " + std::to_string(bytes) +
                       " bytes; cltrace traces accesses to buffers of at most 4 GiB - 1");
}

void validateRange(const NDRange& r) {
  if (r.dims < 1 || r.dims > 3)
    throw TraceError("work dimensions must be 1, 2 or 3 (got " + std::to_string(r.dims) + ")");
  for (uint32_t d = 0; d < 3; ++d) {
    if (r.global[d] == 0) throw TraceError("global size is zero in dimension " + std::to_string(d));
    if (r.local[d] == 0) throw TraceError("local size is zero in dimension " + std::to_string(d));
    if (r.global[d] % r.local[d] != 0)
      throw TraceError("local size " + std::to_string(r.local[d]) + " does not divide global size " +
                       std::to_string(r.global[d]) + " in dimension " + std::to_string(d) +
                       " (cltrace traces uniform work-groups only, not OpenCL 2.0's non-uniform ones)");
    if (d >= r.dims && (r.global[d] != 1 || r.local[d] != 1 || r.offset[d] != 0))
      throw TraceError("dimension " + std::to_string(d) + " is beyond the work dimensions");
    uint64_t last = 0;
    if (__builtin_add_overflow(r.offset[d], r.global[d] - 1, &last))
      throw TraceError("global offset " + std::to_string(r.offset[d]) + " plus global size " +
                       std::to_string(r.global[d]) + " overflows 64 bits in dimension " + std::to_string(d));
  }
  // The tracer keeps per-work-item counts and offsets (16 bytes each): sizes whose product
  // overflows would wrap to small allocations.
  uint64_t items = 0, bytes = 0;
  if (__builtin_mul_overflow(r.global[0], r.global[1], &items) || __builtin_mul_overflow(items, r.global[2], &items) ||
      __builtin_mul_overflow(items, uint64_t{16}, &bytes))
    throw TraceError("the NDRange (" + std::to_string(r.global[0]) + " x " + std::to_string(r.global[1]) + " x " +
                     std::to_string(r.global[2]) + ") has too many work-items to trace (the limit is 2^60)");
}

std::string deviceBuildOptions(const std::vector<std::string>& options) {
  std::string kept;
  for (const std::string& o : options)
    if (o.rfind("-cl-", 0) == 0 && o.rfind("-cl-std=", 0) != 0 && o != "-cl-kernel-arg-info")
      kept += (kept.empty() ? "" : " ") + o;
  return kept;
}

cl_program buildInstrumentedProgram(cl_context context, cl_device_id device,
                                    const std::string& bitcode, const std::string& buildOptions) {
  cl_int err = CL_SUCCESS;
  cl_program program = nullptr;
  std::string options;
  switch (programFormatOf(device)) {
    case ProgramFormat::Spir: {
      const std::string spir = isPocl(device) ? passes::poclReady(bitcode) : bitcode;
      const auto* bytes = reinterpret_cast<const unsigned char*>(spir.data());
      size_t size = spir.size();
      cl_int status = CL_SUCCESS;
      program = clCreateProgramWithBinary(context, 1, &device, &size, &bytes, &status, &err);
      check(err, "clCreateProgramWithBinary (SPIR)");
      options = "-x spir -spir-std=1.2";
      break;
    }
    case ProgramFormat::SpirV: {
      std::string spirv = toSpirv(passes::spirvReady(bitcode), highestSpirvMinor(ilVersionOf(device)));
      program = clCreateProgramWithIL(context, spirv.data(), spirv.size(), &err);
      check(err, "clCreateProgramWithIL (SPIR-V)");
      break;
    }
    case ProgramFormat::None:
      throw TraceError("device '" + describeDevice(device) +
                       "' accepts neither SPIR (no cl_khr_spir among its extensions) nor SPIR-V (IL version '" +
                       ilVersionOf(device) + "'); cltrace cannot load instrumented kernels on it. `cltrace devices` "
                       "lists the devices and what each accepts");
  }
  if (!buildOptions.empty()) options += (options.empty() ? "" : " ") + buildOptions;
  err = clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    std::string log = buildLog(program, device);
    clReleaseProgram(program);
    throw OpenCLError("building the instrumented program:\n" + log + "\nclBuildProgram", err);
  }
  return program;
}

TracedKernel::TracedKernel(cl_context context, cl_device_id device,
                           passes::InstrumentedKernel kernel, const std::string& buildOptions)
    : context_(context),
      device_(device),
      format_(programFormatOf(device)),
      approximateMath_(hasApproximateMath(buildOptions)),
      kernel_(std::move(kernel)) {
  clRetainContext(context_);
  try {
    cl_int err = CL_SUCCESS;
    countProgram_ = buildInstrumentedProgram(context_, device_, kernel_.countBitcode, buildOptions);
    countKernel_ = clCreateKernel(countProgram_, kernel_.kernel.c_str(), &err);
    check(err, "clCreateKernel (count)");
    traceProgram_ = buildInstrumentedProgram(context_, device_, kernel_.traceBitcode, buildOptions);
    traceKernel_ = clCreateKernel(traceProgram_, kernel_.kernel.c_str(), &err);
    check(err, "clCreateKernel (trace)");
  } catch (...) {
    release();
    throw;
  }
}

TracedKernel::~TracedKernel() { release(); }

void TracedKernel::release() {
  if (countKernel_) clReleaseKernel(countKernel_);
  if (traceKernel_) clReleaseKernel(traceKernel_);
  if (countProgram_) clReleaseProgram(countProgram_);
  if (traceProgram_) clReleaseProgram(traceProgram_);
  countKernel_ = traceKernel_ = nullptr;
  counts_.reset();
  control_.reset();
  records_.reset();
  countProgram_ = traceProgram_ = nullptr;
  if (context_) clReleaseContext(context_);
  context_ = nullptr;
}

std::string TracedKernel::instructionText(uint64_t id) const {
  return id < kernel_.report.accesses.size() ? kernel_.report.accesses[id].text : "";
}

void TracedKernel::setOriginalArgs(cl_kernel k, const std::vector<ArgBinding>& args) {
  setKernelArgs(k, args, kernel_.args);
}

void setKernelArgs(cl_kernel k, const std::vector<ArgBinding>& args,
                   const std::vector<passes::KernelArg>& params) {
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgBinding& a = args[i];
    const passes::KernelArg& decl = params.at(i);
    cl_int err = CL_SUCCESS;
    switch (a.kind) {
      case ArgBinding::Kind::Buffer:
      case ArgBinding::Kind::Image:
        err = clSetKernelArg(k, static_cast<cl_uint>(i), sizeof(cl_mem), &a.buffer);
        break;
      case ArgBinding::Kind::Sampler:
        err = clSetKernelArg(k, static_cast<cl_uint>(i), sizeof(cl_sampler), &a.sampler);
        break;
      case ArgBinding::Kind::Scalar:
        err = clSetKernelArg(k, static_cast<cl_uint>(i), a.bytes.size(), a.bytes.data());
        break;
      case ArgBinding::Kind::Local:
        err = clSetKernelArg(k, static_cast<cl_uint>(i), a.localSize, nullptr);
        break;
      case ArgBinding::Kind::Unset:
        throw TraceError("argument " + std::to_string(i) + " (" + decl.name + ") is not set");
    }
    if (err != CL_SUCCESS)
      throw OpenCLError("setting argument " + std::to_string(i) + " (" + decl.name + ", " +
                            decl.type + ")",
                        err);
  }
}

namespace {

// Device-side copies of the buffers a launch may write (bound to any __global parameter), so
// the trace run starts from the count run's state and a failed launch can put them back.
// clEnqueueCopyBuffer works whatever host access the program gave its buffers.
class BufferSnapshots {
 public:
  BufferSnapshots(cl_context context, cl_command_queue queue, const std::vector<cl_mem>& buffers,
                  const std::map<cl_mem, uint64_t>& sizes)
      : queue_(queue) {
    snapshots_.reserve(buffers.size());
    for (cl_mem m : buffers) {
      Snapshot& s = snapshots_.emplace_back(Snapshot{m, {}, sizes.at(m)});
      if (s.size == 0) continue;
      s.copy.mem = createBuffer(context, s.size, "creating a buffer snapshot");
      check(clEnqueueCopyBuffer(queue, m, s.copy.mem, 0, 0, s.size, 0, nullptr, nullptr), "snapshotting a buffer");
    }
    check(clFinish(queue), "clFinish (snapshots)");
  }
  void restore() {
    for (const Snapshot& s : snapshots_)
      if (s.size)
        check(clEnqueueCopyBuffer(queue_, s.copy.mem, s.mem, 0, 0, s.size, 0, nullptr, nullptr), "restoring a buffer");
    check(clFinish(queue_), "clFinish (restoring buffers)");
  }

 private:
  struct Snapshot {
    cl_mem mem;
    ScopedMem copy;
    uint64_t size;
  };
  cl_command_queue queue_;
  std::vector<Snapshot> snapshots_;
};

// Images a launch both reads and writes (one image bound to a read_only and a write_only
// argument: an in-place update), kept on the host: the count run writes them like the trace
// run, so they are put back between the runs (and after them where buffers are), or the trace
// run would read the count run's pixels and the launch would write them twice. Images only
// written need nothing: both runs write them the same.
class ImageSnapshots {
 public:
  ImageSnapshots(cl_command_queue queue, const std::vector<ArgBinding>& args,
                 const std::vector<passes::KernelArg>& params)
      : queue_(queue) {
    std::set<cl_mem> seen;
    for (const ArgBinding& a : args)
      if (a.kind == ArgBinding::Kind::Image && seen.insert(a.buffer).second)
        if (const ImageUse use = imageUse(a.buffer, args, params); use.read && use.written)
          snapshots_.push_back(take(a.buffer, use.arguments));
  }
  void restore() {
    for (const Snapshot& s : snapshots_)
      check(clEnqueueWriteImage(queue_, s.image, CL_FALSE, kOrigin, s.region.data(), 0, 0, s.pixels.data(), 0,
                                nullptr, nullptr),
            "restoring an image");
    if (!snapshots_.empty()) check(clFinish(queue_), "clFinish (restoring images)");
  }

 private:
  static constexpr size_t kOrigin[3] = {0, 0, 0};
  struct Snapshot {
    cl_mem image;
    std::array<size_t, 3> region;
    std::vector<uint8_t> pixels;
  };
  Snapshot take(cl_mem image, const std::string& arguments) {
    cl_mem_flags flags = 0;
    check(clGetMemObjectInfo(image, CL_MEM_FLAGS, sizeof flags, &flags, nullptr), "clGetMemObjectInfo");
    if (flags & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY))
      throw TraceError("arguments " + arguments + " are one image, read and written by the launch, which the host "
                       "may not read and write back (CL_MEM_HOST_*): cltrace cannot put it back between its count "
                       "and trace runs");
    const ImageShape shape = imageShapeOf(image);
    Snapshot s{image, shape.region, std::vector<uint8_t>(shape.bytes())};
    check(clEnqueueReadImage(queue_, image, CL_TRUE, kOrigin, s.region.data(), 0, 0, s.pixels.data(), 0, nullptr,
                             nullptr),
          "snapshotting an image");
    return s;
  }
  cl_command_queue queue_;
  std::vector<Snapshot> snapshots_;
};

std::array<size_t, 3> sizesOf(const std::array<uint64_t, 3>& v) {
  return {static_cast<size_t>(v[0]), static_cast<size_t>(v[1]), static_cast<size_t>(v[2])};
}

// The file a trace for `path` goes to: a link is followed to the file it names, so that the
// link stays a link (a link to nothing is refused first: requireCreatable).
std::string finalPathFor(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_symlink(path, ec)) return path;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::is_regular_file(status)) return path;
  const std::filesystem::path target = std::filesystem::canonical(path, ec);
  return ec ? path : target.string();
}

// Where a trace for `path` is written before it is complete (see runTraceAndWrite): beside
// it, named for this process and thread, so that two runs given one output path never write
// or rename each other's file (the last to finish wins), and short enough for any name the
// folder takes (a 255-byte name plus ".partial" was refused).
std::string partialPathFor(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) return path;
  const std::filesystem::path final = finalPathFor(path);
  const std::string suffix = "." + std::to_string(::getpid()) + "-" + std::to_string(::gettid()) + ".partial";
  return (final.parent_path() / fileNameFitting(final.filename().string(), suffix)).string();
}

}  // namespace

std::string fileNameFitting(const std::string& stem, const std::string& suffix) {
  constexpr size_t kNameMax = 255;  // NAME_MAX of Linux file systems
  return stem.substr(0, kNameMax - std::min(suffix.size(), kNameMax)) + suffix;
}

uint64_t partialTraceWriter(const std::string& fileName) {
  const std::string tail = ".partial";  // partialPathFor's NAME.PID-TID.partial
  if (fileName.size() <= tail.size() || fileName.compare(fileName.size() - tail.size(), tail.size(), tail) != 0)
    return 0;
  const std::string ids = fileName.substr(0, fileName.size() - tail.size());
  const size_t dot = ids.rfind('.'), dash = ids.rfind('-');
  if (dot == std::string::npos || dash == std::string::npos || dash < dot + 2 || dash + 1 == ids.size() ||
      dash - dot - 1 > 9 || ids.size() - dash - 1 > 9)
    return 0;
  for (size_t i = dot + 1; i < ids.size(); ++i)
    if (i != dash && !std::isdigit(static_cast<unsigned char>(ids[i]))) return 0;
  return std::stoull(ids.substr(dot + 1, dash - dot - 1));
}

namespace {

// Why PoCL may misbehave on `report`'s kernel, whose barriers not every work-item may reach
// ("crash on", "spin forever on"), and what to do; empty when every barrier is reached.
std::string divergentBarrierAdvice(const passes::KernelReport& report, const char* pocl) {
  if (report.divergentBarriers.empty()) return "";
  std::string ids;
  for (uint32_t id : report.divergentBarriers) ids += (ids.empty() ? "[" : ", [") + std::to_string(id) + "]";
  return "its barrier " + ids + " may not be reached by every work-item of a workgroup (warned above), and PoCL can " +
         pocl + " such a barrier; let every work-item reach each barrier";
}

// What the driver is doing during the count or trace run (`run`), for a crash handler to say
// (DeviceActivity).
std::string runActivity(const passes::KernelReport& report, const char* run) {
  const std::string advice = divergentBarrierAdvice(report, "crash on");
  return std::string("the ") + run + " run of kernel '" + report.name + "'" + (advice.empty() ? "" : ": " + advice);
}

// Why a count run in which a work-item left its buffers may not end (its loads there read 0),
// in the words of both messages that say so.
constexpr const char* kStrayWait = "a loop may wait for a value read there, or for work-items that left";

// `seconds` as the watchdogs' messages give them: whole seconds, "12 s".
std::string wholeSeconds(double seconds) {
  char text[64];
  std::snprintf(text, sizeof text, "%.0f s", seconds);
  return text;
}

// What cltrace says when the count or trace run (`run`) outlives its limit (see
// LaunchOptions::runLimitSeconds); `countKernelSeconds` for the trace run. `strayed`: a
// work-item of the count run went outside its buffers (the likelier cause then).
std::string hungRunMessage(const passes::KernelReport& report, const char* run, double limitSeconds,
                           std::optional<double> countKernelSeconds = std::nullopt, bool strayed = false) {
  const std::string times = "after " + wholeSeconds(limitSeconds) + " of kernel time";
  std::string took;
  if (countKernelSeconds) {
    char count[80];
    std::snprintf(count, sizeof count, " (the count run took %.3g s)", *countKernelSeconds);
    took = count;
  }
  // Never both: a kernel with barriers sets no word when it strays (instrument.cpp).
  std::string why = strayed ? std::string("a work-item accessed memory outside its buffers, which the count run skips "
                                          "(a load reads 0): ") +
                                  kStrayWait + " (is a buffer smaller than the kernel reads or writes?)"
                            : divergentBarrierAdvice(report, "spin forever on");
  if (why.empty()) why = "the device may be stuck in it";
  return "kernel '" + report.name + "': the " + run + " run has not finished " + times + took +
         " and cannot be stopped, so cltrace gives up: " + why +
         ". A kernel that is only slow needs a longer limit: --trace-timeout SECONDS (CLTRACE_TRACE_TIMEOUT under "
         "cltrace wrap)";
}

// Seconds without a work-item returning after which a count run that went outside a buffer is
// given up (StalledRunWatchdog).
constexpr double kStrayStallSeconds = 10.0;

// How long a count run of a kernel that waits for its workgroup (barriers, work_group_*:
// the report's waitsForGroup) may go without any work-item returning.
constexpr double kStuckStallSeconds = 120.0;

// What cltrace says when the count run of kernel `name`, which waits for its workgroup, has not
// finished `seconds` after it began, no work-item having returned for kStuckStallSeconds.
std::string stuckRunMessage(const std::string& name, double seconds) {
  const std::string stall = wholeSeconds(kStuckStallSeconds), after = wholeSeconds(seconds);
  return "kernel '" + name + "': in the count run no work-item has returned for " + stall + " (" + after +
         " in all): the device seems stuck in it (PoCL can hang on an instrumented kernel whose barriers sit in "
         "branches, where the plain kernel runs). Nothing was traced; the run cannot be stopped, so cltrace gives "
         "up (a kernel whose workgroups are only that slow can be given --trace-timeout SECONDS to wait longer)";
}

// What cltrace says when the count run of kernel `name` has not finished `seconds` after it
// began, a work-item having gone outside a buffer and none having returned for
// kStrayStallSeconds.
std::string strayedRunMessage(const std::string& name, double seconds) {
  const std::string stall = wholeSeconds(kStrayStallSeconds), after = wholeSeconds(seconds);
  return "kernel '" + name + "': a work-item accessed memory outside its buffers, and in the count run (which "
         "skips such accesses: a load reads 0) no work-item has returned for " + stall + " since (" + after +
         " in all): " + kStrayWait +
         ". Is a buffer smaller than the kernel reads or writes? Nothing was traced; the run cannot be stopped, so "
         "cltrace gives up (a kernel only that slow runs on to the limit of --trace-timeout SECONDS, if given, and "
         "is then refused by name)";
}

// Runs on the watchdog's thread while the caller is blocked in the driver: says why, removes the
// partial trace file (`partialPath`, empty for none) and ends the process (std::quick_exit).
[[noreturn]] void giveUpHungRun(const std::string& message, const std::string& partialPath) {
  writeToStandardError("cltrace: error: " + message);
  if (!partialPath.empty()) std::remove(partialPath.c_str());
  // No destructors (another thread is stuck in the driver); at_quick_exit handlers clean up
  // with system calls alone (cltrace predict's temporary folder).
  std::quick_exit(1);
}

// Throws TraceError when the trace file cannot be made (a directory in its place, a folder that
// does not exist or cannot be written): said before any run, not after both.
void requireCreatable(const std::string& tracePath) {
  std::error_code ec;
  if (std::filesystem::is_directory(tracePath, ec)) throw TraceError(tracePath + ": cannot create: it is a directory");
  // As the scheduled-file writers (output_file.h): the trace goes where a link points, and a
  // link to nothing names no file to write (it was replaced by the trace).
  if (std::filesystem::is_symlink(tracePath, ec) && !std::filesystem::exists(tracePath, ec))
    throw TraceError(tracePath + ": cannot create: it is a link to nothing");
  if (partialPathFor(tracePath) == tracePath) return;  // a device or pipe, written directly
  const std::string final = finalPathFor(tracePath);  // a link's file is written
  std::filesystem::path folder = std::filesystem::path(final).parent_path();
  if (folder.empty()) folder = ".";
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw TraceError(tracePath + ": cannot create: " + std::strerror(errno) + " (its folder " + folder.string() +
                     (final != tracePath ? ", where its link points" : "") + ")");
}

TraceError didNotRun(const char* run, uint64_t n, uint64_t items, uint64_t first) {
  return TraceError("the device did not run " + std::to_string(n) + " of the " + std::to_string(items) +
                    " work-items of the " + run + " run (the first, work-item " + std::to_string(first) +
                    ", linear global id) and reported no error: their slots were not written. "
                    "Nothing was traced and the buffers are as before the launch");
}

// Where a sub-buffer lies (CL_MEM_ASSOCIATED_MEMOBJECT, CL_MEM_OFFSET) and how large the buffer
// it was made in is.
struct SubBufferPlace {
  cl_mem parent = nullptr;
  uint64_t offset = 0, parentSize = 0;
};

// The places of the sub-buffers among the buffer arguments.
std::map<cl_mem, SubBufferPlace> subBufferPlacesOf(const std::vector<ArgBinding>& args) {
  std::map<cl_mem, SubBufferPlace> places;
  for (const ArgBinding& a : args) {
    if (a.kind != ArgBinding::Kind::Buffer || places.count(a.buffer)) continue;
    cl_mem parent = nullptr;
    check(clGetMemObjectInfo(a.buffer, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr),
          "clGetMemObjectInfo");
    if (!parent) continue;
    size_t offset = 0, parentSize = 0;
    check(clGetMemObjectInfo(a.buffer, CL_MEM_OFFSET, sizeof offset, &offset, nullptr), "clGetMemObjectInfo");
    check(clGetMemObjectInfo(parent, CL_MEM_SIZE, sizeof parentSize, &parentSize, nullptr), "clGetMemObjectInfo");
    places[a.buffer] = {parent, offset, parentSize};
  }
  return places;
}

// Each argument's base in the trace's virtual layout (0 for non-buffers): buffers in argument
// order, each at the next multiple of the alignment after the one before; an argument repeating
// a buffer shares its base. Buffers that share memory on the device (a sub-buffer and its
// parent, or two sub-buffers of one parent) lie in one region the size of the parent, each at
// its offset in it, so that the trace's addresses overlap where the device's do and the parent's
// bytes stay contiguous; a lone sub-buffer is a buffer of its own. Throws TraceError where a
// region would not end below 2^64: its base would wrap around onto the buffers before it.
std::vector<uint64_t> virtualBases(const std::vector<ArgBinding>& args, const std::vector<passes::KernelArg>& params,
                                   const std::map<cl_mem, uint64_t>& sizes,
                                   const std::map<cl_mem, SubBufferPlace>& subBuffers, uint64_t alignment) {
  auto rootOf = [&](cl_mem m) {
    auto p = subBuffers.find(m);
    return p == subBuffers.end() ? m : p->second.parent;
  };
  std::map<cl_mem, std::set<cl_mem>> sharing;  // root buffer -> the argument buffers in it
  for (const ArgBinding& a : args)
    if (a.kind == ArgBinding::Kind::Buffer) sharing[rootOf(a.buffer)].insert(a.buffer);
  std::vector<uint64_t> bases(args.size(), 0);
  std::map<cl_mem, uint64_t> placed;  // regions: argument buffers, and roots shared by several
  uint64_t next = 0;                  // the first byte after the regions placed so far
  auto place = [&](cl_mem region, uint64_t size, size_t i) {
    auto [it, fresh] = placed.emplace(region, 0);
    if (fresh) {
      uint64_t base = 0, end = 0;
      if (!alignUp(next, alignment, &base) || __builtin_add_overflow(base, size, &end))
        throw TraceError("buffer argument " + std::to_string(i) + " (" + params[i].type + " " + params[i].name +
                         ", " + std::to_string(size) + " bytes) does not fit in the 64-bit virtual address space at "
                         "alignment " + std::to_string(alignment) + ": its base would wrap around past 2^64");
      it->second = base;
      next = end;
    }
    return it->second;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != ArgBinding::Kind::Buffer) continue;
    const cl_mem buffer = args[i].buffer;
    const cl_mem root = rootOf(buffer);
    if (sharing.at(root).size() < 2) {
      bases[i] = place(buffer, sizes.at(buffer), i);
      continue;
    }
    auto sub = subBuffers.find(buffer);
    const uint64_t rootSize = sub == subBuffers.end() ? sizes.at(buffer) : sub->second.parentSize;
    bases[i] = place(root, rootSize, i) + (sub == subBuffers.end() ? 0 : sub->second.offset);
  }
  return bases;
}

// Device addresses -> the trace's virtual layout (virtualBases). Addresses outside every buffer
// are counted per instruction.
class Rebaser {
 public:
  // Fills header.buffers; `deviceAddresses` holds each buffer argument's device address,
  // `argumentVirtual` its base in the layout (virtualBases), `shapes` how the kernel's
  // instructions are packed.
  Rebaser(const std::vector<ArgBinding>& args, const std::vector<passes::KernelArg>& params,
          const std::map<cl_mem, uint64_t>& sizes, const std::vector<uint64_t>& deviceAddresses,
          const std::vector<uint64_t>& argumentVirtual, const std::vector<PackedShape>& shapes, TraceHeader& header)
      : unpackBases_(deviceAddresses.begin(), deviceAddresses.begin() + args.size()) {
    std::set<cl_mem> placed;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].kind != ArgBinding::Kind::Buffer) continue;
      const uint64_t size = sizes.at(args[i].buffer);
      if (placed.insert(args[i].buffer).second) regions_.push_back({deviceAddresses[i], size, argumentVirtual[i]});
      // (A name longer than a trace holds is cut, like an instruction text.)
      header.buffers.push_back({static_cast<uint32_t>(i), params[i].name.substr(0, kMaxTraceStringLength), size,
                                argumentVirtual[i]});
    }
    std::sort(regions_.begin(), regions_.end(), [](const Region& a, const Region& b) { return a.device < b.device; });
    bool disjoint = true;
    for (size_t r = 1; r < regions_.size(); ++r)
      if (regions_[r].device - regions_[r - 1].device < regions_[r - 1].size) disjoint = false;
    // When no two buffers overlap (a sub-buffer inside its parent), an access through an
    // argument lies in that argument's region: unpacking its offset from the argument's virtual
    // base gives the rebased address at once, and its records need no visit below.
    if (disjoint) unpackBases_ = argumentVirtual;
    for (const PackedShape& p : shapes) {
      alreadyRebased_.push_back(disjoint && packedAddressWords(p) == 1);
      if (isMemoryAccess(p.shape.kind) && !alreadyRebased_.back()) needsVisit_ = true;
    }
  }

  // The bases from which packed records' offsets are unpacked: the arguments' virtual bases or
  // their device addresses (see above).
  const std::vector<uint64_t>& unpackBases() const { return unpackBases_; }
  // Whether unpacked records still need a visit (else only addRecords).
  bool needsVisit() const { return needsVisit_; }
  void addRecords(uint64_t n) { records_ += n; }

  // Rebases the record `w` (unit record words) in place.
  void operator()(uint32_t* w, const InstructionShape& s) {
    ++records_;
    if (!isMemoryAccess(s.kind) || (w[2] < alreadyRebased_.size() && alreadyRebased_[w[2]])) return;
    const uint64_t address = uint64_t(w[0]) | uint64_t(w[1]) << 32;
    auto it = std::upper_bound(regions_.begin(), regions_.end(), address,
                               [](uint64_t a, const Region& g) { return a < g.device; });
    // The region starting last at or below the address; when it ends before the address, an
    // earlier one may still hold it (a sub-buffer inside its parent, both arguments).
    while (it != regions_.begin() && address - std::prev(it)->device >= std::prev(it)->size) --it;
    if (it != regions_.begin()) {
      --it;
      const uint64_t virt = it->virt + (address - it->device);
      w[0] = static_cast<uint32_t>(virt);
      w[1] = static_cast<uint32_t>(virt >> 32);
    } else {
      ++outsideByInstruction_[w[2]];
    }
  }

  uint64_t records() const { return records_; }
  const std::map<uint32_t, uint64_t>& outsideByInstruction() const { return outsideByInstruction_; }

 private:
  struct Region {
    uint64_t device, size, virt;
  };
  std::vector<Region> regions_;
  std::vector<uint64_t> unpackBases_;  // by argument
  std::vector<bool> alreadyRebased_;   // by instruction id
  bool needsVisit_ = false;
  std::map<uint32_t, uint64_t> outsideByInstruction_;
  uint64_t records_ = 0;
};

// An image or sampler argument must be set, to one of the kernel's context (the trace run
// cannot use another's), and an image must be an image (a buffer on an image parameter crashes
// a driver).
void requireHandleOf(cl_context context, const ArgBinding& a, size_t i, const passes::KernelArg& p) {
  const std::string where = "argument " + std::to_string(i) + " (" + p.type + " " + p.name + ")";
  cl_context owner = nullptr;
  if (a.kind == ArgBinding::Kind::Sampler) {
    if (!a.sampler) throw TraceError(where + " is a NULL sampler");
    check(clGetSamplerInfo(a.sampler, CL_SAMPLER_CONTEXT, sizeof owner, &owner, nullptr), "clGetSamplerInfo");
    if (owner != context) throw TraceError(where + " is a sampler of another context than the kernel's");
    return;
  }
  if (!a.buffer) throw TraceError(where + " is a NULL image");
  cl_mem_object_type type = 0;
  check(clGetMemObjectInfo(a.buffer, CL_MEM_TYPE, sizeof type, &type, nullptr), "clGetMemObjectInfo");
  if (type == CL_MEM_OBJECT_BUFFER) throw TraceError(where + " is set to a buffer, not an image");
  check(clGetMemObjectInfo(a.buffer, CL_MEM_CONTEXT, sizeof owner, &owner, nullptr), "clGetMemObjectInfo");
  if (owner != context) throw TraceError(where + " is an image of another context than the kernel's");
}

}  // namespace

// What the count run leaves for the trace run: per work-item units and diagnostics.
struct TracedKernel::CountRun {
  std::unique_ptr<Mapping> map;
  const uint64_t* slots = nullptr;  // kCountSlotsPerWorkItem per work-item
  uint64_t tag = 0;                 // this launch's tag
  uint64_t units = 0;               // the launch's packed record units
};

std::map<cl_mem, uint64_t> TracedKernel::bufferSizesOf(const std::vector<ArgBinding>& args) const {
  std::map<cl_mem, uint64_t> sizes;
  for (size_t i = 0; i < args.size(); ++i) {
    const passes::KernelArg& p = kernel_.args[i];
    const ArgBinding::Kind wanted = p.handle == passes::KernelArg::Handle::Image     ? ArgBinding::Kind::Image
                                    : p.handle == passes::KernelArg::Handle::Sampler ? ArgBinding::Kind::Sampler
                                    : !p.isPointer                                    ? ArgBinding::Kind::Scalar
                                    : p.addressSpace == 3                             ? ArgBinding::Kind::Local
                                                                                      : ArgBinding::Kind::Buffer;
    static const char* kNeeds[] = {"", "a buffer", "a value", "a __local size", "an image", "a sampler"};
    if (args[i].kind != wanted)
      throw TraceError("argument " + std::to_string(i) + " (" + p.type + " " + p.name + ") needs " +
                       kNeeds[static_cast<int>(wanted)]);
    if (wanted == ArgBinding::Kind::Image || wanted == ArgBinding::Kind::Sampler) {
      requireHandleOf(context_, args[i], i, p);
      continue;
    }
    if (args[i].kind != ArgBinding::Kind::Buffer) continue;
    if (!args[i].buffer)
      throw TraceError("argument " + std::to_string(i) + " (" + p.type + " " + p.name + ") is a NULL buffer");
    // A driver may take another context's buffer (PoCL does); the copies tracing makes cannot.
    cl_context owner = nullptr;
    check(clGetMemObjectInfo(args[i].buffer, CL_MEM_CONTEXT, sizeof owner, &owner, nullptr), "clGetMemObjectInfo");
    if (owner != context_)
      throw TraceError("argument " + std::to_string(i) + " (" + p.type + " " + p.name +
                       ") is a buffer of another context than the kernel's");
    size_t size = 0;
    check(clGetMemObjectInfo(args[i].buffer, CL_MEM_SIZE, sizeof size, &size, nullptr), "clGetMemObjectInfo");
    sizes.emplace(args[i].buffer, size);
    requireAddressableBuffer(kernel_.report, i, p, size);
  }
  return sizes;
}

std::unique_ptr<TracedKernel::CountRun> TracedKernel::runCount(cl_command_queue queue,
                                                              const std::vector<ArgBinding>& args,
                                                              const NDRange& range,
                                                              const std::map<cl_mem, uint64_t>& bufferSizes,
                                                              const LaunchOptions& options, LaunchResult& result) {
  // The count, control and record buffers are host memory the device uses in place
  // (CL_MEM_USE_HOST_PTR): no copies on CPU devices, where mapping them is free; elsewhere the
  // maps copy.
  const auto start = Clock::now();
  const uint64_t items = range.workItems();
  const auto argCount = static_cast<cl_uint>(args.size());
  auto run = std::make_unique<CountRun>();
  // No clearing needed: every work-item writes both of its slots when it returns.
  const uint64_t slotBytes = items * kCountSlotsPerWorkItem * sizeof(uint64_t);
  cl_mem countBuf = shared(counts_, slotBytes).mem;
  // Byte size of the buffer behind each argument: the count run checks every access against
  // them. Then the launch tag (kDiagLaunchTagShift): slots without it were not written by this launch.
  launchTag_ = static_cast<uint16_t>(launchTag_ % kLaunchTagMask + 1);
  run->tag = launchTag_;
  // The next word is the one a work-item sets when it goes outside a buffer (kBoundsParam): in
  // host memory, so that the host sees it while the run lasts on a CPU device. Then scratch
  // (passes::boundsScratchWord), which the kernel only writes.
  std::vector<uint64_t> bounds(passes::boundsWords(args.size()), 0);
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == ArgBinding::Kind::Buffer)
      bounds[i] = bufferSizes.at(args[i].buffer);
    else if (args[i].kind == ArgBinding::Kind::Local)
      bounds[i] = args[i].localSize;
  bounds[args.size()] = run->tag;
  SharedBuffer& boundsShared = shared(bounds_, bounds.size() * 8);
  cl_mem boundsMem = boundsShared.mem;
  const uint64_t* outsideWord = static_cast<const uint64_t*>(boundsShared.array.data()) + args.size() + 1;
  check(clEnqueueWriteBuffer(queue, boundsMem, CL_TRUE, 0, bounds.size() * 8, bounds.data(), 0, nullptr, nullptr),
        "writing the bounds buffer");
  setOriginalArgs(countKernel_, args);
  requireLocalMemory(args);
  requireCompiledLocalSize(range);
  requireDeviceWorkGroupLimits(range);
  check(clSetKernelArg(countKernel_, argCount, sizeof(cl_mem), &countBuf), "clSetKernelArg (counts)");
  check(clSetKernelArg(countKernel_, argCount + 1, sizeof(cl_mem), &boundsMem), "clSetKernelArg (bounds)");
  const auto kernelStart = Clock::now();
  const auto global = sizesOf(range.global), local = sizesOf(range.local), offset = sizesOf(range.offset);
  {
    const DeviceActivity running(runActivity(kernel_.report, "count"));
    std::optional<Watchdog> hung;
    if (const std::optional<double> limit = countRunLimitSeconds(options, kernel_.report))
      hung.emplace(std::chrono::duration<double>(*limit),
                   [message = hungRunMessage(kernel_.report, "count", *limit),
                    strayedMessage = hungRunMessage(kernel_.report, "count", *limit, std::nullopt, true), outsideWord] {
                     giveUpHungRun(__atomic_load_n(outsideWord, __ATOMIC_RELAXED) != 0 ? strayedMessage : message, "");
                   });
    // A work-item that went outside a buffer makes the launch refused when the run ends; but a
    // loop may wait for a value the skipped access would have read, or for work-items that
    // returned, and never end. Work-items write their count slots as they return: when none has
    // returned for 10 s after one went outside, cltrace gives up (unless a limit was given).
    // A kernel with barriers (or another wait for the whole workgroup: the report's
    // waitsForGroup) sets no such word (instrument.cpp), and PoCL can hang on its
    // instrumented count kernel where the plain one runs (a barrier in a branch after a loop whose
    // trip count is data): without a limit, cltrace gives up once no work-item has returned for
    // kStuckStallSeconds (a workgroup's work-items return together, when it ends).
    const uint64_t* slots = static_cast<const uint64_t*>(counts_->array.data());
    auto returned = [slots, items, tag = run->tag] {
      uint64_t n = 0;
      for (uint64_t i = 0; i < items; ++i)
        n += launchTagOf(__atomic_load_n(&slots[kCountSlotsPerWorkItem * i + 1], __ATOMIC_RELAXED)) == tag;
      return n;
    };
    const bool waitsForGroup = kernel_.report.waitsForGroup;
    std::optional<StalledRunWatchdog> stalled;
    if (options.runLimitSeconds <= 0 && !waitsForGroup)
      stalled.emplace([outsideWord] { return __atomic_load_n(outsideWord, __ATOMIC_RELAXED) != 0; }, returned,
                      kStrayStallSeconds, [name = kernel_.report.name](double seconds) {
                        giveUpHungRun(strayedRunMessage(name, seconds), "");
                      });
    else if (options.runLimitSeconds <= 0 && !hung)
      stalled.emplace([] { return true; }, returned, kStuckStallSeconds,
                      [name = kernel_.report.name](double seconds) { giveUpHungRun(stuckRunMessage(name, seconds), ""); });
    check(clEnqueueNDRangeKernel(queue, countKernel_, range.dims, offset.data(), global.data(), local.data(), 0,
                                 nullptr, nullptr),
          "clEnqueueNDRangeKernel (count run)");
    check(clFinish(queue), "clFinish (count run)");
  }
  result.countKernelSeconds = secondsSince(kernelStart);
  run->map = std::make_unique<Mapping>(queue, countBuf, CL_MAP_READ, slotBytes, "mapping the counts");
  run->slots = run->map->as<const uint64_t>();
  result.countSeconds = secondsSince(start);

  // Accesses outside their buffers were skipped by the count run; tracing would perform them.
  const uint64_t* counts = run->slots;
  uint64_t outsideItems = 0, firstOutside = 0, firstOutsideDiag = 0, notRun = 0, firstNotRun = 0, truncated = 0;
  uint64_t outsideLocalItems = 0, firstOutsideLocal = 0, localArgument = 0;
  for (uint64_t i = 0; i < items; ++i) {
    uint64_t d = counts[2 * i + 1];
    if (launchTagOf(d) != run->tag && notRun++ == 0) firstNotRun = i;
    if (d & kDiagDepthTruncated) ++truncated;
    run->units += counts[2 * i];
    if (const uint64_t local = (d >> kDiagLocalArgumentShift) & kDiagLocalArgumentMask; local != 0)
      if (outsideLocalItems++ == 0) {
        firstOutsideLocal = i;
        localArgument = local - 1;
      }
    if (!(d & kDiagOutsideBuffers)) continue;
    if (outsideItems++ == 0) {
      firstOutside = i;
      firstOutsideDiag = d;
    }
  }
  if (notRun) throw didNotRun("count", notRun, items, firstNotRun);
  if (outsideLocalItems) {
    std::string name;
    if (localArgument < kernel_.args.size()) name = " (" + kernel_.args[localArgument].name + ")";
    const uint64_t given = localArgument < args.size() ? args[localArgument].localSize : 0;
    throw TraceError(std::to_string(outsideLocalItems) +
                     (outsideLocalItems == 1 ? " work-item accesses" : " work-items access") +
                     " __local memory outside what argument " + std::to_string(localArgument) + name + " was given (" +
                     std::to_string(given) + " bytes); the first, work-item " + std::to_string(firstOutsideLocal) +
                     " (linear global id). Is the __local size given for it smaller than the kernel uses? Nothing "
                     "was traced and the buffers are as before the launch");
  }
  if (outsideItems) {
    uint64_t inst = (firstOutsideDiag >> kDiagFirstOutsideShift) - 1;
    std::string text = instructionText(inst);
    if (!text.empty()) text = " (" + text + ")";
    // The argument the pointer derives from, when the trace pass knows it: the access lies
    // outside that buffer, wherever else it may lie.
    std::string through, question = "Is a buffer smaller than the kernel reads or writes?";
    for (const passes::AccessInfo& a : kernel_.report.accesses)
      if (a.id == inst && a.bufferArgument >= 0 && static_cast<size_t>(a.bufferArgument) < kernel_.args.size()) {
        const passes::KernelArg& p = kernel_.args[static_cast<size_t>(a.bufferArgument)];
        through = ", through a pointer into argument " + std::to_string(a.bufferArgument) + " (" + p.name + ")";
        question = "Is that buffer smaller than the kernel reads or writes, or does the pointer reach past it (into "
                   "another buffer, say, which OpenCL leaves undefined)?";
      }
    throw TraceError(std::to_string(outsideItems) + (outsideItems == 1 ? " work-item accesses" : " work-items access") +
                     " memory outside their buffers; "
                     "the first, work-item " + std::to_string(firstOutside) + " (linear global id), at instruction " +
                     std::to_string(inst) + text + through + ". " + question +
                     " Nothing was traced and the buffers are as before the launch");
  }
  if (truncated)
    result.warnings.push_back(std::to_string(truncated) + " work-items made accesses in loops nested deeper than " +
                              std::to_string(kMaxLoopDepth) + "; their records keep only the outermost counters");
  return run;
}

void TracedKernel::requireCompiledLocalSize(const NDRange& range) const {
  // A kernel with reqd_work_group_size runs only with that local size: the driver's
  // CL_INVALID_WORK_GROUP_SIZE from the count run would not say why.
  size_t required[3] = {0, 0, 0};
  if (clGetKernelWorkGroupInfo(countKernel_, device_, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof required, required,
                               nullptr) != CL_SUCCESS ||
      required[0] == 0)
    return;  // not known, or not required
  bool same = true;
  for (uint32_t d = 0; d < 3; ++d) same = same && range.local[d] == required[d];
  if (same) return;
  auto sizes = [&](auto at) {
    std::string text = "(" + std::to_string(at(0));
    for (uint32_t d = 1; d < std::max<uint32_t>(range.dims, required[2] > 1 ? 3 : required[1] > 1 ? 2 : 1); ++d)
      text += "," + std::to_string(at(d));
    return text + ")";
  };
  throw TraceError("the kernel requires work-groups of " + sizes([&](uint32_t d) { return uint64_t(required[d]); }) +
                   " (its reqd_work_group_size attribute); the launch's local size is " +
                   sizes([&](uint32_t d) { return range.local[d]; }));
}

void TracedKernel::requireDeviceWorkGroupLimits(const NDRange& range) const {
  // The driver's CL_INVALID_WORK_GROUP_SIZE / CL_INVALID_WORK_ITEM_SIZE would not say which
  // limit the launch passes.
  size_t itemSizes[3] = {0, 0, 0};
  const uint32_t dims = std::min<uint32_t>(range.dims, 3);
  if (clGetDeviceInfo(device_, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof itemSizes, itemSizes, nullptr) == CL_SUCCESS)
    for (uint32_t d = 0; d < dims; ++d)
      if (itemSizes[d] != 0 && range.local[d] > itemSizes[d])
        throw TraceError("the local size " + std::to_string(range.local[d]) + " in dimension " + std::to_string(d) +
                         " is more than the device's " + std::to_string(itemSizes[d]) +
                         " (CL_DEVICE_MAX_WORK_ITEM_SIZES)");
  uint64_t items = 1;
  for (uint32_t d = 0; d < dims; ++d) items *= range.local[d];
  size_t kernelMax = 0;
  for (cl_kernel k : {countKernel_, traceKernel_}) {
    if (clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernelMax, &kernelMax, nullptr) !=
            CL_SUCCESS ||
        kernelMax == 0 || items <= kernelMax)
      continue;
    size_t deviceMax = 0;
    clGetDeviceInfo(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof deviceMax, &deviceMax, nullptr);
    throw TraceError("work-groups of " + std::to_string(items) + " work-items are more than the device runs this kernel "
                     "with: at most " + std::to_string(kernelMax) + " (CL_KERNEL_WORK_GROUP_SIZE" +
                     (kernelMax == deviceMax ? ", the device's maximum" : "") + ")");
  }
}

namespace {

// Bytes the __local arguments of a launch ask for.
uint64_t localArgumentBytes(const std::vector<ArgBinding>& args) {
  uint64_t bytes = 0;
  for (const ArgBinding& a : args)
    if (a.kind == ArgBinding::Kind::Local) bytes += a.localSize;
  return bytes;
}

}  // namespace

void TracedKernel::requireLocalMemory(const std::vector<ArgBinding>& args) const {
  // Some devices abort on a launch that wants more local memory than they have (PoCL asserts):
  // say so instead. The kernel's own __local variables come from the driver.
  cl_ulong deviceBytes = 0, kernelBytes = 0;
  if (clGetDeviceInfo(device_, CL_DEVICE_LOCAL_MEM_SIZE, sizeof deviceBytes, &deviceBytes, nullptr) != CL_SUCCESS ||
      clGetKernelWorkGroupInfo(countKernel_, device_, CL_KERNEL_LOCAL_MEM_SIZE, sizeof kernelBytes, &kernelBytes,
                               nullptr) != CL_SUCCESS)
    return;  // nothing to compare against: let the driver decide
  const uint64_t argumentBytes = localArgumentBytes(args);
  const uint64_t needed = std::max<uint64_t>(kernelBytes, argumentBytes);
  if (needed > deviceBytes)
    throw TraceError("the launch needs " + std::to_string(needed) + " bytes of local memory (" +
                     std::to_string(argumentBytes) + " in __local arguments), the device has " +
                     std::to_string(deviceBytes));
}

uint32_t TracedKernel::localMemoryBytes(const std::vector<ArgBinding>& args) const {
  const uint64_t bytes = kernel_.report.staticLocalBytes + localArgumentBytes(args);
  return static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX));  // far past any SM's either way
}

TraceHeader TracedKernel::headerFor(const NDRange& range, const LaunchOptions& options) const {
  TraceHeader h;
  h.kernelName = kernel_.kernel.substr(0, kMaxTraceStringLength);
  h.sourceHash = kernel_.sourceHash;
  h.device = describeDevice(device_);
  h.range = range;
  h.alignment = options.alignment;
  h.compressed = options.compress;
  h.workItemCount = range.workItems();
  // Format version 2: the device's units are written as they are, rebased in place.
  h.version = kTraceFormatUnits;
  h.instructions = passes::instructionShapes(kernel_.report);
  h.loops = passes::loopNest(kernel_.report);  // the scheduler tells loops apart by it
  for (const passes::AccessInfo& a : kernel_.report.accesses)
    h.instructionTexts.push_back(a.text.substr(0, kMaxTraceStringLength));
  h.recordCount = kUnknownRecordCount;  // counted as the units are written
  h.unitCount = kUnknownRecordCount;
  return h;
}

void TracedKernel::runTraceAndWrite(cl_command_queue queue, const std::vector<ArgBinding>& args,
                                    const NDRange& range, const std::map<cl_mem, uint64_t>& bufferSizes,
                                    const std::vector<uint64_t>& layoutBases, const CountRun& count,
                                    const std::string& tracePath, const LaunchOptions& options, LaunchResult& result,
                                    bool& traceFileStarted) {
  const uint64_t items = range.workItems();
  const auto argCount = static_cast<cl_uint>(args.size());
  const uint64_t* counts = count.slots;
  // The records go to a buffer of at most options.traceBufferBytes (at least one layer of
  // work-groups): when the launch's records need more, the trace kernel is enqueued in slices
  // of consecutive work-group layers along the slowest dimension, each slice's records written
  // to the file before the next runs. A layer is a contiguous range of linear ids and of the
  // file's work-item order, so slicing changes no byte of the trace.
  // The slowest dimension with more than one work-item: layers along it are contiguous.
  int slowest = 0;
  for (int d = 1; d < 3; ++d)
    if (range.global[d] > 1) slowest = d;
  const uint64_t layers = range.global[slowest] / range.local[slowest];
  const uint64_t layerItems = items / layers;
  const uint64_t budgetUnits = std::max<uint64_t>(options.traceBufferBytes / kPackedUnitBytes, 1);
  const std::vector<TraceSlice> slices = sliceLayers(counts, layers, layerItems, budgetUnits);
  result.traceSlices = slices.size();
  result.deviceRecordBytes = count.units * kPackedUnitBytes;
  uint64_t sliceUnitsMax = 0;
  for (const TraceSlice& sl : slices) sliceUnitsMax = std::max(sliceUnitsMax, sl.units);
  if (sliceUnitsMax > budgetUnits)
    result.warnings.push_back("the trace buffer grew to " + std::to_string(sliceUnitsMax * kPackedUnitBytes) +
                              " bytes, past the " + std::to_string(options.traceBufferBytes) +
                              " asked for: a slice holds at least one layer of work-groups along dimension " +
                              std::to_string(slowest) + ", and one needs that much");
  // Units [0, kPackedSinkUnits) are the sink where records that do not fit land.
  const uint64_t recordBytes = (kPackedSinkUnits + sliceUnitsMax) * kPackedUnitBytes;
  cl_mem recordBuf = nullptr;
  try {
    recordBuf = shared(records_, recordBytes).mem;
  } catch (const TraceError& e) {
    // Say what asked for it: a count past what the kernel can make is the driver's miscount
    // (PoCL runs some kernels with barriers after loops wrongly).
    uint64_t sliceItems = layerItems;
    for (const TraceSlice& sl : slices)
      if (sl.units == sliceUnitsMax) sliceItems = sl.layers * layerItems;
    throw TraceError(std::string(e.what()) + " for the trace run's records: the count run counted " +
                     std::to_string(sliceUnitsMax) + " record units for " + std::to_string(sliceItems) +
                     (sliceItems == 1 ? " work-item" : " work-items") + " (one layer of work-groups along dimension " + std::to_string(slowest) +
                     ", the least the trace run takes at once); if the kernel cannot make that many accesses, the "
                     "OpenCL driver miscounted them");
  }
  const uint64_t slotBytes = items * kControlSlotsPerWorkItem * sizeof(uint64_t);
  cl_mem controlBuf = shared(control_, slotBytes).mem;
  // Argument slots (work-item 0 writes the pointers), then the launch's geometry and whether
  // the trace run prints (record.h).
  std::vector<uint64_t> argSlots(args.size() + kLaunchSlots, 0);
  for (int d = 0; d < 3; ++d) {
    argSlots[args.size() + kGeometryOffsetSlot + d] = range.offset[d];
    argSlots[args.size() + kGeometrySizeSlot + d] = range.global[d];
  }
  argSlots[args.size() + kPrintSlot] = options.traceRunPrints && !options.restoreAfterTrace;
  ScopedMem argsBuf{createBuffer(context_, argSlots.size() * 8, "creating the argument buffer")};
  check(clEnqueueWriteBuffer(queue, argsBuf.mem, CL_TRUE, 0, argSlots.size() * 8, argSlots.data(), 0, nullptr,
                             nullptr),
        "writing the launch geometry");
  setOriginalArgs(traceKernel_, args);
  check(clSetKernelArg(traceKernel_, argCount, sizeof(cl_mem), &recordBuf), "clSetKernelArg (records)");
  check(clSetKernelArg(traceKernel_, argCount + 1, sizeof(cl_mem), &controlBuf), "clSetKernelArg (control)");
  check(clSetKernelArg(traceKernel_, argCount + 2, sizeof(cl_mem), &argsBuf.mem), "clSetKernelArg (args)");

  TraceHeader& h = result.header;
  h = headerFor(range, options);
  h.range.localMemoryBytes = localMemoryBytes(args);
  // The file is written next to its path and renamed over it at the end, so that a launch that
  // fails leaves whatever the path held; a path that is not a regular file (/dev/null, a pipe)
  // is written directly.
  const std::string writtenPath = partialPathFor(tracePath);
  std::unique_ptr<Rebaser> rebase;      // once the first slice gave the argument addresses
  std::unique_ptr<TraceWriter> writer;  // opened once the first slice checks out
  const UnitRecordDecoder decoder(h.instructions);
  std::unique_ptr<PackedRecordUnpacker> unpacker;  // once the first slice gave the argument addresses
  std::vector<uint32_t> item;
  uint64_t unitTotal = 0;
  std::string error;
  const std::vector<uint64_t> order = fileOrder(range);
  const auto global = sizesOf(range.global), local = sizesOf(range.local), offset = sizesOf(range.offset);
  const double limitSeconds = traceRunLimitSeconds(options, result.countKernelSeconds);
  const std::string hungMessage = hungRunMessage(kernel_.report, "trace", limitSeconds, result.countKernelSeconds);

  for (size_t sliceIndex = 0; sliceIndex < slices.size(); ++sliceIndex) {
    const TraceSlice& slice = slices[sliceIndex];
    const uint64_t firstItem = slice.firstLayer * layerItems, endItem = firstItem + slice.layers * layerItems;
    const auto start = Clock::now();
    {
      // The slice's work-items: where their records start, and the counted length under the tag.
      Mapping controlMap(queue, controlBuf, CL_MAP_WRITE_INVALIDATE_REGION, slotBytes, "mapping the control buffer");
      uint64_t* control = controlMap.as<uint64_t>();
      uint64_t unit = kPackedSinkUnits;
      for (uint64_t i = firstItem; i < endItem; ++i) {
        control[2 * i] = unit;
        control[2 * i + 1] = counts[2 * i] | count.tag << kControlTagShift;
        unit += counts[2 * i];
      }
    }
    std::array<size_t, 3> sliceGlobal = global, sliceOffset = offset;
    sliceGlobal[slowest] = slice.layers * local[slowest];
    sliceOffset[slowest] = offset[slowest] + slice.firstLayer * local[slowest];
    const bool last = sliceIndex + 1 == slices.size();
    const auto kernelStart = Clock::now();
    {
      const DeviceActivity running(runActivity(kernel_.report, "trace"),
                                   writer && writtenPath != tracePath ? writtenPath : std::string());
      const Watchdog hung(std::chrono::duration<double>(limitSeconds - result.traceKernelSeconds), [&] {
        giveUpHungRun(hungMessage, writtenPath != tracePath ? writtenPath : std::string());
      });
      check(clEnqueueNDRangeKernel(queue, traceKernel_, range.dims, sliceOffset.data(), sliceGlobal.data(),
                                   local.data(), 0, nullptr, last ? options.traceRunEvent : nullptr),
            "clEnqueueNDRangeKernel (trace run)");
      check(clFinish(queue), "clFinish (trace run)");
    }
    result.traceKernelSeconds += secondsSince(kernelStart);
    // [2i] still holds the work-item's first unit; the kernel replaced [2i + 1] by the units it produced.
    Mapping controlMap(queue, controlBuf, CL_MAP_READ, slotBytes, "mapping the control buffer");
    const uint64_t* control = controlMap.as<const uint64_t>();
    Mapping recordMap(queue, recordBuf, CL_MAP_READ, (kPackedSinkUnits + slice.units) * kPackedUnitBytes,
                      "mapping the records");
    const uint32_t* units = recordMap.as<const uint32_t>();
    if (sliceIndex == 0)  // work-item 0, in the first layer, wrote the argument addresses
      check(clEnqueueReadBuffer(queue, argsBuf.mem, CL_TRUE, 0, args.size() * 8, argSlots.data(), 0, nullptr,
                                nullptr),
            "reading the argument addresses");
    result.traceSeconds += secondsSince(start);

    uint64_t over = 0, under = 0, notRun = 0, firstNotRun = 0;
    for (uint64_t i = firstItem; i < endItem; ++i) {
      if (control[2 * i + 1] >> kControlTagShift) {
        if (notRun++ == 0) firstNotRun = i;
        continue;
      }
      if (control[2 * i + 1] > counts[2 * i]) ++over;
      if (control[2 * i + 1] < counts[2 * i]) ++under;
    }
    if (notRun) throw didNotRun("trace", notRun, items, firstNotRun);
    if (over || under) {
      // PoCL also runs some kernels with barriers in branches (SHOC's spmv_csr_vector) other
      // than the plain kernel when instrumented: the cause cannot be told apart from here.
      const bool barriers = kernel_.report.waitsForGroup;
      const std::vector<uint32_t>& atomics = kernel_.report.atomicsSteeringBranches;
      std::string cause;
      if (!atomics.empty())
        cause = "what the atomic [" + std::to_string(atomics.front()) +
                "] returns decides a branch (see the warning before the run), and work-items of other "
                "workgroups got in between its atomics in one run and not in the other (on PoCL's CPU device, "
                "POCL_MAX_PTHREAD_COUNT=1 runs one workgroup at a time, as cltrace run, predict and wrap do for "
                "such kernels), so";
      else if (barriers)
        cause = "either the kernel's control flow depends on data it changes or on timing, or the device ran the "
                "instrumented kernels' barriers differently (PoCL does for some barriers inside branches); either "
                "way";
      else
        cause = "the kernel's control flow depends on data it changes or on timing, so";
      throw TraceError("the trace run took a different path from the count run in " +
                       std::to_string(over + under) + " work-items (" + std::to_string(over) +
                       " produced more record units than counted, " + std::to_string(under) + " fewer): " + cause +
                       " its trace would be wrong; nothing was written out of bounds");
    }

    if (!writer) {
      const std::vector<PackedShape> shapes = passes::packedShapes(kernel_.report);
      rebase = std::make_unique<Rebaser>(args, kernel_.args, bufferSizes, argSlots, layoutBases, shapes, h);
      unpacker = std::make_unique<PackedRecordUnpacker>(shapes, rebase->unpackBases());
      writer = std::make_unique<TraceWriter>(writtenPath, h);
      traceFileStarted = true;
    }
    // Unpack each work-item's packed records into unit records, rebase them and stream them to the file.
    for (uint64_t at = firstItem; at < endItem; ++at) {
      const uint64_t id = order[at];
      item.clear();
      uint64_t records = 0;
      if (!unpacker->unpack(units + control[2 * id] * kPackedUnitWords, counts[2 * id], item, records, error))
        throw TraceError("work-item " + std::to_string(id) + ": " + error);
      const uint64_t n = item.size() / kUnitWords;
      if (!rebase->needsVisit())
        rebase->addRecords(records);
      else if (!decoder.forEach(item.data(), n, *rebase, error))
        throw TraceError("work-item " + std::to_string(id) + ": " + error);
      writer->writeCountedWorkItemUnits(item.data(), n, records);
      unitTotal += n;
    }
  }
  writer->close();
  if (writtenPath != tracePath) {
    std::error_code ec;
    const std::string finalPath = finalPathFor(tracePath);
    std::filesystem::rename(writtenPath, finalPath, ec);
    if (ec) throw TraceError("cannot rename " + writtenPath + " to " + finalPath + ": " + ec.message());
  }
  h.recordCount = rebase->records();
  h.unitCount = unitTotal;
  for (auto [inst, n] : rebase->outsideByInstruction()) {
    result.outsideAccesses += n;
    result.warnings.push_back(std::to_string(n) + " accesses of instruction " + std::to_string(inst) + " (" +
                              instructionText(inst) + ") fall outside every known buffer; their addresses are "
                              "left as device addresses");
  }
}

// CL_DEVICE_MAX_WORK_GROUP_SIZE of compute capability 2.x (the simulator's presets' default of
// max_threads_per_workgroup).
constexpr uint64_t kFermiMaxWorkgroupSize = 1024;

LaunchResult TracedKernel::launch(cl_command_queue queue, const std::vector<ArgBinding>& args,
                                  const NDRange& range, const std::string& tracePath,
                                  const LaunchOptions& options) {
  const auto launchStart = Clock::now();
  validateRange(range);
  // Before any run: the kernel would run twice for a trace that cannot be written.
  if (tracePath.empty()) throw TraceError("the trace path is empty");
  requireCreatable(tracePath);
  if (args.size() != kernel_.args.size())
    throw TraceError("kernel '" + kernel_.kernel + "' takes " + std::to_string(kernel_.args.size()) +
                     " arguments, " + std::to_string(args.size()) + " given");
  if (options.alignment == 0 || (options.alignment & (options.alignment - 1)))
    throw TraceError("alignment must be a power of two");
  cl_context queueContext = nullptr;
  check(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queueContext, &queueContext, nullptr),
        "clGetCommandQueueInfo");
  if (queueContext != context_)
    throw TraceError("kernel '" + kernel_.kernel + "': the queue belongs to another context than the kernel's");
  LaunchResult result;
  // The device may take larger workgroups than the GPU modelled (PoCL takes 4096, and a program
  // that asks the device for its largest gets that): said now, not first by the simulator.
  if (const uint64_t size = range.workgroupSize(); size > kFermiMaxWorkgroupSize)
    result.warnings.push_back("the launch's workgroups have " + std::to_string(size) + " work-items, more than the " +
                              std::to_string(kFermiMaxWorkgroupSize) +
                              " a Fermi GPU runs in one: the GPU would refuse the launch, and so does the "
                              "simulator unless max_threads_per_workgroup=0 (and max_local_size_x=0)");
  // Where what its atomics return steers the kernel, a device that runs several workgroups at
  // once may interleave them differently every run (`cltrace run` and `wrap` trace on one unit).
  if (kernel_.report.steeredByAtomics()) {
    cl_uint units = 0;
    if (clGetDeviceInfo(device_, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr) == CL_SUCCESS &&
        units > 1)
      result.warnings.push_back(
          "kernel '" + kernel_.kernel + "' is steered by what its atomics return and runs on a device of " +
          std::to_string(units) +
          " compute units, where work-items of other workgroups may get in between: its trace can differ "
          "between runs. A device of one compute unit runs one workgroup at a time, as cltrace run and wrap "
          "trace such kernels: wrapper::oneComputeUnitOf(device) gives one, and on PoCL's CPU device "
          "POCL_MAX_PTHREAD_COUNT=1 does the same");
  }
  const std::map<cl_mem, uint64_t> bufferSizes = bufferSizesOf(args);
  // The layout, made now so that one past 2^64 is refused before any run.
  const std::vector<uint64_t> bases =
      virtualBases(args, kernel_.args, bufferSizes, subBufferPlacesOf(args), options.alignment);
  std::vector<cl_mem> writable;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == ArgBinding::Kind::Buffer && kernel_.args[i].addressSpace == 1 &&
        std::find(writable.begin(), writable.end(), args[i].buffer) == writable.end())
      writable.push_back(args[i].buffer);
  BufferSnapshots snapshots(context_, queue, writable, bufferSizes);
  ImageSnapshots images(queue, args, kernel_.args);
  // From the count run on, a launch that fails leaves the buffers as they were before it, and
  // the trace's path as it was (a later slice may fail after the first was written).
  bool traceFileStarted = false;
  try {
    std::unique_ptr<CountRun> count = runCount(queue, args, range, bufferSizes, options, result);
    // A count kernel that leaves out the program's stores changed nothing (count_slicing.h).
    if (kernel_.report.countRunWritesBuffers) snapshots.restore();
    images.restore();
    if (options.beforeTraceRun) options.beforeTraceRun(queue);
    runTraceAndWrite(queue, args, range, bufferSizes, bases, *count, tracePath, options, result, traceFileStarted);
    if (options.restoreAfterTrace) {
      snapshots.restore();
      images.restore();
    }
  } catch (...) {
    if (options.traceRunEvent && *options.traceRunEvent) {
      clReleaseEvent(*options.traceRunEvent);
      *options.traceRunEvent = nullptr;
    }
    if (traceFileStarted) {
      std::error_code ignored;
      const std::string written = partialPathFor(tracePath);
      if (written != tracePath) std::filesystem::remove(written, ignored);
    }
    try {
      snapshots.restore();
      images.restore();
    } catch (...) {
      // The first error says more than a failed restore.
    }
    throw;
  }
  result.launchSeconds = secondsSince(launchStart);
  return result;
}

}  // namespace cltrace::wrapper
