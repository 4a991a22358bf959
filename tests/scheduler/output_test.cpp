// Output writers, the binary reader's validation, the config checks and the TraceReader
// adapter.
#include "cltrace/scheduler/output.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>

#include "cltrace/scheduler/trace_source.h"
#include "cltrace/trace_file.h"
#include "test_util.h"

namespace cltrace::sched::test {
namespace {

namespace fs = std::filesystem;

fs::path tempDir() {
  return fs::temp_directory_path() / ("cltrace_sched_test_" + std::to_string(::getpid()));
}

std::string tempPath(const std::string& name) {
  fs::create_directories(tempDir());
  return (tempDir() / name).string();
}

class RemoveTempDir : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(tempDir(), ignored);
  }
};
const auto* const kRemoveTempDir = ::testing::AddGlobalTestEnvironment(new RemoveTempDir);

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

auto loadStore = [](const Item& it, Emit& e) {
  e.load(1, 0x100 + 4 * it.global[0]);
  e.store(2, 0x200 + 4 * it.global[0]);
};

// Two workgroups of two work-items, warps of two, one SM.
std::string writeTo(OutputFormat format, const std::string& path,
                    const Program& program = loadStore, const NDRange& range = range1(4, 2),
                    const SchedulerConfig& config = oneSm(Policy::Warp, 2)) {
  MemoryWorkgroupSource source(range, buildTrace(range, program), "k");
  Scheduler scheduler(source, config);
  auto writer = openStepWriter(format, path, scheduler.info());
  writeSchedule(scheduler, *writer);
  return readBytes(path);
}

TEST(Output, TextListing) {
  EXPECT_EQ(writeTo(OutputFormat::Text, tempPath("s.txt")),
            "2 2\n"
            "0x100 R 0 0 1\n"
            "0x104 R 0 0 1\n"
            "0x108 R 1 0 1\n"
            "0x10C R 1 0 1\n"
            "0x200 W 0 0 2\n"
            "0x204 W 0 0 2\n"
            "0x208 W 1 0 2\n"
            "0x20C W 1 0 2\n");
}

TEST(Output, TextLeavesOutBarriersAndMarksAtomics) {
  auto program = [](const Item& it, Emit& e) {
    e.barrier(1);
    e.access(AccessKind::Atomic, 2, 0xAB0 + it.lid);
  };
  EXPECT_EQ(writeTo(OutputFormat::Text, tempPath("a.txt"), program, range1(2, 2),
                    oneSm(Policy::RoundRobin, 2)),
            "1 1\n"
            "0xAB0 A 0 0 2\n"
            "0xAB1 A 0 0 2\n");
}

TEST(Output, Csv) {
  EXPECT_EQ(writeTo(OutputFormat::Csv, tempPath("s.csv")),
            "sm,cycle,workgroup,warp,step,thread,instruction,kind,address,size\n"
            "0,0,0,0,0,0,1,load,256,4\n"
            "0,0,0,0,0,1,1,load,260,4\n"
            "0,1,1,0,0,0,1,load,264,4\n"
            "0,1,1,0,0,1,1,load,268,4\n"
            "0,2,0,0,1,0,2,store,512,4\n"
            "0,2,0,0,1,1,2,store,516,4\n"
            "0,3,1,0,1,0,2,store,520,4\n"
            "0,3,1,0,1,1,2,store,524,4\n");
}

TEST(Output, StreamWritersMatchFileWriters) {
  const NDRange range = range1(4, 2);
  MemoryWorkgroupSource source(range, buildTrace(range, loadStore));
  Scheduler scheduler(source, oneSm(Policy::Warp, 2));
  std::ostringstream text;
  auto writer = makeTextWriter(text, scheduler.info());
  writeSchedule(scheduler, *writer);
  EXPECT_EQ(text.str(), writeTo(OutputFormat::Text, tempPath("t2.txt")));
}

// A busier schedule for the binary tests.
auto busy = [](const Item& it, Emit& e) {
  for (uint32_t j = 0; j < 3; ++j) {
    for (uint32_t i = 0; i < it.lid % 3; ++i) e.load(1, 0x1000 + 8 * it.global[0] + i, {j, i});
    e.barrier(2, {j});
    e.store(3, 0x8000 + 4 * it.global[0], {j});
  }
};
const NDRange kBusyRange = range1(96, 48);

