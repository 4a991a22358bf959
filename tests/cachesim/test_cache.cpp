// Set index functions, coalescing, replacement, write policies and reuse distances on
// hand-made inputs with exact expected values.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <algorithm>
#include <cstring>
#include <list>
#include <map>
#include <unordered_map>
#include <vector>

#include "cltrace/cachesim/coalescer.h"
#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/latency.h"
#include "cltrace/cachesim/reuse_distance.h"
#include "cltrace/cachesim/set_index.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/cachesim/sm_model.h"
#include "fake_step_source.h"

namespace cltrace::cachesim {
namespace {

using testing::FakeStepSource;

Config cfg(const std::string& preset, const std::vector<std::string>& overrides) {
  return loadConfig(preset, overrides);
}

// ---------------------------------------------------------------- set index

struct SetCase {
  uint64_t address;
  uint32_t linear32, xor32, linear64, xor64;
};

TEST(SetIndex, GivenAddressesUnderBothFunctions) {
  // Fermi hash: s0=a7^a13 s1=a8^a14 s2=a9^a15 s3=a10^a17 s4=a11^a19, s5=a12 (64 sets).
  const SetCase cases[] = {
      {0x0, 0, 0, 0, 0},          {0x80, 1, 1, 1, 1},           {0x2000, 0, 1, 0, 1},
      {0x2080, 1, 0, 1, 0},       {0x4000, 0, 2, 0, 2},         {0x8000, 0, 4, 0, 4},
      {0x20000, 0, 8, 0, 8},      {0x80000, 0, 16, 0, 16},      {0x10000, 0, 0, 0, 0},
      {0x40000, 0, 0, 0, 0},      {0x1000, 0, 0, 32, 32},       {0xF80, 31, 31, 31, 31},
      {0xAEF80, 31, 0, 31, 0},    {0x3000, 0, 1, 32, 33},       {0x12345680, 13, 15, 45, 47},
      {0xDEADBEEF, 29, 8, 61, 40},
  };
  Config lin32 = cfg("gtx480-16k", {"set_index=linear"});
  Config xor32 = cfg("gtx480-16k", {});
  Config lin64 = cfg("gtx480-48k", {"set_index=linear"});
  Config xor64 = cfg("gtx480-48k", {});
  ASSERT_EQ(lin32.sets(), 32u);
  ASSERT_EQ(lin64.sets(), 64u);
  for (const SetCase& c : cases) {
    SCOPED_TRACE(c.address);
    EXPECT_EQ(setOfAddress(lin32, c.address), c.linear32);
    EXPECT_EQ(setOfAddress(xor32, c.address), c.xor32);
    EXPECT_EQ(setOfAddress(lin64, c.address), c.linear64);
    EXPECT_EQ(setOfAddress(xor64, c.address), c.xor64);
  }
}

TEST(SetIndex, BytesOfOneLineShareASet) {
  Config xor32 = cfg("gtx480-16k", {});
  for (uint64_t base : {0x0ull, 0x2080ull, 0xAEF80ull})
    for (uint64_t off = 0; off < 128; ++off) EXPECT_EQ(setOfAddress(xor32, base + off), setOfAddress(xor32, base));
}

TEST(SetIndex, TheIndexersTableAgreesWithTheBitwiseHash) {
  // SetIndexer looks the hash up in a table; fermiXorSet gathers the bits one by one.
  for (uint32_t sets : {32u, 64u}) {
    SetIndexer indexer(SetIndexFunction::FermiXor, sets);
    for (uint64_t line = 0; line < (1u << 14); ++line) ASSERT_EQ(indexer(line), fermiXorSet(line, sets)) << line;
    for (uint64_t high = 1; high != 0; high <<= 1) {
      const uint64_t line = high | 0x1A5A;
      ASSERT_EQ(indexer(line), fermiXorSet(line, sets)) << line;
    }
  }
}

// One warp, one lane, loads of `lines` (byte addresses) in order.
Stats runSingleLaneLoads(const Config& config, const std::vector<uint64_t>& addresses) {
  std::vector<sched::WarpStep> steps;
  for (uint64_t a : addresses) steps.push_back(testing::load(0, {a}));
  FakeStepSource src;
  src.addWarp(0, 1, steps);
  Simulator sim(config);
  return sim.run(src, 1);
}

TEST(SetIndex, StridedLoopThrashesOneSetOnlyWithLinearIndexing) {
  // 8 lines 4 KiB apart, read twice. Linear: all 8 in set 0 of a 4-way cache -> every access
  // misses. XOR: pairs of lines share a set (bits 13-15 of the address vary) -> second pass hits.
  std::vector<uint64_t> addresses;
  for (int pass = 0; pass < 2; ++pass)
    for (uint64_t k = 0; k < 8; ++k) addresses.push_back(k * 4096);

  Stats linear = runSingleLaneLoads(cfg("gtx480-16k", {"set_index=linear", "timing=off"}), addresses);
  EXPECT_EQ(linear.reads, 16u);
  EXPECT_EQ(linear.readMisses, 16u);
  EXPECT_EQ(linear.misses.cold, 8u);
  EXPECT_EQ(linear.misses.conflict, 8u);  // a 128-line fully associative cache would hit
  EXPECT_EQ(linear.misses.capacity, 0u);

  Stats hashed = runSingleLaneLoads(cfg("gtx480-16k", {"timing=off"}), addresses);
  EXPECT_EQ(hashed.reads, 16u);
  EXPECT_EQ(hashed.readMisses, 8u);
  EXPECT_EQ(hashed.misses.cold, 8u);
  EXPECT_EQ(hashed.readHits, 8u);
}

// ---------------------------------------------------------------- coalescing

Stats runOneStep(const sched::WarpStep& step, const std::vector<std::string>& overrides = {"timing=off"}) {
  FakeStepSource src;
  src.addWarp(0, 1, {step});
  Simulator sim(cfg("gtx480-16k", overrides));
  return sim.run(src, 1);
}

TEST(Coalescing, ConsecutiveFloatsAreOneRequest) {
  Stats s = runOneStep(testing::load(0, testing::strided(0x1000, 4, 32)));
  EXPECT_EQ(s.requestsBeforeCoalescing, 32u);
  EXPECT_EQ(s.requests, 1u);
  EXPECT_EQ(s.reads, 1u);
}

TEST(Coalescing, MisalignedConsecutiveFloatsAreTwoRequests) {
  Stats s = runOneStep(testing::load(0, testing::strided(0x1040, 4, 32)));
  EXPECT_EQ(s.requests, 2u);
}

TEST(Coalescing, LineStrideIsOneRequestPerLane) {
  Stats s = runOneStep(testing::load(0, testing::strided(0x1000, 128, 32)));
  EXPECT_EQ(s.requestsBeforeCoalescing, 32u);
  EXPECT_EQ(s.requests, 32u);
  EXPECT_EQ(s.readMisses, 32u);
}

TEST(Coalescing, Float4IsFourRequests) {
  Stats s = runOneStep(testing::load(0, testing::strided(0x1000, 16, 32), 16));
  EXPECT_EQ(s.requestsBeforeCoalescing, 32u);
  EXPECT_EQ(s.requests, 4u);
}

// Fermi requests a warp's 8-byte words per half-warp and 16-byte words per quarter-warp
// (wide_access_split, on in every preset): parts that touch one line each request it.
std::vector<uint64_t> wideRequests(const sched::WarpStep& st) {
  std::vector<uint64_t> lines;
  coalesceWideAccess(st, 7, 32, lines);
  return lines;
}

// Lane l reads element l / n of an array at 0x1000 (line 0x20): 8-byte words (n = 2) in one
// 128-byte line, which each half-warp requests; 16-byte words (n = 4), each quarter-warp.
std::vector<uint64_t> upsampled(uint32_t size, uint32_t n) {
  std::vector<uint64_t> a;
  for (uint64_t l = 0; l < 32; ++l) a.push_back(0x1000 + l / n * size);
  return a;
}

TEST(Coalescing, WideAccessesAreRequestedPerHalfOrQuarterWarp) {
  EXPECT_EQ(wideAccessPartLanes(testing::load(0, upsampled(8, 2), 8), 32), 16u);
  EXPECT_EQ(wideAccessPartLanes(testing::load(0, upsampled(16, 4), 16), 32), 8u);
  EXPECT_EQ(wideAccessPartLanes(testing::load(0, upsampled(4, 1), 4), 32), 32u);
  EXPECT_EQ(wideRequests(testing::load(0, upsampled(8, 2), 8)), (std::vector<uint64_t>{0x20, 0x20}));
  EXPECT_EQ(wideRequests(testing::load(0, upsampled(16, 4), 16)), (std::vector<uint64_t>{0x20, 0x20, 0x20, 0x20}));
  // Consecutive float4s: each quarter-warp's 128 bytes are one line of their own.
  EXPECT_EQ(wideRequests(testing::load(0, testing::strided(0x1000, 16, 32), 16)),
            (std::vector<uint64_t>{0x20, 0x21, 0x22, 0x23}));
  // 16-byte lane accesses from 4 bytes past a line start (a memcpy lane, say; the passes record
  // a vload4 through a float pointer as four 4-byte loads): each quarter covers 128 bytes across
  // two lines, and neighbouring quarters share one: 8 requests (the whole warp's 5 lines).
  EXPECT_EQ(wideRequests(testing::load(0, testing::strided(0x1004, 16, 32), 16)),
            (std::vector<uint64_t>{0x20, 0x21, 0x21, 0x22, 0x22, 0x23, 0x23, 0x24}));
  // Parts go by local id within the warp: lanes 16..31 of a warp are one half, lanes 32..47
  // (the next warp's first half) another; every lane the same double: one request each.
  sched::WarpStep st = testing::load(0, std::vector<uint64_t>(16, 0x1000), 8);
  for (uint32_t l = 0; l < 16; ++l) st.lanes[l].localThread = 16 + l;
  EXPECT_EQ(wideRequests(st), (std::vector<uint64_t>{0x20}));
  for (uint32_t l = 0; l < 16; ++l) st.lanes[l].localThread = 8 + 2 * l;  // 8..38: halves 0, 1 and 0 of the next warp
  EXPECT_EQ(wideRequests(st), (std::vector<uint64_t>{0x20, 0x20, 0x20}));
}

TEST(Coalescing, LanesOverSixteenBytesGoAsSixteenByteWords) {
  // 32 consecutive double4s (32 bytes a lane) from 0x1000: the GPU issues two 16-byte loads,
  // each per quarter-warp; a quarter's 8 lanes span 256 bytes, two lines, and the second word
  // requests the first's lines again: 16 requests of 8 lines.
  EXPECT_EQ(wideRequests(testing::load(0, testing::strided(0x1000, 32, 32), 32)),
            (std::vector<uint64_t>{0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,  //
                                   0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27}));
  // 24-byte lanes from 0x1000: a 16-byte word per quarter (quarter q spans 0x1000 + 192q to
  // 0x1000 + 192q + 183), then the last 8 bytes per half (0x1010 .. 0x117f, 0x1190 .. 0x12ff).
  EXPECT_EQ(wideRequests(testing::load(0, testing::strided(0x1000, 24, 32), 24)),
            (std::vector<uint64_t>{0x20, 0x21, 0x21, 0x22, 0x23, 0x24, 0x24, 0x25,  //
                                   0x20, 0x21, 0x22, 0x23, 0x24, 0x25}));
  // Lanes of several sizes: word 1 takes only the lanes longer than 16 bytes. Lanes 0..7 (one
  // quarter) read 32 bytes each at 0x1000 + 32l, lanes 8..15 4 bytes each at 0x2000 + 4l.
  sched::WarpStep mixed = testing::load(0, testing::strided(0x1000, 32, 16), 32);
  for (uint32_t l = 8; l < 16; ++l) mixed.lanes[l] = sched::LaneAccess{l, 4, 0x2000 + 4 * (l - 8)};
  EXPECT_EQ(wideRequests(mixed), (std::vector<uint64_t>{0x20, 0x21, 0x40, 0x20, 0x21}));
  // In the simulator, timing off: 16 reads, the second word's 8 hits.
  Stats s = runOneStep(testing::load(0, testing::strided(0x1000, 32, 32), 32));
  EXPECT_EQ(s.requestsBeforeCoalescing, 32u);
  EXPECT_EQ(s.reads, 16u);
  EXPECT_EQ(s.readMisses, 8u);
  EXPECT_EQ(s.readHits, 8u);
}

TEST(Coalescing, WideAccessPartsAreRequestsInTheSimulator) {
  // Doubles a[l / 2]: two reads of line 0x20, the first a miss; timing off: the second hits.
  Stats s = runOneStep(testing::load(0, upsampled(8, 2), 8));
  EXPECT_EQ(s.requestsBeforeCoalescing, 32u);
  EXPECT_EQ(s.reads, 2u);
  EXPECT_EQ(s.readMisses, 1u);
  EXPECT_EQ(s.readHits, 1u);
  // Timing on: the second finds the line in flight, a latency miss.
  s = runOneStep(testing::load(0, upsampled(8, 2), 8), {});
  EXPECT_EQ(s.reads, 2u);
  EXPECT_EQ(s.readMisses, 1u);
  EXPECT_EQ(s.misses.latency, 1u);
  // float4 a[l / 4]: four reads, one miss; the miss rate is 25%, not 100%.
  s = runOneStep(testing::load(0, upsampled(16, 4), 16));
  EXPECT_EQ(s.reads, 4u);
  EXPECT_EQ(s.readMisses, 1u);
  EXPECT_DOUBLE_EQ(s.missRate(), 0.25);
  // Stores too: two writes of the line.
  s = runOneStep(testing::store(0, upsampled(8, 2), 8));
  EXPECT_EQ(s.writes, 2u);
  // wide_access_split=off: the whole warp coalesces, one read.
  s = runOneStep(testing::load(0, upsampled(8, 2), 8), {"timing=off", "wide_access_split=off"});
  EXPECT_EQ(s.reads, 1u);
  EXPECT_EQ(s.readMisses, 1u);
  // 6-byte lanes (an ushort4's .xyz) go per half-warp as 8-byte ones do: two reads; lanes of 4
  // bytes and one of 1 (their sizes' OR is 5) are not wide: one read.
  s = runOneStep(testing::load(0, upsampled(8, 2), 6));
  EXPECT_EQ(s.reads, 2u);
  sched::WarpStep narrow = testing::load(0, upsampled(4, 1), 4);
  narrow.lanes[31].size = 1;
  s = runOneStep(narrow);
  EXPECT_EQ(s.reads, 1u);
  // Atomics and constant loads are not split.
  s = runOneStep(testing::makeStep(AccessKind::Atomic, 0, upsampled(8, 2), 8));
  EXPECT_EQ(s.atomics, 1u);
}

TEST(Coalescing, AccessSpanningTwoLinesTouchesBoth) {
  sched::WarpStep st = testing::load(0, {0x107C}, 8);
  std::vector<uint64_t> lines;
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{0x20, 0x21}));
  Stats s = runOneStep(st);
  EXPECT_EQ(s.requestsBeforeCoalescing, 1u);
  EXPECT_EQ(s.requests, 2u);
}

