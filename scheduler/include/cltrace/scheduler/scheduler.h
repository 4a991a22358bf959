// The scheduler: turns a trace (one workgroup at a time) into the order a Fermi GPU would
// issue it, as a stream of WarpSteps (see docs/scheduler.md for every definition used here).
//
//   TraceReaderSource source(tracePath);            // or MemoryWorkgroupSource, or your own
//   Scheduler scheduler(source, config);            // validates config and NDRange
//   WarpStep step;
//   while (scheduler.next(step)) { ...; scheduler.delayWarp(step.warpKey, missReadyCycle); }
//   for (auto& d : scheduler.diagnostics()) std::cerr << d.message << '\n';
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cltrace/scheduler/config.h"
#include "cltrace/scheduler/source.h"
#include "cltrace/scheduler/warp_step.h"
#include "cltrace/trace_file.h"

namespace cltrace::sched {

// Something in the trace that would misbehave on a GPU; the scheduler reports it and goes on.
struct Diagnostic {
  enum class Kind : uint8_t {
    PartialBarrier,     // a barrier reached by only part of a workgroup (the rest finished)
    MismatchedBarrier,  // work-items of a workgroup wait at different barriers/iterations
    SaturatedLoopCounter,  // a loop ran past 2^32 - 2 iterations (its counter stopped there)
    DeepLoopNest,          // an instruction nested in more than kMaxLoopDepth loops (said once)
  };
  Kind kind = Kind::PartialBarrier;
  uint64_t workgroup = 0;
  uint32_t instruction = 0;  // the barrier's instruction id (the first one when mismatched), or
                             // the instruction of the first record with a stopped counter or
                             // nested too deep
  std::string message;       // one line, ready to print
};

// Everything a consumer of the schedule needs to know about how it was made.
struct ScheduleInfo {
  SchedulerConfig config;
  uint32_t laneWidth = 32;         // most lanes one step can have: warpSize (warp), 1 (naive)
  uint32_t warpsPerWorkgroup = 1;  // ceil(workgroupSize / warpSize)
  uint64_t workgroupCount = 0;
  NDRange range;
  std::string kernelName;
};

struct SchedulerStats {
  uint64_t steps = 0;  // steps returned by next()
  uint64_t lanes = 0;  // records issued (sum of lanes over all steps)
  uint64_t barrierReleases = 0;
  uint64_t workgroups = 0;  // workgroups taken from the source
  uint64_t peakResidentWorkgroups = 0;
  uint64_t peakResidentRecords = 0;  // most records held at once (resident workgroups)
  uint64_t peakResidentBytes = 0;    // most bytes held at once: workgroup storage (resident
                                     // and pooled for reuse) + the input buffer
};

struct LoadedWorkgroup;  // internal

// Every workgroup of a trace loaded into the scheduler's layout once, for many Schedulers (runs
// with different seeds) that then neither read nor decode the trace again. Read-only: Schedulers
// on several threads may share one. It holds all the records (16 bytes each, some padding
// under the warp policy), where a Scheduler over a source holds only its resident workgroups.
class PreparedTrace {
 public:
  // Reads every workgroup of `source` for Schedulers with `config`'s policy (warp or not) and
  // warp size. Returns null once the loaded workgroups would take more than `maxBytes` (the
  // source is then partly read). Throws what a Scheduler over `source` would throw for bad
  // input or configuration (the source's errors, std::runtime_error, std::invalid_argument).
  static std::shared_ptr<const PreparedTrace> load(WorkgroupSource& source, const SchedulerConfig& config,
                                                   uint64_t maxBytes);
  ~PreparedTrace();
  PreparedTrace(const PreparedTrace&) = delete;
  PreparedTrace& operator=(const PreparedTrace&) = delete;

  const NDRange& range() const { return range_; }
  const std::string& kernelName() const { return kernelName_; }
  const LoopNest* loopNest() const { return loopNest_ ? &*loopNest_ : nullptr; }  // the source's
  const SchedulerConfig& config() const { return config_; }
  uint64_t bytes() const { return bytes_; }
  const LoadedWorkgroup& workgroup(uint64_t id) const { return *workgroups_[id]; }  // id < range().workgroups()

 private:
  PreparedTrace() = default;
  NDRange range_;
  std::string kernelName_;
  std::optional<LoopNest> loopNest_;
  SchedulerConfig config_;
  uint64_t bytes_ = 0;
  std::vector<std::unique_ptr<const LoadedWorkgroup>> workgroups_;
};

class Scheduler final : public StepSource {
 public:
  // Validates `config` (std::invalid_argument naming the field) and the source's NDRange
  // (non-uniform workgroups and workgroups larger than max_threads_per_sm are refused).
  // `source` must outlive the scheduler; it is read lazily from the first next().
  Scheduler(WorkgroupSource& source, const SchedulerConfig& config);
  // Schedules a prepared trace, which this scheduler keeps alive. Its steps are the ones a
  // Scheduler over the trace's source would give. Throws std::invalid_argument when `config`'s
  // policy (warp or not) or warp size is not the one `trace` was loaded for.
  Scheduler(std::shared_ptr<const PreparedTrace> trace, const SchedulerConfig& config);
  ~Scheduler() override;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  // Workgroups are dealt round-robin from SM 0 until every SM is full or the input ends, and
  // only an SM that holds one is refilled, so the SMs that ever get work are those holding a
  // workgroup with records after the first dealing (which this call does if next() has not yet).
  // Workgroups without records take their SM's turn of the deal, so these need not be 0 .. n-1.
  std::optional<std::vector<uint32_t>> busySms() const override;
  // Those of busySms() holding, after the first dealing, a workgroup with a global load. (A
  // later workgroup may bring an SM its first load, or an SM's loads may come only later: the
  // first dealing is what is known before the run.)
  std::optional<std::vector<uint32_t>> readingSms() const override;

  // Next step in issue order: ascending (cycle, SM index). Returns false when every warp has
  // finished. Errors of the source (e.g. TraceFileError) and malformed workgroups
  // (std::runtime_error) propagate from here.
  bool next(WarpStep& out) override;
  // The next step only if it issues before (cycle, sm) in issue order (StepSource): SMs whose
  // warps are all waiting may move their clocks on, but no warp issues at or after the limit.
  NextStep nextBefore(WarpStep& out, uint64_t cycle, uint32_t sm) override;
  // The warp may not issue before readyCycle (readiness only ever moves later). A key of a
  // warp that has already finished is ignored; a key never handed out throws
  // std::invalid_argument.
  void delayWarp(uint64_t warpKey, uint64_t readyCycle) override;
  void delayWarps(const uint64_t* warpKeys, size_t count, uint64_t readyCycle) override;

  const ScheduleInfo& info() const;
  // At most config.maxDiagnostics entries; diagnosticCount() counts all of them.
  const std::vector<Diagnostic>& diagnostics() const;
  uint64_t diagnosticCount() const;
  const SchedulerStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cltrace::sched
