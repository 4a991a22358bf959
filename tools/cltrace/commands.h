// Subcommands of the cltrace tool. Each cmd_*.cpp registers itself with a static
// CommandRegistration; main() adds them to the CLI11 app in name order.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

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

// CLI11 transform for unsigned options (->transform, as it rewrites the value). CLI11 itself
// would wrap a negative number into a huge one, clamp one past 2^64 to 2^64 - 1 and read a
// leading zero as octal: the value is rewritten in decimal as wrapper::parseUnsigned reads it,
// and refused, with the reason, where it is no such number. `bits`: the option's width (32 for a
// uint32_t, whose values past 2^32 - 1 are refused as not fitting; CLI11 said "Could not convert").
CLI::Validator unsignedInteger(unsigned bits = 64);

// A list option that takes one value per flag (repeat the flag; with `delimiter`, also
// A,B,C): one taking several values per flag would swallow the positional argument after it
// (`--global 64,64 kernel.cl`) and the `--` before a wrapped program's own options.
template <typename T>
CLI::Option* addRepeatable(CLI::App& app, const std::string& name, std::vector<T>& values, const std::string& help,
                           char delimiter = '\0') {
  CLI::Option* o = app.add_option(name, values, help)
                       ->expected(1)
                       ->allow_extra_args(false)
                       ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  if (delimiter) o->delimiter(delimiter);
  return o;
}

// The items of comma lists (A,B,C; a list per flag given), in order. Throws
// std::invalid_argument "'LIST' has an empty WHAT" for an empty item: CLI11's own splitting
// (->delimiter) drops empty items, and for a list of commas only took the next argument as the
// list (`wrap -k , -- ./app` traced a kernel named `--`).
std::vector<std::string> listItems(const std::vector<std::string>& lists, const std::string& what);

// The checks below describe nothing in --help (CLI11 would append each description to the
// option's value name, as in "TEXT:TEXT:VALUE"): an option whose value is not plain TEXT or UINT
// names it with ->type_name("N").

// CLI11 check that `parse` takes the value (it throws std::invalid_argument, whose message is
// the error, otherwise): a value an option does not take is a command-line mistake (exit 2),
// found before any work.
template <typename Parse>
CLI::Validator parsedBy(Parse parse) {
  return CLI::Validator(
      [parse](std::string& v) {
        try {
          parse(v);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      "");
}
// CLI11 check, after unsignedInteger's transform, that the value lies in [low, high] ("must be at
// least LOW" when high is the largest value): one out of range is a command-line mistake too.
CLI::Validator between(uint64_t low, uint64_t high = UINT64_MAX);

// The value of an option that stands for configuration key `key` (--runs, --sm, --seed), as the
// key takes it alone (limits that depend on other keys are checked with the whole configuration).
CLI::Validator configValue(const std::string& key);

// CLI11 check for options whose empty value would otherwise read as "not given".
inline CLI::Validator nonEmpty() {
  return CLI::Validator([](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); },
                        "");
}

// UserError when `input` is a pipe or a device (/dev/stdin): `command` reads it more than once.
// A missing path passes (its reader names the problem).
void requireRereadable(const std::string& input, const std::string& command);

// UserError when `output` (given with `option`) is the file `input` names, through links too:
// writing it would destroy `input` (described as `what`, e.g. "the input trace") while it is read.
void requireNotInput(const std::string& input, const std::string& what, const std::string& output,
                     const std::string& option);
inline void requireNotInput(const std::string& input, const std::string& output, const std::string& option) {
  requireNotInput(input, "the input trace", output, option);
}

// For a command that reads traces (`command`: "stats", "dump", ...) whose trace reader has failed
// on `path`: UserError when `path` is a binary scheduled file (cltrace schedule's output), saying
// so and which command takes it (the reader says only "wrong magic"); otherwise returns, for the
// caller to rethrow. Only a regular file is read again: a pipe's bytes are gone.
void explainScheduledFile(const std::string& path, const std::string& command);

}  // namespace cltrace::cli
