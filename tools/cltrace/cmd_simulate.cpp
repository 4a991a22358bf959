// cltrace simulate TRACE|SCHEDULED [--config PRESET|FILE.json] [--set KEY=VALUE ...] [--runs N] [--seed S]
//                        [--sm N|all|random] [--json]
// Schedules a trace (scheduler) and simulates the Fermi L1 cache on that order (cachesim); a
// binary scheduled file (cltrace schedule) is simulated in its own order, with timing off.
// Configuration keys: docs/cachesim.md. A thin wrapper: all the work is in the libraries.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/printers.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/cachesim/trace_simulation.h"
#include "cltrace/scheduler/output.h"
#include "cltrace/scheduler/scheduler.h"
#include "cltrace/trace_file.h"
#include "commands.h"
#include "prediction.h"

namespace cltrace::cli {
namespace {

struct SimulateOptions {
  std::string trace;
  std::string config = "gtx480-16k";
  std::vector<std::string> sets;
  std::string runs, seed, sm;  // empty: not given (the configuration's value stands)
  bool json = false;
  uint32_t threads = 0;
  bool configGiven = false;  // --config on the command line (not its default)
};

// The keys a JSON configuration file lists; nullopt for a preset's name. Read before loadConfig,
// which says what is wrong with a file that cannot be read or parsed: none listed then.
std::optional<std::vector<std::string>> keysOfConfigFile(const std::string& presetOrFile) {
  if (cachesim::Config::isPresetName(presetOrFile)) return std::nullopt;
  std::vector<std::string> keys;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(presetOrFile, ec)) return keys;  // a directory's read throws
  try {
    std::ifstream in(presetOrFile);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_object())
      for (const auto& item : j.items()) keys.push_back(item.key());
  } catch (const std::exception&) {
    keys.clear();
  }
  return keys;
}

void runSimulate(const SimulateOptions& o) {
  requireRereadable(o.trace, "simulate");
  const bool scheduled = cachesim::isScheduledFile(o.trace);
  std::vector<std::string> defaults;  // given way to by --set
  // A scheduled file has its own SM count, which --sm N is checked against: taken first, unless
  // the user chose one (which must then agree with the file).
  const std::optional<std::vector<std::string>> fileKeys =
      o.configGiven ? keysOfConfigFile(o.config) : std::optional<std::vector<std::string>>(std::vector<std::string>{});
  bool smCountChosen =
      !fileKeys || std::find(fileKeys->begin(), fileKeys->end(), "sm_count") != fileKeys->end();
  for (const std::string& s : o.sets) smCountChosen = smCountChosen || s.substr(0, s.find('=')) == "sm_count";
  if (scheduled && !smCountChosen) {
    try {
      defaults.push_back("sm_count=" + std::to_string(sched::ScheduleReader(o.trace).info().config.smCount));
    } catch (const std::invalid_argument& e) {
      throw UserError(e.what());
    }
  }
  std::vector<std::string> given;
  if (!o.runs.empty()) given.push_back("runs=" + o.runs);
  if (!o.seed.empty()) given.push_back("seed=" + o.seed);
  if (!o.sm.empty()) given.push_back("sm=" + o.sm);
  const cachesim::Config config = loadCommandConfig(o.config, defaults, o.sets, given);
  cachesim::Report report;
  if (scheduled) {
    // Keys the user chose must agree with the file: those set, every key of a --config preset
    // (a schedule made for 14 SMs is not simulated as on a 15-SM GTX480) but timing, which
    // presets turn on and a scheduled file always turns off, and the keys a --config file lists
    // (timing too: a file that asks for it asks for what a scheduled file cannot give).
    std::vector<std::string> explicitKeys;
    for (const std::string& s : o.sets) explicitKeys.push_back(s.substr(0, s.find('=')));
    if (fileKeys) {
      explicitKeys.insert(explicitKeys.end(), fileKeys->begin(), fileKeys->end());
    } else {
      for (const std::string& key : cachesim::Config::keys())
        if (key != "timing") explicitKeys.push_back(key);
    }
    report = simulateSchedule(o.trace, config, explicitKeys, o.threads);
  } else {
    try {
      report = simulateTrace(o.trace, config, o.threads);
    } catch (const NotATraceFileError& e) {
      // Neither kind it reads (isScheduledFile said no): often `cltrace schedule`'s text or csv
      // output, which is for reading.
      throw UserError(std::string(e.what()) + "; simulate reads trace files and binary scheduled files (cltrace "
                                              "schedule's default --format binary), not text or csv schedules");
    }
  }
  if (o.json)
    cachesim::printJson(std::cout, report);
  else
    cachesim::printText(std::cout, report);
}

const CommandRegistration registration("simulate", [](CLI::App& app) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand("simulate", "Simulate the Fermi L1 cache on a scheduled trace");
  cmd->add_option("trace", o->trace,
                  "Trace file (scheduled afresh per run), or a binary scheduled file from cltrace schedule "
                  "(simulated in its order, timing off)")
      ->required();
  cmd->add_option("--config", o->config, "Preset (gtx480-16k, gtx480-48k, gtx470-16k, gtx470-48k) or JSON file")
      ->capture_default_str()
      ->check(nonEmpty())
      ->type_name("PRESET|FILE");
  addRepeatable(*cmd, "--set", o->sets, "KEY=VALUE configuration override (repeatable; see docs/cachesim.md)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--runs", o->runs,
                  "Runs with seeds seed, seed+1, ...; reports the median miss rate (default: the configuration's, 1 "
                  "in the presets)")
      ->check(nonEmpty())
      ->check(configValue("runs"))
      ->type_name("N");
  cmd->add_option("--seed", o->seed, "Seed of the first run (default: the configuration's, 1 in the presets)")
      ->check(nonEmpty())
      ->check(configValue("seed"))
      ->type_name("N");
  cmd->add_option("--sm", o->sm,
                  "SM whose L1 is simulated: an index, all, or random (per run) (default: the configuration's, 0 in "
                  "the presets)")
      ->check(nonEmpty())
      ->check(configValue("sm"))
      ->type_name("SM");
  addThreadsOption(*cmd, o->threads);
  cmd->add_flag("--json", o->json, "Print JSON (keys in docs/cachesim.md) instead of text");
  cmd->callback([o, cmd] {
    o->configGiven = cmd->count("--config") > 0;
    runSimulate(*o);
  });
});

}  // namespace
}  // namespace cltrace::cli
