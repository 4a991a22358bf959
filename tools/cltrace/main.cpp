#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <new>
#include <string>
#include <system_error>

#include <sys/stat.h>

#include "cltrace/cachesim/trace_simulation.h"
#include "cltrace/printable.h"
#include "cltrace/wrapper/standalone.h"
#include "commands.h"
#include "crash_report.h"

namespace cltrace::cli {

static std::map<std::string, CommandSetup>& registry() {
  static std::map<std::string, CommandSetup> commands;
  return commands;
}

CommandRegistration::CommandRegistration(const std::string& name, CommandSetup setup) {
  registry().emplace(name, std::move(setup));
}

CLI::Validator unsignedInteger(unsigned bits) {
  return CLI::Validator(
      [bits](std::string& v) {
        try {
          const uint64_t value = wrapper::parseUnsigned(v);
          if (bits < 64 && value >> bits != 0)
            return "'" + v + "' does not fit in " + std::to_string(bits) + " bits (at most " +
                   std::to_string((uint64_t{1} << bits) - 1) + ")";
          v = std::to_string(value);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      "");
}

std::vector<std::string> listItems(const std::vector<std::string>& lists, const std::string& what) {
  std::vector<std::string> items;
  for (const std::string& list : lists) {
    for (size_t begin = 0;;) {
      const size_t end = std::min(list.find(',', begin), list.size());
      std::string item = list.substr(begin, end - begin);
      if (item.empty()) throw std::invalid_argument("'" + printable(list) + "' has an empty " + what);
      items.push_back(std::move(item));
      if (end == list.size()) break;
      begin = end + 1;
    }
  }
  return items;
}

CLI::Validator between(uint64_t low, uint64_t high) {
  return parsedBy([low, high](const std::string& v) {
    const uint64_t value = std::stoull(v);  // unsignedInteger made it a decimal number
    if (value >= low && value <= high) return;
    if (high == UINT64_MAX) throw std::invalid_argument("must be at least " + std::to_string(low));
    throw std::invalid_argument("must be between " + std::to_string(low) + " and " + std::to_string(high));
  });
}

CLI::Validator configValue(const std::string& key) {
  // Only the value itself: an SM index is checked against the SM count of the configuration the
  // command builds later (--set sm_count=32 --sm 20), not the default preset's.
  return parsedBy(
      [key](const std::string& v) {
        cachesim::Config c = cachesim::Config::fromPreset("gtx480-16k");
        c.set(key, v);
        if (key != "sm") c.validate();  // (an index is checked against the SM count given)
      });
}

void requireRereadable(const std::string& input, const std::string& command) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(input, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
      !std::filesystem::is_directory(st))
    throw UserError(input + ": not a regular file (a pipe or a device); " + command +
                    " reads its input more than once, so save it to a file first");
}

void requireNotInput(const std::string& input, const std::string& what, const std::string& output,
                     const std::string& option) {
  std::error_code ec;
  if (std::filesystem::exists(output, ec) && std::filesystem::equivalent(input, output, ec) && !ec)
    throw UserError(option + " " + output + " is " + what + " " + input + "; writing it would destroy it");
}

void explainScheduledFile(const std::string& path, const std::string& command) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || !cachesim::isScheduledFile(path)) return;
  throw UserError("'" + path + "' is a scheduled file (the binary output of cltrace schedule), not a trace: " +
                  "cltrace simulate takes it; cltrace " + command + " takes the trace it was scheduled from");
}

namespace {

// A report that did not reach standard output (a full disk, /dev/full, a closed pipe with
// SIGPIPE ignored) is a failure: the caller must not take a truncated report for a whole one.
int checkedExit(int code) {
  errno = 0;
  std::cout.flush();
  const bool lost = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout.good();
  if (lost && code == 0) {  // a failed command has already said why
    const std::string why = errno != 0 ? std::string(": ") + std::strerror(errno) : std::string();
    fmt::print(stderr, "cltrace: error: cannot write standard output{}\n", why);
    code = 1;
  }
  if ((std::fflush(stderr) != 0 || std::ferror(stderr)) && code == 0) code = 1;
  return code;
}

}  // namespace

}  // namespace cltrace::cli

int main(int argc, char** argv) {
  // A file over the size limit (ulimit -f) is a write error with a message, not a silent kill.
  std::signal(SIGXFSZ, SIG_IGN);
  cltrace::cli::installCrashReport();
  CLI::App app{"cltrace: predict the Fermi L1 cache behaviour of OpenCL kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "cltrace 0.1.0");
  // Command-line mistakes begin as the tool's other errors do.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    return "cltrace: error: " + CLI::FailureMessage::simple(a, e);
  });
  for (auto& [name, setup] : cltrace::cli::registry()) setup(app);
  // A misspelt command would otherwise read as "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      fmt::print(stderr, "cltrace: error: unknown command '{}' (commands: {})\nRun with --help for more information.\n",
                 cltrace::printable(argv[1]), names);
      return cltrace::cli::checkedExit(2);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A command-line mistake exits with 2, as usage errors do by convention (CLI11 gives each
    // kind its own code from 100 up); --help and --version with 0.
    return cltrace::cli::checkedExit(app.exit(e) == 0 ? 0 : 2);
  } catch (const cltrace::cli::ExitStatus& s) {
    return cltrace::cli::checkedExit(s.code);
  } catch (const std::bad_alloc&) {
    // Allocations that inputs size are checked where they are made; this is what is left.
    fmt::print(stderr, "cltrace: error: out of memory (the input or configuration asks for more than this machine "
                       "can allocate)\n");
    return cltrace::cli::checkedExit(1);
  } catch (const std::system_error& e) {
    // fmt's failed write says "cannot write to file": when standard output failed, name it (a
    // report larger than stdio's buffer meets a full disk here, a smaller one in checkedExit).
    if (std::ferror(stdout))
      fmt::print(stderr, "cltrace: error: cannot write standard output: {}\n", e.code().message());
    else
      fmt::print(stderr, "cltrace: error: {}\n", e.what());
    return cltrace::cli::checkedExit(1);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cltrace: error: {}\n", e.what());
    return cltrace::cli::checkedExit(1);
  }
  return cltrace::cli::checkedExit(0);
}
