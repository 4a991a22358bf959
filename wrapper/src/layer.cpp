// OpenCL layer for unmodified programs (ocl-icd 2.3: OPENCL_LAYERS=libcltrace_layer.so).
//
// The layer watches program creation from source, program builds, kernel creation and
// clSetKernelArg, and replaces each selected clEnqueueNDRangeKernel by a traced launch (count
// run + trace run of instrumented copies built on the same device). The application's own
// program and kernel objects are never modified, so clGetKernelInfo / clGetKernelArgInfo show
// exactly the application's parameters. A launch that cannot be traced runs untraced, with a
// message on stderr: the application's behaviour and output never change.
//
// A launch on a device that takes neither SPIR nor SPIR-V (most GPU drivers) is traced on a
// stand-in device that does (PoCL here; $CLTRACE_DEVICE chooses): the kernel's buffers are
// copied there and traced there, and the application's own launch then runs unchanged on its
// device. The trace does not depend on the device (addresses are rebased into a virtual
// layout), so only the header's device name tells the two apart. A kernel steered by what its
// global atomics return is traced the same way on one compute unit of the device
// (clCreateSubDevices), where PoCL runs its workgroups one after another, as `cltrace run` does.
//
// Configuration (set by `cltrace wrap`):
//   CLTRACE_OUT       directory for traces (default cltrace-traces)
//   CLTRACE_LAYER_LOADED  file made when the layer is loaded (cltrace wrap checks it)
//   CLTRACE_KERNELS   comma-separated kernel names to trace (default: all)
//   CLTRACE_LAUNCHES  comma-separated launch indices to trace (default: all); launches are
//                     numbered from 0 over all kernels in enqueue order
//   CLTRACE_LAUNCH_COUNTER  a file through which the processes of one run share the launch
//                     numbers (default: none; each process counts from 0)
//   CLTRACE_TRACE_BUFFER_BYTES  LaunchOptions::traceBufferBytes
//   CLTRACE_TRACE_TIMEOUT  LaunchOptions::runLimitSeconds, in seconds
//   CLTRACE_ACTIVITY_FILE  where the count or trace run in flight is noted while it runs
//                     (mirrorDeviceActivityTo), for `cltrace wrap` to name a run the driver
//                     crashed in
// Each traced launch writes OUT/<kernel>-<launch>.cltrace and appends a line
// "<launch>\t<kernel>\t<path>" to OUT/launches.tsv.
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cltrace/wrapper/device_activity.h"
#include "cltrace/wrapper/diagnostics.h"
#include "cltrace/wrapper/layer_entry.h"
#include "cltrace/wrapper/local_size.h"
#include "cltrace/wrapper/traced_kernel.h"

using namespace cltrace;
using namespace cltrace::wrapper;

