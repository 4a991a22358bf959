// Scheduler throughput and memory benchmark (prints figures; not a test).
//
//   cltrace_scheduler_bench [records=50000000] [policy=warp] [inter-warp=loose-round-robin]
//
// A synthetic 1D launch (workgroups of 256) is generated on the fly through the
// WorkgroupSource interface, so only resident workgroups are ever held. Every work-item runs
//   for j in 0..1:                      // outer loop
//     for i in 0..(18 + lid % 4):       // trip count differs per thread
//       load  A[...]                    // instruction 1
//       if (lid odd) load B[...]        // instruction 2 (half of every warp diverges)
//       store C[...]                    // instruction 3
//     barrier                           // instruction 4 (barrier in a loop)
// about 100 records per work-item.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cltrace/scheduler/scheduler.h"

using namespace cltrace;
using namespace cltrace::sched;

namespace {

constexpr uint32_t kGroup = 256;
constexpr uint32_t kBaseTrip = 18;

double recordsPerThread() {
  double sum = 0;
  for (uint32_t l = 0; l < 4; ++l) {
    const double trip = kBaseTrip + l;
    sum += 2 * (trip * 2.5 + 1);  // 2 or 3 records per iteration on average, + barrier
  }
  return sum / 4;
}

class SyntheticSource final : public WorkgroupSource {
 public:
  explicit SyntheticSource(uint64_t workgroups) {
    range_.dims = 1;
    range_.global = {workgroups * kGroup, 1, 1};
    range_.local = {kGroup, 1, 1};
  }
  const NDRange& range() const override { return range_; }
  std::string kernelName() const override { return "synthetic"; }

  bool nextWorkgroup(WorkgroupTrace& out) override {
    if (next_ >= range_.workgroups()) return false;
    out.clear();
    out.id = next_;
    out.offsets.push_back(0);
    Record r{};
    for (uint32_t lid = 0; lid < kGroup; ++lid) {
      const uint64_t gid = next_ * kGroup + lid;
      for (uint32_t j = 0; j < 2; ++j) {
        const uint32_t trip = kBaseTrip + lid % 4;
        for (uint32_t i = 0; i < trip; ++i) {
          r.depth = 2;
          r.iterations[0] = j;
          r.iterations[1] = i;
          r.size = 4;
          r.kind = static_cast<uint8_t>(AccessKind::Load);
          r.instruction = 1;
          r.address = 0x10000000 + 4 * (gid + uint64_t(i) * range_.global[0]);
          out.records.push_back(r);
          if (lid & 1) {
            r.instruction = 2;
            r.address = 0x40000000 + 4 * ((gid * 7 + i) % 65536);
            out.records.push_back(r);
          }
          r.instruction = 3;
          r.kind = static_cast<uint8_t>(AccessKind::Store);
          r.address = 0x80000000 + 4 * gid;
          out.records.push_back(r);
        }
        Record b{};
        b.kind = static_cast<uint8_t>(AccessKind::Barrier);
        b.flags = kFenceGlobal;
        b.instruction = 4;
        b.depth = 1;
        b.iterations[0] = j;
        out.records.push_back(b);
      }
      out.offsets.push_back(out.records.size());
    }
    ++next_;
    return true;
  }

  void rewind() { next_ = 0; }

 private:
  NDRange range_;
  uint64_t next_ = 0;
};

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec * 1e-6;
}

long maxRssKiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

double seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const uint64_t wanted = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 50000000ull;
    SchedulerConfig config;
    if (argc > 2) config.policy = parsePolicy(argv[2]);
    if (argc > 3) config.interWarp = parseInterWarpOrder(argv[3]);
    const uint64_t workgroups =
        std::max<uint64_t>(1, static_cast<uint64_t>(wanted / (recordsPerThread() * kGroup)));
    SyntheticSource source(workgroups);

    // Generation alone (the source's share of the time).
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpuSeconds();
    WorkgroupTrace scratch;
    uint64_t generated = 0;
    while (source.nextWorkgroup(scratch)) generated += scratch.records.size();
    auto t1 = std::chrono::steady_clock::now();
    const double genSeconds = seconds(t0, t1);
    const double genCpu = cpuSeconds() - c0;
    scratch = WorkgroupTrace{};
    source.rewind();

    const long rssBefore = maxRssKiB();
    Scheduler scheduler(source, config);
    WarpStep step;
    uint64_t lanes = 0, steps = 0, checksum = 0;
    t0 = std::chrono::steady_clock::now();
    c0 = cpuSeconds();
    while (scheduler.next(step)) {
      ++steps;
      lanes += step.lanes.size();
      checksum += step.lanes.front().address ^ step.cycle;
    }
    t1 = std::chrono::steady_clock::now();
    const double cpu = cpuSeconds() - c0;
    const long rssAfter = maxRssKiB();
    const double total = seconds(t0, t1);
    const SchedulerStats& st = scheduler.stats();

    std::printf("policy %s, inter-warp %s, %u SMs, warp %u\n", policyName(config.policy),
                interWarpOrderName(config.interWarp), config.smCount, config.warpSize);
    std::printf("records          %llu (%llu workgroups of %u, %llu steps, %.2f lanes/step)\n",
                static_cast<unsigned long long>(lanes), static_cast<unsigned long long>(workgroups),
                kGroup, static_cast<unsigned long long>(steps), double(lanes) / double(steps));
    if (lanes != generated)
      std::printf("MISMATCH: generated %llu records\n", static_cast<unsigned long long>(generated));
    std::printf(
        "time             %.3f s wall (%.3f s CPU), of it generating the input %.3f s "
        "wall (%.3f s CPU)\n",
        total, cpu, genSeconds, genCpu);
    std::printf(
        "throughput       %.1f M records/s wall, %.1f M records/s CPU (with "
        "generation); %.1f M records/s CPU (scheduler only)\n",
        lanes / total / 1e6, lanes / cpu / 1e6, lanes / (cpu - genCpu) / 1e6);
    std::printf(
        "held (own count) peak %.2f MiB for at most %llu records in %llu workgroups: "
        "%.1f bytes per held record, %.3f bytes per trace record\n",
        st.peakResidentBytes / 1048576.0, static_cast<unsigned long long>(st.peakResidentRecords),
        static_cast<unsigned long long>(st.peakResidentWorkgroups),
        double(st.peakResidentBytes) / double(st.peakResidentRecords),
        double(st.peakResidentBytes) / double(lanes));
    std::printf(
        "maxrss           %ld KiB before scheduling, %ld KiB after: delta %.3f bytes "
        "per trace record\n",
        rssBefore, rssAfter, (rssAfter - rssBefore) * 1024.0 / double(lanes));
    std::printf("diagnostics      %llu  (checksum %llx)\n",
                static_cast<unsigned long long>(scheduler.diagnosticCount()),
                static_cast<unsigned long long>(checksum));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: %s\n", e.what());
    return 1;
  }
}
