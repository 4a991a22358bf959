// cltrace simulate TRACE [--config PRESET|FILE.json] [--set KEY=VALUE ...] [--runs N] [--seed S]
//                        [--sm N|all|random] [--json]
// Schedules a trace (scheduler) and simulates the Fermi L1 cache on that order (cachesim).
// Configuration keys: docs/cachesim.md. A thin wrapper: all the work is in the libraries.
#include <fmt/core.h>

#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/printers.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/scheduler/scheduler.h"
#include "cltrace/scheduler/trace_source.h"
#include "commands.h"

namespace cltrace::cli {
namespace {

struct SimulateOptions {
  std::string trace;
  std::string config = "gtx480-16k";
  std::vector<std::string> sets;
  std::string runs, seed, sm;  // empty: not given (the configuration's value stands)
  bool json = false;
};

// ---------------------------------------------------------------------------------------------
// Scheduler construction (LEAD: check against the final scheduler API).
//
// One run = one fresh scheduler over the trace file. The cachesim config carries what the
// scheduler needs: `scheduling` ("POLICY" or "POLICY:INTER_WARP_ORDER", e.g.
// "warp:greedy-then-oldest"), warp_size, sm_count, max_workgroups_per_sm, max_threads_per_sm;
// the run's seed goes to the scheduler (random policy).

class TraceStepSource final : public sched::StepSource {
 public:
  TraceStepSource(const std::string& path, const sched::SchedulerConfig& config, std::function<void(const sched::Scheduler&)> done)
      : source_(path), scheduler_(source_, config), done_(std::move(done)) {}
  ~TraceStepSource() override {
    if (done_) done_(scheduler_);
  }
  bool next(sched::WarpStep& out) override { return scheduler_.next(out); }
  void delayWarp(uint64_t warpKey, uint64_t readyCycle) override { scheduler_.delayWarp(warpKey, readyCycle); }

 private:
  sched::TraceReaderSource source_;  // declared first: the scheduler reads from it
  sched::Scheduler scheduler_;
  std::function<void(const sched::Scheduler&)> done_;
};

sched::SchedulerConfig schedulerConfig(const cachesim::Config& c, uint64_t seed) {
  sched::SchedulerConfig s;
  try {
    std::string policy = c.scheduling, order;
    if (size_t colon = policy.find(':'); colon != std::string::npos) {
      order = policy.substr(colon + 1);
      policy = policy.substr(0, colon);
    }
    s.policy = sched::parsePolicy(policy);
    if (!order.empty()) s.interWarp = sched::parseInterWarpOrder(order);
    s.warpSize = c.warpSize;
    s.smCount = c.smCount;
    s.maxWorkgroupsPerSm = c.maxWorkgroupsPerSm;
    s.maxThreadsPerSm = c.maxThreadsPerSm;
    s.seed = seed;
    s.validate();
  } catch (const std::invalid_argument& e) {
    throw UserError(std::string("configuration key 'scheduling': ") + e.what());
  }
  return s;
}

cachesim::StepSourceFactory makeStepSourceFactory(const std::string& tracePath, const cachesim::Config& config) {
  auto firstRun = std::make_shared<bool>(true);
  return [tracePath, config, firstRun](uint64_t seed) -> std::unique_ptr<sched::StepSource> {
    // Diagnostics are the same on every run: print them once.
    auto report = [firstRun](const sched::Scheduler& s) {
      if (!*firstRun) return;
      *firstRun = false;
      for (const sched::Diagnostic& d : s.diagnostics()) fmt::print(stderr, "cltrace: warning: {}\n", d.message);
      if (s.diagnosticCount() > s.diagnostics().size())
        fmt::print(stderr, "cltrace: warning: {} more diagnostics not shown\n",
                   s.diagnosticCount() - s.diagnostics().size());
    };
    try {
      return std::make_unique<TraceStepSource>(tracePath, schedulerConfig(config, seed), report);
    } catch (const std::invalid_argument& e) {
      throw UserError(e.what());  // e.g. a workgroup larger than max_threads_per_sm
    }
  };
}
// ---------------------------------------------------------------------------------------------

void runSimulate(const SimulateOptions& o) {
  std::vector<std::string> overrides = o.sets;
  if (!o.runs.empty()) overrides.push_back("runs=" + o.runs);
  if (!o.seed.empty()) overrides.push_back("seed=" + o.seed);
  if (!o.sm.empty()) overrides.push_back("sm=" + o.sm);
  cachesim::Config config;
  try {
    config = cachesim::loadConfig(o.config, overrides);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  cachesim::Report report = cachesim::simulate(config, makeStepSourceFactory(o.trace, config));
  if (o.json)
    cachesim::printJson(std::cout, report);
  else
    cachesim::printText(std::cout, report);
}

const CommandRegistration registration("simulate", [](CLI::App& app) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand("simulate", "Simulate the Fermi L1 cache on a scheduled trace");
  cmd->add_option("trace", o->trace, "Trace file")->required();
  cmd->add_option("--config", o->config, "Preset (gtx480-16k, gtx480-48k, gtx470-16k, gtx470-48k) or JSON file")
      ->capture_default_str();
  cmd->add_option("--set", o->sets, "KEY=VALUE configuration override (repeatable; see docs/cachesim.md)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--runs", o->runs, "Runs with seeds seed, seed+1, ...; reports the median miss rate");
  cmd->add_option("--seed", o->seed, "Seed of the first run");
  cmd->add_option("--sm", o->sm, "SM whose L1 is simulated: an index, all, or random (per run)");
  cmd->add_flag("--json", o->json, "Print JSON (keys in docs/cachesim.md) instead of text");
  cmd->callback([o] { runSimulate(*o); });
});

}  // namespace
}  // namespace cltrace::cli