namespace {

const _cl_icd_dispatch* target = nullptr;
_cl_icd_dispatch dispatch;

// Calls the layer itself makes (buffers, instrumented kernels) pass straight through.
thread_local bool insideLayer = false;
struct Inside {
  Inside() { insideLayer = true; }
  ~Inside() { insideLayer = false; }
};

// Set while the program's event callback runs on this thread. OpenCL forbids waiting there
// (clFinish, blocking reads), which tracing needs; and a driver may run callbacks on the thread
// that executes the queue, so a callback that waited for a traced launch would wait for itself.
thread_local int insideCallback = 0;

// References are counted as the program makes and lets go of them (create, clRetain*,
// clRelease*): the driver's own count also holds internal references (each kernel holds its
// program), so it cannot tell when the program has let go.
//
// A program is compiled for tracing when the driver builds (or compiles) it, with the same
// options: the files it includes and the macros it is given are read then, as the driver read
// them, not at a later launch. A linked program links its units' compiled code, so each unit
// keeps its own options, macros and static functions.
struct ProgramInfo {
  std::string source;
  std::string options;  // of the last successful build, compile or link (with its units' device options)
  std::vector<passes::EmbeddedHeader> headers;  // clCompileProgram's input headers
  std::string bitcode;  // compiled (or linked) for tracing; empty until built
  std::string compileError;  // why it could not be compiled for tracing
  uint64_t sourceHash = 0;   // of the source and headers (a linked program's: of its units')
  std::string untraceable;  // why its launches cannot be traced ("" when they can)
  uint32_t references = 1;  // 0: the program let go of it; its kernels may live on
  std::set<std::string> tracedKeys;  // entries of State::traced its launches used
};
struct KernelInfo {
  KernelInfo() = default;
  KernelInfo(cl_program p, std::string n) : program(p), name(std::move(n)) {}
  cl_program program = nullptr;
  std::string name;
  std::map<cl_uint, std::vector<uint8_t>> values;  // clSetKernelArg bytes
  std::map<cl_uint, size_t> sizes;                 // clSetKernelArg sizes
  std::set<cl_uint> nullValues;                    // set with a NULL value (__local)
  std::set<cl_uint> svmPointers;                   // set by clSetKernelArgSVMPointer
  std::map<cl_uint, const void*> svmValues;        // their values
  uint32_t references = 1;
};

void message(const std::string& text);  // "cltrace: " + text on the program's stderr

struct Settings {
  std::string out = "cltrace-traces";
  std::set<std::string> kernels;
  std::set<uint64_t> launches;
  uint64_t traceBufferBytes = LaunchOptions{}.traceBufferBytes;
  uint64_t traceTimeoutSeconds = 0;  // LaunchOptions::runLimitSeconds (0: worked out)
  Settings() {
    if (const char* o = std::getenv("CLTRACE_OUT"); o && *o) out = o;
    // Where `cltrace wrap` looks for the run in flight when the program ends in a signal.
    if (const char* a = std::getenv("CLTRACE_ACTIVITY_FILE"); a && *a) mirrorDeviceActivityTo(a);
    auto split = [](const char* s, auto add) {
      if (!s) return;
      std::stringstream in(s);
      std::string item;
      while (std::getline(in, item, ','))
        if (!item.empty()) add(item);
    };
    split(std::getenv("CLTRACE_KERNELS"), [&](const std::string& k) { kernels.insert(k); });
    split(std::getenv("CLTRACE_LAUNCHES"), [&](const std::string& n) { launches.insert(std::stoull(n)); });
    // Bytes (`cltrace wrap --trace-buffer-mib` sets it); anything else keeps the default, with a
    // warning.
    if (const char* bytes = std::getenv("CLTRACE_TRACE_BUFFER_BYTES"); bytes && *bytes) {
      char* end = nullptr;
      unsigned long long v = std::strtoull(bytes, &end, 10);
      if (std::isdigit(static_cast<unsigned char>(*bytes)) && *end == '\0' && v >= 1 && v <= (1ull << 60))
        traceBufferBytes = v;
      else
        message("warning: CLTRACE_TRACE_BUFFER_BYTES='" + std::string(bytes) +
                "' is not a byte count from 1 to 2^60; using " + std::to_string(traceBufferBytes));
    }
    // Seconds (`cltrace wrap --trace-timeout` sets it); anything else keeps the worked-out limit.
    if (const char* seconds = std::getenv("CLTRACE_TRACE_TIMEOUT"); seconds && *seconds) {
      char* end = nullptr;
      unsigned long long v = std::strtoull(seconds, &end, 10);
      if (std::isdigit(static_cast<unsigned char>(*seconds)) && *end == '\0' && v >= 1 && v <= 1'000'000'000)
        traceTimeoutSeconds = v;
      else
        message("warning: CLTRACE_TRACE_TIMEOUT='" + std::string(seconds) +
                "' is not a number of seconds from 1 to 10^9; using 50 times the count run, at least 120");
    }
  }
};

// The device that traces launches whose own device cannot take instrumented programs.
struct StandIn {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string name;
  std::string where;  // for the trace's line: " on the stand-in device '...'"
};

// Two locks. `mutex` guards the books (programs, kernels, traced, orphans, user events, the
// output lists) and is held only briefly, never across a wait on a queue: the program's
// callbacks (clSetKernelArg, clReleaseEvent in an event callback) take it, and a driver may run
// them on the thread a waiting traced launch waits for. `tracing` makes traced launches one at a
// time (the stand-in device and its queue are under it); callbacks never take it.
struct State {
  std::mutex mutex;
  std::mutex tracing;
  std::unique_ptr<StandIn> standIn;  // created on first need
  // One-compute-unit parts (clCreateSubDevices) of the devices that run kernels steered by
  // what global atomics return, by the device split; null where it cannot be split.
  std::map<cl_device_id, std::unique_ptr<StandIn>> oneUnit;
  // Kernels (keyed as `traced` is, less the device) found steered by their atomics, and those
  // of them whose tracing on one compute unit has been said.
  std::set<std::string> steeredByAtomics, oneUnitSaid;
  Settings settings;
  std::map<cl_program, ProgramInfo> programs;
  std::map<cl_kernel, KernelInfo> kernels;
  // By compiled code/options/kernel/device; the TracedKernel belongs to the context it was
  // built in (and keeps it alive): a launch in another context replaces it.
  // Shared: a launch being traced keeps its TracedKernel while a release lets the entry go.
  struct Traced {
    std::shared_ptr<TracedKernel> kernel;
    cl_context context = nullptr;
  };
  std::map<std::string, Traced> traced;
  // Entries of `traced` that no live program uses any more, oldest first. A few are kept for
  // a program made again from the same source; the rest are let go with their device memory
  // and context, so that a program that tries many variants (an autotuner) does not grow.
  std::deque<std::string> orphans;
  static constexpr size_t kKeptOrphans = 4;
  // Keys of `traced` whose kernel could not be instrumented or built, with the launch that
  // found out: their later launches are refused at once, rather than instrumented again (a
  // refused kernel in a loop of a thousand launches cost a thousand instrumentations) with the
  // passes' warnings and the compiler's message said again each time.
  std::map<std::string, uint64_t> failedAt;
  // The program's own references to the contexts it made. When it lets go of its last one, the
  // traced kernels kept in that context (which hold it) are let go too, so that the context
  // goes when the program's other objects in it do, and its destructor callbacks run.
  std::map<cl_context, uint32_t> contextReferences;
  // User events the program has created and not yet completed: a launch queued behind one
  // cannot be traced (tracing waits for the queue, the program completes the event later).
  std::set<cl_event> pendingUserEvents;
  uint64_t nextLaunch = 0;  // without a launch counter file (see nextLaunchNumber)
};

// Never destroyed: at exit the driver's own static state may already be gone, and releasing
// OpenCL objects then crashes some drivers (Oclgrind's program release corrupts the heap).
// Traces are complete when each launch returns; the driver frees the rest with the process.
State& state() {
  static State* s = new State;
  return *s;
}

// (Through a copy of stderr: the program may close fd 2 and open a file of its own there.)
void message(const std::string& text) { writeToStandardError("cltrace: " + text); }

// Launches are numbered over every process of one `cltrace wrap` (a program that runs another
// OpenCL program, or forks), so that no two write the same trace file: the number is taken
// from the file CLTRACE_LAUNCH_COUNTER names (`cltrace wrap` sets it), under an exclusive lock.
// Without it, each process counts its own launches.
uint64_t nextLaunchNumber(State& s) {
  const char* path = std::getenv("CLTRACE_LAUNCH_COUNTER");
  if (!path || !*path) return s.nextLaunch++;
  const int fd = ::open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return s.nextLaunch++;
  uint64_t n = 0;
  if (::flock(fd, LOCK_EX) == 0) {
    if (::pread(fd, &n, sizeof n, 0) != static_cast<ssize_t>(sizeof n)) n = 0;
    const uint64_t next = n + 1;
    if (::pwrite(fd, &next, sizeof next, 0) != static_cast<ssize_t>(sizeof next)) n = s.nextLaunch++;
  } else {
    n = s.nextLaunch++;
  }
  ::close(fd);  // lets go of the lock
  return n;
}

cl_program CL_API_CALL createProgramWithSource(cl_context context, cl_uint count, const char** strings,
                                               const size_t* lengths, cl_int* err) {
  cl_program p = target->clCreateProgramWithSource(context, count, strings, lengths, err);
  if (p && !insideLayer && strings) {
    std::string source;
    for (cl_uint i = 0; i < count; ++i) {
      if (!strings[i]) continue;
      source += (lengths && lengths[i]) ? std::string(strings[i], lengths[i]) : std::string(strings[i]);
    }
    std::lock_guard<std::mutex> lock(state().mutex);
    ProgramInfo info;
    info.source = std::move(source);
    state().programs[p] = std::move(info);
  }
  return p;
}

// The device a program was built for (the first, when several): its compiler's macros are the
// ones the program's kernels saw (withDeviceMacros).
cl_device_id buildDevice(cl_program program, cl_uint n, const cl_device_id* devices) {
  if (n > 0 && devices) return devices[0];
  cl_uint count = 0;
  if (target->clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof count, &count, nullptr) != CL_SUCCESS ||
      count == 0)
    return nullptr;
  std::vector<cl_device_id> all(count);
  if (target->clGetProgramInfo(program, CL_PROGRAM_DEVICES, count * sizeof(cl_device_id), all.data(), nullptr) !=
      CL_SUCCESS)
    return nullptr;
  return all[0];
}

// Compiles a program for tracing after the driver built or compiled it with `options` (see
// ProgramInfo). A build that fails leaves the program as it was, and so do these books.
void compileForTracing(cl_program program, cl_device_id device, const std::string& options,
                       std::vector<passes::EmbeddedHeader> headers, const std::string& untraceable) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().programs.find(program);
  if (it == state().programs.end()) return;
  ProgramInfo& info = it->second;
  info.options = options;
  info.headers = std::move(headers);
  info.untraceable = untraceable;
  info.sourceHash = passes::sourceHashOf(info.source, info.headers);
  info.bitcode.clear();
  info.compileError.clear();
  if (!untraceable.empty()) return;
  try {
    info.bitcode =
        passes::compileProgramSource(info.source, withDeviceMacros(device, withWorkingDirectory(passes::splitOptions(options))),
                                     info.headers);
  } catch (const std::exception& e) {
    info.compileError = e.what();
  }
}

cl_int CL_API_CALL buildProgram(cl_program program, cl_uint n, const cl_device_id* devices,
                                const char* options, void(CL_CALLBACK* notify)(cl_program, void*),
                                void* data) {
  const cl_int err = target->clBuildProgram(program, n, devices, options, notify, data);
  if (err == CL_SUCCESS && !insideLayer)
    compileForTracing(program, buildDevice(program, n, devices), options ? options : "", {}, "");
  return err;
}

cl_int CL_API_CALL compileProgram(cl_program program, cl_uint n, const cl_device_id* devices, const char* options,
                                  cl_uint headers, const cl_program* headerPrograms, const char** headerNames,
                                  void(CL_CALLBACK* notify)(cl_program, void*), void* data) {
  // The input headers' texts, taken before the call: the program may release them once compiled.
  std::vector<passes::EmbeddedHeader> texts;
  std::string untraceable;
  if (!insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    for (cl_uint i = 0; i < headers && headerPrograms && headerNames; ++i) {
      auto h = state().programs.find(headerPrograms[i]);
      const std::string name = headerNames[i] ? headerNames[i] : "";
      if (h == state().programs.end()) {
        untraceable = "its embedded header '" + name + "' was not created from source";
        break;
      }
      texts.push_back(passes::EmbeddedHeader{name, h->second.source});
    }
  }
  const cl_int err =
      target->clCompileProgram(program, n, devices, options, headers, headerPrograms, headerNames, notify, data);
  if (err == CL_SUCCESS && !insideLayer)
    compileForTracing(program, buildDevice(program, n, devices), options ? options : "", std::move(texts), untraceable);
  return err;
}

