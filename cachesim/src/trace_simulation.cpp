#include "cltrace/cachesim/trace_simulation.h"

#include <sys/resource.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cltrace/scheduler/read_ahead_source.h"
#include "cltrace/scheduler/trace_source.h"

namespace cltrace::cachesim {

namespace {

// A scheduler over a trace file: it reads the file itself, or schedules the trace prepared once
// for every run.
class TraceStepSource final : public sched::StepSource {
 public:
  TraceStepSource(const std::string& path, const Config& cacheConfig, const sched::SchedulerConfig& config,
                  std::function<void(const sched::Scheduler&)> done, bool readAhead)
      : source_(std::make_unique<sched::TraceReaderSource>(path)),
        readAhead_(readAhead ? std::make_unique<sched::ReadAheadSource>(*source_) : nullptr),
        scheduler_(input(), withResidencyLimits(config, cacheConfig, input().range())),
        done_(std::move(done)) {}
  TraceStepSource(std::shared_ptr<const sched::PreparedTrace> trace, const Config& cacheConfig,
                  const sched::SchedulerConfig& config, std::function<void(const sched::Scheduler&)> done)
      : scheduler_(trace, withResidencyLimits(config, cacheConfig, trace->range())),
        done_(std::move(done)) {}
  ~TraceStepSource() override {
    if (done_) done_(scheduler_);
  }
  bool next(sched::WarpStep& out) override { return scheduler_.next(out); }
  sched::NextStep nextBefore(sched::WarpStep& out, uint64_t cycle, uint32_t sm) override {
    return scheduler_.nextBefore(out, cycle, sm);
  }
  void delayWarp(uint64_t warpKey, uint64_t readyCycle) override { scheduler_.delayWarp(warpKey, readyCycle); }
  void delayWarps(const uint64_t* warpKeys, size_t count, uint64_t readyCycle) override {
    scheduler_.delayWarps(warpKeys, count, readyCycle);
  }
  std::optional<std::vector<uint32_t>> busySms() const override { return scheduler_.busySms(); }
  std::optional<std::vector<uint32_t>> readingSms() const override { return scheduler_.readingSms(); }

 private:
  // What the scheduler reads (once the read-ahead thread runs, only it calls source_).
  sched::WorkgroupSource& input() {
    if (readAhead_) return *readAhead_;
    return *source_;
  }

  std::unique_ptr<sched::TraceReaderSource> source_;  // declared first: the scheduler reads from it
  std::unique_ptr<sched::ReadAheadSource> readAhead_;  // over source_, when reading ahead
  sched::Scheduler scheduler_;
  std::function<void(const sched::Scheduler&)> done_;
};

// The trace prepared once for all runs of a factory, by the first run that asks, while the
// others wait; null when it would not fit in the budget (each run then reads the file).
class SharedPreparation {
 public:
  SharedPreparation(std::string path, uint64_t maxBytes, bool readAhead)
      : path_(std::move(path)), maxBytes_(maxBytes), readAhead_(readAhead) {}
  std::shared_ptr<const sched::PreparedTrace> get(const sched::SchedulerConfig& config, const Config& cache) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!tried_) {
      tried_ = true;
      try {
        TraceReader reader(path_);
        sched::TraceReaderSource source(reader);
        // The GPU's limits on a workgroup first, as for one run: the scheduler's own check,
        // which loading makes, names only the SM's.
        requireWorkgroupFits(cache, source.range());
        // Records take 16 bytes each once loaded: a trace whose count alone is over the budget
        // is not read twice.
        const uint64_t records = reader.header().recordCount;
        if (records <= maxBytes_ / 16) {
          if (readAhead_) {
            sched::ReadAheadSource ahead(source);
            trace_ = sched::PreparedTrace::load(ahead, config, maxBytes_);
          } else {
            trace_ = sched::PreparedTrace::load(source, config, maxBytes_);
          }
        }
      } catch (const std::bad_alloc&) {
        trace_ = nullptr;  // more than there is room for after all: each run reads the file
      } catch (...) {
        error_ = std::current_exception();
      }
    }
    if (error_) std::rethrow_exception(error_);
    return trace_;
  }

 private:
  std::mutex mutex_;
  std::string path_;
  uint64_t maxBytes_;
  bool readAhead_;
  bool tried_ = false;
  std::shared_ptr<const sched::PreparedTrace> trace_;
  std::exception_ptr error_;
};

