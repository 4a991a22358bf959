// SmModel against a plain reference model of the same rules (sm_model.h, cache.h), written for
// clarity rather than speed: ways as a vector per set, misses in flight in an unsorted list,
// reuse distances from a list of lines, most recent first. Random request streams under random
// settings must give the same result for every request and the same statistics. The whole
// Simulator is held to it too: with timing off, the steps it was given, coalesced by the
// definition (coalescer.h) and sent to one reference model per SM; with timing on, a plain
// run of the documented retry rules (an ordered set for the retry queue, a map of held warps,
// no herds, no fast paths) over the same models, against the same scheduler.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/latency.h"
#include "cltrace/cachesim/reuse_distance.h"
#include "cltrace/cachesim/rng.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/cachesim/sm_model.h"
#include "fake_step_source.h"
#include "same_stats.h"

namespace cltrace::cachesim {
namespace {

constexpr uint64_t kInfinite = ReuseDistanceTracker::kInfinite;
constexpr uint32_t kLineShift = 7;  // the presets' 128-byte lines, which every test here keeps

class ReferenceL1 {
 public:
  ReferenceL1(const Config& c, uint64_t seed)
      : c_(c),
        sets_(c.sets(), std::vector<Way>(c.associativity)),
        victimRng_(mixSeed(seed, 0x7265706cu)),
        latencyRng_(mixSeed(seed, 0x6c6174u)),
        jitter_(c.latencySigma) {}

  RequestResult read(uint64_t line, uint64_t cycle, uint64_t warp) {
    advance(cycle);
    cycle = now_;
    RequestResult r;
    r.set = static_cast<uint32_t>(line % sets_.size());
    std::vector<Way>& set = sets_[r.set];
    if (Way* w = find(set, line)) {
      use(*w);
      r.reuseDistance = track(line);
      ++stats.reads;
      ++stats.requests;
      if (!w->pending) {
        r.outcome = Outcome::Hit;
        r.readyCycle = cycle + c_.hitLatency;
        ++stats.readHits;
      } else {
        r.outcome = Outcome::LatencyMiss;
        r.readyCycle = w->fill;
        ++stats.misses.latency;
      }
      return r;
    }
    if (c_.timing) {
      if (c_.mshrs != 0 && inFlight_.size() >= c_.mshrs) return stall(earliest([](const InFlight&) { return true; }), cycle);
      if (c_.mshrsPerWarp != 0 && mshrsOf(warp) >= c_.mshrsPerWarp)
        return stall(earliest([warp](const InFlight& f) { return f.warp == warp; }), cycle);
    }
    const int v = victim(set);
    if (v < 0) return stall(earliest([&r](const InFlight& f) { return f.set == r.set; }), cycle);
    r.reuseDistance = track(line);
    if (!c_.classify)
      r.outcome = Outcome::Miss;
    else if (r.reuseDistance == kInfinite)
      r.outcome = Outcome::ColdMiss;
    else if (r.reuseDistance >= c_.lines())
      r.outcome = Outcome::CapacityMiss;
    else
      r.outcome = Outcome::ConflictMiss;
    ++stats.reads;
    ++stats.requests;
    ++stats.readMisses;
    if (r.outcome == Outcome::ColdMiss) ++stats.misses.cold;
    if (r.outcome == Outcome::CapacityMiss) ++stats.misses.capacity;
    if (r.outcome == Outcome::ConflictMiss) ++stats.misses.conflict;
    Way& w = set[static_cast<size_t>(v)];
    install(w, line, false);
    r.readyCycle = cycle;
    if (c_.timing) {
      w.fill = cycle + c_.minLatency + jitter_.sample(latencyRng_);
      r.readyCycle = w.fill;
      if (w.fill > cycle) {
        w.pending = true;
        inFlight_.push_back(InFlight{w.fill, warp, r.set, v});
      }
    }
    return r;
  }

  RequestResult write(uint64_t line, uint64_t cycle) {
    advance(cycle);
    cycle = now_;
    const bool allocate = c_.writePolicy == WritePolicy::WriteBackAllocate;
    RequestResult r;
    r.set = static_cast<uint32_t>(line % sets_.size());
    r.readyCycle = cycle;
    ++stats.writes;
    ++stats.requests;
    std::vector<Way>& set = sets_[r.set];
    Way* w = find(set, line);
    if (w) {
      r.outcome = Outcome::WriteHit;
      ++stats.writeHits;
      if (allocate) {
        r.reuseDistance = track(line);
        use(*w);
        w->dirty = true;
      }
      return r;
    }
    r.outcome = Outcome::WriteMiss;
    ++stats.writeMisses;
    if (allocate) {
      const int v = victim(set);
      if (v >= 0) {  // else the store goes around the cache, touching nothing
        r.reuseDistance = track(line);
        install(set[static_cast<size_t>(v)], line, true);
      }
    }
    return r;
  }

