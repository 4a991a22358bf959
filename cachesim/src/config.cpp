#include "cltrace/cachesim/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cltrace/guarded_json.h"
#include "cltrace/input_file.h"
#include "cltrace/printable.h"

namespace cltrace::cachesim {

using nlohmann::json;

const char* toString(SetIndexFunction f) { return f == SetIndexFunction::Linear ? "linear" : "fermi-xor"; }

const char* toString(Replacement r) {
  switch (r) {
    case Replacement::LRU: return "lru";
    case Replacement::LFU: return "lfu";
    case Replacement::MFU: return "mfu";
    case Replacement::MRU: return "mru";
    case Replacement::Random: return "random";
  }
  return "?";
}

const char* toString(WritePolicy w) { return w == WritePolicy::WriteThroughNoAllocate ? "wtna" : "wbwa"; }

std::string toString(const SmSelection& s) {
  switch (s.kind) {
    case SmSelection::Kind::All: return "all";
    case SmSelection::Kind::Random: return "random";
    case SmSelection::Kind::Index: break;
  }
  return std::to_string(s.index);
}

namespace {

[[noreturn]] void badValue(const std::string& key, const std::string& value, const std::string& why) {
  throw std::invalid_argument("invalid value '" + printable(value) + "' for configuration key '" + key + "': " + why);
}

[[noreturn]] void badCombination(const std::string& key, const std::string& why) {
  throw std::invalid_argument("configuration key '" + key + "': " + why);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Non-negative integer; with `sizes`, an optional K/KB/KiB/M/MB/MiB suffix (powers of 1024).
uint64_t parseUnsigned(const std::string& key, const std::string& raw, bool sizes = false,
                       uint64_t max = std::numeric_limits<uint64_t>::max()) {
  std::string v = trim(raw);
  size_t digits = 0;
  while (digits < v.size() && std::isdigit(static_cast<unsigned char>(v[digits]))) ++digits;
  if (digits == 0) badValue(key, raw, "expected a non-negative integer");
  uint64_t multiplier = 1;
  std::string suffix = lower(trim(v.substr(digits)));
  if (!suffix.empty()) {
    if (!sizes || !std::isalpha(static_cast<unsigned char>(suffix[0])))
      badValue(key, raw, "expected a non-negative integer");
    if (suffix == "k" || suffix == "kb" || suffix == "kib")
      multiplier = 1024;
    else if (suffix == "m" || suffix == "mb" || suffix == "mib")
      multiplier = 1024 * 1024;
    else
      badValue(key, raw, "unknown size suffix '" + suffix + "' (use K or M)");
  }
  uint64_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    uint64_t d = uint64_t(v[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - d) / 10) badValue(key, raw, "too large");
    value = value * 10 + d;
  }
  if (value > max / multiplier) badValue(key, raw, "too large (at most " + std::to_string(max) + ")");
  return value * multiplier;
}

uint32_t parseU32(const std::string& key, const std::string& raw) {
  return static_cast<uint32_t>(parseUnsigned(key, raw, false, std::numeric_limits<uint32_t>::max()));
}

double parseNonNegativeDouble(const std::string& key, const std::string& raw) {
  std::string v = trim(raw);
  // Decimal only: strtod would also take hexadecimal floats, "inf" and "nan".
  if (v.empty() || v.find_first_not_of("0123456789.eE+-") != std::string::npos)
    badValue(key, raw, "expected a decimal number");
  errno = 0;
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (end != v.c_str() + v.size()) badValue(key, raw, "expected a number");
  // ERANGE: too large for a double, or so small that it is (about) zero, which is a fine sigma.
  if (errno == ERANGE && std::isfinite(d) && std::fabs(d) < 1.0) d = 0.0;
  else if (errno != 0 || !std::isfinite(d)) badValue(key, raw, "out of range");
  if (d < 0) badValue(key, raw, "must not be negative");
  if (d == 0) d = 0.0;  // -0 is 0 (it printed as -0.0 and "N(0, -0^2)")
  return d;
}

bool parseBool(const std::string& key, const std::string& raw) {
  std::string v = lower(trim(raw));
  if (v == "on" || v == "true" || v == "1" || v == "yes") return true;
  if (v == "off" || v == "false" || v == "0" || v == "no") return false;
  badValue(key, raw, "expected on/off (or true/false)");
}

uint32_t parseMshrs(const std::string& key, const std::string& raw) {
  if (lower(trim(raw)) == "unlimited") return 0;
  return parseU32(key, raw);
}

struct KeyDef {
  const char* name;
  std::function<void(Config&, const std::string& key, const std::string& value)> set;
  std::function<json(const Config&)> get;
};

const std::vector<KeyDef>& keyDefs() {
  static const std::vector<KeyDef> defs = {
      {"size", [](Config& c, const std::string& k, const std::string& v) { c.size = parseUnsigned(k, v, true); },
       [](const Config& c) { return json(c.size); }},
      {"line_size",
       [](Config& c, const std::string& k, const std::string& v) {
         c.lineSize = static_cast<uint32_t>(parseUnsigned(k, v, true, std::numeric_limits<uint32_t>::max()));
       },
       [](const Config& c) { return json(c.lineSize); }},
      {"associativity",
       [](Config& c, const std::string& k, const std::string& v) { c.associativity = parseU32(k, v); },
       [](const Config& c) { return json(c.associativity); }},
      {"set_index",
       [](Config& c, const std::string& k, const std::string& v) {
         std::string s = lower(trim(v));
         if (s == "linear")
           c.setIndex = SetIndexFunction::Linear;
         else if (s == "fermi-xor" || s == "xor" || s == "fermi")
           c.setIndex = SetIndexFunction::FermiXor;
         else
           badValue(k, v, "expected linear or fermi-xor");
       },
       [](const Config& c) { return json(toString(c.setIndex)); }},
      {"replacement",
       [](Config& c, const std::string& k, const std::string& v) {
         std::string s = lower(trim(v));
         if (s == "lru") c.replacement = Replacement::LRU;
         else if (s == "lfu") c.replacement = Replacement::LFU;
         else if (s == "mfu") c.replacement = Replacement::MFU;
         else if (s == "mru") c.replacement = Replacement::MRU;
         else if (s == "random" || s == "rand") c.replacement = Replacement::Random;
         else badValue(k, v, "expected lru, lfu, mfu, mru or random");
       },
       [](const Config& c) { return json(toString(c.replacement)); }},
      {"write_policy",
       [](Config& c, const std::string& k, const std::string& v) {
         std::string s = lower(trim(v));
         if (s == "wtna" || s == "write-through" || s == "write-through-no-allocate")
           c.writePolicy = WritePolicy::WriteThroughNoAllocate;
         else if (s == "wbwa" || s == "write-back" || s == "write-back-write-allocate")
           c.writePolicy = WritePolicy::WriteBackAllocate;
         else
           badValue(k, v, "expected wtna (write-through no-allocate) or wbwa (write-back write-allocate)");
       },
       [](const Config& c) { return json(toString(c.writePolicy)); }},
      {"timing", [](Config& c, const std::string& k, const std::string& v) { c.timing = parseBool(k, v); },
       [](const Config& c) { return json(c.timing); }},
      {"mshrs", [](Config& c, const std::string& k, const std::string& v) { c.mshrs = parseMshrs(k, v); },
       [](const Config& c) { return json(c.mshrs); }},
      {"mshrs_per_warp",
       [](Config& c, const std::string& k, const std::string& v) { c.mshrsPerWarp = parseMshrs(k, v); },
       [](const Config& c) { return json(c.mshrsPerWarp); }},
      {"min_latency",
       [](Config& c, const std::string& k, const std::string& v) {
         c.minLatency = parseUnsigned(k, v, false, uint64_t(1) << 40);
       },
       [](const Config& c) { return json(c.minLatency); }},
      {"latency_sigma",
       [](Config& c, const std::string& k, const std::string& v) {
         double d = parseNonNegativeDouble(k, v);
         if (d > 1e9) badValue(k, v, "too large (at most 1000000000)");
         c.latencySigma = d;
       },
       [](const Config& c) { return json(c.latencySigma); }},
      {"hit_latency",
       [](Config& c, const std::string& k, const std::string& v) {
         c.hitLatency = parseUnsigned(k, v, false, uint64_t(1) << 40);
       },
       [](const Config& c) { return json(c.hitLatency); }},
      {"sm_count",
       [](Config& c, const std::string& k, const std::string& v) {
         c.smCount = static_cast<uint32_t>(parseUnsigned(k, v, false, sched::kMaxSmCount));
       },
       [](const Config& c) { return json(c.smCount); }},
      {"max_workgroups_per_sm",
       [](Config& c, const std::string& k, const std::string& v) { c.maxWorkgroupsPerSm = parseU32(k, v); },
       [](const Config& c) { return json(c.maxWorkgroupsPerSm); }},
      {"max_threads_per_sm",
       [](Config& c, const std::string& k, const std::string& v) { c.maxThreadsPerSm = parseU32(k, v); },
       [](const Config& c) { return json(c.maxThreadsPerSm); }},
      {"max_threads_per_workgroup",
       [](Config& c, const std::string& k, const std::string& v) { c.maxThreadsPerWorkgroup = parseU32(k, v); },
       [](const Config& c) { return json(c.maxThreadsPerWorkgroup); }},
      {"max_local_size_x",
       [](Config& c, const std::string& k, const std::string& v) { c.maxLocalSize[0] = parseU32(k, v); },
       [](const Config& c) { return json(c.maxLocalSize[0]); }},
      {"max_local_size_y",
       [](Config& c, const std::string& k, const std::string& v) { c.maxLocalSize[1] = parseU32(k, v); },
       [](const Config& c) { return json(c.maxLocalSize[1]); }},
      {"max_local_size_z",
       [](Config& c, const std::string& k, const std::string& v) { c.maxLocalSize[2] = parseU32(k, v); },
       [](const Config& c) { return json(c.maxLocalSize[2]); }},
      {"registers_per_thread",
       [](Config& c, const std::string& k, const std::string& v) { c.registersPerThread = parseU32(k, v); },
       [](const Config& c) { return json(c.registersPerThread); }},
      {"local_memory_per_sm",
       [](Config& c, const std::string& k, const std::string& v) {
         c.localMemoryPerSm = static_cast<uint32_t>(parseUnsigned(k, v, true, UINT32_MAX));
       },
       [](const Config& c) { return json(c.localMemoryPerSm); }},
      {"registers_per_sm",
       [](Config& c, const std::string& k, const std::string& v) { c.registersPerSm = parseU32(k, v); },
       [](const Config& c) { return json(c.registersPerSm); }},
      {"warp_size",
       [](Config& c, const std::string& k, const std::string& v) {
         c.warpSize = static_cast<uint32_t>(parseUnsigned(k, v, false, sched::kMaxWarpSize));
       },
       [](const Config& c) { return json(c.warpSize); }},
      {"scheduling",
       [](Config& c, const std::string& k, const std::string& v) {
         // Any case, as the other named values; kept in the scheduler's spelling (lower case).
         std::string s = lower(trim(v));
         if (s.empty()) badValue(k, v, "expected a scheduling policy name");
         SchedulingChoice choice{};
         try {
           choice = parseScheduling(s);
         } catch (const std::invalid_argument& e) {
           badValue(k, v, e.what());
         }
         if (choice.policy != sched::Policy::Warp && s.find(':') != std::string::npos)
           badValue(k, v, "an inter-warp order applies to the warp policy only");
         // One spelling per choice, so that reports of a trace and of a scheduled file agree.
         c.scheduling = schedulingName(choice);
       },
       [](const Config& c) { return json(c.scheduling); }},
      {"sm",
       [](Config& c, const std::string& k, const std::string& v) {
         std::string s = lower(trim(v));
         if (s == "all") {
           c.sm.kind = SmSelection::Kind::All;
         } else if (s == "random") {
           c.sm.kind = SmSelection::Kind::Random;
         } else if (!s.empty() && std::isdigit(static_cast<unsigned char>(s[0]))) {
           c.sm.kind = SmSelection::Kind::Index;
           c.sm.index = parseU32(k, v);
         } else {
           badValue(k, v, "expected an SM index, all or random");
         }
       },
       [](const Config& c) {
         return c.sm.kind == SmSelection::Kind::Index ? json(c.sm.index) : json(toString(c.sm));
       }},
      {"runs", [](Config& c, const std::string& k, const std::string& v) {
         c.runs = static_cast<uint32_t>(parseUnsigned(k, v, false, kMaxRuns));
       },
       [](const Config& c) { return json(c.runs); }},
      {"seed", [](Config& c, const std::string& k, const std::string& v) { c.seed = parseUnsigned(k, v); },
       [](const Config& c) { return json(c.seed); }},
      {"classify", [](Config& c, const std::string& k, const std::string& v) { c.classify = parseBool(k, v); },
       [](const Config& c) { return json(c.classify); }},
      {"wide_access_split",
       [](Config& c, const std::string& k, const std::string& v) { c.wideAccessSplit = parseBool(k, v); },
       [](const Config& c) { return json(c.wideAccessSplit); }},
  };
  return defs;
}

const KeyDef& findKey(const std::string& key) {
  for (const KeyDef& d : keyDefs())
    if (key == d.name) return d;
  // A report's config object shows them, so they are the likeliest keys to be tried; JSON files
  // may hold them (fromJson checks that they agree), an override cannot.
  if (key == "sets")
    throw std::invalid_argument("configuration key 'sets' is derived, size / (line_size * associativity): set "
                                "size, line_size or associativity instead");
  if (key == "lines")
    throw std::invalid_argument("configuration key 'lines' is derived, size / line_size: set size or line_size "
                                "instead");
  std::string known;
  for (const KeyDef& d : keyDefs()) {
    if (!known.empty()) known += ", ";
    known += d.name;
  }
  throw std::invalid_argument("unknown configuration key '" + printable(key) + "' (known keys: " + known + ")");
}

bool isPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

void Config::set(const std::string& key, const std::string& value) {
  if (key == "preset") {
    // Replaces every value by the preset's (only meaningful first; JSON files handle it so).
    *this = Config::fromPreset(trim(value));
    return;
  }
  findKey(key).set(*this, key, value);
}

void Config::set(const std::string& key, const json& value) {
  switch (value.type()) {
    case json::value_t::string: set(key, value.get<std::string>()); return;
    case json::value_t::boolean: set(key, std::string(value.get<bool>() ? "true" : "false")); return;
    case json::value_t::number_unsigned: set(key, std::to_string(value.get<uint64_t>())); return;
    case json::value_t::number_integer: set(key, std::to_string(value.get<int64_t>())); return;
    case json::value_t::number_float: {
      double d = value.get<double>();
      if (key != "latency_sigma" && std::isfinite(d) && d >= 0 && d < 1.8e19 && std::floor(d) == d) {
        set(key, std::to_string(static_cast<uint64_t>(d)));
      } else if (key != "latency_sigma" && std::isfinite(d) && std::fabs(d) >= 1.8e19 && std::fabs(d) < 1e30) {
        // Spelled out in digits, so that integer keys say "too large" rather than misreading 1.8e+19.
        set(key, wholeNumberDigits(d));
      } else if (key != "latency_sigma" && std::isfinite(d) && std::fabs(d) >= 1e30) {
        // Far past every integer key's range: said as written (1e+300), not in 301 digits.
        findKey(key);  // unknown keys are reported as such
        throw std::invalid_argument("invalid value " + value.dump() + " for configuration key '" + key + "': " +
                                    (d < 0 ? "expected a non-negative integer" : "too large"));
      } else {
        set(key, value.dump());
      }
      return;
    }
    default:
      findKey(key);  // unknown keys are reported as such
      throw std::invalid_argument("invalid value " + value.dump() + " for configuration key '" + key +
                                  "': expected a number, string or boolean");
  }
}

void Config::applyOverride(const std::string& keyEqualsValue) {
  size_t eq = keyEqualsValue.find('=');
  if (eq == std::string::npos)
    throw std::invalid_argument("configuration override '" + keyEqualsValue + "' is not KEY=VALUE");
  std::string key = trim(keyEqualsValue.substr(0, eq));
  if (key.empty()) throw std::invalid_argument("configuration override '" + keyEqualsValue + "' has no key");
  set(key, keyEqualsValue.substr(eq + 1));
}

void Config::validate() const {
  if (size == 0) badCombination("size", "must be at least one line");
  // A limit far above any L1 or L2, so that a slip of the thumb is an error; the memory the
  // tags take is bounded by the lines (kMaxLinesPerL1, kMaxLinesOverSms).
  constexpr uint64_t kMaxSize = uint64_t{64} << 20;
  if (size > kMaxSize) badCombination("size", std::to_string(size) + " bytes is over the model's limit of 64 MiB");
  if (!isPowerOfTwo(lineSize)) badCombination("line_size", std::to_string(lineSize) + " is not a power of two");
  if (lines() > kMaxLinesPerL1)
    badCombination("line_size", std::to_string(size) + " bytes of " + std::to_string(lineSize) + "-byte lines are " +
                                    std::to_string(lines()) + " lines, over the model's limit of " +
                                    std::to_string(kMaxLinesPerL1) + " per L1");
  if (associativity == 0) badCombination("associativity", "must be at least 1");
  uint64_t setBytes = uint64_t(lineSize) * associativity;
  if (size % setBytes != 0 || size / setBytes == 0) {
    // Whole lines but not whole sets: the ways are what do not fit (associativity=3 in 16 KB).
    if (size % lineSize == 0)
      badCombination("associativity", std::to_string(associativity) + " ways of " + std::to_string(lineSize) +
                                          "-byte lines (" + std::to_string(setBytes) +
                                          " bytes a set) do not divide size " + std::to_string(size) +
                                          " into whole sets");
    badCombination("size", std::to_string(size) + " bytes is not a positive multiple of line_size * associativity (" +
                               std::to_string(setBytes) + " bytes)");
  }
  if (size / setBytes > std::numeric_limits<uint32_t>::max()) badCombination("size", "too many sets");
  uint32_t s = sets();
  if (setIndex == SetIndexFunction::FermiXor && s != 32 && s != 64)
    badCombination("set_index", "fermi-xor supports 32 or 64 sets only; size / (line_size * associativity) = " +
                                    std::to_string(s));
  // The scheduler's bounds, checked here too so that the error names the key (a Config built in
  // code skips the parser's checks).
  if (smCount == 0) badCombination("sm_count", "must be at least 1");
  if (smCount > sched::kMaxSmCount)
    badCombination("sm_count", std::to_string(smCount) + " is over the limit of " + std::to_string(sched::kMaxSmCount));
  if (lines() * smCount > kMaxLinesOverSms)
    throw std::invalid_argument("configuration keys 'sm_count' and 'size': " + std::to_string(smCount) +
                                " SMs of " + std::to_string(lines()) + " lines are " +
                                std::to_string(lines() * smCount) + " lines, over the model's limit of " +
                                std::to_string(kMaxLinesOverSms) + " over all SMs");
  if (sm.kind == SmSelection::Kind::Index && sm.index >= smCount)
    badCombination("sm", "SM " + std::to_string(sm.index) + " does not exist (sm_count = " +
                             std::to_string(smCount) + ")");
  if (warpSize == 0) badCombination("warp_size", "must be at least 1");
  if (warpSize > sched::kMaxWarpSize)
    badCombination("warp_size",
                   std::to_string(warpSize) + " is over the limit of " + std::to_string(sched::kMaxWarpSize));
  if (maxWorkgroupsPerSm == 0) badCombination("max_workgroups_per_sm", "must be at least 1");
  if (maxThreadsPerSm < warpSize)
    badCombination("max_threads_per_sm", "must be at least warp_size (" + std::to_string(warpSize) + ")");
  if (registersPerSm == 0) badCombination("registers_per_sm", "must be at least 1");
  if (runs == 0) badCombination("runs", "must be at least 1");
  if (scheduling.empty()) badCombination("scheduling", "must not be empty");
  if (!std::isfinite(latencySigma) || latencySigma < 0) badCombination("latency_sigma", "must be a number >= 0");
}

json Config::toJson() const {
  json j = json::object();
  j["preset"] = presetName;
  for (const KeyDef& d : keyDefs()) j[d.name] = d.get(*this);
  j["sets"] = sets();
  j["lines"] = lines();
  return j;
}

const std::vector<std::string>& Config::presetNames() {
  static const std::vector<std::string> names = {"gtx480-16k", "gtx480-48k", "gtx470-16k", "gtx470-48k"};
  return names;
}

bool Config::isPresetName(const std::string& name) {
  const std::vector<std::string>& names = presetNames();
  return std::find(names.begin(), names.end(), lower(name)) != names.end();
}

const std::vector<std::string>& Config::keys() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const KeyDef& d : keyDefs()) n.push_back(d.name);
    return n;
  }();
  return names;
}

