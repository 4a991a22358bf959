// Property tests: random structured kernels (loops with per-thread trip counts, divergent and
// uniform branches, barriers in and out of loops) run through every policy and inter-warp
// order, with and without random delays; the invariants of a schedule are checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cltrace/scheduler/scheduler.h"
#include "test_util.h"

namespace cltrace::sched::test {
namespace {

struct Node {
  enum Type { Access, If, Loop, Barrier } type = Access;
  AccessKind kind = AccessKind::Load;
  uint32_t instruction = 0;
  uint32_t salt = 0;
  bool uniform = false;  // If: same decision for every thread; Loop: same trip count
  uint32_t tripBase = 0, tripSpread = 0;
  std::vector<Node> body, otherwise;
};

uint32_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
  return static_cast<uint32_t>(z ^ (z >> 29));
}

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  std::vector<Node> program() {
    auto nodes = block(0, 0);
    uint32_t next = 1;
    number(nodes, next);
    return nodes;
  }

 private:
  std::vector<Node> block(int depth, int loops) {
    std::vector<Node> nodes;
    const int n = 1 + static_cast<int>(rng_() % 4);
    for (int i = 0; i < n; ++i) {
      Node node;
      const uint32_t r = rng_() % 10;
      node.salt = rng_();
      if (depth < 3 && r < 2) {
        node.type = Node::If;
        node.uniform = rng_() % 3 == 0;
        node.body = block(depth + 1, loops);
        if (rng_() % 2) node.otherwise = block(depth + 1, loops);
      } else if (depth < 3 && loops < 3 && r < 4) {
        node.type = Node::Loop;
        node.uniform = rng_() % 2 == 0;
        node.tripBase = rng_() % 3;
        node.tripSpread = rng_() % 4;
        node.body = block(depth + 1, loops + 1);
      } else if (r < 5) {
        node.type = Node::Barrier;
      } else {
        node.type = Node::Access;
        node.kind = static_cast<AccessKind>(rng_() % 6 == 5 ? 5 : rng_() % 4);
      }
      nodes.push_back(std::move(node));
    }
    return nodes;
  }

  static void number(std::vector<Node>& nodes, uint32_t& next) {
    for (Node& n : nodes) {
      n.instruction = next++;
      number(n.body, next);
      number(n.otherwise, next);
    }
  }

  std::mt19937 rng_;
};

void run(const std::vector<Node>& nodes, const Item& it, std::vector<uint32_t>& iters,
         std::vector<Record>& out) {
  for (const Node& n : nodes) {
    switch (n.type) {
      case Node::Access:
      case Node::Barrier: {
        Record r{};
        r.kind = static_cast<uint8_t>(n.type == Node::Barrier ? AccessKind::Barrier : n.kind);
        r.instruction = n.instruction;
        r.size = n.type == Node::Barrier || n.kind == AccessKind::Fence ? 0 : 4;
        // Unique per record: work-item in the high bits, sequence number in the low bits.
        r.address = r.size ? (uint64_t{it.group} << 40) | (uint64_t{it.lid} << 20) | out.size() : 0;
        r.depth = static_cast<uint8_t>(iters.size());
        std::copy(iters.begin(), iters.end(), r.iterations);
        out.push_back(r);
        break;
      }
      case Node::If: {
        uint64_t key = n.salt;
        for (uint32_t v : iters) key = mix(key, v);
        const bool taken = (n.uniform ? mix(key, 7) : mix(key, it.lid + 1000 * it.group)) % 2;
        run(taken ? n.body : n.otherwise, it, iters, out);
        break;
      }
      case Node::Loop: {
        const uint32_t trip =
            n.tripBase + (n.uniform ? n.tripSpread : mix(n.salt, it.lid) % (n.tripSpread + 1));
        iters.push_back(0);
        for (uint32_t i = 0; i < trip; ++i) {
          iters.back() = i;
          run(n.body, it, iters, out);
        }
        iters.pop_back();
        break;
      }
    }
  }
}

struct Launch {
  NDRange range;
  std::vector<std::vector<Record>> items;  // file order
};

Launch makeLaunch(uint32_t seed) {
  Generator gen(seed);
  const auto program = gen.program();
  std::mt19937 rng(seed * 31 + 5);
  Launch l;
  const uint32_t shapes = rng() % 3;
  if (shapes == 0) l.range = range1(8 * (1 + rng() % 6), 8);
  if (shapes == 1) l.range = range2(12, 6, 6, 3);
  if (shapes == 2) l.range = range3({4, 4, 4}, {4, 2, 2});
  l.items = buildTrace(l.range, [&](const Item& it, Emit& e) {
    std::vector<uint32_t> iters;
    run(program, it, iters, e.out);
  });
  return l;
}

