// cltrace wrap [--out DIR] [--kernel NAME...] [--launch N...] [--predict] -- ./app args
// Runs an unmodified OpenCL program with the cltrace layer loaded (OPENCL_LAYERS), which
// traces the selected launches. The program's output and exit status are passed through.
#include <fmt/core.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "cltrace/printable.h"
#include "cltrace/trace_file.h"
#include "cltrace/wrapper/device_activity.h"
#include "cltrace/wrapper/standalone.h"
#include "cltrace/wrapper/traced_kernel.h"
#include "commands.h"
#include "crash_report.h"
#include "prediction.h"

#ifndef CLTRACE_LAYER_PATH
#define CLTRACE_LAYER_PATH ""
#endif

namespace fs = std::filesystem;
using namespace cltrace;

namespace {

struct WrapFlags {
  std::string out = "cltrace-traces";
  bool predict = false;
  std::string config = "gtx480-16k";
  std::vector<std::string> sets;
  uint32_t runs = 20;
  bool runsGiven = false;  // --runs is on the command line (then it wins over --set runs=)
  uint32_t threads = 0;
  std::optional<uint64_t> traceBufferMiB;  // unset: $CLTRACE_TRACE_BUFFER_BYTES, else 256 MiB
  std::optional<uint64_t> traceTimeout;    // unset: $CLTRACE_TRACE_TIMEOUT, else worked out per launch
  std::vector<std::string> kernelLists, launchLists;  // as given (NAME,NAME and N,N), checked by CLI11
  std::vector<std::string> kernels;                    // their items
  std::vector<uint64_t> launches;
  std::vector<std::string> command;
};

// The layer next to the installed tool (../lib/libcltrace_layer.so) or in the build tree.
std::string layerPath() {
  if (const char* p = std::getenv("CLTRACE_LAYER"); p && *p) return p;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  for (fs::path candidate : {self.parent_path() / "../lib/libcltrace_layer.so",
                             self.parent_path() / "../../wrapper/libcltrace_layer.so",
                             fs::path(CLTRACE_LAYER_PATH)})
    if (!candidate.empty() && fs::exists(candidate)) return fs::canonical(candidate).string();
  throw cli::UserError("cannot find libcltrace_layer.so (set CLTRACE_LAYER to its path)");
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
  return s;
}

volatile pid_t gChild = 0;  // the program, for passSignalOn
void passSignalOn(int signal) {
  if (gChild > 0) ::kill(gChild, signal);
}
// SIGINT and SIGQUIT go on only when a process sent them (kill): a terminal's Ctrl-C (or quit key)
// reaches the program itself, which must not get it twice.
void passSignalFromProcessOn(int signal, siginfo_t* info, void*) {
  if (info->si_code <= 0) passSignalOn(signal);  // SI_USER, SI_QUEUE and the like
}

// Whether process `pid` has ended (a file it left can go).
bool processEnded(long pid) { return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

// Traces that processes of the program were still writing when they ended
// (OUT/NAME.PID-TID.partial, also one an earlier run left): removed, and said. A file of a
// process still alive (a grandchild the program left running) or of another name stays.
void removeUnfinishedTraces(const std::string& out) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(out, ec)) {
    const uint64_t writer = wrapper::partialTraceWriter(e.path().filename().string());
    if (writer == 0 || !e.is_regular_file(ec) || !processEnded(static_cast<long>(writer))) continue;
    std::error_code removed;
    fs::remove(e.path(), removed);
    fmt::print(stderr, "cltrace: warning: removed {}, an unfinished trace: the process writing it ended first\n",
               e.path().string());
  }
}

// The activity files (.run-in-flight.PID) of the program's processes that have ended, by pid:
// a process that crashed in a run leaves its file; those still running (a daemon the program
// started) keep theirs.
std::map<long, fs::path> endedActivityFiles(const std::string& out) {
  const std::string prefix = ".run-in-flight.";
  std::map<long, fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(out, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (!processEnded(pid)) continue;  // still running
    files[pid] = e.path();
  }
  return files;
}