std::string busyBinary(const std::string& path) {
  SchedulerConfig config;
  config.smCount = 2;
  return writeTo(OutputFormat::Binary, path, busy, kBusyRange, config);
}

TEST(BinaryFile, RoundTrip) {
  const std::string path = tempPath("rt.sched");
  busyBinary(path);
  MemoryWorkgroupSource source(kBusyRange, buildTrace(kBusyRange, busy), "k");
  SchedulerConfig config;
  config.smCount = 2;
  Scheduler scheduler(source, config);
  ScheduleReader reader(path);
  EXPECT_EQ(reader.info().kernelName, "k");
  EXPECT_EQ(reader.info().laneWidth, 32u);
  EXPECT_EQ(reader.info().warpsPerWorkgroup, 2u);
  EXPECT_EQ(reader.info().workgroupCount, 2u);
  EXPECT_EQ(reader.info().config.smCount, 2u);
  EXPECT_EQ(reader.info().range.global[0], 96u);
  WarpStep a, b;
  uint64_t steps = 0;
  while (scheduler.next(a)) {
    ASSERT_TRUE(reader.next(b));
    EXPECT_EQ(stepText(a, true), stepText(b, true));
    EXPECT_EQ(a.warpKey, b.warpKey);
    EXPECT_EQ(a.flags, b.flags);
    EXPECT_TRUE(boundsMatchLanes(a));
    EXPECT_TRUE(boundsMatchLanes(b));
    ++steps;
  }
  EXPECT_FALSE(reader.next(b));
  EXPECT_FALSE(reader.next(b));
  EXPECT_EQ(reader.stepCount(), steps);
  EXPECT_EQ(reader.laneCount(), scheduler.stats().lanes);
}

TEST(BinaryFile, SameBytesTwice) {
  EXPECT_EQ(busyBinary(tempPath("a.sched")), busyBinary(tempPath("b.sched")));
}

// Reads the whole file; returns the error message ("" when it reads fine).
std::string readError(const std::string& path) {
  try {
    ScheduleReader reader(path);
    WarpStep s;
    while (reader.next(s)) {
    }
    return "";
  } catch (const ScheduleFileError& e) {
    return e.what();
  }
}

constexpr size_t kHeader = kScheduleHeaderFixedBytes + 1;  // kernel name "k"

