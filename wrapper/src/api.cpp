#include "cltrace/wrapper/api.h"

#include "cltrace/wrapper/local_size.h"

namespace cltrace::api {

using wrapper::check;

Context::Context() : Context(wrapper::selectDevice("")) {}

Context::Context(cl_device_id device) : device_(device) {
  cl_int err = CL_SUCCESS;
  context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  check(err, "clCreateContext");
}

Context::~Context() { clReleaseContext(context_); }

Buffer::Buffer(Context& ctx, cl_mem_flags flags, size_t bytes, void* host) : size_(bytes) {
  cl_int err = CL_SUCCESS;
  // A host pointer with neither USE_HOST_PTR nor COPY_HOST_PTR is copied (OpenCL itself would
  // reject it); the flags given are passed on as they are otherwise.
  if (host && !(flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR))) flags |= CL_MEM_COPY_HOST_PTR;
  mem_ = clCreateBuffer(ctx.get(), flags, bytes, host, &err);
  check(err, "clCreateBuffer");
}

Buffer::~Buffer() { clReleaseMemObject(mem_); }

Program::State::State(cl_context c, cl_device_id d, std::string s)
    : context(c), device(d), source(std::move(s)) {
  cl_int err = CL_SUCCESS;
  const char* text = source.c_str();
  program = clCreateProgramWithSource(context, 1, &text, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  clRetainContext(context);
}

Program::State::~State() {
  tracedKernels.clear();  // before the context they were built in
  clReleaseProgram(program);
  clReleaseContext(context);
}

Program::Program(Context& ctx, std::string source)
    : state_(std::make_shared<State>(ctx.get(), ctx.device(), std::move(source))) {}

void Program::build(const std::string& options) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.tracing);
  cl_int err = clBuildProgram(s.program, 1, &s.device, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(s.program, s.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(s.program, s.device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    while (!log.empty() && log.back() == '\0') log.pop_back();  // the log's terminator
    // The one cause of CL_INVALID_OPERATION for a build that waits (no callback): kernels.
    const std::string why = err == CL_INVALID_OPERATION && log.empty()
                                ? "kernels made from this program still exist, and OpenCL builds a program again "
                                  "only when it has none: destroy its Kernels first"
                                : log.empty() ? "no build log"
                                              : "build log:\n" + log;
    throw wrapper::OpenCLError("clBuildProgram (" + why + ")", err);
  }
  s.options = options;
  s.instrumentOptions = wrapper::withWorkingDirectory(passes::splitOptions(options));
  s.tracedKernels.clear();  // instrumented with the options they were built with
  // Compiled now, as the driver compiled it: headers may change, and the working directory that
  // relative -I options name, before a traced launch.
  try {
    s.bitcode = passes::compileProgramSource(s.source, wrapper::withDeviceMacros(s.device, s.instrumentOptions));
    s.compileError = nullptr;
  } catch (const std::exception&) {
    s.bitcode.clear();
    s.compileError = std::current_exception();
  }
}

wrapper::TracedKernel& Program::State::traced(const std::string& name) {
  std::unique_ptr<wrapper::TracedKernel>& slot = tracedKernels[name];
  if (!slot) {
    if (compileError) std::rethrow_exception(compileError);
    if (bitcode.empty()) throw wrapper::TraceError("kernel " + name + ": its program has not been built");
    passes::InstrumentedKernel kernel = passes::instrumentBitcode(bitcode, name);
    kernel.sourceHash = passes::sourceHashOf(source);
    slot = std::make_unique<wrapper::TracedKernel>(context, device, std::move(kernel),
                                                   wrapper::deviceBuildOptions(passes::splitOptions(options)));
  }
  return *slot;
}

Kernel::Kernel(Program& program, const std::string& name) : program_(program.state_), name_(name) {
  cl_int err = CL_SUCCESS;
  kernel_ = clCreateKernel(program.get(), name.c_str(), &err);
  check(err, ("clCreateKernel(" + name + ")").c_str());
  cl_uint n = 0;
  check(clGetKernelInfo(kernel_, CL_KERNEL_NUM_ARGS, sizeof n, &n, nullptr), "clGetKernelInfo");
  args_.resize(n);
}

namespace {

void release(const wrapper::ArgBinding& a) {
  if (a.kind == wrapper::ArgBinding::Kind::Buffer && a.buffer) clReleaseMemObject(a.buffer);
  if (a.kind == wrapper::ArgBinding::Kind::Sampler && a.sampler) clReleaseSampler(a.sampler);
}

// setArg(cl_mem) cannot tell an image from a buffer: a memory object set on an image parameter
// is the image.
std::vector<wrapper::ArgBinding> bindingsFor(const std::vector<passes::KernelArg>& params,
                                             std::vector<wrapper::ArgBinding> args) {
  for (size_t i = 0; i < args.size() && i < params.size(); ++i)
    if (params[i].handle == passes::KernelArg::Handle::Image && args[i].kind == wrapper::ArgBinding::Kind::Buffer)
      args[i].kind = wrapper::ArgBinding::Kind::Image;
  return args;
}

}  // namespace

Kernel::~Kernel() {
  for (const wrapper::ArgBinding& a : args_) release(a);
  clReleaseKernel(kernel_);
}

void Kernel::bind(cl_uint index, wrapper::ArgBinding binding) {
  if (index >= args_.size())
    throw wrapper::OpenCLError("setting argument " + std::to_string(index) + " of " + name_, CL_INVALID_ARG_INDEX);
  // The kernel keeps the memory of a buffer or image (and a sampler) set on it, so that one gone
  // before a launch leaves it valid (a traced launch asks the driver about every buffer: freed,
  // it crashed).
  if (binding.kind == wrapper::ArgBinding::Kind::Buffer && binding.buffer) clRetainMemObject(binding.buffer);
  if (binding.kind == wrapper::ArgBinding::Kind::Sampler && binding.sampler) clRetainSampler(binding.sampler);
  release(args_[index]);
  args_[index] = std::move(binding);
}

void Kernel::setArg(cl_uint index, const Buffer& buffer) { setArg(index, buffer.get()); }

void Kernel::setArg(cl_uint index, cl_mem buffer) {
  check(clSetKernelArg(kernel_, index, sizeof buffer, &buffer), setting(index).c_str());
  bind(index, wrapper::ArgBinding::ofBuffer(buffer));
}

void Kernel::setArg(cl_uint index, cl_sampler sampler) {
  check(clSetKernelArg(kernel_, index, sizeof sampler, &sampler), setting(index).c_str());
  bind(index, wrapper::ArgBinding::ofSampler(sampler));
}

void Kernel::setArg(cl_uint index, LocalSpace local) {
  check(clSetKernelArg(kernel_, index, local.bytes, nullptr), setting(index).c_str());
  bind(index, wrapper::ArgBinding::ofLocal(local.bytes));
}

void Kernel::setArgBytes(cl_uint index, const void* data, size_t size) {
  check(clSetKernelArg(kernel_, index, size, data), setting(index).c_str());
  bind(index, wrapper::ArgBinding::ofScalar(data, size));
}

std::string Kernel::setting(cl_uint index) const {
  return "clSetKernelArg (argument " + std::to_string(index) + " of kernel " + name_ + ")";
}

CommandQueue::CommandQueue(Context& ctx) : queue_(wrapper::createCommandQueue(ctx.get(), ctx.device())) {}

CommandQueue::~CommandQueue() { clReleaseCommandQueue(queue_); }

void CommandQueue::write(Buffer& b, const void* data, size_t bytes) {
  check(clEnqueueWriteBuffer(queue_, b.get(), CL_TRUE, 0, bytes, data, 0, nullptr, nullptr), "clEnqueueWriteBuffer");
}

void CommandQueue::read(const Buffer& b, void* data, size_t bytes) {
  check(clEnqueueReadBuffer(queue_, b.get(), CL_TRUE, 0, bytes, data, 0, nullptr, nullptr), "clEnqueueReadBuffer");
}

void CommandQueue::finish() { check(clFinish(queue_), "clFinish"); }

std::optional<LaunchResult> CommandQueue::enqueueNDRangeKernel(Kernel& k, std::vector<size_t> global,
                                                               std::vector<size_t> local,
                                                               std::optional<Trace> trace,
                                                               std::vector<size_t> offset) {
  if (global.empty() || global.size() > 3 || (!local.empty() && local.size() != global.size()) ||
      (!offset.empty() && offset.size() != global.size()))
    throw wrapper::TraceError(
        "enqueueNDRangeKernel: global needs 1 to 3 sizes, local (unless empty) and offset as many");
  const cl_uint dims = static_cast<cl_uint>(global.size());
  // An empty local size is the one the kernel requires (reqd_work_group_size), which OpenCL
  // refuses to infer from NULL, else the driver's choice (NULL).
  size_t required[3] = {0, 0, 0};
  if (local.empty())
    check(clGetKernelWorkGroupInfo(k.get(), k.program_->device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof required,
                                   required, nullptr),
          "clGetKernelWorkGroupInfo(CL_KERNEL_COMPILE_WORK_GROUP_SIZE)");
  if (local.empty() && required[0] != 0) local.assign(required, required + dims);
  auto runKernel = [&] {
    check(clEnqueueNDRangeKernel(queue_, k.get(), dims, offset.empty() ? nullptr : offset.data(), global.data(),
                                 local.empty() ? nullptr : local.data(), 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
  };
  if (!trace) {
    runKernel();
    return std::nullopt;
  }
  NDRange r = NDRange::fromSizes({global.begin(), global.end()}, {local.begin(), local.end()},
                                 {offset.begin(), offset.end()});
  // The driver's choice is not known: traced with cltrace's (as under wrap), and the kernel
  // runs again after with the driver's.
  if (local.empty()) r.local = wrapper::chooseLocalSize(r, wrapper::maxWorkGroupSize(k.program_->device));
  finish();
  std::lock_guard<std::mutex> turn(k.program_->tracing);  // one traced launch of a program at a time
  // Where the trace run's writes may differ from the kernel's own (SPIR-V, a local size the
  // driver chooses), the buffers are put back after tracing and the program's kernel itself
  // writes them.
  wrapper::TracedKernel& traced = k.program_->traced(k.name_);
  wrapper::LaunchOptions options = trace->options;
  const bool runKernelAfter = (local.empty() || !traced.writesExactly()) && !options.restoreAfterTrace;
  if (runKernelAfter) options.restoreAfterTrace = true;
  LaunchResult result = traced.launch(queue_, bindingsFor(traced.instrumented().args, k.args_), r, trace->path, options);
  if (runKernelAfter) {
    runKernel();
    finish();
  }
  return result;
}

}  // namespace cltrace::api
