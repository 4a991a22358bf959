// `cltrace stats FILE`: record counts of a trace file per kind, instruction and buffer.
#include <cstdio>
#include <memory>
#include <string>

#include "cltrace/trace_file.h"
#include "cltrace/trace_text.h"
#include "commands.h"

static cltrace::cli::CommandRegistration reg("stats", [](CLI::App& app) {
  auto* sub =
      app.add_subcommand("stats", "Count a trace file's records per kind, instruction and buffer");
  auto path = std::make_shared<std::string>();
  sub->add_option("file", *path, "trace file")->required();
  sub->callback([path] {
    std::unique_ptr<cltrace::TraceReader> reader;
    try {
      reader = std::make_unique<cltrace::TraceReader>(*path);
    } catch (const cltrace::TraceFileError&) {
      cltrace::cli::explainScheduledFile(*path, "stats");
      throw;
    }
    cltrace::printTraceStats(*reader, stdout);
  });
});