// A program linked from programs compiled from source is traced from their compiled code,
// linked; its source hash covers their sources (joined, each from line 1) and embedded headers.
cl_program CL_API_CALL linkProgram(cl_context context, cl_uint n, const cl_device_id* devices, const char* options,
                                   cl_uint inputs, const cl_program* programs,
                                   void(CL_CALLBACK* notify)(cl_program, void*), void* data, cl_int* err) {
  cl_program linked = target->clLinkProgram(context, n, devices, options, inputs, programs, notify, data, err);
  if (linked && !insideLayer && programs) {
    std::lock_guard<std::mutex> lock(state().mutex);
    ProgramInfo joined;
    joined.options = options ? options : "";
    // The device-build options the units were compiled with count too: a unit compiled with
    // -cl-fast-relaxed-math makes the program's results approximate though the link names none.
    std::vector<std::string> words = passes::splitOptions(joined.options);
    std::vector<std::string> units;
    bool known = inputs > 0;
    for (cl_uint i = 0; i < inputs && known; ++i) {
      auto it = state().programs.find(programs[i]);
      if (it == state().programs.end()) {
        known = false;
        break;
      }
      const ProgramInfo& unit = it->second;
      for (const std::string& o : passes::splitOptions(deviceBuildOptions(passes::splitOptions(unit.options))))
        if (std::find(words.begin(), words.end(), o) == words.end()) {
          words.push_back(o);
          joined.options += (joined.options.empty() ? "" : " ") + o;
        }
      joined.source += "#line 1\n" + unit.source + "\n";
      joined.headers.insert(joined.headers.end(), unit.headers.begin(), unit.headers.end());
      if (joined.untraceable.empty()) joined.untraceable = unit.untraceable;
      if (joined.compileError.empty()) joined.compileError = unit.compileError;
      units.push_back(unit.bitcode);
    }
    if (known) {
      joined.sourceHash = passes::sourceHashOf(joined.source, joined.headers);
      if (joined.untraceable.empty() && joined.compileError.empty()) {
        try {
          joined.bitcode = passes::linkBitcode(units);
        } catch (const std::exception& e) {
          joined.compileError = e.what();
        }
      }
      state().programs[linked] = std::move(joined);
    }
  }
  return linked;
}

cl_kernel CL_API_CALL createKernel(cl_program program, const char* name, cl_int* err) {
  cl_kernel k = target->clCreateKernel(program, name, err);
  if (k && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().kernels[k] = KernelInfo(program, name);
  }
  return k;
}

cl_int CL_API_CALL setKernelArg(cl_kernel kernel, cl_uint index, size_t size, const void* value) {
  cl_int err = target->clSetKernelArg(kernel, index, size, value);
  if (err == CL_SUCCESS && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto it = state().kernels.find(kernel);
    if (it != state().kernels.end()) {
      KernelInfo& k = it->second;
      k.sizes[index] = size;
      k.svmPointers.erase(index);
      k.svmValues.erase(index);
      if (value) {
        k.values[index].assign(static_cast<const uint8_t*>(value), static_cast<const uint8_t*>(value) + size);
        k.nullValues.erase(index);
      } else {
        k.values.erase(index);
        k.nullValues.insert(index);
      }
    }
  }
  return err;
}

// An argument set to a shared-virtual-memory pointer: the books forget what it held before (a
// buffer the trace run would otherwise write in its place).
cl_int CL_API_CALL setKernelArgSVMPointer(cl_kernel kernel, cl_uint index, const void* value) {
  cl_int err = target->clSetKernelArgSVMPointer(kernel, index, value);
  if (err == CL_SUCCESS && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto it = state().kernels.find(kernel);
    if (it != state().kernels.end()) {
      KernelInfo& k = it->second;
      k.values.erase(index);
      k.sizes.erase(index);
      k.nullValues.erase(index);
      k.svmPointers.insert(index);
      k.svmValues[index] = value;
    }
  }
  return err;
}

std::vector<ArgBinding> bindingsOf(const KernelInfo& k, const passes::InstrumentedKernel& ik) {
  std::vector<ArgBinding> args;
  for (cl_uint i = 0; i < ik.args.size(); ++i) {
    const passes::KernelArg& p = ik.args[i];
    if (k.svmPointers.count(i))
      throw TraceError("argument " + std::to_string(i) + " (" + p.name +
                       ") is a shared virtual memory pointer (clSetKernelArgSVMPointer): cltrace traces buffer "
                       "arguments only");
    if (p.isPointer && p.addressSpace == 3) {
      auto s = k.sizes.find(i);
      if (s == k.sizes.end()) throw TraceError("argument " + std::to_string(i) + " is not set");
      args.push_back(ArgBinding::ofLocal(s->second));
      continue;
    }
    auto v = k.values.find(i);
    // Buffers, images and samplers are objects the program sets by their handle.
    const bool image = p.handle == passes::KernelArg::Handle::Image;
    const bool sampler = p.handle == passes::KernelArg::Handle::Sampler;
    const bool object = p.isPointer || image || sampler;
    const char* noun = image ? "image" : sampler ? "sampler" : "buffer";
    static_assert(sizeof(cl_sampler) == sizeof(cl_mem), "handles of one size");
    // An object argument set with a NULL value, or with a null handle.
    const bool setToNull = v == k.values.end() ? object && k.nullValues.count(i)
                                               : object && v->second.size() == sizeof(cl_mem) &&
                                                     std::all_of(v->second.begin(), v->second.end(),
                                                                 [](uint8_t b) { return b == 0; });
    if (setToNull) throw TraceError("argument " + std::to_string(i) + " (" + p.name + ") is a NULL " + noun);
    if (v == k.values.end()) throw TraceError("argument " + std::to_string(i) + " is not set");
    if (object) {
      if (v->second.size() != sizeof(cl_mem))
        throw TraceError("argument " + std::to_string(i) + " is not a" + (image ? "n " : " ") + noun);
      void* handle = nullptr;
      std::memcpy(&handle, v->second.data(), sizeof handle);
      args.push_back(image     ? ArgBinding::ofImage(static_cast<cl_mem>(handle))
                     : sampler ? ArgBinding::ofSampler(static_cast<cl_sampler>(handle))
                               : ArgBinding::ofBuffer(static_cast<cl_mem>(handle)));
    } else {
      args.push_back(ArgBinding::ofScalar(v->second.data(), v->second.size()));
    }
  }
  return args;
}

StandIn& standIn(State& s) {
  if (s.standIn) return *s.standIn;
  cl_device_id device = selectDevice("");
  if (programFormatOf(device) == ProgramFormat::None)
    throw TraceError(std::getenv("CLTRACE_DEVICE") && *std::getenv("CLTRACE_DEVICE")
                         ? "the stand-in device CLTRACE_DEVICE names, '" + describeDevice(device) +
                               "', takes neither SPIR nor SPIR-V either"
                         : "no device that takes SPIR or SPIR-V to trace on (install pocl-opencl-icd)");
  auto in = std::make_unique<StandIn>();
  in->device = device;
  in->name = describeDevice(device);
  cl_int err = CL_SUCCESS;
  in->context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  check(err, "clCreateContext (stand-in device)");
  in->queue = createCommandQueue(in->context, device);
  in->where = " on the stand-in device '" + in->name + "'";
  s.standIn = std::move(in);
  return *s.standIn;
}

// A stand-in with one compute unit of `device`, made once per device, or null when the device
// cannot be split (it has one compute unit, or does not partition). Where what a global atomic
// returns steers a kernel, PoCL runs its workgroups there one after another, so that its trace
// is the same every run, as `cltrace run` traces it; the program's buffers are copied there.
const StandIn* oneUnitStandIn(State& s, cl_device_id device) {
  auto it = s.oneUnit.find(device);
  if (it != s.oneUnit.end()) return it->second.get();
  std::unique_ptr<StandIn>& kept = s.oneUnit[device];
  cl_device_id part = oneComputeUnitOf(device);
  if (!part) return nullptr;
  auto in = std::make_unique<StandIn>();
  in->device = part;
  in->name = describeDevice(part);
  in->where = " on one compute unit of '" + in->name + "'";
  cl_int err = CL_SUCCESS;
  in->context = clCreateContext(nullptr, 1, &part, nullptr, nullptr, &err);
  try {
    check(err, "clCreateContext (one compute unit)");
    in->queue = createCommandQueue(in->context, part);
  } catch (const std::exception&) {  // traced on the device itself, as without a part
    if (in->context) clReleaseContext(in->context);
    return nullptr;  // (the part is oneComputeUnitOf's to keep)
  }
  kept = std::move(in);
  return kept.get();
}

