#include <fmt/core.h>

#include <csignal>
#include <exception>
#include <map>

#include "commands.h"

namespace cltrace::cli {

static std::map<std::string, CommandSetup>& registry() {
  static std::map<std::string, CommandSetup> commands;
  return commands;
}

CommandRegistration::CommandRegistration(const std::string& name, CommandSetup setup) {
  registry().emplace(name, std::move(setup));
}

}  // namespace cltrace::cli

int main(int argc, char** argv) {
  // A file over the size limit (ulimit -f) is a write error with a message, not a silent kill.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"cltrace: predict the Fermi L1 cache behaviour of OpenCL kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "cltrace 0.1.0");
  for (auto& [name, setup] : cltrace::cli::registry()) setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const cltrace::cli::ExitStatus& s) {
    return s.code;
  } catch (const std::exception& e) {
    fmt::print(stderr, "cltrace: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
