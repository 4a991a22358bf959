// cltrace run KERNEL.cl [--kernel NAME] [--global ..] [--local ..] [--arg ..] -o TRACE
#include <fmt/core.h>

#include "commands.h"
#include "launch_options.h"

using namespace cltrace;

namespace {

struct RunFlags {
  cli::LaunchFlags launch;
  std::string out = "trace.cltrace";
};

void run(const RunFlags& f) {
  wrapper::RunSpec spec = cli::runSpecOf(f.launch);
  cli::requireNotLaunchInput(spec, f.out, "-o");
  wrapper::RunOutput out = cli::traceLaunch(f.launch, spec, f.out);
  const TraceHeader& h = out.launch.header;
  fmt::print("traced {} on {}: {} work-items, {} records -> {}\n", h.kernelName, h.device,
             h.workItemCount, h.recordCount, f.out);
  // Milliseconds below a second: small launches take well under one (0.000 s read as no run).
  const auto duration = [](double s) { return s < 1 ? fmt::format("{:.1f} ms", s * 1e3) : fmt::format("{:.2f} s", s); };
  fmt::print("count run {}, trace run {}{}\n", duration(out.launch.countSeconds), duration(out.launch.traceSeconds),
             out.launch.traceSlices > 1 ? fmt::format(" in {} slices", out.launch.traceSlices) : "");
  cli::requireAccessesInsideBuffers(out);
}

cli::CommandRegistration registration("run", [](CLI::App& app) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* sub = app.add_subcommand("run", "Trace one launch of a kernel with no host code");
  cli::addLaunchFlags(*sub, f->launch);
  sub->add_option("-o,--out", f->out, "trace file to write")
      ->capture_default_str()
      ->check(cli::nonEmpty())
      ->type_name("FILE");
  sub->callback([f] { run(*f); });
});

}  // namespace