TEST(Coalescing, LinesInFirstTouchOrderWithoutDuplicates) {
  sched::WarpStep st = testing::load(0, {0x200, 0x0, 0x204, 0x80, 0x4, 0x200});
  std::vector<uint64_t> lines;
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{4, 0, 1}));
}

TEST(Coalescing, LargeCopiesAreEveryLineOnceInOrder) {
  // A 1 MiB memcpy from 0x100 touches lines 2 .. 8193 (its last byte 0x1000ff is in line
  // 0x2001): 8192 lines; a second lane copies the 64 KiB from 0x10000 (lines 512 .. 1023, all
  // already touched) and a third 128 bytes at 0x2000000 (line 262144, new).
  sched::WarpStep st = testing::load(0, {0x100, 0x10000, 0x2000000});
  st.lanes[0].size = 1u << 20;
  st.lanes[1].size = 1u << 16;
  st.lanes[2].size = 128;
  std::vector<uint64_t> lines;
  coalesce(st, 7, lines);
  ASSERT_EQ(lines.size(), 8192u + 1u);
  for (uint64_t i = 0; i < 8192; ++i) ASSERT_EQ(lines[i], 2 + i);
  EXPECT_EQ(lines.back(), 262144u);
}

TEST(Coalescing, EdgesOfOneLine) {
  std::vector<uint64_t> lines;
  sched::WarpStep st = testing::load(0, {0x17C, 0x100}, 4);  // bytes 0x17C..0x17F: line 2 only
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{2}));
  st = testing::load(0, {0x17D, 0x100}, 4);  // 0x17D..0x180 reaches line 3
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{2, 3}));
  st = testing::load(0, {0x17F, 0x101}, 0);  // size 0 counts as one byte
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{2}));
  st = testing::load(0, {0x140, 0x130}, 16);  // offsets OR to 0x70, + 16 = 0x80: fits
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{2}));
  st = testing::load(0, {0x150, 0x128}, 8);  // offsets OR to 0x78 + 8: one line (the bound is exact here)
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{2}));
  st = testing::load(0, {0x154, 0x128}, 8);  // OR 0x7C + 8 > 0x80 yet both end in line 2: exact path
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{2}));
}

