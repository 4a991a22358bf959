// Throughput of the cache simulator on the warp steps of real kernels (prints figures; not a
// test). scripts/bench-simulate.sh traces the bundled kernels and runs it.
//
//   bench_simulate [--repeat N] [--full-lanes] [--only on|off] [--set KEY=VALUE ...] TRACE...
//
// For each trace, with the default preset (timing on) and with timing=off, classification on
// and every SM modelled and reported (sm=all, the heaviest setting); --only on|off runs one of the
// two (for profilers):
//  1. the trace is simulated once with its scheduler (`cltrace simulate`'s path), and the warp
//     steps the scheduler issues are recorded, in order;
//  2. the recorded steps are replayed to a fresh simulator with the same seed. The simulator is
//     deterministic, so it makes the same delayWarp calls and the scheduler's order is already
//     the one those calls would give: the replay must reproduce the first run's statistics,
//     which is checked (a mismatch is an error, exit 1);
//  3. replaying the steps alone (writing them into the step buffer) is timed too, so that the
//     simulator's own rate, coalescing included, can be given without any source's cost.
// The replay keeps lanes as runs (RecordedSteps), so that it does not stream 16 bytes per lane
// through the host's caches, which would evict the simulator's state and charge the source's
// traffic to the simulator; --full-lanes replays every lane from memory instead.
// Each timing is the best of N (default 3) on the CPU clock of the measuring thread; the replays
// are repeated within a timing so that it lasts about 0.3 s.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/cachesim/trace_simulation.h"

using namespace cltrace;
using namespace cltrace::cachesim;

namespace {

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Steps as a scheduler issued them: the step without its lanes, and the lanes as runs. A run
// is lanes of consecutive local threads with one size and addresses in one stride (a warp's
// row of a 2D workgroup, a broadcast, a strided column), so a replay streams a few bytes per
// step from memory instead of 16 per lane, and the replay's own cache traffic does not evict the
// simulator's state. With `fullLanes` every lane is kept too and replays copy them (the way
// earlier figures were taken: 16 bytes of lanes per lane streamed through the caches).
struct LaneRun {
  uint64_t address = 0;  // of the first lane
  int64_t stride = 0;    // address step from one lane to the next
  uint32_t firstThread = 0;
  uint32_t size = 0;
  uint32_t count = 0;
};

struct RecordedSteps {
  std::vector<sched::WarpStep> headers;  // lanes empty
  std::vector<size_t> firstRun;          // headers.size() + 1 entries
  std::vector<LaneRun> runs;
  bool fullLanes = false;
  std::vector<size_t> firstLane;  // with fullLanes: headers.size() + 1 entries
  std::vector<sched::LaneAccess> lanes;

  void add(const sched::WarpStep& step) {
    if (firstRun.empty()) firstRun.push_back(0);
    for (const sched::LaneAccess& lane : step.lanes) {
      if (runs.size() > firstRun.back()) {
        LaneRun& r = runs.back();
        const bool sameRow = lane.localThread == r.firstThread + r.count && lane.size == r.size;
        if (sameRow && r.count == 1) {
          r.stride = static_cast<int64_t>(lane.address - r.address);
          ++r.count;
          continue;
        }
        if (sameRow && lane.address == r.address + static_cast<uint64_t>(r.stride) * r.count) {
          ++r.count;
          continue;
        }
      }
      runs.push_back(LaneRun{lane.address, 0, lane.localThread, lane.size, 1});
    }
    firstRun.push_back(runs.size());
    if (fullLanes) {
      if (firstLane.empty()) firstLane.push_back(0);
      lanes.insert(lanes.end(), step.lanes.begin(), step.lanes.end());
      firstLane.push_back(lanes.size());
    }
    sched::WarpStep header = step;
    header.lanes = {};
    headers.push_back(std::move(header));
  }
  // The lanes of step `i`, into `out`.
  void lanesOf(size_t i, std::vector<sched::LaneAccess>& out) const {
    if (fullLanes) {
      out.assign(lanes.begin() + firstLane[i], lanes.begin() + firstLane[i + 1]);
      return;
    }
    size_t n = 0;
    for (size_t k = firstRun[i]; k < firstRun[i + 1]; ++k) n += runs[k].count;
    out.resize(n);
    sched::LaneAccess* lane = out.data();
    for (size_t k = firstRun[i]; k < firstRun[i + 1]; ++k) {
      const LaneRun& r = runs[k];
      for (uint32_t j = 0; j < r.count; ++j)
        *lane++ = sched::LaneAccess{r.firstThread + j, r.size, r.address + static_cast<uint64_t>(r.stride) * j};
    }
  }
};

class RecordingSource : public sched::StepSource {
 public:
  RecordingSource(sched::StepSource& inner, RecordedSteps& out) : inner_(inner), out_(out) {}
  bool next(sched::WarpStep& step) override {
    if (!inner_.next(step)) return false;
    record(step);
    return true;
  }
  sched::NextStep nextBefore(sched::WarpStep& step, uint64_t cycle, uint32_t sm) override {
    const sched::NextStep n = inner_.nextBefore(step, cycle, sm);
    if (n == sched::NextStep::Issued) record(step);
    return n;
  }
  void delayWarp(uint64_t warpKey, uint64_t readyCycle) override { inner_.delayWarp(warpKey, readyCycle); }
  void delayWarps(const uint64_t* warpKeys, size_t count, uint64_t readyCycle) override {
    inner_.delayWarps(warpKeys, count, readyCycle);
  }
  std::optional<std::vector<uint32_t>> busySms() const override { return inner_.busySms(); }
  std::optional<std::vector<uint32_t>> readingSms() const override { return inner_.readingSms(); }

