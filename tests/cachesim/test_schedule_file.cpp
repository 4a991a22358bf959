// Simulating a binary scheduled file (cachesim/trace_simulation.h): its order, its scheduling
// keys, timing off; keys the user set must agree with the file. And simulating a trace file with
// several runs, which share the trace loaded once.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cltrace/cachesim/coalescer.h"
#include "cltrace/cachesim/printers.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/cachesim/trace_simulation.h"
#include "cltrace/scheduler/output.h"
#include "cltrace/scheduler/scheduler.h"
#include "cltrace/scheduler/source.h"
#include "cltrace/trace_file.h"

namespace cltrace::cachesim {
namespace {

namespace fs = std::filesystem;

Record loadAt(uint32_t instruction, uint64_t address) {
  Record r{};
  r.kind = static_cast<uint8_t>(AccessKind::Load);
  r.instruction = instruction;
  r.address = address;
  r.size = 4;
  return r;
}

// 128 work-items in workgroups of 64 (two warps each), dealt to 2 SMs: work-item g reads the
// float at 4g (instruction 1), then the same float again (instruction 2). With `idleFirst`
// workgroup 0 makes no access (its work-items have no records); with `storingFirst` it stores
// its floats (instruction 3) instead of reading them.
// `firstLoadBytes` is the size of work-item 64's first read.
std::string writeSchedule(const std::string& name, bool idleFirst = false, bool storingFirst = false,
                          uint32_t firstLoadBytes = 4) {
  const NDRange range = NDRange::fromSizes({128}, {64});
  std::vector<std::vector<Record>> items;
  for (uint64_t g = 0; g < 128; ++g) {
    Record store = loadAt(3, 4 * g);
    store.kind = static_cast<uint8_t>(AccessKind::Store);
    if (g >= 64) items.push_back({loadAt(1, 4 * g), loadAt(2, 4 * g)});
    else if (idleFirst) items.push_back({});
    else if (storingFirst) items.push_back({store});
    else items.push_back({loadAt(1, 4 * g), loadAt(2, 4 * g)});
  }
  items[64][0].size = firstLoadBytes;
  sched::MemoryWorkgroupSource source(range, items, "reread");
  sched::SchedulerConfig config;
  config.smCount = 2;
  sched::Scheduler scheduler(source, config);
  const std::string path = (fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".sched")).string();
  auto writer = sched::openStepWriter(sched::OutputFormat::Binary, path, scheduler.info());
  sched::writeSchedule(scheduler, *writer);
  return path;
}

Config allSms() {
  Config c;
  c.sm.kind = SmSelection::Kind::All;
  return c;
}

TEST(ScheduledFile, IsSimulatedInItsOrderWithItsSchedulingKeys) {
  const std::string path = writeSchedule("sim");
  ASSERT_TRUE(isScheduledFile(path));
  const sched::ScheduleInfo info = sched::ScheduleReader(path).info();
  const Config config = configForSchedule(allSms(), info);
  EXPECT_EQ(config.smCount, 2u);
  EXPECT_EQ(config.scheduling, "warp");  // as a trace's report spells the default order
  EXPECT_FALSE(config.timing);

  // Each warp's 32 consecutive floats are one 128-byte line: 4 warps, 4 lines, each read twice.
  Report all = simulate(config, scheduleFileStepSourceFactory(path));
  EXPECT_EQ(all.stats.requestsBeforeCoalescing, 256u);
  EXPECT_EQ(all.stats.reads, 8u);
  EXPECT_EQ(all.stats.readMisses, 4u);
  EXPECT_EQ(all.stats.misses.cold, 4u);
  EXPECT_EQ(all.stats.readHits, 4u);

  // SM 1 ran workgroup 1 alone: 2 lines, each read twice.
  Config one = config;
  one.sm = SmSelection{};
  one.sm.index = 1;
  Report sm1 = simulate(one, scheduleFileStepSourceFactory(path));
  EXPECT_EQ(sm1.stats.reads, 4u);
  EXPECT_EQ(sm1.stats.readMisses, 2u);
  EXPECT_EQ(sm1.stats.readHits, 2u);
  EXPECT_TRUE(sm1.warnings.empty());

  // Every SM of the file is busy: SM 2 does not exist there.
  one.sm.index = 2;
  EXPECT_THROW(configForSchedule(one, info), std::invalid_argument);
  fs::remove(path);
}

// The file's scheduling keys, 5 runs on a random SM each.
Config fiveRandomRuns(const std::string& path) {
  Config config = configForSchedule(Config{}, sched::ScheduleReader(path).info());
  config.runs = 5;
  config.sm.kind = SmSelection::Kind::Random;
  return config;
}

// A lane over the simulator's access limit (a foreign or crafted file) is refused with its own
// exception type, which the CLI prefixes with the file's name.
TEST(ScheduledFile, ALaneOverTheAccessLimitIsALaneSizeError) {
  const std::string path = writeSchedule("huge-lane", false, false, 2u << 20);
  const sched::ScheduleInfo info = sched::ScheduleReader(path).info();
  // Whichever SM is simulated: the lane's workgroup runs on one of the two (it was an error only
  // where the coalescer met it).
  for (uint32_t sm : {0u, 1u, Simulator::kAllSms}) {
    Config c = allSms();
    if (sm != Simulator::kAllSms) {
      c.sm.kind = SmSelection::Kind::Index;
      c.sm.index = sm;
    }
    try {
      simulate(configForSchedule(c, info), scheduleFileStepSourceFactory(path));
      ADD_FAILURE() << "no error, SM " << sm;
    } catch (const LaneSizeError& e) {
      EXPECT_STREQ(e.what(),
                   "instruction 1 accesses 2097152 bytes at once (local thread 0 of workgroup 1); the simulator "
                   "models accesses of at most 1048576 bytes");
    }
  }
  std::remove(path.c_str());
}

TEST(ScheduledFile, RandomDrawsAmongTheSmsItsStepsName) {
  // Workgroup 0 makes no access: it takes SM 0's turn, so only SM 1 (workgroup 1) ever works.
  const std::string path = writeSchedule("idle-first", true);
  Config config = fiveRandomRuns(path);
  Report random = simulate(config, scheduleFileStepSourceFactory(path));
  EXPECT_EQ(random.runs.sms, (std::vector<std::string>(5, "1")));
  EXPECT_EQ(random.stats.reads, 4u);
  EXPECT_EQ(random.stats.readMisses, 2u);
  EXPECT_TRUE(random.warnings.empty());

  config.sm = SmSelection{};  // SM 0
  Report idle = simulate(config, scheduleFileStepSourceFactory(path));
  EXPECT_EQ(idle.stats.reads, 0u);
  EXPECT_EQ(idle.warnings, (std::vector<std::string>{
                               "SM 0 receives no workgroup that makes an access (the launch keeps only SM 1 busy), so "
                               "every count is 0; choose one of those SMs, all, or random"}));
  fs::remove(path);
}

TEST(ScheduledFile, RandomDrawsAmongTheSmsItsLoadsName) {
  // SM 0's workgroup only stores: its L1 has no read miss rate, so every run simulates SM 1.
  const std::string path = writeSchedule("storing-first", false, true);
  Config config = fiveRandomRuns(path);
  Report random = simulate(config, scheduleFileStepSourceFactory(path));
  EXPECT_EQ(random.runs.sms, (std::vector<std::string>(5, "1")));
  EXPECT_EQ(random.runs.withReads, 5u);
  EXPECT_EQ(random.runs.median, 0.5);
  EXPECT_EQ(random.stats.reads, 4u);
  EXPECT_EQ(random.stats.readMisses, 2u);
  fs::remove(path);
}

TEST(ScheduledFile, KeysTheUserSetMustAgreeWithTheFile) {
  const std::string path = writeSchedule("keys");
  const sched::ScheduleInfo info = sched::ScheduleReader(path).info();
  auto message = [&](const Config& c, const std::vector<std::string>& keys) -> std::string {
    try {
      configForSchedule(c, info, keys);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  Config c;  // timing on, 15 SMs, scheduling "warp": taken from the file when not set by the user
  EXPECT_EQ(message(c, {}), "accepted");
  EXPECT_EQ(message(c, {"timing"}).rfind("configuration key 'timing': a scheduled file fixes the issue order", 0), 0u);
  EXPECT_EQ(message(c, {"sm_count"}),
            "configuration key 'sm_count': 15 disagrees with the scheduled file, which was made with 2 (schedule "
            "with --sms 15, or simulate the trace file)");
  // cltrace schedule has no register option (the hint named one): the residency is the option.
  Config regs = c;
  regs.smCount = 2;
  regs.registersPerThread = 25;
  EXPECT_EQ(message(regs, {"registers_per_thread"}),
            "configuration key 'registers_per_thread': 25 disagrees with the scheduled file, which was made with 0 "
            "(schedule with --max-workgroups-per-sm 8, the workgroups per SM these registers allow, or simulate the "
            "trace file)");
  regs.registersPerSm = 3000;  // a workgroup (2 warps of 832 registers) takes 1664: 1 fits
  EXPECT_NE(message(regs, {"registers_per_thread"}).find("--max-workgroups-per-sm 1,"), std::string::npos)
      << message(regs, {"registers_per_thread"});
  c.smCount = 2;
  c.timing = false;
  EXPECT_EQ(message(c, {"sm_count", "timing", "scheduling", "warp_size"}), "accepted");  // "warp" = warp:loose-round-robin
  c.scheduling = "warp:two-level";
  EXPECT_EQ(message(c, {"scheduling"}),
            "configuration key 'scheduling': \"warp:two-level\" disagrees with the scheduled file, which was made "
            "with \"warp\" (schedule with --policy warp --inter-warp two-level, or simulate the "
            "trace file)");
  // The naive policies have no inter-warp order: the options given are the ones schedule takes.
  c.scheduling = "round-robin";
  EXPECT_NE(message(c, {"scheduling"}).find("(schedule with --policy round-robin, or simulate the trace file)"),
            std::string::npos)
      << message(c, {"scheduling"});
  c.scheduling = "warp";
  c.warpSize = 16;
  EXPECT_NE(message(c, {"warp_size"}).find("(schedule with --warp-size 16, or"), std::string::npos);
  c.warpSize = 32;
  c.maxThreadsPerSm = 1024;
  EXPECT_NE(message(c, {"max_threads_per_sm"}).find("(schedule with --max-threads-per-sm 1024, or"), std::string::npos);
  c.maxWorkgroupsPerSm = 3;
  EXPECT_NE(message(c, {"max_workgroups_per_sm"}).find("(schedule with --max-workgroups-per-sm 3, or"),
            std::string::npos);
  fs::remove(path);
}

TEST(ScheduledFile, OtherFilesAreNotTakenForOneAndACutFileIsAnError) {
  const std::string path = writeSchedule("cut");
  EXPECT_FALSE(isScheduledFile(path + ".missing"));
  const std::string other = path + ".other";
  std::ofstream(other, std::ios::binary) << "CLTRACE\x01 not a schedule";
  EXPECT_FALSE(isScheduledFile(other));
  fs::remove(other);

  const Config config = configForSchedule(allSms(), sched::ScheduleReader(path).info());
  fs::resize_file(path, fs::file_size(path) - 10);
  try {
    simulate(config, scheduleFileStepSourceFactory(path));
    ADD_FAILURE() << "a cut file was simulated";
  } catch (const sched::ScheduleFileError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

// The launch of writeSchedule() as a trace file; `cut` drops that many bytes from its end.
std::string writeTrace(const std::string& name, size_t cut = 0) {
  TraceHeader header;
  header.kernelName = "reread";
  header.range = NDRange::fromSizes({128}, {64});
  header.workItemCount = 128;
  header.recordCount = 256;
  const std::string path = (fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".trace")).string();
  {
    TraceWriter writer(path, header);
    for (uint64_t g = 0; g < 128; ++g) writer.writeWorkItem({loadAt(1, 4 * g), loadAt(2, 4 * g)});
    writer.close();
  }
  if (cut) fs::resize_file(path, fs::file_size(path) - cut);
  return path;
}

std::string errorOf(const Config& config, const StepSourceFactory& factory) {
  try {
    simulate(config, factory);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// The memory for a trace loaded once for several runs is a quarter of what the process may
// use: its address-space limit too, not only the machine's memory (checked in a child process,
// which takes the limit).
TEST(TraceFile, PreparedTraceBudgetFollowsTheAddressSpaceLimit) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory is over any such limit";
#endif
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    rlimit limit{uint64_t{2} << 30, uint64_t{2} << 30};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(2);
    ::_exit(defaultPreparedTraceBytes() == (uint64_t{512} << 20) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2 GiB of address space should give 512 MiB";
}

TEST(TraceFile, RunsThatShareTheLoadedTraceCountAsRunsThatReadIt) {
  const std::string path = writeTrace("shared");
  Config config = allSms();
  config.smCount = 2;
  config.timing = false;
  config.runs = 3;
  // Every run: 4 warps, each reading its line twice (as the scheduled file above).
  for (uint64_t budget : {uint64_t{0}, uint64_t{1} << 20}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    Report r = simulate(config, traceStepSourceFactory(path, config, {}, budget), {}, 2);
    EXPECT_EQ(r.runs.count, 3u);
    EXPECT_EQ(r.stats.requestsBeforeCoalescing, 256u);
    EXPECT_EQ(r.stats.reads, 8u);
    EXPECT_EQ(r.stats.readMisses, 4u);
    EXPECT_EQ(r.stats.misses.cold, 4u);
    EXPECT_EQ(r.stats.readHits, 4u);
  }
  // With the timing model and SMs chosen at random, the runs differ, alike in both ways.
  config.timing = true;
  config.sm = SmSelection{};
  config.sm.kind = SmSelection::Kind::Random;
  config.runs = 6;
  Report streamed = simulate(config, traceStepSourceFactory(path, config, {}, 0), {}, 2);
  Report shared = simulate(config, traceStepSourceFactory(path, config, {}, uint64_t{1} << 20), {}, 2);
  EXPECT_EQ(streamed.runs.values, shared.runs.values);
  EXPECT_EQ(streamed.runs.sms, shared.runs.sms);
  EXPECT_EQ(reportToJson(streamed).dump(), reportToJson(shared).dump());
  // Nor does reading the file on the runs' own threads change anything.
  Report streamedHere = simulate(config, traceStepSourceFactory(path, config, {}, 0, false), {}, 2);
  Report sharedHere = simulate(config, traceStepSourceFactory(path, config, {}, uint64_t{1} << 20, false), {}, 2);
  EXPECT_EQ(reportToJson(streamedHere).dump(), reportToJson(streamed).dump());
  EXPECT_EQ(reportToJson(sharedHere).dump(), reportToJson(streamed).dump());

  // Only the first run reads the file when runs share it.
  StepSourceFactory sharing = traceStepSourceFactory(path, config, {}, uint64_t{1} << 20);
  StepSourceFactory reading = traceStepSourceFactory(path, config, {}, 0);
  EXPECT_TRUE(sharing(config.seed));
  fs::remove(path);
  EXPECT_TRUE(sharing(config.seed + 1));
  EXPECT_THROW(reading(config.seed), TraceFileError);
}

TEST(TraceFile, ACutTraceFailsAlikeWhetherRunsShareItOrNot) {
  const std::string path = writeTrace("cut", 8);
  Config config = allSms();
  config.runs = 4;
  const std::string streamed = errorOf(config, traceStepSourceFactory(path, config, {}, 0));
  EXPECT_NE(streamed.find("cut-"), std::string::npos) << streamed;  // names the file
  EXPECT_EQ(errorOf(config, traceStepSourceFactory(path, config, {}, uint64_t{1} << 20)), streamed);
  EXPECT_EQ(errorOf(config, traceStepSourceFactory(path, config, {}, 0, false)), streamed);
  EXPECT_EQ(errorOf(config, traceStepSourceFactory(path, config, {}, uint64_t{1} << 20, false)), streamed);
  fs::remove(path);
}

}  // namespace
}  // namespace cltrace::cachesim