TEST(Coalescing, TwoRowsOfAWorkgroupAreTwoLinesInFirstTouchOrder) {
  // A warp of a 16x16 workgroup: 16 floats of row r, then 16 of row r + 1, rows 512 bytes apart
  // (lines 0x20 and 0x24, whose numbers differ in one bit: the bounds settle it). Then the rows
  // the other way round; a warp straddling lines 0x23 and 0x24 (whose numbers differ in three
  // bits, but the lowest and highest addresses lie in adjacent lines: the bounds settle it too),
  // also with its halves swapped; three lines, a lane crossing a line end (the exact path).
  std::vector<uint64_t> addresses = testing::strided(0x1000, 4, 16), lower = testing::strided(0x1200, 4, 16);
  addresses.insert(addresses.end(), lower.begin(), lower.end());
  std::vector<uint64_t> lines;
  for (bool noted : {false, true}) {
    sched::WarpStep st = testing::load(0, addresses);
    st.hasBounds = noted;
    st.bounds = sched::LaneBounds{0x1000 | 0x1200 | 0x3C, 0x1000, 0x1000, 0x123C, 4};
    coalesce(st, 7, lines);
    EXPECT_EQ(lines, (std::vector<uint64_t>{0x20, 0x24})) << noted;
    std::swap_ranges(st.lanes.begin(), st.lanes.begin() + 16, st.lanes.begin() + 16);
    coalesce(st, 7, lines);
    EXPECT_EQ(lines, (std::vector<uint64_t>{0x24, 0x20})) << noted;
  }
  for (bool noted : {false, true}) {
    sched::WarpStep st = testing::load(0, testing::strided(0x11C0, 4, 32));  // lines 0x23, 0x24
    st.hasBounds = noted;
    st.bounds = sched::LaneBounds{0x11C0 | 0x123C, 0x11C0 & 0x123C, 0x11C0, 0x123C, 4};
    uint64_t two[2];
    EXPECT_EQ(linesFromBounds(st, 7, two), 2) << noted;
    coalesce(st, 7, lines);
    EXPECT_EQ(lines, (std::vector<uint64_t>{0x23, 0x24})) << noted;
    std::swap_ranges(st.lanes.begin(), st.lanes.begin() + 16, st.lanes.begin() + 16);
    coalesce(st, 7, lines);
    EXPECT_EQ(lines, (std::vector<uint64_t>{0x24, 0x23})) << noted;
  }
  sched::WarpStep st = testing::load(0, {0x11C0, 0x1200, 0x1280});  // lines 0x23, 0x24, 0x25
  uint64_t two[2];
  EXPECT_EQ(linesFromBounds(st, 7, two), 0);
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{0x23, 0x24, 0x25}));
  st = testing::load(0, {0x11FC, 0x1200}, 8);  // lines 0x23 and 0x24, the first lane crossing
  EXPECT_EQ(linesFromBounds(st, 7, two), 0);
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{0x23, 0x24}));
  st = testing::load(0, {0x1000, 0x107E, 0x1080});  // the second lane's 4 bytes cross into 0x21
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{0x20, 0x21}));
  st = testing::load(0, {0x1000, 0x1100, 0x1080});  // lines 0x20, 0x22, 0x21
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{0x20, 0x22, 0x21}));
}

TEST(Coalescing, OneLaneOutsideTheLineIsSeenAtEveryPosition) {
  // The one-line test folds lanes four at a time, then the rest one by one: an outlier (another
  // line, or a size reaching past the line) must count wherever it sits, for every lane count.
  std::vector<uint64_t> lines;
  for (uint32_t n = 1; n <= 33; ++n) {
    for (uint32_t p = 0; p < n; ++p) {
      sched::WarpStep st = testing::load(0, testing::strided(0x1000, 4, n));
      for (uint32_t i = 0; i < n; ++i) st.lanes[i].address = 0x1000 + 4 * (i % 32);  // all in line 0x20
      st.lanes[p].address = 0x1080;  // line 0x21 instead
      coalesce(st, 7, lines);
      std::vector<uint64_t> expected = p == 0 ? std::vector<uint64_t>{0x21} : std::vector<uint64_t>{0x20, 0x21};
      if (p == 0 && n > 1) expected.push_back(0x20);
      ASSERT_EQ(lines, expected) << n << " lanes, outlier " << p;
      for (uint32_t i = 0; i < n; ++i) st.lanes[i].address = 0x1000 + 4 * (i % 32);
      st.lanes[p].address = 0x107C;
      st.lanes[p].size = 8;  // bytes 0x107C..0x1083: lines 0x20 and 0x21
      coalesce(st, 7, lines);
      ASSERT_EQ(lines, (std::vector<uint64_t>{0x20, 0x21})) << n << " lanes, wide lane " << p;
    }
  }
}

TEST(Coalescing, AgreesWithTheDefinitionOnRandomSteps) {
  uint64_t state = 12345;
  auto rnd = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  std::vector<uint64_t> lines;
  for (int trial = 0; trial < 20000; ++trial) {
    sched::WarpStep st;
    const uint32_t n = 1 + rnd() % 32;
    const uint64_t base = (rnd() % 8) * 128 + (rnd() % 2 ? 0 : rnd() % 128);
    // Sizes up to 2000 bytes and strides up to 1000 give lists past the 64 lines the coalescer
    // scans (it hashes beyond), in rising, falling and mixed order.
    const uint32_t size = std::vector<uint32_t>{0, 1, 2, 4, 8, 16, 32, 100, 128, 300, 2000}[rnd() % 11];
    const uint64_t stride = std::vector<uint64_t>{0, 1, 4, 8, 16, 128, 1000}[rnd() % 7];
    const bool falling = rnd() % 4 == 0;
    for (uint32_t i = 0; i < n; ++i)
      st.lanes.push_back({i, size, base + stride * ((rnd() % 4) ? (falling ? n - i : i) : rnd() % 32)});
    sched::LaneBounds bounds;  // as a source notes them while it fills the lanes
    for (const sched::LaneAccess& l : st.lanes) bounds.add(l.address, l.size);
    const sched::LaneBounds computed = laneBounds(st.lanes);
    ASSERT_EQ(computed.addressOr, bounds.addressOr) << "trial " << trial;
    ASSERT_EQ(computed.addressAnd, bounds.addressAnd) << "trial " << trial;
    ASSERT_EQ(computed.sizeOr, bounds.sizeOr) << "trial " << trial;
    ASSERT_EQ(computed.addressMin, bounds.addressMin) << "trial " << trial;
    ASSERT_EQ(computed.addressMax, bounds.addressMax) << "trial " << trial;
    for (bool noted : {false, true}) {
      st.hasBounds = noted;
      st.bounds = bounds;
      for (uint32_t shift : {5u, 7u}) {
        coalesce(st, shift, lines);
        ASSERT_EQ(lines, testing::linesByDefinition(st, shift)) << "trial " << trial << " shift " << shift << " noted " << noted;
      }
    }
  }
}

