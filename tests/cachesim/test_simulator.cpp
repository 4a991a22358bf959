// The simulator driving a scheduler: latency misses, MSHR stalls and retries, kinds that bypass
// L1, SM selection, repeated runs.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "cltrace/cachesim/simulator.h"
#include "fake_step_source.h"
#include "same_stats.h"

namespace cltrace::cachesim {
namespace {

using testing::FakeStepSource;
using testing::load;
using testing::store;
using testing::strided;

// Timing on, no jitter, 100-cycle misses, linear indexing (line n -> set n % 32).
Config timed(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> o = {"set_index=linear", "latency_sigma=0", "min_latency=100", "hit_latency=0"};
  o.insert(o.end(), extra.begin(), extra.end());
  return loadConfig("gtx480-16k", o);
}

struct Recorded {
  uint64_t cycle;
  uint64_t warpKey;
  uint64_t line;
  Outcome outcome;
  bool operator==(const Recorded& o) const {
    return cycle == o.cycle && warpKey == o.warpKey && line == o.line && outcome == o.outcome;
  }
};
std::ostream& operator<<(std::ostream& os, const Recorded& r) {
  return os << "{" << r.cycle << ", w" << r.warpKey << ", line " << r.line << ", " << toString(r.outcome) << "}";
}

// Runs `src` through a simulator with `config` and seed 1, recording every request event.
Stats runRecording(const Config& config, sched::StepSource& src, std::vector<Recorded>& events) {
  Simulator sim(config);
  sim.setRequestCallback([&](const RequestEvent& e) { events.push_back({e.cycle, e.warpKey, e.line, e.outcome}); });
  return sim.run(src, 1);
}

TEST(Timing, SecondRequestToALineInFlightIsALatencyMiss) {
  FakeStepSource src;
  src.addWarp(0, 1, {load(0, {0x1000}), load(1, {0x1000})});
  src.addWarp(0, 2, {load(0, {0x1000}), load(1, {0x1000})});
  std::vector<Recorded> events;
  Stats s = runRecording(timed(), src, events);

  EXPECT_EQ(events, (std::vector<Recorded>{{0, 1, 0x20, Outcome::ColdMiss},
                                           {1, 2, 0x20, Outcome::LatencyMiss},
                                           {100, 1, 0x20, Outcome::Hit},
                                           {101, 2, 0x20, Outcome::Hit}}));
  EXPECT_EQ(src.delays, (std::vector<std::pair<uint64_t, uint64_t>>{{1, 100}, {2, 100}}));
  EXPECT_EQ(s.reads, 4u);
  EXPECT_EQ(s.readMisses, 1u);
  EXPECT_EQ(s.misses.cold, 1u);
  EXPECT_EQ(s.misses.latency, 1u);
  EXPECT_EQ(s.readHits, 2u);
  EXPECT_DOUBLE_EQ(s.missRate(), 0.25);
}

TEST(Timing, WithTimingOffEveryMissFillsAtOnceAndNoWarpIsDelayed) {
  FakeStepSource src;
  src.addWarp(0, 1, {load(0, {0x1000}), load(1, {0x1000})});
  src.addWarp(0, 2, {load(0, {0x1000}), load(1, {0x1000})});
  Simulator sim(timed({"timing=off"}));
  Stats s = sim.run(src, 1);
  EXPECT_TRUE(src.delays.empty());
  EXPECT_EQ(s.readMisses, 1u);
  EXPECT_EQ(s.readHits, 3u);
  EXPECT_EQ(s.misses.latency, 0u);
}

TEST(Timing, JitterIsSeededAndAtLeastTheMinimum) {
  auto missReady = [](uint64_t seed) {
    SmModel m(loadConfig("gtx480-16k", {"latency_sigma=20", "min_latency=100"}), seed);
    std::vector<uint64_t> r;
    for (uint64_t i = 0; i < 50; ++i) r.push_back(m.read(i * 1000, 0, i).readyCycle);
    return r;
  };
  std::vector<uint64_t> a = missReady(3), b = missReady(3), c = missReady(4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  bool spread = false;
  for (uint64_t v : a) {
    EXPECT_GE(v, 100u);
    EXPECT_LT(v, 100u + 20u * 7u);
    if (v != a[0]) spread = true;
  }
  EXPECT_TRUE(spread);
}

TEST(Mshr, PerWarpLimitStallsTheWarpAndRetriesTheRest) {
  // One step touching 8 distinct lines; a warp may hold 6 MSHRs.
  FakeStepSource src;
  src.addWarp(0, 1, {load(0, strided(0, 128, 8)), load(1, {0x0})});
  std::vector<Recorded> events;
  Stats s = runRecording(timed(), src, events);

  std::vector<Recorded> expected;
  for (uint64_t l = 0; l < 6; ++l) expected.push_back({0, 1, l, Outcome::ColdMiss});
  expected.push_back({0, 1, 6, Outcome::MshrStall});
  expected.push_back({100, 1, 6, Outcome::ColdMiss});  // the first fills free the warp's MSHRs
  expected.push_back({100, 1, 7, Outcome::ColdMiss});
  expected.push_back({200, 1, 0, Outcome::Hit});  // next step once lines 6 and 7 arrived
  EXPECT_EQ(events, expected);
  EXPECT_EQ(src.delays, (std::vector<std::pair<uint64_t, uint64_t>>{{1, 101}, {1, 200}}));
  EXPECT_EQ(s.reads, 9u);
  EXPECT_EQ(s.readMisses, 8u);
  EXPECT_EQ(s.misses.mshr, 1u);
  EXPECT_EQ(s.readHits, 1u);
  EXPECT_EQ(s.requests, 9u);
  EXPECT_EQ(s.requestsBeforeCoalescing, 9u);
  ASSERT_EQ(s.perInstruction.size(), 2u);
  EXPECT_EQ(s.perInstruction[0].misses.mshr, 1u);
  EXPECT_EQ(s.perInstruction[0].reads, 8u);
}

TEST(Mshr, ATwoLineStepThatStallsOnItsSecondLineRetriesOnlyThatLine) {
  // Lanes at 0x0 and 0x80: lines 0 and 1 (the lane bounds settle them). A warp may hold one
  // MSHR, so line 1 waits for line 0's fill at 100, and the retry reads line 1 alone.
  FakeStepSource src;
  src.addWarp(0, 1, {load(0, {0x0, 0x80}), load(1, {0x0})});
  std::vector<Recorded> events;
  Stats s = runRecording(timed({"mshrs_per_warp=1"}), src, events);

  EXPECT_EQ(events, (std::vector<Recorded>{{0, 1, 0, Outcome::ColdMiss},
                                           {0, 1, 1, Outcome::MshrStall},
                                           {100, 1, 1, Outcome::ColdMiss},
                                           {200, 1, 0, Outcome::Hit}}));
  EXPECT_EQ(src.delays, (std::vector<std::pair<uint64_t, uint64_t>>{{1, 101}, {1, 200}}));
  EXPECT_EQ(s.reads, 3u);
  EXPECT_EQ(s.readMisses, 2u);
  EXPECT_EQ(s.misses.mshr, 1u);
  EXPECT_EQ(s.readHits, 1u);
  EXPECT_EQ(s.requestsBeforeCoalescing, 3u);

  // Without a callback (the retry then goes by the noted read): the same run.
  FakeStepSource again;
  again.addWarp(0, 1, {load(0, {0x0, 0x80}), load(1, {0x0})});
  Stats t = Simulator(timed({"mshrs_per_warp=1"})).run(again, 1);
  EXPECT_EQ(again.delays, src.delays);
  EXPECT_EQ(t.reads, 3u);
  EXPECT_EQ(t.readHits, 1u);
  EXPECT_EQ(t.misses.mshr, 1u);
}

TEST(Mshr, SmLimitStallsAnotherWarp) {
  FakeStepSource src;
  src.addWarp(0, 1, {load(0, strided(0, 128, 3))});
  src.addWarp(0, 2, {load(0, strided(0x10000, 128, 3))});
  std::vector<Recorded> events;
  Stats s = runRecording(timed({"mshrs=4"}), src, events);
  const uint64_t b = 0x10000 >> 7;
  EXPECT_EQ(events, (std::vector<Recorded>{{0, 1, 0, Outcome::ColdMiss},
                                           {0, 1, 1, Outcome::ColdMiss},
                                           {0, 1, 2, Outcome::ColdMiss},
                                           {1, 2, b, Outcome::ColdMiss},
                                           {1, 2, b + 1, Outcome::MshrStall},
                                           {100, 2, b + 1, Outcome::ColdMiss},
                                           {100, 2, b + 2, Outcome::ColdMiss}}));
  EXPECT_EQ(s.misses.mshr, 1u);
  EXPECT_EQ(s.readMisses, 6u);
}

// One MSHR per warp: the first step (lines 0, 1, 2) takes two retries, at the fills of 100 and
// 200; the last line fills at 300, when the warp may go on.
const std::vector<Recorded> kStalledTwiceEvents = {
    {0, 1, 0, Outcome::ColdMiss},   {0, 1, 1, Outcome::MshrStall},   {100, 1, 1, Outcome::ColdMiss},
    {100, 1, 2, Outcome::MshrStall}, {200, 1, 2, Outcome::ColdMiss}, {300, 1, 0x100, Outcome::ColdMiss}};

// That warp, its source and what the simulator made of it, however the source issued it.
void expectStalledTwice(const FakeStepSource& src, const Stats& s, const std::vector<Recorded>& events,
                        uint64_t secondIssue, uint64_t thirdDelay) {
  EXPECT_EQ(events, kStalledTwiceEvents);
  ASSERT_EQ(src.issued.size(), 2u);
  EXPECT_EQ(src.issued[1].cycle, secondIssue);
  EXPECT_EQ(src.delays, (std::vector<std::pair<uint64_t, uint64_t>>{{1, 101}, {1, 201}, {1, thirdDelay}, {1, 400}}));
  EXPECT_EQ(s.misses.mshr, 2u);
  EXPECT_EQ(s.readMisses, 4u);
  EXPECT_EQ(s.steps, 2u);
  EXPECT_EQ(s.cycles, 300u);  // the last request's cycle
}

TEST(Mshr, AWarpWhoseRetryStallsAgainIssuesNothingMeanwhile) {
  // The stall at 0 delays the warp to 101; the source is asked only for a step before the
  // retry at 100, so the retry's stall (delay to 201) comes before the warp could issue, and
  // so on: its next step issues at 300, the fill that completes the first.
  FakeStepSource src;
  src.addWarp(0, 1, {load(0, strided(0, 128, 3)), load(1, {0x8000})});
  std::vector<Recorded> events;
  Stats s = runRecording(timed({"mshrs_per_warp=1"}), src, events);
  expectStalledTwice(src, s, events, 300, 300);
}

TEST(Mshr, StepsOfAStalledWarpStayInProgramOrder) {
  // The same warp through a source that cannot hold a step back: it issues the warp's next
  // step at 101, before the retry at 100 stalls again. That step waits behind the stalled one
  // and is read at 300 all the same.
  FakeStepSource src;
  src.addWarp(0, 1, {load(0, strided(0, 128, 3)), load(1, {0x8000})});
  testing::CannotHoldBack order(src);
  std::vector<Recorded> events;
  Stats s = runRecording(timed({"mshrs_per_warp=1"}), order, events);
  // The retry at 200 completes the first step and queues the held one for 300: delay to 301.
  expectStalledTwice(src, s, events, 101, 301);
}

TEST(Mshr, AFullSetOfLinesInFlightStallsToo) {
  // 4-way sets; five lines of one set requested at once: the fifth waits for a way.
  FakeStepSource src;
  src.addWarp(0, 1, {load(0, {0x0, 0x1000})});
  src.addWarp(0, 2, {load(0, {0x2000, 0x3000})});
  src.addWarp(0, 3, {load(0, {0x4000})});
  std::vector<Recorded> events;
  Stats s = runRecording(timed(), src, events);
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[4], (Recorded{2, 3, 0x80, Outcome::MshrStall}));
  EXPECT_EQ(events[5], (Recorded{100, 3, 0x80, Outcome::ColdMiss}));
  EXPECT_EQ(s.misses.mshr, 1u);
}

TEST(Kinds, AtomicsConstantsBarriersAndFencesBypassL1) {
  FakeStepSource src;
  src.addWarp(0, 1,
              {testing::makeStep(AccessKind::Atomic, 0, std::vector<uint64_t>(32, 0x1000)),
               testing::makeStep(AccessKind::ConstantLoad, 1, strided(0x2000, 4, 32)),
               testing::makeStep(AccessKind::Barrier, 2, {}), testing::makeStep(AccessKind::Fence, 3, {}),
               load(4, {0x1000}), load(5, {0x2000})});
  Simulator sim(timed({"timing=off"}));
  Stats s = sim.run(src, 1);
  EXPECT_EQ(s.atomics, 1u);
  EXPECT_EQ(s.constantLoads, 1u);
  EXPECT_EQ(s.barriers, 1u);
  EXPECT_EQ(s.fences, 1u);
  EXPECT_EQ(s.steps, 6u);
  EXPECT_EQ(s.reads, 2u);
  EXPECT_EQ(s.requests, 2u);
  EXPECT_EQ(s.requestsBeforeCoalescing, 2u);
  EXPECT_EQ(s.misses.cold, 2u);  // neither the atomic nor the constant load filled L1
  ASSERT_EQ(s.perInstruction.size(), 6u);
  EXPECT_EQ(s.perInstruction[0].atomics, 1u);
  EXPECT_EQ(s.perInstruction[1].constantLoads, 1u);
}

FakeStepSource twoSms() {
  FakeStepSource src;
  src.addWarp(0, 1, {load(0, {0x0}), load(0, {0x0})});               // SM 0: 1 miss, 1 hit
  src.addWarp(1, 2, {load(0, {0x80}), load(0, {0x100}), load(0, {0x180})});  // SM 1: 3 misses
  return src;
}

TEST(SmSelection, OneSmAllSmsOrARandomOne) {
  {
    FakeStepSource src = twoSms();
    Simulator sim(timed({"timing=off", "sm=0"}));
    Stats s = sim.run(src, 1);
    EXPECT_EQ(s.reads, 2u);
    EXPECT_EQ(s.readMisses, 1u);
    EXPECT_EQ(sim.lastSm(), 0u);
  }
  {
    FakeStepSource src = twoSms();
    Simulator sim(timed({"timing=off", "sm=1"}));
    Stats s = sim.run(src, 1);
    EXPECT_EQ(s.reads, 3u);
    EXPECT_EQ(s.readMisses, 3u);
  }
  {
    FakeStepSource src = twoSms();
    Simulator sim(timed({"timing=off", "sm=all"}));
    Stats s = sim.run(src, 1);
    EXPECT_EQ(s.reads, 5u);
    EXPECT_EQ(s.readMisses, 4u);
    EXPECT_EQ(s.misses.cold, 4u);
    EXPECT_EQ(sim.lastSm(), Simulator::kAllSms);
    ASSERT_EQ(s.perInstruction.size(), 1u);
    EXPECT_EQ(s.perInstruction[0].reads, 5u);
  }
  {
    Simulator sim(timed({"timing=off", "sm=random", "sm_count=2"}));
    std::set<uint32_t> seen;
    for (uint64_t seed = 0; seed < 40; ++seed) {
      FakeStepSource src = twoSms();
      Stats s = sim.run(src, seed);
      ASSERT_LT(sim.lastSm(), 2u);
      seen.insert(sim.lastSm());
      EXPECT_EQ(s.reads, sim.lastSm() == 0 ? 2u : 3u);
    }
    EXPECT_EQ(seen.size(), 2u);
  }
}

TEST(SmSelection, AnIdleSmIsReportedNotJustZero) {
  // twoSms() gives work to SMs 0 and 1 only; SM 3 of 15 sees nothing.
  struct TwoBusySms : FakeStepSource {
    std::optional<std::vector<uint32_t>> busySms() const override { return std::vector<uint32_t>{0, 1}; }
  };
  auto factory = [](uint64_t) {
    auto src = std::make_unique<TwoBusySms>();
    static_cast<FakeStepSource&>(*src) = twoSms();
    return std::unique_ptr<sched::StepSource>(std::move(src));
  };
  Report idle = simulate(timed({"timing=off", "sm=3"}), factory);
  EXPECT_EQ(idle.stats.reads, 0u);
  EXPECT_EQ(idle.warnings, (std::vector<std::string>{
                               "SM 3 receives no workgroup that makes an access (the launch keeps SMs 0, 1 busy), so "
                               "every count is 0; choose one of those SMs, all, or random"}));
  Report busy = simulate(timed({"timing=off", "sm=1"}), factory);
  EXPECT_EQ(busy.stats.reads, 3u);
  EXPECT_TRUE(busy.warnings.empty());
  // A source that does not know its busy SMs: the warning cannot name them.
  auto unknown = [](uint64_t) { return std::unique_ptr<sched::StepSource>(new FakeStepSource(twoSms())); };
  EXPECT_EQ(simulate(timed({"timing=off", "sm=3"}), unknown).warnings,
            (std::vector<std::string>{"SM 3 receives no workgroup that makes an access, so every count is 0; "
                                      "choose another SM, all, or random"}));
  // No SM gets work: nothing to choose from.
  auto none = [](uint64_t) {
    struct NoBusySms : FakeStepSource {
      std::optional<std::vector<uint32_t>> busySms() const override { return std::vector<uint32_t>{}; }
    };
    return std::unique_ptr<sched::StepSource>(new NoBusySms());
  };
  EXPECT_EQ(simulate(timed({"timing=off", "sm=0"}), none).warnings,
            (std::vector<std::string>{
                "SM 0 sees no step: no workgroup of the launch makes an access, so every count is 0"}));
}

TEST(SmSelection, RandomDrawsAmongTheBusySmsWhereverTheyAre) {
  // Only SMs 2 and 5 of 8 get work (the workgroups dealt to 0, 1, 3, 4 made no access): a draw
  // among SMs 0..1 would simulate an idle L1 and report 0 reads.
  struct LateSms : FakeStepSource {
    std::optional<std::vector<uint32_t>> busySms() const override { return std::vector<uint32_t>{2, 5}; }
  };
  auto lateSms = [] {
    LateSms src;
    src.addWarp(2, 1, {load(0, {0x0}), load(0, {0x0})});                       // SM 2: 1 miss, 1 hit
    src.addWarp(5, 2, {load(0, {0x80}), load(0, {0x100}), load(0, {0x180})});  // SM 5: 3 misses
    return src;
  };
  Simulator sim(timed({"timing=off", "sm=random", "sm_count=8"}));
  std::set<uint32_t> seen;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    LateSms src = lateSms();
    Stats s = sim.run(src, seed);
    seen.insert(sim.lastSm());
    EXPECT_EQ(s.reads, sim.lastSm() == 2 ? 2u : 3u);
  }
  EXPECT_EQ(seen, (std::set<uint32_t>{2, 5}));
}

TEST(SmSelection, RandomDrawsAmongTheSmsThatReadUnlessNoneDoes) {
  // SMs 0-2 get work, but SM 1 only stores: its L1 has no read miss rate to draw.
  struct OneStoringSm : FakeStepSource {
    bool reads = true;
    std::optional<std::vector<uint32_t>> busySms() const override { return std::vector<uint32_t>{0, 1, 2}; }
    std::optional<std::vector<uint32_t>> readingSms() const override {
      return reads ? std::vector<uint32_t>{0, 2} : std::vector<uint32_t>{};
    }
  };
  auto make = [](bool reads) {
    OneStoringSm src;
    src.reads = reads;
    src.addWarp(0, 1, {load(0, {0x0})});
    src.addWarp(1, 2, {store(1, {0x80})});
    src.addWarp(2, 3, {load(0, {0x100})});
    return src;
  };
  Simulator sim(timed({"timing=off", "sm=random", "sm_count=3"}));
  std::set<uint32_t> seen;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    OneStoringSm src = make(true);
    EXPECT_EQ(sim.run(src, seed).reads, 1u);
    seen.insert(sim.lastSm());
  }
  EXPECT_EQ(seen, (std::set<uint32_t>{0, 2}));
  // No SM reads (as the source says): the draw falls back to the busy SMs.
  seen.clear();
  for (uint64_t seed = 0; seed < 40; ++seed) {
    OneStoringSm src = make(false);
    sim.run(src, seed);
    seen.insert(sim.lastSm());
  }
  EXPECT_EQ(seen, (std::set<uint32_t>{0, 1, 2}));
}

