#include "cltrace/plot/points.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "cltrace/cachesim/coalescer.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/cachesim/trace_simulation.h"
#include "cltrace/scheduler/scheduler.h"

namespace cltrace::plot {

const char* colorByName(ColorBy c) {
  switch (c) {
    case ColorBy::Thread: return "thread";
    case ColorBy::Warp: return "warp";
    case ColorBy::Workgroup: return "workgroup";
    case ColorBy::Hit: return "hit";
  }
  return "?";
}

ColorBy parseColorBy(std::string_view name) {
  // In any case, as policy names and the simulator's named values are read.
  auto same = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  };
  for (ColorBy c : {ColorBy::Thread, ColorBy::Warp, ColorBy::Workgroup, ColorBy::Hit})
    if (same(name, colorByName(c))) return c;
  throw std::invalid_argument("plot: unknown colouring '" + std::string(name) +
                              "' (expected thread, warp, workgroup or hit)");
}

const char* colorByLabel(ColorBy c) {
  switch (c) {
    case ColorBy::Thread: return "global thread id";
    case ColorBy::Warp: return "warp (workgroup * warps per workgroup + warp)";
    case ColorBy::Workgroup: return "workgroup id";
    case ColorBy::Hit: return "miss fraction";
  }
  return "?";
}

namespace {

uint64_t warpsPerWorkgroup(const NDRange& range, uint32_t warpSize) {
  const uint64_t n = range.workgroupSize();
  return warpSize == 0 ? 0 : (n + warpSize - 1) / warpSize;
}

// Colour values of lanes (everything but hit/miss).
class Colorer {
 public:
  Colorer(ColorBy color, const NDRange& range, uint32_t warpSize)
      : color_(color), range_(range), groups_(range.groups()), warpSize_(warpSize),
        warpsPerWg_(warpsPerWorkgroup(range, warpSize)) {}

  double value(uint64_t workgroup, uint32_t localThread) const {
    switch (color_) {
      case ColorBy::Thread: {
        const auto& L = range_.local;
        const uint64_t g0 = workgroup % groups_[0];
        const uint64_t g1 = (workgroup / groups_[0]) % groups_[1];
        const uint64_t g2 = workgroup / (groups_[0] * groups_[1]);
        const uint64_t l0 = localThread % L[0];
        const uint64_t l1 = (localThread / L[0]) % L[1];
        const uint64_t l2 = localThread / (L[0] * L[1]);
        const uint64_t x = g0 * L[0] + l0, y = g1 * L[1] + l1, z = g2 * L[2] + l2;
        return double(x + range_.global[0] * (y + range_.global[1] * z));
      }
      case ColorBy::Warp: return double(workgroup * warpsPerWg_ + localThread / warpSize_);
      case ColorBy::Workgroup: return double(workgroup);
      case ColorBy::Hit: return 0.0;
    }
    return 0.0;
  }

 private:
  ColorBy color_;
  NDRange range_;
  std::array<uint64_t, 3> groups_;
  uint32_t warpSize_;
  uint64_t warpsPerWg_;
};

void copyDiagnostics(const sched::Scheduler& s, CollectStats& st) {
  st.diagnostics.clear();
  for (const sched::Diagnostic& d : s.diagnostics()) st.diagnostics.push_back(d.message);
  st.diagnosticCount = s.diagnosticCount();
}

// Hit colouring: lanes wait in `pending_` until every line request of their step has an outcome.
class HitTracker {
 public:
  HitTracker(const ElementMap& map, uint32_t lineShift, CollectStats& stats, const PointSink& sink)
      : map_(map), lineShift_(lineShift), stats_(stats), sink_(sink) {}

