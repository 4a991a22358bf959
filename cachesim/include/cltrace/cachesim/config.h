// Configuration of the L1 cache simulator: named keys, presets, JSON files, KEY=VALUE overrides.
//
// Every key, its default and its meaning is listed in docs/cachesim.md. Invalid values and
// unknown keys throw std::invalid_argument whose message names the key.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cltrace/scheduler/config.h"
#include "cltrace/trace_file.h"

namespace cltrace::cachesim {

enum class SetIndexFunction : uint8_t { Linear, FermiXor };
enum class Replacement : uint8_t { LRU, LFU, MFU, MRU, Random };
enum class WritePolicy : uint8_t {
  WriteThroughNoAllocate,  // "wtna": Fermi global memory; stores never allocate
  WriteBackAllocate,       // "wbwa": stores allocate, dirty lines are written back on eviction
};

// Which SM's L1 the simulator models (`sm` key).
struct SmSelection {
  enum class Kind : uint8_t { Index, All, Random };
  Kind kind = Kind::Index;
  uint32_t index = 0;  // for Kind::Index
};

const char* toString(SetIndexFunction f);
const char* toString(Replacement r);
const char* toString(WritePolicy w);
std::string toString(const SmSelection& s);

// Each run replays the whole trace; the thesis used 20. The cap keeps a typo from asking for
// gigabytes of per-run results.
inline constexpr uint32_t kMaxRuns = 100000;

// Every SM that receives work holds its L1's tags (about 24 bytes a line), so the lines are
// bounded per L1 (a 64 MiB cache of 32-byte lines, the smallest sector of NVIDIA's caches) and
// over all sm_count SMs: a typo is an error, not gigabytes.
inline constexpr uint64_t kMaxLinesPerL1 = uint64_t{1} << 21;
inline constexpr uint64_t kMaxLinesOverSms = uint64_t{1} << 25;

struct Config {
  std::string presetName = "gtx480-16k";  // informational: the preset this config started from

  // Geometry.
  uint64_t size = 16 * 1024;  // bytes
  uint32_t lineSize = 128;    // bytes, power of two
  uint32_t associativity = 4;
  SetIndexFunction setIndex = SetIndexFunction::FermiXor;
  Replacement replacement = Replacement::LRU;
  WritePolicy writePolicy = WritePolicy::WriteThroughNoAllocate;

  // Timing model (paper: minimum latency + half-normal jitter, MSHRs).
  bool timing = true;
  uint32_t mshrs = 64;         // per SM; 0 = unlimited
  uint32_t mshrsPerWarp = 6;   // per warp; 0 = unlimited
  uint64_t minLatency = 100;   // cycles from a miss until its line is filled
  double latencySigma = 5.0;   // sigma of the half-normal jitter added to minLatency
  uint64_t hitLatency = 0;     // cycles a warp waits after a step that only hit

  // GPU and scheduler (the scheduler reads these; the simulator uses smCount and warpSize).
  uint32_t smCount = 15;
  uint32_t maxWorkgroupsPerSm = 8;
  uint32_t maxThreadsPerSm = 1536;
  // Work-items one workgroup may have (CL_DEVICE_MAX_WORK_GROUP_SIZE: 1024 on compute capability
  // 2.x); a larger workgroup is an error naming the key, as the GPU refuses the launch. 0: no limit.
  uint32_t maxThreadsPerWorkgroup = 1024;
  // Work-items one workgroup may have along each dimension (CL_DEVICE_MAX_WORK_ITEM_SIZES: 1024,
  // 1024, 64 on compute capability 2.x); a larger local size is an error naming the key, as the
  // GPU refuses the launch. 0: no limit.
  std::array<uint32_t, 3> maxLocalSize{1024, 1024, 64};
  // Register-limited residency (0 = registers do not limit it): the kernel's registers per
  // thread, e.g. from ptxas -v, and the SM's register file. Fermi allocates registers per warp
  // in units of 64.
  uint32_t registersPerThread = 0;
  uint32_t registersPerSm = 32768;
  // Shared (OpenCL __local) memory of an SM, bytes: 48 KB beside a 16 KB L1, 16 KB beside a 48 KB
  // one. Workgroups per SM are also limited by the __local memory each uses (the trace's
  // NDRange::localMemoryBytes, allocated in units of 128 bytes). 0: no limit.
  uint32_t localMemoryPerSm = 48 * 1024;
  uint32_t warpSize = 32;
  std::string scheduling = "warp";  // scheduling policy name, passed to the scheduler