  uint32_t mshrsInUse() const { return static_cast<uint32_t>(inFlight_.size()); }
  uint32_t mshrsOf(uint64_t warp) const {
    return static_cast<uint32_t>(std::count_if(inFlight_.begin(), inFlight_.end(), [warp](const InFlight& f) { return f.warp == warp; }));
  }
  bool contains(uint64_t line) { return find(sets_[line % sets_.size()], line) != nullptr; }

  Stats stats;

 private:
  struct Way {
    bool valid = false;
    uint64_t line = 0;
    bool pending = false;
    bool dirty = false;
    uint64_t lastUse = 0;
    uint64_t uses = 0;
    uint64_t fill = 0;
  };
  struct InFlight {
    uint64_t fill;
    uint64_t warp;
    uint32_t set;
    int way;
  };

  void advance(uint64_t cycle) {
    now_ = std::max(now_, cycle);
    stats.cycles = std::max(stats.cycles, now_);
    for (auto it = inFlight_.begin(); it != inFlight_.end();) {
      if (it->fill <= now_) {
        sets_[it->set][static_cast<size_t>(it->way)].pending = false;
        it = inFlight_.erase(it);
      } else {
        ++it;
      }
    }
  }
  static Way* find(std::vector<Way>& set, uint64_t line) {
    for (Way& w : set)
      if (w.valid && w.line == line) return &w;
    return nullptr;
  }
  void use(Way& w) {
    w.lastUse = ++clock_;
    ++w.uses;
  }
  void install(Way& w, uint64_t line, bool dirty) {
    if (w.valid && w.dirty) ++stats.writeBacks;
    w = Way{true, line, false, dirty, ++clock_, 1, 0};
  }
  // The first invalid way; else by the policy among the ways not in flight; -1 if every way is.
  int victim(const std::vector<Way>& set) {
    for (size_t i = 0; i < set.size(); ++i)
      if (!set[i].valid) return static_cast<int>(i);
    std::vector<int> free;
    for (size_t i = 0; i < set.size(); ++i)
      if (!set[i].pending) free.push_back(static_cast<int>(i));
    if (free.empty()) return -1;
    if (c_.replacement == Replacement::Random) return free[victimRng_.below(free.size())];
    int best = free[0];
    for (int i : free) {
      const Way& a = set[static_cast<size_t>(i)];
      const Way& b = set[static_cast<size_t>(best)];
      bool better = false;
      switch (c_.replacement) {
        case Replacement::LRU: better = a.lastUse < b.lastUse; break;
        case Replacement::MRU: better = a.lastUse > b.lastUse; break;
        case Replacement::LFU: better = a.uses < b.uses || (a.uses == b.uses && a.lastUse < b.lastUse); break;
        case Replacement::MFU: better = a.uses > b.uses || (a.uses == b.uses && a.lastUse < b.lastUse); break;
        case Replacement::Random: break;
      }
      if (better) best = i;
    }
    return best;
  }
  template <typename Pred>
  uint64_t earliest(Pred pred) const {
    uint64_t e = ~uint64_t(0);
    for (const InFlight& f : inFlight_)
      if (pred(f)) e = std::min(e, f.fill);
    return e;
  }
  RequestResult stall(uint64_t retry, uint64_t cycle) {
    ++stats.misses.mshr;
    RequestResult r;
    r.outcome = Outcome::MshrStall;
    r.readyCycle = std::max(retry, cycle + 1);
    return r;
  }
  uint64_t track(uint64_t line) {
    if (!c_.classify) return kInfinite;
    uint64_t depth = 0;
    for (auto it = stack_.begin(); it != stack_.end(); ++it, ++depth)
      if (*it == line) {
        stack_.erase(it);
        stack_.push_front(line);
        stats.reuse.addDistance(depth);
        return depth;
      }
    stack_.push_front(line);
    ++stats.reuse.cold;
    return kInfinite;
  }

