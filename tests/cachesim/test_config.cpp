// Configuration loading and errors, and the printers.
#include <gtest/gtest.h>

#include <cmath>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/printers.h"
#include "cltrace/cachesim/trace_simulation.h"
#include "fake_step_source.h"
#include "message_of.h"

namespace cltrace::cachesim {
namespace {

using nlohmann::json;

std::string overrideError(const std::vector<std::string>& overrides, const std::string& base = "gtx480-16k") {
  return messageOf<std::invalid_argument>([&] { loadConfig(base, overrides); });
}

TEST(Config, PresetsAndDefaults) {
  Config d = loadConfig("");
  EXPECT_EQ(d.presetName, "gtx480-16k");
  EXPECT_EQ(d.size, 16384u);
  EXPECT_EQ(d.lineSize, 128u);
  EXPECT_EQ(d.associativity, 4u);
  EXPECT_EQ(d.sets(), 32u);
  EXPECT_EQ(d.lines(), 128u);
  EXPECT_EQ(d.setIndex, SetIndexFunction::FermiXor);
  EXPECT_EQ(d.replacement, Replacement::LRU);
  EXPECT_EQ(d.writePolicy, WritePolicy::WriteThroughNoAllocate);
  EXPECT_EQ(d.mshrs, 64u);
  EXPECT_EQ(d.mshrsPerWarp, 6u);
  EXPECT_TRUE(d.timing);
  EXPECT_EQ(d.minLatency, 100u);
  EXPECT_DOUBLE_EQ(d.latencySigma, 5.0);
  EXPECT_EQ(d.smCount, 15u);
  EXPECT_EQ(d.maxWorkgroupsPerSm, 8u);
  EXPECT_EQ(d.maxThreadsPerSm, 1536u);
  EXPECT_EQ(d.warpSize, 32u);

  Config c = loadConfig("gtx470-48k");
  EXPECT_EQ(c.size, 49152u);
  EXPECT_EQ(c.associativity, 6u);
  EXPECT_EQ(c.sets(), 64u);
  EXPECT_EQ(c.smCount, 14u);
  EXPECT_EQ(loadConfig("gtx480-48k").smCount, 15u);
  EXPECT_EQ(loadConfig("gtx470-16k").sets(), 32u);
  EXPECT_EQ(loadConfig("gtx470-16k").smCount, 14u);
}

TEST(Config, OverridesParseEveryKey) {
  Config c = loadConfig("gtx480-16k", {"size=32K", "line_size=64", "associativity=8", "set_index=linear",
                                       "replacement=mfu", "write_policy=wbwa", "timing=off", "mshrs=unlimited",
                                       "mshrs_per_warp=3", "min_latency=400", "latency_sigma=12.5",
                                       "hit_latency=2", "sm_count=16", "max_workgroups_per_sm=4",
                                       "max_threads_per_sm=1024", "warp_size=16", "scheduling=round-robin",
                                       "sm=random", "runs=20", "seed=99", "classify=off"});
  EXPECT_EQ(c.size, 32768u);
  EXPECT_EQ(c.lineSize, 64u);
  EXPECT_EQ(c.associativity, 8u);
  EXPECT_EQ(c.sets(), 64u);
  EXPECT_EQ(c.setIndex, SetIndexFunction::Linear);
  EXPECT_EQ(c.replacement, Replacement::MFU);
  EXPECT_EQ(c.writePolicy, WritePolicy::WriteBackAllocate);
  EXPECT_FALSE(c.timing);
  EXPECT_EQ(c.mshrs, 0u);
  EXPECT_EQ(c.mshrsPerWarp, 3u);
  EXPECT_EQ(c.minLatency, 400u);
  EXPECT_DOUBLE_EQ(c.latencySigma, 12.5);
  EXPECT_EQ(c.hitLatency, 2u);
  EXPECT_EQ(c.smCount, 16u);
  EXPECT_EQ(c.maxWorkgroupsPerSm, 4u);
  EXPECT_EQ(c.maxThreadsPerSm, 1024u);
  EXPECT_EQ(c.warpSize, 16u);
  EXPECT_EQ(c.scheduling, "round-robin");
  EXPECT_EQ(c.sm.kind, SmSelection::Kind::Random);
  EXPECT_EQ(c.runs, 20u);
  EXPECT_EQ(c.seed, 99u);
  EXPECT_FALSE(c.classify);
  EXPECT_EQ(loadConfig("gtx480-16k", {"sm=all"}).sm.kind, SmSelection::Kind::All);
  Config idx = loadConfig("gtx480-16k", {"sm=7"});
  EXPECT_EQ(idx.sm.kind, SmSelection::Kind::Index);
  EXPECT_EQ(idx.sm.index, 7u);
}

TEST(Config, ErrorsNameTheKey) {
  EXPECT_NE(overrideError({"foo=1"}).find("'foo'"), std::string::npos);
  EXPECT_NE(overrideError({"size=1000"}).find("'size'"), std::string::npos);
  EXPECT_NE(overrideError({"size=lots"}).find("'size'"), std::string::npos);
  EXPECT_NE(overrideError({"size=0"}).find("'size'"), std::string::npos);
  EXPECT_NE(overrideError({"line_size=100", "size=1600", "set_index=linear", "associativity=1"}).find("'line_size'"),
            std::string::npos);
  EXPECT_NE(overrideError({"associativity=0"}).find("'associativity'"), std::string::npos);
  EXPECT_NE(overrideError({"size=64K"}).find("'set_index'"), std::string::npos);  // 128 sets
  EXPECT_NE(overrideError({"associativity=16"}).find("'set_index'"), std::string::npos);  // 8 sets
  EXPECT_NE(overrideError({"set_index=modulo"}).find("'set_index'"), std::string::npos);
  EXPECT_NE(overrideError({"replacement=bogus"}).find("'replacement'"), std::string::npos);
  EXPECT_NE(overrideError({"write_policy=wb"}).find("'write_policy'"), std::string::npos);
  EXPECT_NE(overrideError({"timing=maybe"}).find("'timing'"), std::string::npos);
  EXPECT_NE(overrideError({"mshrs=-1"}).find("'mshrs'"), std::string::npos);
  EXPECT_NE(overrideError({"mshrs_per_warp=x"}).find("'mshrs_per_warp'"), std::string::npos);
  EXPECT_NE(overrideError({"latency_sigma=-2"}).find("'latency_sigma'"), std::string::npos);
  EXPECT_NE(overrideError({"latency_sigma=nan"}).find("'latency_sigma'"), std::string::npos);
  EXPECT_NE(overrideError({"min_latency=1.5"}).find("'min_latency'"), std::string::npos);
  EXPECT_NE(overrideError({"sm=15"}).find("'sm'"), std::string::npos);
  EXPECT_NE(overrideError({"sm=some"}).find("'sm'"), std::string::npos);
  EXPECT_NE(overrideError({"sm_count=0"}).find("'sm_count'"), std::string::npos);
  EXPECT_NE(overrideError({"warp_size=0"}).find("'warp_size'"), std::string::npos);
  EXPECT_NE(overrideError({"max_threads_per_sm=16"}).find("'max_threads_per_sm'"), std::string::npos);
  EXPECT_NE(overrideError({"max_workgroups_per_sm=0"}).find("'max_workgroups_per_sm'"), std::string::npos);
  EXPECT_NE(overrideError({"registers_per_thread=many"}).find("'registers_per_thread'"), std::string::npos);
  EXPECT_NE(overrideError({"registers_per_sm=0"}).find("'registers_per_sm'"), std::string::npos);
  EXPECT_NE(messageOf<std::invalid_argument>([] { loadConfig("/tmp"); }).find("config file '/tmp' is a directory"), std::string::npos);
  EXPECT_NE(overrideError({"registers_per_thread=20", "registers_per_sm=0"}).find("'registers_per_sm'"),
            std::string::npos);
  EXPECT_NE(overrideError({"runs=0"}).find("'runs'"), std::string::npos);
  EXPECT_NE(overrideError({"seed=99999999999999999999999"}).find("'seed'"), std::string::npos);
  EXPECT_NE(overrideError({"scheduling="}).find("'scheduling'"), std::string::npos);
  EXPECT_NE(overrideError({"classify=2"}).find("'classify'"), std::string::npos);
  EXPECT_NE(overrideError({"hit_latency=soon"}).find("'hit_latency'"), std::string::npos);
  EXPECT_NE(overrideError({"noequals"}).find("noequals"), std::string::npos);
  EXPECT_NE(overrideError({}, "gtx999-1k").find("preset"), std::string::npos);
  EXPECT_EQ(overrideError({"size=16K", "set_index=linear", "associativity=3", "size=12K"}), "");  // 32 sets of 3
  // Whole lines that do not make whole sets name the ways; a size of no whole lines names the size.
  EXPECT_EQ(overrideError({"associativity=3"}),
            "configuration key 'associativity': 3 ways of 128-byte lines (384 bytes a set) do not divide size 16384 "
            "into whole sets");
  EXPECT_EQ(overrideError({"associativity=256", "set_index=linear"}),
            "configuration key 'associativity': 256 ways of 128-byte lines (32768 bytes a set) do not divide size "
            "16384 into whole sets");
  EXPECT_EQ(overrideError({"size=1000"}),
            "configuration key 'size': 1000 bytes is not a positive multiple of line_size * associativity (512 bytes)");
}

std::string writeTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Config, ExactMessagesForOddNumbers) {
  EXPECT_EQ(overrideError({"runs=1000000000"}),
            "invalid value '1000000000' for configuration key 'runs': too large (at most 100000)");
  EXPECT_EQ(overrideError({"runs=100000"}), "");
  EXPECT_EQ(overrideError({"latency_sigma=0x1p3"}),
            "invalid value '0x1p3' for configuration key 'latency_sigma': expected a decimal number");
  EXPECT_EQ(overrideError({"latency_sigma=inf"}),
            "invalid value 'inf' for configuration key 'latency_sigma': expected a decimal number");
  EXPECT_EQ(overrideError({"latency_sigma=2.5e1"}), "");
  EXPECT_EQ(loadConfig("", {"latency_sigma=1e-320"}).latencySigma, 0.0);  // below the doubles: 0
  EXPECT_FALSE(std::signbit(loadConfig("", {"latency_sigma=-0"}).latencySigma));  // -0 is 0, not "-0.0"
  EXPECT_EQ(overrideError({"latency_sigma=1e400"}),
            "invalid value '1e400' for configuration key 'latency_sigma': out of range");
  EXPECT_EQ(overrideError({"set_index=linear", "size=64M"}), "");
  EXPECT_EQ(overrideError({"set_index=linear", "size=67108992"}),
            "configuration key 'size': 67108992 bytes is over the model's limit of 64 MiB");
  EXPECT_EQ(overrideError({"scheduling=warp:oldest"}),
            "invalid value 'warp:oldest' for configuration key 'scheduling': scheduler: inter_warp must be one "
            "of loose-round-robin, greedy-then-oldest, two-level (got 'oldest')");
  EXPECT_EQ(overrideError({"size=16.5K"}),
            "invalid value '16.5K' for configuration key 'size': expected a non-negative integer");
  // Control characters are shown escaped, not sent to the terminal.
  EXPECT_EQ(overrideError({"size=\x01"}),
            "invalid value '\\x01' for configuration key 'size': expected a non-negative integer");
  EXPECT_EQ(overrideError({"si\x1bze=1"}).substr(0, 36), "unknown configuration key 'si\\x1bze'");
  // The derived keys a report shows name what to set instead.
  EXPECT_EQ(overrideError({"sets=64"}),
            "configuration key 'sets' is derived, size / (line_size * associativity): set size, line_size or "
            "associativity instead");
  EXPECT_EQ(overrideError({"lines=256"}),
            "configuration key 'lines' is derived, size / line_size: set size or line_size instead");
  // JSON numbers past 64 bits arrive as doubles: too large, not a misread exponent.
  std::string huge = writeTemp("cachesim_huge.json", R"({"size": 18446744073709551616})");
  EXPECT_NE(messageOf<std::invalid_argument>([&] { loadConfig(huge); })
                .find("invalid value '18446744073709551616' for configuration key 'size': too large"),
            std::string::npos);
  // Far past it, as written rather than in 301 digits.
  std::string vast = writeTemp("cachesim_vast.json", R"({"size": 1e300})");
  EXPECT_NE(messageOf<std::invalid_argument>([&] { loadConfig(vast); })
                .find("invalid value 1e+300 for configuration key 'size': too large"),
            std::string::npos);
  std::string fraction = writeTemp("cachesim_fraction.json", R"({"associativity": 4.5})");
  EXPECT_NE(messageOf<std::invalid_argument>([&] { loadConfig(fraction); })
                .find("invalid value '4.5' for configuration key 'associativity': expected a non-negative integer"),
            std::string::npos);
}

// The scheduler's bounds are the configuration's: errors name the key set, not 'scheduling'.
TEST(Config, GpuLimitsNameTheirKeys) {
  EXPECT_EQ(overrideError({"sm_count=5000"}),
            "invalid value '5000' for configuration key 'sm_count': too large (at most 4096)");
  EXPECT_EQ(overrideError({"warp_size=2048"}),
            "invalid value '2048' for configuration key 'warp_size': too large (at most 1024)");
  EXPECT_EQ(overrideError({"sm_count=4096", "warp_size=1024"}), "");
  // A Config built in code skips the parser: validate() has the same bounds.
  Config c = loadConfig("gtx480-16k");
  c.smCount = 5000;
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { c.validate(); }),
            "configuration key 'sm_count': 5000 is over the limit of 4096");
  c.smCount = 15;
  c.warpSize = 2048;
  c.maxThreadsPerSm = 4096;
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { c.validate(); }),
            "configuration key 'warp_size': 2048 is over the limit of 1024");
}

