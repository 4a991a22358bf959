// cltrace schedule TRACE --policy ... -o OUT: reorder a trace into Fermi issue order.
#include <fmt/core.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "cltrace/scheduler/output.h"
#include "cltrace/scheduler/scheduler.h"
#include "cltrace/scheduler/trace_source.h"
#include "cltrace/trace_file.h"
#include "commands.h"

namespace cltrace::cli {
namespace {

struct ScheduleOptions {
  std::string trace;
  std::string policy = "warp";
  std::string interWarp = "loose-round-robin";
  uint32_t warpSize = 32;
  uint64_t seed = 1;
  uint32_t sms = 15;
  uint32_t maxWorkgroupsPerSm = 8;
  uint32_t maxThreadsPerSm = 1536;
  std::string format = "binary";
  std::string output;
  bool interWarpGiven = false;
};

void runSchedule(const ScheduleOptions& o) {
  sched::SchedulerConfig config;
  sched::OutputFormat format;
  try {
    config.policy = sched::parsePolicy(o.policy);
    config.interWarp = sched::parseInterWarpOrder(o.interWarp);
    // As simulate's `scheduling` refuses sequential:greedy-then-oldest: it would be ignored.
    if (o.interWarpGiven && config.policy != sched::Policy::Warp)
      throw std::invalid_argument("--inter-warp orders the warps of the warp policy; --policy " + o.policy +
                                  " has no warps");
    config.warpSize = o.warpSize;
    config.seed = o.seed;
    config.smCount = o.sms;
    config.maxWorkgroupsPerSm = o.maxWorkgroupsPerSm;
    config.maxThreadsPerSm = o.maxThreadsPerSm;
    config.validate();
    format = sched::parseOutputFormat(o.format);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }

  requireNotInput(o.trace, o.output, "-o");
  std::unique_ptr<sched::TraceReaderSource> source;
  try {
    source = std::make_unique<sched::TraceReaderSource>(o.trace);  // TraceFileError names the file
  } catch (const TraceFileError&) {
    explainScheduledFile(o.trace, "schedule");
    throw;
  }
  std::unique_ptr<sched::Scheduler> scheduler;
  try {
    scheduler = std::make_unique<sched::Scheduler>(*source, config);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());  // e.g. workgroup larger than --max-threads-per-sm
  }
  auto writer = sched::openStepWriter(format, o.output, scheduler->info());
  const uint64_t steps = sched::writeSchedule(*scheduler, *writer);

  for (const sched::Diagnostic& d : scheduler->diagnostics())
    fmt::print(stderr, "cltrace: warning: {}\n", d.message);
  if (scheduler->diagnosticCount() > scheduler->diagnostics().size())
    fmt::print(stderr, "cltrace: warning: {} more diagnostics not shown\n",
               scheduler->diagnosticCount() - scheduler->diagnostics().size());
  const sched::SchedulerStats& st = scheduler->stats();
  fmt::print("{}: {} steps, {} records, {} workgroups ({} policy) -> {} ({})\n", o.trace, steps,
             st.lanes, st.workgroups, sched::policyName(config.policy), o.output,
             sched::outputFormatName(format));
}

const CommandRegistration registration("schedule", [](CLI::App& app) {
  auto o = std::make_shared<ScheduleOptions>();
  CLI::App* cmd =
      app.add_subcommand("schedule", "Reorder a trace into the order a Fermi GPU would issue it");
  cmd->add_option("trace", o->trace, "Trace file")->required();
  cmd->add_option("--policy", o->policy, "sequential, round-robin, random or warp")
      ->capture_default_str()
      ->check(parsedBy([](const std::string& v) { sched::parsePolicy(v); }))->type_name("POLICY");
  CLI::Option* interWarp = cmd->add_option("--inter-warp", o->interWarp,
                                           "Warp order on an SM (warp policy): loose-round-robin, "
                                           "greedy-then-oldest, two-level")
                               ->capture_default_str()
                               ->check(parsedBy([](const std::string& v) { sched::parseInterWarpOrder(v); }))
                               ->type_name("ORDER");
  cmd->add_option("--warp-size", o->warpSize, "Threads per warp")
      ->capture_default_str()
      ->transform(unsignedInteger(32))
      ->check(between(1, sched::kMaxWarpSize));
  cmd->add_option("--seed", o->seed, "Seed of the random policy")->capture_default_str()->transform(unsignedInteger());
  cmd->add_option("--sms", o->sms, "Number of SMs (GTX480: 15, GTX470: 14)")
      ->capture_default_str()
      ->transform(unsignedInteger(32))
      ->check(between(1, sched::kMaxSmCount));
  cmd->add_option("--max-workgroups-per-sm", o->maxWorkgroupsPerSm, "Resident workgroups per SM")
      ->capture_default_str()
      ->transform(unsignedInteger(32))
      ->check(between(1));
  cmd->add_option("--max-threads-per-sm", o->maxThreadsPerSm, "Resident threads per SM")
      ->capture_default_str()
      ->transform(unsignedInteger(32))
      ->check(between(1));
  cmd->add_option("--format", o->format, "binary (read back by the cache simulator), text or csv")
      ->capture_default_str()
      ->check(parsedBy([](const std::string& v) { sched::parseOutputFormat(v); }))->type_name("FORMAT");
  cmd->add_option("-o,--output", o->output, "Output file")->required()->type_name("FILE");
  cmd->callback([o, interWarp] {
    o->interWarpGiven = interWarp->count() > 0;
    runSchedule(*o);
  });
});

}  // namespace
}  // namespace cltrace::cli
