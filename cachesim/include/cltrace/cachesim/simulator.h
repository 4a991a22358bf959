// The cache simulator: drives a scheduler (sched::StepSource), coalesces each warp step into
// line requests and sends them to the L1 model(s) of the selected SM(s).
//
// Per step of a simulated SM:
//   Load          coalesced lines -> SmModel::read, in first-touch order. The warp may continue
//                 when the last of its lines has its data (max readyCycle); if that is later than
//                 the next cycle the simulator calls delayWarp(warpKey, readyCycle).
//   Store         coalesced lines -> SmModel::write; never delays the warp.
//   Atomic        counted in `atomics` (lines after coalescing); bypasses L1; no delay.
//   ConstantLoad  counted in `constant_loads` (lines after coalescing); constant cache; no delay.
//   Barrier/Fence counted; pass through (the scheduler handles barrier semantics).
// Steps of SMs that are not simulated are ignored (their warps run at the scheduler's pace).
//
// MSHR stalls and retries. The StepSource has already moved past a step when the simulator sees
// it, so a step that stalls is kept in the simulator: the requests it already made stay done,
// the rest are retried at the retry cycle (the earliest fill that can free what was missing).
// The simulator calls delayWarp(warpKey, retry + 1) so the scheduler does not issue the warp's
// next step before the retry, and merges its retry queue with the scheduler's stream in
// (cycle, sm) order: before taking a step from the source it looks at the source's next step and
// first performs every retry due at or before it. A retry that stalls again is re-queued. Warps
// that stalled on an SM whose MSHRs were all taken wait together (a herd, one queue entry) and
// go through each fill's retries as one step, in the order their own entries would; the same
// counts and delayWarp calls result (delayWarps, in that order). Warp keys must be below 2^63
// (std::invalid_argument otherwise). If
// the scheduler still yields a step of a warp that has a step held (possible only when a retry
// stalls again, or finishes later than the step it already yielded), that step is queued behind
// the held one and replayed in order when the warp is ready, so a warp's steps are always
// processed in program order. Retries do not take an issue slot from the scheduler.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/sm_model.h"
#include "cltrace/cachesim/stats.h"
#include "cltrace/scheduler/warp_step.h"

namespace cltrace::cachesim {

// One L1 request, for plots (Simulator::setRequestCallback). MSHR stalls are reported too
// (outcome MshrStall), once per stalled attempt.
struct RequestEvent {
  uint64_t cycle = 0;
  uint32_t sm = 0;
  uint64_t workgroup = 0;
  uint32_t warp = 0;
  uint64_t warpKey = 0;
  uint64_t step = 0;
  uint32_t instruction = 0;
  AccessKind kind = AccessKind::Load;
  uint64_t line = 0;  // byte address >> log2(line size)
  uint32_t set = 0;
  Outcome outcome = Outcome::Hit;
  uint64_t reuseDistance = ReuseDistanceTracker::kInfinite;
};
using RequestCallback = std::function<void(const RequestEvent&)>;

// Makes a fresh scheduler for one run; `seed` is that run's seed.
using StepSourceFactory = std::function<std::unique_ptr<sched::StepSource>(uint64_t seed)>;

struct RunSummary {
  uint32_t count = 0;
  // Runs whose L1 saw reads: a run without reads (its SM only stores, or makes no access) has no
  // miss rate (0 of 0) and is left out of the median and the deviation, rather than counted as 0.
  uint32_t withReads = 0;
  std::optional<double> median;  // median miss rate (mean of the two middle values for an even
                                 // count); none when no run saw reads
  std::optional<double> rsd;     // relative standard deviation in percent: 100 * stddev / median
                                 // (population standard deviation, as the thesis defines it);
                                 // none also when the median is 0 and the runs differ
  std::vector<std::optional<double>> values;  // miss rate of each run, in run order (none: no reads)
  std::vector<uint64_t> seeds;     // seed of each run
  std::vector<std::string> sms;    // SM each run simulated ("all" or an index)
  uint32_t representative = 0;     // first run with reads whose miss rate is closest to the median
                                   // (run 0 when none saw reads)
};

struct Report {
  Config config;
  Stats stats;  // statistics of the representative run
  std::string sm;  // SM of the representative run
  RunSummary runs;
  std::vector<std::string> warnings;  // e.g. the chosen SM received no workgroups
  // The seed a scheduled file's order was drawn with (random policy), which is not the
  // simulation's (config.seed: jitter, random replacement, sm=random). Set by the caller.
  std::optional<uint64_t> scheduleSeed;
  // Where each instruction (by id) is in the kernel's source ("line 12:17"; "" unknown), when the
  // trace says (instructionSource). Set by the caller; printed beside the per-instruction rows.
  std::vector<std::string> instructionSources;
  const std::string& sourceOf(uint32_t instruction) const {
    static const std::string none;
    return instruction < instructionSources.size() ? instructionSources[instruction] : none;
  }
};

class Simulator {
 public:
  static constexpr uint32_t kAllSms = ~uint32_t(0);

  // Validates `config` (std::invalid_argument naming the key).
  explicit Simulator(Config config);

  const Config& config() const { return config_; }
  // Called for every L1 request (and every bypassing atomic / constant request).
  void setRequestCallback(RequestCallback callback) { callback_ = std::move(callback); }

  // One run: consumes `source` to the end. `seed` drives latency jitter, random replacement and
  // the choice of SM for sm=random.
  Stats run(sched::StepSource& source, uint64_t seed);
  // SM simulated by the last run (kAllSms for sm=all).
  uint32_t lastSm() const { return lastSm_; }

  // How many runs of runMany may proceed at once, each on its own thread (default 1). The
  // report does not depend on it: every run depends only on its seed, and results are
  // gathered in run order. With a request callback the runs stay on one thread, in order.
  void setThreads(uint32_t threads) { threads_ = threads == 0 ? 1 : threads; }

  // config().runs runs with seeds config().seed + i, each on a fresh source from `factory`.
  // With several threads `factory` is called from them, one call per run. A run that throws
  // stops the others from starting; the error of the first failing run (in run order among
  // those that ran) is rethrown.
  Report runMany(const StepSourceFactory& factory);

 private:
  using BusySms = std::optional<std::vector<uint32_t>>;  // as StepSource::busySms() gives them
  // One run; `sm` receives the SM it simulated. With sm=random, `busy` are the SMs it draws
  // among (the source's reading SMs, or its busy SMs when none reads).
  // `loadingSms`, when given, receives the SMs whose steps included a load.
  Stats runOne(sched::StepSource& source, uint64_t seed, const BusySms& busy, uint32_t& sm,
               std::vector<uint32_t>* loadingSms = nullptr) const;
  // The warning for an SM index whose L1 saw no step, naming the SMs that do get work.
  std::string idleSmWarning(const BusySms& busy) const;

  Config config_;
  RequestCallback callback_;
  uint32_t lastSm_ = 0;
  uint32_t threads_ = 1;
};

// Convenience: Simulator(config) + optional callback + threads + runMany(factory).
Report simulate(const Config& config, const StepSourceFactory& factory, RequestCallback callback = {},
                uint32_t threads = 1);

// Median and relative standard deviation of `values` as in RunSummary.
// (`rsd` none when the median is 0 and the values differ.)
void summarize(const std::vector<double>& values, double& median, std::optional<double>& rsd);

}  // namespace cltrace::cachesim