TEST(BinaryFile, CorruptAndTruncatedFilesGiveClearErrors) {
  const std::string good = tempPath("good.sched");
  const std::string bytes = busyBinary(good);
  ASSERT_EQ(readError(good), "");
  const std::string bad = tempPath("bad.sched");
  auto errorFor = [&](std::string modified) {
    writeBytes(bad, modified);
    return readError(bad);
  };
  auto contains = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  };

  std::string e = errorFor(bytes.substr(0, bytes.size() - 30));
  EXPECT_TRUE(contains(e, "scheduled file '" + bad + "': truncated")) << e;
  e = errorFor(bytes.substr(0, 100));
  EXPECT_TRUE(contains(e, "truncated: the header needs 164 bytes, the file has 100")) << e;
  e = errorFor("");
  EXPECT_TRUE(contains(e, "not a cltrace schedule file")) << e;
  e = errorFor(bytes + "xx");
  EXPECT_TRUE(contains(e, "2 unexpected bytes after the announced steps")) << e;

  std::string m = bytes;
  m[0] = 'X';
  EXPECT_TRUE(contains(errorFor(m), "not a cltrace schedule file (bad magic)"));
  m = bytes;
  m[8] = 9;
  EXPECT_TRUE(contains(errorFor(m), "unsupported format version 9 (this build reads versions 1 to 2)"));
  m = bytes;
  m[20] = 0;  // warp size 0
  EXPECT_TRUE(contains(errorFor(m), "corrupt header: scheduler: warp_size must be > 0"));
  m = bytes;
  m[kHeader + 36] = 77;  // kind of step 0
  EXPECT_TRUE(contains(errorFor(m), "corrupt: step 0 has unknown kind 77"));
  m = bytes;
  m[kHeader + 44 + 8] ^= 0x10;  // address of lane 0 of step 0: only the checksum can tell
  EXPECT_TRUE(contains(errorFor(m), "corrupt: checksum mismatch"));
  m = bytes;
  m[kHeader + 37] = 0x40;  // step 0's flags: not a fence flag or the loop-depth mark
  EXPECT_TRUE(contains(errorFor(m), "corrupt: step 0 has unknown flags 64"));
  m = bytes;
  for (size_t b = 0; b < 8; ++b) m[kHeader + 16 + b] = '\xff';  // step 0 issues at cycle 2^64 - 1, past step 1
  EXPECT_TRUE(contains(errorFor(m), "corrupt: step 1 issues at cycle ")) << errorFor(m);
  EXPECT_TRUE(contains(errorFor(m), ", before the step before it (cycle 18446744073709551615, SM 0)")) << errorFor(m);
  m = bytes;
  for (size_t b = 0; b < 8; ++b) m[112 + b] = '\xff';  // global offset 2^64 - 1 in dimension 0
  EXPECT_TRUE(contains(errorFor(m), "corrupt header: scheduler: NDRange: global offset 18446744073709551615 "
                                    "plus global size ")) << errorFor(m);
  m = bytes;
  m[kHeader + 39] = 1;  // step 0's reserved bytes
  EXPECT_TRUE(contains(errorFor(m), "corrupt: step 0 has reserved bytes that are not zero"));
  m = bytes;
  for (size_t b = 0; b < 8; ++b) m[kHeader + 44 + 8 + b] = '\xff';  // lane 0 at 2^64 - 1, 4 bytes
  EXPECT_TRUE(contains(errorFor(m), "corrupt: step 0 lane 0 accesses 4 bytes at 18446744073709551615, past the end "
                                    "of the 64-bit address space")) << errorFor(m);
  m = bytes;
  m[kHeader + 40] = 33;  // lane count above the warp size
  EXPECT_TRUE(contains(errorFor(m), "corrupt: step 0 has 33 lanes"));
  m = bytes;
  m[kHeader + 44] = m[kHeader + 44 + 16];  // lane 0 names the thread of lane 1
  EXPECT_TRUE(contains(errorFor(m), "corrupt: step 0 lane 1 names thread"));
  m = bytes;
  m[m.size() - 16] = 'x';
  EXPECT_TRUE(contains(errorFor(m), "corrupt: bad end marker"));
  // Fields whose values the scheduler never writes: named with the file (simulate took them).
  m = bytes;
  m[40] = 32;  // max_threads_per_sm 32 (was 1536): no SM could hold a workgroup of 48
  m[41] = 0;
  EXPECT_EQ(errorFor(m), "scheduled file '" + bad + "': corrupt header: max_threads_per_sm 32 is smaller than "
                         "the workgroup size 48 (no SM could hold a workgroup)");
  m = bytes;
  for (size_t b = 0; b < 4; ++b) m[kHeader + 32 + b] = '\xff';  // step 0's instruction 2^32 - 1
  EXPECT_EQ(errorFor(m), "scheduled file '" + bad + "': corrupt: step 0 names instruction 4294967295 (instruction "
                         "ids are below 1048576)");
  m = bytes;
  m[kHeader + 32] = 0;  // step 0's instruction 2^20, the first past the trace format's ids
  m[kHeader + 33] = 0;
  m[kHeader + 34] = 0x10;
  m[kHeader + 35] = 0;
  EXPECT_EQ(errorFor(m), "scheduled file '" + bad + "': corrupt: step 0 names instruction 1048576 (instruction "
                         "ids are below 1048576)");
  // Header fields that are valid but changed: the checksum covers the header too.
  for (size_t at : {size_t{17}, size_t{32}, size_t{36}, size_t{44}, size_t{48}, size_t{112}, size_t{164}}) {
    m = bytes;
    m[at] ^= 1;  // inter-warp order, SM count, residency, two-level width, seed, offset, name
    EXPECT_EQ(errorFor(m), "scheduled file '" + bad + "': corrupt: checksum mismatch") << "byte " << at;
  }
  for (size_t at : {size_t{18}, size_t{19}, size_t{60}, size_t{63}}) {
    m = bytes;
    m[at] = 1;
    EXPECT_EQ(errorFor(m), "scheduled file '" + bad + "': corrupt header: reserved bytes are not zero") << at;
  }

  // A writer that is never closed removes its file; what a killed process leaves (seen here
  // through a second link to the file) is marked incomplete.
  const std::string unfinished = tempPath("unfinished.sched");
  const std::string left = tempPath("left.sched");
  {
    MemoryWorkgroupSource source(kBusyRange, buildTrace(kBusyRange, busy));
    Scheduler scheduler(source, SchedulerConfig{});
    auto writer = openStepWriter(OutputFormat::Binary, unfinished, scheduler.info());
    WarpStep s;
    while (scheduler.next(s)) writer->write(s);
    fs::create_hard_link(unfinished, left);
  }
  EXPECT_FALSE(fs::exists(unfinished));
  e = readError(left);
  EXPECT_TRUE(contains(e, "incomplete: its writer did not finish it")) << e;

  EXPECT_TRUE(contains(readError(tempPath("missing.sched")), "cannot open scheduled file"));
}