Config Config::fromPreset(const std::string& name) {
  Config c;  // the defaults are gtx480-16k
  std::string n = lower(name);
  if (n == "gtx480-16k" || n == "gtx470-16k") {
    c.size = 16 * 1024;
    c.associativity = 4;
  } else if (n == "gtx480-48k" || n == "gtx470-48k") {
    c.size = 48 * 1024;
    c.associativity = 6;
    c.localMemoryPerSm = 16 * 1024;  // the rest of the SM's 64 KB
  } else {
    std::string known;
    for (const std::string& p : presetNames()) known += (known.empty() ? "" : ", ") + p;
    throw std::invalid_argument("configuration key 'preset': unknown preset '" + name + "' (presets: " + known + ")");
  }
  c.smCount = n.rfind("gtx470", 0) == 0 ? 14 : 15;
  c.presetName = n;
  return c;
}

Config Config::fromJson(const json& object) {
  if (!object.is_object()) throw std::invalid_argument("configuration must be a JSON object of keys");
  Config c;
  if (auto it = object.find("preset"); it != object.end()) {
    if (!it->is_string()) throw std::invalid_argument("configuration key 'preset': expected a preset name");
    c = Config::fromPreset(it->get<std::string>());
  }
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.key() == "preset" || it.key() == "sets" || it.key() == "lines") continue;
    c.set(it.key(), it.value());
  }
  c.validate();
  // Derived keys are accepted (a report's "config" object can be fed back) but must agree; a
  // whole number written as 32.0 is 32, as for the other keys.
  const auto agrees = [](const json& v, uint64_t derived) {
    if (v.is_number_unsigned()) return v.get<uint64_t>() == derived;
    return v.is_number_float() && v.get<double>() == static_cast<double>(derived);
  };
  for (const auto& [key, derived] : {std::pair<const char*, uint64_t>{"sets", c.sets()}, {"lines", c.lines()}})
    if (auto it = object.find(key); it != object.end() && !agrees(*it, derived))
      throw std::invalid_argument(std::string("configuration key '") + key + "': " + it->dump() +
                                  " disagrees with the derived value " + std::to_string(derived));
  return c;
}

