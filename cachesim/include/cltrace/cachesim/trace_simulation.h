// Simulating a trace file: one fresh scheduler over the file per run, configured from the
// cache configuration (`scheduling` = "POLICY" or "POLICY:INTER_WARP_ORDER", warp_size,
// sm_count, max_workgroups_per_sm, max_threads_per_sm, registers_per_thread) and the run's seed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/scheduler/config.h"
#include "cltrace/scheduler/output.h"
#include "cltrace/scheduler/scheduler.h"

namespace cltrace::cachesim {

// Throws std::invalid_argument naming the key ('scheduling') when the policy is unknown.
sched::SchedulerConfig schedulerConfigFor(const Config& config, uint64_t seed);

// `scheduler` with its workgroups per SM also capped by the register file for workgroups of
// `range`'s size (registers_per_thread; registerLimitedWorkgroups) and by the SM's __local memory
// for workgroups using range.localMemoryBytes (local_memory_per_sm; localMemoryLimitedWorkgroups).
// Throws std::invalid_argument naming the key when a workgroup is over max_threads_per_workgroup.
sched::SchedulerConfig withResidencyLimits(sched::SchedulerConfig scheduler, const Config& config,
                                           const NDRange& range);

// `onFirstRunDone` sees the first run's scheduler (the run with the configuration's seed) when
// that run ends, on the thread that ran it (diagnostics are the same on every run). Opening the trace throws TraceFileError; a workgroup the configuration
// cannot hold throws std::invalid_argument.
//
// With more than one run (config.runs), the first run to start loads the whole trace into the
// scheduler's layout (sched::PreparedTrace) and every run schedules that, so the file is read
// and decoded once instead of once per run; unless the loaded trace would take more than
// `preparedTraceBytes` (0: never), in which case each run reads the file as it goes.
//
// With `readAhead` the file is read and decoded on a thread of its own, a couple of workgroups
// ahead of the scheduler (sched::ReadAheadSource): one more thread per run that reads the file
// or prepares the trace; the results are the same either way.
uint64_t defaultPreparedTraceBytes();  // a quarter of the memory the process may use (machine, cgroup, RLIMIT_AS)
StepSourceFactory traceStepSourceFactory(const std::string& tracePath, const Config& config,
                                         std::function<void(const sched::Scheduler&)> onFirstRunDone = {},
                                         uint64_t preparedTraceBytes = defaultPreparedTraceBytes(),
                                         bool readAhead = true);

// Simulating a binary scheduled file (`cltrace schedule --format binary`): its steps in file
// order, for every run. The schedule was made already, so it fixes the scheduling keys and the
// issue order; the timing model, which reorders warps by driving the scheduler, cannot run on it.
bool isScheduledFile(const std::string& path);  // starts with the schedule file's magic

// `config` for the schedule `info`: scheduling, warp_size, sm_count, max_workgroups_per_sm and
// max_threads_per_sm become the file's, registers_per_thread 0 (residency was decided) and
// timing off. A key in `explicitKeys` (set by the user) whose value disagrees throws
// std::invalid_argument naming the key and the `cltrace schedule` options that make a file with
// its value; so does timing when set on.
Config configForSchedule(Config config, const sched::ScheduleInfo& info,
                         const std::vector<std::string>& explicitKeys = {});

// Each run reads the file afresh (sched::ScheduleReader: a corrupt or truncated file throws
// sched::ScheduleFileError when reached).
StepSourceFactory scheduleFileStepSourceFactory(const std::string& path);

}  // namespace cltrace::cachesim