// The tags of every L1 are held, so the lines are bounded per L1 and over all SMs.
TEST(Config, LinesAreBounded) {
  EXPECT_EQ(overrideError({"set_index=linear", "size=64M", "line_size=1"}),
            "configuration key 'line_size': 67108864 bytes of 1-byte lines are 67108864 lines, over the model's "
            "limit of 2097152 per L1");
  EXPECT_EQ(overrideError({"set_index=linear", "size=64M", "line_size=32"}), "");  // 2 Mi lines, 15 SMs
  EXPECT_EQ(overrideError({"set_index=linear", "size=64M", "sm_count=4096"}),
            "configuration keys 'sm_count' and 'size': 4096 SMs of 524288 lines are 2147483648 lines, over the "
            "model's limit of 33554432 over all SMs");
  EXPECT_EQ(overrideError({"set_index=linear", "size=64M", "line_size=32", "sm_count=16"}), "");  // 2^25 lines
  EXPECT_EQ(overrideError({"sm_count=4096"}), "");  // 128 lines each
}

// line_size is a size like `size`: the same suffixes (it refused them, though the docs said
// sizes take them).
TEST(Config, LineSizeTakesSizeSuffixes) {
  EXPECT_EQ(loadConfig("gtx480-16k", {"set_index=linear", "line_size=1K", "associativity=1"}).lineSize, 1024u);
  EXPECT_EQ(loadConfig("gtx480-16k", {"set_index=linear", "line_size=1KiB", "associativity=1"}).lineSize, 1024u);
  EXPECT_EQ(loadConfig("gtx480-16k", {"set_index=linear", "size=64M", "line_size=1M", "associativity=1"}).lineSize,
            1048576u);
  EXPECT_EQ(overrideError({"line_size=4G"}),
            "invalid value '4G' for configuration key 'line_size': unknown size suffix 'g' (use K or M)");
  EXPECT_EQ(overrideError({"line_size=4096M"}),
            "invalid value '4096M' for configuration key 'line_size': too large (at most 4294967295)");
}