Config Config::fromJsonFile(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw std::invalid_argument("config file '" + path + "' is a directory");
  std::ifstream in;
  const std::string why = openForReading(in, path);
  if (!in) throw std::invalid_argument("config file '" + path + "': cannot be opened" + why);
  // Configurations are flat (one object of numbers and names), so little nesting is allowed.
  constexpr int kMaxDepth = 16;
  json j;
  try {
    j = parseGuardedJson<json>(
        in, kMaxDepth,
        "config file '" + path + "': values nested more than " + std::to_string(kMaxDepth) +
            " deep (a configuration is one object of numbers and names)",
        [&path](const std::string& key) {
          return "config file '" + path + "': configuration key '" + key + "' is given twice";
        });
  } catch (const json::exception& e) {
    throw std::invalid_argument("config file '" + path + "': not valid JSON: " + jsonErrorText(e));
  }
  try {
    return fromJson(j);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("config file '" + path + "': " + e.what());
  }
}

Config loadConfig(const std::string& presetOrFile, const std::vector<std::string>& overrides) {
  Config c;
  if (presetOrFile.empty()) {
    c = Config::fromPreset("gtx480-16k");
  } else {
    if (Config::isPresetName(presetOrFile)) {
      c = Config::fromPreset(presetOrFile);
    } else if (std::ifstream(presetOrFile).good() || presetOrFile.find(".json") != std::string::npos) {
      c = Config::fromJsonFile(presetOrFile);
    } else {
      Config::fromPreset(presetOrFile);  // throws: unknown preset, listing the presets
    }
  }
  for (const std::string& o : overrides) c.applyOverride(o);
  c.validate();
  return c;
}