  const Config& c_;
  std::vector<std::vector<Way>> sets_;
  std::list<InFlight> inFlight_;
  std::list<uint64_t> stack_;  // lines, most recently used first
  uint64_t now_ = 0;
  uint64_t clock_ = 0;
  Rng victimRng_;
  Rng latencyRng_;
  LatencyJitter jitter_;
};

std::string describe(const RequestResult& r) {
  return std::string(toString(r.outcome)) + " ready " + std::to_string(r.readyCycle) + " distance " +
         std::to_string(r.reuseDistance) + " set " + std::to_string(r.set);
}

// A small random cache: 1 to 8 ways, 1 to 8 sets of 128-byte lines (linear index), any
// replacement policy, either write policy, classification mostly on.
struct RandomCache {
  uint32_t ways, sets;
  std::vector<std::string> keys;
  uint64_t lines() const { return uint64_t(ways) * sets; }
};
RandomCache randomCache(Rng& pick) {
  const char* policies[] = {"lru", "lfu", "mfu", "mru", "random"};
  RandomCache c{1u << pick.below(4), 1u << pick.below(4), {}};
  c.keys = {"set_index=linear", "associativity=" + std::to_string(c.ways), "size=" + std::to_string(128 * c.lines()),
            std::string("replacement=") + policies[pick.below(5)]};
  if (pick.below(2)) c.keys.push_back("write_policy=write-back");
  if (pick.below(5) == 0) c.keys.push_back("classify=off");
  if (pick.below(4) == 0) c.keys.push_back("wide_access_split=off");
  return c;
}
// One to three SMs, every one reported or one chosen.
struct RandomSms {
  uint32_t count;
  bool all;
  uint32_t reported;
  std::string key() const { return all ? "sm=all" : "sm=" + std::to_string(reported); }
  bool reports(uint32_t sm) const { return all || sm == reported; }
};
RandomSms randomSms(Rng& pick) {
  const uint32_t count = 1 + static_cast<uint32_t>(pick.below(3));
  const bool all = pick.below(2) == 0;
  return RandomSms{count, all, static_cast<uint32_t>(pick.below(count))};
}
std::string described(uint64_t trial, const std::vector<std::string>& keys) {
  std::string d = "trial " + std::to_string(trial) + ":";
  for (const std::string& k : keys) d += " " + k;
  return d;
}

TEST(SmModelReference, RandomRequestsUnderRandomSettingsMatchThePlainModel) {
  uint64_t kinds[10] = {};  // outcomes seen over all trials, by Outcome
  for (uint64_t trial = 0; trial < 300; ++trial) {
    Rng pick(trial * 104729 + 7);
    const RandomCache cache = randomCache(pick);
    std::vector<std::string> keys = cache.keys;
    keys.insert(keys.end(), {"mshrs=" + std::to_string(pick.below(9)), "mshrs_per_warp=" + std::to_string(pick.below(5)),
                             "min_latency=" + std::to_string(pick.below(3) == 0 ? 0 : pick.below(60)),
                             "latency_sigma=" + std::string(pick.below(3) == 0 ? "0" : pick.below(2) ? "3" : "30"),
                             "hit_latency=" + std::to_string(pick.below(3))});
    if (pick.below(4) == 0) keys.push_back("timing=off");
    // Now and then a new warp every few requests (as workgroups come and go): hundreds of warp
    // keys, so the SM's table of MSHRs per warp is rebuilt while misses are in flight.
    const bool manyWarps = pick.below(3) == 0;
    SCOPED_TRACE(described(trial, keys) + (manyWarps ? ", many warps" : ""));
    const Config config = loadConfig("gtx480-16k", keys);
    SmModel model(config, trial);
    ReferenceL1 ref(config, trial);
    const uint64_t footprint = cache.lines() * 3;
    uint64_t cycle = 0;
    for (int i = 0; i < 3000; ++i) {
      cycle = pick.below(20) == 0 ? cycle - std::min<uint64_t>(cycle, pick.below(10)) : cycle + pick.below(4);
      const uint64_t line = pick.below(footprint), warp = manyWarps ? uint64_t(i) / 3 + pick.below(4) : pick.below(6);
      const bool isRead = pick.below(4) != 0;
      const RequestResult got = isRead ? model.read(line, cycle, warp) : model.write(line, cycle);
      const RequestResult want = isRead ? ref.read(line, cycle, warp) : ref.write(line, cycle);
      ASSERT_EQ(describe(got), describe(want)) << "request " << i << (isRead ? " read" : " write") << " of line "
                                               << line << " by warp " << warp << " at cycle " << cycle;
      ++kinds[static_cast<size_t>(got.outcome)];
      ASSERT_EQ(model.mshrsInUse(), ref.mshrsInUse()) << "request " << i;
      ASSERT_EQ(model.mshrsInUse(warp), ref.mshrsOf(warp)) << "request " << i;
      const uint64_t probe = pick.below(footprint);
      ASSERT_EQ(model.contains(probe), ref.contains(probe)) << "request " << i << " line " << probe;
    }
    testing::expectSameStats(model.stats(), ref.stats);
  }
  // Every outcome a request can have came up.
  for (Outcome o : {Outcome::Hit, Outcome::Miss, Outcome::ColdMiss, Outcome::CapacityMiss, Outcome::ConflictMiss,
                    Outcome::LatencyMiss, Outcome::MshrStall, Outcome::WriteHit, Outcome::WriteMiss})
    EXPECT_GT(kinds[static_cast<size_t>(o)], 0u) << toString(o);
}

// The steps a source hands out, in order.
class Recording : public sched::StepSource {
 public:
  explicit Recording(sched::StepSource& inner) : inner_(inner) {}
  bool next(sched::WarpStep& out) override {
    if (!inner_.next(out)) return false;
    steps.push_back(out);
    return true;
  }
  void delayWarp(uint64_t warpKey, uint64_t readyCycle) override { inner_.delayWarp(warpKey, readyCycle); }
  std::vector<sched::WarpStep> steps;