// Every named value is read in any case, scheduling too (it was case-sensitive), and kept in
// the scheduler's lower-case spelling.
TEST(Config, NamesInAnyCase) {
  EXPECT_EQ(loadConfig("gtx480-16k", {"scheduling=WARP"}).scheduling, "warp");
  EXPECT_EQ(loadConfig("gtx480-16k", {"scheduling=Warp:Greedy-Then-Oldest"}).scheduling, "warp:greedy-then-oldest");
  // One spelling per choice: the default order is left out (a scheduled file's report says "warp" too).
  EXPECT_EQ(loadConfig("gtx480-16k", {"scheduling=warp:loose-round-robin"}).scheduling, "warp");
  EXPECT_EQ(loadConfig("gtx480-16k", {"scheduling=Random"}).scheduling, "random");
  EXPECT_EQ(overrideError({"scheduling=sequential:two-level"}),
            "invalid value 'sequential:two-level' for configuration key 'scheduling': an inter-warp order applies to "
            "the warp policy only");
  EXPECT_EQ(loadConfig("gtx480-16k", {"set_index=XOR"}).setIndex, SetIndexFunction::FermiXor);
  EXPECT_EQ(loadConfig("gtx480-16k", {"replacement=Rand"}).replacement, Replacement::Random);
  EXPECT_EQ(overrideError({"scheduling=WARPS"}),
            "invalid value 'WARPS' for configuration key 'scheduling': scheduler: policy must be one of sequential, "
            "round-robin, random, warp (got 'warps')");
}