// True the first time for `kernelKey` (s.oneUnitSaid).
bool explainOnce(State& s, const std::string& kernelKey) {
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.oneUnitSaid.insert(kernelKey).second;
}

// Buffers copied from the application's device to the stand-in device, released afterwards.
// An application buffer bound to several arguments gets one copy, so the kernel still sees
// them alias.
class StandInBuffers {
 public:
  // Buffers that share memory on the program's device (a sub-buffer and its parent, or two
  // sub-buffers of one parent) share it on the stand-in too, or the trace's addresses would not
  // overlap where the program's do: their parent is copied once and each sub-buffer is made
  // again inside the copy. `notes` gets a line for each that could not be (the stand-in's
  // alignment refused its origin) and was copied apart.
  StandInBuffers(cl_command_queue appQueue, const StandIn& in, std::vector<ArgBinding>& args,
                 const std::vector<passes::KernelArg>& params, std::vector<std::string>& notes) {
    try {
      copyAll(appQueue, in, args, params, notes);
    } catch (...) {
      releaseOwned();  // no destructor runs for a half-made object
      throw;
    }
  }
  ~StandInBuffers() { releaseOwned(); }
  StandInBuffers(const StandInBuffers&) = delete;
  StandInBuffers& operator=(const StandInBuffers&) = delete;

 private:
  void copyAll(cl_command_queue appQueue, const StandIn& in, std::vector<ArgBinding>& args,
               const std::vector<passes::KernelArg>& params, std::vector<std::string>& notes) {
    std::map<cl_mem, std::set<cl_mem>> byParent;
    for (const ArgBinding& a : args)
      if (a.kind == ArgBinding::Kind::Buffer && a.buffer) byParent[parentOf(a.buffer)].insert(a.buffer);
    for (const auto& [parent, members] : byParent) {
      if (members.size() == 1) {
        copies_[*members.begin()] = own(copy(appQueue, in, *members.begin()));
        continue;
      }
      cl_mem parentCopy = own(copy(appQueue, in, parent));
      for (cl_mem m : members) {
        if (m == parent) {
          copies_[m] = parentCopy;
          continue;
        }
        cl_buffer_region region{};
        check(clGetMemObjectInfo(m, CL_MEM_OFFSET, sizeof region.origin, &region.origin, nullptr), "clGetMemObjectInfo");
        check(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof region.size, &region.size, nullptr), "clGetMemObjectInfo");
        cl_int err = CL_SUCCESS;
        cl_mem sub = clCreateSubBuffer(parentCopy, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
        if (err == CL_SUCCESS) {
          copies_[m] = own(sub);
        } else {
          notes.push_back("the stand-in device cannot make a sub-buffer at offset " + std::to_string(region.origin) +
                          " (error " + std::to_string(err) + "); it is traced as a separate buffer, so its "
                          "addresses do not overlap its parent's");
          copies_[m] = own(copy(appQueue, in, m));
        }
      }
    }
    for (ArgBinding& a : args) {
      if (a.kind == ArgBinding::Kind::Buffer && a.buffer) a.buffer = copies_.at(a.buffer);
      if (a.kind == ArgBinding::Kind::Image && a.buffer) {
        auto [it, fresh] = copies_.emplace(a.buffer, nullptr);
        if (fresh) {
          const ImageUse use = imageUse(a.buffer, args, params);
          it->second = own(copyImage(appQueue, in, a.buffer, use.read, "argument " + use.arguments, notes));
        }
        a.buffer = it->second;
      }
      if (a.kind == ArgBinding::Kind::Sampler && a.sampler) {
        samplers_.push_back(copySampler(in, a.sampler));
        a.sampler = samplers_.back();
      }
    }
  }
  void releaseOwned() {
    for (cl_sampler sm : samplers_) clReleaseSampler(sm);
    samplers_.clear();
    // Sub-buffers before the parents they were made in.
    for (auto m = owned_.rbegin(); m != owned_.rend(); ++m) clReleaseMemObject(*m);
    owned_.clear();
  }
  // An image of the same kind, size and format in the stand-in's context, holding the image's
  // pixels (read back whole, tightly packed) when the launch reads them (`readByLaunch`; an
  // image only written needs none: the host may then be barred from it). `what` names the
  // arguments it is bound to; `notes` gets a line where the stand-in reads its format wrongly.
  static cl_mem copyImage(cl_command_queue appQueue, const StandIn& in, cl_mem image, bool readByLaunch,
                          const std::string& what, std::vector<std::string>& notes) {
    const ImageShape shape = imageShapeOf(image);
    if (const std::string flaw = imageFormatFlaw(in.device, shape.format); readByLaunch && !flaw.empty())
      notes.push_back(what + " on the stand-in device: " + flaw);
    if (shape.type == CL_MEM_OBJECT_IMAGE1D_BUFFER)
      throw TraceError(what + " is an image1d_buffer_t (an image made over a buffer), which cltrace cannot copy to "
                              "the stand-in device");
    cl_mem_flags flags = 0;
    check(clGetMemObjectInfo(image, CL_MEM_FLAGS, sizeof flags, &flags, nullptr), "clGetMemObjectInfo");
    if (readByLaunch && (flags & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_WRITE_ONLY)))
      throw TraceError(what + " is an image the kernel reads and the host may not (CL_MEM_HOST_NO_ACCESS or "
                              "CL_MEM_HOST_WRITE_ONLY): cltrace cannot copy its pixels to the stand-in device");
    cl_image_desc desc{};
    desc.image_type = shape.type;
    desc.image_width = shape.width;
    desc.image_height = shape.height;
    desc.image_depth = shape.depth;
    desc.image_array_size = shape.arraySize;
    std::vector<uint8_t> pixels;
    if (readByLaunch) {
      pixels.resize(shape.bytes());
      const size_t origin[3] = {0, 0, 0};
      check(clEnqueueReadImage(appQueue, image, CL_TRUE, origin, shape.region.data(), 0, 0, pixels.data(), 0, nullptr,
                               nullptr),
            "reading an image for the stand-in device (clEnqueueReadImage)");
    }
    cl_int err = CL_SUCCESS;
    cl_mem copy = clCreateImage(in.context, CL_MEM_READ_WRITE | (readByLaunch ? CL_MEM_COPY_HOST_PTR : 0),
                                &shape.format, &desc, readByLaunch ? pixels.data() : nullptr, &err);
    check(err, "clCreateImage (stand-in device)");
    return copy;
  }
  static cl_sampler copySampler(const StandIn& in, cl_sampler sampler) {
    cl_bool normalized = CL_FALSE;
    cl_addressing_mode addressing = 0;
    cl_filter_mode filter = 0;
    check(clGetSamplerInfo(sampler, CL_SAMPLER_NORMALIZED_COORDS, sizeof normalized, &normalized, nullptr),
          "clGetSamplerInfo");
    check(clGetSamplerInfo(sampler, CL_SAMPLER_ADDRESSING_MODE, sizeof addressing, &addressing, nullptr),
          "clGetSamplerInfo");
    check(clGetSamplerInfo(sampler, CL_SAMPLER_FILTER_MODE, sizeof filter, &filter, nullptr), "clGetSamplerInfo");
    return createSampler(in.context, normalized == CL_TRUE, addressing, filter, "clCreateSampler (stand-in device)");
  }
  static cl_mem copy(cl_command_queue appQueue, const StandIn& in, cl_mem buffer) {
    size_t size = 0;
    check(clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof size, &size, nullptr), "clGetMemObjectInfo");
    std::vector<uint8_t> bytes(size);
    cl_mem_flags flags = 0;
    check(clGetMemObjectInfo(buffer, CL_MEM_FLAGS, sizeof flags, &flags, nullptr), "clGetMemObjectInfo");
    cl_mem readable = buffer;
    if (flags & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_WRITE_ONLY)) {
      // The host may not read it: copy it on its own device into a buffer the host may read.
      cl_context appContext = nullptr;
      check(clGetCommandQueueInfo(appQueue, CL_QUEUE_CONTEXT, sizeof appContext, &appContext, nullptr),
            "clGetCommandQueueInfo");
      cl_int err = CL_SUCCESS;
      readable = clCreateBuffer(appContext, CL_MEM_READ_WRITE, size, nullptr, &err);
      check(err, "clCreateBuffer (a readable copy for the stand-in device)");
      err = clEnqueueCopyBuffer(appQueue, buffer, readable, 0, 0, size, 0, nullptr, nullptr);
      if (err != CL_SUCCESS) clReleaseMemObject(readable);
      check(err, "clEnqueueCopyBuffer (a readable copy for the stand-in device)");
    }
    cl_int readErr = clEnqueueReadBuffer(appQueue, readable, CL_TRUE, 0, size, bytes.data(), 0, nullptr, nullptr);
    if (readable != buffer) clReleaseMemObject(readable);
    check(readErr, "reading a buffer for the stand-in device (clEnqueueReadBuffer)");
    cl_int err = CL_SUCCESS;
    cl_mem copy = clCreateBuffer(in.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, size, bytes.data(), &err);
    check(err, "clCreateBuffer (stand-in device)");
    return copy;
  }
  // The buffer a sub-buffer was made in; a buffer that is none is its own.
  static cl_mem parentOf(cl_mem buffer) {
    cl_mem parent = nullptr;
    check(clGetMemObjectInfo(buffer, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr),
          "clGetMemObjectInfo");
    return parent ? parent : buffer;
  }
  cl_mem own(cl_mem m) {
    owned_.push_back(m);
    return m;
  }
  std::map<cl_mem, cl_mem> copies_;  // the program's buffer or image -> its stand-in
  std::vector<cl_mem> owned_;        // in creation order
  std::vector<cl_sampler> samplers_;  // the stand-in's copies of the program's samplers
};