 private:
  sched::StepSource& inner_;
};

// A request's outcome in its instruction's counts, as the SM model keeps them.
void countRead(InstructionStats& ins, const RequestResult& r) {
  if (r.outcome == Outcome::MshrStall) {
    ++ins.misses.mshr;
    return;
  }
  ++ins.reads;
  ++ins.requests;
  ins.readHits += r.outcome == Outcome::Hit;
  ins.readMisses += isReadMiss(r.outcome);
  ins.misses.cold += r.outcome == Outcome::ColdMiss;
  ins.misses.capacity += r.outcome == Outcome::CapacityMiss;
  ins.misses.conflict += r.outcome == Outcome::ConflictMiss;
  ins.misses.latency += r.outcome == Outcome::LatencyMiss;
}
void countWrite(InstructionStats& ins, const RequestResult& r) {
  ++ins.writes;
  ++ins.requests;
  ins.writeMisses += r.outcome == Outcome::WriteMiss;
}

// Random warps of every kind of step on `sms` SMs, the same for the same seed: lanes of 0 to 300
// bytes, strided or scattered, half of the steps with bounds noted as the scheduler notes them.
void addRandomSteps(testing::FakeStepSource& src, uint64_t seed, uint32_t sms, uint64_t maxSteps, uint64_t footprint) {
  const AccessKind kinds[] = {AccessKind::Load, AccessKind::Load,   AccessKind::Load,         AccessKind::Load,
                              AccessKind::Store, AccessKind::Atomic, AccessKind::ConstantLoad, AccessKind::Barrier,
                              AccessKind::Fence};
  const uint32_t sizes[] = {1, 2, 4, 4, 6, 8, 16, 0, 300};  // 6: an ushort4 .xyz read
  Rng pick(seed);
  for (uint64_t w = 0, warps = 4 + pick.below(36); w < warps; ++w) {
    std::vector<sched::WarpStep> steps;
    for (uint64_t i = 0, n = 1 + pick.below(maxSteps); i < n; ++i) {
      sched::WarpStep st;
      st.kind = kinds[pick.below(9)];
      st.instruction = static_cast<uint32_t>(pick.below(6) * 10);
      const uint64_t base = pick.below(footprint), stride = pick.below(2) == 0 ? 128 * pick.below(3) : 4;
      const uint32_t lanes =
          st.kind == AccessKind::Barrier || st.kind == AccessKind::Fence ? 0 : 1 + static_cast<uint32_t>(pick.below(32));
      for (uint32_t l = 0; l < lanes; ++l)
        st.lanes.push_back(sched::LaneAccess{l, sizes[pick.below(9)], pick.below(8) == 0 ? pick.below(footprint) : base + l * stride});
      if (pick.below(2) == 0) {
        sched::LaneBounds b;
        for (const sched::LaneAccess& lane : st.lanes) b.add(lane.address, lane.size);
        st.bounds = b;
        st.hasBounds = true;
      }
      steps.push_back(st);
    }
    src.addWarp(static_cast<uint32_t>(w % sms), w, steps);
  }
}

TEST(SimulatorReference, TimingOffRunsMatchThePlainModelStepByStep) {
  uint64_t boundsNoted = 0, multiLine = 0;
  for (uint64_t trial = 0; trial < 150; ++trial) {
    Rng pick(trial * 15485863 + 3);
    const RandomCache cache = randomCache(pick);
    const RandomSms sms = randomSms(pick);
    std::vector<std::string> keys = cache.keys;
    keys.insert(keys.end(), {"timing=off", sms.key()});
    SCOPED_TRACE(described(trial, keys) + " on " + std::to_string(sms.count) + " SMs");
    const Config config = loadConfig("gtx480-16k", keys);

    testing::FakeStepSource src;
    addRandomSteps(src, trial, sms.count, 20, cache.lines() * 3 * 128);
    Recording recording(src);
    Simulator sim(config);
    const Stats got = sim.run(recording, trial);

    // The reference: each reported SM's steps, in the order given, through its own model.
    std::map<uint32_t, std::unique_ptr<ReferenceL1>> models;
    std::map<uint32_t, InstructionStats> ins;
    Stats want;
    for (const sched::WarpStep& st : recording.steps) {
      boundsNoted += st.hasBounds;
      multiLine += testing::linesByDefinition(st, kLineShift).size() > 1;
      if (!sms.reports(st.sm)) continue;
      std::unique_ptr<ReferenceL1>& m = models[st.sm];
      if (!m) m = std::make_unique<ReferenceL1>(config, mixSeed(trial, st.sm));
      InstructionStats& is = ins[st.instruction];
      is.instruction = st.instruction;
      ++want.steps;
      ++is.steps;
      if (st.kind == AccessKind::Load || st.kind == AccessKind::Store) {
        want.requestsBeforeCoalescing += st.lanes.size();
        is.requestsBeforeCoalescing += st.lanes.size();
      }
      const std::vector<uint64_t> lines =
          testing::requestsByDefinition(st, kLineShift, config.warpSize, config.wideAccessSplit);
      switch (st.kind) {
        case AccessKind::Load:
          for (uint64_t line : lines) countRead(is, m->read(line, st.cycle, st.warpKey));
          break;
        case AccessKind::Store:
          for (uint64_t line : lines) countWrite(is, m->write(line, st.cycle));
          break;
        case AccessKind::Atomic:
          want.atomics += lines.size();
          is.atomics += lines.size();
          break;
        case AccessKind::ConstantLoad:
          want.constantLoads += lines.size();
          is.constantLoads += lines.size();
          break;
        case AccessKind::Barrier: ++want.barriers; break;
        case AccessKind::Fence: ++want.fences; break;
      }
    }
    for (const auto& [sm, m] : models) want.merge(m->stats);
    for (const auto& [id, is] : ins) want.perInstruction.push_back(is);
    testing::expectSameStats(got, want);
  }
  EXPECT_GT(boundsNoted, 1000u);  // both the noted bounds and the lanes' own were taken
  EXPECT_GT(multiLine, 1000u);    // and many steps touched several lines
}

// The Simulator's rules with timing on (docs/cachesim.md, "Timing model"), plainly: every
// retry an entry of its own in an ordered set, held warps in a map, the lines of every step
// listed by the definition.
class ReferenceRun {
 public:
  ReferenceRun(const Config& config, uint64_t seed, const RandomSms& sms) : config_(config), seed_(seed), sms_(sms) {}