TEST(Config, RegisterLimitedResidency) {
  Config c = loadConfig("gtx480-16k", {});
  EXPECT_EQ(c.registersPerThread, 0u);
  EXPECT_EQ(c.registersPerSm, 32768u);
  EXPECT_EQ(registerLimitedWorkgroups(c, 256), UINT32_MAX);  // registers not given: no limit
  // 256 threads = 8 warps; per warp ceil(r * 32 / 64) * 64 registers; 32768 per SM.
  c.registersPerThread = 20;  // 640 per warp, 5120 per workgroup: 6.4
  EXPECT_EQ(registerLimitedWorkgroups(c, 256), 6u);
  c.registersPerThread = 21;  // 672 -> 704 per warp, 5632: 5.8
  EXPECT_EQ(registerLimitedWorkgroups(c, 256), 5u);
  c.registersPerThread = 25;  // 800 -> 832, 6656: 4.9 (the thesis's 4 per SM for 16x16 groups)
  EXPECT_EQ(registerLimitedWorkgroups(c, 256), 4u);
  c.registersPerThread = 63;  // 2016 -> 2048, 16384: 2
  EXPECT_EQ(registerLimitedWorkgroups(c, 256), 2u);
  c.registersPerThread = 10;  // 100 threads = 4 warps (the last partial) of 320: 1280 -> 25.6
  EXPECT_EQ(registerLimitedWorkgroups(c, 100), 25u);
  c.registersPerThread = 25;
  c.registersPerSm = 6000;  // not even one workgroup of 6656
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { registerLimitedWorkgroups(c, 256); }),
            "configuration keys 'registers_per_thread' and 'registers_per_sm': a workgroup of 256 threads needs "
            "6656 registers, the SM has 6000");
}