  // What to simulate.
  SmSelection sm;         // one SM, every SM ("all"), or one chosen at random per run
  uint32_t runs = 1;      // repetitions with seeds seed, seed+1, ... (at most kMaxRuns)
  uint64_t seed = 1;
  bool classify = true;   // reuse-distance tracking: cold/capacity/conflict split + histogram
  // Loads and stores of more than 4 bytes a lane are requested per half-warp (8 bytes) or
  // quarter-warp (16), wider ones as 16-byte words one after the other, as Fermi does
  // (coalesceWideAccess); off: the whole warp coalesces.
  bool wideAccessSplit = true;

  // Derived values (valid after validate()).
  uint32_t sets() const {
    uint64_t per = uint64_t(lineSize) * associativity;
    return per == 0 ? 0 : static_cast<uint32_t>(size / per);
  }
  uint64_t lines() const { return lineSize == 0 ? 0 : size / lineSize; }

  // Sets one key from its textual form (as in KEY=VALUE). Throws std::invalid_argument.
  void set(const std::string& key, const std::string& value);
  // Sets one key from a JSON value (number, string or boolean). Throws std::invalid_argument.
  void set(const std::string& key, const nlohmann::json& value);
  // Applies "KEY=VALUE". Throws std::invalid_argument.
  void applyOverride(const std::string& keyEqualsValue);
  // Checks the combination of values; the message names the offending key.
  void validate() const;

  // Every key with its current value, plus derived "sets" and "lines".
  nlohmann::json toJson() const;

  // Presets: gtx480-16k (default), gtx480-48k, gtx470-16k, gtx470-48k.
  static Config fromPreset(const std::string& name);
  static const std::vector<std::string>& presetNames();
  // Whether `name` is one of them, in any case (as loadConfig takes it).
  static bool isPresetName(const std::string& name);
  // The configuration keys, in documentation order.
  static const std::vector<std::string>& keys();
  // A JSON object of keys; an optional "preset" key selects the base (default gtx480-16k).
  static Config fromJson(const nlohmann::json& object);
  // Reads fromJson() from a file. Errors name the file (and the key).
  static Config fromJsonFile(const std::string& path);
};

// Loads `presetOrFile` (a preset name, or a path to a .json file; empty = default preset),
// applies the KEY=VALUE overrides in order and validates the result.
Config loadConfig(const std::string& presetOrFile, const std::vector<std::string>& overrides = {});

// Workgroups of `workgroupSize` threads that fit in one SM's registers (registers_per_thread,
// registers_per_sm; allocation per warp in units of 64): UINT32_MAX when registers_per_thread
// is 0. Throws std::invalid_argument naming the keys when not even one workgroup fits.
uint32_t registerLimitedWorkgroups(const Config& config, uint64_t workgroupSize);

// Throws std::invalid_argument naming max_threads_per_workgroup when a workgroup of `range` is
// over it, or max_local_size_x/y/z when its local size is over that along one dimension (the
// GPU would refuse the launch either way), and naming max_threads_per_sm when it is over that
// (no SM could hold it).
void requireWorkgroupFits(const Config& config, const NDRange& range);

// Workgroups using `localBytes` of __local memory each that fit in one SM's (local_memory_per_sm,
// allocated in units of 128 bytes): UINT32_MAX when either is 0. Throws std::invalid_argument
// naming the key when not even one fits (the GPU would refuse the launch).
uint32_t localMemoryLimitedWorkgroups(const Config& config, uint64_t localBytes);

// The scheduling policy and inter-warp order a `scheduling` value names: "POLICY" or
// "POLICY:ORDER" (the order defaults to the scheduler's). Throws std::invalid_argument saying
// what is unknown.
struct SchedulingChoice {
  sched::Policy policy;
  sched::InterWarpOrder interWarp;
};
SchedulingChoice parseScheduling(const std::string& value);
// The one spelling of `choice` the `scheduling` key keeps and reports show: "POLICY", or
// "warp:ORDER" when the warp policy's order is not the default.
std::string schedulingName(const SchedulingChoice& choice);

}  // namespace cltrace::cachesim