TEST(SmSelection, ARandomRunWhoseSmSawNoReadIsRunAgainOnOneThatDid) {
  // No SM loads in the first deal (the source says so), so the draw is among the busy SMs 0
  // and 1; SM 0 only stores, and SM 1's load comes later. A run drawn on SM 0 is run again on
  // SM 1, the one SM whose steps loaded: every run reports SM 1's cold miss.
  struct LateLoads : FakeStepSource {
    std::optional<std::vector<uint32_t>> busySms() const override { return std::vector<uint32_t>{0, 1}; }
    std::optional<std::vector<uint32_t>> readingSms() const override { return std::vector<uint32_t>{}; }
  };
  auto factory = [](uint64_t) {
    auto src = std::make_unique<LateLoads>();
    src->addWarp(0, 1, {store(1, {0x0})});
    src->addWarp(1, 2, {store(1, {0x80}), load(0, {0x100})});
    return std::unique_ptr<sched::StepSource>(std::move(src));
  };
  Report r = simulate(timed({"timing=off", "sm=random", "sm_count=2", "runs=8"}), factory);
  EXPECT_EQ(r.runs.sms, std::vector<std::string>(8, "1"));
  EXPECT_EQ(r.runs.values, std::vector<std::optional<double>>(8, 1.0));
  EXPECT_EQ(r.runs.withReads, 8u);
  EXPECT_EQ(r.stats.reads, 1u);
  EXPECT_EQ(r.stats.writes, 1u);
  // An SM asked for by index is not replaced.
  Report fixed = simulate(timed({"timing=off", "sm=0", "sm_count=2", "runs=2"}), factory);
  EXPECT_EQ(fixed.runs.sms, (std::vector<std::string>{"0", "0"}));
  EXPECT_EQ(fixed.runs.withReads, 0u);
}