uint32_t registerLimitedWorkgroups(const Config& c, uint64_t workgroupSize) {
  if (c.registersPerThread == 0) return std::numeric_limits<uint32_t>::max();
  constexpr uint64_t kAllocationUnit = 64;  // registers, per warp (compute capability 2.x)
  const uint64_t warps = (workgroupSize + c.warpSize - 1) / c.warpSize;
  const uint64_t perWarp = (uint64_t(c.registersPerThread) * c.warpSize + kAllocationUnit - 1) / kAllocationUnit *
                           kAllocationUnit;
  const uint64_t fit = c.registersPerSm / (warps * perWarp);
  if (fit == 0)
    throw std::invalid_argument("configuration keys 'registers_per_thread' and 'registers_per_sm': a workgroup of " +
                                std::to_string(workgroupSize) + " threads needs " +
                                std::to_string(warps * perWarp) + " registers, the SM has " +
                                std::to_string(c.registersPerSm));
  return static_cast<uint32_t>(std::min<uint64_t>(fit, std::numeric_limits<uint32_t>::max()));
}

void requireWorkgroupFits(const Config& c, const NDRange& range) {
  const uint64_t workgroupSize = range.workgroupSize();
  if (c.maxThreadsPerWorkgroup != 0 && workgroupSize > c.maxThreadsPerWorkgroup)
    throw std::invalid_argument("configuration key 'max_threads_per_workgroup': a workgroup of the launch has " +
                                std::to_string(workgroupSize) + " work-items, more than the " +
                                std::to_string(c.maxThreadsPerWorkgroup) +
                                " the GPU runs in one, so it would refuse the launch (0 lifts the limit)");
  for (uint32_t d = 0; d < range.dims && d < 3; ++d)
    if (c.maxLocalSize[d] != 0 && range.local[d] > c.maxLocalSize[d])
      throw std::invalid_argument(std::string("configuration key 'max_local_size_") + "xyz"[d] +
                                  "': the launch's local size is " + std::to_string(range.local[d]) +
                                  " along dimension " + std::to_string(d) + ", more than the " +
                                  std::to_string(c.maxLocalSize[d]) +
                                  " the GPU allows there, so it would refuse the launch (0 lifts the limit)");
  // The scheduler refuses it too, but in its own words (cltrace schedule's option).
  if (workgroupSize > c.maxThreadsPerSm)
    throw std::invalid_argument("configuration key 'max_threads_per_sm': a workgroup of the launch has " +
                                std::to_string(workgroupSize) + " work-items, more than the " +
                                std::to_string(c.maxThreadsPerSm) + " threads an SM holds, so no SM can run it");
}

