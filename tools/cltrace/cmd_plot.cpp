// cltrace plot TRACE [--color thread|warp|workgroup|hit] [--policies warp,sequential,...]
//                    [--width PX --height PX] [--config PRESET|FILE.json] [--set KEY=VALUE ...]
//                    [--seed N] [--element-size B] [--raster FILE] -o FILE.png|FILE.svg
// Plots element offset against execution order, one panel per scheduling policy (thesis figure
// 8.1). The library cltrace_plot schedules the trace and bins the points into density grids;
// scripts/plot_trace.py (python3 + matplotlib) draws them.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cltrace/cachesim/coalescer.h"
#include "cltrace/cachesim/config.h"
#include "cltrace/plot/plot.h"
#include "cltrace/plot/raster_file.h"
#include "cltrace/trace_file.h"
#include "commands.h"

extern char** environ;

namespace cltrace::cli {
namespace {

struct PlotOptions {
  std::string trace;
  std::string color = "thread";
  std::string policies = "warp,sequential,round-robin,random";
  uint32_t width = 1600;
  uint32_t height = 600;
  std::string config = "gtx480-16k";
  std::vector<std::string> sets;
  uint64_t seed = 1;
  uint32_t elementSize = 4;
  std::string raster;  // keep the raster file here
  std::string output;
};

bool isFile(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string executableDir() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return {};
  std::string path(buf.data(), size_t(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// $CLTRACE_PLOT_SCRIPT, the source tree's script (compile definition), then places relative
// to the executable (installed: <prefix>/share/cltrace/).
std::string findPlotScript() {
  if (const char* env = std::getenv("CLTRACE_PLOT_SCRIPT"); env && *env) {
    if (!isFile(env))
      throw UserError(std::string("CLTRACE_PLOT_SCRIPT=") + env + " is not a file");
    return env;
  }
  std::vector<std::string> candidates;
#ifdef CLTRACE_PLOT_SCRIPT
  candidates.push_back(CLTRACE_PLOT_SCRIPT);
#endif
  if (const std::string dir = executableDir(); !dir.empty()) {
    candidates.push_back(dir + "/../share/cltrace/plot_trace.py");
    candidates.push_back(dir + "/../../scripts/plot_trace.py");
    candidates.push_back(dir + "/../scripts/plot_trace.py");
  }
  for (const std::string& c : candidates)
    if (isFile(c)) return c;
  throw UserError("cannot find scripts/plot_trace.py; set CLTRACE_PLOT_SCRIPT to its path");
}

// What an interrupted plot leaves is taken away: its temporary raster, and the renderer with its
// half-written image. While a CleanupOnSignal lives, SIGINT, SIGTERM, SIGHUP and SIGQUIT pass
// the signal on to the renderer (when a process sent it: a terminal's Ctrl-C reaches the
// renderer itself), wait for it to end, remove the files, and end cltrace by the same signal
// (those ignored when the plot started stay ignored).
// The handler may use only what is safe in a signal handler, so the paths are kept as C strings.
volatile pid_t gRenderer = 0;           // the renderer while it runs
const char* volatile gTemporary = nullptr;  // the temporary raster while it exists
const char* volatile gImage = nullptr;      // the image, while the renderer may be writing it

void cleanUpAndDie(int signal, siginfo_t* info, void*) {
  if (const pid_t child = gRenderer; child > 0) {
    if (info->si_code <= 0) ::kill(child, signal);  // SI_USER, SI_QUEUE: sent by a process
    while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (const char* image = gImage) ::unlink(image);
  }
  if (const char* raster = gTemporary) ::unlink(raster);
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

class CleanupOnSignal {
 public:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  CleanupOnSignal() {
    struct sigaction action {};
    action.sa_sigaction = cleanUpAndDie;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    for (int s : kSignals) sigaddset(&action.sa_mask, s);  // one cleanup at a time
    for (size_t i = 0; i < std::size(kSignals); ++i) {
      ::sigaction(kSignals[i], nullptr, &previous_[i]);
      // A signal ignored from the start (nohup, a background job of a script) stays ignored.
      if (previous_[i].sa_handler != SIG_IGN) ::sigaction(kSignals[i], &action, nullptr);
    }
  }
  ~CleanupOnSignal() {
    for (size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &previous_[i], nullptr);
    gRenderer = 0;
    gTemporary = nullptr;
    gImage = nullptr;
  }
  CleanupOnSignal(const CleanupOnSignal&) = delete;
  CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;

 private:
  struct sigaction previous_[std::size(kSignals)];
};

// Runs argv[0] (searched in PATH) and returns its exit status (-1 when it could not start or
// was killed). quiet: stdout and stderr go to /dev/null. `child`, when given, holds the
// program's pid while it runs (for CleanupOnSignal).
int runProgram(const std::vector<std::string>& args, bool quiet, volatile pid_t* child = nullptr) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  if (child) *child = pid;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      if (child) *child = 0;
      return -1;
    }
  }
  if (child) *child = 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A python3 that can import matplotlib and numpy: $CLTRACE_PYTHON, else python3 from PATH, else
// Debian's /usr/bin/python3 (PATH may lead to another Python without Debian's packages).
std::string findPython() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("CLTRACE_PYTHON"); env && *env)
    candidates.push_back(env);
  else
    candidates = {"python3", "/usr/bin/python3"};
  for (const std::string& py : candidates)
    if (runProgram({py, "-c", "import matplotlib, numpy"}, true) == 0) return py;
  std::string tried;
  for (const std::string& py : candidates) tried += (tried.empty() ? "" : ", ") + py;
  throw UserError(
      "plot needs Python 3 with matplotlib and numpy (tried " + tried +
      "): install python3-matplotlib (apt-get install python3-matplotlib python3-numpy) or run "
      "scripts/setup.sh; CLTRACE_PYTHON selects the interpreter");
}

std::vector<sched::Policy> parsePolicies(const std::string& list) {
  std::vector<sched::Policy> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string name = list.substr(start, comma - start);
    if (!name.empty()) out.push_back(sched::parsePolicy(name));
    start = comma + 1;
  }
  if (out.empty()) throw std::invalid_argument("--policies: no policy given");
  return out;
}

std::string extensionOf(const std::string& path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return {};
  std::string ext = path.substr(dot);
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// Image sides --width and --height take, in pixels (checked as they are parsed).
constexpr uint64_t kMinSide = 16, kMaxSide = 32768;

void runPlot(const PlotOptions& o) {
  const std::string ext = extensionOf(o.output);
  if (ext != ".png" && ext != ".svg")
    throw UserError("-o " + o.output + ": the output must end in .png or .svg");
  // The renderer holds the image several times over (32768 x 32768 took 11 GB and two minutes).
  if (uint64_t(o.width) * o.height > (uint64_t{64} << 20))
    throw UserError(fmt::format("--width {} --height {} is {} pixels; at most {} (8192 x 8192)", o.width, o.height,
                                uint64_t(o.width) * o.height, uint64_t{64} << 20));

  plot::PlotRequest request;
  try {
    request.color = plot::parseColorBy(o.color);
    request.policies = parsePolicies(o.policies);
    request.cache = cachesim::loadConfig(o.config, o.sets);
    request.elementSize = o.elementSize;
    request.seed = o.seed;
    // Checks the GPU keys the scheduler takes (e.g. an unknown inter-warp order in `scheduling`).
    plot::schedulerConfigFor(request.cache, request.policies.front(), o.seed);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
  requireRereadable(o.trace, "plot");
  requireNotInput(o.trace, o.output, "-o");
  if (!o.raster.empty()) {
    requireNotInput(o.trace, o.raster, "--raster");
    // The image would overwrite the raster it is drawn from (neither need exist yet).
    std::error_code ec1, ec2;
    const auto raster = std::filesystem::weakly_canonical(std::filesystem::absolute(o.raster), ec1);
    const auto image = std::filesystem::weakly_canonical(std::filesystem::absolute(o.output), ec2);
    if ((!ec1 && !ec2 && raster == image) || o.raster == o.output)
      throw UserError("--raster " + o.raster + " and -o " + o.output + " name the same file; give them two");
  }
  // Before the long part: can we draw at all?
  const std::string script = findPlotScript();
  const std::string python = findPython();

  plot::suggestBins(o.width, o.height, request.policies.size(), request.binsX, request.binsY);
  plot::PlotData data;
  try {
    data = plot::rasterizeTraceFile(o.trace, request);  // TraceFileError names the file
  } catch (const TraceFileError&) {
    explainScheduledFile(o.trace, "plot");
    throw;
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());  // e.g. a workgroup larger than max_threads_per_sm
  } catch (const cachesim::LaneSizeError& e) {
    throw UserError("trace file '" + o.trace + "': " + e.what());
  }

  std::string rasterPath = o.raster;
  bool temporary = false;
  CleanupOnSignal cleanup;
  if (rasterPath.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/cltrace-plot-XXXXXX";
    std::vector<char> name(templ.begin(), templ.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0) throw std::runtime_error(templ + ": cannot create a temporary file (" + std::strerror(errno) + ")");
    ::close(fd);
    rasterPath = name.data();
    temporary = true;
    gTemporary = rasterPath.c_str();
  }
  int rc = 0;
  try {
    plot::writeRasterFile(rasterPath, data, plot::RenderOptions{o.width, o.height, {}});
    std::remove(o.output.c_str());  // so that a renderer that writes nothing cannot pass for one that did
    gImage = o.output.c_str();
    rc = runProgram({python, script, rasterPath, "-o", o.output, "--width", std::to_string(o.width),
                     "--height", std::to_string(o.height)},
                    false, &gRenderer);
    gImage = nullptr;
  } catch (...) {
    gTemporary = nullptr;
    if (temporary) std::remove(rasterPath.c_str());
    throw;
  }
  gTemporary = nullptr;
  if (temporary) std::remove(rasterPath.c_str());
  if (rc != 0)
    throw std::runtime_error(fmt::format("rendering with {} {} failed (exit status {})", python, script, rc));
  std::error_code ec;
  if (std::filesystem::file_size(o.output, ec) == 0 || ec)
    throw std::runtime_error(fmt::format("rendering with {} {} wrote no image to {}", python, script, o.output));

  bool warned = false;
  for (const plot::Panel& p : data.panels) {
    if (warned) break;
    for (const std::string& d : p.stats.diagnostics) fmt::print(stderr, "cltrace: warning: {}\n", d);
    if (p.stats.diagnosticCount > p.stats.diagnostics.size())
      fmt::print(stderr, "cltrace: warning: {} more diagnostics not shown\n",
                 p.stats.diagnosticCount - p.stats.diagnostics.size());
    warned = p.stats.diagnosticCount > 0;  // the same trace gives the same diagnostics: once
  }
  fmt::print("{}: {} accesses, {} elements in {} buffers, coloured by {} -> {} ({}x{})\n", o.trace,
             data.xExtent, data.yExtent, data.buffers.size(), plot::colorByName(data.color), o.output,
             o.width, o.height);
  for (const plot::Panel& p : data.panels) {
    std::string line = fmt::format("  {}: {} steps", sched::policyName(p.policy), p.stats.steps);
    if (p.stats.outside > 0) line += fmt::format(", {} accesses outside every buffer", p.stats.outside);
    if (data.color == plot::ColorBy::Hit) {
      const uint64_t inside = p.stats.points - p.stats.outside;
      line += fmt::format(", {} of {} accesses miss ({:.1f}%)", p.stats.misses, inside,
                          inside ? 100.0 * double(p.stats.misses) / double(inside) : 0.0);
      if (p.stats.unresolved > 0) line += fmt::format(", {} without outcome", p.stats.unresolved);
    }
    fmt::print("{}\n", line);
  }
}

const CommandRegistration registration("plot", [](CLI::App& app) {
  auto o = std::make_shared<PlotOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plot", "Plot element offset against execution order, one panel per scheduling policy");
  cmd->add_option("trace", o->trace, "Trace file")->required();
  cmd->add_option("--color", o->color,
                  "Colour by thread (global id), warp, workgroup, or hit (L1 hit/miss from the cache simulator)")
      ->capture_default_str()
      ->check(cli::parsedBy([](const std::string& v) { plot::parseColorBy(v); }))->type_name("COLOUR");
  cmd->add_option("--policies", o->policies,
                  "Comma-separated panels: warp, sequential, round-robin, random")
      ->capture_default_str()
      ->check(cli::parsedBy([](const std::string& v) { parsePolicies(v); }))->type_name("POLICIES");
  cmd->add_option("--width", o->width, "Image width in pixels (16 to 32768; width x height at most 8192 x 8192)")
      ->capture_default_str()
      ->transform(unsignedInteger(32))
      ->check(between(kMinSide, kMaxSide));
  cmd->add_option("--height", o->height, "Image height in pixels")
      ->capture_default_str()
      ->transform(unsignedInteger(32))
      ->check(between(kMinSide, kMaxSide));
  cmd->add_option("--config", o->config,
                  "GPU and cache: preset (gtx480-16k, gtx480-48k, gtx470-16k, gtx470-48k) or JSON file; "
                  "every SM's L1 is simulated for --color hit")
      ->capture_default_str()
      ->check(nonEmpty())
      ->type_name("PRESET|FILE");
  addRepeatable(*cmd, "--set", o->sets, "KEY=VALUE configuration override (repeatable; see docs/cachesim.md)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--seed", o->seed, "Seed of the random policy and the simulator")
      ->capture_default_str()
      ->transform(unsignedInteger());
  cmd->add_option("--element-size", o->elementSize, "Bytes per element on the y axis")
      ->capture_default_str()
      ->transform(unsignedInteger(32))
      ->check(between(1));
  cmd->add_option("--raster", o->raster, "Also keep the density grids (raster file) here")
      ->check(cli::nonEmpty())
      ->type_name("FILE");
  cmd->add_option("-o,--output", o->output, "Output image, .png or .svg")
      ->required()
      ->check(cli::nonEmpty())
      ->type_name("FILE");
  cmd->callback([o] { runPlot(*o); });
});

}  // namespace
}  // namespace cltrace::cli
