// cltrace predict KERNEL.cl [launch flags as cltrace run] [--config ...] [--set ...]
//                 [--policy warp] [--runs 20] [--sm random] [--json]
// Instrument, trace on the OpenCL device, schedule and simulate, in one command.
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <unistd.h>

#include "cltrace/trace_file.h"
#include "commands.h"
#include "launch_options.h"
#include "prediction.h"
#include "scratch_directory.h"

namespace fs = std::filesystem;
using namespace cltrace;

namespace {

struct PredictFlags {
  cli::LaunchFlags launch;
  std::string config = "gtx480-16k";
  std::vector<std::string> sets;
  std::string policy = "warp";
  uint32_t runs = 20;
  std::string seed, sm = "random";
  bool json = false;
  std::string keepTrace;
  uint32_t threads = 0;
  struct {
    bool policy = false, runs = false, sm = false;
  } given;  // which of the flags with defaults the command line names
};

// As in `cltrace simulate`: a flag given on the command line wins over --set; the flags'
// defaults (warp, 20 runs, a random SM) give way to --set.
cachesim::Config configOf(const PredictFlags& f) {
  std::vector<std::string> defaults, given;
  (f.given.policy ? given : defaults).push_back("scheduling=" + f.policy);
  (f.given.runs ? given : defaults).push_back("runs=" + std::to_string(f.runs));
  (f.given.sm ? given : defaults).push_back("sm=" + f.sm);
  if (!f.seed.empty()) given.push_back("seed=" + f.seed);
  return cli::loadCommandConfig(f.config, defaults, f.sets, given);
}

void run(const PredictFlags& f) {
  cachesim::Config config = configOf(f);  // configuration errors before any work
  wrapper::RunSpec spec = cli::runSpecOf(f.launch);
  // A workgroup the GPU would refuse is refused before the trace (which would be made for
  // nothing), when the local size is given rather than the kernel's.
  if (!spec.localFromKernel) {
    try {
      cachesim::requireWorkgroupFits(config, spec.range);
    } catch (const std::invalid_argument& e) {
      throw cli::UserError(e.what());
    }
  }
  if (!f.keepTrace.empty()) cli::requireNotLaunchInput(spec, f.keepTrace, "--keep-trace");
  // Without --keep-trace the trace goes to a private folder removed at the end (also on a
  // signal or a hung run).
  std::optional<cli::ScratchDirectory> scratch;
  std::string tracePath = f.keepTrace;
  if (tracePath.empty()) {
    scratch.emplace("cltrace-predict");
    tracePath = scratch->path() + "/trace.cltrace";
  }

  cli::Prediction p;
  cli::progress("instrumenting and tracing " + spec.kernel);
  wrapper::RunOutput out = cli::traceLaunch(f.launch, spec, tracePath);
  cli::requireAccessesInsideBuffers(out);
  p.trace = out.launch.header;
  p.accesses = out.report.accesses;
  p.stageSeconds = {{"instrument", out.instrumentSeconds}, {"build", out.buildSeconds}, {"trace", out.traceSeconds}};

  cli::progress(fmt::format("scheduling and simulating ({} run{})", config.runs, config.runs == 1 ? "" : "s"));
  auto start = std::chrono::steady_clock::now();
  p.report = cli::simulateTrace(tracePath, config, f.threads);
  p.stageSeconds.push_back(
      {"schedule+simulate", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
  if (f.json)
    std::cout << cli::predictionToJson(p).dump(2) << "\n";
  else
    cli::printPrediction(std::cout, p);
}

cli::CommandRegistration registration("predict", [](CLI::App& app) {
  auto f = std::make_shared<PredictFlags>();
  CLI::App* sub = app.add_subcommand("predict", "Instrument, trace, schedule and simulate a kernel in one command");
  cli::addLaunchFlags(*sub, f->launch);
  sub->add_option("--config", f->config, "preset (gtx480-16k, gtx480-48k, gtx470-16k, gtx470-48k) or JSON file")
      ->capture_default_str()
      ->check(cli::nonEmpty())
      ->type_name("PRESET|FILE");
  cli::addRepeatable(*sub, "--set", f->sets, "KEY=VALUE configuration override (repeatable; see docs/cachesim.md)")
      ->type_name("KEY=VALUE");
  CLI::Option* policy =
      sub->add_option("--policy", f->policy, "scheduling policy: warp[:INTER_WARP], sequential, round-robin, random")
          ->capture_default_str()
          ->check(cli::configValue("scheduling"))
          ->type_name("POLICY");
  CLI::Option* runs =
      sub->add_option("--runs", f->runs, "simulation runs (median and spread reported)")
          ->capture_default_str()
          ->transform(cli::unsignedInteger(32))
          ->check(cli::configValue("runs"));
  sub->add_option("--seed", f->seed, "seed of the first run (default: the configuration's, 1 in the presets)")
      ->check(cli::configValue("seed"))
      ->type_name("N");
  CLI::Option* sm = sub->add_option("--sm", f->sm, "SM whose L1 is simulated: an index, all, or random (per run)")
                        ->capture_default_str()
                        ->check(cli::configValue("sm"))
                        ->type_name("SM");
  cli::addThreadsOption(*sub, f->threads);
  sub->add_flag("--json", f->json, "print JSON instead of text");
  sub->add_option("--keep-trace", f->keepTrace, "also keep the trace file at this path")
      ->check(cli::nonEmpty())
      ->type_name("FILE");
  sub->callback([f, policy, runs, sm] {
    f->given = {policy->count() > 0, runs->count() > 0, sm->count() > 0};
    run(*f);
  });
});

}  // namespace
