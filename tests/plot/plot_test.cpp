// cltrace_plot: element offsets, binning, points of a scheduled trace and their colours, hit/miss
// from the cache simulator, rasters and the raster file, all on tiny hand-made traces.
#include <gtest/gtest.h>

#include "cltrace/cachesim/coalescer.h"

#include <fstream>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/plot/element_map.h"
#include "cltrace/plot/plot.h"
#include "cltrace/plot/points.h"
#include "cltrace/plot/raster.h"
#include "cltrace/plot/raster_file.h"
#include "cltrace/scheduler/scheduler.h"
#include "cltrace/scheduler/source.h"
#include "cltrace/trace_file.h"
#include "test_util.h"  // tests/scheduler: range1, buildTrace, Emit

namespace cltrace::plot {
namespace {

using sched::test::Emit;
using sched::test::Item;

constexpr uint64_t kA = 0x1000, kB = 0x2000;  // two buffers of 8 floats

std::vector<TraceBuffer> twoBuffers() {
  TraceBuffer a, b;
  a.argIndex = 0;
  a.name = "a";
  a.size = 32;
  a.virtualBase = kA;
  b.argIndex = 1;
  b.name = "b";
  b.size = 32;
  b.virtualBase = kB;
  return {b, a};  // out of order on purpose: the map sorts by base
}

// 8 work-items in workgroups of 4: thread g loads a[g] (instruction 0) and stores b[7 - g] (1).
NDRange tinyRange() { return sched::test::range1(8, 4); }
std::vector<std::vector<Record>> tinyTrace() {
  return sched::test::buildTrace(tinyRange(), [](const Item& it, Emit& e) {
    const uint64_t g = it.global[0];
    e.load(0, kA + 4 * g);
    e.store(1, kB + 4 * (7 - g));
  });
}

// One SM holding one workgroup at a time, warps of 2: the issue order is
// wg0: w0 load, w1 load, w0 store, w1 store; then wg1, where the loose round-robin rotation goes
// on after warp 1 (warps ordered by (warp index, workgroup)): w1 load, w0 load, w1 store, w0 store.
cachesim::Config tinyGpu() {
  cachesim::Config c = cachesim::Config::fromPreset("gtx480-16k");
  c.smCount = 1;
  c.warpSize = 2;
  c.maxWorkgroupsPerSm = 1;
  return c;
}

CollectOptions tinyOptions(ColorBy color, sched::Policy policy = sched::Policy::Warp) {
  CollectOptions o;
  o.color = color;
  o.cache = tinyGpu();
  o.scheduler = schedulerConfigFor(o.cache, policy, 1);
  return o;
}

std::vector<std::tuple<uint64_t, uint64_t, double>> collect(const std::vector<std::vector<Record>>& trace,
                                                            const CollectOptions& o,
                                                            CollectStats* stats = nullptr) {
  sched::MemoryWorkgroupSource source(tinyRange(), trace);
  ElementMap map(twoBuffers());
  std::vector<std::tuple<uint64_t, uint64_t, double>> points;
  CollectStats st = collectPoints(source, map, o, [&](const Point& p) {
    points.emplace_back(p.x, p.element, p.value);
  });
  if (stats) *stats = st;
  std::sort(points.begin(), points.end());
  return points;
}

// (x, element, global thread id) of the tiny trace under the warp policy.
const std::vector<std::tuple<uint64_t, uint64_t, double>> kTinyThreadPoints = {
    {0, 0, 0},  {1, 1, 1},  {2, 2, 2},  {3, 3, 3},  {4, 15, 0}, {5, 14, 1}, {6, 13, 2}, {7, 12, 3},
    {8, 6, 6},  {9, 7, 7},  {10, 4, 4}, {11, 5, 5}, {12, 9, 6}, {13, 8, 7}, {14, 11, 4}, {15, 10, 5}};

PlotData tinyPlot(ColorBy color, uint32_t binsX, uint32_t binsY,
                  std::vector<sched::Policy> policies = {sched::Policy::Warp}) {
  PlotRequest r;
  r.color = color;
  r.policies = std::move(policies);
  r.binsX = binsX;
  r.binsY = binsY;
  r.cache = tinyGpu();
  r.cache.timing = false;
  const auto trace = tinyTrace();
  return rasterize([trace] { return std::make_unique<sched::MemoryWorkgroupSource>(tinyRange(), trace); },
                   twoBuffers(), r);
}

std::string tempPath(const std::string& name) {
  return ::testing::TempDir() + "plot_test_" + std::to_string(::getpid()) + "_" + name;
}

// ---------------------------------------------------------------------------------------------

TEST(ElementMap, StacksBuffersByBaseWithoutGaps) {
  ElementMap map(twoBuffers());
  ASSERT_EQ(map.buffers().size(), 2u);
  EXPECT_EQ(map.buffers()[0].name, "a");
  EXPECT_EQ(map.buffers()[0].start, 0u);
  EXPECT_EQ(map.buffers()[1].name, "b");
  EXPECT_EQ(map.buffers()[1].start, 8u);
  EXPECT_EQ(map.extent(), 16u);
  EXPECT_EQ(map.elementOf(kA), 0u);
  EXPECT_EQ(map.elementOf(kA + 3), 0u);
  EXPECT_EQ(map.elementOf(kA + 4), 1u);
  EXPECT_EQ(map.elementOf(kA + 31), 7u);
  EXPECT_EQ(map.elementOf(kB), 8u);
  EXPECT_EQ(map.elementOf(kB + 28), 15u);
  EXPECT_FALSE(map.elementOf(kA - 1));
  EXPECT_FALSE(map.elementOf(kA + 32));  // the gap between the buffers
  EXPECT_FALSE(map.elementOf(kB + 32));
  EXPECT_FALSE(map.elementOf(0));
}

TEST(ElementMap, ElementSizeRoundsUpAndDuplicatesMerge) {
  std::vector<TraceBuffer> b = twoBuffers();
  b[0].size = 30;  // b: 30 bytes = 4 elements of 8 bytes (the last one partial)
  TraceBuffer alias = b[1];  // a bound twice
  alias.name = "a2";
  alias.argIndex = 2;
  b.push_back(alias);
  TraceBuffer empty;
  empty.name = "empty";
  empty.virtualBase = 0x500;
  b.push_back(empty);
  ElementMap map(b, 8);
  ASSERT_EQ(map.buffers().size(), 2u);
  EXPECT_EQ(map.buffers()[0].name, "a/a2");
  EXPECT_EQ(map.buffers()[0].elements, 4u);
  EXPECT_EQ(map.buffers()[1].elements, 4u);
  EXPECT_EQ(map.extent(), 8u);
  EXPECT_EQ(map.elementOf(kB + 29), 7u);
  EXPECT_FALSE(map.elementOf(kB + 30));
  EXPECT_THROW(ElementMap(b, 0), std::invalid_argument);
}

TEST(ElementMap, ASubBufferInsideItsParentIsPartOfIt) {
  // whole [0x1000, 0x1040) holds part [0x1010, 0x1020) (listed first); b follows.
  std::vector<TraceBuffer> b = twoBuffers();  // {b, a}
  TraceBuffer part = b[1];
  part.name = "part";
  part.virtualBase = kA + 16;
  part.size = 16;
  b[1].name = "whole";
  b[1].size = 64;
  b.insert(b.begin(), part);
  ElementMap map(b);
  ASSERT_EQ(map.buffers().size(), 2u);
  EXPECT_EQ(map.buffers()[0].name, "whole (holding part)");
  EXPECT_EQ(map.buffers()[0].elements, 16u);
  EXPECT_EQ(map.elementOf(kA + 16), 4u);  // part's first element is whole's fifth
  EXPECT_EQ(map.elementOf(kA + 60), 15u);  // past part's end, still whole's
  EXPECT_EQ(map.buffers()[1].start, 16u);
}

TEST(Raster, BinsAreExact) {
  Raster r(3, 5, 16, 16);
  // bin x = floor(x * 3 / 16): 0..5 -> 0, 6..10 -> 1, 11..15 -> 2
  EXPECT_EQ(r.binX(5), 0u);
  EXPECT_EQ(r.binX(6), 1u);
  EXPECT_EQ(r.binX(10), 1u);
  EXPECT_EQ(r.binX(11), 2u);
  EXPECT_EQ(r.binX(15), 2u);
  EXPECT_EQ(r.binX(99), 2u);  // clamped
  // bin y = floor(y * 5 / 16): 0..3, 4..6, 7..9, 10..12, 13..15
  EXPECT_EQ(r.binY(3), 0u);
  EXPECT_EQ(r.binY(4), 1u);
  EXPECT_EQ(r.binY(9), 2u);
  EXPECT_EQ(r.binY(10), 3u);
  EXPECT_EQ(r.binY(13), 4u);
  r.add(0, 0, 1.0);
  r.add(5, 3, 2.0);
  r.add(6, 4, 7.0);
  EXPECT_EQ(r.count(0, 0), 2u);
  EXPECT_EQ(r.sum(0, 0), 3.0);
  EXPECT_EQ(r.mean(0, 0), 1.5);
  EXPECT_EQ(r.count(1, 1), 1u);
  EXPECT_EQ(r.mean(1, 1), 7.0);
  EXPECT_EQ(r.mean(2, 4), 0.0);
  EXPECT_EQ(r.total(), 3u);
  // Huge extents do not overflow.
  Raster big(1000, 1, ~uint64_t(0), 1);
  EXPECT_EQ(big.binX(~uint64_t(0) - 1), 999u);
  EXPECT_EQ(big.binX(~uint64_t(0) / 2), 499u);
  EXPECT_THROW(Raster(0, 1, 1, 1), std::invalid_argument);
  Raster other(3, 5, 16, 16);
  other.add(0, 0, 3.0);
  r.merge(other);
  EXPECT_EQ(r.count(0, 0), 3u);
  EXPECT_EQ(r.sum(0, 0), 6.0);
  EXPECT_THROW(r.merge(Raster(3, 5, 16, 17)), std::invalid_argument);
}

TEST(Points, ThreadColouringFollowsTheWarpSchedule) {
  CollectStats st;
  EXPECT_EQ(collect(tinyTrace(), tinyOptions(ColorBy::Thread), &st), kTinyThreadPoints);
  EXPECT_EQ(st.points, 16u);
  EXPECT_EQ(st.outside, 0u);
  EXPECT_EQ(st.steps, 8u);
}

TEST(Points, WarpAndWorkgroupColouring) {
  auto warp = collect(tinyTrace(), tinyOptions(ColorBy::Warp));
  auto wg = collect(tinyTrace(), tinyOptions(ColorBy::Workgroup));
  ASSERT_EQ(warp.size(), 16u);
  ASSERT_EQ(wg.size(), 16u);
  for (size_t i = 0; i < 16; ++i) {
    const double thread = std::get<2>(kTinyThreadPoints[i]);
    EXPECT_EQ(std::get<2>(warp[i]), double(int(thread) / 2)) << i;  // 2 warps of 2 per workgroup
    EXPECT_EQ(std::get<2>(wg[i]), double(int(thread) / 4)) << i;
    EXPECT_EQ(std::get<1>(warp[i]), std::get<1>(kTinyThreadPoints[i]));
  }
}

TEST(Points, SequentialPolicyRunsThreadsOneAfterAnother) {
  auto pts = collect(tinyTrace(), tinyOptions(ColorBy::Thread, sched::Policy::Sequential));
  ASSERT_EQ(pts.size(), 16u);
  for (uint64_t t = 0; t < 8; ++t) {
    EXPECT_EQ(pts[2 * t], std::make_tuple(2 * t, t, double(t)));
    EXPECT_EQ(pts[2 * t + 1], std::make_tuple(2 * t + 1, 15 - t, double(t)));
  }
}

TEST(Points, GlobalThreadIdIn2D) {
  // 4 x 2 global, 2 x 2 local: workgroup 1 holds global x 2..3. Local thread 3 of workgroup 1 is
  // (x 3, y 1): global id 3 + 4 * 1 = 7.
  NDRange range = sched::test::range2(4, 2, 2, 2);
  auto trace = sched::test::buildTrace(range, [](const Item& it, Emit& e) {
    e.load(0, kA + 4 * (it.global[0] + 4 * it.global[1]));
  });
  sched::MemoryWorkgroupSource source(range, trace);
  ElementMap map(twoBuffers());
  std::map<uint64_t, double> valueOfElement;
  CollectOptions o = tinyOptions(ColorBy::Thread);
  collectPoints(source, map, o, [&](const Point& p) { valueOfElement[p.element] = p.value; });
  ASSERT_EQ(valueOfElement.size(), 8u);
  for (const auto& [element, value] : valueOfElement) EXPECT_EQ(double(element), value);
  EXPECT_EQ(maxColorValue(ColorBy::Thread, range, 2), 7.0);
  EXPECT_EQ(maxColorValue(ColorBy::Warp, range, 2), 3.0);
  EXPECT_EQ(maxColorValue(ColorBy::Workgroup, range, 2), 1.0);
  EXPECT_EQ(maxColorValue(ColorBy::Hit, range, 2), 1.0);
}

TEST(Points, OutsideAccessesTakeAnIndexButNoPoint) {
  auto trace = tinyTrace();
  trace[1][0].address = 0x9000;  // thread 1's load
  CollectStats st;
  auto pts = collect(trace, tinyOptions(ColorBy::Thread), &st);
  EXPECT_EQ(st.points, 16u);
  EXPECT_EQ(st.outside, 1u);
  ASSERT_EQ(pts.size(), 15u);
  EXPECT_EQ(pts[1], std::make_tuple(uint64_t(2), uint64_t(2), 2.0));  // x 1 is missing
}

TEST(Points, HitColouringMarksLanesOfMissingRequests) {
  // Without timing: wg0 w0 load (line of a: cold miss), w1 load (hit), stores (write-through,
  // no allocate: every store misses); wg1 loads hit.
  CollectOptions o = tinyOptions(ColorBy::Hit);
  o.cache.timing = false;
  CollectStats st;
  auto pts = collect(tinyTrace(), o, &st);
  ASSERT_EQ(pts.size(), 16u);
  const std::vector<int> miss = {1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1};
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(std::get<0>(pts[i]), i);
    EXPECT_EQ(std::get<1>(pts[i]), std::get<1>(kTinyThreadPoints[i]));
    EXPECT_EQ(std::get<2>(pts[i]), double(miss[i])) << "x " << i;
  }
  EXPECT_EQ(st.misses, 10u);
  EXPECT_EQ(st.unresolved, 0u);
}

TEST(Points, HitColouringWithTimingCountsLatencyMissesAsHits) {
  // With timing the second load of the line finds it in flight (a latency miss): not a miss.
  CollectOptions o = tinyOptions(ColorBy::Hit);
  CollectStats st;
  auto pts = collect(tinyTrace(), o, &st);
  ASSERT_EQ(pts.size(), 16u);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(std::get<0>(pts[i]), i);
  EXPECT_EQ(st.misses, 10u);
  EXPECT_EQ(st.unresolved, 0u);
  EXPECT_FALSE(isPlotMiss(cachesim::Outcome::LatencyMiss));
  EXPECT_FALSE(isPlotMiss(cachesim::Outcome::Bypass));
  EXPECT_FALSE(isPlotMiss(cachesim::Outcome::WriteHit));
  EXPECT_TRUE(isPlotMiss(cachesim::Outcome::ConflictMiss));
  EXPECT_TRUE(isPlotMiss(cachesim::Outcome::WriteMiss));
}

TEST(Points, HitColouringOfStepsTouchingManyLines) {
  // Instruction 0: both threads of a warp load 4 bytes of their warp's hot line (set 10 + warp,
  // linear indexing): one cold miss. Instruction 1: the even thread loads 66 lines of a region
  // of its warp's own (cold misses), the odd one its hot line again (a hit: 16 ways hold every
  // line of the run). 67 lines in one step, past the scan the tracker uses for small steps.
  constexpr uint64_t kBase = 0x100000, kLine = 128;
  auto trace = sched::test::buildTrace(tinyRange(), [&](const Item& it, Emit& e) {
    const uint64_t g = it.global[0], warp = g / 2;
    const uint64_t hot = kBase + (4096 + 10 + warp) * kLine;
    e.load(0, hot);
    if (g % 2 == 0)
      e.access(AccessKind::Load, 1, kBase + warp * 128 * kLine, {}, 66 * kLine);
    else
      e.load(1, hot);
  });
  std::vector<TraceBuffer> buffers(1);
  buffers[0].name = "big";
  buffers[0].size = 1 << 20;
  buffers[0].virtualBase = kBase;
  sched::MemoryWorkgroupSource source(tinyRange(), trace);
  ElementMap map(buffers);
  CollectOptions o = tinyOptions(ColorBy::Hit);
  o.cache.timing = false;
  o.cache.setIndex = cachesim::SetIndexFunction::Linear;
  o.cache.size = 65536;
  o.cache.associativity = 16;
  std::vector<Point> pts;
  CollectStats st = collectPoints(source, map, o, [&](const Point& p) { pts.push_back(p); });
  ASSERT_EQ(pts.size(), 16u);
  std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  // Issue order (tinyGpu): wg0 w0 load 0, w1 load 0, w0 load 1, w1 load 1; wg1 w1 first.
  // Lanes of instruction 1 at x 4..7 and 12..15: the even thread's (big) first.
  const std::vector<double> miss = {1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0};
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(pts[i].value, miss[i]) << "x " << i;
  EXPECT_EQ(st.misses, 12u);
  EXPECT_EQ(st.unresolved, 0u);
}

TEST(Points, HitColouringResolvesStepsThatStallOnMshrs) {
  // Each warp loads two lines in one step (lanes 128 bytes apart) with one MSHR per warp: the
  // second request stalls and is retried after the first fill. Every lane still gets its outcome.
  auto trace = sched::test::buildTrace(tinyRange(), [](const Item& it, Emit& e) {
    e.load(0, 0x4000 + 128 * it.global[0]);
    e.load(1, 0x4000 + 128 * it.global[0] + 4);
  });
  std::vector<TraceBuffer> buffers(1);
  buffers[0].name = "big";
  buffers[0].size = 1024;
  buffers[0].virtualBase = 0x4000;
  sched::MemoryWorkgroupSource source(tinyRange(), trace);
  ElementMap map(buffers);
  CollectOptions o = tinyOptions(ColorBy::Hit);
  o.cache.mshrsPerWarp = 1;
  std::vector<Point> pts;
  CollectStats st = collectPoints(source, map, o, [&](const Point& p) { pts.push_back(p); });
  EXPECT_EQ(st.points, 16u);
  EXPECT_EQ(pts.size(), 16u);
  EXPECT_EQ(st.unresolved, 0u);
  EXPECT_EQ(st.misses, 8u);  // first loads: 8 distinct lines, cold; second loads: same lines
  for (const Point& p : pts) EXPECT_EQ(p.value, (p.element % 32 == 0) ? 1.0 : 0.0) << p.x;

  // The same run really stalls.
  sched::MemoryWorkgroupSource again(tinyRange(), trace);
  sched::Scheduler scheduler(again, o.scheduler);
  cachesim::Config cache = o.cache;
  cache.smCount = 1;
  cache.warpSize = 2;
  cachesim::Simulator simulator(cache);
  EXPECT_GT(simulator.run(scheduler, o.simulatorSeed).misses.mshr, 0u);
}

TEST(Rasterize, ExactBinsAndMeans) {
  PlotData d = tinyPlot(ColorBy::Thread, 3, 5);
  EXPECT_EQ(d.xExtent, 16u);
  EXPECT_EQ(d.yExtent, 16u);
  EXPECT_EQ(d.valueMax, 7.0);
  ASSERT_EQ(d.panels.size(), 1u);
  const Raster& r = d.panels[0].raster;
  ASSERT_EQ(r.binsX(), 3u);
  ASSERT_EQ(r.binsY(), 5u);
  // (bin x, bin y) -> (count, sum of thread ids); from kTinyThreadPoints.
  const std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, double>> expected = {
      {{0, 0}, {4, 6.0}}, {{0, 4}, {2, 1.0}}, {{1, 4}, {1, 2.0}}, {{1, 3}, {1, 3.0}},
      {{1, 1}, {2, 10.0}}, {{1, 2}, {1, 7.0}}, {{2, 1}, {1, 5.0}}, {{2, 2}, {2, 13.0}},
      {{2, 3}, {2, 9.0}}};
  for (uint32_t by = 0; by < 5; ++by)
    for (uint32_t bx = 0; bx < 3; ++bx) {
      auto it = expected.find({bx, by});
      const uint64_t count = it == expected.end() ? 0 : it->second.first;
      const double sum = it == expected.end() ? 0.0 : it->second.second;
      EXPECT_EQ(r.count(bx, by), count) << bx << "," << by;
      EXPECT_EQ(r.sum(bx, by), sum) << bx << "," << by;
      EXPECT_EQ(r.mean(bx, by), count ? sum / double(count) : 0.0);
    }
  EXPECT_EQ(r.mean(2, 2), 6.5);
}

TEST(Rasterize, HitMissFractionPerBin) {
  PlotData d = tinyPlot(ColorBy::Hit, 4, 4);
  const Raster& r = d.panels[0].raster;
  // x 0..3: elements 0..3, misses at x 0, 1 -> bin (0, 0): 4 points, 2 misses.
  EXPECT_EQ(r.count(0, 0), 4u);
  EXPECT_EQ(r.mean(0, 0), 0.5);
  EXPECT_EQ(r.count(1, 3), 4u);  // stores of wg0: elements 12..15, all miss
  EXPECT_EQ(r.mean(1, 3), 1.0);
  EXPECT_EQ(r.count(2, 1), 4u);  // loads of wg1: hits
  EXPECT_EQ(r.mean(2, 1), 0.0);
  EXPECT_EQ(r.count(3, 2), 4u);
  EXPECT_EQ(r.mean(3, 2), 1.0);
  EXPECT_EQ(r.total(), 16u);
  EXPECT_EQ(d.panels[0].stats.misses, 10u);
}

TEST(Rasterize, BinsNeverExceedTheExtentsAndEveryPolicyHasAPanel) {
  PlotData d = tinyPlot(ColorBy::Workgroup, 400, 300,
                        {sched::Policy::Warp, sched::Policy::Sequential, sched::Policy::RoundRobin,
                         sched::Policy::Random});
  ASSERT_EQ(d.panels.size(), 4u);
  for (const Panel& p : d.panels) {
    EXPECT_EQ(p.raster.binsX(), 16u);
    EXPECT_EQ(p.raster.binsY(), 16u);
    EXPECT_EQ(p.raster.total(), 16u);
    // One point per (x, element) bin; each element is accessed once.
    for (uint32_t by = 0; by < 16; ++by) {
      uint64_t row = 0;
      for (uint32_t bx = 0; bx < 16; ++bx) row += p.raster.count(bx, by);
      EXPECT_EQ(row, 1u);
    }
  }
  EXPECT_EQ(d.panels[1].policy, sched::Policy::Sequential);
}

TEST(Rasterize, TraceFileGivesTheSameRasterAsMemory) {
  const std::string path = tempPath("tiny.cltrace");
  {
    TraceHeader h;
    h.kernelName = "tiny";
    h.range = tinyRange();
    h.buffers = twoBuffers();
    h.workItemCount = 8;
    h.recordCount = 16;
    TraceWriter w(path, h);
    for (const auto& item : tinyTrace()) w.writeWorkItem(item);
    w.close();
  }
  PlotRequest r;
  r.policies = {sched::Policy::Warp};
  r.binsX = 3;
  r.binsY = 5;
  r.cache = tinyGpu();
  PlotData fromFile = rasterizeTraceFile(path, r);
  PlotData fromMemory = tinyPlot(ColorBy::Thread, 3, 5);
  EXPECT_EQ(fromFile.kernelName, "tiny");
  EXPECT_EQ(fromFile.panels[0].raster.counts(), fromMemory.panels[0].raster.counts());
  EXPECT_EQ(fromFile.panels[0].raster.sums(), fromMemory.panels[0].raster.sums());
  std::remove(path.c_str());
  EXPECT_THROW(rasterizeTraceFile(path, r), TraceFileError);
}

// A lane over the simulator's access limit (a corrupt trace) is refused at once, as the
// simulator refuses it, before its line list is made (4 GiB lanes took minutes).
TEST(Collect, ALaneOverTheAccessLimitIsRefusedAtOnce) {
  auto trace = tinyTrace();
  trace[5][0].size = 0xFFFFFFFFu;  // work-item 5's load (workgroup 1, local thread 1)
  trace[5][0].address = kA;
  try {
    collect(trace, tinyOptions(ColorBy::Hit));
    ADD_FAILURE() << "no error";
  } catch (const cachesim::LaneSizeError& e) {
    EXPECT_STREQ(e.what(), "instruction 0 accesses 4294967295 bytes at once (local thread 1 of workgroup 1); the "
                           "simulator models accesses of at most 1048576 bytes");
  }
}

TEST(Rasterize, RejectsBadRequests) {
  EXPECT_THROW(tinyPlot(ColorBy::Thread, 0, 5), std::invalid_argument);
  EXPECT_THROW(tinyPlot(ColorBy::Thread, 3, 5, {}), std::invalid_argument);
  cachesim::Config c = tinyGpu();
  c.scheduling = "warp:sideways";
  EXPECT_THROW(schedulerConfigFor(c, sched::Policy::Warp, 1), std::invalid_argument);
  c.scheduling = "warp:greedy-then-oldest";
  EXPECT_EQ(schedulerConfigFor(c, sched::Policy::Random, 7).interWarp,
            sched::InterWarpOrder::GreedyThenOldest);
  EXPECT_EQ(schedulerConfigFor(c, sched::Policy::Random, 7).seed, 7u);
  EXPECT_EQ(parseColorBy("hit"), ColorBy::Hit);
  EXPECT_EQ(parseColorBy("HIT"), ColorBy::Hit);  // any case, as --policies
  EXPECT_EQ(parseColorBy("Warp"), ColorBy::Warp);
  EXPECT_THROW(parseColorBy("hits"), std::invalid_argument);
  EXPECT_THROW(parseColorBy("rainbow"), std::invalid_argument);
}

TEST(Rasterize, SuggestedBinsFollowThePanelLayout) {
  uint32_t bx = 0, by = 0;
  suggestBins(1600, 600, 4, bx, by);
  EXPECT_EQ(bx, 313u);  // 0.83 * 1600 / 4.24
  EXPECT_EQ(by, 456u);  // 0.76 * 600
  suggestBins(1, 1, 0, bx, by);
  EXPECT_EQ(bx, 1u);
  EXPECT_EQ(by, 1u);
}

TEST(RasterFile, RoundTrip) {
  PlotData d = tinyPlot(ColorBy::Thread, 3, 5, {sched::Policy::Warp, sched::Policy::Sequential});
  const std::string path = tempPath("tiny.raster");
  writeRasterFile(path, d, RenderOptions{640, 360, "tiny"});
  RasterFileContents c = readRasterFile(path);
  EXPECT_EQ(c.binsX, 3u);
  EXPECT_EQ(c.binsY, 5u);
  ASSERT_EQ(c.panels.size(), 2u);
  for (size_t p = 0; p < 2; ++p) {
    const Raster& r = d.panels[p].raster;
    for (uint32_t by = 0; by < 5; ++by)
      for (uint32_t bx = 0; bx < 3; ++bx) {
        EXPECT_EQ(c.panels[p].counts[by * 3 + bx], r.count(bx, by));
        EXPECT_EQ(c.panels[p].values[by * 3 + bx], float(r.mean(bx, by)));
      }
  }
  EXPECT_EQ(c.panels[0].counts[0], 4u);
  EXPECT_EQ(c.panels[0].values[0], 1.5f);
  for (const char* key : {"\"color\":\"thread\"", "\"policy\":\"sequential\"", "\"width_px\":640",
                          "\"x_extent\":16", "\"name\":\"b\"", "\"title\":\"tiny\""})
    EXPECT_NE(c.metadata.find(key), std::string::npos) << key << " in " << c.metadata;
  // Names from a trace that are not UTF-8 are written with U+FFFD in their place (the JSON
  // library refused them, and plot failed with its message).
  PlotData odd = d;
  odd.buffers[0].name = "m\xC3";
  const std::string oddPath = tempPath("odd.raster");
  writeRasterFile(oddPath, odd, RenderOptions{640, 360, "tiny"});
  const std::string oddMetadata = readRasterFile(oddPath).metadata;
  EXPECT_NE(oddMetadata.find("\"name\":\"m\xEF\xBF\xBD\""), std::string::npos) << oddMetadata;
  std::remove(oddPath.c_str());
  // Corruption is reported.
  {
    std::FILE* f = std::fopen(path.c_str(), "ab");
    std::fputc('x', f);
    std::fclose(f);
  }
  EXPECT_THROW(readRasterFile(path), std::runtime_error);
  std::remove(path.c_str());
}

TEST(RasterFile, DamagedMetadataIsNamedNotFollowed) {
  const std::string path = tempPath("bad.raster");
  // One 1x1 panel: 8 bytes of body.
  auto write = [&](const std::string& meta) {
    std::ofstream out(path, std::ios::binary);
    out << kRasterMagicLine << "\n" << meta << "\n" << std::string(8, '\0');
  };
  auto errorOf = [&](const std::string& meta) -> std::string {
    write(meta);
    try {
      readRasterFile(path);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  };
  write(R"({"bins_x":1,"bins_y":1,"panels":[{"offset":0}]})");
  EXPECT_EQ(readRasterFile(path).panels.size(), 1u);
  // An offset that would wrap around the address space when added to the body's start.
  EXPECT_EQ(errorOf(R"({"bins_x":1,"bins_y":1,"panels":[{"offset":18446744073709551615}]})"),
            path + ": truncated body");
  EXPECT_EQ(errorOf(R"({"bins_x":4294967295,"bins_y":4294967295,"panels":[{"offset":0}]})"),
            path + ": truncated body");
  EXPECT_NE(errorOf(R"({"bins_x":1,"bins_y":1})").find(path + ": bad metadata: "), std::string::npos);
  EXPECT_NE(errorOf(R"({"bins_x":1,"bins_y":1,"panels":[{}]})").find(path + ": bad metadata: "), std::string::npos);
  EXPECT_EQ(errorOf(std::string(100000, '[') + std::string(100000, ']')), path + ": bad metadata: nested too deep");
  EXPECT_EQ(errorOf(R"({"bins_x":1,"bins_x":1,"bins_y":1,"panels":[{"offset":0}]})"),
            path + ": bad metadata: key 'bins_x' given twice");
  EXPECT_EQ(errorOf(R"({"bins_x":1,"bins_y":1,"panels":[{"offset":0},{"offset":0}]})"),
            path + ": unexpected bytes after the body");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace cltrace::plot