// The next step through nextBefore with random limits (seeded by `limitRng`), asking again
// after each NotBefore as the simulator does after a retry; every step then issues at or after
// each limit it was held back by, and before the limit it was issued under.
bool nextUnderLimits(Scheduler& scheduler, WarpStep& s, std::mt19937& limitRng, uint64_t lastCycle, uint32_t smCount) {
  uint64_t boundCycle = 0;
  uint32_t boundSm = 0;
  for (uint32_t attempt = 0;; ++attempt) {
    const bool unlimited = attempt % 4 == 3;
    const uint64_t cycle = unlimited ? UINT64_MAX : lastCycle + limitRng() % 4;
    const uint32_t sm = unlimited ? UINT32_MAX : static_cast<uint32_t>(limitRng() % (smCount + 1));
    const NextStep n = scheduler.nextBefore(s, cycle, sm);
    if (n == NextStep::Finished) return false;
    if (n == NextStep::NotBefore) {
      EXPECT_FALSE(unlimited);
      if (issuesBefore(boundCycle, boundSm, cycle, sm)) {
        boundCycle = cycle;
        boundSm = sm;
      }
      continue;
    }
    EXPECT_TRUE(issuesBefore(s.cycle, s.sm, cycle, sm)) << "issued at or after the limit";
    EXPECT_FALSE(issuesBefore(s.cycle, s.sm, boundCycle, boundSm)) << "held back wrongly";
    return true;
  }
}

// Schedules `launch` (read from a source, or loaded first into a PreparedTrace) and checks the
// invariants; returns the rendered schedule. With `limits`, steps are asked for through
// nextBefore with random limits, which must not change the schedule.
std::string check(const Launch& launch, const SchedulerConfig& config, uint32_t delaySeed, bool prepared = false,
                  bool limits = false) {
  MemoryWorkgroupSource source(launch.range, launch.items);
  std::unique_ptr<Scheduler> owned =
      prepared ? std::make_unique<Scheduler>(PreparedTrace::load(source, config, UINT64_MAX), config)
               : std::make_unique<Scheduler>(source, config);
  Scheduler& scheduler = *owned;
  const uint64_t wgSize = launch.range.workgroupSize();
  const uint64_t groups = launch.range.workgroups();
  const uint32_t laneWidth = config.policy == Policy::Warp ? config.warpSize : 1;
  std::mt19937 rng(delaySeed);
  std::mt19937 limitRng(delaySeed + 7);

  std::vector<size_t> next(launch.items.size(), 0);  // next record per work-item
  std::vector<uint32_t> barriersDone(launch.items.size(), 0);
  std::map<uint64_t, uint64_t> warpSteps;  // warpKey -> steps seen
  std::vector<int64_t> smOf(groups, -1);
  std::vector<std::pair<uint64_t, uint64_t>> span(groups, {UINT64_MAX, 0});
  uint64_t lastCycle = 0, index = 0;
  int64_t lastSm = -1;
  std::string out;
  WarpStep s;
  while (limits ? nextUnderLimits(scheduler, s, limitRng, lastCycle, config.smCount) : scheduler.next(s)) {
    out += stepText(s, true);
    SCOPED_TRACE(stepText(s));
    // Global order: (cycle, SM) strictly increasing.
    EXPECT_TRUE(s.cycle > lastCycle || (s.cycle == lastCycle && int64_t(s.sm) > lastSm));
    lastCycle = s.cycle;
    lastSm = s.sm;
    EXPECT_LT(s.sm, config.smCount);
    // A workgroup stays on one SM.
    if (smOf[s.workgroup] < 0) smOf[s.workgroup] = s.sm;
    EXPECT_EQ(smOf[s.workgroup], int64_t(s.sm));
    span[s.workgroup].first = std::min(span[s.workgroup].first, index);
    span[s.workgroup].second = index;
    // Step numbers count up per warp.
    EXPECT_EQ(s.warpKey, s.workgroup * ((wgSize + config.warpSize - 1) / config.warpSize) + s.warp);
    EXPECT_EQ(s.step, warpSteps[s.warpKey]++);
    EXPECT_GE(s.lanes.size(), 1u);
    EXPECT_LE(s.lanes.size(), laneWidth);
    EXPECT_TRUE(boundsMatchLanes(s));
    const Record* first = nullptr;
    for (size_t i = 0; i < s.lanes.size(); ++i) {
      const LaneAccess& lane = s.lanes[i];
      if (i > 0) {
        EXPECT_GT(lane.localThread, s.lanes[i - 1].localThread);
      }
      EXPECT_EQ(lane.localThread / config.warpSize, s.warp);
      const uint64_t item = s.workgroup * wgSize + lane.localThread;
      if (next[item] >= launch.items[item].size()) {
        ADD_FAILURE() << "work-item " << item << " issued more records than it has";
        return out;
      }
      const Record& r = launch.items[item][next[item]++];
      // Each record exactly once, in its thread's order, with the step's instance.
      EXPECT_EQ(lane.address, r.address);
      EXPECT_EQ(s.instruction, r.instruction);
      EXPECT_EQ(static_cast<uint8_t>(s.kind), r.kind);
      if (first) {
        EXPECT_EQ(r.depth, first->depth);
        EXPECT_TRUE(std::equal(r.iterations, r.iterations + r.depth, first->iterations));
      }
      first = &r;
      // Barriers: a thread past its b-th barrier only issues once every thread of the
      // workgroup has issued its b-th barrier or finished.
      const uint32_t b = barriersDone[item];
      for (uint64_t u = s.workgroup * wgSize; u < (s.workgroup + 1) * wgSize; ++u)
        EXPECT_TRUE(barriersDone[u] >= b || next[u] == launch.items[u].size())
            << "work-item " << u << " is behind barrier " << b;
      if (r.kind == static_cast<uint8_t>(AccessKind::Barrier)) ++barriersDone[item];
    }
    if (delaySeed && rng() % 3 == 0) scheduler.delayWarp(s.warpKey, s.cycle + rng() % 40);
    ++index;
  }
  for (size_t i = 0; i < launch.items.size(); ++i)
    EXPECT_EQ(next[i], launch.items[i].size()) << "work-item " << i << " not fully issued";
  // Residency: workgroups active at once on one SM never exceed the limits.
  for (uint32_t sm = 0; sm < config.smCount; ++sm) {
    std::vector<std::pair<uint64_t, int>> events;
    for (uint64_t g = 0; g < groups; ++g)
      if (smOf[g] == int64_t(sm)) {
        events.push_back({span[g].first, +1});
        events.push_back({span[g].second + 1, -1});
      }
    std::sort(events.begin(), events.end());
    int active = 0;
    for (auto& e : events) {
      active += e.second;
      EXPECT_LE(uint64_t(active),
                std::min<uint64_t>(config.maxWorkgroupsPerSm, config.maxThreadsPerSm / wgSize));
    }
  }
  return out;
}

