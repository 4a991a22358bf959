#include "launch_options.h"

#include <fmt/core.h>

#include <array>
#include <filesystem>

#include "commands.h"
#include "cltrace/passes/instrumenter.h"
#include "cltrace/wrapper/standalone.h"

namespace cltrace::cli {

std::vector<uint64_t> sizesOf(const std::vector<std::string>& lists) {
  std::vector<uint64_t> sizes;
  for (const std::string& item : listItems(lists, "size (sizes are X[,Y[,Z]])"))
    sizes.push_back(wrapper::parseUnsigned(item));
  return sizes;
}

namespace {

// CLI11 check of one X[,Y[,Z]] list. (CLI11's own splitting would drop empty items: `64,,64`
// would be a 2-D size.)
CLI::Validator sizeList() {
  return parsedBy([](const std::string& v) {
    if (sizesOf({v}).size() > 3) throw std::invalid_argument("takes at most 3 sizes");
  });
}

}  // namespace

void addLaunchFlags(CLI::App& sub, LaunchFlags& f) {
  sub.add_option("source", f.source, "OpenCL C source file")->required();
  sub.add_option("-k,--kernel", f.kernel, "kernel name (default: from the launch manifest)")
      ->check(nonEmpty())
      ->type_name("NAME");
  addRepeatable(sub, "--global", f.global, "global size X[,Y[,Z]]")->check(sizeList())->type_name("X[,Y[,Z]]");
  addRepeatable(sub, "--local", f.local, "local size X[,Y[,Z]]")->check(sizeList())->type_name("X[,Y[,Z]]");
  addRepeatable(sub, "--offset", f.offset, "global offset X[,Y[,Z]]")->check(sizeList())->type_name("X[,Y[,Z]]");
  addRepeatable(sub, "-a,--arg", f.args,
                "kernel argument, one per flag, in order: "
                "buffer:TYPE:COUNT[:zeros|iota|random[:SEED]|fill:V|file:PATH], scalar:TYPE:VALUE, local:BYTES|local:TYPE:COUNT, "
                "image:ORDER/TYPE:WIDTH[xHEIGHT[xDEPTH]][:INIT], sampler:ADDRESSING:FILTER[:normalized]")
      ->type_name("SPEC");
  addRepeatable(sub, "-D", f.defines, "preprocessor definition NAME[=VALUE] (repeatable)")
      ->check(nonEmpty())
      ->type_name("NAME[=VALUE]");
  addRepeatable(sub, "-I", f.includes, "include directory (repeatable)")->check(nonEmpty())->type_name("DIR");
  sub.add_option("--build-options", f.buildOptions, "further clBuildProgram-style options");
  sub.add_option("--alignment", f.alignment, "alignment of buffers in the virtual address layout")
      ->capture_default_str()
      ->transform(unsignedInteger())
      ->check(parsedBy([](const std::string& v) {
        const uint64_t alignment = std::stoull(v);
        if (alignment == 0 || (alignment & (alignment - 1)) != 0) throw std::invalid_argument("must be a power of two");
      }));
  // Two flags of their own rather than CLI11's "--compress,!--no-compress", which --help shows as
  // "--compress,--no-compress{false}".
  CLI::Option* compress =
      sub.add_flag_callback("--compress", [&f] { f.compress = true; }, "zstd-compress the trace body (the default)");
  sub.add_flag_callback("--no-compress", [&f, compress] {
    // (Not CLI11's excludes(), which --help would show on both lines.)
    if (compress->count() != 0) throw CLI::ValidationError("--no-compress", "cannot be given with --compress");
    f.compress = false;
  }, "write the trace body plain, not zstd-compressed");
  sub.add_option("--trace-buffer-mib", f.traceBufferMiB,
                 "most MiB of packed device records held at once; a launch that makes more is traced in "
                 "slices of work-group layers (the trace is the same)")
      ->capture_default_str()
      ->transform(unsignedInteger())
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40).description(""))
      ->type_name("MIB");
  sub.add_option("--trace-timeout", f.traceTimeout,
                 "seconds the count run and the trace run may each take before cltrace gives up the launch as "
                 "hung and exits with status 1 (default: the trace run 50 times the count run, at least 120; "
                 "the count run 300 for a kernel with a barrier not every work-item may reach, else no limit)")
      ->transform(unsignedInteger())
      ->check(CLI::Range(uint64_t{1}, uint64_t{1'000'000'000}).description(""))
      ->type_name("SECONDS");
  sub.add_option("--device", f.device,
                 "OpenCL device to trace on: P:D (see `cltrace devices`) or part of its name "
                 "(default: $CLTRACE_DEVICE, else the first device that takes SPIR or SPIR-V)")
      ->check(nonEmpty())
      ->type_name("DEVICE");
}

namespace {

// The kernel to run when neither --kernel nor a manifest names one: the program's only kernel;
// otherwise an error that lists them.
std::string onlyKernelOf(const std::string& path, const std::vector<std::string>& buildOptions) {
  const std::vector<std::string> kernels = passes::listKernels(passes::compileProgramSource(
      wrapper::readKernelSource(path), passes::withSourceDirectory(path, buildOptions), {}, path));
  if (kernels.size() == 1) return kernels.front();
  std::string list;
  for (const std::string& k : kernels) list += (list.empty() ? "" : ", ") + k;
  throw UserError("no --kernel given and no launch manifest next to " + path + ": " +
                  (kernels.empty() ? "the program has no kernel" : "its kernels are " + list));
}

}  // namespace

wrapper::RunSpec runSpecOf(const LaunchFlags& f) {
  wrapper::RunSpec spec;
  spec.sourcePath = f.source;
  spec.kernel = f.kernel;
  try {
    for (const auto& a : f.args) spec.args.push_back(wrapper::parseArgSpec(a));
    spec.buildOptions = passes::splitOptions(f.buildOptions);
    for (const auto& d : f.defines) spec.buildOptions.push_back("-D" + d);
    for (const auto& i : f.includes) spec.buildOptions.push_back("-I" + i);
    const std::vector<uint64_t> global = sizesOf(f.global), local = sizesOf(f.local), offset = sizesOf(f.offset);
    bool haveRange = !global.empty();
    if (haveRange) {
      if (global.size() > 3) throw UserError("--global takes at most 3 sizes");
      if (!local.empty() && local.size() != global.size())
        throw UserError("--local needs as many sizes as --global");
      if (!offset.empty() && offset.size() != global.size())
        throw UserError("--offset needs as many sizes as --global");
      spec.range = NDRange::fromSizes(global, local, offset);
      spec.localFromKernel = local.empty();  // the kernel's reqd_work_group_size, if it has one
    }
    // (Said before the manifest is looked for, which a missing source would otherwise lack.)
    std::error_code ec;
    if (!std::filesystem::exists(f.source, ec)) throw UserError("cannot open kernel source " + f.source + ": no such file");
    bool manifest = wrapper::applyManifest(spec, !f.kernel.empty(), haveRange, !f.args.empty(),
                                           !f.buildOptions.empty() || !f.defines.empty());
    if (spec.kernel.empty()) spec.kernel = onlyKernelOf(f.source, spec.buildOptions);
    if (!manifest && !haveRange) {
      if (!f.local.empty() || !f.offset.empty())
        throw UserError(std::string(f.local.empty() ? "--offset" : "--local") +
                        " needs --global (or a launch manifest next to " + f.source + " that gives it)");
      throw UserError("no --global/--local given and no launch manifest next to " + f.source);
    }
    // --local or --offset alone change the manifest's range (its global size stays).
    if (!haveRange && (!f.local.empty() || !f.offset.empty())) {
      auto replace = [&](const std::vector<uint64_t>& sizes, std::array<uint64_t, 3>& into, uint64_t unused,
                         const char* flag) {
        if (sizes.empty()) return;
        if (sizes.size() != spec.range.dims)
          throw UserError(fmt::format("{} needs as many sizes as the launch manifest's global size ({})", flag,
                                      spec.range.dims));
        for (size_t d = 0; d < into.size(); ++d) into[d] = d < sizes.size() ? sizes[d] : unused;
      };
      replace(local, spec.range.local, 1, "--local");
      replace(offset, spec.range.offset, 0, "--offset");
    }
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  return spec;
}

wrapper::LaunchOptions launchOptionsOf(const LaunchFlags& f) {
  wrapper::LaunchOptions o;
  o.alignment = f.alignment;
  o.compress = f.compress;
  o.traceBufferBytes = f.traceBufferMiB << 20;
  o.runLimitSeconds = static_cast<double>(f.traceTimeout);
  return o;
}

wrapper::RunOutput traceLaunch(const LaunchFlags& f, const wrapper::RunSpec& spec, const std::string& tracePath) {
  wrapper::RunOutput out;
  try {
    // What the passes found (e.g. reads they cannot record) is printed before the launch runs.
    out = wrapper::runStandalone(spec, tracePath, launchOptionsOf(f), wrapper::selectDevice(f.device), false,
                                 [](const passes::KernelReport& report) {
                                   for (const auto& w : report.warnings)
                                     fmt::print(stderr, "cltrace: warning: {}\n", w);
                                 });
  } catch (const passes::InstrumentError& e) {
    throw UserError(f.source + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  for (const auto& w : out.launch.warnings) fmt::print(stderr, "cltrace: warning: {}\n", w);
  return out;
}

void requireNotLaunchInput(const wrapper::RunSpec& spec, const std::string& output, const std::string& option) {
  requireNotInput(spec.sourcePath, "the kernel source", output, option);
  const std::string manifest = wrapper::manifestPath(spec.sourcePath).string();
  requireNotInput(manifest, "the launch manifest", output, option);
  for (size_t i = 0; i < spec.args.size(); ++i)
    if (spec.args[i].readsFile())
      requireNotInput(spec.args[i].value, "the initial contents file of argument " + std::to_string(i), output, option);
}

void requireAccessesInsideBuffers(const wrapper::RunOutput& out) {
  if (out.launch.outsideAccesses)
    throw UserError(fmt::format("{} accesses fell outside every buffer (is a buffer smaller than the "
                                "kernel reads?)",
                                out.launch.outsideAccesses));
}

}  // namespace cltrace::cli