TEST(Config, WorkgroupSizeLimit) {
  Config c = loadConfig("gtx470-48k", {});
  EXPECT_EQ(c.maxThreadsPerWorkgroup, 1024u);
  NDRange range = NDRange::fromSizes({3072}, {1024});
  // Accepted (the scheduler applies max_threads_per_sm itself: one of them an SM).
  EXPECT_EQ(withResidencyLimits(schedulerConfigFor(c, 1), c, range).maxWorkgroupsPerSm, 8u);
  range = NDRange::fromSizes({3072}, {1536});
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { withResidencyLimits(schedulerConfigFor(c, 1), c, range); }),
            "configuration key 'max_threads_per_workgroup': a workgroup of the launch has 1536 work-items, more "
            "than the 1024 the GPU runs in one, so it would refuse the launch (0 lifts the limit)");
  c = loadConfig("gtx470-48k", {"max_threads_per_workgroup=0", "max_local_size_x=0"});
  EXPECT_EQ(withResidencyLimits(schedulerConfigFor(c, 1), c, range).maxWorkgroupsPerSm, 8u);
  range = NDRange::fromSizes({64, 64}, {32, 48});  // 1536 in two dimensions
  c = loadConfig("gtx470-48k", {"max_threads_per_workgroup=1535"});
  EXPECT_THROW(withResidencyLimits(schedulerConfigFor(c, 1), c, range), std::invalid_argument);
  EXPECT_NE(messageOf<std::invalid_argument>([] { loadConfig("gtx480-16k", {"max_threads_per_workgroup=-1"}); })
                .find("'max_threads_per_workgroup'"),
            std::string::npos);
  // Without that limit a workgroup over max_threads_per_sm (1536) is refused under that key, where
  // the scheduler's message named cltrace schedule's option.
  c = loadConfig("gtx470-48k", {"max_threads_per_workgroup=0", "max_local_size_x=0"});
  range = NDRange::fromSizes({2560}, {2560});
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { withResidencyLimits(schedulerConfigFor(c, 1), c, range); }),
            "configuration key 'max_threads_per_sm': a workgroup of the launch has 2560 work-items, more than the "
            "1536 threads an SM holds, so no SM can run it");
  c = loadConfig("gtx470-48k", {"max_threads_per_workgroup=0", "max_local_size_x=0", "max_threads_per_sm=2560"});
  EXPECT_EQ(withResidencyLimits(schedulerConfigFor(c, 1), c, range).maxWorkgroupsPerSm, 8u);
}

TEST(Config, LocalSizeLimitPerDimension) {
  Config c = loadConfig("gtx480-16k", {});
  EXPECT_EQ(c.maxLocalSize, (std::array<uint32_t, 3>{1024, 1024, 64}));
  // 2 x 2 x 64 = 256 work-items: at the z limit, accepted (1536 / 256 = 6 workgroups an SM).
  NDRange range = NDRange::fromSizes({4, 4, 128}, {2, 2, 64});
  EXPECT_EQ(withResidencyLimits(schedulerConfigFor(c, 1), c, range).maxWorkgroupsPerSm, 8u);
  // 1 x 1 x 128: 128 work-items, far under 1024, but over 64 along z.
  range = NDRange::fromSizes({1, 1, 256}, {1, 1, 128});
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { withResidencyLimits(schedulerConfigFor(c, 1), c, range); }),
            "configuration key 'max_local_size_z': the launch's local size is 128 along dimension 2, more than the 64 "
            "the GPU allows there, so it would refuse the launch (0 lifts the limit)");
  c = loadConfig("gtx480-16k", {"max_local_size_z=0"});
  EXPECT_EQ(withResidencyLimits(schedulerConfigFor(c, 1), c, range).maxWorkgroupsPerSm, 8u);
  // Along x and y, each under its own key; a 1D launch's local size is its x.
  c = loadConfig("gtx480-16k", {"max_local_size_x=256", "max_local_size_y=8"});
  range = NDRange::fromSizes({512}, {512});
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { withResidencyLimits(schedulerConfigFor(c, 1), c, range); }),
            "configuration key 'max_local_size_x': the launch's local size is 512 along dimension 0, more than the 256 "
            "the GPU allows there, so it would refuse the launch (0 lifts the limit)");
  range = NDRange::fromSizes({32, 32}, {16, 16});
  EXPECT_NE(messageOf<std::invalid_argument>([&] { withResidencyLimits(schedulerConfigFor(c, 1), c, range); })
                .find("'max_local_size_y': the launch's local size is 16 along dimension 1, more than the 8 "),
            std::string::npos);
  range = NDRange::fromSizes({256, 16}, {128, 8});
  EXPECT_EQ(withResidencyLimits(schedulerConfigFor(c, 1), c, range).maxWorkgroupsPerSm, 8u);
  // The keys are in the configuration's JSON and refuse what is not a count.
  EXPECT_EQ(c.toJson()["max_local_size_x"], 256);
  EXPECT_EQ(c.toJson()["max_local_size_z"], 64);
  EXPECT_NE(messageOf<std::invalid_argument>([] { loadConfig("gtx480-16k", {"max_local_size_y=-2"}); })
                .find("'max_local_size_y'"),
            std::string::npos);
}

