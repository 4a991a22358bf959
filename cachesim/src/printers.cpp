#include "cltrace/cachesim/printers.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <nlohmann/json.hpp>

namespace cltrace::cachesim {

using nlohmann::json;

namespace {

json missesToJson(const MissCounts& m) {
  return json{{"cold", m.cold}, {"capacity", m.capacity}, {"conflict", m.conflict}, {"latency", m.latency},
              {"mshr", m.mshr}};
}

double ratio(uint64_t a, uint64_t b) { return b == 0 ? 0.0 : double(a) / double(b); }

json orNull(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// A rate over no reads is none (JSON null), not 0: 0 would read as "every read hits".
json rateOrNull(uint64_t reads, double rate) { return orNull(reads == 0 ? std::nullopt : std::optional(rate)); }

}  // namespace

std::string rsdText(const std::optional<double>& rsd) {
  return rsd ? fmt::format("{:.2f}%", *rsd) : std::string("none (the median is 0 and the runs differ)");
}

json statsToJson(const Stats& s) {
  json j = json::object();
  j["steps"] = s.steps;
  j["requests_before_coalescing"] = s.requestsBeforeCoalescing;
  j["requests"] = s.requests;
  j["reads"] = s.reads;
  j["read_hits"] = s.readHits;
  j["read_misses"] = s.readMisses;
  j["miss_rate"] = rateOrNull(s.reads, s.missRate());
  j["writes"] = s.writes;
  j["write_hits"] = s.writeHits;
  j["write_misses"] = s.writeMisses;
  j["write_backs"] = s.writeBacks;
  j["atomics"] = s.atomics;
  j["constant_loads"] = s.constantLoads;
  j["barriers"] = s.barriers;
  j["fences"] = s.fences;
  j["cycles"] = s.cycles;
  j["misses"] = missesToJson(s.misses);

  json ins = json::array();
  for (const InstructionStats& i : s.perInstruction) {
    ins.push_back(json{{"instruction", i.instruction},
                       {"steps", i.steps},
                       {"requests_before_coalescing", i.requestsBeforeCoalescing},
                       {"requests", i.requests},
                       {"reads", i.reads},
                       {"read_hits", i.readHits},
                       {"read_misses", i.readMisses},
                       {"miss_rate", rateOrNull(i.reads, i.missRate())},
                       {"writes", i.writes},
                       {"write_misses", i.writeMisses},
                       {"atomics", i.atomics},
                       {"constant_loads", i.constantLoads},
                       {"misses", missesToJson(i.misses)}});
  }
  j["per_instruction"] = std::move(ins);

  json buckets = json::array();
  for (uint32_t b = 0; b < s.reuse.buckets.size(); ++b) {
    buckets.push_back(json{{"min", ReuseHistogram::bucketMin(b)},
                           {"max", ReuseHistogram::bucketMax(b)},
                           {"count", s.reuse.buckets[b]}});
  }
  j["reuse_histogram"] = json{{"cold", s.reuse.cold}, {"total", s.reuse.total()}, {"buckets", std::move(buckets)}};
  return j;
}

json reportToJson(const Report& r) {
  json j = statsToJson(r.stats);
  for (json& i : j["per_instruction"])
    if (const std::string& where = r.sourceOf(i["instruction"].get<uint32_t>()); !where.empty()) i["source"] = where;
  j["sm"] = r.sm;
  j["warnings"] = r.warnings;
  j["config"] = r.config.toJson();
  j["schedule_seed"] = r.scheduleSeed ? json(*r.scheduleSeed) : json(nullptr);
  json values = json::array();
  for (const std::optional<double>& v : r.runs.values) values.push_back(orNull(v));
  j["runs"] = json{{"count", r.runs.count},
                   {"with_reads", r.runs.withReads},
                   {"median", orNull(r.runs.median)},
                   {"rsd", orNull(r.runs.rsd)},
                   {"values", std::move(values)},
                   {"seeds", r.runs.seeds},
                   {"sms", r.runs.sms},
                   {"representative", r.runs.representative}};
  return j;
}

void printJson(std::ostream& out, const Report& report, int indent) {
  out << reportToJson(report).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

void printText(std::ostream& out, const Report& report) {
  const Stats& s = report.stats;
  const Config& c = report.config;
  fmt::print(out, "L1 cache: {} B, {} B lines, {}-way, {} sets, {} index, {}, {}, timing {}\n", c.size, c.lineSize,
             c.associativity, c.sets(), toString(c.setIndex), toString(c.replacement), toString(c.writePolicy),
             c.timing ? "on" : "off");
  if (c.timing)
    fmt::print(out, "  MSHRs {} per SM, {} per warp; miss latency {} + |N(0, {}^2)|, hit latency {}\n",
               c.mshrs == 0 ? std::string("unlimited") : std::to_string(c.mshrs),
               c.mshrsPerWarp == 0 ? std::string("unlimited") : std::to_string(c.mshrsPerWarp), c.minLatency,
               c.latencySigma, c.hitLatency);
  fmt::print(out, "SM: {}\n", report.sm);
  if (report.scheduleSeed)
    fmt::print(out, "order: the scheduled file's, drawn with seed {} (random policy; the seed of the runs draws the "
                    "simulation's own choices)\n",
               *report.scheduleSeed);
  for (const std::string& w : report.warnings) fmt::print(out, "warning: {}\n", w);
  fmt::print(out, "requests        {:>12} ({} lane accesses before coalescing)\n", s.requests,
             s.requestsBeforeCoalescing);
  fmt::print(out, "reads           {:>12}\n", s.reads);
  fmt::print(out, "  hits          {:>12}\n", s.readHits);
  fmt::print(out, "  misses        {:>12}  miss rate {}\n", s.readMisses,
             s.reads == 0 ? std::string("none (no reads)") : fmt::format("{:.2f}%", 100.0 * s.missRate()));
  if (c.classify) {
    fmt::print(out, "    cold        {:>12}\n", s.misses.cold);
    fmt::print(out, "    capacity    {:>12}\n", s.misses.capacity);
    fmt::print(out, "    conflict    {:>12}\n", s.misses.conflict);
  } else {
    // Unclassified misses are not cold, capacity or conflict: their counts would read 0.
    fmt::print(out, "    not split into cold/capacity/conflict (classify=off)\n");
  }
  fmt::print(out, "  latency miss  {:>12}\n", s.misses.latency);
  fmt::print(out, "MSHR stalls     {:>12}\n", s.misses.mshr);
  fmt::print(out, "writes          {:>12} ({} hits, {} misses, {} write-backs)\n", s.writes, s.writeHits,
             s.writeMisses, s.writeBacks);
  fmt::print(out, "atomics         {:>12}\n", s.atomics);
  fmt::print(out, "constant loads  {:>12}\n", s.constantLoads);
  fmt::print(out, "barriers/fences {:>12} / {}\n", s.barriers, s.fences);
  if (!s.perInstruction.empty()) {
    bool sources = false;
    for (const InstructionStats& i : s.perInstruction) sources = sources || !report.sourceOf(i.instruction).empty();
    fmt::print(out, "per instruction:\n  {:>6} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10}{}\n", "instr", "reads", "misses",
               "latency", "rate", "writes", "other", sources ? "  source" : "");
    for (const InstructionStats& i : s.perInstruction) {
      const std::string& where = report.sourceOf(i.instruction);
      fmt::print(out, "  {:>6} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10}{}\n", i.instruction, i.reads, i.readMisses,
                 i.misses.latency, i.reads == 0 ? std::string("-") : fmt::format("{:.2f}%", 100.0 * i.missRate()),
                 i.writes, i.atomics + i.constantLoads, where.empty() ? "" : "  " + where);
    }
  }
  if (s.reuse.total() != 0) {
    fmt::print(out, "reuse distance histogram (lines):\n  {:>21} {:>12} {:>7.2f}%\n", "cold (infinite)", s.reuse.cold,
               100.0 * ratio(s.reuse.cold, s.reuse.total()));
    for (uint32_t b = 0; b < s.reuse.buckets.size(); ++b)
      fmt::print(out, "  {:>21} {:>12} {:>7.2f}%\n",
                 fmt::format("[{}, {}]", ReuseHistogram::bucketMin(b), ReuseHistogram::bucketMax(b)),
                 s.reuse.buckets[b], 100.0 * ratio(s.reuse.buckets[b], s.reuse.total()));
  }
  const RunSummary& runs = report.runs;
  if (runs.count > 1) {
    fmt::print(out, "runs: {}", runs.count);
    if (runs.withReads < runs.count)
      fmt::print(out, ", {} with reads (a run whose L1 sees no reads has no miss rate)", runs.withReads);
    if (runs.median)
      fmt::print(out, ", median miss rate {:.2f}%, relative standard deviation {}", 100.0 * *runs.median,
                 rsdText(runs.rsd));
    fmt::print(out, "\n");
  }
}

}  // namespace cltrace::cachesim
