#include "cltrace/cachesim/trace_simulation.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "cltrace/scheduler/trace_source.h"

namespace cltrace::cachesim {

namespace {

// A scheduler that owns its trace reader.
class TraceStepSource final : public sched::StepSource {
 public:
  TraceStepSource(const std::string& path, const Config& cacheConfig, const sched::SchedulerConfig& config,
                  std::function<void(const sched::Scheduler&)> done)
      : source_(path), scheduler_(source_, withRegisterLimit(config, cacheConfig, source_.range().workgroupSize())), done_(std::move(done)) {}
  ~TraceStepSource() override {
    if (done_) done_(scheduler_);
  }
  bool next(sched::WarpStep& out) override { return scheduler_.next(out); }
  void delayWarp(uint64_t warpKey, uint64_t readyCycle) override { scheduler_.delayWarp(warpKey, readyCycle); }
  uint32_t busySms() const override { return scheduler_.busySms(); }

 private:
  sched::TraceReaderSource source_;  // declared first: the scheduler reads from it
  sched::Scheduler scheduler_;
  std::function<void(const sched::Scheduler&)> done_;
};

}  // namespace

sched::SchedulerConfig schedulerConfigFor(const Config& c, uint64_t seed) {
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
    throw std::invalid_argument(std::string("configuration key 'scheduling': ") + e.what());
  }
  return s;
}

sched::SchedulerConfig withRegisterLimit(sched::SchedulerConfig s, const Config& c, uint64_t workgroupSize) {
  s.maxWorkgroupsPerSm = std::min(s.maxWorkgroupsPerSm, registerLimitedWorkgroups(c, workgroupSize));
  return s;
}

StepSourceFactory traceStepSourceFactory(const std::string& tracePath, const Config& config,
                                         std::function<void(const sched::Scheduler&)> onFirstRunDone) {
  // The first run is the one with the configuration's seed, whichever thread runs it, so that
  // the same diagnostics are reported however many runs proceed at once.
  return [tracePath, config, onFirstRunDone](uint64_t seed) -> std::unique_ptr<sched::StepSource> {
    std::function<void(const sched::Scheduler&)> done;
    if (seed == config.seed) done = onFirstRunDone;
    return std::make_unique<TraceStepSource>(tracePath, config, schedulerConfigFor(config, seed), done);
  };
}

}  // namespace cltrace::cachesim
