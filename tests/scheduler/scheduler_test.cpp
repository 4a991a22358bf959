// Scheduler tests: every schedule is rendered as text (test_util.h: one line per step,
// "c<cycle> sm<sm> wg<workgroup> w<warp> s<step> i<instruction> <kind> <lanes>") and compared
// exactly.
#include "cltrace/scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "cltrace/scheduler/read_ahead_source.h"
#include "test_util.h"
#include "message_of.h"

namespace cltrace::sched::test {
namespace {

// ---------------------------------------------------------------------------------------
// Warp formation

TEST(WarpFormation, TwoWarpsOneWorkgroupNoBranches) {
  auto program = [](const Item& it, Emit& e) {
    e.load(1, 1000 + 4 * it.lid);
    e.store(2, 2000 + 4 * it.lid);
  };
  EXPECT_EQ(schedule(range1(64, 64), program, oneSm()),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg0 w1 s0 i1 load 32-63\n"
            "c2 sm0 wg0 w0 s1 i2 store 0-31\n"
            "c3 sm0 wg0 w1 s1 i2 store 32-63\n");

  MemoryWorkgroupSource source(range1(64, 64), buildTrace(range1(64, 64), program));
  Scheduler scheduler(source, oneSm());
  WarpStep s;
  ASSERT_TRUE(scheduler.next(s));
  ASSERT_EQ(s.lanes.size(), 32u);
  EXPECT_EQ(s.lanes[5].localThread, 5u);
  EXPECT_EQ(s.lanes[5].address, 1020u);
  EXPECT_EQ(s.lanes[5].size, 4u);
  EXPECT_EQ(s.warpKey, 0u);
  ASSERT_TRUE(scheduler.next(s));
  EXPECT_EQ(s.warpKey, 1u);
  EXPECT_EQ(scheduler.info().laneWidth, 32u);
  EXPECT_EQ(scheduler.info().warpsPerWorkgroup, 2u);
}

TEST(WarpFormation, PartialLastWarp) {
  auto program = [](const Item& it, Emit& e) {
    e.load(1, 4 * it.lid);
    e.store(2, 4 * it.lid);
  };
  EXPECT_EQ(schedule(range1(40, 40), program, oneSm()),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg0 w1 s0 i1 load 32-39\n"
            "c2 sm0 wg0 w0 s1 i2 store 0-31\n"
            "c3 sm0 wg0 w1 s1 i2 store 32-39\n");
  // Warps never span workgroups: two workgroups of 40 give 32 + 8 threads each. The loose
  // round-robin order alternates workgroups.
  EXPECT_EQ(schedule(range1(80, 40), program, oneSm()),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg1 w0 s0 i1 load 0-31\n"
            "c2 sm0 wg0 w1 s0 i1 load 32-39\n"
            "c3 sm0 wg1 w1 s0 i1 load 32-39\n"
            "c4 sm0 wg0 w0 s1 i2 store 0-31\n"
            "c5 sm0 wg1 w0 s1 i2 store 0-31\n"
            "c6 sm0 wg0 w1 s1 i2 store 32-39\n"
            "c7 sm0 wg1 w1 s1 i2 store 32-39\n");
}

TEST(WarpFormation, LanesOfOneInstructionWithDifferentSizesAreOneStep) {
  // A memcpy whose length differs between lanes (2 bytes for even lanes, 4 for odd): one SIMT
  // instruction, so one step whose lanes keep their own sizes; it used to be a step per size.
  auto program = [](const Item& it, Emit& e) {
    e.access(AccessKind::Load, 1, 4 * it.lid, {}, it.lid % 2 ? 4 : 2);
    e.store(2, 4 * it.lid);
  };
  const NDRange range = range1(8, 8);
  EXPECT_EQ(schedule(range, program, oneSm(Policy::Warp, 8)),
            "c0 sm0 wg0 w0 s0 i1 load 0-7\n"
            "c1 sm0 wg0 w0 s1 i2 store 0-7\n");
  MemoryWorkgroupSource source(range, buildTrace(range, program));
  Scheduler scheduler(source, oneSm(Policy::Warp, 8));
  WarpStep step;
  ASSERT_TRUE(scheduler.next(step));
  std::vector<uint32_t> sizes;
  for (const LaneAccess& l : step.lanes) sizes.push_back(l.size);
  EXPECT_EQ(sizes, (std::vector<uint32_t>{2, 4, 2, 4, 2, 4, 2, 4}));
  EXPECT_TRUE(boundsMatchLanes(step));
  // Another kind of the same instruction id is another instance.
  auto kinds = [](const Item& it, Emit& e) { e.access(it.lid < 4 ? AccessKind::Load : AccessKind::Store, 1, 4 * it.lid); };
  EXPECT_EQ(schedule(range, kinds, oneSm(Policy::Warp, 8)),
            "c0 sm0 wg0 w0 s0 i1 load 0-3\n"
            "c1 sm0 wg0 w0 s1 i1 store 4-7\n");
}

TEST(WarpFormation, TwoDimensionalWorkgroups) {
  // 8x4 work-items in 4x2 workgroups; warps of 4 are rows of a workgroup. Address = gy*8+gx.
  auto program = [](const Item& it, Emit& e) { e.load(1, it.global[1] * 8 + it.global[0]); };
  EXPECT_EQ(schedule(range2(8, 4, 4, 2), program, oneSm(Policy::Warp, 4), true),
            "c0 sm0 wg0 w0 s0 i1 load 0-3 @ 0 1 2 3\n"
            "c1 sm0 wg1 w0 s0 i1 load 0-3 @ 4 5 6 7\n"
            "c2 sm0 wg2 w0 s0 i1 load 0-3 @ 16 17 18 19\n"
            "c3 sm0 wg3 w0 s0 i1 load 0-3 @ 20 21 22 23\n"
            "c4 sm0 wg0 w1 s0 i1 load 4-7 @ 8 9 10 11\n"
            "c5 sm0 wg1 w1 s0 i1 load 4-7 @ 12 13 14 15\n"
            "c6 sm0 wg2 w1 s0 i1 load 4-7 @ 24 25 26 27\n"
            "c7 sm0 wg3 w1 s0 i1 load 4-7 @ 28 29 30 31\n");
}

TEST(WarpFormation, ThreeDimensionalWorkgroups) {
  // 4x2x2 work-items in 2x2x2 workgroups, warps of 4 (one z plane of a workgroup).
  auto program = [](const Item& it, Emit& e) {
    e.load(1, it.global[2] * 100 + it.global[1] * 10 + it.global[0]);
  };
  EXPECT_EQ(schedule(range3({4, 2, 2}, {2, 2, 2}), program, oneSm(Policy::Warp, 4), true),
            "c0 sm0 wg0 w0 s0 i1 load 0-3 @ 0 1 10 11\n"
            "c1 sm0 wg1 w0 s0 i1 load 0-3 @ 2 3 12 13\n"
            "c2 sm0 wg0 w1 s0 i1 load 4-7 @ 100 101 110 111\n"
            "c3 sm0 wg1 w1 s0 i1 load 4-7 @ 102 103 112 113\n");
}

// ---------------------------------------------------------------------------------------
// Intra-warp: divergence, loops, barriers

TEST(IntraWarp, IfElseHalfWarpEachSide) {
  auto program = [](const Item& it, Emit& e) {
    e.load(1, it.lid);
    if (it.lid < 16)
      e.load(2, it.lid);
    else
      e.store(3, it.lid);
    e.load(4, it.lid);
  };
  EXPECT_EQ(schedule(range1(32, 32), program, oneSm()),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg0 w0 s1 i2 load 0-15\n"
            "c2 sm0 wg0 w0 s2 i3 store 16-31\n"
            "c3 sm0 wg0 w0 s3 i4 load 0-31\n");
}

TEST(IntraWarp, LoopTripCountDiffersPerThread) {
  auto program = [](const Item& it, Emit& e) {
    for (uint32_t i = 0; i < it.lid % 4; ++i) e.load(1, 100 * it.lid + i, {i});
    e.store(2, it.lid);
  };
  EXPECT_EQ(schedule(range1(8, 8), program, oneSm(Policy::Warp, 8)),
            "c0 sm0 wg0 w0 s0 i1 load 1-3,5-7\n"
            "c1 sm0 wg0 w0 s1 i1 load 2-3,6-7\n"
            "c2 sm0 wg0 w0 s2 i1 load 3,7\n"
            "c3 sm0 wg0 w0 s3 i2 store 0-7\n");
}

TEST(IntraWarp, NestedLoopWithVaryingInnerTrip) {
  auto program = [](const Item& it, Emit& e) {
    for (uint32_t j = 0; j < 2; ++j) {
      for (uint32_t i = 0; i < (it.lid + j) % 3; ++i) e.load(1, it.lid, {j, i});
      e.store(2, it.lid, {j});
    }
  };
  // j=0 trips 0,1,2,0; j=1 trips 1,2,0,1.
  EXPECT_EQ(schedule(range1(4, 4), program, oneSm(Policy::Warp, 4)),
            "c0 sm0 wg0 w0 s0 i1 load 1-2\n"
            "c1 sm0 wg0 w0 s1 i1 load 2\n"
            "c2 sm0 wg0 w0 s2 i2 store 0-3\n"
            "c3 sm0 wg0 w0 s3 i1 load 0-1,3\n"
            "c4 sm0 wg0 w0 s4 i1 load 1\n"
            "c5 sm0 wg0 w0 s5 i2 store 0-3\n");
}

TEST(IntraWarp, OneLongLaneAndOneSlightlyLongerLaneKeepTheirAddresses) {
  // Warp 0: lane 0 loops 6 times, the others not at all (7 + 1 + 1 + 1 records: the
  // scheduler keeps each lane's records consecutive). Warp 1: lane 5 loops twice (1 + 3 +
  // 1 + 1: interleaved, padded to 3 per lane). Both layouts must hand out the same records.
  auto program = [](const Item& it, Emit& e) {
    const uint32_t trips = it.lid == 0 ? 6 : it.lid == 5 ? 2 : 0;
    for (uint32_t i = 0; i < trips; ++i) e.load(1, 100 * it.lid + i, {i});
    e.store(2, 1000 + it.lid);
  };
  EXPECT_EQ(schedule(range1(8, 8), program, oneSm(Policy::Warp, 4), true),
            "c0 sm0 wg0 w0 s0 i1 load 0 @ 0\n"
            "c1 sm0 wg0 w1 s0 i1 load 5 @ 500\n"
            "c2 sm0 wg0 w0 s1 i1 load 0 @ 1\n"
            "c3 sm0 wg0 w1 s1 i1 load 5 @ 501\n"
            "c4 sm0 wg0 w0 s2 i1 load 0 @ 2\n"
            "c5 sm0 wg0 w1 s2 i2 store 4-7 @ 1004 1005 1006 1007\n"
            "c6 sm0 wg0 w0 s3 i1 load 0 @ 3\n"
            "c7 sm0 wg0 w0 s4 i1 load 0 @ 4\n"
            "c8 sm0 wg0 w0 s5 i1 load 0 @ 5\n"
            "c9 sm0 wg0 w0 s6 i2 store 0-3 @ 1000 1001 1002 1003\n");
}

TEST(IntraWarp, LanesInStepThatEndApartLeaveTheRestInStep) {
  // 3, 3, 2, 3 records per lane: interleaved. The first two steps take every lane side by
  // side; lane 2 ends with the second, so the third takes the others; the second workgroup
  // (one per SM) comes in when the first is done.
  auto program = [](const Item& it, Emit& e) {
    e.load(1, 10 * it.global[0]);
    e.load(2, 10 * it.global[0] + 1);
    if (it.lid != 2) e.store(3, 10 * it.global[0] + 2);
  };
  SchedulerConfig config = oneSm(Policy::Warp, 4);
  config.maxWorkgroupsPerSm = 1;
  MemoryWorkgroupSource source(range1(8, 4), buildTrace(range1(8, 4), program));
  Scheduler scheduler(source, config);
  std::string text;
  WarpStep s;
  while (scheduler.next(s)) {
    text += stepText(s, true);
    EXPECT_TRUE(boundsMatchLanes(s)) << stepText(s);
  }
  EXPECT_EQ(text,
            "c0 sm0 wg0 w0 s0 i1 load 0-3 @ 0 10 20 30\n"
            "c1 sm0 wg0 w0 s1 i2 load 0-3 @ 1 11 21 31\n"
            "c2 sm0 wg0 w0 s2 i3 store 0-1,3 @ 2 12 32\n"
            "c3 sm0 wg1 w0 s0 i1 load 0-3 @ 40 50 60 70\n"
            "c4 sm0 wg1 w0 s1 i2 load 0-3 @ 41 51 61 71\n"
            "c5 sm0 wg1 w0 s2 i3 store 0-1,3 @ 42 52 72\n");
  EXPECT_EQ(scheduler.stats().workgroups, 2u);
}

TEST(IntraWarp, SiblingLoopsWithVaryingTripCount) {
  // Loop A runs lid+1 times, loop B twice. Threads that left loop A wait for the others
  // (their loop-B counters are lower, but loop B comes later in program order: the trace
  // shows it, since a counter went down from instruction 1 to instruction 2).
  auto program = [](const Item& it, Emit& e) {
    for (uint32_t i = 0; i <= it.lid; ++i) e.load(1, it.lid, {i});
    for (uint32_t i = 0; i < 2; ++i) e.load(2, it.lid, {i});
  };
  EXPECT_EQ(schedule(range1(4, 4), program, oneSm(Policy::Warp, 4)),
            "c0 sm0 wg0 w0 s0 i1 load 0-3\n"
            "c1 sm0 wg0 w0 s1 i1 load 1-3\n"
            "c2 sm0 wg0 w0 s2 i1 load 2-3\n"
            "c3 sm0 wg0 w0 s3 i1 load 3\n"
            "c4 sm0 wg0 w0 s4 i2 load 0-3\n"
            "c5 sm0 wg0 w0 s5 i2 load 0-3\n");
}

TEST(IntraWarp, IfElseInsideLoopInterleavesIterations) {
  auto program = [](const Item& it, Emit& e) {
    for (uint32_t i = 0; i < 2; ++i) {
      if (it.lid < 2)
        e.load(1, it.lid, {i});
      else
        e.load(2, it.lid, {i});
    }
  };
  EXPECT_EQ(schedule(range1(4, 4), program, oneSm(Policy::Warp, 4)),
            "c0 sm0 wg0 w0 s0 i1 load 0-1\n"
            "c1 sm0 wg0 w0 s1 i2 load 2-3\n"
            "c2 sm0 wg0 w0 s2 i1 load 0-1\n"
            "c3 sm0 wg0 w0 s3 i2 load 2-3\n");
}

// With the kernel's loop nest (trace files from the trace pass carry it) the loops two
// instructions share are known, not inferred from counter resets.
std::string scheduleWithLoops(const NDRange& range, const Program& program, const SchedulerConfig& config,
                              const LoopNest& nest) {
  MemoryWorkgroupSource source(range, buildTrace(range, program));
  source.setLoopNest(nest);
  Scheduler scheduler(source, config);
  return render(scheduler);
}

constexpr uint32_t kNoLoop = LoopNest::kNone;

TEST(LoopNest, LoopsInTheTwoBranchesOfAnIfElseRunOneBranchToItsEnd) {
  // Lanes 0-1 run loop 0 (instruction 1) three times, lanes 2-3 loop 1 (instruction 2): a
  // GPU runs the first branch's loop to its end, then the second's.
  auto program = [](const Item& it, Emit& e) {
    for (uint32_t i = 0; i < 3; ++i) {
      if (it.lid < 2)
        e.load(1, it.lid, {i});
      else
        e.store(2, it.lid, {i});
    }
  };
  LoopNest nest;
  nest.parent = {kNoLoop, kNoLoop};
  nest.innermost = {kNoLoop, 0, 1};
  EXPECT_EQ(scheduleWithLoops(range1(4, 4), program, oneSm(Policy::Warp, 4), nest),
            "c0 sm0 wg0 w0 s0 i1 load 0-1\n"
            "c1 sm0 wg0 w0 s1 i1 load 0-1\n"
            "c2 sm0 wg0 w0 s2 i1 load 0-1\n"
            "c3 sm0 wg0 w0 s3 i2 store 2-3\n"
            "c4 sm0 wg0 w0 s4 i2 store 2-3\n"
            "c5 sm0 wg0 w0 s5 i2 store 2-3\n");
  // Without it no lane shows the loops apart (none runs both), so their counters interleave them.
  EXPECT_EQ(schedule(range1(4, 4), program, oneSm(Policy::Warp, 4)),
            "c0 sm0 wg0 w0 s0 i1 load 0-1\n"
            "c1 sm0 wg0 w0 s1 i2 store 2-3\n"
            "c2 sm0 wg0 w0 s2 i1 load 0-1\n"
            "c3 sm0 wg0 w0 s3 i2 store 2-3\n"
            "c4 sm0 wg0 w0 s4 i1 load 0-1\n"
            "c5 sm0 wg0 w0 s5 i2 store 2-3\n");
}

TEST(LoopNest, SiblingLoopsWithoutACounterResetStayApart) {
  // Even lanes run loop A (instruction 1) once and loop B (instruction 2) twice; odd lanes run
  // A three times. No lane's counter goes down from A to B, so only the nest tells the loops
  // apart: B waits for every lane to leave A.
  auto program = [](const Item& it, Emit& e) {
    const bool even = it.lid % 2 == 0;
    for (uint32_t i = 0; i < (even ? 1u : 3u); ++i) e.load(1, it.lid, {i});
    for (uint32_t i = 0; i < (even ? 2u : 0u); ++i) e.load(2, it.lid, {i});
  };
  LoopNest nest;
  nest.parent = {kNoLoop, kNoLoop};
  nest.innermost = {kNoLoop, 0, 1};
  EXPECT_EQ(scheduleWithLoops(range1(4, 4), program, oneSm(Policy::Warp, 4), nest),
            "c0 sm0 wg0 w0 s0 i1 load 0-3\n"
            "c1 sm0 wg0 w0 s1 i1 load 1,3\n"
            "c2 sm0 wg0 w0 s2 i1 load 1,3\n"
            "c3 sm0 wg0 w0 s3 i2 load 0,2\n"
            "c4 sm0 wg0 w0 s4 i2 load 0,2\n");
  EXPECT_EQ(schedule(range1(4, 4), program, oneSm(Policy::Warp, 4)),
            "c0 sm0 wg0 w0 s0 i1 load 0-3\n"
            "c1 sm0 wg0 w0 s1 i2 load 0,2\n"
            "c2 sm0 wg0 w0 s2 i1 load 1,3\n"
            "c3 sm0 wg0 w0 s3 i2 load 0,2\n"
            "c4 sm0 wg0 w0 s4 i1 load 1,3\n");
}

TEST(LoopNest, BranchLoopsInsideAnOuterLoopShareItsCounter) {
  // Loop 0 (counter j) holds loops 1 and 2 in the branches of an if/else: each outer
  // iteration runs loop 1 to its end, then loop 2, and the next outer iteration comes after.
  auto program = [](const Item& it, Emit& e) {
    for (uint32_t j = 0; j < 2; ++j)
      for (uint32_t i = 0; i < 2; ++i) {
        if (it.lid < 2)
          e.load(1, 10 * j + i, {j, i});
        else
          e.store(2, 10 * j + i, {j, i});
      }
  };
  LoopNest nest;
  nest.parent = {kNoLoop, 0, 0};
  nest.innermost = {kNoLoop, 1, 2};
  EXPECT_EQ(scheduleWithLoops(range1(4, 4), program, oneSm(Policy::Warp, 4), nest),
            "c0 sm0 wg0 w0 s0 i1 load 0-1\n"
            "c1 sm0 wg0 w0 s1 i1 load 0-1\n"
            "c2 sm0 wg0 w0 s2 i2 store 2-3\n"
            "c3 sm0 wg0 w0 s3 i2 store 2-3\n"
            "c4 sm0 wg0 w0 s4 i1 load 0-1\n"
            "c5 sm0 wg0 w0 s5 i1 load 0-1\n"
            "c6 sm0 wg0 w0 s6 i2 store 2-3\n"
            "c7 sm0 wg0 w0 s7 i2 store 2-3\n");
  // A prepared trace and a read-ahead source keep the nest.
  MemoryWorkgroupSource source(range1(4, 4), buildTrace(range1(4, 4), program));
  source.setLoopNest(nest);
  const std::string expected = scheduleWithLoops(range1(4, 4), program, oneSm(Policy::Warp, 4), nest);
  Scheduler prepared(PreparedTrace::load(source, oneSm(Policy::Warp, 4), UINT64_MAX), oneSm(Policy::Warp, 4));
  EXPECT_EQ(render(prepared), expected);
  source.rewind();
  ReadAheadSource ahead(source);
  Scheduler afterReadAhead(ahead, oneSm(Policy::Warp, 4));
  EXPECT_EQ(render(afterReadAhead), expected);
}

TEST(LoopNest, AnInstructionTheNestDoesNotCoverFallsBackToInference) {
  // Loops in the two branches of an if/else: instruction 1 in one, `other` in the other. The
  // nest covers instructions 0-2 (1 in loop 0, 2 in loop 1): with other = 2 the loops run one
  // after the other; with other = 3, which it does not cover, the pair is inferred as without
  // a nest (interleaved).
  const auto program = [](uint32_t other) {
    return [other](const Item& it, Emit& e) {
      for (uint32_t i = 0; i < 2; ++i) {
        if (it.lid < 2)
          e.load(1, it.lid, {i});
        else
          e.store(other, it.lid, {i});
      }
    };
  };
  LoopNest nest;
  nest.parent = {kNoLoop, kNoLoop};
  nest.innermost = {kNoLoop, 0, 1};
  EXPECT_EQ(scheduleWithLoops(range1(4, 4), program(2), oneSm(Policy::Warp, 4), nest),
            "c0 sm0 wg0 w0 s0 i1 load 0-1\n"
            "c1 sm0 wg0 w0 s1 i1 load 0-1\n"
            "c2 sm0 wg0 w0 s2 i2 store 2-3\n"
            "c3 sm0 wg0 w0 s3 i2 store 2-3\n");
  EXPECT_EQ(scheduleWithLoops(range1(4, 4), program(3), oneSm(Policy::Warp, 4), nest),
            "c0 sm0 wg0 w0 s0 i1 load 0-1\n"
            "c1 sm0 wg0 w0 s1 i3 store 2-3\n"
            "c2 sm0 wg0 w0 s2 i1 load 0-1\n"
            "c3 sm0 wg0 w0 s3 i3 store 2-3\n");
  EXPECT_EQ(scheduleWithLoops(range1(4, 4), program(3), oneSm(Policy::Warp, 4), nest),
            schedule(range1(4, 4), program(3), oneSm(Policy::Warp, 4)));
}

TEST(LoopNest, AMalformedNestIsRefusedByName) {
  auto program = [](const Item& it, Emit& e) { e.load(1, it.lid); };
  MemoryWorkgroupSource source(range1(4, 4), buildTrace(range1(4, 4), program));
  LoopNest cycle;
  cycle.parent = {1, 0};
  cycle.innermost = {kNoLoop, 0};
  source.setLoopNest(cycle);
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { Scheduler s(source, oneSm()); }),
            "scheduler: loop 0 of the loop nest names loop 1 as its parent, which is not numbered before it");
  LoopNest missing;
  missing.parent = {kNoLoop};
  missing.innermost = {kNoLoop, 3};
  source.setLoopNest(missing);
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { Scheduler s(source, oneSm()); }),
            "scheduler: instruction 1 of the loop nest is in loop 3, but the nest has 1 loop");
}

