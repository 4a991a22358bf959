// Plot points of a scheduled trace: one point per lane access of a memory kind (load, store,
// atomic, constant load), x = its execution index, y = its stacked element offset (element_map.h),
// plus a colour value.
//
//   ElementMap map(reader.header().buffers);
//   CollectOptions o;  o.color = ColorBy::Warp;  o.scheduler.policy = sched::Policy::Warp;
//   CollectStats st = collectPoints(source, map, o, [&](const Point& p) { raster.add(p.x, p.element, p.value); });
//
// Execution index: lane accesses numbered 0, 1, 2, ... in the order the scheduler issues their
// steps, lanes of a step in ascending local id. Every memory record of the trace is issued
// exactly once, so the indices run over [0, number of memory records). Barriers and fences are
// not points and take no index. A lane whose address is outside every buffer takes an index but
// is not passed to the sink (counted in CollectStats::outside).
//
// Colour values:
//   thread     global linear thread id: gx + Gx * (gy + Gy * gz) (global offset not added)
//   warp       workgroup * warpsPerWorkgroup + localThread / warpSize (the scheduler's warp key;
//              the same for every policy, warpsPerWorkgroup = ceil(workgroupSize / warpSize))
//   workgroup  linear workgroup id (x fastest)
//   hit        1 = miss, 0 = hit (below)
//
// Hit colouring runs the cache simulator (cachesim::Simulator) on the scheduler, so the order is
// the one the simulated GPU issues (misses delay warps when the configuration has timing=on).
// Every SM's L1 is simulated (the configuration's `sm` is replaced by `all`), so every lane gets an
// outcome. A lane touches the lines [address, address + max(size, 1)) overlaps; it is a miss when
// the request of its step (same warp key and step) for any of those lines ended as a read miss
// (miss, cold, capacity, conflict) or a write miss: the requests that go to memory and are counted
// by the miss rate (reads) and write_misses (stores). Hits, latency misses (merged into a line
// already in flight), write hits and bypasses (atomics, constant loads) are hits; an MSHR stall is
// not an outcome (the retried request's outcome counts). Points of a step are passed to the sink
// once all its requests have an outcome, so in this mode they arrive out of x order.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/sm_model.h"
#include "cltrace/plot/element_map.h"
#include "cltrace/scheduler/config.h"
#include "cltrace/scheduler/source.h"

namespace cltrace::plot {

enum class ColorBy : uint8_t { Thread, Warp, Workgroup, Hit };

// "thread", "warp", "workgroup", "hit".
const char* colorByName(ColorBy c);
// Throws std::invalid_argument listing the accepted names.
ColorBy parseColorBy(std::string_view name);
// Colour bar label: "global thread id", "warp (workgroup * warps per workgroup + warp)", ...
const char* colorByLabel(ColorBy c);
// Largest colour value the launch can produce (thread: work-items - 1, warp: warps - 1,
// workgroup: workgroups - 1, hit: 1). The smallest is always 0.
double maxColorValue(ColorBy c, const NDRange& range, uint32_t warpSize);

// Whether a request outcome colours its lanes as a miss (see above).
bool isPlotMiss(cachesim::Outcome o);

struct Point {
  uint64_t x = 0;        // execution index
  uint64_t element = 0;  // stacked element offset
  double value = 0.0;    // colour value
};
using PointSink = std::function<void(const Point&)>;

struct CollectOptions {
  ColorBy color = ColorBy::Thread;
  sched::SchedulerConfig scheduler;  // policy, warp size, SMs, residency, inter-warp order, seed
  // Hit colouring only: the cache and its timing (sm is forced to all).
  cachesim::Config cache;
  uint64_t simulatorSeed = 1;  // hit colouring: latency jitter, random replacement
};

struct CollectStats {
  uint64_t points = 0;      // lane accesses of memory kinds (execution indices handed out)
  uint64_t outside = 0;     // of those, outside every buffer (not passed to the sink)
  uint64_t misses = 0;      // hit colouring: points passed with value 1
  uint64_t unresolved = 0;  // hit colouring: lanes without an outcome (passed as hits; 0 normally)
  uint64_t steps = 0;       // steps the scheduler issued, every kind
  std::vector<std::string> diagnostics;  // scheduler diagnostics (first maxDiagnostics)
  uint64_t diagnosticCount = 0;
};

// Schedules `source` (which must start at workgroup 0) with options.scheduler and passes every
// point to `sink`. Throws std::invalid_argument for a bad scheduler or cache configuration or an
// NDRange the scheduler refuses; errors of the source propagate.
CollectStats collectPoints(sched::WorkgroupSource& source, const ElementMap& map,
                           const CollectOptions& options, const PointSink& sink);

}  // namespace cltrace::plot