TEST(BinaryFile, Version1FilesStillRead) {
  // Version 1 is version 2 with a checksum over the steps only.
  const std::string path = tempPath("v2.sched");
  std::string bytes = busyBinary(path);
  ASSERT_EQ(bytes[8], 2);
  detail::WordHash steps;
  steps.update(reinterpret_cast<const unsigned char*>(bytes.data()) + kHeader, bytes.size() - kHeader - 16);
  bytes[8] = 1;
  for (int i = 0; i < 8; ++i) bytes[bytes.size() - 8 + i] = static_cast<char>(steps.finish() >> (8 * i));
  const std::string old = tempPath("v1.sched");
  writeBytes(old, bytes);
  EXPECT_EQ(readError(old), "");
  ScheduleReader v1(old), v2(path);
  WarpStep a, b;
  uint64_t n = 0;
  while (v2.next(b)) {
    ASSERT_TRUE(v1.next(a));
    EXPECT_EQ(stepText(a, true), stepText(b, true));
    ++n;
  }
  EXPECT_FALSE(v1.next(a));
  EXPECT_GT(n, 10u);
  // The version-2 checksum does not pass as a version-1 one.
  bytes = busyBinary(path);
  bytes[8] = 1;
  writeBytes(old, bytes);
  EXPECT_EQ(readError(old), "scheduled file '" + old + "': corrupt: checksum mismatch");
}

// ---------------------------------------------------------------------------------------
// Configuration

std::string configError(const SchedulerConfig& c) {
  try {
    c.validate();
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

TEST(Config, InvalidFieldsAreNamed) {
  SchedulerConfig c;
  EXPECT_EQ(configError(c), "");
  c.warpSize = 0;
  EXPECT_EQ(configError(c), "scheduler: warp_size must be > 0");
  c = {};
  c.warpSize = 1024;
  c.maxThreadsPerSm = 1023;
  EXPECT_EQ(configError(c), "scheduler: max_threads_per_sm (1023) must be at least warp_size (1024)");
  c.maxThreadsPerSm = 1024;
  EXPECT_EQ(configError(c), "");
  c = {};
  c.warpSize = 2000;
  EXPECT_EQ(configError(c), "scheduler: warp_size must be <= 1024 (got 2000)");
  c = {};
  c.smCount = 0;
  EXPECT_EQ(configError(c), "scheduler: sm_count must be > 0");
  c = {};
  c.maxWorkgroupsPerSm = 0;
  EXPECT_EQ(configError(c), "scheduler: max_workgroups_per_sm must be > 0");
  c = {};
  c.maxThreadsPerSm = 0;
  EXPECT_EQ(configError(c), "scheduler: max_threads_per_sm must be > 0");
  c = {};
  c.twoLevelActiveWarps = 0;
  EXPECT_EQ(configError(c), "scheduler: two_level_active_warps must be > 0");
  c = {};
  c.policy = static_cast<Policy>(9);
  EXPECT_EQ(configError(c),
            "scheduler: policy must be one of sequential, round-robin, random, warp");
}

TEST(Config, NamesParse) {
  EXPECT_EQ(parsePolicy("round-robin"), Policy::RoundRobin);
  EXPECT_EQ(parsePolicy("warp"), Policy::Warp);
  EXPECT_EQ(parseInterWarpOrder("two-level"), InterWarpOrder::TwoLevel);
  EXPECT_EQ(parsePolicy("WARP"), Policy::Warp);  // any case, as the cache configuration's names
  EXPECT_EQ(parseInterWarpOrder("Two-Level"), InterWarpOrder::TwoLevel);
  EXPECT_THROW(parsePolicy("warps"), std::invalid_argument);
  EXPECT_EQ(parseOutputFormat("csv"), OutputFormat::Csv);
  try {
    parsePolicy("fifo");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "scheduler: policy must be one of sequential, round-robin, random, warp (got "
                 "'fifo')");
  }
  EXPECT_THROW(parseInterWarpOrder("gto"), std::invalid_argument);
  EXPECT_THROW(parseOutputFormat("json"), std::invalid_argument);
}

TEST(Config, SchedulerChecksLaunch) {
  MemoryWorkgroupSource source(range1(2048, 2048), std::vector<WorkItemTrace>{});
  try {
    Scheduler scheduler(source, SchedulerConfig{});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "scheduler: max_threads_per_sm (1536) is smaller than the workgroup size (2048): no SM can hold "
                 "a workgroup; raise max_threads_per_sm (cltrace schedule: --max-threads-per-sm)");
  }
  SchedulerConfig c;
  c.warpSize = 0;
  MemoryWorkgroupSource small(range1(4, 4), std::vector<WorkItemTrace>{});
  EXPECT_THROW((Scheduler{small, c}), std::invalid_argument);
  EXPECT_THROW(MemoryWorkgroupSource(range1(10, 4), std::vector<WorkItemTrace>{}),
               std::invalid_argument);
  std::vector<WorkItemTrace> twice(2);
  EXPECT_THROW(MemoryWorkgroupSource(range1(4, 4), twice), std::invalid_argument);
}