  void execute(sched::StepSource& source) {
    sched::WarpStep buf;
    bool have = false, exhausted = false;
    for (;;) {
      if (!have && !exhausted) {
        if (queue_.empty()) {
          have = source.next(buf);
          exhausted = !have;
        } else {
          const Retry& r = *queue_.begin();
          const sched::NextStep n = source.nextBefore(buf, std::get<0>(r), std::get<1>(r));
          have = n == sched::NextStep::Issued;
          exhausted = n == sched::NextStep::Finished;
        }
      }
      bool askAgain = false;
      while (!queue_.empty()) {
        const Retry r = *queue_.begin();
        if (have && sched::issuesBefore(buf.cycle, buf.sm, std::get<0>(r), std::get<1>(r))) break;
        queue_.erase(queue_.begin());
        replay(std::get<0>(r), std::get<3>(r), source, have ? &buf : nullptr, have);
        if (!have && !exhausted) {
          askAgain = true;
          break;
        }
      }
      if (askAgain) continue;
      if (!have) break;
      fresh(buf, source);
      have = false;
    }
  }

  bool reported(uint32_t sm) const { return sms_.reports(sm); }
  std::map<uint32_t, std::unique_ptr<ReferenceL1>> models;
  std::map<uint32_t, InstructionStats> instructions;  // of the reported SMs
  Stats counted;                                       // steps, kinds and lanes of the reported SMs

