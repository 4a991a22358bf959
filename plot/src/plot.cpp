#include "cltrace/plot/plot.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "cltrace/cachesim/trace_simulation.h"
#include "cltrace/scheduler/trace_source.h"

namespace cltrace::plot {

sched::SchedulerConfig schedulerConfigFor(const cachesim::Config& cache, sched::Policy policy,
                                          uint64_t seed) {
  // The panel's policy with the configuration's inter-warp order (cachesim parses the key).
  cachesim::Config c = cache;
  const size_t colon = c.scheduling.find(':');
  c.scheduling = std::string(sched::policyName(policy)) +
                 (colon == std::string::npos ? std::string() : c.scheduling.substr(colon));
  return cachesim::schedulerConfigFor(c, seed);
}

uint64_t countMemoryAccesses(sched::WorkgroupSource& source) {
  uint64_t n = 0;
  sched::WorkgroupTrace wg;
  while (source.nextWorkgroup(wg))
    for (const Record& r : wg.records) n += isMemoryAccess(kindOf(r)) ? 1 : 0;
  return n;
}

PlotData rasterize(const WorkgroupSourceFactory& factory, const std::vector<TraceBuffer>& buffers,
                   const PlotRequest& request) {
  if (request.policies.empty()) throw std::invalid_argument("plot: no scheduling policy given");
  if (request.binsX == 0 || request.binsY == 0)
    throw std::invalid_argument("plot: bin counts must be > 0");
  const ElementMap map(buffers, request.elementSize);

  PlotData data;
  data.color = request.color;
  data.warpSize = request.cache.warpSize;
  data.buffers = map.buffers();
  data.elementSize = map.elementSize();
  data.yExtent = map.extent();
  {
    auto source = factory();
    data.range = source->range();
    data.kernelName = source->kernelName();
    data.xExtent = countMemoryAccesses(*source);
  }
  data.valueMin = 0.0;
  data.valueMax = maxColorValue(request.color, data.range, data.warpSize);
  const uint32_t binsX = uint32_t(std::min<uint64_t>(request.binsX, std::max<uint64_t>(data.xExtent, 1)));
  const uint32_t binsY = uint32_t(std::min<uint64_t>(request.binsY, std::max<uint64_t>(data.yExtent, 1)));

  for (sched::Policy policy : request.policies) {
    CollectOptions o;
    o.color = request.color;
    o.scheduler = schedulerConfigFor(request.cache, policy, request.seed);
    o.cache = request.cache;
    o.simulatorSeed = request.seed;
    Panel panel;
    panel.policy = policy;
    panel.raster = Raster(binsX, binsY, data.xExtent, data.yExtent);
    Raster& raster = panel.raster;
    auto source = factory();
    panel.stats = collectPoints(*source, map, o,
                                [&raster](const Point& p) { raster.add(p.x, p.element, p.value); });
    if (panel.stats.points != data.xExtent)
      throw std::runtime_error(std::string("plot: the ") + sched::policyName(policy) +
                               " schedule issued " + std::to_string(panel.stats.points) +
                               " accesses but the trace holds " + std::to_string(data.xExtent));
    data.panels.push_back(std::move(panel));
  }
  return data;
}

PlotData rasterizeTraceFile(const std::string& path, const PlotRequest& request) {
  std::vector<TraceBuffer> buffers;
  {
    TraceReader reader(path);
    buffers = reader.header().buffers;
  }
  return rasterize([&path] { return std::make_unique<sched::TraceReaderSource>(path); }, buffers,
                   request);
}

void suggestBins(uint32_t widthPx, uint32_t heightPx, size_t panels, uint32_t& binsX,
                 uint32_t& binsY) {
  // scripts/plot_trace.py: axes from 6% to 89% of the width, 8% of a panel between panels,
  // from 12% to 88% of the height.
  const double n = double(std::max<size_t>(panels, 1));
  const double panel = 0.83 * widthPx / (n + 0.08 * (n - 1));
  binsX = uint32_t(std::max(1.0, std::floor(panel)));
  binsY = uint32_t(std::max(1.0, std::floor(0.76 * heightPx)));
}

}  // namespace cltrace::plot