TEST(Runs, AMedianOfZeroWithRunsThatDifferHasNoRelativeDeviation) {
  // Write-back write-allocate: seeds 1 and 2 store a line and read it back (a hit, 0%); seed 3
  // only reads (a cold miss, 100%). The median is 0, from which a spread of 0..1 has no
  // relative size.
  auto factory = [](uint64_t seed) {
    auto src = std::make_unique<FakeStepSource>();
    if (seed == 3)
      src->addWarp(0, 1, {load(0, {0x0})});
    else
      src->addWarp(0, 1, {store(1, {0x0}), load(0, {0x0})});
    return std::unique_ptr<sched::StepSource>(std::move(src));
  };
  Report r = simulate(timed({"timing=off", "write_policy=wbwa", "runs=3", "seed=1"}), factory);
  EXPECT_EQ(r.runs.values, (std::vector<std::optional<double>>{0.0, 0.0, 1.0}));
  EXPECT_EQ(r.runs.median, 0.0);
  EXPECT_FALSE(r.runs.rsd);
  EXPECT_EQ(r.runs.representative, 0u);
}

// Seed s: 4 reads of which s are cold misses (miss rates 0.25, 0.5, 0.75 for seeds 1, 2, 3).
std::unique_ptr<sched::StepSource> seedManyColdMisses(uint64_t seed) {
  auto src = std::make_unique<FakeStepSource>();
  std::vector<sched::WarpStep> steps;
  for (uint64_t i = 0; i < 4; ++i) steps.push_back(load(0, {i < seed ? i * 128 : 0}));
  src->addWarp(0, 1, steps);
  return src;
}