 private:
  using Retry = std::tuple<uint64_t, uint32_t, uint64_t, uint64_t>;  // cycle, SM, order, warp key
  struct Progress {
    bool started = false;
    std::vector<uint64_t> lines;
    size_t next = 0;
    uint64_t ready = 0;
  };
  struct Held {
    std::deque<sched::WarpStep> steps;
    Progress progress;
  };

  ReferenceL1& model(uint32_t sm) {
    std::unique_ptr<ReferenceL1>& m = models[sm];
    if (!m) {
      configs_.push_back(std::make_unique<Config>(config_));
      if (!reported(sm)) configs_.back()->classify = false;
      m = std::make_unique<ReferenceL1>(*configs_.back(), mixSeed(seed_, sm));
    }
    return *m;
  }

  bool process(const sched::WarpStep& st, uint64_t cycle, Progress& p, uint64_t& until) {
    ReferenceL1& m = model(st.sm);
    InstructionStats scratch;
    InstructionStats& ins = reported(st.sm) ? instructions[st.instruction] : scratch;
    Stats& c = reported(st.sm) ? counted : scratchStats_;
    ins.instruction = st.instruction;
    if (!p.started) {
      p.started = true;
      p.ready = cycle;
      ++c.steps;
      ++ins.steps;
      if (st.kind == AccessKind::Load || st.kind == AccessKind::Store) {
        c.requestsBeforeCoalescing += st.lanes.size();
        ins.requestsBeforeCoalescing += st.lanes.size();
      }
      p.lines = testing::requestsByDefinition(st, static_cast<uint32_t>(__builtin_ctz(config_.lineSize)),
                                              config_.warpSize, config_.wideAccessSplit);
    }
    switch (st.kind) {
      case AccessKind::Load:
        for (; p.next < p.lines.size(); ++p.next) {
          const RequestResult r = m.read(p.lines[p.next], cycle, st.warpKey);
          countRead(ins, r);
          if (r.outcome == Outcome::MshrStall) {
            until = r.readyCycle;
            return false;
          }
          p.ready = std::max(p.ready, r.readyCycle);
        }
        until = p.ready;
        return true;
      case AccessKind::Store:
        for (uint64_t line : p.lines) countWrite(ins, m.write(line, cycle));
        break;
      case AccessKind::Atomic:
        c.atomics += p.lines.size();
        ins.atomics += p.lines.size();
        break;
      case AccessKind::ConstantLoad:
        c.constantLoads += p.lines.size();
        ins.constantLoads += p.lines.size();
        break;
      case AccessKind::Barrier: ++c.barriers; break;
      case AccessKind::Fence: ++c.fences; break;
    }
    until = cycle;
    return true;
  }

  void queue(uint64_t cycle, uint32_t sm, uint64_t key) { queue_.insert(Retry{cycle, sm, order_++, key}); }
  static void delay(sched::StepSource& source, uint64_t key, uint64_t cycle, uint64_t ready) {
    if (ready > cycle + 1) source.delayWarp(key, ready);
  }

  void fresh(const sched::WarpStep& st, sched::StepSource& source) {
    if (auto it = held_.find(st.warpKey); it != held_.end()) {
      it->second.steps.push_back(st);
      return;
    }
    Progress p;
    uint64_t until = 0;
    if (process(st, st.cycle, p, until)) {
      delay(source, st.warpKey, st.cycle, until);
      return;
    }
    held_[st.warpKey] = Held{{st}, p};
    queue(until, st.sm, st.warpKey);
    source.delayWarp(st.warpKey, until + 1);
  }