  // A step the scheduler issued (before the simulator sees it).
  void onStep(const sched::WarpStep& step) {
    ++stats_.steps;
    if (!isMemoryAccess(step.kind) || step.lanes.empty()) return;
    auto [it, inserted] = pending_.try_emplace(Key{step.warpKey, step.step});
    if (!inserted) throw std::logic_error("plot: the scheduler issued a warp step twice");
    Pending& p = it->second;
    if (!free_.empty()) {  // reuse vectors of finished steps
      p = std::move(free_.back());
      free_.pop_back();
    }
    p.lanes.clear();
    p.lines.clear();
    p.index.clear();
    p.state.clear();
    for (const sched::LaneAccess& l : step.lanes) {
      // As the simulator would refuse it, before a line list of a gigabyte-wide lane is made.
      if (l.size > cachesim::kMaxLaneAccessBytes) throw cachesim::laneTooLarge(step, l);
      Lane lane;
      lane.x = stats_.points++;
      const auto e = map_.elementOf(l.address);
      lane.inside = e.has_value();
      lane.element = e.value_or(0);
      lane.first = l.address >> lineShift_;
      lane.last = (l.address + std::max<uint64_t>(l.size, 1) - 1) >> lineShift_;
      for (uint64_t line = lane.first; line <= lane.last; ++line)
        if (p.find(line) == p.lines.size()) p.add(line);
      p.lanes.push_back(lane);
    }
    p.state.assign(p.lines.size(), kPending);
    p.remaining = p.lines.size();
  }

  void onRequest(const cachesim::RequestEvent& e) {
    if (e.outcome == cachesim::Outcome::MshrStall) return;  // the retry reports the outcome
    auto it = pending_.find(Key{e.warpKey, e.step});
    if (it == pending_.end()) return;
    Pending& p = it->second;
    const size_t pos = p.find(e.line);
    if (pos == p.lines.size()) return;
    uint8_t& s = p.state[pos];
    if (s != kPending) return;
    s = isPlotMiss(e.outcome) ? kMiss : kHit;
    if (--p.remaining == 0) {
      emit(p);
      free_.push_back(std::move(p));
      pending_.erase(it);
    }
  }

  // After the run: steps whose requests never all reported (not expected with sm=all).
  void finish() {
    for (auto& [key, p] : pending_) emit(p);
    pending_.clear();
  }

 private:
  static constexpr uint8_t kPending = 0, kHit = 1, kMiss = 2;
  struct Key {
    uint64_t warpKey, step;
    bool operator==(const Key& o) const { return warpKey == o.warpKey && step == o.step; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = k.warpKey * 0x9e3779b97f4a7c15ull ^ (k.step + 0x632be59bd9b4e019ull);
      h ^= h >> 31;
      return size_t(h * 0xbf58476d1ce4e5b9ull);
    }
  };
  struct Lane {
    uint64_t x = 0, element = 0, first = 0, last = 0;
    bool inside = false;
  };
  struct Pending {
    std::vector<Lane> lanes;
    std::vector<uint64_t> lines;  // distinct lines of the step
    std::vector<uint8_t> state;   // per line
    size_t remaining = 0;
    // Position of each line in `lines`, once there are more than a scan should search (a memcpy
    // lane of a megabyte touches 8192 lines: scanning for each made a plot take minutes).
    std::unordered_map<uint64_t, size_t> index;
    static constexpr size_t kScanLimit = 64;

    // Position of `line` in `lines`, or lines.size().
    size_t find(uint64_t line) const {
      if (lines.size() <= kScanLimit) return size_t(std::find(lines.begin(), lines.end(), line) - lines.begin());
      const auto it = index.find(line);
      return it == index.end() ? lines.size() : it->second;
    }
    void add(uint64_t line) {
      lines.push_back(line);
      if (lines.size() == kScanLimit + 1)
        for (size_t i = 0; i < lines.size(); ++i) index.emplace(lines[i], i);
      else if (lines.size() > kScanLimit + 1)
        index.emplace(line, lines.size() - 1);
    }
  };

  void emit(const Pending& p) {
    for (const Lane& lane : p.lanes) {
      bool miss = false, unresolved = false;
      for (uint64_t line = lane.first; line <= lane.last; ++line) {
        const size_t i = p.find(line);
        miss |= p.state[i] == kMiss;
        unresolved |= p.state[i] == kPending;
      }
      if (unresolved) ++stats_.unresolved;
      if (!lane.inside) {
        ++stats_.outside;
        continue;
      }
      if (miss) ++stats_.misses;
      sink_(Point{lane.x, lane.element, miss ? 1.0 : 0.0});
    }
  }