 private:
  void record(const sched::WarpStep& step) {
    out_.add(step);
    // The runs must give back exactly these lanes.
    out_.lanesOf(out_.headers.size() - 1, check_);
    if (check_.size() != step.lanes.size() ||
        !std::equal(check_.begin(), check_.end(), step.lanes.begin(), [](const auto& a, const auto& b) {
          return a.localThread == b.localThread && a.size == b.size && a.address == b.address;
        }))
      throw std::runtime_error("the lane runs of step " + std::to_string(out_.headers.size() - 1) +
                               " do not give back its lanes");
  }

  sched::StepSource& inner_;
  RecordedSteps& out_;
  std::vector<sched::LaneAccess> check_;
};

// Hands out the recorded steps in order; delays are already in that order. Like the scheduler,
// it holds back a step that issues at or after nextBefore's limit.
class ReplaySource : public sched::StepSource {
 public:
  explicit ReplaySource(const RecordedSteps& steps) : steps_(steps) {}
  sched::NextStep nextBefore(sched::WarpStep& step, uint64_t cycle, uint32_t sm) override {
    if (i_ == steps_.headers.size()) return sched::NextStep::Finished;
    const sched::WarpStep& h = steps_.headers[i_];
    if (!sched::issuesBefore(h.cycle, h.sm, cycle, sm)) return sched::NextStep::NotBefore;
    return next(step) ? sched::NextStep::Issued : sched::NextStep::Finished;
  }
  bool next(sched::WarpStep& step) override {
    if (i_ == steps_.headers.size()) return false;
    const sched::WarpStep& h = steps_.headers[i_];
    step.sm = h.sm;
    step.workgroup = h.workgroup;
    step.warp = h.warp;
    step.step = h.step;
    step.warpKey = h.warpKey;
    step.cycle = h.cycle;
    step.instruction = h.instruction;
    step.kind = h.kind;
    step.flags = h.flags;
    step.bounds = h.bounds;
    step.hasBounds = h.hasBounds;
    steps_.lanesOf(i_, step.lanes);
    ++i_;
    return true;
  }
  void delayWarp(uint64_t, uint64_t) override {}
  void delayWarps(const uint64_t*, size_t, uint64_t) override {}