TEST(Runs, MedianAndRelativeStandardDeviation) {
  StepSourceFactory factory = seedManyColdMisses;
  Report r = simulate(timed({"timing=off", "runs=3", "seed=1"}), factory);
  EXPECT_EQ(r.runs.count, 3u);
  EXPECT_EQ(r.runs.values, (std::vector<std::optional<double>>{0.25, 0.5, 0.75}));
  EXPECT_EQ(r.runs.seeds, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(r.runs.withReads, 3u);
  EXPECT_EQ(r.runs.median, 0.5);
  ASSERT_TRUE(r.runs.rsd);
  EXPECT_NEAR(*r.runs.rsd, 100.0 * std::sqrt(0.125 / 3.0) / 0.5, 1e-9);  // 40.82%
  EXPECT_EQ(r.runs.representative, 1u);
  EXPECT_EQ(r.stats.readMisses, 2u);
  EXPECT_EQ(r.sm, "0");

  double median = 0;
  std::optional<double> rsd;
  summarize({0.1, 0.4, 0.2, 0.3}, median, rsd);
  EXPECT_DOUBLE_EQ(median, 0.25);
  summarize({0.3, 0.3}, median, rsd);
  EXPECT_EQ(rsd, 0.0);
  // Five equal runs whose mean, rounded, is not their value: still exactly 0.
  const double rate = 0.9458940020603023;
  summarize({rate, rate, rate, rate, rate}, median, rsd);
  EXPECT_EQ(median, rate);
  EXPECT_EQ(rsd, 0.0);
  // A median of 0 (write-allocate stores make most runs' reads hit): equal values have no
  // deviation; values that differ have one of no size relative to 0.
  summarize({0, 0}, median, rsd);
  EXPECT_EQ(rsd, 0.0);
  summarize({0, 0, 1}, median, rsd);
  EXPECT_DOUBLE_EQ(median, 0.0);
  EXPECT_FALSE(rsd);
}

// Seed 2 only stores: its L1 sees no read and has no miss rate. Seeds 1 and 3 read as above.
std::unique_ptr<sched::StepSource> seedTwoOnlyStores(uint64_t seed) {
  if (seed != 2) return seedManyColdMisses(seed);
  auto src = std::make_unique<FakeStepSource>();
  src->addWarp(0, 1, {store(0, {0}), store(0, {128})});
  return src;
}

TEST(Runs, ARunWithoutReadsHasNoMissRateAndStaysOutOfTheMedian) {
  // Counted as 0, the store-only run would pull the median of {0.25, 0, 0.75} down to 0.25.
  Report r = simulate(timed({"timing=off", "runs=3", "seed=1"}), seedTwoOnlyStores);
  EXPECT_EQ(r.runs.values, (std::vector<std::optional<double>>{0.25, std::nullopt, 0.75}));
  EXPECT_EQ(r.runs.withReads, 2u);
  EXPECT_EQ(r.runs.median, 0.5);
  ASSERT_TRUE(r.runs.rsd);
  EXPECT_DOUBLE_EQ(*r.runs.rsd, 50.0);  // population stddev of {0.25, 0.75} is 0.25, over 0.5
  EXPECT_EQ(r.runs.representative, 0u);  // 0.25 and 0.75 are as close: the first
  EXPECT_EQ(r.stats.readMisses, 1u);

  // No run reads: no median, no deviation, and the first run stands for them.
  Report none = simulate(timed({"timing=off", "runs=2", "seed=2"}), [](uint64_t) {
    auto src = std::make_unique<FakeStepSource>();
    src->addWarp(0, 1, {store(0, {0})});
    return std::unique_ptr<sched::StepSource>(std::move(src));
  });
  EXPECT_EQ(none.runs.values, (std::vector<std::optional<double>>{std::nullopt, std::nullopt}));
  EXPECT_EQ(none.runs.withReads, 0u);
  EXPECT_FALSE(none.runs.median);
  EXPECT_FALSE(none.runs.rsd);
  EXPECT_EQ(none.runs.representative, 0u);
  EXPECT_EQ(none.stats.writes, 1u);
}

TEST(Runs, ThreadsDoNotChangeTheReport) {
  // The same runs as above on 1, 2, 3 and 8 threads: identical values in run order.
  StepSourceFactory factory = seedManyColdMisses;
  for (uint32_t threads : {1u, 2u, 3u, 8u}) {
    Report r = simulate(timed({"timing=off", "runs=3", "seed=1", "sm=random", "sm_count=1"}), factory, {}, threads);
    EXPECT_EQ(r.runs.values, (std::vector<std::optional<double>>{0.25, 0.5, 0.75})) << threads << " threads";
    EXPECT_EQ(r.runs.seeds, (std::vector<uint64_t>{1, 2, 3}));
    EXPECT_EQ(r.runs.sms, (std::vector<std::string>{"0", "0", "0"}));
    EXPECT_EQ(r.runs.representative, 1u);
    EXPECT_EQ(r.stats.reads, 4u);
    EXPECT_EQ(r.stats.readMisses, 2u);
  }
}

TEST(Runs, AFailingRunIsReportedWhateverTheThreads) {
  // Runs with seeds 1..4; the source of seed 3 cannot be made.
  StepSourceFactory factory = [](uint64_t seed) -> std::unique_ptr<sched::StepSource> {
    if (seed == 3) throw std::invalid_argument("no source for seed 3");
    auto src = std::make_unique<FakeStepSource>();
    src->addWarp(0, 1, {load(0, {0})});
    return src;
  };
  for (uint32_t threads : {1u, 2u, 4u}) {
    try {
      simulate(timed({"timing=off", "runs=4", "seed=1"}), factory, {}, threads);
      ADD_FAILURE() << "no error with " << threads << " threads";
    } catch (const std::invalid_argument& e) {
      EXPECT_STREQ(e.what(), "no source for seed 3");
    }
  }
}

// With the test scheduler, and through a source that cannot hold a step back (steps of held
// warps then wait in the simulator).
TEST(Mshr, RandomStepsKeepProgramOrderAndCountsAddUp) {
  for (uint64_t trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    Rng rng(trial / 2);
    FakeStepSource src;
    uint64_t totalSteps = 0, totalLanes = 0;
    for (uint64_t w = 0; w < 24; ++w) {
      std::vector<sched::WarpStep> steps;
      uint64_t n = 1 + rng.below(12);
      for (uint64_t i = 0; i < n; ++i) {
        std::vector<uint64_t> a;
        uint64_t lanes = 1 + rng.below(32), base = rng.below(64) * 128, stride = rng.below(3) == 0 ? 128 : 4;
        for (uint64_t l = 0; l < lanes; ++l) a.push_back(base + l * stride);
        AccessKind kind = rng.below(5) == 0 ? AccessKind::Store : AccessKind::Load;
        steps.push_back(testing::makeStep(kind, static_cast<uint32_t>(i), a));
        totalLanes += lanes;
      }
      totalSteps += n;
      src.addWarp(static_cast<uint32_t>(w % 2), w, steps);
    }
    Simulator sim(loadConfig("gtx480-16k", {"sm=all", "mshrs=" + std::to_string(1 + rng.below(8)),
                                            "mshrs_per_warp=" + std::to_string(1 + rng.below(3)),
                                            "latency_sigma=20", "min_latency=" + std::to_string(rng.below(200))}));
    std::map<uint64_t, uint64_t> lastStep;
    std::map<uint32_t, uint64_t> lastCycle;
    sim.setRequestCallback([&](const RequestEvent& e) {
      auto it = lastStep.find(e.warpKey);
      if (it != lastStep.end()) {
        EXPECT_GE(e.step, it->second) << "warp " << e.warpKey << " went back";
      }
      lastStep[e.warpKey] = e.step;
      EXPECT_GE(e.cycle, lastCycle[e.sm]) << "time went back on SM " << e.sm;
      lastCycle[e.sm] = e.cycle;
    });
    testing::CannotHoldBack order(src);
    Stats s = trial % 2 ? sim.run(order, trial / 2) : sim.run(src, trial / 2);
    EXPECT_EQ(s.steps, totalSteps);
    EXPECT_EQ(s.requestsBeforeCoalescing, totalLanes);
    EXPECT_EQ(s.reads, s.readHits + s.readMisses + s.misses.latency);
    EXPECT_EQ(s.readMisses, s.misses.cold + s.misses.capacity + s.misses.conflict);
    EXPECT_EQ(s.requests, s.reads + s.writes);
    EXPECT_EQ(s.reuse.total(), s.reads);
  }
}

// Adds `warps` warps to `src`, on SMs 0 and 1 in turn, each of 1 to `maxSteps` loads (instruction
// i for step i) of the addresses `addresses(rng)` draws; warp w is named `key(w)`.
template <class Key, class Addresses>
void addRandomWarps(FakeStepSource& src, Rng& rng, uint64_t warps, uint64_t maxSteps, Key key, Addresses addresses) {
  for (uint64_t w = 0; w < warps; ++w) {
    std::vector<sched::WarpStep> steps;
    const uint64_t n = 1 + rng.below(maxSteps);
    for (uint64_t i = 0; i < n; ++i) steps.push_back(load(static_cast<uint32_t>(i), addresses(rng)));
    src.addWarp(static_cast<uint32_t>(w % 2), key(w), steps);
  }
}

// Without a request callback a retry that stalls again on a full SM is decided from the read
// the warp stalled on (no look at its step); a retry whose line another warp has put in
// flight meanwhile merges instead. One MSHR per SM; warps 2, 3 and 4 stall behind warp 1's
// miss; at cycle 100 warp 2 takes the freed MSHR for line 0x20, warp 3 (also line 0x20)
// merges into it, warp 4 (line 0x40) stalls again until 200.
TEST(Mshr, ARetryOnAFullSmMergesIntoALineAnotherRetryPutInFlight) {
  FakeStepSource src;
  src.addWarp(0, 1, {load(0, {0x0})});
  src.addWarp(0, 2, {load(1, {0x1000})});
  src.addWarp(0, 3, {load(2, {0x1000})});
  src.addWarp(0, 4, {load(3, {0x2000})});
  Simulator sim(timed({"mshrs=1"}));
  Stats s = sim.run(src, 1);
  EXPECT_EQ(src.delays, (std::vector<std::pair<uint64_t, uint64_t>>{
                            {1, 100}, {2, 101}, {3, 101}, {4, 101}, {2, 200}, {3, 200}, {4, 201}, {4, 300}}));
  EXPECT_EQ(s.reads, 4u);
  EXPECT_EQ(s.readMisses, 3u);
  EXPECT_EQ(s.misses.cold, 3u);
  EXPECT_EQ(s.misses.latency, 1u);
  EXPECT_EQ(s.misses.mshr, 4u);
  ASSERT_EQ(s.perInstruction.size(), 4u);
  EXPECT_EQ(s.perInstruction[1].misses.mshr, 1u);
  EXPECT_EQ(s.perInstruction[2].misses.mshr, 1u);
  EXPECT_EQ(s.perInstruction[2].misses.latency, 1u);
  EXPECT_EQ(s.perInstruction[3].misses.mshr, 2u);
  EXPECT_EQ(s.cycles, 200u);  // the last request (warp 4's at 200)
}

// A request callback needs every retry's step, so with one every retry takes the full path;
// without one, warps that stall on a full SM wait in herds, whose rounds decide the members that
// stall again from the SM's install log. Both give the same counts and the same delays to the
// scheduler. The settings cover: few MSHRs and lines shared between warps (a member whose line
// another member put in flight merges, splitting its herd); many MSHRs and many lines (more
// installs between rounds than the log keeps, so every member's line is looked up); retries
// beyond the replay queue's calendar window (herds kept in its heap). test_sm_reference.cpp runs
// both ways over random settings against a plain model of the rules.
TEST(Mshr, RetriesGiveTheSameRunWithAndWithoutARequestCallback) {
  struct Setting {
    std::vector<std::string> keys;
    uint64_t lines;      // distinct line groups the warps read from
    uint64_t linesStep;  // most lines one step reads
  };
  const std::vector<Setting> settings = {
      {{"mshrs=2", "mshrs_per_warp=1", "latency_sigma=20"}, 8, 2},
      {{"mshrs=24", "mshrs_per_warp=16", "min_latency=60", "latency_sigma=0"}, 64, 16},
      {{"mshrs=3", "mshrs_per_warp=2", "min_latency=1500", "latency_sigma=600"}, 8, 2},
  };
  for (size_t k = 0; k < settings.size(); ++k) {
    const Setting& setting = settings[k];
    for (uint64_t trial = 0; trial < 20; ++trial) {  // odd trials: a source that cannot hold back
      SCOPED_TRACE("setting " + std::to_string(k) + " trial " + std::to_string(trial));
      Stats stats[2];
      std::vector<std::pair<uint64_t, uint64_t>> delays[2];
      for (int observed = 0; observed < 2; ++observed) {
        Rng rng(trial);
        FakeStepSource src;
        // Lines of sets 0 and 1 (linear indexing): stalls, merges, hits, evictions.
        addRandomWarps(src, rng, 32, 12, [](uint64_t w) { return w; }, [&](Rng& r) {
          return testing::strided(r.below(setting.lines) * 4096, r.below(2) ? 4 : 128, 1 + r.below(setting.linesStep));
        });
        std::vector<std::string> keys = {"sm=all", "set_index=linear"};
        keys.insert(keys.end(), setting.keys.begin(), setting.keys.end());
        Simulator sim(loadConfig("gtx480-16k", keys));
        if (observed) sim.setRequestCallback([](const RequestEvent&) {});
        testing::CannotHoldBack order(src);
        stats[observed] = trial % 2 ? sim.run(order, trial) : sim.run(src, trial);
        delays[observed] = src.delays;
      }
      EXPECT_GT(stats[0].misses.mshr, 100u);
      EXPECT_GT(stats[0].misses.latency, 0u);
      EXPECT_EQ(delays[0], delays[1]);
      testing::expectSameStats(stats[0], stats[1]);
    }
  }
}

// The retry queue marks herds with the top bit of a key, so a warp that would wait with a key
// of 2^63 or more is refused with a message; such a key is fine while its warp never waits.
TEST(Mshr, WarpKeysFromTwoToTheSixtyThreeAreRefusedWhenTheWarpWaits) {
  const uint64_t big = uint64_t(1) << 63;
  FakeStepSource fine;
  fine.addWarp(0, big, {load(0, {0x0})});
  Simulator sim(timed({"mshrs=1"}));
  EXPECT_EQ(sim.run(fine, 1).readMisses, 1u);
  FakeStepSource waits;
  waits.addWarp(0, 1, {load(0, {0x0})});
  waits.addWarp(0, big, {load(1, {0x1000})});  // no MSHR left: it stalls
  try {
    sim.run(waits, 1);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "cachesim: warp key 9223372036854775808 is too large: a step source's warp keys must be below 2^63");
  }
}