  void replay(uint64_t cycle, uint64_t key, sched::StepSource& source, sched::WarpStep* peeked, bool& have) {
    auto it = held_.find(key);
    if (it == held_.end()) return;
    Held& h = it->second;
    const sched::WarpStep st = h.steps.front();
    uint64_t until = 0;
    if (!process(st, cycle, h.progress, until)) {
      queue(until, st.sm, key);
      source.delayWarp(key, until + 1);
      return;
    }
    h.steps.pop_front();
    h.progress = Progress{};
    const uint64_t next = std::max(until, cycle + 1);
    if (!h.steps.empty()) {
      queue(next, h.steps.front().sm, key);
      delay(source, key, cycle, next + 1);
      return;
    }
    held_.erase(it);
    delay(source, key, cycle, until);
    if (peeked && peeked->warpKey == key && peeked->cycle < next) {  // it waits until the warp is ready
      held_[key] = Held{{*peeked}, Progress{}};
      queue(next, peeked->sm, key);
      have = false;
    }
  }

  const Config& config_;
  uint64_t seed_;
  RandomSms sms_;
  std::vector<std::unique_ptr<Config>> configs_;
  std::set<Retry> queue_;
  uint64_t order_ = 0;
  std::map<uint64_t, Held> held_;
  Stats scratchStats_;
};

// Also the Simulator's two ways of taking retries: herds of warps waiting for a full SM's next
// fill (without a request callback) and every retry the full way (with one).
TEST(SimulatorReference, TimingOnRunsFollowThePlainRetryRules) {
  uint64_t stalls = 0, latencyMisses = 0;
  for (uint64_t trial = 0; trial < 200; ++trial) {
    Rng pick(trial * 32452843 + 5);
    const RandomCache cache = randomCache(pick);
    const RandomSms sms = randomSms(pick);
    const bool far = pick.below(4) == 0;  // retries beyond the replay queue's calendar window
    std::vector<std::string> keys = cache.keys;
    keys.insert(keys.end(),
                {sms.key(),
                 "mshrs=" + std::to_string(pick.below(2) ? pick.below(12) : pick.below(40)),
                 "mshrs_per_warp=" + std::to_string(pick.below(6)),
                 "min_latency=" + std::to_string(far ? 500 + pick.below(1500) : pick.below(4) == 0 ? pick.below(3) : pick.below(300)),
                 "latency_sigma=" + std::to_string(pick.below(3) == 0 ? 0 : far ? pick.below(700) : pick.below(60)),
                 "hit_latency=" + std::to_string(pick.below(3))});
    const bool holdsBack = pick.below(3) != 0;
    SCOPED_TRACE(described(trial, keys) + " on " + std::to_string(sms.count) + " SMs" +
                 (holdsBack ? "" : ", a source that cannot hold back"));
    const Config config = loadConfig("gtx480-16k", keys);
    const uint64_t footprint = cache.lines() * 3 * 128;

    testing::FakeStepSource refSource;
    addRandomSteps(refSource, trial, sms.count, 12, footprint);
    ReferenceRun ref(config, trial, sms);
    testing::CannotHoldBack refOrder(refSource);
    if (holdsBack)
      ref.execute(refSource);
    else
      ref.execute(refOrder);
    Stats want = ref.counted;
    for (const auto& [sm, m] : ref.models)
      if (ref.reported(sm)) want.merge(m->stats);
    for (const auto& [id, is] : ref.instructions) want.perInstruction.push_back(is);
    stalls += want.misses.mshr;
    latencyMisses += want.misses.latency;

    for (int observed = 0; observed < 2; ++observed) {
      SCOPED_TRACE(observed ? "with a request callback" : "without a request callback");
      testing::FakeStepSource src;
      addRandomSteps(src, trial, sms.count, 12, footprint);
      Simulator sim(config);
      if (observed) sim.setRequestCallback([](const RequestEvent&) {});
      testing::CannotHoldBack order(src);
      const Stats got = holdsBack ? sim.run(src, trial) : sim.run(order, trial);
      ASSERT_EQ(src.delays, refSource.delays);
      ASSERT_EQ(src.issued.size(), refSource.issued.size());
      testing::expectSameStats(got, want);
    }
  }
  EXPECT_GT(stalls, 10000u);  // the settings make warps wait for MSHRs and for lines in flight
  EXPECT_GT(latencyMisses, 1000u);
}

}  // namespace
}  // namespace cltrace::cachesim
