// `cltrace dump FILE [--limit N]`: prints a trace file's header and records.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "cltrace/trace_file.h"
#include "cltrace/trace_text.h"
#include "commands.h"

static cltrace::cli::CommandRegistration reg("dump", [](CLI::App& app) {
  auto* sub = app.add_subcommand("dump", "Print a trace file's header and one line per record");
  auto path = std::make_shared<std::string>();
  auto limit = std::make_shared<uint64_t>(UINT64_MAX);
  sub->add_option("file", *path, "trace file")->required();
  sub->add_option("--limit", *limit, "print at most N records")->transform(cltrace::cli::unsignedInteger());
  sub->callback([path, limit] {
    std::unique_ptr<cltrace::TraceReader> reader;
    try {
      reader = std::make_unique<cltrace::TraceReader>(*path);
    } catch (const cltrace::TraceFileError&) {
      cltrace::cli::explainScheduledFile(*path, "dump");
      throw;
    }
    cltrace::dumpTrace(*reader, stdout, *limit);
  });
});