// A source that notes lane bounds for some steps only: those of an earlier step must not be
// taken for a later one's (the simulator reuses its step buffer).
class BoundsOnFirstStepSource : public sched::StepSource {
 public:
  bool next(sched::WarpStep& out) override {
    if (issued_ == 2) return false;
    out.sm = 0;
    out.warpKey = 0;
    out.cycle = issued_;
    out.kind = AccessKind::Load;
    // Step 0: 32 floats in line 0x20, bounds noted. Step 1: 32 floats over lines 0x40 and 0x41,
    // no bounds noted.
    out.lanes.clear();
    const uint64_t base = issued_ == 0 ? 0x1000 : 0x2040;
    for (uint32_t i = 0; i < 32; ++i) out.lanes.push_back({i, 4, base + 4 * i});
    if (issued_ == 0) {
      out.bounds = sched::LaneBounds{0x1000 | 0x7C, 0x1000, 0x1000, 0x107C, 4};
      out.hasBounds = true;
    }
    ++issued_;
    return true;
  }
  void delayWarp(uint64_t, uint64_t) override {}

 private:
  uint32_t issued_ = 0;
};

TEST(Coalescing, BoundsNotedForOneStepAreNotTakenForTheNext) {
  BoundsOnFirstStepSource source;
  Simulator sim(cfg("gtx480-16k", {"timing=off"}));
  Stats s = sim.run(source, 1);
  EXPECT_EQ(s.steps, 2u);
  EXPECT_EQ(s.requests, 3u);  // 1 + 2
  EXPECT_EQ(s.readMisses, 3u);
}

TEST(Coalescing, AnAccessOverTheLimitIsRefusedWithItsInstruction) {
  // A corrupt size (say 0xFFFFFFFF from a damaged instruction table) must not expand into
  // 33 million lines per lane.
  sched::WarpStep st = testing::load(0, {0x0, 0x1000});
  st.instruction = 7;
  st.workgroup = 3;
  st.lanes[1].size = (1u << 20) + 1;
  std::vector<uint64_t> lines;
  try {
    coalesce(st, 7, lines);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "instruction 7 accesses 1048577 bytes at once (local thread 1 of workgroup 3); the simulator "
                 "models accesses of at most 1048576 bytes");
  }
}

TEST(Coalescing, AnAccessRunningPastTheAddressSpaceStopsAtItsEnd) {
  sched::WarpStep st = testing::load(0, {~uint64_t{0} - 63});
  st.lanes[0].size = 4096;
  std::vector<uint64_t> lines;
  coalesce(st, 7, lines);
  EXPECT_EQ(lines, (std::vector<uint64_t>{~uint64_t{0} >> 7}));
}

TEST(Coalescing, StoresCoalesceToo) {
  Stats s = runOneStep(testing::store(0, testing::strided(0, 4, 32)));
  EXPECT_EQ(s.writes, 1u);
  EXPECT_EQ(s.requests, 1u);
  EXPECT_EQ(s.requestsBeforeCoalescing, 32u);
}

// ---------------------------------------------------------------- replacement

// One SM model, timing off, linear indexing; lines 0, 32, 64, ... all map to set 0.
SmModel model(const std::vector<std::string>& extra) {
  std::vector<std::string> o = {"set_index=linear", "timing=off"};
  o.insert(o.end(), extra.begin(), extra.end());
  return SmModel(cfg("gtx480-16k", o), 1);
}

constexpr uint64_t L(uint64_t i) { return i * 32; }  // i-th line of set 0

TEST(Replacement, LruEvictionOrderInOneSet) {
  SmModel m = model({"replacement=lru"});
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(m.read(L(i), 0, 1).outcome, Outcome::ColdMiss);
  EXPECT_EQ(m.read(L(0), 0, 1).outcome, Outcome::Hit);  // order now 1 2 3 0 (LRU first)
  EXPECT_EQ(m.read(L(4), 0, 1).outcome, Outcome::ColdMiss);  // evicts 1
  EXPECT_FALSE(m.contains(L(1)));
  EXPECT_TRUE(m.contains(L(0)));
  EXPECT_EQ(m.read(L(5), 0, 1).outcome, Outcome::ColdMiss);  // evicts 2
  EXPECT_FALSE(m.contains(L(2)));
  RequestResult r = m.read(L(1), 0, 1);  // evicts 3
  EXPECT_EQ(r.outcome, Outcome::ConflictMiss);
  EXPECT_EQ(r.reuseDistance, 5u);  // 2 3 0 4 5 since the last access to 1
  EXPECT_FALSE(m.contains(L(3)));
  EXPECT_TRUE(m.contains(L(0)));
  EXPECT_TRUE(m.contains(L(4)));
  EXPECT_TRUE(m.contains(L(5)));
}

TEST(Replacement, LruVictimsMatchAReferenceWithPendingWays) {
  // Random hits, fills and installs (some pending) on 4 and 6 ways: the victim is the
  // lowest-numbered invalid way, else the least recently used way that is not pending, else
  // none. The reference keeps its own use order.
  for (uint32_t ways : {4u, 6u}) {
    CacheTags tags(2, ways, Replacement::LRU, 1);
    struct RefWay {
      uint64_t line = CacheTags::kNoLine;
      uint64_t used = 0;
      bool pending = false;
    };
    std::vector<std::vector<RefWay>> ref(2, std::vector<RefWay>(ways));
    uint64_t clock = 0, state = 99;
    auto rnd = [&] {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return state >> 33;
    };
    for (int op = 0; op < 20000; ++op) {
      const uint32_t set = rnd() % 2;
      std::vector<RefWay>& r = ref[set];
      int expected = -1;
      for (uint32_t w = 0; w < ways && expected < 0; ++w)
        if (r[w].line == CacheTags::kNoLine) expected = static_cast<int>(w);
      if (expected < 0)
        for (uint32_t w = 0; w < ways; ++w)
          if (!r[w].pending && (expected < 0 || r[w].used < r[expected].used)) expected = static_cast<int>(w);
      ASSERT_EQ(tags.victim(set), expected) << ways << " ways, operation " << op;
      const uint32_t w = rnd() % ways;
      switch (rnd() % 3) {
        case 0:  // a hit on a valid way
          if (r[w].line != CacheTags::kNoLine) {
            tags.touch(set, static_cast<int>(w));
            r[w].used = ++clock;
          }
          break;
        case 1:  // data arrives
          tags.fill(set, static_cast<int>(w));
          r[w].pending = false;
          break;
        default:  // a miss installs into the victim, pending half the time
          if (expected >= 0) {
            const bool pending = rnd() % 2 == 0;
            tags.install(set, expected, 1000 + op, pending, false);
            r[expected] = RefWay{uint64_t(1000 + op), ++clock, pending};
          }
      }
    }
  }
}