enum class Traced {
  No,                // not traced (traceLaunch says why); buffers untouched: run the launch
  Done,              // traced in place: the buffers hold the kernel's results
  AppLaunchPending,  // traced on copies or restored afterwards: the launch itself is still to run
};

// A written trace, announced (launches.tsv and a message) once the launch is known to have run.
struct WrittenTrace {
  std::string path, note;
};

void announce(State& s, uint64_t launch, const std::string& kernel, const WrittenTrace& t) {
  std::ofstream(s.settings.out + "/launches.tsv", std::ios::app) << launch << '\t' << kernel << '\t' << t.path << '\n';
  message("traced " + kernel + " launch " + std::to_string(launch) + " -> " + t.path + t.note);
}

// A selected launch that runs nothing (the driver refused it, an empty range, a wait list with
// a failed event): said, and listed in OUT/not-run.tsv ("<launch>\t<kernel>\t<why>"), so that
// `cltrace wrap` knows it was made.
void listNotRun(State& s, uint64_t launch, const std::string& kernel, const std::string& why) {
  std::ofstream(s.settings.out + "/not-run.tsv", std::ios::app) << launch << '\t' << kernel << '\t' << why << '\n';
}
void notRun(State& s, uint64_t launch, const std::string& kernel, const std::string& why) {
  listNotRun(s, launch, kernel, why);
  message("the program's " + kernel + " launch " + std::to_string(launch) + " " + why + ": nothing ran, nothing to trace");
}

// A launch --launch names, of a kernel --kernel does not: listed in OUT/other-kernel.tsv
// ("<launch>\t<kernel>"), so that `cltrace wrap` can say whose launch it was.
void listOtherKernel(State& s, uint64_t launch, const std::string& kernel) {
  std::ofstream(s.settings.out + "/other-kernel.tsv", std::ios::app) << launch << '\t' << kernel << '\n';
}

// A selected launch that runs untraced (`err`: what the driver's enqueue returned): said, and
// listed in OUT/untraced.tsv ("<launch>\t<kernel>\t<reason>") for `cltrace wrap`'s summary. A
// launch the driver refused did not run: nothing to trace, and no untraced launch (notRun).
void untraced(State& s, uint64_t launch, const std::string& kernel, const std::string& said, cl_int err) {
  if (err != CL_SUCCESS) {
    notRun(s, launch, kernel, std::string("was refused by the driver (") + errorName(err) + ")");
    return;
  }
  std::string line = said;  // one line per launch (a compiler's message has several)
  std::replace(line.begin(), line.end(), '\n', ' ');
  std::ofstream(s.settings.out + "/untraced.tsv", std::ios::app) << launch << '\t' << kernel << '\t' << line << '\n';
  if (said.find('\n') == std::string::npos) {
    message(said + "; it runs untraced");
    return;
  }
  // After a compiler's lines, a line of its own rather than a fragment under them.
  message(said);
  message("the program's " + kernel + " launch " + std::to_string(launch) + " runs untraced");
}

// Lets go of a traced kernel (its instrumented programs, device memory and context).
void releaseTraced(State& s, std::map<std::string, State::Traced>::iterator it) {
  const bool outer = !insideLayer;
  insideLayer = true;  // its clRelease* calls pass straight through
  s.orphans.erase(std::remove(s.orphans.begin(), s.orphans.end(), it->first), s.orphans.end());
  s.traced.erase(it);
  if (outer) insideLayer = false;
}

// Lets the oldest entries of `traced` that no program uses go, beyond the few kept (s.mutex held).
void trimOrphans(State& s) {
  while (s.orphans.size() > State::kKeptOrphans) {
    auto it = s.traced.find(s.orphans.front());
    if (it == s.traced.end())
      s.orphans.pop_front();
    else
      releaseTraced(s, it);
  }
}

// The traced kernel filed under `key` for `context`, or null. One built for another context
// (the program has moved on from it) is let go.
std::shared_ptr<TracedKernel> findTraced(State& s, const std::string& key, cl_context context) {
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.traced.find(key);
  if (it == s.traced.end()) return nullptr;
  if (it->second.context != context) {
    releaseTraced(s, it);
    return nullptr;
  }
  s.orphans.erase(std::remove(s.orphans.begin(), s.orphans.end(), key), s.orphans.end());
  return it->second.kernel;
}

// The launch at which the kernel under `key` could not be instrumented or built, if one did.
std::optional<uint64_t> failedBefore(State& s, const std::string& key) {
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.failedAt.find(key);
  if (it == s.failedAt.end()) return std::nullopt;
  return it->second;
}

// Files `kernel` under `key` as one `program` uses; if the program was let go meanwhile (on
// another thread), it is an orphan at once.
void keepTraced(State& s, const std::string& key, std::shared_ptr<TracedKernel> kernel, cl_context context,
                cl_program program) {
  std::lock_guard<std::mutex> lock(s.mutex);
  if (kernel) s.traced[key] = State::Traced{std::move(kernel), context};
  auto p = s.programs.find(program);
  if (p != s.programs.end()) {
    p->second.tracedKeys.insert(key);
  } else if (std::find(s.orphans.begin(), s.orphans.end(), key) == s.orphans.end()) {
    s.orphans.push_back(key);
    trimOrphans(s);
  }
}

