#include "prediction.h"

#include <fmt/core.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "cltrace/cachesim/coalescer.h"
#include "cltrace/cachesim/printers.h"
#include "cltrace/cachesim/trace_simulation.h"
#include "commands.h"

namespace cltrace::cli {

namespace {

std::string dims(const std::array<uint64_t, 3>& v, uint32_t n) {
  std::string s;
  for (uint32_t d = 0; d < n; ++d) s += (d ? "x" : "") + std::to_string(v[d]);
  return s;
}

std::string instructionText(const Prediction& p, uint32_t id) {
  for (const auto& a : p.accesses)
    if (a.id == id) return a.text;
  return "";
}

// The scheduler's diagnostics of a run (a barrier not every work-item reaches, ...), each as a
// warning of the report.
std::vector<std::string> diagnosticsOf(const sched::Scheduler& s) {
  std::vector<std::string> out;
  for (const sched::Diagnostic& d : s.diagnostics()) out.push_back(d.message);
  if (s.diagnosticCount() > s.diagnostics().size())
    out.push_back(fmt::format("{} more diagnostics not shown", s.diagnosticCount() - s.diagnostics().size()));
  return out;
}

// Runs `config` over the steps `factory` makes, on `threads` threads (0: one per hardware
// thread), printing the report's warnings.
cachesim::Report simulateSteps(const cachesim::Config& config, const cachesim::StepSourceFactory& factory,
                               uint32_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  cachesim::Report report = cachesim::simulate(config, factory, {}, threads);
  for (const std::string& w : report.warnings) fmt::print(stderr, "cltrace: warning: {}\n", w);
  return report;
}

}  // namespace

std::vector<passes::AccessInfo> accessesOf(const TraceHeader& header) {
  std::vector<passes::AccessInfo> accesses;
  for (size_t i = 0; i < header.instructions.size(); ++i) {
    const InstructionShape& s = header.instructions[i];
    passes::AccessInfo a;
    a.id = static_cast<uint32_t>(i);
    a.kind = s.kind;
    a.size = s.size;
    a.flags = s.flags;
    a.depth = s.depth;
    a.dynamic = s.dynamic;
    if (i < header.instructionTexts.size()) a.text = header.instructionTexts[i];
    accesses.push_back(std::move(a));
  }
  return accesses;
}

cachesim::Config loadCommandConfig(const std::string& presetOrFile, const std::vector<std::string>& defaults,
                                   const std::vector<std::string>& sets, const std::vector<std::string>& given) {
  const auto join = [](std::initializer_list<const std::vector<std::string>*> parts) {
    std::vector<std::string> all;
    for (const auto* part : parts) all.insert(all.end(), part->begin(), part->end());
    return all;
  };
  try {
    if (!given.empty() && !sets.empty()) cachesim::loadConfig(presetOrFile, join({&defaults, &given, &sets}));
    return cachesim::loadConfig(presetOrFile, join({&defaults, &sets, &given}));
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
}

void addThreadsOption(CLI::App& sub, uint32_t& threads) {
  sub.add_option("--threads", threads,
                 "simulation runs that proceed at once (0: one per hardware thread); unless it is 1, a trace "
                 "file is also decoded on a thread of its own, ahead of its run; the results do not depend on it")
      ->capture_default_str()
      ->transform(unsignedInteger(32));
}

void progress(const std::string& what) {
  if (isatty(STDERR_FILENO)) fmt::print(stderr, "cltrace: {}...\n", what);
}

cachesim::Report simulateTrace(const std::string& tracePath, const cachesim::Config& config, uint32_t threads) {
  try {
    // --threads 1 keeps everything on one thread; otherwise the file is decoded on a thread of
    // its own, ahead of the scheduler.
    // Said on stderr as soon as the first run has them, and kept for the report (its text and
    // JSON warnings); the first run is over before simulate returns.
    auto diagnostics = std::make_shared<std::vector<std::string>>();
    auto onFirstRunDone = [diagnostics](const sched::Scheduler& s) {
      *diagnostics = diagnosticsOf(s);
      for (const std::string& d : *diagnostics) fmt::print(stderr, "cltrace: warning: {}\n", d);
    };
    cachesim::Report report =
        simulateSteps(config,
                      cachesim::traceStepSourceFactory(tracePath, config, onFirstRunDone,
                                                       cachesim::defaultPreparedTraceBytes(), threads != 1),
                      threads);
    report.warnings.insert(report.warnings.begin(), diagnostics->begin(), diagnostics->end());
    const TraceReader reader(tracePath);
    for (const std::string& text : reader.header().instructionTexts)
      report.instructionSources.push_back(instructionSource(text));
    return report;
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  } catch (const cachesim::LaneSizeError& e) {
    throw UserError("trace file '" + tracePath + "': " + e.what());
  }
}

cachesim::Report simulateSchedule(const std::string& path, const cachesim::Config& config,
                                  const std::vector<std::string>& explicitKeys, uint32_t threads) {
  try {
    const sched::ScheduleInfo info = sched::ScheduleReader(path).info();
    cachesim::Report report = simulateSteps(cachesim::configForSchedule(config, info, explicitKeys),
                                            cachesim::scheduleFileStepSourceFactory(path), threads);
    if (info.config.policy == sched::Policy::Random) report.scheduleSeed = info.config.seed;
    return report;
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  } catch (const cachesim::LaneSizeError& e) {
    throw UserError("scheduled file '" + path + "': " + e.what());
  }
}

nlohmann::json predictionToJson(const Prediction& p) {
  nlohmann::json j = cachesim::reportToJson(p.report);
  const NDRange& r = p.trace.range;
  j["kernel"] = p.trace.kernelName;
  j["device"] = p.trace.device;
  j["launch"] = {{"dims", r.dims},
                 {"global", std::vector<uint64_t>(r.global.begin(), r.global.begin() + r.dims)},
                 {"local", std::vector<uint64_t>(r.local.begin(), r.local.begin() + r.dims)},
                 {"workgroups", r.workgroups()},
                 {"work_items", p.trace.workItemCount},
                 {"records", p.trace.recordCount}};
  nlohmann::json instructions = nlohmann::json::array();
  for (const auto& a : p.accesses)
    instructions.push_back({{"id", a.id}, {"kind", accessKindName(a.kind)}, {"size", a.size},
                            {"loop_depth", a.depth}, {"text", a.text}});
  j["instructions"] = instructions;
  nlohmann::json stages = nlohmann::json::object();
  for (const auto& [name, seconds] : p.stageSeconds) stages[name] = seconds;
  j["seconds"] = stages;
  return j;
}

void printPrediction(std::ostream& out, const Prediction& p) {
  const NDRange& r = p.trace.range;
  const cachesim::Stats& s = p.report.stats;
  const cachesim::RunSummary& runs = p.report.runs;
  fmt::print(out, "kernel {}: global {}, local {}, {} workgroups, {} work-items, {} records\n",
             p.trace.kernelName, dims(r.global, r.dims), dims(r.local, r.dims), r.workgroups(),
             p.trace.workItemCount, p.trace.recordCount);
  fmt::print(out, "traced on {}\n\n", p.trace.device);
  cachesim::printText(out, p.report);
  if (!runs.median) {
    // 0 of 0 is no rate.
    fmt::print(out, "\npredicted L1 read miss rate: none, the L1 sees no global reads{} (SM {})\n",
               runs.count > 1 ? fmt::format(" in any of the {} runs", runs.count) : "", p.report.sm);
  } else {
    fmt::print(out, "\npredicted L1 read miss rate: {:.2f}% (median of {} run{}", 100 * *runs.median, runs.withReads,
               runs.withReads == 1 ? "" : "s");
    if (runs.withReads < runs.count)
      fmt::print(out, " whose L1 sees reads, of {}", runs.count);
    // The counts above are the representative run's (the closest to the median): where its rate
    // is not the median (an even count of runs split between SMs that differ), say so.
    const std::optional<double>& shown = runs.values[runs.representative];
    const bool apart = fmt::format("{:.2f}", 100 * *shown) != fmt::format("{:.2f}", 100 * *runs.median);
    if (!apart) fmt::print(out, ", SM {}", p.report.sm);
    fmt::print(out, "; relative standard deviation {}", cachesim::rsdText(runs.rsd));
    double lo = *runs.median, hi = *runs.median;
    for (const std::optional<double>& v : runs.values)
      if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
    fmt::print(out, ", range {:.2f}%..{:.2f}%", 100 * lo, 100 * hi);
    if (apart)
      fmt::print(out, "; the counts above are a run on SM {} at {:.2f}%, the closest to the median", p.report.sm,
                 100 * *shown);
    fmt::print(out, ")\n");
  }

  std::vector<cachesim::InstructionStats> top = s.perInstruction;
  std::stable_sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.readMisses > b.readMisses; });
  fmt::print(out, "top instructions by read misses:\n");
  size_t shown = 0;
  for (const auto& i : top) {
    if (shown == 5 || i.readMisses == 0) break;
    fmt::print(out, "  [{}] {} misses of {} reads ({:.2f}%)  {}\n", i.instruction, i.readMisses, i.reads,
               i.reads ? 100.0 * i.readMisses / i.reads : 0.0, instructionText(p, i.instruction));
    ++shown;
  }
  if (shown == 0) fmt::print(out, "  (no read misses)\n");
  if (!p.stageSeconds.empty()) {
    fmt::print(out, "time:");
    double total = 0;
    for (const auto& [name, seconds] : p.stageSeconds) {
      fmt::print(out, " {} {:.2f} s,", name, seconds);
      total += seconds;
    }
    fmt::print(out, " total {:.2f} s\n", total);
  }
}

}  // namespace cltrace::cli