// Uses A A A B C C D D (A=3 uses, B=1, C=2, D=2, D most recent), then E.
uint64_t victimAfterPattern(const std::string& policy) {
  SmModel m = model({"replacement=" + policy});
  for (uint64_t i : {0, 0, 0, 1, 2, 2, 3, 3}) m.read(L(i), 0, 1);
  m.read(L(4), 0, 1);
  uint64_t gone = ~uint64_t(0);
  for (uint64_t i = 0; i < 4; ++i)
    if (!m.contains(L(i))) gone = i;
  EXPECT_TRUE(m.contains(L(4)));
  return gone;
}

TEST(Replacement, LfuEvictsFewestUses) { EXPECT_EQ(victimAfterPattern("lfu"), 1u); }
TEST(Replacement, MfuEvictsMostUses) { EXPECT_EQ(victimAfterPattern("mfu"), 0u); }
TEST(Replacement, MruEvictsMostRecentlyUsed) { EXPECT_EQ(victimAfterPattern("mru"), 3u); }
TEST(Replacement, LruEvictsLeastRecentlyUsed) { EXPECT_EQ(victimAfterPattern("lru"), 0u); }

TEST(Replacement, LfuTiesGoToLeastRecentlyUsed) {
  SmModel m = model({"replacement=lfu"});
  for (uint64_t i : {2, 0, 3, 1}) m.read(L(i), 0, 1);
  m.read(L(4), 0, 1);
  EXPECT_FALSE(m.contains(L(2)));
}

TEST(Replacement, RandomIsSeededAndUsesEveryWay) {
  auto victims = [](uint64_t seed) {
    SmModel m(cfg("gtx480-16k", {"set_index=linear", "timing=off", "replacement=random"}), seed);
    std::vector<uint64_t> order;
    std::vector<bool> present(64, false);
    for (uint64_t i = 0; i < 64; ++i) {
      m.read(L(i), 0, 1);
      for (uint64_t j = 0; j < i; ++j)
        if (present[j] && !m.contains(L(j))) {
          present[j] = false;
          order.push_back(j);
        }
      present[i] = true;
    }
    return order;
  };
  std::vector<uint64_t> a = victims(7), b = victims(7), c = victims(8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.size(), 60u);  // 64 lines through 4 ways
  // Not LRU order: random replacement does not evict in insertion order.
  std::vector<uint64_t> fifo;
  for (uint64_t i = 0; i < 60; ++i) fifo.push_back(i);
  EXPECT_NE(a, fifo);
}

// ---------------------------------------------------------------- write policies

TEST(WritePolicy, WriteThroughNoAllocateNeverAllocatesOnAStore) {
  SmModel m = model({});
  EXPECT_EQ(m.write(L(0), 0).outcome, Outcome::WriteMiss);
  EXPECT_FALSE(m.contains(L(0)));
  EXPECT_EQ(m.read(L(0), 0, 1).outcome, Outcome::ColdMiss);  // the store did not touch L1
  EXPECT_EQ(m.write(L(0), 0).outcome, Outcome::WriteHit);    // the line stays valid
  EXPECT_TRUE(m.contains(L(0)));
  EXPECT_EQ(m.read(L(0), 0, 1).outcome, Outcome::Hit);
  for (uint64_t i = 1; i < 10; ++i) m.write(L(i), 0);
  EXPECT_TRUE(m.contains(L(0)));
  const Stats& s = m.stats();
  EXPECT_EQ(s.writes, 11u);
  EXPECT_EQ(s.writeHits, 1u);
  EXPECT_EQ(s.writeMisses, 10u);
  EXPECT_EQ(s.writeBacks, 0u);
  EXPECT_EQ(s.reads, 2u);
  EXPECT_EQ(s.readMisses, 1u);
  EXPECT_EQ(s.reuse.total(), 2u);  // stores are not L1 accesses under wtna
}

TEST(WritePolicy, WriteBackCountsDirtyEvictions) {
  // One set of 4 ways (512 B cache).
  SmModel m(cfg("gtx480-16k", {"size=512", "set_index=linear", "timing=off", "write_policy=wbwa"}), 1);
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(m.write(i, 0).outcome, Outcome::WriteMiss);
  EXPECT_EQ(m.read(4, 0, 1).outcome, Outcome::ColdMiss);  // evicts dirty 0
  EXPECT_EQ(m.stats().writeBacks, 1u);
  EXPECT_EQ(m.write(5, 0).outcome, Outcome::WriteMiss);  // evicts dirty 1
  EXPECT_EQ(m.stats().writeBacks, 2u);
  EXPECT_EQ(m.read(2, 0, 1).outcome, Outcome::Hit);
  EXPECT_EQ(m.write(4, 0).outcome, Outcome::WriteHit);  // 4 becomes dirty
  EXPECT_EQ(m.read(6, 0, 1).outcome, Outcome::ColdMiss);  // evicts 3 (dirty)
  EXPECT_FALSE(m.contains(3));
  EXPECT_EQ(m.read(7, 0, 1).outcome, Outcome::ColdMiss);  // evicts 5 (dirty)
  EXPECT_EQ(m.read(8, 0, 1).outcome, Outcome::ColdMiss);  // evicts 2 (dirty)
  EXPECT_EQ(m.read(9, 0, 1).outcome, Outcome::ColdMiss);  // evicts 4 (dirty)
  EXPECT_EQ(m.read(10, 0, 1).outcome, Outcome::ColdMiss);  // evicts 6 (clean)
  const Stats& s = m.stats();
  EXPECT_EQ(s.writes, 6u);
  EXPECT_EQ(s.writeMisses, 5u);
  EXPECT_EQ(s.writeHits, 1u);
  EXPECT_EQ(s.writeBacks, 6u);
  EXPECT_EQ(s.reads, 7u);
  EXPECT_EQ(s.readMisses, 6u);
}

TEST(WritePolicy, AStoreAroundASetInFlightIsNoAccessOfL1) {
  // One set of one way; the read's line is in flight until cycle 100, so the store cannot
  // allocate and goes around the cache: it changes nothing, and the next read of line 0 has
  // reuse distance 0, not 1.
  SmModel m(cfg("gtx480-16k", {"size=128", "associativity=1", "set_index=linear", "write_policy=wbwa",
                               "latency_sigma=0", "min_latency=100"}),
            1);
  EXPECT_EQ(m.read(0, 0, 1).outcome, Outcome::ColdMiss);
  const RequestResult store = m.write(1, 1);
  EXPECT_EQ(store.outcome, Outcome::WriteMiss);
  EXPECT_EQ(store.reuseDistance, ReuseDistanceTracker::kInfinite);  // not tracked
  EXPECT_FALSE(m.contains(1));
  const RequestResult again = m.read(0, 200, 1);
  EXPECT_EQ(again.outcome, Outcome::Hit);
  EXPECT_EQ(again.reuseDistance, 0u);
  EXPECT_EQ(m.stats().reuse.cold, 1u);
  EXPECT_EQ(m.stats().reuse.total(), 2u);
  EXPECT_EQ(m.distinctLines(), 1u);
  EXPECT_EQ(m.write(1, 201).outcome, Outcome::WriteMiss);  // now it allocates, evicting 0
  EXPECT_TRUE(m.contains(1));
  EXPECT_EQ(m.stats().reuse.cold, 2u);
}

// ---------------------------------------------------------------- random numbers