// Runs the launch traced (s.tracing held, not s.mutex); `info` and `program` are copies of the
// books taken when it was enqueued. `event` (may be null) receives the trace run's event when the
// launch was traced in place. `written` receives the trace to announce.
Traced traceLaunch(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* offset,
                 const size_t* global, const size_t* local, uint64_t launch, const KernelInfo& info,
                 const ProgramInfo& program, cl_event* event, WrittenTrace& written, std::string& why) {
  State& s = state();
  try {
    cl_context context = nullptr;
    cl_device_id device = nullptr;
    check(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr), "clGetCommandQueueInfo");
    check(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr), "clGetCommandQueueInfo");
    const cl_device_id appDevice = device;  // a NULL local size is chosen for the app's device
    const StandIn* in = programFormatOf(device) == ProgramFormat::None ? &standIn(s) : nullptr;
    if (in) {
      context = in->context;
      device = in->device;
    }
    if (!program.compileError.empty()) throw TraceError(program.compileError);
    if (program.bitcode.empty()) throw TraceError("its program was not built from source through this layer");
    // The options stay in the key: some only matter to the device's build.
    const std::string kernelKey =
        std::to_string(std::hash<std::string>()(program.bitcode)) + "|" + program.options + "|" + info.name;
    // A kernel steered by what its global atomics return is traced on one compute unit of the
    // device (copies of its buffers there), as `cltrace run` traces it.
    bool onOneUnit = false;
    auto toOneUnit = [&] {
      const StandIn* part = oneUnitStandIn(s, device);
      if (!part) return false;
      in = part;
      context = part->context;
      device = part->device;
      onOneUnit = true;
      return true;
    };
    bool steered = false;
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      steered = s.steeredByAtomics.count(kernelKey) != 0;
    }
    if (steered) toOneUnit();
    const auto keyOnDevice = [&] { return kernelKey + "|" + std::to_string(reinterpret_cast<uintptr_t>(device)); };
    std::string key = keyOnDevice();
    // A program's kernels are instrumented once and reused, also by programs made again from
    // the same source. Built without s.mutex held (it takes a while); s.tracing keeps a second
    // launch from building the same one meanwhile.
    std::shared_ptr<TracedKernel> traced = findTraced(s, key, context);
    const bool made = !traced;
    if (made) {
      if (const std::optional<uint64_t> first = failedBefore(s, key))
        throw TraceError("its instrumented kernel could not be made at launch " + std::to_string(*first) +
                         " (said then)");
      try {
        passes::InstrumentedKernel ik = passes::instrumentBitcode(program.bitcode, info.name);
        ik.sourceHash = program.sourceHash;
        for (const std::string& w : ik.report.warnings) message("warning: " + w);  // once per kernel
        if (ik.report.steeredByAtomics() && !steered) {
          {
            std::lock_guard<std::mutex> lock(s.mutex);
            s.steeredByAtomics.insert(kernelKey);
          }
          // Where the device cannot be split, the launch's warning says how traces can differ.
          if (toOneUnit()) key = keyOnDevice();
        }
        traced = std::make_shared<TracedKernel>(context, device, std::move(ik),
                                                deviceBuildOptions(passes::splitOptions(program.options)));
      } catch (const std::exception&) {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.failedAt.emplace(key, launch);
        throw;
      }
    }
    keepTraced(s, key, made ? traced : nullptr, context, info.program);
    TracedKernel& tk = *traced;
    NDRange range;
    range.dims = dims;
    for (cl_uint d = 0; d < dims; ++d) {
      range.global[d] = global[d];
      range.offset[d] = offset ? offset[d] : 0;
    }
    const char* localNote = "";
    if (local) {
      for (cl_uint d = 0; d < dims; ++d) range.local[d] = local[d];
    } else {
      // The size the kernel requires (reqd_work_group_size), as the driver takes it; else a choice.
      size_t required[3] = {0, 0, 0};
      if (target->clGetKernelWorkGroupInfo(kernel, appDevice, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof required,
                                           required, nullptr) == CL_SUCCESS &&
          required[0] != 0) {
        for (cl_uint d = 0; d < dims; ++d) range.local[d] = required[d];
        localNote = " (the local size the kernel requires)";
      } else {
        range.local = chooseLocalSize(range, maxWorkGroupSize(appDevice));
        localNote = " (local size chosen by cltrace)";
      }
    }
    std::filesystem::create_directories(s.settings.out);
    // KERNEL-N.cltrace, the kernel's name cut to fit a file name when it is long.
    std::string path = s.settings.out + "/" + fileNameFitting(info.name, "-" + std::to_string(launch) + ".cltrace");
    std::vector<ArgBinding> args = bindingsOf(info, tk.instrumented());
    std::optional<StandInBuffers> copies;
    std::vector<std::string> notes;
    if (in) copies.emplace(queue, *in, args, tk.instrumented().args, notes);
    for (const auto& n : notes) message("warning: " + info.name + " launch " + std::to_string(launch) + ": " + n);
    // The buffers are put back and the program's launch then runs as it asked when the trace
    // run's writes may differ from it: with a NULL local size (the trace uses cltrace's choice,
    // the program's kernel the driver's, and get_local_size may reach its results), and on
    // devices where they are not exact (SPIR-V; see TracedKernel::writesExactly). So too for a
    // kernel that prints: its output then comes from the program's launch, once, even when the
    // trace fails after the trace run (which would have printed, and the launch again).
    LaunchOptions options;
    options.traceBufferBytes = s.settings.traceBufferBytes;
    options.runLimitSeconds = static_cast<double>(s.settings.traceTimeoutSeconds);
    options.traceRunPrints = !in;  // on a stand-in device the program's launch runs (and prints) after
    options.restoreAfterTrace = !in && (!local || !tk.writesExactly() || tk.instrumented().report.callsPrintf);
    const bool inPlace = !in && !options.restoreAfterTrace;
    if (inPlace) options.traceRunEvent = event;
    LaunchResult r = tk.launch(in ? in->queue : queue, args, range, path, options);
    for (const auto& w : r.warnings) message("warning: " + w);
    if (onOneUnit && explainOnce(s, kernelKey))  // said once a launch is traced there
      message("warning: " + tracedOnOneUnitWarning(info.name, in->where,
                                                   "; the program's launch then runs on its own device"));
    written.path = path;
    written.note = std::string(localNote) +
                   (r.traceSlices > 1 ? " (in " + std::to_string(r.traceSlices) + " slices)" : "") +
                   (in ? in->where : "");
    return inPlace ? Traced::Done : Traced::AppLaunchPending;
  } catch (const std::exception& e) {
    why = "could not trace " + info.name + " launch " + std::to_string(launch) + ": " + e.what();
    return Traced::No;
  }
}

// Sets `kernel`'s arguments to the values `info` holds (passing this layer's books by).
void setArgs(cl_kernel kernel, const KernelInfo& info) {
  for (const auto& [index, size] : info.sizes) {
    auto v = info.values.find(index);
    target->clSetKernelArg(kernel, index, size, v == info.values.end() ? nullptr : v->second.data());
  }
  if (target->clSetKernelArgSVMPointer)
    for (const auto& [index, pointer] : info.svmValues) target->clSetKernelArgSVMPointer(kernel, index, pointer);
}

// Whether the queue, the kernel and the events waited for all belong to one context (what the
// driver cannot tell is left to it: true).
bool sameContext(cl_command_queue queue, cl_kernel kernel, cl_uint nEvents, const cl_event* events) {
  cl_context queueContext = nullptr, other = nullptr;
  if (target->clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queueContext, &queueContext, nullptr) != CL_SUCCESS)
    return true;
  if (target->clGetKernelInfo(kernel, CL_KERNEL_CONTEXT, sizeof other, &other, nullptr) == CL_SUCCESS &&
      other != queueContext)
    return false;
  for (cl_uint i = 0; events && i < nEvents; ++i)
    if (target->clGetEventInfo(events[i], CL_EVENT_CONTEXT, sizeof other, &other, nullptr) == CL_SUCCESS &&
        other != queueContext)
      return false;
  return true;
}