// The steps of a scheduled file, in its order. Delays cannot move them (timing is off).
class ScheduleFileStepSource final : public sched::StepSource {
 public:
  explicit ScheduleFileStepSource(const std::string& path) : path_(path), reader_(path) {}
  bool next(sched::WarpStep& out) override { return reader_.next(out); }
  void delayWarp(uint64_t, uint64_t) override {}
  void delayWarps(const uint64_t*, size_t, uint64_t) override {}
  // The file does not list them: the SMs its steps name, read in a pass of their own.
  std::optional<std::vector<uint32_t>> busySms() const override { return smsWith(false); }
  std::optional<std::vector<uint32_t>> readingSms() const override { return smsWith(true); }

 private:
  // The SMs the file's steps name (only those of its loads when `loads`).
  std::vector<uint32_t> smsWith(bool loads) const {
    sched::ScheduleReader reader(path_);
    std::vector<bool> seen(reader.info().config.smCount, false);
    sched::WarpStep step;
    while (reader.next(step))
      if (!loads || step.kind == AccessKind::Load) seen[step.sm] = true;
    std::vector<uint32_t> sms;
    for (uint32_t s = 0; s < seen.size(); ++s)
      if (seen[s]) sms.push_back(s);
    return sms;
  }

  std::string path_;
  sched::ScheduleReader reader_;
};

// A `scheduling` value as schedulingName() writes it (a Config built in code may spell it otherwise);
// an unknown name is returned as it is (it then differs from every file).
std::string canonicalScheduling(const std::string& value) {
  try {
    const SchedulingChoice choice = parseScheduling(value);
    return schedulingName(choice);
  } catch (const std::invalid_argument&) {
    return value;
  }
}

// The `cltrace schedule` options that make a scheduled file with `asked`'s value of `key` (one
// of the keys a file fixes). There is no register option: the residency the registers allow is
// given as workgroups per SM.
std::string scheduleOptions(const std::string& key, const Config& asked, uint64_t workgroupSize) {
  if (key == "scheduling") {
    const SchedulingChoice choice = parseScheduling(asked.scheduling);
    // Only the warp policy has an inter-warp order (schedule refuses --inter-warp otherwise).
    std::string options = std::string("--policy ") + sched::policyName(choice.policy);
    if (choice.policy == sched::Policy::Warp) options += std::string(" --inter-warp ") + sched::interWarpOrderName(choice.interWarp);
    return options;
  }
  if (key == "warp_size") return "--warp-size " + std::to_string(asked.warpSize);
  if (key == "sm_count") return "--sms " + std::to_string(asked.smCount);
  if (key == "max_threads_per_sm") return "--max-threads-per-sm " + std::to_string(asked.maxThreadsPerSm);
  const uint32_t fit = std::min(asked.maxWorkgroupsPerSm, registerLimitedWorkgroups(asked, workgroupSize));
  if (key == "registers_per_thread")
    return "--max-workgroups-per-sm " + std::to_string(fit) + ", the workgroups per SM these registers allow";
  return "--max-workgroups-per-sm " + std::to_string(fit);
}

}  // namespace

bool isScheduledFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[sizeof sched::kScheduleMagic] = {};
  return in.read(magic, sizeof magic) && std::memcmp(magic, sched::kScheduleMagic, sizeof magic) == 0;
}

Config configForSchedule(Config config, const sched::ScheduleInfo& info, const std::vector<std::string>& explicitKeys) {
  const Config askedConfig = config;
  const nlohmann::json asked = config.toJson();
  const sched::SchedulerConfig& s = info.config;
  config.scheduling = schedulingName({s.policy, s.interWarp});
  config.warpSize = s.warpSize;
  config.smCount = s.smCount;
  config.maxWorkgroupsPerSm = s.maxWorkgroupsPerSm;
  config.maxThreadsPerSm = s.maxThreadsPerSm;
  config.registersPerThread = 0;
  config.timing = false;
  const nlohmann::json fixed = config.toJson();
  for (const std::string& key : explicitKeys) {
    if (key == "timing" && asked.value("timing", false))
      throw std::invalid_argument(
          "configuration key 'timing': a scheduled file fixes the issue order, and the timing model needs to "
          "reorder warps (it drives the scheduler): simulate the trace file, or set timing=off");
    const bool differs = key == "scheduling" ? canonicalScheduling(asked["scheduling"].get<std::string>()) !=
                                                   fixed["scheduling"].get<std::string>()
                                             : key != "timing" && asked.contains(key) && asked[key] != fixed[key];
    if (differs)
      throw std::invalid_argument("configuration key '" + key + "': " + asked[key].dump() +
                                  " disagrees with the scheduled file, which was made with " + fixed[key].dump() +
                                  " (schedule with " +
                                  scheduleOptions(key, askedConfig, info.range.workgroupSize()) +
                                  ", or simulate the trace file)");
  }
  config.validate();
  return config;
}