TEST(IntraWarp, BarrierInLoop) {
  // Warp 1 has an extra load before the barrier; warp 0 must wait for it each iteration.
  auto program = [](const Item& it, Emit& e) {
    for (uint32_t j = 0; j < 2; ++j) {
      e.load(1, it.lid, {j});
      if (it.lid >= 32) e.load(2, it.lid, {j});
      e.barrier(3, {j});
      e.store(4, it.lid, {j});
    }
  };
  MemoryWorkgroupSource source(range1(64, 64), buildTrace(range1(64, 64), program));
  Scheduler scheduler(source, oneSm());
  EXPECT_EQ(render(scheduler),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg0 w1 s0 i1 load 32-63\n"
            "c2 sm0 wg0 w0 s1 i3 barrier 0-31\n"
            "c3 sm0 wg0 w1 s1 i2 load 32-63\n"
            "c4 sm0 wg0 w1 s2 i3 barrier 32-63\n"
            "c5 sm0 wg0 w0 s2 i4 store 0-31\n"
            "c6 sm0 wg0 w1 s3 i4 store 32-63\n"
            "c7 sm0 wg0 w0 s3 i1 load 0-31\n"
            "c8 sm0 wg0 w1 s4 i1 load 32-63\n"
            "c9 sm0 wg0 w0 s4 i3 barrier 0-31\n"
            "c10 sm0 wg0 w1 s5 i2 load 32-63\n"
            "c11 sm0 wg0 w1 s6 i3 barrier 32-63\n"
            "c12 sm0 wg0 w0 s5 i4 store 0-31\n"
            "c13 sm0 wg0 w1 s7 i4 store 32-63\n");
  EXPECT_EQ(scheduler.diagnosticCount(), 0u);
  EXPECT_EQ(scheduler.stats().barrierReleases, 2u);
}