TEST(LatencyJitter, TheAliasTableGivesTheRoundedHalfNormalsProbabilities) {
  // P(0) = erf(0.5 / (sigma sqrt 2)), P(k) = P(k - 0.5 <= sigma |Z| < k + 0.5): sigma 5 gives
  // P(0) = 2 Phi(0.1) - 1 = 0.0796557 and P(5) = 2 (Phi(1.1) - Phi(0.9)) = 0.0967881.
  LatencyJitter five(5.0);
  EXPECT_NEAR(five.exactProbability(0), 0.0796557, 1e-7);
  EXPECT_NEAR(five.exactProbability(5), 0.0967881, 1e-7);
  EXPECT_EQ(five.entries(), 64u);  // values 0..45, the tail entry 46, padding to a power of two
  for (double sigma : {0.05, 0.3, 1.0, 5.0, 12.5, 100.0, 220.0}) {
    LatencyJitter j(sigma);
    ASSERT_GT(j.entries(), 0u) << sigma;
    const uint32_t tailEntry = static_cast<uint32_t>(std::ceil(9.0 * sigma)) + 1;
    double total = 0.0;
    for (uint32_t k = 0; k < j.entries(); ++k) total += j.tableProbability(k);
    EXPECT_NEAR(total, 1.0, 1e-12) << sigma;
    for (uint32_t k = 0; k < tailEntry; ++k)
      ASSERT_NEAR(j.tableProbability(k), j.exactProbability(k), 1e-13) << sigma << " " << k;
    for (uint32_t k = tailEntry + 1; k < j.entries(); ++k) ASSERT_EQ(j.tableProbability(k), 0.0) << sigma << " " << k;
  }
}

TEST(LatencyJitter, SamplesFollowTheDistribution) {
  // 2 M draws at sigma 5: each value's frequency within 5 standard errors of its probability.
  LatencyJitter j(5.0);
  Rng rng(17);
  constexpr uint32_t kDraws = 2000000;
  std::vector<uint64_t> counts(64, 0);
  double sum = 0.0;
  for (uint32_t i = 0; i < kDraws; ++i) {
    const uint64_t v = j.sample(rng);
    ASSERT_LT(v, 64u);
    ++counts[v];
    sum += double(v);
  }
  for (uint32_t k = 0; k < 30; ++k) {
    const double p = j.exactProbability(k);
    const double se = std::sqrt(p * (1 - p) / kDraws);
    EXPECT_NEAR(double(counts[k]) / kDraws, p, 5 * se + 1e-9) << k;
  }
  // E[round(5 |Z|)] is close to 5 sqrt(2 / pi) = 3.989 (rounding adds about +0.01 here).
  EXPECT_NEAR(sum / kDraws, 3.99, 0.03);
  // The same seed gives the same draws.
  Rng a(3), b(3);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(j.sample(a), j.sample(b));
}

TEST(LatencyJitter, JittersOfOneSigmaShareATable) {
  Rng a(9), b(9), c(9);
  std::vector<uint64_t> first;
  {
    LatencyJitter one(5.0), two(5.0), other(6.0);
    EXPECT_TRUE(one.sharesTableWith(two));
    EXPECT_FALSE(one.sharesTableWith(other));
    EXPECT_NE(one.tableProbability(5), other.tableProbability(5));
    for (int i = 0; i < 1000; ++i) {
      first.push_back(one.sample(a));
      ASSERT_EQ(first.back(), two.sample(b));
    }
  }
  // Built again once no jitter holds it: the same draws.
  LatencyJitter again(5.0);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(again.sample(c), first[static_cast<size_t>(i)]);
  EXPECT_FALSE(LatencyJitter(0.0).sharesTableWith(LatencyJitter(0.0)));  // no table
}

TEST(LatencyJitter, NoJitterWideJitterAndTheTail) {
  Rng rng(5);
  LatencyJitter none(0.0);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(none.sample(rng), 0u);
  // Too wide for a table: every draw by the polar method, rounded; mean sigma sqrt(2 / pi).
  LatencyJitter wide(1e6);
  EXPECT_EQ(wide.entries(), 0u);
  double sum = 0.0;
  for (int i = 0; i < 200000; ++i) sum += double(wide.sample(rng));
  EXPECT_NEAR(sum / 200000 / 1e6, std::sqrt(2.0 / M_PI), 0.01);
  // The tail (values from 46 on at sigma 5, picked about once in 5e18 draws) is drawn exactly:
  // every value at least 46, and 46 itself with probability P(46) / P(>= 45.5) = 0.845.
  LatencyJitter five(5.0);
  uint64_t at46 = 0;
  constexpr int kTail = 100000;
  for (int i = 0; i < kTail; ++i) {
    const uint64_t v = five.sampleTail(rng);
    ASSERT_GE(v, 46u);
    at46 += v == 46;
  }
  const double p46 = five.exactProbability(46) / std::erfc(45.5 / (5.0 * std::sqrt(2.0)));
  EXPECT_NEAR(double(at46) / kTail, p46, 5 * std::sqrt(p46 * (1 - p46) / kTail));
  // A huge sigma saturates instead of wrapping the fill cycle.
  LatencyJitter huge(1e300);
  EXPECT_LE(huge.sample(rng), uint64_t{1} << 62);
}

// ---------------------------------------------------------------- per-warp MSHR counts

TEST(FlatCounter, CountsMatchAMapThroughGrowthAndRebuilds) {
  // Keys come and go (as warps with misses in flight do): counts drop to 0 and slots are
  // reused or dropped when the table fills; every count stays exact.
  FlatCounter c;
  std::map<uint64_t, uint32_t> ref;
  Rng rng(3);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t key = (i / 5000) * 37 + rng.below(i % 50000 < 25000 ? 8 : 200);  // the key range drifts
    if (rng.below(2) == 0) {
      c.increment(key);
      ++ref[key];
    } else {
      c.decrement(key);
      if (ref[key] > 0) --ref[key];
    }
    ASSERT_EQ(c.get(key), ref[key]) << "op " << i;
    const uint64_t probe = rng.below(4000);
    ASSERT_EQ(c.get(probe), ref.count(probe) ? ref[probe] : 0u) << "op " << i;
  }
  c.decrement(123456789);  // absent: no effect
  EXPECT_EQ(c.get(123456789), 0u);
  c.increment(~uint64_t(0));
  c.increment(0);
  EXPECT_EQ(c.get(~uint64_t(0)), 1u);
  EXPECT_EQ(c.get(0), ref[0] + 1);
}

TEST(FlatCounter, SizeFollowsKeysWithNonzeroCountsNotKeysEverSeen) {
  // A launch's warp keys keep growing; at most `live` of them hold MSHRs at a time. The table
  // starts at 256 slots and stays there for 10 live keys; 1000 live keys need at least 2000
  // slots (it stays under half full) and get no more than 8192.
  for (uint64_t live : {10u, 1000u}) {
    FlatCounter c;
    for (uint64_t key = 0; key < 1000000; ++key) {
      c.increment(key);
      if (key >= live) c.decrement(key - live);
    }
    for (uint64_t key = 1000000 - live; key < 1000000; ++key) EXPECT_EQ(c.get(key), 1u);
    EXPECT_EQ(c.get(1000000 - live - 1), 0u);
    if (live == 10)
      EXPECT_EQ(c.slots(), 256u);
    else
      EXPECT_TRUE(c.slots() >= 2048u && c.slots() <= 8192u) << c.slots();
  }
}

// ---------------------------------------------------------------- reuse distance

TEST(ReuseDistance, PaperTable1AddressAndLineGranularity) {
  const uint64_t x[] = {0, 5, 3, 9, 3, 3, 5};
  const uint64_t inf = ReuseDistanceTracker::kInfinite;
  ReuseDistanceTracker byAddress;
  std::vector<uint64_t> d;
  for (uint64_t a : x) d.push_back(byAddress.access(a));
  EXPECT_EQ(d, (std::vector<uint64_t>{inf, inf, inf, inf, 1, 0, 2}));
  ReuseDistanceTracker byLine;
  d.clear();
  for (uint64_t a : x) d.push_back(byLine.access(a / 4));
  EXPECT_EQ(d, (std::vector<uint64_t>{inf, inf, 1, inf, 1, 0, 2}));
}

