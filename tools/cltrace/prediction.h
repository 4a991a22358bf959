// The report of `cltrace predict` (and `cltrace wrap --predict`): what was traced, the L1
// configuration, the simulated counts and miss types, the spread over runs, the instructions
// with the most misses and the time each stage took.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/passes/instrument.h"
#include "cltrace/trace_file.h"

namespace cltrace::cli {

struct Prediction {
  TraceHeader trace;
  std::vector<passes::AccessInfo> accesses;  // instruction texts, when known
  cachesim::Report report;
  std::vector<std::pair<std::string, double>> stageSeconds;  // in pipeline order
};

// Schedules and simulates the trace at `tracePath` (runs, SM choice and seeds from `config`).
// Scheduler diagnostics (the same on every run) go to stderr once. Throws UserError for a
// configuration the trace does not fit (e.g. a workgroup larger than max_threads_per_sm).
// `threads` runs proceed at once (0: one per hardware thread); the report is the same for any.
cachesim::Report simulateTrace(const std::string& tracePath, const cachesim::Config& config, uint32_t threads);
// Simulates the binary scheduled file at `path` in its order (cachesim::configForSchedule: the
// file fixes the scheduling keys, timing is off; `explicitKeys` are the keys the user set, one
// that disagrees with the file is a UserError).
cachesim::Report simulateSchedule(const std::string& path, const cachesim::Config& config,
                                  const std::vector<std::string>& explicitKeys, uint32_t threads);
// The configuration of a command that simulates: `presetOrFile`, then `defaults` (the defaults
// of flags not given), the --set overrides `sets` and `given` (flags given on the command line:
// they win over --set, as --set wins over a default). Each --set value is checked even where a
// flag replaces it, in the configuration it would give if it won (`--runs 1 --set runs=0` is an
// error, not a value dropped unread). Errors are UserErrors.
cachesim::Config loadCommandConfig(const std::string& presetOrFile, const std::vector<std::string>& defaults,
                                   const std::vector<std::string>& sets, const std::vector<std::string>& given);
// The instructions a (version 2) trace header describes, with their texts.
std::vector<passes::AccessInfo> accessesOf(const TraceHeader& header);
// Adds --threads to a command that simulates.
void addThreadsOption(CLI::App& sub, uint32_t& threads);

nlohmann::json predictionToJson(const Prediction& p);
void printPrediction(std::ostream& out, const Prediction& p);

// "cltrace: <what>..." on stderr when stderr is a terminal (progress of long steps).
void progress(const std::string& what);

}  // namespace cltrace::cli