// The scheduler said one thing only: `expected`, every field of it.
void expectOnlyDiagnostic(const Scheduler& scheduler, const Diagnostic& expected) {
  ASSERT_EQ(scheduler.diagnostics().size(), 1u);
  const Diagnostic& d = scheduler.diagnostics()[0];
  EXPECT_EQ(d.kind, expected.kind);
  EXPECT_EQ(d.workgroup, expected.workgroup);
  EXPECT_EQ(d.instruction, expected.instruction);
  EXPECT_EQ(d.message, expected.message);
}

TEST(IntraWarp, BarrierReachedByPartOfWorkgroupIsDiagnosedNotHung) {
  auto program = [](const Item& it, Emit& e) {
    e.load(1, it.lid);
    if (it.lid >= 16) {
      e.barrier(2);
      e.load(3, it.lid);
    }
  };
  MemoryWorkgroupSource source(range1(32, 32), buildTrace(range1(32, 32), program));
  Scheduler scheduler(source, oneSm(Policy::Warp, 16));
  EXPECT_EQ(render(scheduler),
            "c0 sm0 wg0 w0 s0 i1 load 0-15\n"
            "c1 sm0 wg0 w1 s0 i1 load 16-31\n"
            "c2 sm0 wg0 w1 s1 i2 barrier 16-31\n"
            "c3 sm0 wg0 w1 s2 i3 load 16-31\n");
  expectOnlyDiagnostic(scheduler, {Diagnostic::Kind::PartialBarrier, 0, 2,
                                   "workgroup 0: barrier (instruction 2, iteration []) reached by 16 of 32 "
                                   "work-items, the other 16 had finished (this would deadlock on a GPU); released"});
}