StepSourceFactory scheduleFileStepSourceFactory(const std::string& path) {
  return [path](uint64_t) -> std::unique_ptr<sched::StepSource> {
    return std::make_unique<ScheduleFileStepSource>(path);
  };
}

sched::SchedulerConfig schedulerConfigFor(const Config& c, uint64_t seed) {
  sched::SchedulerConfig s;
  try {
    const SchedulingChoice choice = parseScheduling(c.scheduling);
    s.policy = choice.policy;
    s.interWarp = choice.interWarp;
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("configuration key 'scheduling': ") + e.what());
  }
  s.warpSize = c.warpSize;
  s.smCount = c.smCount;
  s.maxWorkgroupsPerSm = c.maxWorkgroupsPerSm;
  s.maxThreadsPerSm = c.maxThreadsPerSm;
  s.seed = seed;
  // Config::validate() has checked these keys, each under its own name.
  s.validate();
  return s;
}

sched::SchedulerConfig withResidencyLimits(sched::SchedulerConfig s, const Config& c, const NDRange& range) {
  requireWorkgroupFits(c, range);
  s.maxWorkgroupsPerSm = std::min({s.maxWorkgroupsPerSm, registerLimitedWorkgroups(c, range.workgroupSize()),
                                   localMemoryLimitedWorkgroups(c, range.localMemoryBytes)});
  return s;
}

namespace {

// The first number in `path` (a cgroup's memory limit), or nullopt ("max", missing, unreadable).
std::optional<uint64_t> numberIn(const std::string& path) {
  std::ifstream in(path);
  uint64_t value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

// The files holding the memory limits of this process's cgroup and of those above it, from
// /proc/self/cgroup: cgroup v2 ("0::/a/b": memory.max of /a/b, /a and the root) and v1's memory
// controller ("4:memory:/a/b": memory.limit_in_bytes of each).
std::vector<std::string> cgroupMemoryLimitFiles() {
  std::vector<std::string> files;
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    std::string base, file;
    if (controllers.empty()) {
      base = "/sys/fs/cgroup", file = "/memory.max";
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      base = "/sys/fs/cgroup/memory", file = "/memory.limit_in_bytes";
    } else {
      continue;
    }
    std::string group = line.substr(second + 1);
    while (!group.empty() && group.back() == '/') group.pop_back();
    for (;;) {
      files.push_back(base + group + file);
      const size_t slash = group.find_last_of('/');
      if (group.empty() || slash == std::string::npos) break;
      group.resize(slash);
    }
  }
  return files;
}

}  // namespace

uint64_t defaultPreparedTraceBytes() {
  // The least of what the machine has, what the process's cgroup may use (v2, then v1: in a
  // container the machine's figure is not ours) and its address-space limit.
  uint64_t memory = uint64_t{4} << 30;
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0) memory = uint64_t(pages) * uint64_t(pageSize);
  for (const std::string& limit : cgroupMemoryLimitFiles())
    if (const std::optional<uint64_t> cgroup = numberIn(limit)) memory = std::min(memory, *cgroup);
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) memory = std::min<uint64_t>(memory, as.rlim_cur);
  return memory / 4;
}

StepSourceFactory traceStepSourceFactory(const std::string& tracePath, const Config& config,
                                         std::function<void(const sched::Scheduler&)> onFirstRunDone,
                                         uint64_t preparedTraceBytes, bool readAhead) {
  // Several runs share the trace loaded once (the scheduler's layout depends on the policy and
  // warp size, which every run has); one run reads the file as it goes, holding less.
  std::shared_ptr<SharedPreparation> shared;
  if (config.runs > 1 && preparedTraceBytes > 0)
    shared = std::make_shared<SharedPreparation>(tracePath, preparedTraceBytes, readAhead);
  // The first run is the one with the configuration's seed, whichever thread runs it, so that
  // the same diagnostics are reported however many runs proceed at once.
  return [tracePath, config, onFirstRunDone, shared, readAhead](uint64_t seed) -> std::unique_ptr<sched::StepSource> {
    std::function<void(const sched::Scheduler&)> done;
    if (seed == config.seed) done = onFirstRunDone;
    const sched::SchedulerConfig schedulerConfig = schedulerConfigFor(config, seed);
    if (shared)
      if (std::shared_ptr<const sched::PreparedTrace> trace = shared->get(schedulerConfig, config))
        return std::make_unique<TraceStepSource>(std::move(trace), config, schedulerConfig, done);
    return std::make_unique<TraceStepSource>(tracePath, config, schedulerConfig, done, readAhead);
  };
}

}  // namespace cltrace::cachesim