// The program (process `pid`) ended in `signal`: when it crashed and the layer noted a count or
// trace run in flight (the driver crashed in it), says which and removes its unfinished trace.
// The run is the program's own process's, or, when a launcher started the program (`timeout`, a
// shell) and passed its signal on, the one another ended process left. Otherwise says that the
// program ended so (cltrace's exit status, 128 + the signal, is no signal a shell would name).
void sayCrashedRun(const fs::path& activity, const std::string& out, pid_t pid, int signal) {
  std::optional<wrapper::MirroredActivity> run;
  if (cli::isCrashSignal(signal)) {
    run = wrapper::readMirroredActivity(wrapper::mirroredActivityPath(activity.string(), pid));
    if (!run)
      for (const auto& [other, file] : endedActivityFiles(out))
        if ((run = wrapper::readMirroredActivity(file.string()))) break;
  }
  if (!run) {
    fmt::print(stderr, "cltrace: the program ended in signal {} ({})\n", signal, strsignal(signal));
    return;
  }
  fmt::print(stderr, "cltrace: error: the program ended in signal {} ({}) in {}: the OpenCL driver crashed there\n",
             signal, strsignal(signal), run->text);
  std::error_code ec;
  if (!run->partialFile.empty()) fs::remove(run->partialFile, ec);
}

// The launch lists the layer appends to in OUT, a line per launch beginning "<launch>\t".
// other-kernel.tsv ("<launch>\t<kernel>": a --launch number of a kernel --kernel does not name)
// is wrap's own, removed once read.
constexpr const char* kLaunchLists[] = {"launches.tsv", "untraced.tsv", "not-run.tsv", "other-kernel.tsv"};

// Calls `each(launch, line)` for every line of OUT/`list` (none when it is missing).
template <typename Each>
void forEachListedLaunch(const std::string& out, const char* list, Each each) {
  std::ifstream in(fs::path(out) / list);
  for (std::string line; std::getline(in, line);) each(std::strtoull(line.c_str(), nullptr, 10), line);
}

// The trace path of a launches.tsv line ("<launch>\t<kernel>\t<path>").
std::string listedTracePath(const std::string& line) { return line.substr(line.rfind('\t') + 1); }

// The traces an earlier wrap into OUT listed in its launches.tsv, which this run rewrites: left,
// they would mix with this run's under OUT/*.cltrace, unlisted. Only trace files in OUT itself
// are removed (the list is cltrace's own; a path elsewhere is not touched). A line that is not
// "<launch>\t<kernel>\t<path>" (the list damaged) is an error naming it, before any is removed.
void removeEarlierTraces(const std::string& out) {
  const std::string list = out + "/launches.tsv";
  std::vector<std::string> listed;
  uint64_t number = 0;
  forEachListedLaunch(out, "launches.tsv", [&](uint64_t, const std::string& line) {
    ++number;
    const size_t first = line.find('\t');  // after the launch number, all digits
    const bool launch =
        first != std::string::npos && first > 0 && line.find_first_not_of("0123456789") == first;
    std::string problem;
    if (!launch || line.find('\t', first + 1) == std::string::npos)
      problem = "not <launch><TAB><kernel><TAB><trace path>";
    else if (listedTracePath(line).empty())
      problem = "no trace path";
    if (!problem.empty())
      throw cli::UserError(list + " line " + std::to_string(number) + ": " + problem +
                           " (the list an earlier wrap into " + out +
                           " left is damaged; remove it or give another --out)");
    listed.push_back(listedTracePath(line));
  });
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(out), ec);
  if (ec) return;
  uint64_t removed = 0;
  for (const std::string& path : listed) {
    std::error_code e;
    const fs::path absolute = fs::absolute(path, e);
    const fs::path trace = e ? fs::path() : fs::weakly_canonical(absolute, e);
    if (!e && trace.parent_path() == dir && trace.extension() == ".cltrace" && fs::is_regular_file(trace, e) &&
        fs::remove(trace, e))
      ++removed;
  }
  if (removed > 0)
    fmt::print(stderr, "cltrace: removed {} trace{} of an earlier run that {} listed\n", removed,
               removed == 1 ? "" : "s", list);
}

void removeEndedActivityFiles(const std::string& out) {
  std::error_code ec;
  for (const auto& [pid, file] : endedActivityFiles(out)) fs::remove(file, ec);
}

// Whether execvp can find `name` as an executable file: a path when it has a slash, else a
// search of $PATH (its default when unset). Checked before the out folder is made, so that a
// misspelt program leaves nothing behind.
bool findsProgram(const std::string& name) {
  const auto executable = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return executable(name);
  const char* env = std::getenv("PATH");
  const std::string dirs = env ? env : "/usr/local/bin:/usr/bin:/bin";
  for (size_t begin = 0;;) {
    const size_t end = dirs.find(':', begin);
    const std::string dir = dirs.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (executable(fs::path(dir.empty() ? "." : dir) / name)) return true;
    if (end == std::string::npos) return false;
    begin = end + 1;
  }
}

