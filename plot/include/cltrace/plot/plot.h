// A whole plot: one panel (Raster) per scheduling policy, side by side, as in the thesis's
// figure 8.1. This is what `cltrace plot` computes before it hands the grids to
// scripts/plot_trace.py (through raster_file.h).
//
//   PlotRequest r;  r.color = ColorBy::Hit;  r.cache = cachesim::loadConfig("gtx480-16k");
//   suggestBins(1600, 600, r.policies.size(), r.binsX, r.binsY);
//   PlotData data = rasterizeTraceFile("mt.cltrace", r);
//   writeRasterFile("mt.raster", data, RenderOptions{1600, 600, "mt"});
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/plot/element_map.h"
#include "cltrace/plot/points.h"
#include "cltrace/plot/raster.h"
#include "cltrace/scheduler/config.h"
#include "cltrace/scheduler/source.h"

namespace cltrace::plot {

struct PlotRequest {
  ColorBy color = ColorBy::Thread;
  // One panel per entry, left to right.
  std::vector<sched::Policy> policies{sched::Policy::Warp, sched::Policy::Sequential,
                                      sched::Policy::RoundRobin, sched::Policy::Random};
  // Bins per panel; each is reduced to the panel's extent when larger (no bin is narrower than
  // one execution index or one element).
  uint32_t binsX = 400;
  uint32_t binsY = 400;
  uint32_t elementSize = 4;  // bytes per element on the y axis
  // The GPU (sm_count, warp_size, max_workgroups_per_sm, max_threads_per_sm, and the inter-warp
  // order after ':' in `scheduling`) for every colouring; the cache too for ColorBy::Hit.
  cachesim::Config cache;
  uint64_t seed = 1;  // random policy and (hit colouring) the simulator
};

struct Panel {
  sched::Policy policy = sched::Policy::Warp;
  Raster raster;
  CollectStats stats;
};

struct PlotData {
  std::string kernelName;
  NDRange range;
  ColorBy color = ColorBy::Thread;
  uint32_t warpSize = 32;
  std::vector<StackedBuffer> buffers;  // the y layout (ElementMap::buffers())
  uint32_t elementSize = 4;
  uint64_t xExtent = 0;  // memory lane accesses (the same for every policy)
  uint64_t yExtent = 0;  // stacked elements
  double valueMin = 0.0, valueMax = 0.0;  // colour range shared by the panels
  std::vector<Panel> panels;
};

// The scheduler configuration a panel uses: GPU fields from `cache` (sm_count, warp_size,
// max_workgroups_per_sm, max_threads_per_sm, inter-warp order from `scheduling` =
// "POLICY[:ORDER]"; its POLICY is ignored), `policy` and `seed`. Throws std::invalid_argument.
sched::SchedulerConfig schedulerConfigFor(const cachesim::Config& cache, sched::Policy policy,
                                          uint64_t seed);

// Memory lane accesses of a source: its records of memory kinds (reads it to the end).
uint64_t countMemoryAccesses(sched::WorkgroupSource& source);

// Makes a fresh source over the same launch, starting at workgroup 0 (one per panel, plus one
// to count the accesses).
using WorkgroupSourceFactory = std::function<std::unique_ptr<sched::WorkgroupSource>()>;

// Counts the accesses (x extent), then schedules and rasterises one panel per policy.
// Throws std::invalid_argument for bad options (bins 0, element size 0, no policy, bad
// configuration); errors of the sources propagate.
PlotData rasterize(const WorkgroupSourceFactory& factory, const std::vector<TraceBuffer>& buffers,
                   const PlotRequest& request);
// The same over a trace file (TraceReaderSource; TraceFileError names the file).
PlotData rasterizeTraceFile(const std::string& path, const PlotRequest& request);

// Bins per panel for an image of widthPx x heightPx with `panels` panels side by side: about
// the pixels of one panel's axes in scripts/plot_trace.py's layout (at least 1 each).
void suggestBins(uint32_t widthPx, uint32_t heightPx, size_t panels, uint32_t& binsX,
                 uint32_t& binsY);

}  // namespace cltrace::plot
