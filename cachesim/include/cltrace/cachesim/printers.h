// Printers for simulation results: a JSON document (keys listed in docs/cachesim.md) and a
// human-readable text summary. Neither changes the statistics.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "cltrace/cachesim/simulator.h"
#include "cltrace/cachesim/stats.h"

namespace cltrace::cachesim {

// The statistics keys only (reads, read_misses, ..., misses{}, per_instruction[], reuse_histogram{}).
nlohmann::json statsToJson(const Stats& stats);
// Statistics keys + "sm", "config"{} and "runs"{}.
nlohmann::json reportToJson(const Report& report);

void printJson(std::ostream& out, const Report& report, int indent = 2);
// "12.34%", or what an rsd of none means (RunSummary::rsd).
std::string rsdText(const std::optional<double>& rsd);

void printText(std::ostream& out, const Report& report);

}  // namespace cltrace::cachesim
