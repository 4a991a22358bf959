// A small C++ host API in the shape of the Khronos C++ bindings (Context, Program, Kernel,
// CommandQueue, Buffer), where tracing a launch is one option of enqueueNDRangeKernel:
//
//   cltrace::api::Context ctx;                       // default device
//   cltrace::api::Program prog(ctx, source);  prog.build("-DN=64");
//   cltrace::api::Kernel k(prog, "mm");
//   cltrace::api::Buffer a(ctx, CL_MEM_READ_WRITE, bytes, host);
//   k.setArg(0, a);  k.setArg(3, 64);
//   cltrace::api::CommandQueue q(ctx);
//   q.enqueueNDRangeKernel(k, {64, 64}, {16, 16});                                // plain launch
//   q.enqueueNDRangeKernel(k, {64, 64}, {16, 16}, cltrace::api::Trace{"mm.cltrace"});  // traced
//
// Errors throw with a message: OpenCLError (a call the driver refused), TraceError (a launch
// that cannot be traced, a trace path that cannot be made, sizes enqueueNDRangeKernel cannot
// take), passes::InstrumentError (a kernel that cannot be instrumented), TraceFileError (a trace
// that cannot be written once begun), std::invalid_argument ($CLTRACE_DEVICE names no device)
// and std::runtime_error (no device can take instrumented programs).
//
// Objects may go in any order: a Program keeps its context, and a Kernel its program, for as
// long as they need them (as OpenCL's reference counts do). A Kernel keeps the memory of the
// Buffers set on it (their cl_mem, retained) until another is set there or the Kernel goes, so
// a launch after a Buffer went still finds it. A kernel's arguments must be set
// through Kernel::setArg: a traced launch binds what setArg was given, and does not see
// arguments set on get() with the OpenCL API.
#pragma once

#include <initializer_list>
#include <exception>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cltrace/wrapper/traced_kernel.h"

namespace cltrace::api {

using wrapper::LaunchOptions;
using wrapper::LaunchResult;

class Context {
 public:
  Context();  // $CLTRACE_DEVICE, else the first device that takes instrumented programs
  explicit Context(cl_device_id device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  cl_context get() const { return context_; }
  cl_device_id device() const { return device_; }

 private:
  cl_device_id device_;
  cl_context context_;
};

class Buffer {
 public:
  // With `host` and neither CL_MEM_USE_HOST_PTR nor CL_MEM_COPY_HOST_PTR in `flags`, the
  // buffer starts as a copy of `host`.
  Buffer(Context& ctx, cl_mem_flags flags, size_t bytes, void* host = nullptr);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  cl_mem get() const { return mem_; }
  size_t size() const { return size_; }

 private:
  cl_mem mem_;
  size_t size_;
};

// A __local argument of `bytes` bytes.
struct LocalSpace {
  size_t bytes;
};

class Program {
 public:
  Program(Context& ctx, std::string source);
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  // Builds for the context's device; throws with the build log. The source is compiled for
  // tracing then too, with the headers and working directory of this moment: traced launches
  // run the code that was built. A build that fails leaves cltrace's side as it was (options()
  // and what traced launches run), though OpenCL may leave the program with no executable (after
  // a compile error no Kernel can be made until a build succeeds).
  void build(const std::string& options = "");
  cl_program get() const { return state_->program; }
  const std::string& source() const { return state_->source; }
  const std::string& options() const { return state_->options; }
  // The instrumented form of kernel `name`: made on the first traced launch of any Kernel of
  // this program with that name from what build() compiled, then reused (until the program is
  // built again). Headers are looked for in the working directory of the build first, as
  // PoCL's compiler does. Throws passes::InstrumentError when the build's source did not compile
  // for tracing. Traced launches of one program's kernels take turns (threads may share it).
  wrapper::TracedKernel& traced(const std::string& name) { return state_->traced(name); }

 private:
  friend class Kernel;
  // Shared with the program's kernels, which may outlive this object.
  struct State {
    cl_context context;  // retained
    cl_device_id device;
    std::string source, options;
    std::vector<std::string> instrumentOptions;  // the build's options, the working directory first
    cl_program program;
    std::string bitcode;                 // the source compiled for tracing at the last build
    std::exception_ptr compileError;     // or why it did not compile
    std::mutex tracing;                  // traced launches and builds take turns
    std::map<std::string, std::unique_ptr<wrapper::TracedKernel>> tracedKernels;
    State(cl_context c, cl_device_id d, std::string s);
    ~State();
    wrapper::TracedKernel& traced(const std::string& name);
  };
  std::shared_ptr<State> state_;
};

class Kernel {
 public:
  Kernel(Program& program, const std::string& name);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  void setArg(cl_uint index, const Buffer& buffer);
  // A buffer or image made with the OpenCL API itself (the template below would pass it as 8
  // bytes). An image's reads and writes go through the texture path: they are not traced.
  void setArg(cl_uint index, cl_mem buffer);
  void setArg(cl_uint index, cl_sampler sampler);
  void setArg(cl_uint index, LocalSpace local);
  template <typename T>
  void setArg(cl_uint index, const T& value) {
    // A host pointer would be passed as its 8 bytes, which the device would take for an address.
    static_assert(!std::is_pointer_v<T> && !std::is_null_pointer_v<T>,
                  "setArg takes a Buffer, a cl_mem, a cl_sampler, LocalSpace or a value, not a pointer");
    setArgBytes(index, &value, sizeof(T));
  }
  cl_kernel get() const { return kernel_; }
  const std::string& name() const { return name_; }

 private:
  friend class CommandQueue;
  void setArgBytes(cl_uint index, const void* data, size_t size);
  std::string setting(cl_uint index) const;  // what a failed clSetKernelArg is called
  void bind(cl_uint index, wrapper::ArgBinding binding);

  std::shared_ptr<Program::State> program_;
  std::string name_;
  cl_kernel kernel_;
  std::vector<wrapper::ArgBinding> args_;
};

// Where a traced launch writes its trace, and how.
struct Trace {
  std::string path;
  LaunchOptions options = {};
};

class CommandQueue {
 public:
  explicit CommandQueue(Context& ctx);
  ~CommandQueue();
  CommandQueue(const CommandQueue&) = delete;
  CommandQueue& operator=(const CommandQueue&) = delete;
  cl_command_queue get() const { return queue_; }

  void write(Buffer& b, const void* data, size_t bytes);
  void read(const Buffer& b, void* data, size_t bytes);
  void finish();
  // Plain launch when `trace` is empty; otherwise a traced launch whose result is returned.
  // An empty `local` is the size the kernel requires (reqd_work_group_size; OpenCL refuses a
  // NULL local size for such a kernel), else the driver's choice (NULL): a traced launch is then
  // traced with cltrace's choice (wrapper::chooseLocalSize, as under `cltrace wrap`), and the
  // kernel runs again afterwards with the driver's, its buffers put back first.
  std::optional<LaunchResult> enqueueNDRangeKernel(Kernel& k, std::vector<size_t> global,
                                                   std::vector<size_t> local,
                                                   std::optional<Trace> trace = std::nullopt,
                                                   std::vector<size_t> offset = {});

 private:
  cl_command_queue queue_;
};

}  // namespace cltrace::api