// A source that yields workgroups out of order or malformed.
class BadSource final : public WorkgroupSource {
 public:
  explicit BadSource(int mode) : mode_(mode) { range_ = range1(8, 4); }
  const NDRange& range() const override { return range_; }
  bool nextWorkgroup(WorkgroupTrace& out) override {
    out.clear();
    out.id = mode_ == 0 ? 1 : 0;
    out.offsets.assign(mode_ == 1 ? 3 : 5, 0);
    if (mode_ == 2) {
      out.records.resize(1);
      out.records[0].kind = 42;
      out.offsets = {0, 1, 1, 1, 1};
    }
    return true;
  }

 private:
  int mode_;
  NDRange range_;
};

TEST(Config, MalformedSourcesAreReported) {
  auto error = [](int mode) {
    BadSource source(mode);
    Scheduler scheduler(source, oneSm());
    WarpStep s;
    try {
      scheduler.next(s);
      return std::string();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(error(0), "scheduler: workgroup source gave workgroup 1, expected 0");
  EXPECT_EQ(error(1), "scheduler: workgroup 0 has 2 work-items, the NDRange says 4");
  EXPECT_EQ(error(2), "scheduler: workgroup 0, work-item 0, record 0: unknown access kind 42");
}

// ---------------------------------------------------------------------------------------
// TraceReader adapter

TEST(TraceReaderSource, SchedulesATraceFileLikeTheMemorySource) {
  const NDRange range = range2(8, 4, 4, 2);
  const auto items = buildTrace(range, busy);
  TraceHeader header;
  header.kernelName = "busy";
  header.range = range;
  header.workItemCount = items.size();
  for (const auto& r : items) header.recordCount += r.size();
  const std::string path = tempPath("busy.trace");
  {
    TraceWriter writer(path, header);
    for (const auto& r : items) writer.writeWorkItem(r.data(), r.size());
    writer.close();
  }
  TraceReaderSource fromFile(path);
  EXPECT_EQ(fromFile.kernelName(), "busy");
  Scheduler a(fromFile, oneSm(Policy::Warp, 4));
  MemoryWorkgroupSource inMemory(range, items);
  Scheduler b(inMemory, oneSm(Policy::Warp, 4));
  const std::string expected = render(b, true);
  EXPECT_GT(expected.size(), 100u);
  EXPECT_EQ(render(a, true), expected);
}

}  // namespace
}  // namespace cltrace::sched::test
