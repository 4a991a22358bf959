// Simulating a trace file: one fresh scheduler over the file per run, configured from the
// cache configuration (`scheduling` = "POLICY" or "POLICY:INTER_WARP_ORDER", warp_size,
// sm_count, max_workgroups_per_sm, max_threads_per_sm, registers_per_thread) and the run's seed.
#pragma once

#include <functional>
#include <string>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/scheduler/config.h"
#include "cltrace/scheduler/scheduler.h"

namespace cltrace::cachesim {

// Throws std::invalid_argument naming the key ('scheduling') when the policy is unknown.
sched::SchedulerConfig schedulerConfigFor(const Config& config, uint64_t seed);

// `scheduler` with its workgroups per SM also capped by the register file for workgroups of
// `workgroupSize` threads (registers_per_thread; see registerLimitedWorkgroups).
sched::SchedulerConfig withRegisterLimit(sched::SchedulerConfig scheduler, const Config& config,
                                         uint64_t workgroupSize);

// `onFirstRunDone` sees the first run's scheduler (the run with the configuration's seed) when
// that run ends, on the thread that ran it (diagnostics are the same on every run). Opening the trace throws TraceFileError; a workgroup the configuration
// cannot hold throws std::invalid_argument.
StepSourceFactory traceStepSourceFactory(const std::string& tracePath, const Config& config,
                                         std::function<void(const sched::Scheduler&)> onFirstRunDone = {});

}  // namespace cltrace::cachesim