TEST(IntraWarp, DifferentBarriersAreDiagnosed) {
  auto program = [](const Item& it, Emit& e) {
    e.barrier(it.lid < 16 ? 2 : 3);
    e.load(4, it.lid);
  };
  MemoryWorkgroupSource source(range1(32, 32), buildTrace(range1(32, 32), program));
  Scheduler scheduler(source, oneSm());
  EXPECT_EQ(render(scheduler),
            "c0 sm0 wg0 w0 s0 i2 barrier 0-15\n"
            "c1 sm0 wg0 w0 s1 i3 barrier 16-31\n"
            "c2 sm0 wg0 w0 s2 i4 load 0-31\n");
  ASSERT_EQ(scheduler.diagnostics().size(), 1u);
  EXPECT_EQ(scheduler.diagnostics()[0].kind, Diagnostic::Kind::MismatchedBarrier);
  EXPECT_EQ(scheduler.diagnostics()[0].message,
            "workgroup 0: work-items wait at different barriers (instruction 2, iteration [] and "
            "instruction 3, iteration []); released together");
}

TEST(IntraWarp, DiagnosticsAreCappedButCounted) {
  auto program = [](const Item& it, Emit& e) {
    if (it.lid == 0)
      for (uint32_t j = 0; j < 5; ++j) e.barrier(1, {j});
    else
      e.load(2, it.lid);
  };
  SchedulerConfig config = oneSm();
  config.maxDiagnostics = 2;
  MemoryWorkgroupSource source(range1(4, 4), buildTrace(range1(4, 4), program));
  Scheduler scheduler(source, config);
  render(scheduler);
  EXPECT_EQ(scheduler.diagnostics().size(), 2u);
  EXPECT_EQ(scheduler.diagnosticCount(), 5u);
}

// ---------------------------------------------------------------------------------------
// SM assignment

TEST(SmAssignment, RefillExactlyWhenAWorkgroupEnds) {
  // Five workgroups, two SMs holding one workgroup each; workgroup 1 is three steps long.
  auto program = [](const Item& it, Emit& e) {
    e.load(1, it.lid);
    if (it.group == 1) {
      e.load(2, it.lid);
      e.load(3, it.lid);
    }
  };
  SchedulerConfig config = oneSm(Policy::Warp, 4);
  config.smCount = 2;
  config.maxWorkgroupsPerSm = 1;
  EXPECT_EQ(schedule(range1(20, 4), program, config),
            "c0 sm0 wg0 w0 s0 i1 load 0-3\n"
            "c0 sm1 wg1 w0 s0 i1 load 0-3\n"
            "c1 sm0 wg2 w0 s0 i1 load 0-3\n"
            "c1 sm1 wg1 w0 s1 i2 load 0-3\n"
            "c2 sm0 wg3 w0 s0 i1 load 0-3\n"
            "c2 sm1 wg1 w0 s2 i3 load 0-3\n"
            "c3 sm0 wg4 w0 s0 i1 load 0-3\n");
}

TEST(SmAssignment, RoundRobinDealThenRefill) {
  auto program = [](const Item& it, Emit& e) { e.load(1, it.lid); };
  SchedulerConfig config = oneSm(Policy::Warp, 4);
  config.smCount = 3;
  config.maxWorkgroupsPerSm = 2;
  EXPECT_EQ(schedule(range1(28, 4), program, config),
            "c0 sm0 wg0 w0 s0 i1 load 0-3\n"
            "c0 sm1 wg1 w0 s0 i1 load 0-3\n"
            "c0 sm2 wg2 w0 s0 i1 load 0-3\n"
            "c1 sm0 wg3 w0 s0 i1 load 0-3\n"
            "c1 sm1 wg4 w0 s0 i1 load 0-3\n"
            "c1 sm2 wg5 w0 s0 i1 load 0-3\n"
            "c2 sm0 wg6 w0 s0 i1 load 0-3\n");
}

TEST(SmAssignment, EmptyWorkgroupTakesItsTurnOfTheDeal) {
  // Workgroup 1 has no record: it is dealt to SM 1 and leaves, so workgroup 2 goes to SM 2 and
  // workgroup 3 to SM 0 in the second round, as on hardware, not one SM earlier each.
  auto program = [](const Item& it, Emit& e) {
    if (it.group != 1) e.load(1, it.lid);
  };
  SchedulerConfig config = oneSm(Policy::Warp, 4);
  config.smCount = 3;
  config.maxWorkgroupsPerSm = 2;
  EXPECT_EQ(schedule(range1(16, 4), program, config),
            "c0 sm0 wg0 w0 s0 i1 load 0-3\n"
            "c0 sm2 wg2 w0 s0 i1 load 0-3\n"
            "c1 sm0 wg3 w0 s0 i1 load 0-3\n");
}