 private:
  const RecordedSteps& steps_;
  size_t i_ = 0;
};

bool sameCounts(const Stats& a, const Stats& b) {
  return a.steps == b.steps && a.requests == b.requests && a.reads == b.reads && a.readHits == b.readHits &&
         a.readMisses == b.readMisses && a.writes == b.writes && a.writeMisses == b.writeMisses &&
         a.misses.cold == b.misses.cold && a.misses.capacity == b.misses.capacity &&
         a.misses.conflict == b.misses.conflict && a.misses.latency == b.misses.latency &&
         a.misses.mshr == b.misses.mshr && a.cycles == b.cycles && a.reuse.cold == b.reuse.cold &&
         a.reuse.buckets == b.reuse.buckets;
}

// The two timed loops, kept out of line so that an instruction profiler can count each apart:
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*replayWithSimulator*' ...
// `passes` replays of `steps` to fresh simulators; false when one does not reproduce `reference`.
[[gnu::noinline]] bool replayWithSimulator(const RecordedSteps& steps, const Config& config, uint64_t seed,
                                           uint64_t passes, const Stats& reference) {
  for (uint64_t k = 0; k < passes; ++k) {
    ReplaySource source(steps);
    Simulator sim(config);
    if (!sameCounts(sim.run(source, seed), reference)) return false;
  }
  return true;
}

// `passes` replays of `steps` with no simulator; returns the lanes handed out.
[[gnu::noinline]] uint64_t replayAlone(const RecordedSteps& steps, uint64_t passes) {
  uint64_t lanes = 0;
  for (uint64_t k = 0; k < passes; ++k) {
    ReplaySource only(steps);
    sched::WarpStep step;
    while (only.next(step)) lanes += step.lanes.size();
  }
  return lanes;
}

// Returns false when the replay does not reproduce the scheduled run.
bool benchTrace(const std::string& path, const std::vector<std::string>& overrides, int repeat, bool fullLanes) {
  std::vector<std::string> keys = {"sm=all"};
  keys.insert(keys.end(), overrides.begin(), overrides.end());
  const Config config = loadConfig("gtx480-16k", keys);
  const uint64_t seed = config.seed;
  // One core: the file is read on the measuring thread (no read-ahead thread).
  StepSourceFactory factory = traceStepSourceFactory(path, config, {}, 0, false);

  // 1. With the scheduler, recording its steps; then the scheduler's run alone, timed.
  RecordedSteps steps;
  steps.fullLanes = fullLanes;
  Stats reference;
  {
    std::unique_ptr<sched::StepSource> scheduler = factory(seed);
    RecordingSource recorder(*scheduler, steps);
    Simulator sim(config);
    reference = sim.run(recorder, seed);
  }
  double whole = 1e30;
  for (int i = 0; i < repeat; ++i) {
    std::unique_ptr<sched::StepSource> scheduler = factory(seed);
    Simulator sim(config);
    const double c0 = cpuSeconds();
    Stats s = sim.run(*scheduler, seed);
    whole = std::min(whole, cpuSeconds() - c0);
    if (!sameCounts(s, reference)) {
      std::fprintf(stderr, "bench_simulate: %s: two scheduled runs with one seed differ\n", path.c_str());
      return false;
    }
  }

  // 2. and 3. The replay with the simulator, and alone; each timing covers enough replays
  // (`passes`) to last about 0.3 s, since small kernels take milliseconds.
  double replayed = 1e30, alone = 1e30;
  uint64_t sink = 0, passes = 1;
  bool calibrated = false;
  for (int i = 0; i < repeat; ++i) {
    const double c0 = cpuSeconds();
    if (!replayWithSimulator(steps, config, seed, passes, reference)) {
      std::fprintf(stderr, "bench_simulate: %s: the replayed steps do not reproduce the scheduled run\n",
                   path.c_str());
      return false;
    }
    const double took = cpuSeconds() - c0;
    if (!calibrated) {  // the first timing only says how many passes it takes
      calibrated = true;
      if (took < 0.3) {
        passes = static_cast<uint64_t>(0.3 / std::max(took, 1e-6)) + 1;
        --i;
        continue;
      }
    }
    replayed = std::min(replayed, took / double(passes));
    const double a0 = cpuSeconds();
    sink += replayAlone(steps, passes);
    alone = std::min(alone, (cpuSeconds() - a0) / double(passes));
  }
  const double simulator = std::max(replayed - alone, 1e-9);
  std::string name = path.substr(path.find_last_of('/') + 1);
  std::string cfg;
  for (const std::string& o : overrides) cfg += (cfg.empty() ? "" : ",") + o;
  const double req = double(reference.requests);
  std::printf("%-18s %-10s %7.2f M steps %7.2f M req %8.2f M lanes  miss %.3f lat %.3f stalls/req %5.2f  with scheduler %6.2f s "
              "%6.2f M req/s  replay alone %6.3f s  simulator %6.3f s %6.1f M req/s%s\n",
              name.c_str(), cfg.empty() ? "defaults" : cfg.c_str(), reference.steps / 1e6, req / 1e6,
              reference.requestsBeforeCoalescing / 1e6, reference.missRate(),
              double(reference.misses.latency) / double(reference.reads ? reference.reads : 1),
              double(reference.misses.mshr) / (req > 0 ? req : 1.0), whole,
              req / whole / 1e6, alone, simulator, req / simulator / 1e6, sink == 42 ? "!" : "");
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  bool fullLanes = false;
  bool timingOn = true, timingOff = true;
  std::vector<std::string> sets, traces;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc && std::atoi(argv[i + 1]) > 0) {
      repeat = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--full-lanes") == 0) {
      fullLanes = true;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc &&
               (std::strcmp(argv[i + 1], "on") == 0 || std::strcmp(argv[i + 1], "off") == 0)) {
      timingOn = std::strcmp(argv[++i], "on") == 0;
      timingOff = !timingOn;
    } else if (std::strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
      sets.push_back(argv[++i]);
    } else if (argv[i][0] != '-') {
      traces.push_back(argv[i]);
    } else {
      traces.clear();
      break;
    }
  }
  if (traces.empty()) {
    std::fprintf(stderr, "usage: bench_simulate [--repeat N] [--full-lanes] [--only on|off] [--set KEY=VALUE ...] TRACE...\n");
    return 2;
  }
  std::printf("cachesim on real kernels' warp steps: one core, classification on, sm=all; best of %d; replay of %s\n",
              repeat, fullLanes ? "every lane from memory (--full-lanes)" : "lane runs");
  try {
    for (const std::string& t : traces) {
      std::vector<std::string> on = sets, off = sets;
      off.push_back("timing=off");
      if (timingOn && !benchTrace(t, on, repeat, fullLanes)) return 1;
      if (timingOff && !benchTrace(t, off, repeat, fullLanes)) return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_simulate: %s\n", e.what());
    return 1;
  }
  return 0;
}