TEST(Config, LocalMemoryLimitedResidency) {
  Config c = loadConfig("gtx480-16k", {});
  EXPECT_EQ(c.localMemoryPerSm, 49152u);  // 48 KB of shared memory beside a 16 KB L1
  EXPECT_EQ(loadConfig("gtx470-48k", {}).localMemoryPerSm, 16384u);
  EXPECT_EQ(loadConfig("gtx480-16k", {"local_memory_per_sm=32K"}).localMemoryPerSm, 32768u);
  EXPECT_EQ(localMemoryLimitedWorkgroups(c, 0), UINT32_MAX);  // no __local memory: no limit
  EXPECT_EQ(localMemoryLimitedWorkgroups(c, 32768), 1u);      // 48 KB / 32 KB
  EXPECT_EQ(localMemoryLimitedWorkgroups(c, 2048), 24u);      // a 2x16x16-float tile pair
  EXPECT_EQ(localMemoryLimitedWorkgroups(c, 6145), 7u);       // 6272 bytes in 128-byte units: 7.8
  EXPECT_EQ(localMemoryLimitedWorkgroups(c, 1), 384u);        // one unit
  // The residency a run schedules with: the least of the three limits.
  NDRange range = NDRange::fromSizes({30720}, {256});
  range.localMemoryBytes = 32768;
  EXPECT_EQ(withResidencyLimits(schedulerConfigFor(c, 1), c, range).maxWorkgroupsPerSm, 1u);
  range.localMemoryBytes = 12288;  // 4 fit, of the 8 allowed
  EXPECT_EQ(withResidencyLimits(schedulerConfigFor(c, 1), c, range).maxWorkgroupsPerSm, 4u);
  range.localMemoryBytes = 1024;  // 48, but 8 workgroups at most (and 1536 threads: 6 of 256)
  EXPECT_EQ(withResidencyLimits(schedulerConfigFor(c, 1), c, range).maxWorkgroupsPerSm, 8u);
  c.localMemoryPerSm = 0;  // no limit
  range.localMemoryBytes = 1u << 30;
  EXPECT_EQ(withResidencyLimits(schedulerConfigFor(c, 1), c, range).maxWorkgroupsPerSm, 8u);
  c = loadConfig("gtx480-48k", {});
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { localMemoryLimitedWorkgroups(c, 32768); }),
            "configuration key 'local_memory_per_sm': a workgroup of the kernel uses 32768 bytes of __local memory, "
            "more than the 16384 an SM has, so the GPU would refuse the launch (the 48k presets leave 16 KB)");
}

TEST(Config, JsonFiles) {
  std::string good = writeTemp("cachesim_good.json",
                               R"({"preset": "gtx470-48k", "replacement": "lfu", "timing": false,
                                   "latency_sigma": 7.5, "mshrs": 32, "sm": "all", "size": "48K"})");
  Config c = loadConfig(good, {"runs=5"});
  EXPECT_EQ(c.smCount, 14u);
  EXPECT_EQ(c.sets(), 64u);
  EXPECT_EQ(c.replacement, Replacement::LFU);
  EXPECT_FALSE(c.timing);
  EXPECT_DOUBLE_EQ(c.latencySigma, 7.5);
  EXPECT_EQ(c.mshrs, 32u);
  EXPECT_EQ(c.sm.kind, SmSelection::Kind::All);
  EXPECT_EQ(c.runs, 5u);

  std::string unknown = writeTemp("cachesim_unknown.json", R"({"size": 16384, "bogus": 1})");
  std::string e = messageOf<std::invalid_argument>([&] { loadConfig(unknown); });
  EXPECT_NE(e.find("'bogus'"), std::string::npos);
  EXPECT_NE(e.find(unknown), std::string::npos);

  std::string badType = writeTemp("cachesim_badtype.json", R"({"associativity": [4]})");
  EXPECT_NE(messageOf<std::invalid_argument>([&] { loadConfig(badType); }).find("'associativity'"), std::string::npos);
  std::string negative = writeTemp("cachesim_negative.json", R"({"mshrs": -3})");
  EXPECT_NE(messageOf<std::invalid_argument>([&] { loadConfig(negative); }).find("'mshrs'"), std::string::npos);
  std::string broken = writeTemp("cachesim_broken.json", R"({"size": )");
  EXPECT_NE(messageOf<std::invalid_argument>([&] { loadConfig(broken); }).find("not valid JSON"), std::string::npos);
  // nlohmann's tag ("[json.exception.out_of_range.406] ") is left out of the message.
  std::string overflow = writeTemp("cachesim_overflow.json", R"({"size": 1e999})");
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { loadConfig(overflow); }),
            "config file '" + overflow + "': not valid JSON: number overflow parsing '1e999'");
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { loadConfig("/nonexistent/x.json"); }),
            "config file '/nonexistent/x.json': cannot be opened: No such file or directory");
  std::string wrongSets = writeTemp("cachesim_sets.json", R"({"sets": 64})");
  EXPECT_NE(messageOf<std::invalid_argument>([&] { loadConfig(wrongSets); }).find("'sets'"), std::string::npos);
  // Derived keys written as whole floats agree as the other keys do (32.0 was refused).
  std::string floatSets = writeTemp("cachesim_float_sets.json", R"({"size": 16384.0, "sets": 32.0, "lines": 128.0})");
  EXPECT_EQ(loadConfig(floatSets).sets(), 32u);
  std::string halfSets = writeTemp("cachesim_half_sets.json", R"({"sets": 32.5})");
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { loadConfig(halfSets); }),
            "config file '" + halfSets + "': configuration key 'sets': 32.5 disagrees with the derived value 32");

  // Refused while parsing: a value nested deeper than a configuration needs (printing one
  // 100000 deep in a message overflowed the stack), and a key given twice.
  std::string deep = writeTemp("cachesim_deep.json", "{\"size\":" + std::string(100000, '[') + std::string(100000, ']') + "}");
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { loadConfig(deep); }),
            "config file '" + deep + "': values nested more than 16 deep (a configuration is one object of numbers and names)");
  std::string nested = writeTemp("cachesim_nested.json", R"({"size": [[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]})");
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { loadConfig(nested); }),
            "config file '" + nested + "': invalid value [[[[[[[[[[[[[[[1]]]]]]]]]]]]]]] for configuration key 'size': "
            "expected a number, string or boolean");
  std::string twice = writeTemp("cachesim_twice.json", R"({"size": 16384, "mshrs": 8, "size": 32768})");
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { loadConfig(twice); }), "config file '" + twice + "': configuration key 'size' is given twice");
  std::string scheduling = writeTemp("cachesim_scheduling.json", R"({"scheduling": 5})");
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { loadConfig(scheduling); }),
            "config file '" + scheduling + "': invalid value '5' for configuration key 'scheduling': scheduler: policy "
            "must be one of sequential, round-robin, random, warp (got '5')");
}