cl_int CL_API_CALL enqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                                        const size_t* offset, const size_t* global, const size_t* local,
                                        cl_uint nEvents, const cl_event* events, cl_event* event) {
  auto forward = [&] {
    return target->clEnqueueNDRangeKernel(queue, kernel, dims, offset, global, local, nEvents, events, event);
  };
  if (insideLayer) return forward();
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  auto k = s.kernels.find(kernel);
  if (k == s.kernels.end()) return forward();
  auto p = s.programs.find(k->second.program);
  uint64_t launch = nextLaunchNumber(s);
  const bool kernelSelected = s.settings.kernels.empty() || s.settings.kernels.count(k->second.name);
  const bool launchSelected = s.settings.launches.empty() || s.settings.launches.count(launch);
  if (!kernelSelected && s.settings.launches.count(launch)) listOtherKernel(s, launch, k->second.name);
  if (!kernelSelected || !launchSelected) return forward();
  // A launch that cannot be traced is said to run untraced once the driver has taken it (one
  // it refuses did not run: its error is the program's to see).
  auto runUntraced = [&](const std::string& reason) {
    const std::string name = k->second.name;  // the books may change while the driver runs
    lock.unlock();
    const cl_int err = forward();
    lock.lock();
    untraced(s, launch, name, reason, err);
    return err;
  };
  const std::string which = k->second.name + " launch " + std::to_string(launch);
  if (p == s.programs.end()) return runUntraced("cannot trace " + which + ": its program was not created from source");
  if (!p->second.untraceable.empty()) return runUntraced("cannot trace " + which + ": " + p->second.untraceable);
  // The driver reports a malformed range to the program (said as refused); an empty launch
  // does nothing (OpenCL 2.1 allows it); one with work-groups that do not divide the range is
  // not traced.
  auto runNothing = [&](const std::string& why) {
    const std::string name = k->second.name;
    lock.unlock();
    const cl_int err = forward();
    lock.lock();
    if (err != CL_SUCCESS)
      untraced(s, launch, name, "", err);
    else
      notRun(s, launch, name, why);
    return err;
  };
  if (dims < 1 || dims > 3 || !global) return runNothing("has no valid range");
  // A traced launch runs in place of the program's, so the driver never sees the enqueue: what
  // it would refuse for mixing contexts (CL_INVALID_CONTEXT) goes to it as it is.
  // A null event in the wait list (or none given for a count) is invalid in OpenCL, yet some
  // drivers (PoCL) run such a launch: the driver decides, as without cltrace; tracing, which waits
  // for the events first, cannot.
  if (nEvents > 0 && (!events || std::find(events, events + nEvents, nullptr) != events + nEvents))
    return runUntraced("cannot trace " + which + ": its event wait list holds a null event (invalid in OpenCL)");
  if (!sameContext(queue, kernel, nEvents, events))
    return runUntraced("cannot trace " + which + ": its kernel, queue and events are not all of one context");
  bool empty = false, uneven = false;
  for (cl_uint d = 0; d < dims; ++d) {
    empty = empty || global[d] == 0;
    uneven = uneven || (local && local[d] != 0 && global[d] % local[d] != 0);
  }
  if (empty) return runNothing("has an empty global size");
  if (uneven)
    return runUntraced("cannot trace " + which + ": its work-groups do not divide the global size (non-uniform work-groups)");
  if (!s.pendingUserEvents.empty())
    return runUntraced("cannot trace " + which +
                       ": the program has user events it has not completed yet, and tracing would wait for them");
  if (insideCallback > 0)
    return runUntraced("cannot trace " + which +
                       ": it is enqueued from an event callback, where OpenCL forbids the waits tracing needs");
  // The books as they are now (the arguments set so far); then the trace, without s.mutex.
  const KernelInfo info = k->second;
  const ProgramInfo program = p->second;
  lock.unlock();
  std::lock_guard<std::mutex> tracing(s.tracing);
  Inside inside;
  // The program's own launch after the waits below, with the arguments it was enqueued with:
  // a callback that ran during the waits may have set others on the kernel (the driver copies
  // them at enqueue); those are put back after.
  auto forwardAsEnqueued = [&] {
    KernelInfo now;
    {
      std::lock_guard<std::mutex> books(s.mutex);
      auto it = s.kernels.find(kernel);
      if (it == s.kernels.end()) return forward();  // released meanwhile: nothing to put back
      now = it->second;
    }
    const bool changed = now.values != info.values || now.sizes != info.sizes || now.nullValues != info.nullValues ||
                         now.svmValues != info.svmValues;
    if (changed) setArgs(kernel, info);
    const cl_int err = forward();
    if (changed) setArgs(kernel, now);
    return err;
  };
  if (nEvents > 0 && clWaitForEvents(nEvents, events) != CL_SUCCESS) {
    insideLayer = false;
    const cl_int err = forwardAsEnqueued();
    std::lock_guard<std::mutex> books(s.mutex);
    if (err != CL_SUCCESS)
      untraced(s, launch, info.name, "", err);
    else
      notRun(s, launch, info.name, "waits for an event that failed");
    return err;
  }
  clFinish(queue);
  WrittenTrace written;
  std::string why;
  const Traced traced =
      traceLaunch(queue, kernel, dims, offset, global, local, launch, info, program, event, written, why);
  if (traced == Traced::Done) {
    std::lock_guard<std::mutex> books(s.mutex);
    announce(s, launch, info.name, written);
    return CL_SUCCESS;
  }
  insideLayer = false;
  const cl_int err = forwardAsEnqueued();
  if (traced == Traced::No) {
    std::lock_guard<std::mutex> books(s.mutex);
    untraced(s, launch, info.name, why, err);
  } else if (traced == Traced::AppLaunchPending) {
    if (err == CL_SUCCESS) {
      std::lock_guard<std::mutex> books(s.mutex);
      announce(s, launch, info.name, written);
    } else {
      // The program's own launch failed (its device refused it): no trace of a launch that
      // did not happen.
      std::error_code ec;
      std::filesystem::remove(written.path, ec);
      message("the program's " + info.name + " launch " + std::to_string(launch) + " failed (" +
              errorName(err) + "); its trace was removed");
      std::lock_guard<std::mutex> books(s.mutex);
      listNotRun(s, launch, info.name, std::string("failed (") + errorName(err) + "); its trace was removed");
    }
  }
  return err;
}

// A task is a launch of one work-item.
cl_int CL_API_CALL enqueueTask(cl_command_queue queue, cl_kernel kernel, cl_uint nEvents, const cl_event* events,
                               cl_event* event) {
  if (insideLayer) return target->clEnqueueTask(queue, kernel, nEvents, events, event);
  const size_t one = 1;
  return enqueueNDRangeKernel(queue, kernel, 1, nullptr, &one, &one, nEvents, events, event);
}

cl_int CL_API_CALL createKernelsInProgram(cl_program program, cl_uint n, cl_kernel* kernels, cl_uint* count) {
  cl_uint made = 0;
  cl_int err = target->clCreateKernelsInProgram(program, n, kernels, &made);
  if (count) *count = made;
  if (err == CL_SUCCESS && kernels && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    for (cl_uint i = 0; i < made && i < n; ++i) {
      size_t size = 0;
      if (clGetKernelInfo(kernels[i], CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size) != CL_SUCCESS) continue;
      std::string name(size, '\0');
      if (clGetKernelInfo(kernels[i], CL_KERNEL_FUNCTION_NAME, size, name.data(), nullptr) != CL_SUCCESS) continue;
      while (!name.empty() && name.back() == '\0') name.pop_back();
      state().kernels[kernels[i]] = KernelInfo(program, name);
    }
  }
  return err;
}

// A clone takes the original's arguments, as the driver's clone does (OpenCL 2.1).
cl_kernel CL_API_CALL cloneKernel(cl_kernel source, cl_int* err) {
  if (!target->clCloneKernel) {  // a platform before OpenCL 2.1
    if (err) *err = CL_INVALID_OPERATION;
    return nullptr;
  }
  cl_kernel k = target->clCloneKernel(source, err);
  if (k && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto original = state().kernels.find(source);
    if (original != state().kernels.end()) {
      KernelInfo& clone = state().kernels[k] = original->second;
      clone.references = 1;
    }
  }
  return k;
}