TEST(ReuseDistance, PaperTable1TwoLineCache) {
  // 4-byte elements, 4-element (16-byte) lines, a 2-line fully associative LRU cache.
  Config c = cfg("gtx480-16k", {"size=32", "line_size=16", "associativity=2", "set_index=linear", "timing=off"});
  ASSERT_EQ(c.sets(), 1u);
  std::vector<uint64_t> addresses;
  for (uint64_t i : {0, 5, 3, 9, 3, 3, 5}) addresses.push_back(i * 4);
  Stats s = runSingleLaneLoads(c, addresses);
  EXPECT_EQ(s.reads, 7u);
  EXPECT_EQ(s.readMisses, 4u);
  EXPECT_EQ(s.misses.cold, 3u);      // 3/7 = 42%
  EXPECT_EQ(s.misses.capacity, 1u);  // 1/7 = 14%
  EXPECT_EQ(s.misses.conflict, 0u);
  EXPECT_EQ(s.readHits, 3u);
  EXPECT_EQ(s.reuse.cold, 3u);
  EXPECT_EQ(s.reuse.buckets, (std::vector<uint64_t>{1, 2, 1}));  // d=0: 1, d=1: 2, d in [2,3]: 1
}

TEST(ReuseDistance, TheLineAccessedLastAgainIsAtDistanceZero) {
  // Repeats of the latest line leave the order of the others as it was.
  ReuseDistanceTracker t(64);
  const uint64_t inf = ReuseDistanceTracker::kInfinite;
  std::vector<uint64_t> d;
  for (uint64_t line : {5, 5, 5, 7, 5, 5, 7, 9, 9, 5}) d.push_back(t.access(line));
  EXPECT_EQ(d, (std::vector<uint64_t>{inf, 0, 0, inf, 1, 0, 1, inf, 0, 2}));
  // Across compactions (a 64-timestamp window): 200 rounds of one new line read twice, then
  // the first line, whose distance is every line since.
  for (uint64_t i = 0; i < 200; ++i) {
    ASSERT_EQ(t.access(100 + i), inf);
    ASSERT_EQ(t.access(100 + i), 0u);
  }
  EXPECT_EQ(t.access(5), 200u);  // the 200 new lines since
  EXPECT_EQ(t.access(7), 202u);  // and 9 and 5
  EXPECT_GE(t.compactions(), 1u);
}

// Replays 60000 accesses from `pick` through the tracker and a naive LRU stack.
static void expectNaiveStackDistances(const std::function<uint64_t(Rng&)>& pick) {
  ReuseDistanceTracker t(64);  // tiny window: many compactions
  std::list<uint64_t> stack;   // most recent first
  Rng rng(42);
  for (int i = 0; i < 60000; ++i) {
    uint64_t line = pick(rng);
    uint64_t expected = ReuseDistanceTracker::kInfinite;
    uint64_t depth = 0;
    for (auto it = stack.begin(); it != stack.end(); ++it, ++depth) {
      if (*it == line) {
        expected = depth;
        stack.erase(it);
        break;
      }
    }
    stack.push_front(line);
    ASSERT_EQ(t.access(line), expected) << "access " << i;
  }
  EXPECT_GE(t.compactions(), 5u);
  EXPECT_EQ(t.distinctLines(), stack.size());
}

TEST(ReuseDistance, MatchesANaiveStackWithCompactions) {
  // Mix of a hot set and a wide set so distances cover both counting paths.
  expectNaiveStackDistances([](Rng& rng) { return rng.below(4) == 0 ? rng.below(700) : rng.below(24); });
}

TEST(ReuseDistance, MatchesANaiveStackOnSparseAndHugeLines) {
  // Lines far apart (one per block of 16) and near the top of the address space.
  expectNaiveStackDistances([](Rng& rng) {
    uint64_t n = rng.below(4) == 0 ? rng.below(700) : rng.below(24);
    return rng.below(2) == 0 ? n * 1000003 : ~uint64_t(0) - 1 - n;
  });
}

TEST(ReuseDistance, CyclicSweepsOverLargeFootprintsHaveExactDistances) {
  // Sweeping n lines in order: after the first sweep every access has distance n - 1. Large n
  // fill several levels of the count tree (300000 lines: a 2.4 M-timestamp window, 3 levels of
  // counts above the per-word bytes), and the repeated sweeps cross compactions.
  for (uint64_t n : {1000u, 70000u, 300000u}) {
    ReuseDistanceTracker t(static_cast<uint32_t>(std::min<uint64_t>(n, 1u << 16)));
    for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(t.access(i), ReuseDistanceTracker::kInfinite);
    for (int sweep = 0; sweep < 10; ++sweep)
      for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(t.access(i), n - 1) << "n " << n << " sweep " << sweep << " line " << i;
    EXPECT_EQ(t.access(n - 1), 0u);
    EXPECT_EQ(t.access(n - 3), 2u);  // n - 2 and n - 1 since
    EXPECT_EQ(t.access(0), n - 1);   // every other line since
    EXPECT_GE(t.compactions(), 1u);
  }
}

// Distances by a plain Fenwick tree over every timestamp of the trace (no windows, no
// compaction, no blocks): an independent reference for long traces over large footprints.
class ReferenceDistances {
 public:
  explicit ReferenceDistances(size_t accesses) : tree_(accesses + 1, 0) {}
  uint64_t access(uint64_t line) {
    const uint64_t t = ++now_;  // 1-based timestamps
    uint64_t d = ReuseDistanceTracker::kInfinite;
    auto it = last_.find(line);
    if (it != last_.end()) {
      d = prefix(now_ - 1) - prefix(it->second);
      add(it->second, -1);
      it->second = t;
    } else {
      last_.emplace(line, t);
    }
    add(t, 1);
    return d;
  }

 private:
  uint64_t prefix(uint64_t i) const {
    uint64_t s = 0;
    for (; i > 0; i -= i & (~i + 1)) s += uint64_t(tree_[i]);
    return s;
  }
  void add(uint64_t i, int64_t delta) {
    for (; i < tree_.size(); i += i & (~i + 1)) tree_[i] += delta;
  }
  std::vector<int64_t> tree_;
  std::unordered_map<uint64_t, uint64_t> last_;
  uint64_t now_ = 0;
};

TEST(ReuseDistance, MatchesAReferenceOnLongTracesOverLargeFootprints) {
  // Streaming walks, re-reads of recent lines and random lines over 200000 lines (the mix of the
  // benchmark's worst case): distances from 0 to the whole footprint, many compactions.
  const uint64_t footprint = 200000;
  const size_t accesses = 2000000;
  for (uint32_t initial : {64u, 1u << 16}) {
    ReuseDistanceTracker t(initial);
    ReferenceDistances ref(accesses);
    Rng rng(initial);
    uint64_t walk = 0;
    for (size_t i = 0; i < accesses; ++i) {
      uint64_t r = rng.below(8), line;
      if (r < 4)
        line = walk = (walk + 1) % footprint;
      else if (r < 7)
        line = (walk + footprint - rng.below(300)) % footprint;
      else
        line = rng.below(footprint);
      line = line * 3 + (line & 1);  // a few holes in the blocks of 16
      ASSERT_EQ(t.access(line), ref.access(line)) << "initial " << initial << " access " << i;
    }
    EXPECT_GE(t.compactions(), 2u);
  }
}

TEST(ReuseDistance, MemoryDependsOnDistinctLinesNotTraceLength) {
  ReuseDistanceTracker t(1024);
  Rng rng(1);
  for (int i = 0; i < 100000; ++i) t.access(rng.below(5000));
  size_t after100k = t.memoryBytes();
  for (int i = 0; i < 2000000; ++i) t.access(rng.below(5000));
  EXPECT_EQ(t.memoryBytes(), after100k);
  EXPECT_LT(after100k, size_t(5000) * 64);
}

TEST(ReuseDistance, ClassifyOffReportsUnsplitMisses) {
  SmModel m(cfg("gtx480-16k", {"timing=off", "classify=off"}), 1);
  EXPECT_EQ(m.read(0, 0, 1).outcome, Outcome::Miss);
  EXPECT_EQ(m.read(0, 0, 1).outcome, Outcome::Hit);
  EXPECT_EQ(m.stats().readMisses, 1u);
  EXPECT_EQ(m.stats().misses.cold, 0u);
  EXPECT_EQ(m.stats().reuse.total(), 0u);
}