TEST(Properties, RandomKernelsEveryPolicy) {
  uint64_t records = 0, barriers = 0, loops = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    const Launch launch = makeLaunch(seed);
    for (const auto& item : launch.items)
      for (const Record& r : item) {
        ++records;
        barriers += r.kind == static_cast<uint8_t>(AccessKind::Barrier);
        loops += r.depth > 0;
      }
    SCOPED_TRACE("seed " + std::to_string(seed));
    for (int variant = 0; variant < 8; ++variant) {
      SchedulerConfig c;
      c.policy = variant < 3 ? Policy::Warp : static_cast<Policy>(variant % 3);
      c.interWarp = static_cast<InterWarpOrder>(variant % 3);
      c.warpSize = (seed % 2) ? 4 : 8;
      c.smCount = 1 + seed % 3;
      c.maxWorkgroupsPerSm = 1 + variant % 3;
      c.maxThreadsPerSm = 64;
      c.twoLevelActiveWarps = 1 + variant % 2;
      c.seed = seed;
      SCOPED_TRACE("variant " + std::to_string(variant));
      const std::string plain = check(launch, c, 0);
      EXPECT_EQ(plain, check(launch, c, 0));  // deterministic
      const std::string delayed = check(launch, c, seed);
      EXPECT_EQ(delayed, check(launch, c, seed));
      // A prepared trace schedules exactly as its source.
      EXPECT_EQ(plain, check(launch, c, 0, true));
      EXPECT_EQ(delayed, check(launch, c, seed, true));
      // Held back by limits (and asked again), the scheduler gives the same schedule.
      EXPECT_EQ(delayed, check(launch, c, seed, false, true));
      if (::testing::Test::HasFailure()) return;
    }
  }
  // The generator produces real work: records, barriers, loops.
  EXPECT_GT(records, 20000u);
  EXPECT_GT(barriers, 1000u);
  EXPECT_GT(loops, 5000u);
}

}  // namespace
}  // namespace cltrace::sched::test