uint32_t localMemoryLimitedWorkgroups(const Config& c, uint64_t localBytes) {
  if (localBytes == 0 || c.localMemoryPerSm == 0) return std::numeric_limits<uint32_t>::max();
  constexpr uint64_t kAllocationUnit = 128;  // bytes (compute capability 2.x)
  const uint64_t perWorkgroup = (localBytes + kAllocationUnit - 1) / kAllocationUnit * kAllocationUnit;
  const uint64_t fit = c.localMemoryPerSm / perWorkgroup;
  if (fit == 0)
    throw std::invalid_argument("configuration key 'local_memory_per_sm': a workgroup of the kernel uses " +
                                std::to_string(localBytes) + " bytes of __local memory, more than the " +
                                std::to_string(c.localMemoryPerSm) +
                                " an SM has, so the GPU would refuse the launch (the 48k presets leave 16 KB)");
  return static_cast<uint32_t>(std::min<uint64_t>(fit, std::numeric_limits<uint32_t>::max()));
}

SchedulingChoice parseScheduling(const std::string& value) {
  const size_t colon = value.find(':');
  SchedulingChoice c{sched::parsePolicy(value.substr(0, colon)), sched::SchedulerConfig{}.interWarp};
  if (colon != std::string::npos) c.interWarp = sched::parseInterWarpOrder(value.substr(colon + 1));
  return c;
}

std::string schedulingName(const SchedulingChoice& choice) {
  const std::string policy = sched::policyName(choice.policy);
  if (choice.policy != sched::Policy::Warp || choice.interWarp == sched::SchedulerConfig{}.interWarp) return policy;
  return policy + ":" + sched::interWarpOrderName(choice.interWarp);
}

}  // namespace cltrace::cachesim
