// Tracing overhead on the default OpenCL device: the count and trace runs against the
// uninstrumented kernel, for the bundled matrix multiply at 256x256 and the 128x128x32
// stencil. Prints figures; it is not a timed test. Usage: bench_tracing [KERNELS_DIR]
// The main figures are warm: each traced figure is a second launch of the same instrumented
// kernel (buffers and memory kept from the first), the uninstrumented one a second run (after
// the device's compile); the median of several. First launches (compile included) follow.
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "cltrace/wrapper/standalone.h"

using namespace cltrace;

namespace {

constexpr int kRepeats = 15;

void bench(const std::string& name, wrapper::RunSpec spec) {
  std::string path = (std::filesystem::temp_directory_path() / ("bench-" + name + ".cltrace")).string();
  // First launches: each enqueue includes the device's compile for this work-group size (PoCL
  // keeps compiled kernels in its disk cache, so a repeated bench may find them there).
  wrapper::RunOutput coldPlain = wrapper::runStandalone(spec, "", {}, nullptr, false);
  wrapper::RunOutput coldTraced = wrapper::runStandalone(spec, path, {}, nullptr, false);
  // Then the median of a few warm repetitions of each: the machine is shared and noisy (the
  // fastest of them let one lucky uninstrumented run decide). Plain and traced launches
  // alternate so that a busy spell of the machine hits both.
  std::vector<wrapper::RunOutput> plains, traceds;
  for (int i = 0; i < kRepeats; ++i) {
    plains.push_back(wrapper::runStandalone(spec, "", {}, nullptr, true));
    traceds.push_back(wrapper::runStandalone(spec, path, {}, nullptr, true));
  }
  auto kernelsOf = [](const wrapper::RunOutput& o) { return o.launch.countKernelSeconds + o.launch.traceKernelSeconds; };
  std::sort(plains.begin(), plains.end(), [](const auto& a, const auto& b) { return a.kernelSeconds < b.kernelSeconds; });
  std::sort(traceds.begin(), traceds.end(), [&](const auto& a, const auto& b) { return kernelsOf(a) < kernelsOf(b); });
  const wrapper::RunOutput& plain = plains[kRepeats / 2];
  const wrapper::RunOutput& traced = traceds[kRepeats / 2];
  const auto& l = traced.launch;
  double kernels = l.countKernelSeconds + l.traceKernelSeconds;
  double total = l.countSeconds + l.traceSeconds;
  fmt::print("{}: {} work-items, {} records ({:.1f} MB written by the trace kernel, {:.1f} MB in the file)\n",
             name, l.header.workItemCount, l.header.recordCount, l.deviceRecordBytes / 1e6,
             std::filesystem::file_size(path) / 1e6);
  fmt::print("  {} repetitions each; uninstrumented kernel {:.4f}..{:.4f} s, count + trace kernels {:.4f}..{:.4f} s\n",
             kRepeats, plains.front().kernelSeconds, plains.back().kernelSeconds, kernelsOf(traceds.front()),
             kernelsOf(traceds.back()));
  fmt::print("  uninstrumented kernel     {:9.4f} s\n", plain.kernelSeconds);
  // Each stage's own median and fastest run (the run above is the median of their sum).
  auto stage = [&](const char* label, double wrapper::LaunchResult::*field) {
    std::vector<double> v;
    for (const wrapper::RunOutput& o : traceds) v.push_back(o.launch.*field);
    std::sort(v.begin(), v.end());
    fmt::print("  {:<25} {:9.4f} s  (median of its own {:.4f} s, fastest {:.4f} s)\n", label, traced.launch.*field,
               v[kRepeats / 2], v.front());
  };
  stage("count kernel", &wrapper::LaunchResult::countKernelSeconds);
  stage("trace kernel", &wrapper::LaunchResult::traceKernelSeconds);
  fmt::print("  count + trace kernels     {:9.4f} s  = {:6.1f}x uninstrumented\n", kernels,
             kernels / plain.kernelSeconds);
  fmt::print("  with buffer transfers     {:9.4f} s  = {:6.1f}x uninstrumented\n", total,
             total / plain.kernelSeconds);
  fmt::print("  whole traced launch       {:9.4f} s  = {:6.1f}x uninstrumented (snapshots, rebasing, "
             "trace file written)\n", l.launchSeconds, l.launchSeconds / plain.kernelSeconds);
  fmt::print("  records per second (trace kernel) {:.1f} M\n", l.header.recordCount / l.traceKernelSeconds / 1e6);
  const auto& c = coldTraced.launch;
  fmt::print("  first launch in the process, device compile included:\n");
  fmt::print("    uninstrumented kernel   {:9.4f} s first enqueue, {:.4f} s second\n", coldPlain.firstKernelSeconds,
             coldPlain.kernelSeconds);
  fmt::print("    count + trace runs      {:9.4f} s  = {:6.1f}x the first enqueue, {:.1f}x the second\n",
             c.countSeconds + c.traceSeconds, (c.countSeconds + c.traceSeconds) / coldPlain.firstKernelSeconds,
             (c.countSeconds + c.traceSeconds) / coldPlain.kernelSeconds);
  fmt::print("    whole traced launch     {:9.4f} s\n", c.launchSeconds);
  std::filesystem::remove(path);
}

}  // namespace

int main(int argc, char** argv) {
  std::string kernels = argc > 1 ? argv[1] : "kernels";
  try {
    wrapper::RunSpec mm;
    mm.sourcePath = kernels + "/mm.cl";
    wrapper::applyManifest(mm, false, false, false, false);
    mm.range.global = {256, 256, 1};
    mm.args = {wrapper::parseArgSpec("buffer:float:65536:random:1"), wrapper::parseArgSpec("buffer:float:65536:random:2"),
               wrapper::parseArgSpec("buffer:float:65536"), wrapper::parseArgSpec("scalar:int:256")};
    bench("mm 256x256 (16x16 groups)", mm);

    wrapper::RunSpec stencil;
    stencil.sourcePath = kernels + "/stencil.cl";
    wrapper::applyManifest(stencil, false, false, false, false);
    bench("stencil 128x128x32 (64x1x1 groups)", stencil);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_tracing: {}\n", e.what());
    return 1;
  }
  return 0;
}
