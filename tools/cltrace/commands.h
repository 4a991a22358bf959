// Subcommands of the cltrace tool. Each cmd_*.cpp registers itself with a static
// CommandRegistration; main() adds them to the CLI11 app in name order.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <stdexcept>
#include <string>

namespace cltrace::cli {

// A problem with what the user asked for. main() prints "cltrace: error: <what>" and exits 1.
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown to end the tool with a given exit status and no message (e.g. `wrap` passing on the
// wrapped program's status).
struct ExitStatus {
  int code;
};

// `setup` adds the subcommand (options and a callback that does the work) to `app`.
using CommandSetup = std::function<void(CLI::App& app)>;

struct CommandRegistration {
  CommandRegistration(const std::string& name, CommandSetup setup);
};

}  // namespace cltrace::cli