// Warp keys only name warps: renaming them (keeping their order, which the test scheduler's
// round-robin follows) changes nothing. The renamed keys are 4096 apart, so that every held warp
// falls on one slot of the simulator's direct-mapped index of held warps and the rest are found
// in its map.
TEST(Mshr, WarpKeysAreOnlyNames) {
  for (uint64_t trial = 0; trial < 10; ++trial) {
    std::vector<std::string> events[2];
    Stats stats[2];
    for (int renamed = 0; renamed < 2; ++renamed) {
      Rng rng(trial);
      FakeStepSource src;
      // 32 lanes over 8 to 32 lines: many misses, many stalls.
      addRandomWarps(src, rng, 24, 8, [&](uint64_t w) { return renamed ? w * 4096 + 5 : w; }, [](Rng& r) {
        return testing::strided(r.below(256) * 128, 4 << r.below(4), 32);
      });
      Simulator sim(loadConfig("gtx480-16k", {"sm=all", "mshrs=8", "mshrs_per_warp=2", "latency_sigma=20"}));
      sim.setRequestCallback([&](const RequestEvent& e) {
        const uint64_t warp = renamed ? (e.warpKey - 5) / 4096 : e.warpKey;
        events[renamed].push_back(std::to_string(e.cycle) + " " + std::to_string(e.sm) + " " + std::to_string(warp) +
                                  " " + std::to_string(e.step) + " " + std::to_string(e.line) + " " +
                                  toString(e.outcome));
      });
      stats[renamed] = sim.run(src, trial);
    }
    EXPECT_GT(stats[0].misses.mshr, 100u) << "trial " << trial;  // warps were held and retried
    EXPECT_EQ(events[0], events[1]) << "trial " << trial;
    EXPECT_EQ(stats[0].misses.mshr, stats[1].misses.mshr);
    EXPECT_EQ(stats[0].misses.latency, stats[1].misses.latency);
    EXPECT_EQ(stats[0].readMisses, stats[1].readMisses);
    EXPECT_EQ(stats[0].cycles, stats[1].cycles);
  }
}

}  // namespace
}  // namespace cltrace::cachesim