// Warps of 4 lanes, 4 SMs holding 2 workgroups each.
SchedulerConfig fourSmsOfTwoWorkgroups() {
  SchedulerConfig config = oneSm(Policy::Warp, 4);
  config.smCount = 4;
  config.maxWorkgroupsPerSm = 2;
  return config;
}

TEST(SmAssignment, BusySmsAreTheOnesHoldingWorkgroupsWithRecords) {
  // 6 workgroups over 4 SMs; workgroups 0-2 have no record. Round one deals workgroups 0-3 to
  // SMs 0-3 (only SM 3 keeps its one), round two 4 and 5 to SMs 0 and 1: SM 2 never gets work.
  auto program = [](const Item& it, Emit& e) {
    if (it.group >= 3) e.load(1, it.lid);
  };
  SchedulerConfig config = fourSmsOfTwoWorkgroups();
  const NDRange range = range1(24, 4);
  MemoryWorkgroupSource source(range, buildTrace(range, program));
  Scheduler scheduler(source, config);
  EXPECT_EQ(scheduler.busySms(), (std::vector<uint32_t>{0, 1, 3}));
  EXPECT_EQ(render(scheduler),
            "c0 sm0 wg4 w0 s0 i1 load 0-3\n"
            "c0 sm1 wg5 w0 s0 i1 load 0-3\n"
            "c0 sm3 wg3 w0 s0 i1 load 0-3\n");
  // Fewer workgroups than SMs: the first ones. None with records: none.
  MemoryWorkgroupSource two(range1(8, 4), buildTrace(range1(8, 4), program));
  MemoryWorkgroupSource twoBusy(range1(8, 4), buildTrace(range1(8, 4), [](const Item& it, Emit& e) {
                                  e.load(1, it.lid);
                                }));
  EXPECT_EQ(Scheduler(twoBusy, config).busySms(), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(Scheduler(two, config).busySms(), (std::vector<uint32_t>{}));
}

TEST(SmAssignment, ReadingSmsAreTheBusyOnesWhoseWorkgroupsLoad) {
  // 5 workgroups over 4 SMs, 2 per SM: the first dealing gives SM s workgroups s and s + 4.
  // Workgroup 1 only stores, 2 makes no access, 3 loads and stores, 0 and 4 load: SM 0 reads,
  // SM 1 only stores, SM 2 is idle, SM 3 reads.
  auto program = [](const Item& it, Emit& e) {
    if (it.group == 0 || it.group == 3 || it.group == 4) e.load(1, it.lid);
    if (it.group == 1 || it.group == 3) e.store(2, it.lid);
  };
  SchedulerConfig config = fourSmsOfTwoWorkgroups();
  const NDRange range = range1(20, 4);
  MemoryWorkgroupSource source(range, buildTrace(range, program));
  Scheduler scheduler(source, config);
  EXPECT_EQ(scheduler.busySms(), (std::vector<uint32_t>{0, 1, 3}));
  EXPECT_EQ(scheduler.readingSms(), (std::vector<uint32_t>{0, 3}));
  // Nothing loads: none reads.
  MemoryWorkgroupSource stores(range, buildTrace(range, [](const Item& it, Emit& e) { e.store(2, it.lid); }));
  Scheduler storing(stores, config);
  EXPECT_EQ(storing.busySms(), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(storing.readingSms(), (std::vector<uint32_t>{}));
}

TEST(SmAssignment, ThreadLimit) {
  auto program = [](const Item& it, Emit& e) {
    e.load(1, it.lid);
    e.load(2, it.lid);
  };
  SchedulerConfig config = oneSm(Policy::Warp, 4);
  config.maxThreadsPerSm = 8;  // two workgroups of 4, although 8 workgroups would be allowed
  EXPECT_EQ(schedule(range1(12, 4), program, config),
            "c0 sm0 wg0 w0 s0 i1 load 0-3\n"
            "c1 sm0 wg1 w0 s0 i1 load 0-3\n"
            "c2 sm0 wg0 w0 s1 i2 load 0-3\n"
            "c3 sm0 wg1 w0 s1 i2 load 0-3\n"
            "c4 sm0 wg2 w0 s0 i1 load 0-3\n"
            "c5 sm0 wg2 w0 s1 i2 load 0-3\n");
}

TEST(SmAssignment, EmptyWorkItemsAndEmptyWorkgroups) {
  auto program = [](const Item& it, Emit& e) {
    if (it.group != 1 && it.lid % 2 == 0) e.load(1, it.lid);
  };
  EXPECT_EQ(schedule(range1(12, 4), program, oneSm(Policy::Warp, 4)),
            "c0 sm0 wg0 w0 s0 i1 load 0,2\n"
            "c1 sm0 wg2 w0 s0 i1 load 0,2\n");
  MemoryWorkgroupSource empty(range1(8, 4), std::vector<WorkItemTrace>{});
  Scheduler scheduler(empty, oneSm());
  EXPECT_EQ(render(scheduler), "");
}

// ---------------------------------------------------------------------------------------
// Inter-warp orders and timing

auto twoLoads = [](const Item& it, Emit& e) {
  e.load(1, it.lid);
  e.load(2, it.lid);
};

TEST(InterWarp, GreedyThenOldest) {
  SchedulerConfig config = oneSm();
  config.interWarp = InterWarpOrder::GreedyThenOldest;
  EXPECT_EQ(schedule(range1(128, 64), twoLoads, config),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg0 w0 s1 i2 load 0-31\n"
            "c2 sm0 wg0 w1 s0 i1 load 32-63\n"
            "c3 sm0 wg0 w1 s1 i2 load 32-63\n"
            "c4 sm0 wg1 w0 s0 i1 load 0-31\n"
            "c5 sm0 wg1 w0 s1 i2 load 0-31\n"
            "c6 sm0 wg1 w1 s0 i1 load 32-63\n"
            "c7 sm0 wg1 w1 s1 i2 load 32-63\n");
}

TEST(InterWarp, TwoLevel) {
  SchedulerConfig config = oneSm();
  config.interWarp = InterWarpOrder::TwoLevel;
  config.twoLevelActiveWarps = 2;
  EXPECT_EQ(schedule(range1(128, 64), twoLoads, config),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg0 w1 s0 i1 load 32-63\n"
            "c2 sm0 wg0 w0 s1 i2 load 0-31\n"
            "c3 sm0 wg0 w1 s1 i2 load 32-63\n"
            "c4 sm0 wg1 w0 s0 i1 load 0-31\n"
            "c5 sm0 wg1 w1 s0 i1 load 32-63\n"
            "c6 sm0 wg1 w0 s1 i2 load 0-31\n"
            "c7 sm0 wg1 w1 s1 i2 load 32-63\n");
}

// Runs the schedule, delaying warp `key` until `until` right after its first step.
std::string scheduleWithDelay(const NDRange& range, const Program& program,
                              const SchedulerConfig& config, uint64_t key, uint64_t until) {
  MemoryWorkgroupSource source(range, buildTrace(range, program));
  Scheduler scheduler(source, config);
  std::string out;
  WarpStep s;
  bool delayed = false;
  while (scheduler.next(s)) {
    out += stepText(s);
    if (!delayed && s.warpKey == key) {
      scheduler.delayWarp(key, until);
      delayed = true;
    }
  }
  return out;
}

TEST(Timing, DelayWarpChangesOrder) {
  EXPECT_EQ(scheduleWithDelay(range1(64, 64), twoLoads, oneSm(), 0, 10),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg0 w1 s0 i1 load 32-63\n"
            "c2 sm0 wg0 w1 s1 i2 load 32-63\n"
            "c10 sm0 wg0 w0 s1 i2 load 0-31\n");
}

TEST(Timing, DelayedSmFallsBehindOtherSms) {
  auto threeLoads = [](const Item& it, Emit& e) {
    for (uint32_t i = 1; i <= 3; ++i) e.load(i, it.lid);
  };
  SchedulerConfig config = oneSm();
  config.smCount = 2;
  EXPECT_EQ(scheduleWithDelay(range1(64, 32), threeLoads, config, 0, 2),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c0 sm1 wg1 w0 s0 i1 load 0-31\n"
            "c1 sm1 wg1 w0 s1 i2 load 0-31\n"
            "c2 sm0 wg0 w0 s1 i2 load 0-31\n"
            "c2 sm1 wg1 w0 s2 i3 load 0-31\n"
            "c3 sm0 wg0 w0 s2 i3 load 0-31\n");
}

TEST(Timing, TwoLevelDemotesStalledWarps) {
  SchedulerConfig config = oneSm();
  config.interWarp = InterWarpOrder::TwoLevel;
  config.twoLevelActiveWarps = 2;
  EXPECT_EQ(scheduleWithDelay(range1(128, 64), twoLoads, config, 0, 100),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg0 w1 s0 i1 load 32-63\n"
            "c2 sm0 wg1 w0 s0 i1 load 0-31\n"
            "c3 sm0 wg0 w1 s1 i2 load 32-63\n"
            "c4 sm0 wg1 w0 s1 i2 load 0-31\n"
            "c5 sm0 wg1 w1 s0 i1 load 32-63\n"
            "c6 sm0 wg1 w1 s1 i2 load 32-63\n"
            "c100 sm0 wg0 w0 s1 i2 load 0-31\n");
  // The same delay under loose round-robin.
  EXPECT_EQ(scheduleWithDelay(range1(128, 64), twoLoads, oneSm(), 0, 100),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg1 w0 s0 i1 load 0-31\n"
            "c2 sm0 wg0 w1 s0 i1 load 32-63\n"
            "c3 sm0 wg1 w1 s0 i1 load 32-63\n"
            "c4 sm0 wg1 w0 s1 i2 load 0-31\n"
            "c5 sm0 wg0 w1 s1 i2 load 32-63\n"
            "c6 sm0 wg1 w1 s1 i2 load 32-63\n"
            "c100 sm0 wg0 w0 s1 i2 load 0-31\n");
}

TEST(Timing, NextBeforeIssuesNothingAtOrAfterTheLimit) {
  // Two warps on one SM, two loads each; without delays: c0 w0, c1 w1, c2 w0, c3 w1.
  MemoryWorkgroupSource source(range1(64, 64), buildTrace(range1(64, 64), twoLoads));
  Scheduler scheduler(source, oneSm());
  WarpStep s;
  EXPECT_EQ(scheduler.nextBefore(s, 0, 0), NextStep::NotBefore);  // (0, sm0) is not before (0, sm0)
  ASSERT_EQ(scheduler.nextBefore(s, 0, 1), NextStep::Issued);
  EXPECT_EQ(stepText(s), "c0 sm0 wg0 w0 s0 i1 load 0-31\n");
  scheduler.delayWarp(0, 5);
  EXPECT_EQ(scheduler.nextBefore(s, 1, 0), NextStep::NotBefore);
  ASSERT_EQ(scheduler.nextBefore(s, 2, 0), NextStep::Issued);
  EXPECT_EQ(stepText(s), "c1 sm0 wg0 w1 s0 i1 load 32-63\n");
  // w1 would issue at 2: held back, and a delay that comes meanwhile applies.
  EXPECT_EQ(scheduler.nextBefore(s, 2, 0), NextStep::NotBefore);
  scheduler.delayWarp(1, 8);
  // No warp is ready before 5: the SM waits, and (5, sm0) is not before (4, sm0).
  EXPECT_EQ(scheduler.nextBefore(s, 4, 0), NextStep::NotBefore);
  ASSERT_EQ(scheduler.nextBefore(s, 100, 0), NextStep::Issued);
  EXPECT_EQ(stepText(s), "c5 sm0 wg0 w0 s1 i2 load 0-31\n");
  ASSERT_TRUE(scheduler.next(s));
  EXPECT_EQ(stepText(s), "c8 sm0 wg0 w1 s1 i2 load 32-63\n");
  EXPECT_EQ(scheduler.nextBefore(s, 1000, 0), NextStep::Finished);
}

TEST(Timing, DelayWarpsDelaysEachWarpGiven) {
  // Two warps on one SM, two loads each: c0 w0, c1 w1, then both wait until 10.
  MemoryWorkgroupSource source(range1(64, 64), buildTrace(range1(64, 64), twoLoads));
  Scheduler scheduler(source, oneSm());
  StepSource& steps = scheduler;
  WarpStep s;
  ASSERT_TRUE(steps.next(s));
  ASSERT_TRUE(steps.next(s));
  const uint64_t keys[] = {0, 1};
  steps.delayWarps(keys, 0, 1000);  // no warps: nothing changes
  steps.delayWarps(keys, 2, 10);
  ASSERT_TRUE(steps.next(s));
  EXPECT_EQ(stepText(s), "c10 sm0 wg0 w0 s1 i2 load 0-31\n");
  ASSERT_TRUE(steps.next(s));
  EXPECT_EQ(stepText(s), "c11 sm0 wg0 w1 s1 i2 load 32-63\n");
}

TEST(Timing, NextBeforeOrdersSmsWithinACycle) {
  // One workgroup per SM: at cycle 0 sm0 issues first, then sm1, which is not before (0, sm1).
  auto oneLoad = [](const Item& it, Emit& e) { e.load(1, it.lid); };
  SchedulerConfig config = oneSm();
  config.smCount = 2;
  MemoryWorkgroupSource source(range1(64, 32), buildTrace(range1(64, 32), oneLoad));
  Scheduler scheduler(source, config);
  WarpStep s;
  ASSERT_EQ(scheduler.nextBefore(s, 0, 1), NextStep::Issued);
  EXPECT_EQ(stepText(s), "c0 sm0 wg0 w0 s0 i1 load 0-31\n");
  EXPECT_EQ(scheduler.nextBefore(s, 0, 1), NextStep::NotBefore);
  ASSERT_EQ(scheduler.nextBefore(s, 0, 2), NextStep::Issued);
  EXPECT_EQ(stepText(s), "c0 sm1 wg1 w0 s0 i1 load 0-31\n");
  EXPECT_EQ(scheduler.nextBefore(s, 0, 0), NextStep::Finished);
}

TEST(Timing, DelayWarpsTakesManyWarpsOfManyWorkgroups) {
  // 20 workgroups of two warps on one SM; all issue their first load (c0..c39), then all 40 are
  // delayed to 100 in one call, in reverse order and with repeats (45 keys: the scheduler takes
  // them in batches of 16); they issue their second load from 100 on, in the same order.
  MemoryWorkgroupSource source(range1(1280, 64), buildTrace(range1(1280, 64), twoLoads));
  SchedulerConfig config = oneSm();
  config.maxWorkgroupsPerSm = 20;
  Scheduler scheduler(source, config);
  StepSource& steps = scheduler;
  WarpStep s;
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(steps.next(s));
  EXPECT_EQ(stepText(s), "c39 sm0 wg19 w1 s0 i1 load 32-63\n");
  std::vector<uint64_t> keys;
  for (uint64_t k = 40; k-- > 0;) keys.push_back(k);
  keys.insert(keys.end(), {0, 7, 39, 16, 17});
  steps.delayWarps(keys.data(), keys.size(), 100);
  ASSERT_TRUE(steps.next(s));
  EXPECT_EQ(stepText(s), "c100 sm0 wg0 w0 s1 i2 load 0-31\n");
  for (int i = 1; i < 40; ++i) ASSERT_TRUE(steps.next(s));
  EXPECT_EQ(stepText(s), "c139 sm0 wg19 w1 s1 i2 load 32-63\n");
  EXPECT_FALSE(steps.next(s));
  const uint64_t finished[] = {3, 40};  // a finished workgroup's warp is ignored; key 40 never issued
  EXPECT_THROW(steps.delayWarps(finished, 2, 200), std::invalid_argument);
}

TEST(Timing, DelayWarpKeys) {
  MemoryWorkgroupSource source(range1(64, 32), buildTrace(range1(64, 32), twoLoads));
  SchedulerConfig config = oneSm();
  config.maxWorkgroupsPerSm = 1;
  Scheduler scheduler(source, config);
  EXPECT_THROW(scheduler.delayWarp(0, 5), std::invalid_argument);  // nothing issued yet
  WarpStep s;
  ASSERT_TRUE(scheduler.next(s));
  EXPECT_THROW(scheduler.delayWarp(1, 5), std::invalid_argument);  // workgroup 1 not loaded
  ASSERT_TRUE(scheduler.next(s));                                  // wg0 finishes
  scheduler.delayWarp(0, 1000);                                    // finished: ignored
  ASSERT_TRUE(scheduler.next(s));
  EXPECT_EQ(stepText(s), "c2 sm0 wg1 w0 s0 i1 load 0-31\n");
  scheduler.delayWarp(1, 1);  // earlier than already allowed: no effect
  ASSERT_TRUE(scheduler.next(s));
  EXPECT_EQ(stepText(s), "c3 sm0 wg1 w0 s1 i2 load 0-31\n");
  EXPECT_FALSE(scheduler.next(s));
  EXPECT_FALSE(scheduler.next(s));
}

// ---------------------------------------------------------------------------------------
// Naive policies

auto tinyNaive = [](const Item& it, Emit& e) {
  const uint32_t counts[3] = {2, 1, 3};
  for (uint32_t i = 0; i < counts[it.lid]; ++i) e.load(i + 1, 10 * (it.lid + 1) + i);
};

TEST(NaivePolicies, Sequential) {
  EXPECT_EQ(schedule(range1(3, 3), tinyNaive, oneSm(Policy::Sequential)),
            "c0 sm0 wg0 w0 s0 i1 load 0\n"
            "c1 sm0 wg0 w0 s1 i2 load 0\n"
            "c2 sm0 wg0 w0 s2 i1 load 1\n"
            "c3 sm0 wg0 w0 s3 i1 load 2\n"
            "c4 sm0 wg0 w0 s4 i2 load 2\n"
            "c5 sm0 wg0 w0 s5 i3 load 2\n");
}

TEST(NaivePolicies, RoundRobin) {
  EXPECT_EQ(schedule(range1(3, 3), tinyNaive, oneSm(Policy::RoundRobin)),
            "c0 sm0 wg0 w0 s0 i1 load 0\n"
            "c1 sm0 wg0 w0 s1 i1 load 1\n"
            "c2 sm0 wg0 w0 s2 i1 load 2\n"
            "c3 sm0 wg0 w0 s3 i2 load 0\n"
            "c4 sm0 wg0 w0 s4 i2 load 2\n"
            "c5 sm0 wg0 w0 s5 i3 load 2\n");
}

TEST(NaivePolicies, RandomIsSeededAndKeepsThreadOrder) {
  auto program = [](const Item& it, Emit& e) {
    for (uint32_t i = 0; i < 4; ++i) e.load(i + 1, 100 * it.lid + i);
  };
  SchedulerConfig config = oneSm(Policy::Random);
  config.seed = 7;
  const std::string a = schedule(range1(8, 8), program, config, true);
  EXPECT_EQ(a, schedule(range1(8, 8), program, config, true));
  config.seed = 8;
  EXPECT_NE(a, schedule(range1(8, 8), program, config, true));

  // Every thread's records come out in its own order, one lane per step.
  MemoryWorkgroupSource source(range1(8, 8), buildTrace(range1(8, 8), program));
  Scheduler scheduler(source, config);
  std::vector<uint32_t> nextOf(8, 0);
  WarpStep s;
  uint64_t steps = 0;
  while (scheduler.next(s)) {
    ASSERT_EQ(s.lanes.size(), 1u);
    const uint32_t t = s.lanes[0].localThread;
    EXPECT_EQ(s.lanes[0].address, 100u * t + nextOf[t]);
    ++nextOf[t];
    ++steps;
  }
  EXPECT_EQ(steps, 32u);
  EXPECT_EQ(scheduler.info().laneWidth, 1u);
}

TEST(NaivePolicies, BarrierHoldsThreadsOfTheWorkgroup) {
  auto program = [](const Item& it, Emit& e) {
    e.load(1, it.lid);
    e.barrier(2);
    e.load(3, it.lid);
  };
  EXPECT_EQ(schedule(range1(2, 2), program, oneSm(Policy::Sequential)),
            "c0 sm0 wg0 w0 s0 i1 load 0\n"
            "c1 sm0 wg0 w0 s1 i2 barrier 0\n"
            "c2 sm0 wg0 w0 s2 i1 load 1\n"
            "c3 sm0 wg0 w0 s3 i2 barrier 1\n"
            "c4 sm0 wg0 w0 s4 i3 load 1\n"
            "c5 sm0 wg0 w0 s5 i3 load 0\n");
  EXPECT_EQ(schedule(range1(2, 2), program, oneSm(Policy::RoundRobin)),
            "c0 sm0 wg0 w0 s0 i1 load 0\n"
            "c1 sm0 wg0 w0 s1 i1 load 1\n"
            "c2 sm0 wg0 w0 s2 i2 barrier 0\n"
            "c3 sm0 wg0 w0 s3 i2 barrier 1\n"
            "c4 sm0 wg0 w0 s4 i3 load 0\n"
            "c5 sm0 wg0 w0 s5 i3 load 1\n");
}

// ---------------------------------------------------------------------------------------
// Determinism

// Loops, divergence and a barrier in a loop over a 2D launch.
auto busyProgram = [](const Item& it, Emit& e) {
  const uint64_t g = it.global[1] * 64 + it.global[0];
  for (uint32_t j = 0; j < 3; ++j) {
    for (uint32_t i = 0; i < (it.lid * 7 + j) % 5; ++i)
      e.load(1, 0x1000 + 4 * (g + 64 * i), {j, i});
    if (it.lid % 3 == 0) e.store(2, 0x9000 + 4 * g, {j});
    e.barrier(3, {j});
    e.access(AccessKind::Atomic, 4, 0x20000 + 4 * (g % 8), {j});
  }
};

TEST(Determinism, SameTraceTwiceAndWorkItemOrderDoNotMatter) {
  const NDRange range = range2(24, 12, 12, 6);  // 4 workgroups of 72: warps 32 + 32 + 8
  SchedulerConfig config;
  config.smCount = 2;
  config.maxWorkgroupsPerSm = 1;
  const std::string first = schedule(range, busyProgram, config, true);
  EXPECT_EQ(first, schedule(range, busyProgram, config, true));
  EXPECT_GT(first.size(), 1000u);

  // The same records given as work-items in a shuffled order.
  const auto fileOrder = buildTrace(range, busyProgram);
  std::vector<WorkItemTrace> items;
  uint64_t index = 0;
  buildTrace(range, [&](const Item& it, Emit&) {
    items.push_back(WorkItemTrace{it.global, fileOrder[index++]});
  });
  std::mt19937 rng(1234);
  std::shuffle(items.begin(), items.end(), rng);
  MemoryWorkgroupSource shuffled(range, std::move(items));
  Scheduler scheduler(shuffled, config);
  EXPECT_EQ(render(scheduler, true), first);
}

// ---------------------------------------------------------------------------------------
// Prepared traces: loaded once, scheduled by several schedulers

TEST(PreparedTrace, EachSchedulerGivesTheSourcesStepsAndDiagnostics) {
  // Workgroup 1 is empty and skipped; workgroup 2 leaves half its threads out of a barrier.
  auto program = [](const Item& it, Emit& e) {
    if (it.group == 1) return;
    e.load(1, it.group * 100 + it.lid);
    if (it.group == 2 && it.lid < 2) return;
    e.barrier(2);
    e.store(3, it.lid);
  };
  const NDRange range = range1(12, 4);
  SchedulerConfig config = oneSm(Policy::Warp, 4);
  config.maxWorkgroupsPerSm = 2;
  const std::string expected =
      "c0 sm0 wg0 w0 s0 i1 load 0-3 @ 0 1 2 3\n"
      "c1 sm0 wg2 w0 s0 i1 load 0-3 @ 200 201 202 203\n"
      "c2 sm0 wg0 w0 s1 i2 barrier 0-3 @ 0 0 0 0\n"
      "c3 sm0 wg2 w0 s1 i2 barrier 2-3 @ 0 0\n"
      "c4 sm0 wg0 w0 s2 i3 store 0-3 @ 0 1 2 3\n"
      "c5 sm0 wg2 w0 s2 i3 store 2-3 @ 2 3\n";
  EXPECT_EQ(schedule(range, program, config, true), expected);

  MemoryWorkgroupSource source(range, buildTrace(range, program));
  std::shared_ptr<const PreparedTrace> trace = PreparedTrace::load(source, config, UINT64_MAX);
  ASSERT_TRUE(trace);
  EXPECT_EQ(trace->range().workgroups(), 3u);
  for (int run = 0; run < 2; ++run) {
    Scheduler scheduler(trace, config);
    EXPECT_EQ(render(scheduler, true), expected);
    ASSERT_EQ(scheduler.diagnostics().size(), 1u);
    EXPECT_EQ(scheduler.diagnostics()[0].message,
              "workgroup 2: barrier (instruction 2, iteration []) reached by 2 of 4 work-items, "
              "the other 2 had finished (this would deadlock on a GPU); released");
    EXPECT_EQ(scheduler.stats().workgroups, 3u);
  }
  // Another inter-warp order and other residency limits lay records out alike.
  config.interWarp = InterWarpOrder::GreedyThenOldest;
  config.maxWorkgroupsPerSm = 1;
  Scheduler greedy(trace, config);
  EXPECT_EQ(render(greedy, true), schedule(range, program, config, true));
}

TEST(PreparedTrace, RefusesAPolicyOrWarpSizeWithAnotherLayout) {
  MemoryWorkgroupSource source(range1(8, 4), buildTrace(range1(8, 4), twoLoads));
  std::shared_ptr<const PreparedTrace> trace = PreparedTrace::load(source, oneSm(Policy::Warp, 4), UINT64_MAX);
  ASSERT_TRUE(trace);
  try {
    Scheduler scheduler(trace, oneSm(Policy::Sequential, 4));
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "scheduler: the prepared trace was laid out for the warp policy with warps of 4, not for "
                 "sequential with warps of 4");
  }
  EXPECT_THROW(Scheduler(trace, oneSm(Policy::Warp, 8)), std::invalid_argument);
  EXPECT_THROW(Scheduler(nullptr, oneSm()), std::invalid_argument);
}

TEST(PreparedTrace, GivesUpOverItsBudget) {
  // 2 workgroups of 4 threads with 2 records each: 128 bytes of records alone.
  MemoryWorkgroupSource source(range1(8, 4), buildTrace(range1(8, 4), twoLoads));
  EXPECT_EQ(PreparedTrace::load(source, oneSm(Policy::Warp, 4), 128), nullptr);
  source.rewind();
  std::shared_ptr<const PreparedTrace> trace = PreparedTrace::load(source, oneSm(Policy::Warp, 4), UINT64_MAX);
  ASSERT_TRUE(trace);
  EXPECT_GT(trace->bytes(), 128u);
  source.rewind();
  EXPECT_NE(PreparedTrace::load(source, oneSm(Policy::Warp, 4), trace->bytes()), nullptr);
}

// A source that gives a workgroup with the wrong number of work-items, then one out of order.
class BadSource : public WorkgroupSource {
 public:
  explicit BadSource(int mode) : mode_(mode) {}
  const NDRange& range() const override { return range_; }
  bool nextWorkgroup(WorkgroupTrace& out) override {
    out.clear();
    out.id = mode_ == 0 ? 0 : 1;
    out.offsets.assign(mode_ == 0 ? 3 : 5, 0);
    return given_++ == 0;
  }

 private:
  NDRange range_ = range1(8, 4);
  int mode_;
  int given_ = 0;
};

TEST(PreparedTrace, MalformedInputFailsAsWhenScheduled) {
  EXPECT_EQ(messageOf<std::runtime_error>([] {
              BadSource s(0);
              PreparedTrace::load(s, oneSm(), UINT64_MAX);
            }),
            "scheduler: workgroup 0 has 2 work-items, the NDRange says 4");
  EXPECT_EQ(messageOf<std::runtime_error>([] {
              BadSource s(1);
              PreparedTrace::load(s, oneSm(), UINT64_MAX);
            }),
            "scheduler: workgroup source gave workgroup 1, expected 0");
  EXPECT_EQ(messageOf<std::runtime_error>([] {
              MemoryWorkgroupSource source(range1(12, 4), buildTrace(range1(12, 4), twoLoads));
              WorkgroupTrace skipped;
              source.nextWorkgroup(skipped);
              source.nextWorkgroup(skipped);
              source.nextWorkgroup(skipped);
              PreparedTrace::load(source, oneSm(), UINT64_MAX);
            }),
            "scheduler: workgroup source ended after 0 of 3 workgroups");
  for (int mode = 0; mode < 2; ++mode) {  // the same messages from a scheduler over the source
    EXPECT_EQ(messageOf<std::runtime_error>([mode] {
                BadSource s(mode);
                Scheduler scheduler(s, oneSm());
                WarpStep step;
                scheduler.next(step);
              }),
              mode == 0 ? "scheduler: workgroup 0 has 2 work-items, the NDRange says 4"
                        : "scheduler: workgroup source gave workgroup 1, expected 0");
  }
}

// A loop counter that stopped at 2^32 - 2 (the trace pass saturates it) is said once per
// workgroup, at its first such record in thread order; 2^32 - 3 is an ordinary count.
TEST(Diagnostics, StoppedLoopCounterIsSaid) {
  auto program = [](const Item& it, Emit& e) {
    e.load(1, 4 * it.lid, {7, kMaxIterationCounter - 1});
    if (it.group == 1 && it.lid >= 3) e.load(2, 4 * it.lid, {7, kMaxIterationCounter});
    if (it.group == 1 && it.lid == 5) e.load(3, 4 * it.lid, {kMaxIterationCounter, 0});
  };
  MemoryWorkgroupSource source(range1(64, 32), buildTrace(range1(64, 32), program));
  Scheduler scheduler(source, oneSm());
  EXPECT_EQ(render(scheduler),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg1 w0 s0 i1 load 0-31\n"
            "c2 sm0 wg1 w0 s1 i2 load 3-31\n"
            "c3 sm0 wg1 w0 s2 i3 load 5\n");
  expectOnlyDiagnostic(scheduler, {Diagnostic::Kind::SaturatedLoopCounter, 1, 2,
                                   "workgroup 1, work-item 3: a loop counter stopped at 4294967294 (instruction 2, "
                                   "loop level 1): later iterations of that loop look alike, so the order of its "
                                   "lanes past that point is approximate"});
}

// An instruction nested deeper than the records' counters (kRecordDepthTruncated) is said
// once, however many workgroups run it.
TEST(Diagnostics, TooDeepALoopNestIsSaidOnce) {
  auto program = [](const Item& it, Emit& e) {
    e.load(1, 4 * it.lid, {0, 0, 0, 0, 0, 0, 0});
    e.load(2, 4 * it.lid, {0, 0, 0, 0, 0, 0, 0});
    e.out.back().flags = kRecordDepthTruncated;
  };
  MemoryWorkgroupSource source(range1(64, 32), buildTrace(range1(64, 32), program));
  Scheduler scheduler(source, oneSm());
  EXPECT_EQ(render(scheduler),
            "c0 sm0 wg0 w0 s0 i1 load 0-31\n"
            "c1 sm0 wg1 w0 s0 i1 load 0-31\n"
            "c2 sm0 wg0 w0 s1 i2 load 0-31\n"
            "c3 sm0 wg1 w0 s1 i2 load 0-31\n");
  expectOnlyDiagnostic(scheduler, {Diagnostic::Kind::DeepLoopNest, 0, 2,
                                   "instruction 2 is nested in more than 7 loops: records keep the 7 outermost "
                                   "counters, so the iterations of the deeper loops look alike and their lanes "
                                   "may issue together"});
}

}  // namespace
}  // namespace cltrace::sched::test