TEST(Config, JsonRoundTrip) {
  Config c = loadConfig("gtx480-48k", {"replacement=mru", "sm=random", "latency_sigma=2.25", "mshrs=unlimited"});
  Config back = Config::fromJson(c.toJson());
  EXPECT_EQ(back.toJson(), c.toJson());
  for (const std::string& key : Config::keys()) EXPECT_TRUE(c.toJson().contains(key)) << key;
}

TEST(Printers, JsonCarriesEveryDocumentedKey) {
  testing::FakeStepSource src;
  src.addWarp(0, 1, {testing::load(3, testing::strided(0, 4, 32)), testing::store(4, {0x0}),
                     testing::load(3, testing::strided(0, 4, 32))});
  Config config = loadConfig("gtx480-16k", {"timing=off", "runs=2"});
  Report r = simulate(config, [&](uint64_t) { return std::make_unique<testing::FakeStepSource>(src); });
  json j = reportToJson(r);

  for (const char* key : {"steps", "requests_before_coalescing", "requests", "reads", "read_hits", "read_misses",
                          "miss_rate", "writes", "write_hits", "write_misses", "write_backs", "atomics",
                          "constant_loads", "barriers", "fences", "cycles", "misses", "per_instruction",
                          "reuse_histogram", "config", "runs", "sm", "schedule_seed"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"cold", "capacity", "conflict", "latency", "mshr"}) EXPECT_TRUE(j["misses"].contains(key)) << key;
  ASSERT_EQ(j["per_instruction"].size(), 2u);
  for (const char* key : {"instruction", "steps", "requests_before_coalescing", "requests", "reads", "read_hits",
                          "read_misses", "miss_rate", "writes", "write_misses", "atomics", "constant_loads", "misses"})
    EXPECT_TRUE(j["per_instruction"][0].contains(key)) << key;
  for (const char* key : {"cold", "total", "buckets"}) EXPECT_TRUE(j["reuse_histogram"].contains(key)) << key;
  for (const char* key : {"count", "with_reads", "median", "rsd", "values", "seeds", "sms", "representative"})
    EXPECT_TRUE(j["runs"].contains(key)) << key;
  for (const std::string& key : Config::keys()) EXPECT_TRUE(j["config"].contains(key)) << key;
  for (const char* key : {"preset", "sets", "lines"}) EXPECT_TRUE(j["config"].contains(key)) << key;

  // Values.
  EXPECT_EQ(j["reads"], 2);
  EXPECT_EQ(j["read_misses"], 1);
  EXPECT_EQ(j["writes"], 1);
  EXPECT_EQ(j["write_hits"], 1);
  EXPECT_EQ(j["requests_before_coalescing"], 65);
  EXPECT_EQ(j["requests"], 3);
  EXPECT_DOUBLE_EQ(j["miss_rate"].get<double>(), 0.5);
  EXPECT_EQ(j["misses"]["cold"], 1);
  EXPECT_EQ(j["per_instruction"][0]["instruction"], 3);
  EXPECT_EQ(j["per_instruction"][0]["reads"], 2);
  EXPECT_EQ(j["per_instruction"][1]["writes"], 1);
  EXPECT_TRUE(j["per_instruction"][1]["miss_rate"].is_null());  // a store instruction has no read miss rate
  EXPECT_EQ(j["reuse_histogram"]["cold"], 1);
  EXPECT_EQ(j["reuse_histogram"]["buckets"][0]["count"], 1);
  EXPECT_EQ(j["reuse_histogram"]["buckets"][0]["min"], 0);
  EXPECT_EQ(j["runs"]["count"], 2);
  EXPECT_EQ(j["runs"]["values"].size(), 2u);
  EXPECT_EQ(j["config"]["sets"], 32);
  EXPECT_TRUE(j["schedule_seed"].is_null());  // not a scheduled file's
  EXPECT_EQ(j["config"]["set_index"], "fermi-xor");

  std::ostringstream text;
  printText(text, r);
  EXPECT_NE(text.str().find("miss rate 50.00%"), std::string::npos) << text.str();
  std::ostringstream js;
  printJson(js, r);
  EXPECT_EQ(json::parse(js.str()), j);
}