int run(const WrapFlags& f) {
  if (f.command.empty()) throw cli::UserError("nothing to run: give the program after --");
  if (!findsProgram(f.command[0]))
    throw cli::UserError("cannot run '" + f.command[0] + "': " +
                         (f.command[0].find('/') != std::string::npos ? "no such executable file"
                                                                      : "no such program in PATH"));
  // A bad --config, --set or --runs is said before the program runs and before anything is made,
  // with --predict or without (where they would have no use: still a mistake, not one to ignore).
  // As in predict: --runs given wins over --set runs=, its default gives way to it.
  std::vector<std::string> defaults{"sm=random"}, given;
  (f.runsGiven ? given : defaults).push_back("runs=" + std::to_string(f.runs));
  const cachesim::Config config = cli::loadCommandConfig(f.config, defaults, f.sets, given);
  std::string layer = layerPath();
  std::error_code ec;
  fs::create_directories(f.out, ec);
  if (ec) throw cli::UserError("cannot create " + f.out + ": " + ec.message());
  removeEarlierTraces(f.out);
  for (const char* list : kLaunchLists) fs::remove(fs::path(f.out) / list, ec);
  const fs::path counter = fs::absolute(fs::path(f.out) / ".launch-counter");
  fs::remove(counter, ec);
  const fs::path activity = fs::absolute(fs::path(f.out) / ".run-in-flight");  // + ".PID" per process
  const fs::path loaded = fs::absolute(fs::path(f.out) / ".layer-loaded");      // made by the layer
  fs::remove(loaded, ec);
  removeEndedActivityFiles(f.out);
  // Said now rather than once per launch: every trace would fail to be written.
  if (!std::ofstream(fs::path(f.out) / "launches.tsv"))
    throw cli::UserError("cannot write into " + f.out);

  std::string layers = layer;
  if (const char* existing = std::getenv("OPENCL_LAYERS"); existing && *existing) layers += std::string(":") + existing;
  setenv("OPENCL_LAYERS", layers.c_str(), 1);
  setenv("CLTRACE_OUT", fs::absolute(f.out).c_str(), 1);
  setenv("CLTRACE_LAUNCH_COUNTER", counter.c_str(), 1);
  setenv("CLTRACE_ACTIVITY_FILE", activity.c_str(), 1);
  setenv("CLTRACE_LAYER_LOADED", loaded.c_str(), 1);
  setenv("CLTRACE_KERNELS", joined(f.kernels).c_str(), 1);
  std::vector<std::string> launches;
  for (uint64_t n : f.launches) launches.push_back(std::to_string(n));
  setenv("CLTRACE_LAUNCHES", joined(launches).c_str(), 1);
  if (f.traceBufferMiB) setenv("CLTRACE_TRACE_BUFFER_BYTES", std::to_string(*f.traceBufferMiB << 20).c_str(), 1);
  if (f.traceTimeout) setenv("CLTRACE_TRACE_TIMEOUT", std::to_string(*f.traceTimeout).c_str(), 1);

  std::vector<char*> argv;
  for (const auto& a : f.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw cli::UserError("cannot start " + f.command[0]);
  if (pid == 0) {
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "cltrace: error: cannot run '%s': %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  // A SIGTERM, SIGHUP, SIGINT or SIGQUIT sent to cltrace alone (a job runner's, `kill`) goes on
  // to the program, which then ends as it would; cltrace reports as usual. A terminal's Ctrl-C
  // reaches both: cltrace waits for the program. SIGINT and SIGQUIT ignored when cltrace
  // started (a background job of a script) stay ignored, as they are in the program.
  gChild = pid;
  for (int sig : {SIGTERM, SIGHUP}) std::signal(sig, passSignalOn);
  std::vector<std::pair<int, struct sigaction>> interrupts;  // the dispositions replaced
  for (int sig : {SIGINT, SIGQUIT}) {
    struct sigaction pass {}, before {};
    pass.sa_sigaction = passSignalFromProcessOn;
    pass.sa_flags = SA_SIGINFO;
    sigemptyset(&pass.sa_mask);
    if (sigaction(sig, nullptr, &before) == 0 && before.sa_handler != SIG_IGN && sigaction(sig, &pass, nullptr) == 0)
      interrupts.emplace_back(sig, before);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  for (int sig : {SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
  for (const auto& [sig, before] : interrupts) sigaction(sig, &before, nullptr);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (WIFSIGNALED(status)) sayCrashedRun(activity, f.out, pid, WTERMSIG(status));
  removeEndedActivityFiles(f.out);
  removeUnfinishedTraces(f.out);

  std::vector<std::string> traces;
  std::set<uint64_t> seen;
  std::set<std::string> selectedKernels;  // kernels of the launches selected (traced or not)
  const auto kernelOf = [](const std::string& line) {
    const size_t from = line.find('\t') + 1;
    return line.substr(from, line.find('\t', from) - from);
  };
  forEachListedLaunch(f.out, "launches.tsv", [&](uint64_t launch, const std::string& line) {
    traces.push_back(listedTracePath(line));
    seen.insert(launch);
    selectedKernels.insert(kernelOf(line));
  });
  uint64_t failed = 0;
  forEachListedLaunch(f.out, "untraced.tsv", [&](uint64_t launch, const std::string& line) {
    seen.insert(launch);
    selectedKernels.insert(kernelOf(line));
    ++failed;
  });
  // Made, but ran nothing (said as they happened).
  forEachListedLaunch(f.out, "not-run.tsv", [&](uint64_t launch, const std::string& line) {
    seen.insert(launch);
    selectedKernels.insert(kernelOf(line));
  });
  fmt::print(stderr, "cltrace: {} launch{} traced into {}\n", traces.size(), traces.size() == 1 ? "" : "es", f.out);
  if (!fs::remove(loaded, ec))
    fmt::print(stderr,
               "cltrace: warning: no process of the program loaded cltrace's OpenCL layer: it made no OpenCL "
               "call through the ICD loader (libOpenCL), or it ran OpenCL with OPENCL_LAYERS cleared from its "
               "environment\n");
  // The program's exit status is passed through, so these are said loudly instead.
  if (failed > 0)
    fmt::print(stderr, "cltrace: warning: {} selected launch{} ran untraced (the reasons are above)\n", failed,
               failed == 1 ? "" : "es");
  // Each name --kernel gives that no selected launch was of (misspelt, or never launched).
  std::vector<std::string> unmatched;
  for (const std::string& k : f.kernels)
    if (!selectedKernels.count(k)) unmatched.push_back(printable(k));  // control characters escaped
  if (!unmatched.empty())
    fmt::print(stderr, "cltrace: warning: no launch of the kernel{} named by --kernel ({}) was traced\n",
               unmatched.size() == 1 ? "" : "s", joined(unmatched));
  // Launches --launch names that were of other kernels than --kernel's.
  std::map<uint64_t, std::string> otherKernel;
  forEachListedLaunch(f.out, "other-kernel.tsv", [&](uint64_t launch, const std::string& line) {
    otherKernel.emplace(launch, line.substr(line.find('\t') + 1));
  });
  fs::remove(fs::path(f.out) / "other-kernel.tsv", ec);
  std::vector<std::string> missing;
  for (uint64_t n : f.launches) {
    if (seen.count(n)) continue;
    auto other = otherKernel.find(n);
    if (other == otherKernel.end())
      missing.push_back(std::to_string(n));
    else
      fmt::print(stderr,
                 "cltrace: warning: --launch {}: that launch was of kernel '{}', not of the kernel{} named by "
                 "--kernel ({})\n",
                 n, printable(other->second), f.kernels.size() == 1 ? "" : "s", printable(joined(f.kernels)));
  }
  if (!missing.empty())
    fmt::print(stderr, "cltrace: warning: --launch {}: the program made no such launch\n", joined(missing));
  if (f.predict) {
    // Reports go to stderr: the program's own output on stdout stays as it was. A launch the
    // simulator cannot take (a workgroup larger than the GPU's) is said, and the others still
    // reported; the program's exit status is passed through, as for launches that ran untraced.
    uint64_t unpredicted = 0;
    for (const std::string& path : traces) {
      try {
        cli::Prediction p;
        p.trace = TraceReader(path).header();
        p.accesses = cli::accessesOf(p.trace);
        p.report = cli::simulateTrace(path, config, f.threads);
        std::ostringstream text;
        cli::printPrediction(text, p);
        fmt::print(stderr, "\n== {}\n{}", path, text.str());
      } catch (const std::exception& e) {
        ++unpredicted;
        fmt::print(stderr, "\n== {}\ncltrace: error: cannot predict this launch: {}\n", path, e.what());
      }
    }
    if (unpredicted > 0)
      fmt::print(stderr, "cltrace: warning: {} of {} traced launch{} could not be simulated (said above)\n",
                 unpredicted, traces.size(), traces.size() == 1 ? "" : "es");
  }
  return code;
}

constexpr const char* kKernelItem = "name (NAME[,NAME...])";

// The launch numbers of --launch lists (N,N).
std::vector<uint64_t> launchesOf(const std::vector<std::string>& lists) {
  std::vector<uint64_t> launches;
  for (const std::string& n : cli::listItems(lists, "launch number (N[,N...])"))
    launches.push_back(wrapper::parseUnsigned(n));
  return launches;
}

cli::CommandRegistration registration("wrap", [](CLI::App& app) {
  auto f = std::make_shared<WrapFlags>();
  CLI::App* sub = app.add_subcommand("wrap", "Trace the kernel launches of an unmodified OpenCL program");
  sub->add_option("-o,--out", f->out, "directory for the traces")
      ->capture_default_str()
      ->check(cli::nonEmpty())
      ->type_name("DIR");
  // Split here, not by CLI11 (see listItems).
  cli::addRepeatable(*sub, "-k,--kernel", f->kernelLists, "trace only these kernels (repeatable, or NAME,NAME)")
      ->check(cli::nonEmpty())
      ->check(cli::parsedBy([](const std::string& v) { cli::listItems({v}, kKernelItem); }))
      ->type_name("NAME[,NAME...]");
  cli::addRepeatable(*sub, "-n,--launch", f->launchLists,
                     "trace only these launches (0-based, all kernels counted; repeatable, or N,N)")
      ->check(cli::parsedBy([](const std::string& v) { launchesOf({v}); }))->type_name("N[,N...]");
  sub->add_option("--trace-buffer-mib", f->traceBufferMiB,
                  "most MiB of packed device records held at once per launch; more are traced in slices "
                  "(default 256)")
      ->transform(cli::unsignedInteger())
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40).description(""))
      ->type_name("MIB");
  sub->add_option("--trace-timeout", f->traceTimeout,
                  "seconds a launch's count run and trace run may each take before cltrace gives it up as "
                  "hung and ends the program with status 1 (defaults as for run)")
      ->transform(cli::unsignedInteger())
      ->check(CLI::Range(uint64_t{1}, uint64_t{1'000'000'000}).description(""))
      ->type_name("SECONDS");
  sub->add_flag("--predict", f->predict, "simulate each traced launch and print its report (on stderr)");
  sub->add_option("--config", f->config, "with --predict: preset or JSON file")
      ->capture_default_str()
      ->check(cli::nonEmpty())
      ->type_name("PRESET|FILE");
  cli::addRepeatable(*sub, "--set", f->sets, "with --predict: KEY=VALUE configuration override (repeatable)")
      ->type_name("KEY=VALUE");
  CLI::Option* runs = sub->add_option("--runs", f->runs, "with --predict: simulation runs")
                          ->capture_default_str()
                          ->transform(cli::unsignedInteger(32));
  cli::addThreadsOption(*sub, f->threads);
  CLI::Option* command =
      sub->add_option("command", f->command, "the program and its arguments (after --)")->required();
  sub->callback([f, sub, command, runs] {
    // Without `--`, options after the program's name are taken as cltrace's (`wrap ./app -n 3`
    // would trace launch 3 and run ./app without arguments): refuse rather than guess.
    bool afterCommand = false;
    for (const CLI::Option* o : sub->parse_order()) {
      if (o == command)
        afterCommand = true;
      else if (afterCommand)
        throw cli::UserError("option " + o->get_name() + " follows the program's name; give the program and its "
                             "arguments after --");
    }
    f->runsGiven = runs->count() > 0;
    f->kernels = cli::listItems(f->kernelLists, kKernelItem);
    f->launches = launchesOf(f->launchLists);
    int code = run(*f);
    if (code != 0) throw cli::ExitStatus{code};
  });
});

}  // namespace