// Programs and kernels are forgotten when the program lets its last reference go, so that an
// object the driver later makes at the same address (from a binary, say) is not taken for
// them. A released program stays known while kernels made from it live.
void forgetProgramIfUnused(State& s, cl_program program) {
  auto p = s.programs.find(program);
  if (p == s.programs.end() || p->second.references != 0) return;
  for (const auto& [kernel, info] : s.kernels)
    if (info.program == program) return;
  const std::set<std::string> keys = std::move(p->second.tracedKeys);
  s.programs.erase(p);
  for (const std::string& key : keys) {
    bool used = false;
    for (const auto& [other, info] : s.programs) used = used || info.tracedKeys.count(key);
    if (!used && s.traced.count(key)) s.orphans.push_back(key);
  }
  trimOrphans(s);
}

cl_context CL_API_CALL createContext(const cl_context_properties* properties, cl_uint numDevices,
                                     const cl_device_id* devices,
                                     void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*),
                                     void* data, cl_int* err) {
  cl_context c = target->clCreateContext(properties, numDevices, devices, notify, data, err);
  if (c && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().contextReferences[c] = 1;
  }
  return c;
}

cl_context CL_API_CALL createContextFromType(const cl_context_properties* properties, cl_device_type type,
                                             void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*),
                                             void* data, cl_int* err) {
  cl_context c = target->clCreateContextFromType(properties, type, notify, data, err);
  if (c && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().contextReferences[c] = 1;
  }
  return c;
}

cl_int CL_API_CALL retainContext(cl_context context) {
  cl_int err = target->clRetainContext(context);
  if (err == CL_SUCCESS && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto c = state().contextReferences.find(context);
    if (c != state().contextReferences.end()) ++c->second;
  }
  return err;
}

cl_int CL_API_CALL releaseContext(cl_context context) {
  if (!insideLayer) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto c = s.contextReferences.find(context);
    if (c != s.contextReferences.end() && --c->second == 0) {
      s.contextReferences.erase(c);
      for (auto it = s.traced.begin(); it != s.traced.end();) {
        auto next = std::next(it);
        if (it->second.context == context) releaseTraced(s, it);
        it = next;
      }
    }
  }
  return target->clReleaseContext(context);
}

cl_int CL_API_CALL retainProgram(cl_program program) {
  cl_int err = target->clRetainProgram(program);
  if (err == CL_SUCCESS && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto p = state().programs.find(program);
    if (p != state().programs.end()) ++p->second.references;
  }
  return err;
}

// The books are kept before the driver's release: once it frees the object, another thread
// may get a new one at the same address.
cl_int CL_API_CALL releaseProgram(cl_program program) {
  if (!insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto p = state().programs.find(program);
    if (p != state().programs.end() && p->second.references > 0 && --p->second.references == 0)
      forgetProgramIfUnused(state(), program);
  }
  return target->clReleaseProgram(program);
}

cl_int CL_API_CALL retainKernel(cl_kernel kernel) {
  cl_int err = target->clRetainKernel(kernel);
  if (err == CL_SUCCESS && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto k = state().kernels.find(kernel);
    if (k != state().kernels.end()) ++k->second.references;
  }
  return err;
}

cl_int CL_API_CALL releaseKernel(cl_kernel kernel) {
  if (!insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto k = state().kernels.find(kernel);
    if (k != state().kernels.end() && --k->second.references == 0) {
      cl_program program = k->second.program;
      state().kernels.erase(k);
      forgetProgramIfUnused(state(), program);
    }
  }
  return target->clReleaseKernel(kernel);
}

cl_event CL_API_CALL createUserEvent(cl_context context, cl_int* err) {
  cl_event e = target->clCreateUserEvent(context, err);
  if (e && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().pendingUserEvents.insert(e);
  }
  return e;
}

cl_int CL_API_CALL setUserEventStatus(cl_event event, cl_int status) {
  cl_int err = target->clSetUserEventStatus(event, status);
  if (err == CL_SUCCESS && !insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().pendingUserEvents.erase(event);
  }
  return err;
}

// A user event the program lets go of without completing it holds nothing back once no command
// waits for it (the driver's count, which includes waiting commands' references, is then 1).
cl_int CL_API_CALL releaseEvent(cl_event event) {
  if (!insideLayer) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto pending = state().pendingUserEvents.find(event);
    cl_uint references = 0;
    if (pending != state().pendingUserEvents.end() &&
        target->clGetEventInfo(event, CL_EVENT_REFERENCE_COUNT, sizeof references, &references, nullptr) ==
            CL_SUCCESS &&
        references <= 1)
      state().pendingUserEvents.erase(pending);
  }
  return target->clReleaseEvent(event);
}

// The program's event callbacks run with insideCallback set (see there): each registration is
// called once (CL_COMPLETE also when the command fails), so its record goes after the call.
struct EventCallback {
  void(CL_CALLBACK* notify)(cl_event, cl_int, void*);
  void* data;
};

void CL_CALLBACK runEventCallback(cl_event event, cl_int status, void* call) {
  const std::unique_ptr<EventCallback> callback(static_cast<EventCallback*>(call));
  ++insideCallback;
  callback->notify(event, status, callback->data);
  --insideCallback;
}

cl_int CL_API_CALL setEventCallback(cl_event event, cl_int type, void(CL_CALLBACK* notify)(cl_event, cl_int, void*),
                                    void* data) {
  if (insideLayer || !notify) return target->clSetEventCallback(event, type, notify, data);
  auto callback = std::make_unique<EventCallback>(EventCallback{notify, data});
  const cl_int err = target->clSetEventCallback(event, type, &runEventCallback, callback.get());
  if (err == CL_SUCCESS) callback.release();  // runEventCallback deletes it
  return err;
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void* value, size_t* sizeRet) {
  return cltrace::wrapper::layer::apiVersionInfo(name, size, value, sizeRet);
}

CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint numEntries, const _cl_icd_dispatch* targetDispatch,
                                            cl_uint* numEntriesRet, const _cl_icd_dispatch** layerDispatch) {
  cltrace::wrapper::keepStandardError();  // as it is when the program starts using OpenCL
  // Tells `cltrace wrap` that the layer was loaded (a program that clears OPENCL_LAYERS, or
  // bypasses the ICD loader, runs without it).
  if (const char* loaded = std::getenv("CLTRACE_LAYER_LOADED"); loaded && *loaded) {
    const int fd = ::open(loaded, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) ::close(fd);
  }
  cl_int err = cltrace::wrapper::layer::initDispatch(numEntries, targetDispatch, dispatch, numEntriesRet, layerDispatch);
  if (err != CL_SUCCESS) return err;
  target = targetDispatch;
  dispatch.clCreateProgramWithSource = &createProgramWithSource;
  dispatch.clBuildProgram = &buildProgram;
  dispatch.clCompileProgram = &compileProgram;
  dispatch.clLinkProgram = &linkProgram;
  dispatch.clCreateKernel = &createKernel;
  dispatch.clSetKernelArg = &setKernelArg;
  dispatch.clSetKernelArgSVMPointer = &setKernelArgSVMPointer;
  dispatch.clEnqueueNDRangeKernel = &enqueueNDRangeKernel;
  dispatch.clEnqueueTask = &enqueueTask;
  dispatch.clCreateKernelsInProgram = &createKernelsInProgram;
  dispatch.clCloneKernel = &cloneKernel;
  dispatch.clCreateContext = &createContext;
  dispatch.clCreateContextFromType = &createContextFromType;
  dispatch.clRetainContext = &retainContext;
  dispatch.clReleaseContext = &releaseContext;
  dispatch.clRetainProgram = &retainProgram;
  dispatch.clReleaseProgram = &releaseProgram;
  dispatch.clRetainKernel = &retainKernel;
  dispatch.clReleaseKernel = &releaseKernel;
  dispatch.clCreateUserEvent = &createUserEvent;
  dispatch.clSetUserEventStatus = &setUserEventStatus;
  dispatch.clReleaseEvent = &releaseEvent;
  dispatch.clSetEventCallback = &setEventCallback;
  return CL_SUCCESS;
}

}  // extern "C"