TEST(FlatCounter, MatchesAMapUnderRandomUpdates) {
  FlatCounter c;
  std::map<uint64_t, uint32_t> ref;
  Rng rng(5);
  for (int i = 0; i < 200000; ++i) {
    uint64_t key = rng.below(300) * 7919;  // clustered keys collide in the table
    if (rng.below(2) == 0 || ref[key] == 0) {
      c.increment(key);
      ++ref[key];
    } else {
      c.decrement(key);
      --ref[key];
    }
    if (i % 1000 == 0) {
      for (auto& [k, v] : ref) ASSERT_EQ(c.get(k), v) << k;
    }
  }
  for (auto& [k, v] : ref) EXPECT_EQ(c.get(k), v);
}

TEST(FlatCounter, SlotAccessCountsLikeKeyAccess) {
  FlatCounter c;
  size_t s = c.lookup(5);
  EXPECT_EQ(c.countAt(s), 0u);  // empty slot
  s = c.incrementAt(s, 5);
  EXPECT_EQ(c.countAt(s), 1u);
  EXPECT_EQ(c.incrementAt(s, 5), s);
  EXPECT_EQ(c.get(5), 2u);
  c.decrementAt(s);
  EXPECT_EQ(c.get(5), 1u);
  EXPECT_EQ(c.lookup(5), s);
}

// 24 warps each hold one MSHR: creating their counters rebuilds the per-warp table twice (16 ->
// 32 -> 64 slots) while misses are in flight; retiring must still release each warp's own MSHR.
TEST(SmModelTiming, PerWarpCountsSurviveCounterTableRebuilds) {
  SmModel m(cfg("gtx480-16k", {"set_index=linear", "min_latency=10", "latency_sigma=0", "mshrs_per_warp=1"}), 1);
  for (uint64_t w = 0; w < 24; ++w) {
    RequestResult r = m.read(w, 0, 1000 + w);  // line w: set w, so no set fills up
    EXPECT_TRUE(isReadMiss(r.outcome));
    EXPECT_EQ(r.readyCycle, 10u);
  }
  EXPECT_EQ(m.mshrsInUse(), 24u);
  for (uint64_t w = 0; w < 24; ++w) EXPECT_EQ(m.mshrsInUse(1000 + w), 1u);
  RequestResult stalled = m.read(100, 5, 1003);  // warp 3 already holds its one MSHR
  EXPECT_EQ(stalled.outcome, Outcome::MshrStall);
  EXPECT_EQ(stalled.readyCycle, 10u);
  RequestResult hit = m.read(0, 10, 1000);  // everything filled at cycle 10
  EXPECT_EQ(hit.outcome, Outcome::Hit);
  EXPECT_EQ(m.mshrsInUse(), 0u);
  for (uint64_t w = 0; w < 24; ++w) EXPECT_EQ(m.mshrsInUse(1000 + w), 0u);
  RequestResult again = m.read(100, 10, 1003);
  EXPECT_TRUE(isReadMiss(again.outcome));
  EXPECT_EQ(again.readyCycle, 20u);
  EXPECT_EQ(m.mshrsInUse(1003), 1u);
}

TEST(SmModelTiming, AFullSmSaysWhenItsStalledReadsRetry) {
  // Two MSHRs, latency 10: lines 0 and 1 miss at cycles 0 and 1 and fill at 10 and 11.
  SmModel m(cfg("gtx480-16k", {"set_index=linear", "min_latency=10", "latency_sigma=0", "mshrs=2"}), 1);
  EXPECT_FALSE(m.mshrsFullAt(0));
  EXPECT_TRUE(isReadMiss(m.read(0, 0, 1).outcome));
  EXPECT_TRUE(isReadMiss(m.read(1, 1, 2).outcome));
  // At cycle 3 every MSHR is taken: a read of an absent line would stall until the first fill.
  EXPECT_TRUE(m.mshrsFullAt(3));
  EXPECT_EQ(m.fullRetryCycle(), 10u);
  EXPECT_EQ(m.read(2, 3, 3).outcome, Outcome::MshrStall);
  EXPECT_EQ(m.read(2, 3, 3).readyCycle, 10u);
  m.countStalls(5);
  EXPECT_EQ(m.stats().misses.mshr, 7u);
  EXPECT_EQ(m.stats().reads, 2u);  // stalls are not reads
  // At cycle 10 line 0 has filled: an MSHR is free.
  EXPECT_FALSE(m.mshrsFullAt(10));
  EXPECT_EQ(m.mshrsInUse(), 1u);
  RequestResult r = m.read(2, 10, 3);
  EXPECT_TRUE(isReadMiss(r.outcome));
  EXPECT_EQ(r.readyCycle, 20u);
  // Full again; the retry cycle is the earliest fill (line 1 at 11), never the current cycle.
  EXPECT_TRUE(m.mshrsFullAt(10));
  EXPECT_EQ(m.fullRetryCycle(), 11u);
  EXPECT_FALSE(m.mshrsFullAt(11));
}

TEST(SmModelTiming, NeverFullWithTimingOffOrUnlimitedMshrs) {
  SmModel off(cfg("gtx480-16k", {"timing=off", "mshrs=1"}), 1);
  SmModel unlimited(cfg("gtx480-16k", {"mshrs=0", "mshrs_per_warp=0"}), 1);
  for (uint64_t line = 0; line < 8; ++line) {
    off.read(line, line, 1);
    unlimited.read(line, line, 1);
  }
  EXPECT_FALSE(off.mshrsFullAt(8));
  EXPECT_FALSE(unlimited.mshrsFullAt(8));
  EXPECT_EQ(unlimited.mshrsInUse(), 8u);
}

TEST(SmModelTiming, LogsTheLinesItInstalls) {
  // Installs: read misses and write-allocated stores; hits, latency misses, stalls and
  // write-through stores install nothing.
  SmModel m(cfg("gtx480-16k", {"set_index=linear", "min_latency=10", "latency_sigma=0", "mshrs=2"}), 1);
  m.read(7, 0, 1);   // install 0
  m.read(7, 1, 2);   // latency miss
  m.read(9, 2, 2);   // install 1
  m.read(11, 3, 3);  // stall (both MSHRs taken)
  m.write(13, 4);    // write-through: no allocation
  m.read(7, 20, 1);  // hit
  EXPECT_EQ(m.installs(), 2u);
  EXPECT_EQ(m.installedLine(0), 7u);
  EXPECT_EQ(m.installedLine(1), 9u);
  SmModel wb(cfg("gtx480-16k", {"write_policy=write-back"}), 1);
  wb.write(5, 0);
  wb.write(5, 1);  // a hit
  wb.read(6, 2, 1);
  EXPECT_EQ(wb.installs(), 2u);
  EXPECT_EQ(wb.installedLine(0), 5u);
  EXPECT_EQ(wb.installedLine(1), 6u);
  // The log keeps the last kInstallLog lines.
  SmModel big(cfg("gtx480-16k", {"mshrs=0", "mshrs_per_warp=0"}), 1);
  for (uint64_t line = 100; line < 100 + 3 * SmModel::kInstallLog + 5; ++line) big.read(line, 0, 1);
  const uint64_t n = big.installs();
  EXPECT_EQ(n, 3u * SmModel::kInstallLog + 5);
  for (uint64_t i = n - SmModel::kInstallLog; i < n; ++i) EXPECT_EQ(big.installedLine(i), 100 + i);
  // With timing off nothing stalls, and nothing is logged.
  SmModel off(cfg("gtx480-16k", {"timing=off", "write_policy=write-back"}), 1);
  off.read(1, 0, 1);
  off.write(2, 1);
  EXPECT_EQ(off.installs(), 0u);
}

}  // namespace
}  // namespace cltrace::cachesim