// classify=off: the text says the misses are not classified (it listed three classes of 0);
// the JSON keeps its keys, the classes and the histogram 0.
TEST(Printers, ClassificationOff) {
  testing::FakeStepSource src;
  src.addWarp(0, 1, {testing::load(3, {0x0}), testing::load(3, {0x1000})});
  auto text = [&](const std::string& classify) {
    Report r = simulate(loadConfig("gtx480-16k", {"timing=off", "classify=" + classify}),
                        [&](uint64_t) { return std::make_unique<testing::FakeStepSource>(src); });
    std::ostringstream out;
    printText(out, r);
    return std::make_pair(out.str(), reportToJson(r));
  };
  const auto [on, onJson] = text("on");
  EXPECT_NE(on.find("  misses                   2  miss rate 100.00%\n"
                    "    cold                   2\n"
                    "    capacity               0\n"
                    "    conflict               0\n"
                    "  latency miss             0\n"),
            std::string::npos)
      << on;
  const auto [off, offJson] = text("off");
  EXPECT_NE(off.find("  misses                   2  miss rate 100.00%\n"
                     "    not split into cold/capacity/conflict (classify=off)\n"
                     "  latency miss             0\n"),
            std::string::npos)
      << off;
  EXPECT_EQ(off.find("cold "), std::string::npos) << off;
  EXPECT_EQ(off.find("reuse distance"), std::string::npos) << off;
  EXPECT_EQ(offJson["read_misses"], 2);
  EXPECT_EQ(offJson["misses"], (json{{"cold", 0}, {"capacity", 0}, {"conflict", 0}, {"latency", 0}, {"mshr", 0}}));
  EXPECT_EQ(offJson["per_instruction"][0]["misses"]["cold"], 0);
  EXPECT_EQ(offJson["reuse_histogram"]["total"], 0);
  EXPECT_EQ(offJson["config"]["classify"], false);
  EXPECT_EQ(onJson["misses"]["cold"], 2);
}

// Instruction sources (from the trace's texts) go beside the per-instruction rows, in the text
// and as "source" in the JSON; an instruction without one gets neither, and a report without
// any prints no source column.
TEST(Printers, InstructionSources) {
  testing::FakeStepSource src;
  src.addWarp(0, 1, {testing::load(3, {0x0}), testing::load(5, {0x0}), testing::store(4, {0x80})});
  Report r = simulate(loadConfig("gtx480-16k", {"timing=off"}),
                      [&](uint64_t) { return std::make_unique<testing::FakeStepSource>(src); });
  std::ostringstream plain;
  printText(plain, r);
  EXPECT_NE(plain.str().find("per instruction:\n"
                             "   instr      reads     misses    latency     rate     writes      other\n"
                             "       3          1          1          0  100.00%          0          0\n"),
            std::string::npos)
      << plain.str();
  EXPECT_FALSE(reportToJson(r)["per_instruction"][0].contains("source"));

  r.instructionSources = {"", "", "", "line 7:12", "", "util.h line 2:3"};  // by id; 4 has none
  std::ostringstream text;
  printText(text, r);
  EXPECT_NE(text.str().find("per instruction:\n"
                            "   instr      reads     misses    latency     rate     writes      other  source\n"
                            "       3          1          1          0  100.00%          0          0  line 7:12\n"
                            "       4          0          0          0        -          1          0\n"
                            "       5          1          0          0    0.00%          0          0  util.h line 2:3\n"),
            std::string::npos)
      << text.str();
  const json j = reportToJson(r);
  ASSERT_EQ(j["per_instruction"].size(), 3u);
  EXPECT_EQ(j["per_instruction"][0]["instruction"], 3);
  EXPECT_EQ(j["per_instruction"][0]["source"], "line 7:12");
  EXPECT_FALSE(j["per_instruction"][1].contains("source"));
  EXPECT_EQ(j["per_instruction"][2]["source"], "util.h line 2:3");
}

// A report whose L1 sees no read has no miss rate: JSON null and "none" in the text, not 0
// (which reads as every read hitting); the runs line says how many runs saw reads.
TEST(Printers, NoReadsHaveNoMissRate) {
  testing::FakeStepSource src;
  src.addWarp(0, 1, {testing::store(4, {0x0})});
  Report r = simulate(loadConfig("gtx480-16k", {"timing=off", "runs=2"}),
                      [&](uint64_t) { return std::make_unique<testing::FakeStepSource>(src); });
  json j = reportToJson(r);
  EXPECT_TRUE(j["miss_rate"].is_null());
  EXPECT_TRUE(j["per_instruction"][0]["miss_rate"].is_null());
  EXPECT_EQ(j["runs"]["with_reads"], 0);
  EXPECT_TRUE(j["runs"]["median"].is_null());
  EXPECT_TRUE(j["runs"]["rsd"].is_null());
  EXPECT_EQ(j["runs"]["values"], (json{nullptr, nullptr}));
  std::ostringstream out;
  printText(out, r);
  EXPECT_NE(out.str().find("  misses                   0  miss rate none (no reads)\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("       4          0          0          0        -          1          0\n"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("runs: 2, 0 with reads (a run whose L1 sees no reads has no miss rate)\n"),
            std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace cltrace::cachesim