  const ElementMap& map_;
  uint32_t lineShift_;
  CollectStats& stats_;
  const PointSink& sink_;
  std::unordered_map<Key, Pending, KeyHash> pending_;
  std::vector<Pending> free_;
};

class RecordingSource final : public sched::StepSource {
 public:
  RecordingSource(sched::Scheduler& scheduler, HitTracker& tracker)
      : scheduler_(scheduler), tracker_(tracker) {}
  bool next(sched::WarpStep& out) override {
    if (!scheduler_.next(out)) return false;
    tracker_.onStep(out);
    return true;
  }
  sched::NextStep nextBefore(sched::WarpStep& out, uint64_t cycle, uint32_t sm) override {
    const sched::NextStep n = scheduler_.nextBefore(out, cycle, sm);
    if (n == sched::NextStep::Issued) tracker_.onStep(out);
    return n;
  }
  void delayWarp(uint64_t warpKey, uint64_t readyCycle) override {
    scheduler_.delayWarp(warpKey, readyCycle);
  }
  void delayWarps(const uint64_t* warpKeys, size_t count, uint64_t readyCycle) override {
    scheduler_.delayWarps(warpKeys, count, readyCycle);
  }
  std::optional<std::vector<uint32_t>> busySms() const override { return scheduler_.busySms(); }
  std::optional<std::vector<uint32_t>> readingSms() const override { return scheduler_.readingSms(); }

 private:
  sched::Scheduler& scheduler_;
  HitTracker& tracker_;
};

}  // namespace

double maxColorValue(ColorBy c, const NDRange& range, uint32_t warpSize) {
  auto minus1 = [](uint64_t n) { return n == 0 ? 0.0 : double(n - 1); };
  switch (c) {
    case ColorBy::Thread: return minus1(range.workItems());
    case ColorBy::Warp: return minus1(range.workgroups() * warpsPerWorkgroup(range, warpSize));
    case ColorBy::Workgroup: return minus1(range.workgroups());
    case ColorBy::Hit: return 1.0;
  }
  return 0.0;
}

bool isPlotMiss(cachesim::Outcome o) {
  return cachesim::isReadMiss(o) || o == cachesim::Outcome::WriteMiss;
}

CollectStats collectPoints(sched::WorkgroupSource& source, const ElementMap& map,
                           const CollectOptions& options, const PointSink& sink) {
  CollectStats stats;
  const sched::SchedulerConfig schedulerConfig =
      cachesim::withResidencyLimits(options.scheduler, options.cache, source.range());
  sched::Scheduler scheduler(source, schedulerConfig);  // validates config and NDRange

  if (options.color != ColorBy::Hit) {
    const Colorer colorer(options.color, source.range(), options.scheduler.warpSize);
    sched::WarpStep step;
    while (scheduler.next(step)) {
      ++stats.steps;
      if (!isMemoryAccess(step.kind)) continue;
      for (const sched::LaneAccess& l : step.lanes) {
        const uint64_t x = stats.points++;
        const auto e = map.elementOf(l.address);
        if (!e) {
          ++stats.outside;
          continue;
        }
        sink(Point{x, *e, colorer.value(step.workgroup, l.localThread)});
      }
    }
    copyDiagnostics(scheduler, stats);
    return stats;
  }

  cachesim::Config cache = options.cache;
  // The simulator must see the GPU the scheduler models, and every SM (every lane an outcome).
  cache.smCount = options.scheduler.smCount;
  cache.warpSize = options.scheduler.warpSize;
  cache.maxWorkgroupsPerSm = schedulerConfig.maxWorkgroupsPerSm;
  cache.maxThreadsPerSm = options.scheduler.maxThreadsPerSm;
  cache.sm.kind = cachesim::SmSelection::Kind::All;
  cachesim::Simulator simulator(cache);  // validates
  uint32_t lineShift = 0;
  while ((uint64_t(1) << lineShift) < cache.lineSize) ++lineShift;

  HitTracker tracker(map, lineShift, stats, sink);
  simulator.setRequestCallback([&tracker](const cachesim::RequestEvent& e) { tracker.onRequest(e); });
  RecordingSource recording(scheduler, tracker);
  simulator.run(recording, options.simulatorSeed);
  tracker.finish();
  copyDiagnostics(scheduler, stats);
  return stats;
}

}  // namespace cltrace::plot
